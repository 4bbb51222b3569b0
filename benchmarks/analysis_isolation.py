"""What isolating an analysis action costs: a real groupby, in-process vs through the child.

Prints ``name: value`` lines. For sales-like data of 1M and 5M rows registered the way
the agent registers an upload, it runs a ``groupby_agg`` spec through
``AnalysisActions.execute`` (the entry the agent's ``act`` node uses) with isolation
off (in-process) and on (the reused per-dataset worker), interleaved, median of
``RUNS``; ``groupby_overhead_{rows}_ms`` is the difference (target ≤ 50 ms at 1M rows).
For comparison, the same action in a fresh forked child per action (``run_isolated``,
what every action paid before the worker) and the floor of a fork that runs nothing.

Where the time goes (one probe each): minor page faults in the child during the action
(copy-on-write copies of heap pages the action writes; /proc/self/stat minflt), the
action's own time inside the child, and the pickled result's size.

    uv run python benchmarks/analysis_isolation.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keiri_agent.agents.analysis.runtime.isolation import configure_blas_threads

configure_blas_threads()

import pandas as pd  # noqa: E402

from keiri_agent.agents.analysis.datasets import DatasetRegistry  # noqa: E402
from keiri_agent.agents.analysis.ops.executor import run_analysis  # noqa: E402
from keiri_agent.agents.analysis.ops.specs import parse_analysis_spec  # noqa: E402
from keiri_agent.agents.analysis.runtime.actions import AnalysisActions  # noqa: E402
from keiri_agent.agents.analysis.runtime.isolation import (  # noqa: E402
    IsolatedWorker,
    run_isolated,
)
from keiri_agent.config import Settings  # noqa: E402
from synthetic import make_sales  # noqa: E402

LIMITS: dict[str, Any] = {"timeout_s": 30.0, "memory_mb": 1024}
GROUPBY = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["地域"],
    "metrics": {"売上": ["sum", "mean", "count"], "数量": ["sum"]},
    "sort": {"by": "売上_sum", "ascending": False},
    "top_k": 5,
}


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def interleaved_ms(calls: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Median milliseconds of each call, alternating them so load changes hit all alike."""
    for call in calls.values():
        call()  # warm-up (the worker's first action pays its page faults here)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(runs):
        for name, call in calls.items():
            times[name].append(timed(call))
    return {name: statistics.median(values) for name, values in times.items()}


def _minor_faults() -> int:
    with open("/proc/self/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[7])


def probe(spec: Any, frame: pd.DataFrame) -> tuple[float, int, int]:
    """The action's time (ms), its minor page faults and its pickled result's size."""
    faults = _minor_faults()
    started = time.perf_counter()
    result = run_analysis(spec, frame)
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, _minor_faults() - faults, len(pickle.dumps(result))


def nothing() -> None:
    """An action that does no work (the floor of a fork)."""


def bench(rows: int, runs: int, home: Path) -> None:
    registry = DatasetRegistry(max_bytes=2**40)
    dataset_id = registry.add_frame(make_sales(rows, seed=0), "sales.csv")
    frame = registry.get(dataset_id)
    label = f"{rows // 1_000_000}M"
    print(f"frame_{label}_memory_mb: {frame.memory_usage(deep=True).sum() / 2**20:.0f}")
    in_process = AnalysisActions(registry, Settings(home=home, analysis_isolation=False))
    isolated = AnalysisActions(registry, Settings(home=home, analysis_isolation=True, **LIMITS))
    spec = parse_analysis_spec(GROUPBY)
    try:
        medians = interleaved_ms(
            {
                "in_process": lambda: in_process.execute(GROUPBY, dataset_id),
                "isolated": lambda: isolated.execute(GROUPBY, dataset_id),
                "fresh_child": lambda: run_isolated(run_analysis, spec, frame, **LIMITS),
                "fork_floor": lambda: run_isolated(nothing, **LIMITS),
            },
            runs,
        )
    finally:
        isolated.close()
    base = medians["in_process"]
    print(f"groupby_in_process_{label}_ms: {base:.1f}")
    print(f"groupby_isolated_{label}_ms: {medians['isolated']:.1f}")
    print(f"groupby_overhead_{label}_ms: {medians['isolated'] - base:.1f}")
    print(f"groupby_isolated_ratio_{label}: {medians['isolated'] / base:.2f}")
    print(f"groupby_fresh_child_{label}_ms: {medians['fresh_child']:.1f}")
    print(f"groupby_fresh_child_overhead_{label}_ms: {medians['fresh_child'] - base:.1f}")
    print(f"fork_floor_{label}_ms: {medians['fork_floor']:.1f}")

    here = probe(spec, frame)
    fresh = run_isolated(probe, spec, frame, **LIMITS)
    worker = IsolatedWorker(frame)
    try:
        first = worker.call(probe, spec, **LIMITS)
        reused = worker.call(probe, spec, **LIMITS)
    finally:
        worker.close()
    for name, (compute_ms, faults, _size) in (
        ("in_process", here),
        ("fresh_child", fresh),
        ("worker_first", first),
        ("worker_reused", reused),
    ):
        print(f"where_{label}.{name}.compute_ms: {compute_ms:.1f}")
        print(f"where_{label}.{name}.minor_faults: {faults}")
    print(f"where_{label}.result_pickle_bytes: {here[2]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed repeats per variant")
    parser.add_argument("--rows", default="1000000,5000000", help="comma-separated row counts")
    args = parser.parse_args()
    print(f"runs: {args.runs}")
    print(f"cpus: {os.cpu_count()}")
    print(f"load_average_1m: {os.getloadavg()[0]:.2f}")  # other processes skew the figures
    home = Path(os.environ.get("TMPDIR", "/tmp")) / "keiri-bench-isolation"
    for rows in (int(value) for value in args.rows.split(",")):
        bench(rows, args.runs, home)
    print(f"load_average_1m_end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
