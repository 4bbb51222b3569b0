"""Letting a background run finish before the next AppTest run of a page."""

from __future__ import annotations

import threading
import time

from keiri_agent.services.container import Services


def let_finish(gate: threading.Event, services: Services, run_id: str) -> None:
    """Open ``gate`` and wait until the run ``run_id`` has settled.

    A page test starts its next AppTest run only then: CPython 3.11 keeps one recursion
    counter for every ``ast.parse`` in the process (cpython gh-106905, fixed in 3.12).
    AppTest parses the page scripts on every run while the run's libraries (pydantic,
    LangChain) parse signatures in their own thread, and the two at once fail at random
    with "AST constructor recursion depth mismatch"."""
    gate.set()
    deadline = time.monotonic() + 60
    while not services.runs.require(run_id).settled:
        assert time.monotonic() < deadline, "the run did not settle within 60 s"
        time.sleep(0.05)
