"""The ``keiri-agent`` command line (Typer + Rich)."""

from __future__ import annotations

import gc
import os

START_UP_GC_THRESHOLD = 50_000
"""Generation-0 threshold of the cyclic garbage collector in a command's process.

Start-up creates ~1,700 modules' worth of long-lived objects (classes, Pydantic and
LangGraph schemas); with CPython's default threshold (700 allocations) the collector
walks them again hundreds of times and finds nothing (5–15 % of an offline
``analyze``). Cycles are still collected, only less often."""

DEFAULT_GC_THRESHOLDS = gc.get_threshold()
"""The interpreter's thresholds, restored by long-running commands (``serve``)."""


def main() -> None:
    """Entry point: cap BLAS threads before numpy loads, then run the Typer app."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    gc.set_threshold(START_UP_GC_THRESHOLD, *DEFAULT_GC_THRESHOLDS[1:])
    from keiri_agent.cli.app import app

    app()
