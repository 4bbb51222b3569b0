"""Overhead of running an analysis action in a forked child (``run_isolated``).

Prints ``name: value`` lines. For a sales-like DataFrame of 1M and of 5M rows held in
the parent (so fork copies realistic page tables), it measures the median over
``RUNS`` calls of a trivial function through ``run_isolated`` minus the same call
in-process, and the same for a small groupby action. Runs in well under 2 minutes:

    uv run python benchmarks/analysis_isolation.py
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from keiri_agent.agents.analysis.runtime.isolation import configure_blas_threads

configure_blas_threads()

import pandas as pd  # noqa: E402

from keiri_agent.agents.analysis.runtime.isolation import run_isolated  # noqa: E402
from synthetic import make_sales  # noqa: E402

RUNS = 30
SIZES = (1_000_000, 5_000_000)


def median_ms(call: Callable[[], Any], runs: int = RUNS) -> float:
    """Median wall time of ``call`` in milliseconds (after two warm-up calls)."""
    for _ in range(2):
        call()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def trivial() -> int:
    """The cheapest possible action."""
    return 1


def rss_mb() -> float:
    """This process's resident set size in MiB."""
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


def bench(rows: int) -> None:
    """Print the overhead figures with a frame of ``rows`` rows loaded."""
    started = time.perf_counter()
    frame = make_sales(rows, seed=0, extra_numeric=0)
    built_s = time.perf_counter() - started
    label = f"{rows // 1_000_000}M"
    print(f"frame_{label}_memory_mb: {frame.memory_usage(deep=True).sum() / 2**20:.1f}")
    print(f"frame_{label}_build_s: {built_s:.1f}")
    print(f"parent_rss_{label}_mb: {rss_mb():.1f}")

    def isolated_trivial() -> int:
        return run_isolated(trivial, timeout_s=30, memory_mb=1024)

    overhead = median_ms(isolated_trivial) - median_ms(trivial)
    print(f"isolation_overhead_{label}_ms: {overhead:.1f}")

    def action() -> pd.Series:
        return frame.groupby("地域")["売上"].sum()

    def isolated_action() -> pd.Series:
        return run_isolated(action, timeout_s=30, memory_mb=1024)

    runs = max(5, RUNS // 3)
    plain = median_ms(action, runs)
    isolated = median_ms(isolated_action, runs)
    print(f"groupby_in_process_{label}_ms: {plain:.1f}")
    print(f"groupby_isolated_{label}_ms: {isolated:.1f}")
    print(f"groupby_overhead_{label}_ms: {isolated - plain:.1f}")


def main() -> None:
    """Run the benchmark for every size."""
    print(f"runs: {RUNS}")
    print(f"cpus: {os.cpu_count()}")
    print(f"load_average_1m: {os.getloadavg()[0]:.2f}")  # other processes skew the figures
    empty = median_ms(lambda: run_isolated(trivial, timeout_s=30, memory_mb=1024))
    print(f"isolation_overhead_no_frame_ms: {empty - median_ms(trivial):.1f}")
    for rows in SIZES:
        bench(rows)
    print(f"load_average_1m_end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
