"""Secrets never leave the API: every route (iterated from the app, so routes added later
are covered), its error paths, the docs and GraphQL introspection, with an OpenAI key, an
Azure key, a database password, the API token, a web search key and a Qdrant key set to
recognisable values. Neither a response (body or header) nor the server log holds one.

Two workspaces: a language model that echoes the key in its 401 ("Incorrect API key
provided: <key>"), so a research run fails with the provider's message; and a PostgreSQL
URL with a password that cannot be reached, so every database access fails."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer, protected_calls, read_sse, research_workspace
from pydantic import SecretStr

from keiri_agent.config import Settings
from keiri_agent.llm.testing import ECHO_KEY, StubError, StubOpenAIServer
from keiri_agent.services.research import EXAMPLE_QUESTION, SAMPLE_KB

OPENAI = "sk-proj-Op3nAiKx9wQ2mZ7pL4vB8nR3tY"
AZURE = "AzUr3Key5f0c2b9e8d7a6f5e4d3c2b1a0"
DB_PASSWORD = "DbPassw0rdQm8Zr4LtVz"
TOKEN = "ApiT0kenVn3Hs8Kd2Pw6Xc1"
WEB = "tvly-W3bKey9Jf4Gh7Lp2Mn5"
QDRANT = "Qdr4ntKeyRt6Yu1Io8Pa3"
SECRETS = [OPENAI, AZURE, DB_PASSWORD, TOKEN, WEB, QDRANT]
AUTH = {"Authorization": f"Bearer {TOKEN}"}

INTROSPECTION = "{ __schema { types { name fields { name args { name defaultValue } } } } }"
MUTATION = "mutation($q: String!) { deepResearch(question: $q) { runId eventsUrl } }"


def _secret_settings(home: Path, **overrides: object) -> Settings:
    settings = research_workspace(home)
    return settings.with_values(
        openai_api_key=SecretStr(OPENAI),
        azure_openai_api_key=SecretStr(AZURE),
        azure_openai_endpoint="http://127.0.0.1:1",
        api_token=SecretStr(TOKEN),
        research_web_api_key=SecretStr(WEB),
        qdrant_api_key=SecretStr(QDRANT),
        max_retries=0,
        **overrides,
    )


def _exchanges(client: httpx.Client, settings: Settings) -> Iterator[tuple[str, httpx.Response]]:
    """Every route with the token and without a body, then the error paths and docs."""
    for method, path in protected_calls(settings):
        yield f"{method} {path}", client.request(method, path, headers=AUTH)
    yield "wrong token", client.get("/api/research/sessions", headers={"Authorization": "x"})
    for path in ("/api/health", "/openapi.json", "/docs", "/redoc", "/nowhere"):
        yield path, client.get(path, headers=AUTH)
    bad_bodies = [b"{", b'{"question": 5, "kb": "x"}', b'{"question": "' + b"x" * 9000 + b'"}']
    for body in bad_bodies:
        response = client.post(
            "/api/research", content=body, headers={**AUTH, "Content-Type": "application/json"}
        )
        yield f"bad body {body[:20]!r}", response
    yield "unknown run", client.get("/api/research/run_unknown", headers=AUTH)
    yield "unknown run events", client.get("/api/research/run_unknown/events", headers=AUTH)
    yield (
        "bad Last-Event-ID",
        client.get("/api/research/run_unknown/events", headers={**AUTH, "Last-Event-ID": "abc"}),
    )
    for query in (INTROSPECTION, "{ nope }", "{"):
        yield f"graphql {query[:20]}", client.post("/graphql", json={"query": query}, headers=AUTH)
    yield "graphiql", client.get("/graphql", headers={**AUTH, "Accept": "text/html"})
    mutation = client.post(
        "/graphql", json={"query": MUTATION, "variables": {"q": EXAMPLE_QUESTION}}, headers=AUTH
    )
    yield "graphql mutation", mutation
    started = client.post(
        "/api/research", json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB]}, headers=AUTH
    )
    yield "start research", started
    if started.status_code == 202:
        run = started.json()
        with client.stream("GET", run["events_url"], headers=AUTH, timeout=60) as events:
            events.read()  # the stream ends with the run
        assert list(read_sse(iter(events.text.splitlines())))
        yield "events", events
        yield "final state", client.get(f"/api/research/{run['run_id']}", headers=AUTH)
        yield "notes", client.get(f"/api/research/sessions/{run['session_id']}/notes", headers=AUTH)


def _assert_clean(label: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"a secret ({secret[:6]}…) is in {label}"


def _check_every_route(
    settings: Settings, serve: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> list[tuple[str, httpx.Response]]:
    caplog.set_level(logging.DEBUG)
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        exchanges = list(_exchanges(client, settings))
    for label, response in exchanges:
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        _assert_clean(f"the headers of {label}", headers)
        _assert_clean(f"the response to {label}", response.text)
        assert "Traceback" not in response.text, label
    logged = caplog.text + "\n".join(
        f"{record.getMessage()} {record.exc_text or ''}" for record in caplog.records
    )
    _assert_clean("the server log", logged)
    return exchanges


def test_a_provider_echoing_the_key_leaks_nothing_through_any_route(
    tmp_path: Path, serve: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> None:
    echo = StubError(401, f"Incorrect API key provided: {ECHO_KEY}. You can find your key…")
    with StubOpenAIServer([echo] * 200) as llm:
        settings = _secret_settings(
            tmp_path,
            provider="openai-compatible",
            openai_api_base=llm.base_url,
            research_web_provider="tavily",
            research_web_base_url=llm.base_url,
        )
        exchanges = dict(_check_every_route(settings, serve, caplog))
        assert llm.chat_requests, "the provider was asked (and echoed the key)"
    assert exchanges["start research"].status_code == 202
    assert exchanges["final state"].json()["status"] in {"success", "failed"}
    assert exchanges["graphql mutation"].status_code == 200
    assert "__schema" in exchanges[f"graphql {INTROSPECTION[:20]}"].text


def test_an_unreachable_database_with_a_password_leaks_nothing_through_any_route(
    tmp_path: Path, serve: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> None:
    url = f"postgresql+psycopg://keiri:{DB_PASSWORD}@127.0.0.1:1/keiri?connect_timeout=2"
    settings = _secret_settings(tmp_path, provider="offline", database_url=url)
    exchanges = dict(_check_every_route(settings, serve, caplog))
    assert exchanges["start research"].status_code == 503, "the database was used"
    error = exchanges["start research"].json()["error"]
    assert error["code"] == "STORE_UNREACHABLE"
    assert error["message"] == "データベースサーバー 127.0.0.1:1 に接続できませんでした"
