"""Fixtures of the API tests: a research workspace (the live server: ``serve`` in
``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_support import research_workspace

from keiri_agent.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return research_workspace(tmp_path)
