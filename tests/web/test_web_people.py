"""Three people in headless Chromium (issue 33): each signs in with their own login and
password; the starter cannot approve their own run and the viewer cannot start or
approve (PERMISSION_DENIED), both see it in 承認待ち without the buttons; the approver
sees what is approved (the totals) and approves it with a comment; the run goes on; the
audit trail lists every step under the right person, and its chain breaks once an entry
is edited in the database. Skipped (failed under CI=true) when Chromium or the built
web UI is missing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from browser_support import Site, require_web_out
from playwright.sync_api import expect

from keiri_agent.config import Settings
from keiri_agent.people.accounts import Accounts
from keiri_agent.people.audit import AuditTrail
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade

PLAN = """\
apiVersion: v1
id: payments
version: 0.1.0
title: 支払の承認
graph:
  - id: approve
    block: ui.interactive_input
    title: 支払一覧の承認
    in:
      mode: confirm
      message: 今月の支払一覧を確認して承認してください
      context:
        records: [{支払先: A社, 金額: 100000}, {支払先: B社, 金額: 50000}]
        合計: {件数: 2, 合計金額: 150000}
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
  - id: note
    block: text.template
    when: {expr: "${approve.approved} == true"}
    in: {template: "承認済み", values: {}}
    out: {text: text}
"""
PASSWORD = "correct horse battery staple"
PEOPLE = {
    "keiri": (["admin"], "経理 管理"),
    "yamada": (["operator"], "山田"),
    "sato": (["approver"], "佐藤"),
    "suzuki": (["viewer"], "鈴木"),
}


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


def _team(homes: list[Settings]) -> Callable[[Settings], None]:
    def prepare(settings: Settings) -> None:
        homes.append(settings)
        designs = settings.storage.home / "designs"
        designs.mkdir(parents=True, exist_ok=True)
        (designs / "payments.yaml").write_text(PLAN, encoding="utf-8")
        engine = create_engine(settings)
        upgrade(engine)
        accounts = Accounts(engine)
        for login, (roles, name) in PEOPLE.items():
            accounts.add(login, roles, display_name=name, password=PASSWORD)
        engine.dispose()

    return prepare


def _sign_in(page: Any, site: Site, login: str) -> None:
    page.goto(site.url + "/approvals/")
    expect(page.get_by_test_id("token-dialog")).to_be_visible()
    page.get_by_test_id("sign-in-login").fill(login)
    page.get_by_test_id("sign-in-password").fill(PASSWORD)
    page.get_by_test_id("sign-in-submit").click()
    expect(page.get_by_test_id("who-am-i")).to_contain_text(PEOPLE[login][1])


def _post(page: Any, site: Site, path: str, body: dict[str, Any]) -> Any:
    """A request from the signed-in page (its cookie and CSRF token), as its script sends."""
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "keiri_csrf")
    return page.request.post(
        site.url + path, data=body, headers={"X-CSRF-Token": csrf, "Origin": site.url}
    )


def test_starter_approver_and_viewer_in_the_browser(
    web_out: Path, site: Callable[..., Site], chromium: Any
) -> None:
    homes: list[Settings] = []
    running = site(web_out, indexed=False, prepare=_team(homes))

    def person(login: str) -> Any:
        context = chromium.new_context(viewport={"width": 1280, "height": 900}, locale="ja-JP")
        context.set_default_timeout(30_000)
        page = context.new_page()
        _sign_in(page, running, login)
        return page

    starter = person("yamada")
    started = _post(starter, running, "/api/plans/payments/runs", {})
    assert started.status == 202, started.text()
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + 30
    while (
        starter.request.get(f"{running.url}/api/plans/runs/{run_id}").json()["status"] != "paused"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.1)

    starter.goto(running.url + "/approvals/")
    item = starter.get_by_test_id("approval-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("支払の承認")
    expect(item.get_by_test_id("approval-starter")).to_have_text("yamada")
    expect(item.get_by_test_id("approval-not-yours")).to_be_visible()
    expect(item.get_by_test_id("approve")).to_have_count(0)
    own = _post(
        starter,
        running,
        f"/api/plans/runs/{run_id}/resume",
        {"answers": {"approve": {"approved": True}}},
    )
    assert own.status == 403 and own.json()["error"]["code"] == "PERMISSION_DENIED"
    assert "職務分掌" in own.json()["error"]["message"]

    viewer = person("suzuki")
    viewer.goto(running.url + "/approvals/")
    expect(viewer.get_by_test_id("approval-item")).to_have_count(1)
    expect(viewer.get_by_test_id("approval-not-yours")).to_be_visible()
    start = _post(viewer, running, "/api/plans/payments/runs", {})
    assert start.status == 403 and start.json()["error"]["code"] == "PERMISSION_DENIED"
    assert "必要な役割: 管理者・実行者" in start.json()["error"]["message"]
    approve = _post(
        viewer,
        running,
        f"/api/plans/runs/{run_id}/resume",
        {"answers": {"approve": {"approved": True}}},
    )
    assert approve.status == 403 and approve.json()["error"]["code"] == "PERMISSION_DENIED"

    approver = person("sato")
    approver.goto(running.url + "/approvals/")
    item = approver.get_by_test_id("approval-item")
    expect(item.get_by_test_id("approval-totals")).to_contain_text("150,000")
    expect(item.locator("table")).to_contain_text("B社")  # the rows that are paid
    item.get_by_test_id("approval-comment").fill("請求書と照合済み")
    item.get_by_test_id("approve").click()
    expect(approver.get_by_test_id("approval-done")).to_contain_text("承認しました")
    expect(approver.get_by_test_id("approvals-empty")).to_be_visible()
    deadline = time.monotonic() + 30
    while (run := approver.request.get(f"{running.url}/api/plans/runs/{run_id}").json())[
        "status"
    ] != "success":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert run["outputs"]["note"]["text"] == "承認済み"

    approver.goto(running.url + "/audit/")
    expect(approver.get_by_test_id("error-message")).to_contain_text("監査ログを見る")

    admin = person("keiri")
    admin.goto(running.url + "/audit/")
    admin.get_by_test_id("audit-plan").fill("payments")
    admin.get_by_test_id("audit-search").click()
    rows = admin.get_by_test_id("audit-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("承認")
    expect(rows.first).to_contain_text("sato")
    expect(rows.first).to_contain_text("コメント: 請求書と照合済み")
    expect(rows.nth(1)).to_contain_text("実行の開始")
    admin.get_by_test_id("audit-verify").click()
    expect(admin.get_by_test_id("audit-verification")).to_contain_text("問題ありません")
    admin.context.close()

    approver.get_by_test_id("sign-out").click()
    expect(approver.get_by_test_id("token-dialog")).to_be_visible()
    assert approver.request.get(f"{running.url}/api/plans/approvals").status == 401
    for page in (starter, viewer, approver):
        page.context.close()

    engine = create_engine(homes[0])
    try:
        trail = AuditTrail(engine)
        steps = [(e.actor, e.kind) for e in trail.entries() if e.kind != "settings_changed"]
        assert steps == [
            ("yamada", "sign_in"),
            ("yamada", "run_started"),
            ("suzuki", "sign_in"),
            ("sato", "sign_in"),
            ("sato", "approval_given"),
            ("keiri", "sign_in"),
            ("sato", "sign_out"),
        ]
        given = next(e for e in trail.entries() if e.kind == "approval_given")
        assert (given.subject, given.details["comment"]) == (run_id, "請求書と照合済み")
        assert trail.verify().ok
        with engine.begin() as connection:
            connection.execute(
                sqlalchemy.text(
                    "UPDATE audit_log SET actor = 'yamada' WHERE kind = 'approval_given'"
                )
            )
        assert not trail.verify().ok
    finally:
        engine.dispose()
