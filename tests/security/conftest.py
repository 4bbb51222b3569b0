"""The API tests' live server (``tests/api/api_support.py``) for the attacks on the API."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))

from api_support import LiveServer

from keiri_agent.api.app import create_app
from keiri_agent.config import Settings


@pytest.fixture
def serve() -> Iterator[Callable[..., LiveServer]]:
    """``serve(settings)`` → a started ``LiveServer`` on loopback (stopped after)."""
    started: list[LiveServer] = []

    def start(settings: Settings) -> LiveServer:
        server = LiveServer(create_app(settings)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
