"""The web UI in headless Chromium (issue 29): the knowledge bases to search are chosen on
the research page, the bundled sample is loaded by its button and then searched alone; every
page says from the start that the server runs without a language model (the server's own
text); the progress closes a step that found passages but gave no summary and counts every
query that ran. Skipped (failed under CI=true) when Chromium or the built web UI is missing."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import LiveServer
from browser_support import QUESTION, SAMPLE_LABEL, Site, require_web_out, run_ids
from playwright.sync_api import expect
from pydantic import SecretStr
from research_agent_support import query_of, scripted

from keiri_agent.agents.research.llm_reasoner import GapOutput, PlanOutput
from keiri_agent.api.app import create_app
from keiri_agent.config import OFFLINE_NOTICE, Settings
from keiri_agent.search.knowledge_base import KnowledgeBase

PAGES = ["/", "/helpdesk/", "/sessions/", "/plans/", "/schedules/"]


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


def _own_knowledge_base(folder: Path) -> Callable[[Settings], None]:
    """``prepare``: a knowledge base ``kitei`` of the user's own document."""

    def prepare(settings: Settings) -> None:
        folder.mkdir()
        (folder / "請求書の規程.md").write_text(
            "# 請求書の規程\n\nインボイス制度に合わせて請求書に登録番号を記載します。\n",
            encoding="utf-8",
        )
        KnowledgeBase.for_workspace(settings, "kitei").index_files([folder], "manual")

    return prepare


def _kb_variables(page: Any) -> list[Any]:
    """The ``kb`` variable of every GraphQL ``deepResearch`` the page sends."""
    sent: list[Any] = []

    def on_request(request: Any) -> None:
        if request.method == "POST" and request.url.endswith("/graphql"):
            body = json.loads(request.post_data or "{}")
            if "deepResearch" in body.get("query", ""):
                sent.append(body.get("variables", {}).get("kb"))

    page.on("request", on_request)
    return sent


def _wait_until_finished(page: Any) -> None:
    expect(page.get_by_test_id("report")).to_be_visible(timeout=90_000)
    expect(page.get_by_test_id("cancel")).to_have_count(0, timeout=90_000)


def test_knowledge_bases_are_chosen_and_the_sample_is_loaded_then_searched_alone(
    web_out: Any, site: Callable[..., Site], page: Any, tmp_path: Path
) -> None:
    running = site(web_out, indexed=False, prepare=_own_knowledge_base(tmp_path / "own"))
    started = run_ids(page)
    sent = _kb_variables(page)
    page.goto(running.url + "/")
    choice = page.get_by_test_id("kb-choice")
    expect(choice.get_by_label("kitei")).to_be_visible()
    expect(choice.get_by_label(SAMPLE_LABEL)).to_have_count(0)

    page.get_by_test_id("load-sample").click()
    sample = choice.get_by_label(SAMPLE_LABEL)
    expect(sample).to_be_checked(timeout=60_000)
    expect(choice.get_by_label("kitei")).not_to_be_checked()
    expect(page.get_by_test_id("sample-notice")).to_contain_text("サンプル資料だけを検索します")

    choice.get_by_label("kitei").check()  # never both: the sample is dropped
    expect(sample).not_to_be_checked()
    expect(page.get_by_test_id("sample-notice")).to_have_count(0)
    sample.check()
    expect(choice.get_by_label("kitei")).not_to_be_checked()

    page.get_by_test_id("question").fill(QUESTION)
    page.get_by_test_id("start").click()
    _wait_until_finished(page)
    (run_id,) = started
    state = httpx.get(f"{running.server.url}/api/research/{run_id}").json()
    assert sent == [["research"]]
    assert state["status"] == "success"
    assert {source["origin"] for source in state["result"]["sources"]} == {"kb:research"}


def test_every_page_says_from_the_start_that_no_language_model_is_configured(
    web_out: Any, site: Callable[..., Site], page: Any, tmp_path: Path
) -> None:
    offline = site(web_out, indexed=False)
    for path in PAGES:
        page.goto(offline.url + path)
        notice = page.get_by_test_id("offline-notice")
        expect(notice).to_have_text(OFFLINE_NOTICE)
    expect(page.get_by_test_id("report")).to_have_count(0)  # before any question

    key = "sk-test-0123456789abcdefghijklmnop"
    configured = Settings(
        home=tmp_path / "llm", provider="openai", openai_api_key=SecretStr(key), web_dir=web_out
    )
    server = LiveServer(create_app(configured)).start()
    try:
        for path in PAGES:
            page.goto(server.url + path)
            expect(page.locator("h1")).to_be_visible()
            page.wait_for_load_state("networkidle")
            expect(page.get_by_test_id("offline-notice")).to_have_count(0)
    finally:
        server.stop()


def test_a_step_without_a_summary_closes_and_the_header_counts_every_query(
    web_out: Any, site: Callable[..., Site], page: Any
) -> None:
    """One planned query, two added by the gap check: three steps; 請求書 記載事項 finds
    passages but the model finds nothing relevant (no summary), 宇宙旅行 finds nothing."""

    def summarize(prompt: str) -> str:
        query = query_of(prompt)
        return "" if query == "請求書 記載事項" else f"{query}について要約しました [1]。"

    def factory(_settings: Settings) -> Any:
        plan = PlanOutput(needs_research=True, reason="記載事項", queries=["登録番号"])
        gaps = [GapOutput(missing="記載事項", queries=["請求書 記載事項", "宇宙旅行"])]
        return scripted(plan, summarize, "## 結論\n\n登録番号が必要です [1]。\n", gaps)

    running = site(web_out, model_factory=factory)
    page.goto(running.url + "/")
    page.get_by_test_id("kb-choice").get_by_label(SAMPLE_LABEL).check()
    page.get_by_test_id("question").fill(QUESTION)
    page.get_by_test_id("start").click()
    _wait_until_finished(page)

    items = page.get_by_test_id("progress-item")
    expect(items).to_have_count(3)
    statuses = [text.strip() for text in page.get_by_test_id("progress-status").all_inner_texts()]
    assert not any(re.search("検索中|要約中", status) for status in statuses), statuses
    assert "質問に関係する記述がなく省きました" in statuses[1], statuses
    assert "見つからなかったため省きました" in statuses[2], statuses
    expect(page.get_by_test_id("plan-summary")).to_have_text(
        "調査計画: クエリ 3 件（最初の計画 1 件、不足の確認で追加 2 件）"
    )


def test_a_helpdesk_answer_shows_its_sources_and_what_was_not_found_once(
    web_out: Any, site: Callable[..., Site], page: Any
) -> None:
    """The answer carries its own 見つからなかった点 and 出典 sections (added by the core, as
    on every surface); the page shows them once, not again from the response's lists."""
    running = site(web_out, indexed=False, scripted=False)
    page.goto(running.url + "/helpdesk/")
    page.get_by_test_id("helpdesk-question").fill(
        "パスワードを忘れたときはどうすればよいですか？また、社員食堂の営業時間は？"
    )
    page.get_by_test_id("helpdesk-ask").click()  # nothing registered yet: offers the sample
    page.get_by_role("button", name="サンプルを登録").click()
    expect(page.get_by_role("status")).to_contain_text("サンプルを登録しました", timeout=90_000)
    page.get_by_test_id("helpdesk-ask").click()
    answer = page.get_by_test_id("helpdesk-answer")
    expect(answer).to_be_visible(timeout=90_000)
    expect(answer.get_by_role("heading", name="出典", exact=True)).to_have_count(1)
    expect(answer.get_by_role("heading", name="見つからなかった点", exact=True)).to_have_count(1)
    expect(answer).to_contain_text("資料には記載がありません")

    # the answer survives a reload (its run is in the address) and is listed to open again
    expect(page).to_have_url(re.compile(r"answer=run_"))  # written just after it renders
    first = re.sub(r"\s+", "", answer.inner_text())
    page.reload()
    expect(page.get_by_test_id("helpdesk-answer")).to_contain_text("出典", timeout=30_000)
    assert re.sub(r"\s+", "", page.get_by_test_id("helpdesk-answer").inner_text()) == first
    past = page.get_by_test_id("past-answers")
    expect(past).to_contain_text("パスワードを忘れたときはどうすればよいですか")
    page.goto(running.url + "/helpdesk/")
    expect(page.get_by_test_id("helpdesk-answer")).to_have_count(0)
    page.get_by_test_id("past-answers").get_by_role("link").first.click()
    expect(page.get_by_test_id("helpdesk-answer")).to_contain_text("出典")
    assert re.sub(r"\s+", "", page.get_by_test_id("helpdesk-answer").inner_text()) == first
