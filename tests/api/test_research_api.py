"""Deep research over HTTP (seed 004): uvicorn on loopback, a real HTTP client, the SSE
stream read to its end, a dropped connection resumed with Last-Event-ID, GraphQL."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from api_support import LiveServer, stream_events

from keiri_agent.config import Settings
from keiri_agent.services.research import EXAMPLE_QUESTION, SAMPLE_KB


def _start(client: httpx.Client, question: str = EXAMPLE_QUESTION) -> dict:
    response = client.post("/api/research", json={"question": question, "kb": [SAMPLE_KB]})
    assert response.status_code == 202, response.text
    return response.json()


def test_a_run_streams_to_its_end_and_its_state_has_the_report(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url) as client:
        run = _start(client)
        events = stream_events(client, run["events_url"])
        final = client.get(f"/api/research/{run['run_id']}").json()

    ids = [event.id for event in events]
    assert ids == list(range(1, len(ids) + 1))
    assert events[0].event == "plan" and events[-1].event == "done"
    assert all(event.data and event.data["run_id"] == run["run_id"] for event in events)
    report = "".join(e.data["payload"]["text"] for e in events if e.event == "report_chunk")
    assert final["status"] == "success"
    assert final["result"]["report_md"] == report and report
    assert final["last_event_id"] == ids[-1]


def test_a_dropped_connection_resumes_with_last_event_id_without_loss_or_repeat(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url) as client:
        run = _start(client)
        first = stream_events(client, run["events_url"], limit=3)
        rest = stream_events(
            client, run["events_url"], headers={"Last-Event-ID": str(first[-1].id)}
        )
        whole = stream_events(client, run["events_url"])

    assert [e.id for e in first] == [1, 2, 3]
    union = first + rest
    assert [(e.id, e.event, e.data) for e in union] == [(e.id, e.event, e.data) for e in whole]
    assert whole[-1].event == "done"


def test_the_graphql_mutation_starts_a_run_that_streams(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    query = (
        "mutation($q: String!, $kb: [String!]) { deepResearch(question: $q, kb: $kb) "
        "{ runId sessionId status eventsUrl } }"
    )
    with httpx.Client(base_url=server.url) as client:
        response = client.post(
            "/graphql",
            json={"query": query, "variables": {"q": EXAMPLE_QUESTION, "kb": [SAMPLE_KB]}},
        )
        assert response.status_code == 200, response.text
        run = response.json()["data"]["deepResearch"]
        events = stream_events(client, run["eventsUrl"])
        notes = client.get(f"/api/research/sessions/{run['sessionId']}/notes").json()

    assert run["status"] in {"queued", "running"}
    assert events[-1].event == "done"
    assert notes["notes"] and all(note["session_id"] == run["sessionId"] for note in notes["notes"])
