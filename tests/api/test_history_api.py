"""履歴 over HTTP (``GET /api/history``, uvicorn on loopback, each person with their own
token): runs of every kind listed newest first with words for titles and the address
that opens each; every filter (words, kind, status, who started it, local days); who
sees what (a 実行者 only their own, 承認者 every Plan run, 管理者 and team sharing
everything) decided before a page is cut; paging by cursor; bad filters refused in
Japanese, naming the field."""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import LiveServer
from sqlalchemy import update

from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path
from keiri_agent.people.accounts import Accounts
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.runs.store import RunStore
from keiri_agent.services.research import SAMPLE_KB, ResearchService
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.storage.schema import runs
from keiri_agent.workspace import Workspace

PEOPLE = {
    "keiri": ["admin"],
    "yamada": ["operator"],
    "tanaka": ["operator"],
    "sato": ["approver"],
}
NAMES = {"yamada": "山田 花子"}
CLOSE = """\
apiVersion: v1
id: keiri/monthly_close
version: 0.1.0
title: 月次締めの案内
graph:
  - id: note
    block: text.template
    title: 締めの案内
    in: {template: "締めの案内です", values: {}}
    out: {text: text}
"""
UNTITLED = CLOSE.replace("id: keiri/monthly_close", "id: untitled").replace(
    "title: 月次締めの案内\n", ""
)
JST = dt.timezone(dt.timedelta(hours=9))


def _team(home: Path, **settings: Any) -> tuple[Settings, dict[str, str]]:
    settings.setdefault("retention_days", 3650)  # the seeded runs of 2025 are kept
    configured = Settings(home=home, provider="offline", **settings)
    designs = Workspace.from_settings(configured).designs
    designs.mkdir(parents=True, exist_ok=True)
    (designs / "monthly_close.yaml").write_text(CLOSE, encoding="utf-8")
    (designs / "untitled.yaml").write_text(UNTITLED, encoding="utf-8")
    engine = create_engine(configured)
    upgrade(engine)
    accounts = Accounts(engine)
    for login, roles in PEOPLE.items():
        accounts.add(login, roles, display_name=NAMES.get(login, ""))
    tokens = {login: accounts.issue_token(login) for login in PEOPLE}
    engine.dispose()
    return configured, tokens


Team = Callable[..., tuple[Settings, dict[str, httpx.Client]]]


@pytest.fixture
def team(tmp_path: Path, serve: Callable[..., LiveServer]) -> Iterator[Team]:
    """``team(prepare=None, **settings)``: a server of ``PEOPLE`` (``prepare(settings)``
    runs before it starts) and a client per person."""
    opened: list[httpx.Client] = []

    def make(
        prepare: Callable[[Settings], object] | None = None, **settings: Any
    ) -> tuple[Settings, dict[str, httpx.Client]]:
        configured, tokens = _team(tmp_path / f"home{len(opened)}", **settings)
        if prepare is not None:
            prepare(configured)
        server = serve(configured)
        clients = {}
        for login, token in tokens.items():
            clients[login] = httpx.Client(
                base_url=server.url, timeout=120, headers={"Authorization": f"Bearer {token}"}
            )
            opened.append(clients[login])
        return configured, clients

    yield make
    for client in opened:
        client.close()


# --------------------------------------------------------------------------- seeded runs


def _local(day: str, clock: str = "10:00") -> dt.datetime:
    return dt.datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=JST)


SEEDED = [
    # (run id, kind, subject, title, owner, status, started (JST), inputs)
    ("run_a00000000001", "plan", "keiri/monthly_close", "月次締めの案内", "yamada", "success",
     _local("2025-03-01", "23:30"), {}),
    ("run_a00000000002", "helpdesk", "helpdesk", "パスワードを忘れたときは？", "yamada",
     "success", _local("2025-03-02", "00:30"), {}),
    ("run_a00000000003", "research", "session-t", "インボイス制度の変更点", "tanaka", "failed",
     _local("2025-03-03"), {}),
    ("run_a00000000004", "analysis", "thread-y", "地域別の売上を見せて", "yamada", "success",
     _local("2025-03-04"), {"dataset": "ds_sales", "question": "地域別の売上を見せて"}),
    ("run_a00000000005", "analysis", "thread-y", "月別にして", "yamada", "failed",
     _local("2025-03-05"), {"dataset": "ds_sales", "question": "月別にして"}),
    ("run_a00000000006", "plan", "keiri/monthly_close", "月次締めの案内", "tanaka", "waiting",
     _local("2025-03-06"), {}),
    ("run_a00000000007", "helpdesk", "helpdesk", "経費精算の締め日は？", "tanaka", "success",
     _local("2025-03-07"), {}),
    ("run_a00000000008", "plan", "untitled", "untitled", "tanaka", "failed",
     _local("2025-03-08"), {}),
    ("run_a00000000009", "helpdesk_index", "helpdesk", "資料の登録（helpdesk）", "keiri",
     "success", _local("2025-03-09"), {}),
]  # fmt: skip
"""Settled runs (never executed by the server) at known local times."""


def _seed(settings: Settings, seeded: list[tuple[Any, ...]] = SEEDED) -> None:
    engine = create_engine(settings)
    upgrade(engine)
    store = RunStore(engine)
    for run_id, kind, subject, title, owner, status, started, inputs in seeded:
        store.create(run_id, kind=kind, subject=subject, title=title, owner=owner, inputs=inputs)
        moment = started.astimezone(dt.UTC)
        with engine.begin() as connection:
            connection.execute(
                update(runs)
                .where(runs.c.run_id == run_id)
                .values(status=status, created_at=moment, updated_at=moment)
            )
    engine.dispose()


def _cli_run(settings: Settings) -> str:
    """A Plan run at the command line: a state file, no run of the run service."""
    engine = PlanEngine(settings)
    plan = load_plan_file(Workspace.from_settings(settings).designs / "monthly_close.yaml")
    return engine.run(plan, started_by="yamada").run_id


def _entries(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/api/history", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["entries"])


def _keys(client: httpx.Client, **params: Any) -> list[str]:
    return [entry["key"] for entry in _entries(client, **params)]


@pytest.fixture
def seeded(app_database_url: str, team: Team) -> tuple[dict[str, httpx.Client], str]:
    """``SEEDED`` and a run at the command line, in SQLite or PostgreSQL."""
    cli: list[str] = []

    def prepare(settings: Settings) -> None:
        _seed(settings)
        cli.append(_cli_run(settings))

    _, clients = team(prepare, database_url=app_database_url)
    return clients, cli[0]


def test_every_kind_is_listed_newest_first_with_words_and_where_it_opens(
    seeded: tuple[dict[str, httpx.Client], str],
) -> None:
    clients, cli_run = seeded
    body = clients["keiri"].get("/api/history").json()
    entries = body["entries"]

    assert [entry["key"] for entry in entries] == [
        cli_run,  # run today at the command line
        "run_a00000000008",
        "run_a00000000007",
        "run_a00000000006",
        "thread-y",  # the conversation: started by its first question
        "run_a00000000003",
        "run_a00000000002",
        "run_a00000000001",
    ]  # the indexing run is not history
    by_key = {entry["key"]: entry for entry in entries}
    assert by_key[cli_run] | {"started_at": "", "updated_at": ""} == {
        "kind": "plan",
        "kind_label": "Plan の実行",
        "key": cli_run,
        "title": "月次締めの案内",
        "status": "success",
        "status_label": "成功",
        "started_by": "yamada",
        "started_by_name": "山田 花子",
        "started_at": "",
        "updated_at": "",
        "link": f"/plans/?run={cli_run}",
        "questions": 1,
    }
    assert by_key["run_a00000000008"]["title"] == "untitled"  # a Plan without a title: its id
    assert by_key["run_a00000000006"]["status_label"] == "入力待ち"
    assert by_key["run_a00000000007"]["link"] == "/helpdesk/?answer=run_a00000000007"
    assert by_key["run_a00000000007"]["kind_label"] == "ヘルプデスクの回答"
    assert by_key["run_a00000000003"]["link"] == "/?run=run_a00000000003"
    assert by_key["run_a00000000003"]["status_label"] == "失敗"
    conversation = by_key["thread-y"]
    assert conversation["title"] == "地域別の売上を見せて"  # its first question
    assert conversation["questions"] == 2
    assert conversation["status"] == "failed"  # its latest turn's
    assert conversation["started_at"] == "2025-03-04T01:00:00.000Z"
    assert conversation["link"] == "/analysis/?data=ds_sales&thread=thread-y"
    assert conversation["kind_label"] == "データ分析の会話"
    assert by_key["run_a00000000002"]["started_at"] == "2025-03-01T15:30:00.000Z"
    assert body["kinds"] == {
        "plan": "Plan の実行",
        "helpdesk": "ヘルプデスクの回答",
        "analysis": "データ分析の会話",
        "research": "リサーチ",
    }
    assert body["statuses"]["waiting"] == "入力待ち" and body["next_cursor"] is None


def test_each_filter_narrows_the_list(seeded: tuple[dict[str, httpx.Client], str]) -> None:
    clients, cli_run = seeded
    admin = clients["keiri"]

    assert _keys(admin, q="締め") == [
        cli_run,
        "run_a00000000007",  # 経費精算の締め日は？
        "run_a00000000006",
        "run_a00000000001",
    ]
    assert _keys(admin, q="月次　締め") == [cli_run, "run_a00000000006", "run_a00000000001"]
    assert _keys(admin, q="月別") == ["thread-y"]  # any question of the conversation
    assert _keys(admin, q="PASSWORD パスワード") == []
    assert _keys(admin, q="100%") == []  # % is a character, not a wildcard
    assert _keys(admin, kind="analysis") == ["thread-y"]
    assert _keys(admin, kind="research") == ["run_a00000000003"]
    assert _keys(admin, kind="helpdesk", q="パスワード") == ["run_a00000000002"]
    assert _keys(admin, status="waiting") == ["run_a00000000006"]
    assert _keys(admin, status="paused") == ["run_a00000000006"]  # a Plan run's word
    assert _keys(admin, status="failed") == ["run_a00000000008", "thread-y", "run_a00000000003"]
    assert _keys(admin, started_by="tanaka") == [
        "run_a00000000008",
        "run_a00000000007",
        "run_a00000000006",
        "run_a00000000003",
    ]
    assert _keys(admin, started_by="yamada", kind="plan") == [cli_run, "run_a00000000001"]
    # days are the deployment's (Asia/Tokyo): 23:30 on 3/1 and 00:30 on 3/2 are apart
    assert _keys(admin, since="2025-03-02", until="2025-03-03") == [
        "run_a00000000003",
        "run_a00000000002",
    ]
    assert _keys(admin, until="2025-03-01") == ["run_a00000000001"]
    assert _keys(admin, since="2025-03-04", until="2025-03-04") == ["thread-y"]
    assert _keys(admin, since="2025-03-05", kind="analysis") == []  # started on 3/4
    assert _keys(admin, since="2026-01-01") == [cli_run]
    assert _keys(admin, q="", kind="", status="", started_by="", since="", until="") == (
        _keys(admin)
    )


def test_a_person_sees_only_what_they_may_before_the_page_is_cut(
    seeded: tuple[dict[str, httpx.Client], str],
) -> None:
    clients, cli_run = seeded
    mine = [cli_run, "thread-y", "run_a00000000002", "run_a00000000001"]
    assert _keys(clients["yamada"]) == mine
    assert _keys(clients["yamada"], limit=2) == mine[:2]
    assert _keys(clients["yamada"], started_by="tanaka") == []
    assert _keys(clients["tanaka"]) == [
        "run_a00000000008",
        "run_a00000000007",
        "run_a00000000006",
        "run_a00000000003",
    ]
    # 承認者 sees every Plan run (the team's controls), nobody's answers or conversations
    assert _keys(clients["sato"]) == [
        cli_run,
        "run_a00000000008",
        "run_a00000000006",
        "run_a00000000001",
    ]
    assert len(_keys(clients["keiri"])) == 8


def test_team_sharing_shows_everyones_runs_to_everyone(
    team: Team,
) -> None:
    _, clients = team(_seed, team_sharing=True)
    assert _keys(clients["tanaka"]) == _keys(clients["keiri"])
    assert "thread-y" in _keys(clients["tanaka"])


def test_pages_follow_each_other_without_a_gap_or_a_repeat(
    seeded: tuple[dict[str, httpx.Client], str],
) -> None:
    clients, _ = seeded
    admin = clients["keiri"]
    everything = _keys(admin, limit=200)
    walked: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        body = admin.get("/api/history", params=params).json()
        assert len(body["entries"]) <= 3
        walked += [entry["key"] for entry in body["entries"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert walked == everything and pages == 3
    # a filter applies on every page
    first = admin.get("/api/history", params={"limit": 1, "started_by": "tanaka"}).json()
    second = admin.get(
        "/api/history",
        params={"limit": 10, "started_by": "tanaka", "cursor": first["next_cursor"]},
    ).json()
    assert [e["key"] for e in first["entries"] + second["entries"]] == _keys(
        admin, started_by="tanaka"
    )
    assert second["next_cursor"] is None
    assert len(_entries(admin)) == 8  # 50 by default


def test_runs_started_at_the_same_moment_are_paged_in_turn(team: Team) -> None:
    moment = _local("2025-04-01")
    same = [
        (f"run_b0000000000{n}", "helpdesk", "helpdesk", f"質問 {n}", "yamada", "success",
         moment, {})
        for n in range(5)
    ]  # fmt: skip
    _, clients = team(lambda settings: _seed(settings, same))
    walked: list[str] = []
    cursor = None
    while True:
        body = clients["yamada"].get("/api/history", params={"limit": 2, "cursor": cursor}).json()
        walked += [entry["key"] for entry in body["entries"]]
        if (cursor := body["next_cursor"]) is None:
            break
    assert walked == [f"run_b0000000000{n}" for n in reversed(range(5))]


OVERFLOWING_CURSOR = base64.urlsafe_b64encode(
    json.dumps({"t": "0001-01-01T00:00:00+01:00", "k": "x"}).encode()
).decode()
"""A cursor whose time cannot be put in UTC (before year 1 there)."""


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"kind": "report"}, "kind", "種類「report」はありません"),
        ({"status": "done"}, "status", "状態「done」はありません"),
        ({"since": "2025-13-01"}, "since", "期間の始まり「2025-13-01」を日付として読み取れません"),
        ({"until": "昨日"}, "until", "期間の終わり「昨日」を日付として読み取れません"),
        ({"since": "1900-01-01"}, "since", "扱える範囲の外"),
        ({"since": "2025-03-05", "until": "2025-03-01"}, "until", "始まり（2025-03-05）より前"),
        ({"cursor": "not-a-cursor"}, "cursor", "続きの位置が読み取れません"),
        ({"cursor": OVERFLOWING_CURSOR}, "cursor", "続きの位置が読み取れません"),
        ({"q": " ".join("あいうえおかきくけこさ")}, "q", "言葉が長すぎます"),
    ],
)
def test_a_bad_filter_is_refused_in_japanese_naming_its_field(
    team: Team,
    params: dict[str, str],
    field: str,
    words: str,
) -> None:
    _, clients = team()
    response = clients["yamada"].get("/api/history", params=params)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "HISTORY_QUERY_INVALID"
    assert words in error["message"] and error["hint"]
    assert error["details"]["field"] == field


def test_a_limit_out_of_range_is_422_in_japanese(
    team: Team,
) -> None:
    _, clients = team()
    for limit in (0, 201, "たくさん"):
        response = clients["yamada"].get("/api/history", params={"limit": limit})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["message"].startswith("リクエストの内容が正しくありません")
        assert "limit" in error["message"]
    assert clients["yamada"].get("/api/history", params={"limit": 200}).status_code == 200


# --------------------------------------------------------------------------- real runs


def _wait(client: httpx.Client, path: str, done: Callable[[dict[str, Any]], bool]) -> None:
    deadline = time.monotonic() + 60
    while not done(body := client.get(path).json()):
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def test_runs_started_through_the_api_are_found_again(
    team: Team,
) -> None:
    _, clients = team(lambda settings: ResearchService(settings).index_sample())
    admin, yamada = clients["keiri"], clients["yamada"]
    assert admin.post("/api/helpdesk/kb/helpdesk/sample").status_code == 200

    started = yamada.post("/api/plans/monthly_close/runs", json={})
    assert started.status_code == 202, started.text
    plan_run = started.json()["run_id"]
    _wait(yamada, f"/api/plans/runs/{plan_run}", lambda run: run["status"] == "success")
    answer = yamada.post("/api/helpdesk/ask", json={"question": "パスワードを忘れたときは？"})
    assert answer.status_code == 200, answer.text
    dataset = yamada.post(
        "/api/analysis/datasets",
        files={"file": ("sales.csv", sample_data_path().read_bytes(), "text/csv")},
    ).json()["dataset_id"]
    turn = yamada.post(
        "/api/analysis/turns", json={"dataset_id": dataset, "question": "地域別の売上の合計"}
    ).json()
    yamada.post(
        "/api/analysis/turns",
        json={"dataset_id": dataset, "question": "月別にして", "thread_id": turn["thread_id"]},
    )
    research = yamada.post(
        "/api/research", json={"question": "インボイス制度の変更点を調べて", "kb": [SAMPLE_KB]}
    )
    assert research.status_code == 202, research.text
    research_run = research.json()["run_id"]

    entries = _entries(yamada)
    assert [(entry["kind"], entry["title"]) for entry in entries] == [
        ("research", "インボイス制度の変更点を調べて"),
        ("analysis", "地域別の売上の合計"),
        ("helpdesk", "パスワードを忘れたときは？"),
        ("plan", "月次締めの案内"),
    ]
    links = [entry["link"] for entry in entries]
    assert links == [
        f"/?run={research_run}",
        f"/analysis/?data={dataset}&thread={turn['thread_id']}",
        f"/helpdesk/?answer={answer.json()['run_id']}",
        f"/plans/?run={plan_run}",
    ]
    assert entries[1]["questions"] == 2
    assert [entry["status"] for entry in entries[1:]] == ["success", "success", "success"]
    assert entries[0]["started_at"] >= entries[1]["started_at"] >= entries[3]["started_at"]
    assert _entries(clients["tanaka"]) == []
    assert [entry["key"] for entry in _entries(admin)] == [entry["key"] for entry in entries]
