"""Fixtures of the API tests: a research workspace and a live server over it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from api_support import LiveServer, research_workspace

from keiri_agent.api.app import create_app
from keiri_agent.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return research_workspace(tmp_path)


@pytest.fixture
def serve() -> Iterator[Callable[..., LiveServer]]:
    """``serve(settings, model_factory=None)`` → a started ``LiveServer`` (stopped after)."""
    started: list[LiveServer] = []

    def start(settings: Settings, **kwargs: object) -> LiveServer:
        server = LiveServer(create_app(settings, **kwargs)).start()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
