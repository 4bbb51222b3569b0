"""More than one server process (issue 13, item 4): two ``keiri-agent serve`` processes
on one throwaway PostgreSQL database and one workspace share research runs, their
events and the notes — a run started through A is streamed, dropped and resumed
through B; ``--workers 2`` starts two processes that both answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from api_support import (
    READY_S,
    ServeProcess,
    SseEvent,
    read_sse,
    research_workspace,
    stream_events,
)

from keiri_agent.services.research import EXAMPLE_QUESTION, SAMPLE_KB


@pytest.fixture
def database_url(postgres_database: str) -> str:
    """A fresh database on the throwaway PostgreSQL server (dropped afterwards)."""
    return postgres_database


@pytest.fixture
def start_server(tmp_path: Path, database_url: str) -> Iterator[object]:
    """``start_server(*extra_args)`` → a ready ``ServeProcess`` (all stopped and reaped)."""
    research_workspace(tmp_path, database_url=database_url)
    started: list[ServeProcess] = []

    def start(*extra: str) -> ServeProcess:
        env = {"KEIRI_AGENT_DATABASE_URL": database_url, "KEIRI_AGENT_PROVIDER": "offline"}
        server = ServeProcess(tmp_path, env, *extra)
        started.append(server)
        return server.wait_ready()

    try:
        yield start
    finally:
        for server in started:
            server.stop()


def _arrivals(client: httpx.Client, path: str, **headers: str) -> list[tuple[SseEvent, float]]:
    """The stream at ``path`` read to its end, each event with its arrival time."""
    received: list[tuple[SseEvent, float]] = []
    with client.stream("GET", path, headers=headers, timeout=60) as response:
        assert response.status_code == 200, response.read()
        for event in read_sse(response.iter_lines()):
            received.append((event, time.time()))
    return received


def test_a_run_started_on_one_process_streams_and_resumes_on_another(
    start_server: object,
) -> None:
    a = start_server()  # type: ignore[operator]
    b = start_server()  # type: ignore[operator]
    assert a.process.pid != b.process.pid
    with (
        httpx.Client(base_url=a.url, timeout=60) as on_a,
        httpx.Client(base_url=b.url, timeout=60) as on_b,
    ):
        response = on_a.post(
            "/api/research", json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB]}
        )
        assert response.status_code == 202, response.text
        run = response.json()
        first = stream_events(on_b, run["events_url"], limit=3)  # dropped after 3 events
        rest = _arrivals(on_b, run["events_url"], **{"Last-Event-ID": str(first[-1].id)})
        whole = stream_events(on_a, run["events_url"])
        final = on_b.get(f"/api/research/{run['run_id']}").json()
        notes_path = f"/api/research/sessions/{run['session_id']}/notes"
        notes = on_b.get(notes_path).json()["notes"]
        deleted = on_b.delete(notes_path).json()["deleted"]
        notes_after = on_a.get(notes_path).json()["notes"]

    assert [e.id for e in first] == [1, 2, 3]
    union = first + [event for event, _ in rest]
    assert [(e.id, e.event, e.data) for e in union] == [(e.id, e.event, e.data) for e in whole]
    assert whole[-1].event == "done"
    assert final["status"] == "success" and final["last_event_id"] == whole[-1].id
    assert final["result"]["report_md"]
    assert notes and all(note["session_id"] == run["session_id"] for note in notes)
    assert deleted == len(notes) and notes_after == []
    # Written on A, read through B: each event reached B's client (seconds, wall clock).
    for event, arrived in rest:
        assert event.data is not None
        created = datetime.fromisoformat(event.data["timestamp"]).timestamp()
        assert arrived - created < 10


def _answers_while_suspended(url: str, paused: object) -> bool:
    """True when ``/api/health`` answers while ``paused`` (a worker) is stopped: only
    the other worker can accept the connection. Stopped briefly: uvicorn's supervisor
    replaces a worker that misses its 5 s health check."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        paused.suspend()  # type: ignore[attr-defined]
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                return True
        except httpx.TransportError:
            pass  # the other worker is still starting
        finally:
            paused.resume()  # type: ignore[attr-defined]
        time.sleep(1)
    return False


def test_workers_2_starts_two_processes_that_both_answer(start_server: object) -> None:
    import psutil

    server = start_server("--workers", "2")  # type: ignore[operator]
    deadline = time.monotonic() + READY_S
    workers: list[psutil.Process] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        workers = [
            child
            for child in psutil.Process(server.process.pid).children()
            if "spawn_main" in " ".join(child.cmdline())
        ]
        time.sleep(0.1)
    assert len(workers) == 2, "uvicorn did not start two worker processes"
    assert _answers_while_suspended(server.url, workers[0])
    assert _answers_while_suspended(server.url, workers[1])
    assert all(worker.is_running() for worker in workers)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        response = client.post(
            "/api/research", json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB]}
        )
        assert response.status_code == 202, response.text
        events = stream_events(client, response.json()["events_url"])
    assert events[-1].event == "done"
