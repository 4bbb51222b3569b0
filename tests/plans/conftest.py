"""Fixtures shared by the Plan tests (helpers live in ``runner_support``)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from runner_support import recorder


@pytest.fixture(autouse=True)
def _clean_recorder() -> None:
    """Every test starts with the test blocks' call counts and failures reset."""
    recorder().reset()


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """The runs folder of a test's runner."""
    return tmp_path / "runs"


@pytest.fixture
def thread_starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads started from now on in the test (clear it to start over)."""
    started: list[str] = []
    original = threading.Thread.start

    def counted(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", counted)
    return started
