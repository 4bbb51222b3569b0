"""GraphQL and run starts under abuse (issue 30).

- One request with 300 aliased ``deepResearch`` mutations started 300 runs, and the
  next ordinary run waited behind them → now one ``deepResearch`` per request
  (``api_graphql_research_per_request`` raises it); more is a 400 ``GRAPHQL_LIMIT`` and
  no run starts.
- A 1.9 MiB query of 110k aliases (under the body limit) was parsed and validated for
  11–23 s on the event loop → now a document is read only up to ``MAX_TOKENS`` tokens
  and refused beyond (400 ``GRAPHQL_LIMIT``); aliases and depth are bounded too,
  fragments counted as often as they are spread.
- Nothing limited how often one client starts runs → now ``api_run_starts_per_minute``
  per client (429 ``RATE_LIMITED`` with ``Retry-After``), REST and GraphQL alike.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import LiveServer, research_workspace

from keiri_agent.api.graphql_limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS
from keiri_agent.config import Settings
from keiri_agent.services.research import SAMPLE_KB

QUESTION = "インボイス制度の登録番号"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return research_workspace(tmp_path)


def _research(alias: str) -> str:
    return f'{alias}: deepResearch(question: "{QUESTION}", kb: ["{SAMPLE_KB}"]) {{ runId }}'


def _post(client: httpx.Client, query: str, **variables: Any) -> httpx.Response:
    return client.post("/graphql", json={"query": query, "variables": variables or None})


def _limit_error(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text[:300]
    error = response.json()["error"]
    assert error["code"] == "GRAPHQL_LIMIT" and "Traceback" not in response.text
    return error


def _runs(settings: Settings) -> int:
    """How many research runs were recorded (started) in the workspace's database."""
    with sqlite3.connect(settings.storage.home / ".keiri" / "keiri.db") as connection:
        return int(connection.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_300_aliased_research_mutations_start_nothing(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    many = "mutation { " + " ".join(_research(f"r{n}") for n in range(300)) + " }"
    some = "mutation { " + " ".join(_research(f"r{n}") for n in range(30)) + " }"
    with httpx.Client(base_url=server.url, timeout=60) as client:
        _limit_error(_post(client, many))  # over the token limit before anything else
        error = _limit_error(_post(client, some))
        assert "deepResearch" in error["message"] and "30 件" in error["message"]
        two = "mutation { " + _research("a") + " " + _research("b") + " }"
        _limit_error(_post(client, two))
        one = _post(client, "mutation { " + _research("only") + " }")
        assert one.status_code == 200 and one.json()["data"]["only"]["runId"]
    assert _runs(settings) == 1


def test_a_setting_allows_more_research_per_request(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings.with_values(api_graphql_research_per_request=2))
    two = "mutation { " + _research("a") + " " + _research("b") + " }"
    with httpx.Client(base_url=server.url, timeout=60) as client:
        response = _post(client, two)
        assert response.status_code == 200, response.text
        assert {"a", "b"} <= set(response.json()["data"])
        three = "mutation { " + " ".join(_research(x) for x in "abc") + " }"
        _limit_error(_post(client, three))


def test_fragments_count_as_often_as_they_are_spread(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    fragment = "fragment R on Mutation { " + _research("x") + " }"
    spread = "mutation { ...R ...R }  " + fragment  # one field written, two executed
    with httpx.Client(base_url=server.url, timeout=60) as client:
        _limit_error(_post(client, spread))
        fields = " ".join(f'a{n}: researchRun(runId: "r") {{ runId }}' for n in range(8))
        amplified = (
            "query { ...F ...F ...F } fragment F on Query { " + fields + " }"
        )  # 24 aliases executed from 8 written
        assert 8 <= MAX_ALIASES < 24
        assert "別名" in _limit_error(_post(client, amplified))["message"]


def test_a_huge_query_is_refused_by_its_size_and_the_server_stays_responsive(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    huge = "query { " + " ".join(f"a{n}: __typename" for n in range(110_000)) + " }"
    assert 1.5 * 2**20 < len(huge.encode()) < 2 * 2**20
    with httpx.Client(base_url=server.url, timeout=60) as client:
        error = _limit_error(_post(client, huge))
        assert str(MAX_TOKENS) in error["message"].replace(",", "")
        ordinary = 'query { researchRun(runId: "r") { runId } }'
        assert _post(client, ordinary).status_code == 200
        fields = ["__schema", "types", "fields", "type", *["ofType"] * MAX_DEPTH]
        nested = "{ " + " { ".join(fields) + " { name" + " }" * len(fields) + " }"
        assert "深さ" in _limit_error(_post(client, nested))["message"]
        assert client.get("/api/health").status_code == 200


def test_run_starts_are_limited_per_client_rest_and_graphql(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings.with_values(api_run_starts_per_minute=3))
    body = {"question": QUESTION, "kb": [SAMPLE_KB]}
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for _ in range(2):
            assert client.post("/api/research", json=body).status_code == 202
        assert _post(client, "mutation { " + _research("third") + " }").status_code == 200
        refused = client.post("/api/research", json=body)
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "RATE_LIMITED" and int(refused.headers["retry-after"]) >= 1
        graphql = _post(client, "mutation { " + _research("fourth") + " }")
        assert graphql.status_code == 200
        errors = graphql.json()["errors"]
        assert errors[0]["extensions"]["code"] == "RATE_LIMITED"
        assert client.get("/api/research/sessions").status_code == 200  # reads are free
    assert _runs(settings) == 3
