"""Loopback stubs of the search services' REST APIs, for offline tests.

``AzureSearchStub`` serves ``POST /indexes/<index>/docs/search`` and ``TavilyStub``
serves ``POST /search`` on 127.0.0.1, each answering from a queue of ``StubAnswer``
(status, JSON body or raw bytes, an optional delay) and recording every request
(``RecordedSearchRequest``: path, query parameters, headers, JSON body) so a test checks
what the adapter sent.

    with AzureSearchStub([AzureSearchStub.documents([{"id": "1", "content": "..."}])]) as stub:
        AzureAISearch(stub.base_url, "docs", api_key=SecretStr("k")).search("インボイス")
        stub.requests[0].body["search"]
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from keiri_agent.llm.testing import LoopbackServer


@dataclass(frozen=True)
class StubAnswer:
    """One answer: ``status`` with ``body`` as JSON (or ``raw`` bytes as is), after ``delay_s``."""

    body: Any = None
    status: int = 200
    raw: bytes | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class RecordedSearchRequest:
    """A request the stub received."""

    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    body: Any
    """The JSON body (None when it was not JSON)."""


@dataclass
class _SearchApiStub:
    """A JSON API on a free loopback port answering POSTs from a queue."""

    answers: Sequence[StubAnswer] = ()
    requests: list[RecordedSearchRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = list(self.answers)
        self._lock = threading.Lock()
        self._server: LoopbackServer | None = None

    def __enter__(self) -> Self:
        self._server = LoopbackServer(type("Handler", (_Handler,), {"stub": self}))
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.stop()
        self._server = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        assert self._server is not None, "use the stub as a context manager"
        return self._server.origin

    def add(self, *answers: StubAnswer) -> None:
        with self._lock:
            self._queue.extend(answers)

    def _next(self, request: RecordedSearchRequest) -> StubAnswer:
        with self._lock:
            self.requests.append(request)
            if not self._queue:
                return StubAnswer({"error": "no scripted answer left"}, status=500)
            return self._queue.pop(0)


class _Handler(BaseHTTPRequestHandler):
    stub: _SearchApiStub

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        try:
            body = json.loads(data) if data else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        request = RecordedSearchRequest(
            method="POST",
            path=parts.path,
            params={key: values[-1] for key, values in parse_qs(parts.query).items()},
            headers={key.lower(): value for key, value in self.headers.items()},
            body=body,
        )
        answer = self.stub._next(request)
        if answer.delay_s:
            time.sleep(answer.delay_s)
        payload = (
            answer.raw
            if answer.raw is not None
            else json.dumps(answer.body, ensure_ascii=False).encode()
        )
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read ``requests`` instead."""


class AzureSearchStub(_SearchApiStub):
    """Azure AI Search's ``docs/search`` REST API on loopback (any index path)."""

    @staticmethod
    def documents(docs: Sequence[Mapping[str, Any]], *, status: int = 200) -> StubAnswer:
        """An answer listing ``docs`` (each a dict of fields, ``@search.score`` included)."""
        return StubAnswer({"value": [dict(doc) for doc in docs]}, status=status)


class TavilyStub(_SearchApiStub):
    """Tavily's ``/search`` API on loopback."""

    @staticmethod
    def results(results: Sequence[Mapping[str, Any]], *, query: str = "") -> StubAnswer:
        """An answer listing ``results`` (each ``{title, url, content, score}``)."""
        return StubAnswer({"query": query, "results": [dict(item) for item in results]})
