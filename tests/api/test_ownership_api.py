"""Ownership over HTTP (issue 33): what a person made is theirs. Another 実行者 neither
sees nor cancels it; 承認者 and 閲覧者 see every Plan run (they are the team's
controls) but act on none; 管理者 sees everything; uploads and analysis conversations
stay with who made them; team sharing shows everything to everyone and still leaves
acting to the owner and 管理者."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_support import PAYMENTS_PLAN as PLAN
from api_support import LiveServer

from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path
from keiri_agent.people.accounts import Accounts
from keiri_agent.people.audit import AuditTrail
from keiri_agent.services.research import EXAMPLE_QUESTION, SAMPLE_KB, ResearchService
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.workspace import Workspace

PEOPLE = {
    "keiri": ["admin"],
    "yamada": ["operator"],
    "tanaka": ["operator"],
    "sato": ["approver"],
    "suzuki": ["viewer"],
}
CSV = base64.b64encode("支払先,金額\r\nA社,1000\r\n".encode("cp932")).decode()
UPLOAD = {"upload": {"list": {"name": "支払一覧.csv", "base64": CSV}}}


def _team(tmp_path: Path, **settings: object) -> tuple[Settings, dict[str, str]]:
    configured = Settings(home=tmp_path, provider="offline", **settings)  # type: ignore[arg-type]
    ResearchService(configured).index_sample()
    designs = Workspace.from_settings(configured).designs
    (designs / "team").mkdir(parents=True)
    (designs / "team" / "payments.yaml").write_text(PLAN, encoding="utf-8")
    engine = create_engine(configured)
    upgrade(engine)
    accounts = Accounts(engine)
    for login, roles in PEOPLE.items():
        accounts.add(login, roles)
    tokens = {login: accounts.issue_token(login) for login in PEOPLE}
    engine.dispose()
    return configured, tokens


@pytest.fixture
def clients(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> Callable[..., dict[str, httpx.Client]]:
    opened: list[httpx.Client] = []

    def make(**settings: object) -> dict[str, httpx.Client]:
        configured, tokens = _team(tmp_path, **settings)
        server = serve(configured)
        for token in tokens.values():
            opened.append(
                httpx.Client(
                    base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"}
                )
            )
        return dict(zip(tokens, opened, strict=True))

    yield make
    for client in opened:
        client.close()


def _paused_run(client: httpx.Client) -> str:
    started = client.post("/api/plans/team/payments/runs", json={"answers": UPLOAD})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + 30
    while client.get(f"/api/plans/runs/{run_id}").json()["status"] != "paused":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return run_id


def _denied(response: httpx.Response) -> str:
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "PERMISSION_DENIED"
    return str(error["message"])


def test_a_plan_run_is_seen_by_its_starter_and_the_teams_controls_only(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    run_id = _paused_run(people["yamada"])

    message = _denied(people["tanaka"].get(f"/api/plans/runs/{run_id}"))
    assert "別の人のもの" in message and "管理者・承認者・閲覧者" in message
    _denied(people["tanaka"].get(f"/api/runs/{run_id}"))
    _denied(people["tanaka"].get(f"/api/plans/runs/{run_id}/events"))
    _denied(people["tanaka"].post(f"/api/plans/runs/{run_id}/cancel"))
    listed = people["tanaka"].get("/api/plans/team/payments/runs").json()["runs"]
    assert listed == []
    assert people["tanaka"].get("/api/plans/approvals").json()["approvals"] == []

    for overseer in ("sato", "suzuki", "keiri"):
        seen = people[overseer].get(f"/api/plans/runs/{run_id}")
        assert seen.status_code == 200, (overseer, seen.text)
        assert seen.json()["started_by"] == "yamada"
        listed = people[overseer].get("/api/plans/team/payments/runs").json()["runs"]
        assert [(run["run_id"], run["started_by"]) for run in listed] == [(run_id, "yamada")]
    approvals = {
        login: people[login].get("/api/plans/approvals").json()["approvals"]
        for login in ("yamada", "sato", "suzuki")
    }
    assert [item["can_answer"] for item in approvals["sato"]] == [True]
    assert [item["can_answer"] for item in approvals["suzuki"]] == [False]
    assert [item["can_answer"] for item in approvals["yamada"]] == [False]

    # Seeing is not acting: the approver may not cancel or answer the upload step.
    _denied(people["sato"].post(f"/api/plans/runs/{run_id}/cancel"))
    other_answer = people["tanaka"].post(
        f"/api/plans/runs/{run_id}/resume", json={"answers": {"upload": {}}}
    )
    _denied(other_answer)
    cancelled = people["keiri"].post(f"/api/plans/runs/{run_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text


def test_uploads_and_analysis_conversations_stay_with_who_made_them(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    data = sample_data_path().read_bytes()
    uploaded = people["yamada"].post(
        "/api/analysis/datasets", files={"file": ("sales.csv", data, "text/csv")}
    )
    assert uploaded.status_code == 201, uploaded.text
    dataset_id = uploaded.json()["dataset_id"]
    turn = people["yamada"].post(
        "/api/analysis/turns",
        json={"dataset_id": dataset_id, "question": "地域別の売上の合計を棒グラフで見せて"},
    )
    assert turn.status_code == 200, turn.text
    figure_url = next(a["url"] for a in turn.json()["artifacts"] if a["kind"] == "figure")
    thread_id = turn.json()["thread_id"]

    message = _denied(people["tanaka"].get(f"/api/analysis/datasets/{dataset_id}"))
    assert "アップロードされたファイル" in message
    _denied(people["suzuki"].get(f"/api/analysis/datasets/{dataset_id}"))
    _denied(
        people["tanaka"].post(
            "/api/analysis/turns", json={"dataset_id": dataset_id, "question": "件数は？"}
        )
    )
    _denied(people["tanaka"].get(figure_url))
    assert people["yamada"].get(figure_url).status_code == 200
    assert people["keiri"].get(figure_url).status_code == 200
    assert people["keiri"].get(f"/api/analysis/datasets/{dataset_id}").status_code == 200

    # The same file uploaded by tanaka is tanaka's too; yamada's conversation is not.
    again = people["tanaka"].post(
        "/api/analysis/datasets", files={"file": ("sales.csv", data, "text/csv")}
    )
    assert again.json()["dataset_id"] == dataset_id
    assert people["tanaka"].get(f"/api/analysis/datasets/{dataset_id}").status_code == 200
    continued = people["tanaka"].post(
        "/api/analysis/turns",
        json={"dataset_id": dataset_id, "question": "件数は？", "thread_id": thread_id},
    )
    assert "別の人" in _denied(continued)


def test_uploads_are_in_the_audit_trail_with_their_digest(
    clients: Callable[..., dict[str, httpx.Client]], tmp_path: Path
) -> None:
    import hashlib

    people = clients()
    data = sample_data_path().read_bytes()
    people["yamada"].post("/api/analysis/datasets", files={"file": ("sales.csv", data, "text/csv")})
    engine = create_engine(Settings(home=tmp_path))
    try:
        uploads = [e for e in AuditTrail(engine).entries() if e.kind == "file_uploaded"]
    finally:
        engine.dispose()
    assert [(e.actor, e.details["files"]) for e in uploads] == [
        ("yamada", [{"name": "sales.csv", "sha256": hashlib.sha256(data).hexdigest()}])
    ]


def test_team_sharing_shows_everything_and_leaves_acting_to_the_owner(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients(team_sharing=True)
    run_id = _paused_run(people["yamada"])
    seen = people["tanaka"].get(f"/api/plans/runs/{run_id}")
    assert seen.status_code == 200
    assert [
        run["run_id"]
        for run in people["tanaka"].get("/api/plans/team/payments/runs").json()["runs"]
    ] == [run_id]
    message = _denied(people["tanaka"].post(f"/api/plans/runs/{run_id}/cancel"))
    assert "始めた本人" in message


def test_a_research_session_is_its_starters(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    started = people["yamada"].post(
        "/api/research", json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB]}
    )
    assert started.status_code == 202, started.text
    run = started.json()
    assert run["owner"] == "yamada"
    deadline = time.monotonic() + 60
    while people["yamada"].get(f"/api/research/{run['run_id']}").json()["status"] != "success":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    session = run["session_id"]

    assert "リサーチ" in _denied(people["tanaka"].get(f"/api/research/{run['run_id']}"))
    _denied(people["tanaka"].get(f"/api/research/sessions/{session}/notes"))
    _denied(people["tanaka"].delete(f"/api/research/sessions/{session}/notes"))
    _denied(
        people["tanaka"].post(
            "/api/research",
            json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB], "session_id": session},
        )
    )
    query = {"query": f'{{ researchRun(runId: "{run["run_id"]}") {{ status }} }}'}
    graphql = people["tanaka"].post("/graphql", json=query).json()
    assert graphql["errors"][0]["extensions"]["code"] == "PERMISSION_DENIED"

    def listed(login: str) -> list[tuple[str, str]]:
        sessions = people[login].get("/api/research/sessions").json()["sessions"]
        return [(item["session_id"], item["owner"]) for item in sessions]

    continued = people["keiri"].post(
        "/api/research",
        json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB], "session_id": session},
    )
    assert continued.status_code == 202  # 管理者 may continue it: it stays yamada's
    assert listed("tanaka") == []
    assert listed("yamada") == listed("keiri") == [(session, "yamada")]
    assert listed("suzuki") == []  # viewers oversee Plan runs, not someone's research


def test_the_audit_trail_is_read_searched_checked_and_exported_by_an_admin(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    run_id = _paused_run(people["yamada"])
    _paused_run(people["tanaka"])
    people["sato"].post(
        f"/api/plans/runs/{run_id}/resume",
        json={"answers": {"approve": {"approved": False, "comment": "金額違い"}}},
    )

    assert "監査ログを見る" in _denied(people["sato"].get("/api/audit"))
    _denied(people["suzuki"].get("/api/audit/verify"))

    admin = people["keiri"]
    listed = admin.get("/api/audit", params={"plan": "team/payments"}).json()
    assert [(e["actor"], e["kind_label"]) for e in listed["entries"]] == [
        ("sato", "差戻し"),
        ("tanaka", "実行の開始"),
        ("yamada", "実行の開始"),
    ]
    assert listed["entries"][0]["details"]["comment"] == "金額違い"
    only = admin.get("/api/audit", params={"actor": "yamada", "kind": "run_started"}).json()
    assert [e["subject"] for e in only["entries"]] == [run_id]
    run_title = admin.get(f"/api/runs/{run_id}").json()["title"]
    assert only["entries"][0]["subject_title"] == run_title  # the run in words
    assert only["entries"][0]["plan_title"] is None  # the Plan has no title
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert admin.get("/api/audit", params={"until": "2020-01-01"}).json()["entries"] == []
    assert len(admin.get("/api/audit", params={"since": today}).json()["entries"]) >= 3
    bad_day = admin.get("/api/audit", params={"since": "昨日"})
    assert bad_day.status_code == 422

    assert admin.get("/api/audit/verify").json()["ok"] is True
    csv = admin.get("/api/audit/export", params={"plan": "team/payments"})
    assert csv.headers["content-type"].startswith("text/csv")
    text = csv.content.decode("utf-8-sig")
    assert text.splitlines()[0].startswith("番号,日時（UTC）,利用者,操作")
    assert len(text.splitlines()) == 4 and "差戻し" in text


def test_a_starter_cannot_approve_by_answering_up_front(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    answers = {**UPLOAD, "approve": {"approved": True}}
    started = people["yamada"].post("/api/plans/team/payments/runs", json={"answers": answers})
    assert "職務分掌" in _denied(started)


def test_an_approval_waits_for_its_step_and_a_resume_is_the_starters(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    started = people["yamada"].post("/api/plans/team/payments/runs", json={})
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + 30
    while people["yamada"].get(f"/api/plans/runs/{run_id}").json()["status"] != "paused":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    early = people["sato"].post(
        f"/api/plans/runs/{run_id}/resume", json={"answers": {"approve": {"approved": True}}}
    )
    assert early.status_code == 400, early.text
    assert early.json()["error"]["code"] == "APPROVAL_NOT_WAITING"
    requeued = people["tanaka"].post(f"/api/plans/runs/{run_id}/resume", json={"answers": {}})
    assert "始めた本人" in _denied(requeued)
    assert "権限がありません" in _denied(
        people["sato"].post(f"/api/plans/runs/{run_id}/resume", json={"answers": {}})
    )


def test_a_short_run_list_still_holds_the_callers_own_runs(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    own = _paused_run(people["yamada"])
    _paused_run(people["tanaka"])  # newer, and not yamada's to see
    listed = people["yamada"].get("/api/plans/team/payments/runs", params={"limit": 1}).json()
    assert [run["run_id"] for run in listed["runs"]] == [own]


def test_a_person_the_rule_names_sees_and_answers_the_approval(
    clients: Callable[..., dict[str, httpx.Client]], tmp_path: Path
) -> None:
    people = clients()
    named = PLAN.replace("id: team/payments", "id: team/named").replace(
        "approval: {roles: [approver], not_starter: true}",
        "approval: {people: [tanaka], not_starter: true}",
    )
    (tmp_path / "designs" / "team" / "named.yaml").write_text(named, encoding="utf-8")
    started = people["yamada"].post("/api/plans/team/named/runs", json={"answers": UPLOAD})
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + 30
    while people["yamada"].get(f"/api/plans/runs/{run_id}").json()["status"] != "paused":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    waiting = people["tanaka"].get("/api/plans/approvals").json()["approvals"]
    assert [(item["run_id"], item["can_answer"]) for item in waiting] == [(run_id, True)]
    approved = people["tanaka"].post(
        f"/api/plans/runs/{run_id}/resume", json={"answers": {"approve": {"approved": True}}}
    )
    assert approved.status_code == 202, approved.text


def test_a_schedule_and_its_runs_belong_to_who_added_it(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    added = people["yamada"].post(
        "/api/schedules", json={"plan_id": "team/payments", "rule": "毎月1日", "at": "09:00"}
    )
    assert added.status_code == 201, added.text
    assert added.json()["owner"] == "yamada"


def test_an_audit_search_beyond_the_calendar_is_refused_not_a_crash(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    for params in ({"until": "9999-12-31"}, {"since": "0001-01-01"}):
        refused = people["keiri"].get("/api/audit", params=params)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "REQUEST_INVALID"


def test_a_run_is_rerun_by_its_starter_and_asks_its_approval_again(
    clients: Callable[..., dict[str, httpx.Client]],
) -> None:
    people = clients()
    run_id = _paused_run(people["yamada"])
    people["sato"].post(
        f"/api/plans/runs/{run_id}/resume", json={"answers": {"approve": {"approved": True}}}
    )
    deadline = time.monotonic() + 30
    while people["yamada"].get(f"/api/plans/runs/{run_id}").json()["status"] != "success":
        assert time.monotonic() < deadline
        time.sleep(0.05)

    assert "別の人のもの" in _denied(
        people["tanaka"].post(f"/api/plans/runs/{run_id}/rerun", json={"from_node": "upload"})
    )
    rerun = people["yamada"].post(f"/api/plans/runs/{run_id}/rerun", json={"from_node": "upload"})
    assert rerun.status_code == 202, rerun.text
    while (state := people["yamada"].get(f"/api/plans/runs/{run_id}").json())["status"] != (
        "paused"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert [item["node_id"] for item in state["waiting"]] == ["approve"]  # asked again
