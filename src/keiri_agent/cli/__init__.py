"""The ``keiri-agent`` command line (Typer + Rich)."""

from __future__ import annotations

import os

from keiri_agent.cli.collector import collect_less_often, spare_the_teardown


def main() -> None:
    """Entry point: cap BLAS threads before numpy loads, collect garbage less often while
    the command starts and runs, run the Typer app, and spare the interpreter's teardown
    the collections over what the command leaves behind (``collector.py``)."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    collect_less_often()
    from keiri_agent.cli.app import app

    try:
        app()
    finally:
        spare_the_teardown()
