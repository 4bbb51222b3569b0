"""An analysis conversation read back over HTTP (``GET /api/analysis/threads/{id}``):
the turns of a thread in the order they were asked, each its question and the turn
JSON the ask answered, and the thread's file — what the データ分析 page needs after a
reload. A thread with no turns is 404 in Japanese; another 実行者 is refused, 管理者
sees it. uvicorn on loopback, a real HTTP client, the offline reasoner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer

from keiri_agent.config import Settings
from keiri_agent.people.accounts import Accounts
from keiri_agent.runs.records import Run
from keiri_agent.services.analysis_threads import turn_json
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.workspace import Workspace

CSV = (
    "日付,部署,勘定科目,金額\r\n"
    "2024-04-01,営業部,旅費交通費,12000\r\n"
    "2024-04-02,総務部,消耗品費,3500\r\n"
    "2024-04-03,営業部,交際費,8000\r\n"
).encode("cp932")


@pytest.fixture
def offline(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, provider="offline")


def _upload(client: httpx.Client) -> str:
    response = client.post("/api/analysis/datasets", files={"file": ("経費.csv", CSV, "text/csv")})
    assert response.status_code == 201, response.text
    return str(response.json()["dataset_id"])


def _ask(client: httpx.Client, dataset_id: str, question: str, thread_id: str | None) -> dict:
    body = {"dataset_id": dataset_id, "question": question, "thread_id": thread_id}
    response = client.post("/api/analysis/turns", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_thread_reads_back_its_turns_in_order_with_their_results_and_its_file(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset_id = _upload(client)
        asked = _ask(client, dataset_id, "金額を集計して", None)
        answered = _ask(client, dataset_id, "部署", asked["thread_id"])
        other = _ask(client, dataset_id, "部署別の金額合計を出して", None)
        response = client.get(f"/api/analysis/threads/{asked['thread_id']}")

    assert response.status_code == 200, response.text
    thread = response.json()
    assert thread["thread_id"] == asked["thread_id"] and thread["dataset_id"] == dataset_id
    turns = thread["turns"]
    assert [turn["question"] for turn in turns] == ["金額を集計して", "部署"]
    assert [turn["status"] for turn in turns] == ["success", "success"]
    assert [turn["result"] for turn in turns] == [asked, answered]
    assert all(turn["error"] is None and turn["run_id"].startswith("run_") for turn in turns)
    assert turns[0]["created_at"] <= turns[1]["created_at"]
    assert asked["questions"] and answered["report_url"]
    assert other["thread_id"] != asked["thread_id"]  # another thread is not listed


def test_a_thread_whose_link_to_its_file_is_gone_names_the_file_its_turns_asked_about(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset_id = _upload(client)
        thread_id = _ask(client, dataset_id, "部署別の金額合計を出して", "thread-1")["thread_id"]
        link = Workspace.from_settings(offline).state / "datasets" / "threads" / "thread-1.json"
        assert link.is_file()
        link.unlink()
        response = client.get(f"/api/analysis/threads/{thread_id}")

    assert response.status_code == 200, response.text
    assert response.json()["dataset_id"] == dataset_id


def test_a_thread_without_turns_is_404_in_japanese(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        response = client.get(
            "/api/analysis/threads/never-asked", headers={"Accept-Language": "ja"}
        )
        too_long = client.get("/api/analysis/threads/" + "a" * 201)

    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "ANALYSIS_THREAD_NOT_FOUND"
    assert "会話が見つかりません" in error["message"] and error["hint"]
    assert too_long.status_code in (400, 422)


def test_a_turn_of_a_thread_shows_its_result_only_when_it_succeeded() -> None:
    moment = datetime(2026, 1, 5, 0, 30, tzinfo=UTC)

    def run(status: str, result: dict | None, error: dict | None) -> Run:
        return Run(
            run_id="run_0123456789ab", kind="analysis", subject="t", title="質問",
            owner="", status=status, inputs={}, result=result, error=error, last_seq=3,  # type: ignore[arg-type]
            attempt=1, cancel_requested=False, worker="", lease_until=0.0,
            created_at=moment, updated_at=moment,
        )  # fmt: skip

    failed = turn_json(run("failed", None, {"code": "X_FAILED", "message": "失敗"}))
    running = turn_json(run("running", None, None))
    done = turn_json(run("success", {"reply": "答え"}, None))

    assert failed["error"] == {"code": "X_FAILED", "message": "失敗"} and failed["result"] is None
    assert running["result"] is None and running["error"] is None
    assert running["status"] == "running" and running["question"] == "質問"
    assert done["result"] == {"reply": "答え"} and done["created_at"].startswith("2026-01-05T00:30")


# --------------------------------------------------------------------------- ownership

PEOPLE = {"keiri": ["admin"], "yamada": ["operator"], "tanaka": ["operator"]}


@pytest.fixture
def people(tmp_path: Path, serve: Callable[..., LiveServer]) -> Iterator[dict[str, httpx.Client]]:
    settings = Settings(home=tmp_path, provider="offline")
    engine = create_engine(settings)
    upgrade(engine)
    accounts = Accounts(engine)
    for login, roles in PEOPLE.items():
        accounts.add(login, roles)
    tokens = {login: accounts.issue_token(login) for login in PEOPLE}
    engine.dispose()
    server = serve(settings)
    clients = {
        login: httpx.Client(
            base_url=server.url, timeout=120, headers={"Authorization": f"Bearer {token}"}
        )
        for login, token in tokens.items()
    }
    yield clients
    for client in clients.values():
        client.close()


def test_a_thread_is_read_back_by_who_started_it_and_by_an_administrator_only(
    people: dict[str, httpx.Client],
) -> None:
    dataset_id = _upload(people["yamada"])
    thread_id = _ask(people["yamada"], dataset_id, "部署別の金額合計を出して", None)["thread_id"]
    path = f"/api/analysis/threads/{thread_id}"

    denied = people["tanaka"].get(path)
    assert denied.status_code == 403, denied.text
    assert denied.json()["error"]["code"] == "PERMISSION_DENIED"
    assert people["yamada"].get(path).status_code == 200
    assert people["keiri"].get(path).json()["turns"][0]["question"] == "部署別の金額合計を出して"
    assert httpx.get(people["yamada"].base_url.join(path)).status_code == 401
