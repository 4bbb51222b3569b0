"""The cyclic garbage collector's rhythm in a command's process.

Start-up creates ~1,700 modules' worth of long-lived objects (classes, Pydantic and
LangGraph schemas); with CPython's default generation-0 threshold (700 allocations) the
collector walks them again hundreds of times and finds nothing (5–15 % of an offline
``analyze``). A command therefore collects less often; cycles are still collected. A
long-running server (``serve``) goes back to the interpreter's default rhythm.

When the command has ended, the interpreter's teardown walks every tracked object again in
several full collections (≈ 0.3–0.5 s after an ``analyze``, a sixth of its wall time).
By then the command's work is done and its files are closed, so :func:`spare_the_teardown`
freezes what exists: atexit handlers still run, streams are still flushed, and what
reference counts free is still freed; the teardown only no longer walks the frozen objects
(a cycle among them is left to the operating system with the rest of the process).

Kept on measurement (issue 31 asked to remove interpreter tricks that users cannot
see): ``benchmarks/cli_latency.py --repeats 5`` with the freeze, ``analyze`` 0.89 s
(2.43× ``import pandas``); without it 1.21 s (3.26×, over the 3× budget) — a quarter
of the command's wall time.
"""

from __future__ import annotations

import gc

START_UP_GC_THRESHOLD = 50_000
"""Generation-0 threshold while a command runs."""

DEFAULT_GC_THRESHOLDS = gc.get_threshold()
"""The interpreter's thresholds, restored by long-running commands (``serve``)."""


def collect_less_often() -> None:
    """The command's rhythm (called by the entry point before the heavy imports)."""
    gc.set_threshold(START_UP_GC_THRESHOLD, *DEFAULT_GC_THRESHOLDS[1:])


def collect_as_usual() -> None:
    """The interpreter's default rhythm (a server lives long)."""
    gc.set_threshold(*DEFAULT_GC_THRESHOLDS)


def spare_the_teardown() -> None:
    """Move every tracked object out of the collector's reach (the command has ended)."""
    gc.freeze()
