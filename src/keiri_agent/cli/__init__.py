"""The ``keiri-agent`` command line (Typer + Rich)."""

from __future__ import annotations

import os


def main() -> None:
    """Entry point: cap BLAS threads before numpy loads, then run the Typer app."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    from keiri_agent.cli.app import app

    app()
