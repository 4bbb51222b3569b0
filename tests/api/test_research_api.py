"""Deep research over HTTP (seed 004): uvicorn on loopback, a real HTTP client, the SSE
stream read to its end, a dropped connection resumed with Last-Event-ID, GraphQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from api_support import LiveServer, stream_events

from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.agents.research.sources.registry import search_tools
from keiri_agent.config import Settings
from keiri_agent.services.research import (
    EXAMPLE_QUESTION,
    SAMPLE_KB,
    ResearchService,
    sample_corpus,
)


class SlowService(ResearchService):
    """The configured sources, each search 0.3 s slower (quiet gaps in the stream)."""

    def agent(self, kb_names: Any = None) -> DeepResearchAgent:
        tools = search_tools(self.settings, kb_names=list(kb_names) if kb_names else None)
        for tool in tools:
            search = tool.search

            def slow(query: str, *, top: int = 5, _search: Any = search) -> Any:
                time.sleep(0.3)
                return _search(query, top=top)

            tool.search = slow  # type: ignore[method-assign]
        return DeepResearchAgent(self.settings, tools=tools, store=self.store)


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


def test_a_run_survives_the_client_going_away(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url) as client:
        run = _start(client)
        stream_events(client, run["events_url"], limit=1)  # then the connection closes
    deadline = time.monotonic() + 60
    with httpx.Client(base_url=server.url) as client:
        while (state := client.get(f"/api/research/{run['run_id']}").json())["status"] not in (
            "success",
            "failed",
        ):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert state["status"] == "success" and state["result"]["report_md"]


def test_unknown_runs_and_bad_event_ids_are_clear_errors(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url) as client:
        missing = client.get("/api/research/run_nope")
        missing_events = client.get("/api/research/run_nope/events")
        run = _start(client)
        bad_id = client.get(run["events_url"], headers={"Last-Event-ID": "abc"})
        empty = client.post("/api/research", json={"question": "   "})
        english = client.get("/api/research/run_nope", headers={"Accept-Language": "en-US"})

    assert missing.status_code == 404 and missing_events.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"
    assert "見つかりません" in missing.json()["error"]["message"]
    assert english.json()["error"]["message"] == "Research run 'run_nope' was not found"
    assert bad_id.status_code == 400
    assert bad_id.json()["error"]["code"] == "LAST_EVENT_ID_INVALID"
    assert empty.status_code == 400 and empty.json()["error"]["message"] == "質問が空です"


def test_a_quiet_stream_sends_heartbeat_comments(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    from api_support import read_sse, research_workspace

    settings = research_workspace(tmp_path, api_heartbeat_s=0.05, api_poll_interval_s=0.02)
    server = serve(settings)
    kinds = server.server.config.app.state.context.runs.kinds
    kinds["research"].service = SlowService(settings)  # a slow source: quiet gaps in the stream
    with httpx.Client(base_url=server.url) as client:
        run = _start(client)
        with client.stream("GET", run["events_url"], timeout=60) as response:
            events = list(read_sse(response.iter_lines()))
    comments = [comment for event in events for comment in event.comments]
    assert "keep-alive" in comments
    assert events[-1].event == "done"


def test_a_graphql_mutation_with_a_bad_question_is_a_graphql_error_in_japanese(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    query = 'mutation { deepResearch(question: "  ") { runId } }'
    with httpx.Client(base_url=server.url) as client:
        response = client.post("/graphql", json={"query": query})
        state = client.post(
            "/graphql", json={"query": '{ researchRun(runId: "run_nope") { status } }'}
        )
    body = response.json()
    assert body["data"] is None
    (error,) = body["errors"]
    assert error["message"] == "質問が空です"
    assert error["extensions"]["code"] == "INPUT_ERROR"
    assert "Traceback" not in response.text
    assert state.json() == {"data": {"researchRun": None}}


def test_the_bundled_corpus_is_indexed_through_the_api_and_then_researched(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    server = serve(Settings(home=tmp_path, provider="offline"))
    with httpx.Client(base_url=server.url, timeout=60) as client:
        before = client.post("/api/research", json={"question": EXAMPLE_QUESTION})
        indexed = client.post("/api/research/sample")
        again = client.post("/api/research/sample")
        run = _start(client)
        events = stream_events(client, run["events_url"])
    assert before.status_code == 400 and before.json()["error"]["hint"]
    assert indexed.status_code == 200 and indexed.json()["report"]["added"]
    assert again.json()["report"]["added"] == []
    assert events[-1].event == "done"


AZURE_DOCS = [{"id": "az-1", "content": "インボイス制度では請求書に登録番号が必要です。"}]


def _found(events: list[Any]) -> set[str]:
    """The labels of every passage the run's searches found (its ``hits`` events)."""
    return {label for e in events if e.event == "hits" for label in e.data["payload"]["sources"]}


def test_knowledge_bases_are_listed_and_the_sample_is_searched_alone(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    from api_support import research_workspace
    from pydantic import SecretStr

    from keiri_agent.agents.research.sources.testing import AzureSearchStub
    from keiri_agent.search.knowledge_base import KnowledgeBase

    own = tmp_path / "own"
    own.mkdir()
    (own / "請求書の規程.md").write_text(
        "# 請求書の規程\n\nインボイス制度に合わせて請求書に登録番号を記載します。\n",
        encoding="utf-8",
    )
    with AzureSearchStub([AzureSearchStub.documents(AZURE_DOCS) for _ in range(20)]) as stub:
        settings = research_workspace(
            tmp_path / "home",
            research_azure_search_endpoint=stub.base_url,
            research_azure_search_index="kitei-idx",
            research_azure_search_api_key=SecretStr("azs-key-0123456789abcdef"),
        )
        KnowledgeBase.for_workspace(settings, "kitei").index_files([own], "manual")
        server = serve(settings)
        with httpx.Client(base_url=server.url, timeout=60) as client:
            listed = client.get("/api/research/knowledge-bases").json()
            sample = _start(client)  # kb: the sample
            sample_found = _found(stream_events(client, sample["events_url"]))
            sample_state = client.get(f"/api/research/{sample['run_id']}").json()
            azure_calls = len(stub.requests)
            default = client.post("/api/research", json={"question": EXAMPLE_QUESTION}).json()
            default_found = _found(stream_events(client, default["events_url"]))
            default_state = client.get(f"/api/research/{default['run_id']}").json()
            mixed = client.post(
                "/api/research", json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB, "kitei"]}
            )
            graphql_mixed = client.post(
                "/graphql",
                json={
                    "query": 'mutation($kb: [String!]) { deepResearch(question: "請求書", '
                    "kb: $kb) { runId } }",
                    "variables": {"kb": [SAMPLE_KB, "kitei"]},
                },
            ).json()

    assert [(kb["name"], kb["sample"]) for kb in listed["knowledge_bases"]] == [
        ("kitei", False),
        (SAMPLE_KB, True),
    ]
    assert listed["sample"]["name"] == SAMPLE_KB and listed["sample"]["indexed"] is True
    assert "サンプル資料だけを検索します" in listed["sample"]["notice"]
    sample_documents = {path.name for path in sample_corpus().iterdir()}
    assert sample_state["status"] == "success" and sample_found
    assert all(label.split()[0] in sample_documents for label in sample_found), sample_found
    assert azure_calls == 0  # the sample alone: not Azure AI Search
    assert default_state["status"] == "success"
    assert not any(label.split()[0] in sample_documents for label in default_found)
    assert any(label.startswith("請求書の規程.md") for label in default_found), default_found
    assert len(stub.requests) > azure_calls  # the default: Azure AI Search too
    assert mixed.status_code == 400 and mixed.json()["error"]["code"] == "SAMPLE_NOT_MIXED"
    assert graphql_mixed["errors"][0]["extensions"]["code"] == "SAMPLE_NOT_MIXED"


def test_health_says_from_the_start_when_no_language_model_is_configured(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    from pydantic import SecretStr

    from keiri_agent.config import OFFLINE_NOTICE

    offline = serve(Settings(home=tmp_path / "a", provider="offline"))
    key = "sk-test-0123456789abcdefghijklmnop"
    online = serve(Settings(home=tmp_path / "b", provider="openai", openai_api_key=SecretStr(key)))
    off = httpx.get(f"{offline.url}/api/health").json()
    on = httpx.get(f"{online.url}/api/health")
    assert off["offline"] is True and off["offline_notice"] == OFFLINE_NOTICE
    assert "オフラインモード" in off["offline_notice"]
    assert on.json()["offline"] is False and on.json()["offline_notice"] is None
    assert key not in on.text
