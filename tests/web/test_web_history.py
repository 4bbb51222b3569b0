"""履歴 in the web UI (Chromium, the real server): a Plan run and a HelpDesk answer made
in the browser are found again on /history/ after a reload — by the Plan's title and
the question, never an id — and open where they were made; the filters narrow the list,
live in the address (a reload keeps them) and put their problems next to the field;
「さらに表示」 reads the next page; axe finds no serious violation at 1280 and 390 px.
Skipped (failed under CI=true) when Chromium, axe-core or the built web UI is missing."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import AXE, Site, registering, require_web_out, serious_violations, unavailable
from playwright.sync_api import expect
from sqlalchemy import update

from keiri_agent.config import Settings
from keiri_agent.runs.store import RunStore
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.storage.schema import runs

PLAN = """\
apiVersion: v1
id: monthly_close
version: 0.1.0
title: 月次締めの案内
graph:
  - id: note
    block: text.template
    title: 案内文の作成
    in: {template: "今月の締めは 25 日です", values: {}}
    out: {text: text}
"""
QUESTION = "パスワードを忘れたときはどうすればよいですか？"
IDS = re.compile(r"\brun_[0-9a-f]{12}\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b|\b[0-9a-f]{32}\b")
"""What a person must never read on the page: run ids, error codes, thread ids."""


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


def _history_site(site: Callable[..., Site], web_out: Path) -> Site:
    """The offline provider's own rules (no scripted model), the Plan registered and the
    HelpDesk sample indexed."""
    running = site(
        web_out, indexed=False, scripted=False, prepare=registering("monthly_close.yaml", PLAN)
    )
    indexed = httpx.post(f"{running.server.url}/api/helpdesk/kb/helpdesk/sample", timeout=120)
    assert indexed.status_code == 200, indexed.text
    return running


def _run_the_plan(page: Any, site: Site) -> str:
    page.goto(site.url + "/plans/")
    card = page.get_by_test_id("plan-item").filter(has_text="月次締めの案内")
    card.get_by_test_id("plan-start").click()
    expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=30_000)
    return str(page.url.split("run=")[1])


def _ask_the_helpdesk(page: Any, site: Site) -> str:
    page.goto(site.url + "/helpdesk/")
    page.get_by_test_id("helpdesk-question").fill(QUESTION)
    page.get_by_test_id("helpdesk-ask").click()
    answer = page.get_by_test_id("helpdesk-answer")
    expect(answer).to_contain_text("出典", timeout=90_000)
    expect(page).to_have_url(re.compile(r"/helpdesk/\?answer=run_[0-9a-f]{12}$"))
    shown = re.sub(r"\s+", "", answer.inner_text())
    page.reload()  # the answer is still there: its run is in the address
    expect(page.get_by_test_id("helpdesk-answer")).to_contain_text("出典", timeout=30_000)
    assert re.sub(r"\s+", "", page.get_by_test_id("helpdesk-answer").inner_text()) == shown
    return shown


def _rows(page: Any) -> Any:
    return page.get_by_test_id("history-row")


def _visible_text(page: Any) -> str:
    """What a person reads (closed <details> and the offline notice left out)."""
    return str(
        page.evaluate(
            """() => {
                const notice = document.querySelector('[data-testid="offline-notice"]');
                const text = document.body.innerText;
                return notice ? text.replace(notice.innerText, '') : text;
            }"""
        )
    )


def test_a_plan_run_and_a_helpdesk_answer_are_found_again_and_opened(
    web_out: Path, site: Callable[..., Site], page: Any
) -> None:
    running = _history_site(site, web_out)
    run_id = _run_the_plan(page, running)
    answer = _ask_the_helpdesk(page, running)

    page.goto(running.url + "/history/")
    expect(_rows(page)).to_have_count(2)
    page.reload()
    rows = _rows(page)
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("ヘルプデスクの回答")  # the newest first
    expect(rows.nth(0)).to_contain_text("成功")
    expect(rows.nth(1)).to_contain_text("Plan の実行")
    when = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}$")  # formatDateTime
    expect(rows.nth(1).get_by_role("cell").nth(4)).to_have_text(when)
    assert IDS.findall(_visible_text(page)) == []

    page.get_by_role("link", name="月次締めの案内").click()
    expect(page).to_have_url(re.compile(rf"/plans/\?run={run_id}$"))
    expect(page.get_by_test_id("run-status")).to_have_text("成功")

    page.goto(running.url + "/history/")
    page.get_by_role("link", name=QUESTION).click()
    expect(page).to_have_url(re.compile(r"/helpdesk/\?answer=run_[0-9a-f]{12}$"))
    expect(page.get_by_test_id("helpdesk-answer")).to_contain_text("出典", timeout=30_000)
    assert re.sub(r"\s+", "", page.get_by_test_id("helpdesk-answer").inner_text()) == answer


def test_filters_narrow_the_list_and_survive_a_reload(
    web_out: Path, site: Callable[..., Site], page: Any
) -> None:
    running = _history_site(site, web_out)
    _run_the_plan(page, running)
    _ask_the_helpdesk(page, running)
    page.goto(running.url + "/history/")
    expect(_rows(page)).to_have_count(2)

    page.get_by_label("種類").select_option(label="ヘルプデスクの回答")
    page.get_by_test_id("history-search").click()
    expect(page).to_have_url(re.compile(r"/history/\?kind=helpdesk$"))
    expect(_rows(page)).to_have_count(1)
    expect(_rows(page)).to_contain_text("ヘルプデスクの回答")
    page.reload()
    expect(_rows(page)).to_have_count(1)
    expect(page.get_by_label("種類")).to_have_value("helpdesk")

    # by keyboard: the words, then Enter; both filters are kept
    page.get_by_label("種類").select_option("")
    words = page.get_by_label("言葉")
    words.focus()
    page.keyboard.type("月次")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"\?q=%E6%9C%88%E6%AC%A1$"))
    expect(_rows(page)).to_have_count(1)
    expect(_rows(page)).to_contain_text("月次締めの案内")
    page.reload()
    expect(page.get_by_label("言葉")).to_have_value("月次")
    expect(_rows(page)).to_have_count(1)

    page.get_by_label("状態").select_option(label="失敗")
    page.get_by_test_id("history-search").click()
    expect(page.get_by_test_id("history-empty")).to_contain_text("条件に合う履歴はありません")
    page.get_by_test_id("history-clear").click()
    expect(page).to_have_url(re.compile(r"/history/$"))
    expect(_rows(page)).to_have_count(2)
    expect(page.get_by_label("言葉")).to_have_value("")

    # a period that runs backwards is said next to the field, before anything is asked
    page.get_by_label("この日から").fill("2026-05-02")
    page.get_by_label("この日まで").fill("2026-05-01")
    page.get_by_test_id("history-search").click()
    problem = page.get_by_test_id("history-until-problem")
    expect(problem).to_contain_text("期間の終わりが始まりより前です")
    expect(page.get_by_label("この日まで")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("この日まで")).to_be_focused()
    expect(page).to_have_url(re.compile(r"/history/$"))

    # a filter the server refuses (an address typed by hand) is said next to its field
    page.goto(running.url + "/history/?kind=report")
    expect(page.get_by_test_id("history-kind-problem")).to_contain_text(
        "種類「report」はありません"
    )
    expect(page.get_by_test_id("error-message")).to_have_count(0)


def _seed_answers(count: int) -> Callable[[Settings], None]:
    """``prepare``: ``count`` answered HelpDesk questions, one a second apart."""

    def prepare(settings: Settings) -> None:
        engine = create_engine(settings)
        upgrade(engine)
        store = RunStore(engine)
        first = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
        for number in range(count):
            run_id = f"run_{number:012x}"
            title = f"質問 {number + 1} 番"
            store.create(
                run_id, kind="helpdesk", subject="helpdesk", title=title, owner="", inputs={}
            )
            moment = first + dt.timedelta(seconds=number)
            with engine.begin() as connection:
                connection.execute(
                    update(runs)
                    .where(runs.c.run_id == run_id)
                    .values(status="success", created_at=moment, updated_at=moment)
                )
        engine.dispose()

    return prepare


def test_more_entries_are_read_a_page_at_a_time(
    web_out: Path, site: Callable[..., Site], page: Any
) -> None:
    running = site(web_out, indexed=False, scripted=False, prepare=_seed_answers(53))
    page.goto(running.url + "/history/")
    expect(_rows(page)).to_have_count(50)
    expect(_rows(page).first).to_contain_text("質問 53 番")
    expect(page.get_by_test_id("history-count")).to_contain_text("まだ続きがあります")
    page.get_by_test_id("history-more").click()
    expect(_rows(page)).to_have_count(53)
    expect(_rows(page).last).to_contain_text("質問 1 番")
    expect(page.get_by_test_id("history-more")).to_have_count(0)
    expect(page.get_by_role("link", name="質問 3 番")).to_be_focused()  # the first new one


def test_the_history_page_with_entries_has_no_serious_accessibility_violation(
    web_out: Path, site: Callable[..., Site], chromium: Any
) -> None:
    if not AXE.is_file():
        unavailable("axe-core is not installed: cd web && npm ci")
    running = _history_site(site, web_out)
    for width in (1280, 390):
        context = chromium.new_context(viewport={"width": width, "height": 900}, locale="ja-JP")
        try:
            page = context.new_page()
            if width == 1280:
                _run_the_plan(page, running)
            page.goto(running.url + "/history/")
            expect(_rows(page)).to_have_count(1)
            problems = serious_violations(page)
            page.get_by_label("この日から").fill("2026-05-02")
            page.get_by_label("この日まで").fill("2026-05-01")
            page.get_by_test_id("history-search").click()
            expect(page.get_by_test_id("history-until-problem")).to_be_visible()
            problems += serious_violations(page)  # with a problem next to its field
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 1, f"{width}px: the page is {overflow}px wider than the screen"
            assert problems == [], f"{width}px: {problems}"
        finally:
            context.close()
