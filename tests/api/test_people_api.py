"""People over HTTP (issue 33): uvicorn on loopback, a real client, each person with
their own access token. The starter cannot approve their own run (職務分掌), the
approver can, the viewer can look but neither start nor approve; every step is in the
audit trail under the right person, and the chain verifies."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_support import PAYMENTS_PLAN as PLAN
from api_support import LiveServer
from pydantic import SecretStr

from keiri_agent.config import Settings
from keiri_agent.people.accounts import Accounts
from keiri_agent.people.audit import AuditTrail
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.workspace import Workspace


@pytest.fixture
def team(tmp_path: Path) -> tuple[Settings, dict[str, str]]:
    settings = Settings(home=tmp_path, provider="offline")
    designs = Workspace.from_settings(settings).designs
    (designs / "team").mkdir(parents=True)
    (designs / "team" / "payments.yaml").write_text(PLAN, encoding="utf-8")
    engine = create_engine(settings)
    upgrade(engine)
    accounts = Accounts(engine)
    accounts.add("keiri", ["admin"])
    accounts.add("yamada", ["operator", "approver"], display_name="山田")
    accounts.add("sato", ["approver"], display_name="佐藤")
    accounts.add("suzuki", ["viewer"], display_name="鈴木")
    tokens = {login: accounts.issue_token(login) for login in ("yamada", "sato", "suzuki")}
    engine.dispose()
    return settings, tokens


def _client(server: LiveServer, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.url, timeout=30, headers=headers)


def _wait(client: httpx.Client, run_id: str, status: str) -> dict:
    deadline = time.monotonic() + 30
    while True:
        run = client.get(f"/api/plans/runs/{run_id}").json()
        if run["status"] == status or time.monotonic() > deadline:
            return run
        time.sleep(0.05)


def test_starter_approver_and_viewer(
    team: tuple[Settings, dict[str, str]], serve: Callable[..., LiveServer]
) -> None:
    settings, tokens = team
    server = serve(settings)
    csv = base64.b64encode("支払先,金額\r\nA社,1000\r\n".encode("cp932")).decode()
    upload = {"upload": {"list": {"name": "支払一覧.csv", "base64": csv}}}

    with _client(server, None) as anonymous:
        refused = anonymous.get("/api/plans")
        assert refused.status_code == 401  # people are registered: who is asking?

    with _client(server, tokens["suzuki"]) as viewer:
        assert viewer.get("/api/plans").status_code == 200
        denied = viewer.post("/api/plans/team/payments/runs", json={"answers": upload})
        assert denied.status_code == 403
        error = denied.json()["error"]
        assert error["code"] == "PERMISSION_DENIED"
        assert (
            "鈴木 さんには「Plan を実行し、エージェントを使う」権限がありません" in error["message"]
        )

    with _client(server, tokens["yamada"]) as starter:
        started = starter.post("/api/plans/team/payments/runs", json={"answers": upload})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        paused = _wait(starter, run_id, "paused")
        assert [item["node_id"] for item in paused["waiting"]] == ["approve"]
        own = starter.post(
            f"/api/plans/runs/{run_id}/resume", json={"answers": {"approve": {"approved": True}}}
        )
        assert own.status_code == 403
        assert "実行を始めた人のため、承認できません（職務分掌）" in own.json()["error"]["message"]

    with _client(server, tokens["suzuki"]) as viewer:
        assert viewer.get(f"/api/plans/runs/{run_id}").status_code == 200
        tried = viewer.post(
            f"/api/plans/runs/{run_id}/resume", json={"answers": {"approve": {"approved": True}}}
        )
        assert (
            tried.status_code == 403 and "承認できる人: 承認者" in tried.json()["error"]["message"]
        )

    with _client(server, tokens["sato"]) as approver:
        (waiting,) = approver.get("/api/plans/approvals").json()["approvals"]
        assert (waiting["run_id"], waiting["started_by"], waiting["node_id"]) == (
            run_id,
            "yamada",
            "approve",
        )
        assert waiting["message"] == "支払一覧を確認して承認してください" and waiting["can_answer"]
    with _client(server, tokens["yamada"]) as starter:  # their own run: listed, not theirs
        (waiting,) = starter.get("/api/plans/approvals").json()["approvals"]
        assert waiting["can_answer"] is False
    with _client(server, tokens["sato"]) as approver:
        approved = approver.post(
            f"/api/plans/runs/{run_id}/resume",
            json={"answers": {"approve": {"approved": True, "comment": "金額を確認しました"}}},
        )
        assert approved.status_code == 202, approved.text
        done = _wait(approver, run_id, "success")
        assert done["status"] == "success"

    engine = create_engine(settings)
    trail = AuditTrail(engine)
    entries = [(e.actor, e.kind, e.subject) for e in trail.entries(subject=run_id)]
    assert entries == [("yamada", "run_started", run_id), ("sato", "approval_given", run_id)]
    started_entry, approval = trail.entries(subject=run_id)
    (file,) = started_entry.details["files"]
    assert file["name"] == "支払一覧.csv" and len(file["sha256"]) == 64
    assert approval.details == {
        "plan": "team/payments",
        "node": "approve",
        "comment": "金額を確認しました",
    }
    assert trail.verify().ok
    engine.dispose()


def test_the_shared_token_is_a_service_account_with_its_roles(
    team: tuple[Settings, dict[str, str]], serve: Callable[..., LiveServer]
) -> None:
    settings, _ = team
    shared = "s" * 40
    server = serve(
        settings.model_copy(
            update={
                "api": settings.api.model_copy(
                    update={"api_token": SecretStr(shared), "api_token_roles": ("viewer",)}
                )
            }
        )
    )
    with _client(server, shared) as service:
        assert service.get("/api/plans").status_code == 200
        denied = service.post("/api/plans/team/payments/runs", json={})
        assert denied.status_code == 403
        assert "共有トークン さんには" in denied.json()["error"]["message"]


def test_a_refused_approval_stops_the_run_with_its_comment(
    team: tuple[Settings, dict[str, str]], serve: Callable[..., LiveServer]
) -> None:
    settings, tokens = team
    server = serve(settings)
    csv = base64.b64encode("支払先,金額\r\nA社,1000\r\n".encode("cp932")).decode()
    upload = {"upload": {"list": {"name": "支払一覧.csv", "base64": csv}}}
    with _client(server, tokens["yamada"]) as starter:
        run_id = starter.post("/api/plans/team/payments/runs", json={"answers": upload}).json()[
            "run_id"
        ]
        _wait(starter, run_id, "paused")
    with _client(server, tokens["sato"]) as approver:
        refused = approver.post(
            f"/api/plans/runs/{run_id}/resume",
            json={"answers": {"approve": {"approved": False, "comment": "A社の金額が違います"}}},
        )
        assert refused.status_code == 202
    with _client(server, tokens["yamada"]) as starter:
        stopped = _wait(starter, run_id, "failed")
    assert stopped["status"] == "failed"
    (error,) = stopped["errors"]
    assert error["code"] == "APPROVAL_REFUSED"
    assert "差し戻されました（コメント: A社の金額が違います）" in error["message"]
    assert "note" not in stopped["outputs"]
    engine = create_engine(settings)
    kinds = [(e.actor, e.kind) for e in AuditTrail(engine).entries(subject=run_id)]
    assert kinds == [("yamada", "run_started"), ("sato", "approval_refused")]
    engine.dispose()


PASSWORD = "correct horse battery staple"


def test_a_browser_signs_in_uses_its_csrf_token_and_signs_out(
    team: tuple[Settings, dict[str, str]], serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings, _ = team
    engine = create_engine(settings)
    Accounts(engine).reset_password("yamada", PASSWORD)
    engine.dispose()
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        wrong = browser.post("/api/auth/sign-in", json={"login": "yamada", "password": "x" * 12})
        assert wrong.status_code == 401
        assert wrong.json()["error"]["message"] == "ログイン名かパスワードが違います"
        unknown = browser.post("/api/auth/sign-in", json={"login": "nobody", "password": "x"})
        assert unknown.json()["error"] == wrong.json()["error"]  # says nothing more

        signed = browser.post("/api/auth/sign-in", json={"login": "yamada", "password": PASSWORD})
        assert signed.status_code == 200, signed.text
        cookie = signed.headers["set-cookie"]
        assert "keiri_session=" in cookie and "HttpOnly" in cookie
        assert "samesite=strict" in cookie.lower()
        body = signed.json()
        assert (body["login"], body["display_name"], body["roles"]) == (
            "yamada",
            "山田",
            ["approver", "operator"],
        )
        assert browser.get("/api/auth/me").json()["login"] == "yamada"

        no_csrf = browser.post("/api/plans/team/payments/runs", json={})
        assert no_csrf.status_code == 403 and no_csrf.json()["error"]["code"] == "CSRF_FAILED"
        headers = {"X-CSRF-Token": body["csrf_token"]}
        started = browser.post("/api/plans/team/payments/runs", json={}, headers=headers)
        assert started.status_code == 202, started.text

        out = browser.post("/api/auth/sign-out", headers=headers)
        assert out.json() == {"signed_out": True}
        browser.cookies.set("keiri_session", cookie.split("=", 1)[1].split(";")[0])
        assert browser.get("/api/auth/me").status_code == 401  # the old cookie is dead

    engine = create_engine(settings)
    signs = [e for e in AuditTrail(engine).entries() if "sign" in e.kind]
    assert [(e.actor, e.kind) for e in signs] == [
        ("yamada", "sign_in_failed"),
        ("（未登録のログイン名）", "sign_in_failed"),  # what was typed is not kept
        ("yamada", "sign_in"),
        ("yamada", "sign_out"),
    ]
    assert "nobody" not in str(signs[1].to_dict()) and len(signs[1].details["typed_sha256"]) == 16
    engine.dispose()


def test_a_session_ends_at_its_expiry(
    team: tuple[Settings, dict[str, str]], serve: Callable[..., LiveServer]
) -> None:
    settings, _ = team
    engine = create_engine(settings)
    Accounts(engine).reset_password("sato", PASSWORD)
    engine.dispose()
    short = settings.model_copy(
        update={"api": settings.api.model_copy(update={"api_session_hours": 1 / 3600})}
    )
    server = serve(short)
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        signed = browser.post("/api/auth/sign-in", json={"login": "sato", "password": PASSWORD})
        assert signed.status_code == 200
        assert browser.get("/api/auth/me").status_code == 200
        token = signed.headers["set-cookie"].split("=", 1)[1].split(";")[0]
        time.sleep(1.2)
        browser.cookies.set("keiri_session", token)  # kept by the client all the same
        assert browser.get("/api/auth/me").status_code == 401  # the server says it ended
