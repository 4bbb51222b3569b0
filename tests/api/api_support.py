"""What the API tests share: uvicorn serving an app on a loopback port in a thread,
a workspace with the bundled research corpus indexed, an SSE reader, the protected routes."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from keiri_agent.api.app import create_app
from keiri_agent.config import Settings
from keiri_agent.services.research import ResearchService


class LiveServer:
    """``app`` served by uvicorn on 127.0.0.1 (a free port) until ``stop``."""

    def __init__(self, app: FastAPI) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


def research_workspace(home: Path, **overrides: Any) -> Settings:
    """Offline settings over ``home`` with the bundled research corpus indexed."""
    settings = Settings(home=home, provider="offline", **overrides)
    ResearchService(settings).index_sample()
    return settings


@dataclass
class SseEvent:
    id: int | None
    event: str | None
    data: dict[str, Any] | None
    comments: list[str] = field(default_factory=list)


def read_sse(lines: Iterator[str], limit: int | None = None) -> Iterator[SseEvent]:
    """Parse an SSE stream line by line; yields each dispatched event (``limit``: stop
    after that many events with data); comment lines (heartbeats) before an event are
    in its ``comments``."""
    current: dict[str, Any] = {"id": None, "event": None, "data": [], "comments": []}
    delivered = 0
    for line in lines:
        if line == "":
            if current["data"]:
                yield SseEvent(
                    current["id"], current["event"], json.loads("\n".join(current["data"])),
                    current["comments"],
                )  # fmt: skip
                delivered += 1
                if limit is not None and delivered >= limit:
                    return
                current = {"id": None, "event": None, "data": [], "comments": []}
            else:  # a heartbeat: its comments go with the next event
                current = {**current, "id": None, "event": None, "data": []}
            continue
        if line.startswith(":"):
            current["comments"].append(line[1:].strip())
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            current["id"] = int(value)
        elif name == "event":
            current["event"] = value
        elif name == "data":
            current["data"].append(value)


def stream_events(
    client: httpx.Client, path: str, *, headers: dict[str, str] | None = None,
    limit: int | None = None,
) -> list[SseEvent]:  # fmt: skip
    """Read the SSE stream at ``path`` (to its end, or ``limit`` events)."""
    with client.stream("GET", path, headers=headers, timeout=60) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_sse(response.iter_lines(), limit))


PUBLIC_ROUTES = frozenset(
    {"/api/health", "/api/auth/sign-in", "/api/auth/oidc/start", "/api/auth/oidc/callback"}
)
"""The routes a request reaches before it is anyone: liveness and signing in."""


def protected_calls(settings: Settings) -> Iterator[tuple[str, str]]:
    """(method, path) of every route under /api (except ``PUBLIC_ROUTES``) and /graphql,
    with dummy path parameters."""
    for context in iter_route_contexts(create_app(settings).routes):
        route, path = context.original_route, context.path or ""
        if not isinstance(route, APIRoute) or path in PUBLIC_ROUTES:
            continue
        if not (path.startswith("/api/") or path == "/graphql"):
            continue
        for method in sorted(route.methods or ()):
            yield method, re.sub(r"\{[^}]+\}", "x1", path)


READY_S = 120.0
"""How long a ``keiri-agent serve`` child may take to answer /api/health."""


def _cli() -> list[str]:
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    if script:
        return [script]
    return [sys.executable, "-c", "from keiri_agent.cli import main; main()"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServeProcess:
    """``keiri-agent serve`` in a child process on a free loopback port (the command a
    user runs), its settings from ``settings_env`` (``KEIRI_AGENT_*`` variables) over a
    clean environment; ``wait_ready()`` polls /api/health, ``stop()`` sends SIGINT."""

    def __init__(self, home: Path, settings_env: dict[str, str], *extra: str) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home / f"serve-{self.port}.log"
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_"))
        }
        env.update(KEIRI_AGENT_HOME=str(home), KEIRI_AGENT_LOG_LEVEL="WARNING", **settings_env)
        command = [*_cli(), "serve", "--port", str(self.port), *extra]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT
            )

    def wait_ready(self) -> ServeProcess:
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"serve exited early:\n{self.log.read_text(errors='replace')}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        pytest.fail(f"serve never became ready:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


PAYMENTS_PLAN = """\
apiVersion: v1
id: team/payments
version: 0.1.0
description: 支払一覧を受け取り、承認者の承認を得てから出力する
graph:
  - id: upload
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: list, type: file, label: 支払一覧, accept: .csv}
    out: {collected_data: files}
  - id: approve
    block: ui.interactive_input
    in:
      mode: confirm
      message: 支払一覧を確認して承認してください
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
  - id: note
    block: text.template
    when: {expr: "${approve.approved} == true"}
    in:
      template: "承認済み"
      values: {}
    out: {text: text}
"""
"""A Plan whose run waits for a file, then for an approval by someone other than its
starter (the people tests)."""
