"""Fixtures of the web UI tests: the API test helpers (``tests/api``) and the scripted
research model (``tests/agents/research``) are importable from here."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS / "api", TESTS / "agents" / "research", Path(__file__).parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
