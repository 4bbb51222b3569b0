"""HelpDesk over HTTP: uvicorn on loopback, a real HTTP client, the offline provider;
the knowledge base indexed, changed and inspected through the API only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer, read_sse

from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION
from keiri_agent.config import Settings

UPLOADED_MANUAL = """# 経費精算システム ZEBRA 利用ガイド

## 締め日

ZEBRA の経費精算の締め日は毎月18日です。締め日を過ぎた申請は翌月の精算になります。
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "workspace"


@pytest.fixture
def offline(home: Path) -> Settings:
    return Settings(home=home, provider="offline")


def _client(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=120)


def _index_sample(client: httpx.Client, kb: str = "helpdesk") -> dict:
    response = client.post(f"/api/helpdesk/kb/{kb}/sample")
    assert response.status_code == 200, response.text
    return response.json()


def test_the_sample_indexed_through_the_api_answers_a_question_as_json(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with _client(serve(offline)) as client:
        reports = _index_sample(client)
        status = client.get("/api/helpdesk/kb/helpdesk").json()
        response = client.post("/api/helpdesk/ask", json={"question": EXAMPLE_QUESTION})

    assert reports["manual"]["added"] and reports["qa"]["added"] == ["xyz_faq.csv"]
    assert status["kb"] == "helpdesk"
    assert set(status["documents"]) == {"manual", "qa"}
    assert status["stats"]["manual"]["documents"] == len(reports["manual"]["added"])
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["question"] == EXAMPLE_QUESTION and answer["offline"] is True
    assert answer["answer"] and answer["sources"]
    assert answer["run_id"].startswith("run_")
    with _client(serve(offline)) as client:  # the ask is a run of the run service
        run = client.get(f"/api/runs/{answer['run_id']}").json()
        asked = client.get("/api/helpdesk/answers").json()["answers"]
    assert [(item["run_id"], item["question"], item["status"]) for item in asked] == [
        (answer["run_id"], EXAMPLE_QUESTION, "success")
    ]
    assert run["kind"] == "helpdesk" and run["status"] == "success"
    assert run["result"]["answer"] == answer["answer"]


def test_a_streamed_ask_numbers_every_event_and_ends_with_the_answer_json(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with _client(serve(offline)) as client:
        _index_sample(client)
        with client.stream(
            "POST", "/api/helpdesk/ask", json={"question": EXAMPLE_QUESTION, "stream": True}
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            events = list(read_sse(response.iter_lines()))
        # Accept: text/event-stream asks for the stream as well
        with client.stream(
            "POST",
            "/api/helpdesk/ask",
            json={"question": EXAMPLE_QUESTION},
            headers={"Accept": "text/event-stream"},
        ) as response:
            by_accept = list(read_sse(response.iter_lines()))

    ids = [event.id for event in events]
    assert ids == list(range(1, len(ids) + 1)) and len(ids) > 2
    assert events[0].event == "plan"
    last = events[-1]
    assert last.event == "result" and last.data is not None
    answer = last.data["payload"]
    assert answer["question"] == EXAMPLE_QUESTION and answer["answer"] and answer["sources"]
    run_ids = {event.data["run_id"] for event in events if event.data}
    assert run_ids == {answer["run_id"]}
    assert [e.event for e in events if e.event in ("result", "failed")] == ["result"]
    assert by_accept[-1].event == "result"


def test_an_uploaded_manual_is_found_by_a_question_and_then_removed(
    home: Path, offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with _client(serve(offline)) as client:
        uploaded = client.post(
            "/api/helpdesk/kb/zebra/documents",
            files=[("files", ("sub/zebra_guide.md", UPLOADED_MANUAL.encode(), "text/markdown"))],
            data={"collection": "manual"},
        )
        answer = client.post(
            "/api/helpdesk/ask", json={"question": "ZEBRA の締め日は？", "kb": "zebra"}
        ).json()
        removed = client.delete("/api/helpdesk/kb/zebra/documents/zebra_guide.md")
        again = client.delete("/api/helpdesk/kb/zebra/documents/zebra_guide.md")
        status = client.get("/api/helpdesk/kb/zebra").json()

    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["manual"]["added"] == ["zebra_guide.md"]  # folders dropped
    assert "18日" in answer["answer"]
    assert any("zebra_guide.md" in source for source in answer["sources"])
    assert removed.status_code == 200 and removed.json()["removed"] == ["zebra_guide.md"]
    assert again.status_code == 404 and again.json()["error"]["code"] == "NOT_FOUND"
    assert status["documents"]["manual"] == {}
    uploads = home / ".keiri" / "uploads"  # staged for the indexing run, deleted after it
    assert not uploads.exists() or not any(uploads.iterdir())


def test_an_upload_over_the_limit_is_refused_with_413_in_the_one_error_shape(
    home: Path, serve: Callable[..., LiveServer]
) -> None:
    settings = Settings(home=home, provider="offline", max_upload_mb=1)
    big = b"# big\n" + b"x" * (2**20 + 10)
    with _client(serve(settings)) as client:
        response = client.post(
            "/api/helpdesk/kb/helpdesk/documents",
            files=[("files", ("big.md", big, "text/markdown"))],
        )
        status = client.get("/api/helpdesk/kb/helpdesk").json()

    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "BODY_TOO_LARGE" and error["details"]["limit_bytes"] == 2**20
    assert set(error) == {"code", "message", "hint", "details"}
    assert status["stats"] == {}  # nothing was indexed


def test_bad_knowledge_base_and_document_names_never_reach_outside_the_workspace(
    home: Path, offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    outside = home.parent / "outside"
    (outside / "manual").mkdir(parents=True)
    (outside / "manual" / "manifest.json").write_text("{}", encoding="utf-8")
    with _client(serve(offline)) as client:
        _index_sample(client)
        responses = {
            "dotdot": client.get("/api/helpdesk/kb/%2E%2E"),
            "encoded slash": client.get("/api/helpdesk/kb/..%2F..%2Foutside"),
            "bad chars": client.post("/api/helpdesk/kb/x%20y/sample"),
            "ask": client.post("/api/helpdesk/ask", json={"question": "q", "kb": "../outside"}),
            "remove": client.delete("/api/helpdesk/kb/helpdesk/documents/..%2F..%2Fx"),
            "collection": client.delete(
                "/api/helpdesk/kb/helpdesk/documents/x", params={"collection": "../../outside"}
            ),
            "upload name": client.post(
                "/api/helpdesk/kb/helpdesk/documents",
                files=[("files", ("../..", b"text", "text/plain"))],
            ),
        }

    for what, response in responses.items():
        assert response.status_code in (400, 404, 422), (what, response.text)
        assert set(response.json()["error"]) == {"code", "message", "hint", "details"}, what
    assert responses["dotdot"].json()["error"]["code"] == "INVALID_NAME"
    assert responses["ask"].json()["error"]["code"] == "INVALID_NAME"
    assert responses["upload name"].json()["error"]["code"] == "UPLOAD_NAME_INVALID"
    assert sorted(p.name for p in outside.rglob("*")) == ["manifest.json", "manual"]
    assert not (home / ".keiri" / "knowledge" / "x y").exists()


def test_asking_an_empty_knowledge_base_is_a_400_with_a_hint_also_when_streamed(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with _client(serve(offline)) as client:
        plain = client.post("/api/helpdesk/ask", json={"question": "q", "kb": "empty"})
        streamed = client.post(
            "/api/helpdesk/ask", json={"question": "q", "kb": "empty", "stream": True}
        )

    for response in (plain, streamed):
        assert response.status_code == 400
        assert response.headers["content-type"].startswith("application/json")
        assert response.json()["error"]["code"] == "EMPTY_KNOWLEDGE_BASE"


def test_indexing_streams_its_progress_then_the_reports(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    """A CPU embeddings server takes minutes: with stream=true the sample's indexing
    shows each file as it is done (helpdesk and research), then the same reports."""
    with _client(serve(offline)) as client:
        with client.stream("POST", "/api/helpdesk/kb/helpdesk/sample?stream=true") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            events = list(read_sse(response.iter_lines()))
        with client.stream(
            "POST", "/api/research/sample", headers={"Accept": "text/event-stream"}
        ) as response:
            research = list(read_sse(response.iter_lines()))
        again = client.post("/api/helpdesk/kb/helpdesk/sample").json()

    kinds = [event.event for event in events]
    assert kinds[0] == "index_started" and kinds[-1] == "result"
    progress = [e.data["payload"] for e in events if e.event == "index_progress"]
    assert progress and all(p["done"] <= p["total"] for p in progress)
    assert progress[-1]["done"] == progress[-1]["total"]
    assert any(p["document"].endswith(".pdf") for p in progress)
    assert [event.id for event in events] == list(range(1, len(events) + 1))
    reports = events[-1].data["payload"]
    assert set(reports) == set(again) == {"manual", "qa"}
    assert research[-1].event == "result"
    assert research[-1].data["payload"]["kb"] == "research"
    assert any(e.event == "index_progress" for e in research)


def test_a_streamed_ask_is_a_run_whose_stream_resumes_after_last_event_id(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    """A client that lost the stream of an ask reconnects at /api/runs/{id}/events with
    Last-Event-ID and gets the rest: no gap, no repeat, ending with the answer."""
    with _client(serve(offline)) as client:
        _index_sample(client)
        with client.stream(
            "POST", "/api/helpdesk/ask", json={"question": EXAMPLE_QUESTION, "stream": True}
        ) as response:
            events = list(read_sse(response.iter_lines()))
        run_id = events[0].data["run_id"]
        with client.stream(
            "GET", f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "2"}
        ) as response:
            rest = list(read_sse(response.iter_lines()))
        state = client.get(f"/api/runs/{run_id}").json()
        unknown = client.get("/api/runs/run_000000000000/events")

    assert [(e.id, e.event) for e in rest] == [(e.id, e.event) for e in events[2:]]
    assert rest[-1].event == "result"
    assert state["status"] == "success" and state["kind"] == "helpdesk"
    assert state["result"] == rest[-1].data["payload"]
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "RUN_NOT_FOUND"
