"""Each analysis op and plot kind on synthetic sales data of 1M and 5M rows.

Prints ``name: value`` lines:

- ``{rows}.{op}.ratio`` — our ``run_analysis`` time in-process ÷ hand-written pandas
  doing the same work, measured in the same run (median of interleaved repeats).
  Targets: ≤ 1.2 for groupby_agg and correlation_matrix.
- ``{rows}.{op}.isolated_ratio`` — the whole action as a user gets it
  (``AnalysisActions.execute``: the per-dataset worker child with the product's limits,
  30 s and 1024 MiB beyond the dataset) ÷ the same pandas baseline, median of the
  same interleaved repeats. Target: ≤ 1.3 for groupby_agg at 1M and 5M rows.
- ``{rows}.{op}.isolated_s`` / ``.peak_mb`` — that median, and the action's peak
  memory growth in a forked child; ``.within_limits`` says whether both held.
- ``{rows}.plot.{kind}.isolated_s`` / ``.peak_mb`` / ``.within_limits`` likewise.

Every size runs twice: on the data as generated, and with 1 % of the cells of every
column but the id missing (``{rows}_nan1pct``).

    uv run python benchmarks/analysis_ops.py [--rows 1000000,5000000] [--repeats 5] \
        [--ops groupby_agg]
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keiri_agent.agents.analysis.runtime.isolation import configure_blas_threads

configure_blas_threads()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import psutil  # noqa: E402

from keiri_agent.agents.analysis.datasets import DatasetRegistry  # noqa: E402
from keiri_agent.agents.analysis.ops.executor import run_analysis  # noqa: E402
from keiri_agent.agents.analysis.ops.plots import run_plot  # noqa: E402
from keiri_agent.agents.analysis.ops.specs import parse_analysis_spec, parse_plot_spec  # noqa: E402
from keiri_agent.agents.analysis.runtime.actions import AnalysisActions  # noqa: E402
from keiri_agent.config import Settings  # noqa: E402
from synthetic import make_sales  # noqa: E402

TIME_LIMIT_S = 30.0
MEMORY_LIMIT_MB = 1024


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c].dtype)]


# --- hand-written pandas doing the same work as each op -------------------------------


def pandas_overview(df: pd.DataFrame) -> Any:
    return (df.dtypes, df.count(), df.nunique(), df.memory_usage(deep=True).sum(), df.head(5))


def pandas_missingness(df: pd.DataFrame) -> Any:
    # one mask, and rows with a gap counted only when there is a gap (as the op does)
    mask = df.isna()
    missing = mask.sum().sort_values(ascending=False)
    rows_with_gaps = mask.any(axis=1).sum() if missing.iloc[0] else 0
    return missing, missing / len(df), rows_with_gaps


def pandas_column_summary(df: pd.DataFrame) -> Any:
    numeric = numeric_columns(df)
    others = [c for c in df.columns if c not in numeric]
    return df[numeric].describe(), [df[c].value_counts() for c in others]


def pandas_duplicates(df: pd.DataFrame) -> Any:
    return df[df.duplicated(keep=False)].value_counts(dropna=False)


def pandas_groupby(df: pd.DataFrame) -> Any:
    result = (
        df.groupby("地域", sort=False, dropna=False)  # the op keeps a missing-region group
        .agg(
            売上_sum=("売上", "sum"),
            売上_mean=("売上", "mean"),
            数量_sum=("数量", "sum"),
            売上_count=("売上", "count"),
        )
        .reset_index()
    )
    return result.sort_values("売上_sum", ascending=False).head(5)


def pandas_share(df: pd.DataFrame) -> Any:
    grouped = df.groupby("商品カテゴリ", sort=False, dropna=False)  # as the op: keeps missing
    totals = grouped["売上"].sum().sort_values(ascending=False)
    share = totals / totals.sum()
    return share, share.cumsum()


def pandas_correlation(df: pd.DataFrame) -> Any:
    numeric = df[numeric_columns(df)]
    top = numeric.var().nlargest(10).index
    return numeric[top].corr()


OPS: dict[str, tuple[dict[str, Any], Callable[[pd.DataFrame], Any]]] = {
    "dataset_overview": ({"op": "dataset_overview"}, pandas_overview),
    "missingness": ({"op": "missingness"}, pandas_missingness),
    "column_summary": ({"op": "column_summary"}, pandas_column_summary),
    "duplicate_check": ({"op": "duplicate_check"}, pandas_duplicates),
    "groupby_agg": (
        {
            "op": "groupby_agg",
            "group_cols": ["地域"],
            "metrics": {"売上": ["sum", "mean", "count"], "数量": ["sum"]},
            "sort": {"by": "売上_sum", "ascending": False},
            "top_k": 5,
        },
        pandas_groupby,
    ),
    "share_ratio": (
        {"op": "share_ratio", "group_col": "商品カテゴリ", "value_col": "売上"},
        pandas_share,
    ),
    "correlation_matrix": ({"op": "correlation_matrix"}, pandas_correlation),
}
PLOTS: dict[str, dict[str, Any]] = {
    "hist": {"kind": "hist", "x": "売上"},
    "scatter": {"kind": "scatter", "x": "数量", "y": "売上"},
    "line": {"kind": "line", "x": "日付", "y": "売上", "freq": "M"},
    "bar": {"kind": "bar", "x": "地域", "y": "売上"},
    "box": {"kind": "box", "x": "地域", "y": "売上"},
}


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def interleaved_medians(calls: list[Callable[[], Any]], repeats: int) -> list[float]:
    """Median seconds of each call, alternating them so load changes hit all alike.

    Fast ops get more repeats (about a second of measuring each, at most 30): on a
    shared machine a median of a few 50 ms calls is mostly noise.
    """
    first = max(max(timed(call) for call in calls), 1e-6)  # also the warm-up
    rounds = min(30, max(repeats, int(1.0 / first)))
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(rounds):
        for index, call in enumerate(calls):
            times[index].append(timed(call))
    return [statistics.median(values) for values in times]


def peak_growth_mb(call: Callable[[], Any]) -> float:
    """Peak resident memory a call adds, measured in a forked child (like an action)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_end)
        start = psutil.Process().memory_info().rss
        call()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        os.write(write_end, pickle.dumps(max(0, peak - start) / 1_048_576))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        data = reader.read()
    os.waitpid(pid, 0)
    return float(pickle.loads(data))


def report(prefix: str, isolated_s: float, peak_mb: float) -> None:
    ok = isolated_s <= TIME_LIMIT_S and peak_mb <= MEMORY_LIMIT_MB
    print(f"{prefix}.isolated_s: {isolated_s:.3f}")
    print(f"{prefix}.peak_mb: {peak_mb:.0f}")
    print(f"{prefix}.within_limits: {'yes' if ok else 'NO'}")


def with_gaps(frame: pd.DataFrame, rate: float = 0.01, seed: int = 11) -> pd.DataFrame:
    """``frame`` with ``rate`` of the cells of every column but the id missing."""
    rng = np.random.default_rng(seed)
    gappy = frame.copy()
    for column in gappy.columns[1:]:
        mask = rng.random(len(gappy)) < rate
        gappy[column] = gappy[column].mask(mask)
    return gappy


def bench(frame: pd.DataFrame, label: str, repeats: int, ops: set[str], home: Path) -> None:
    registry = DatasetRegistry(max_bytes=2**40)
    dataset_id = registry.add_frame(frame, "sales.csv")
    frame = registry.get(dataset_id)
    settings = Settings(
        home=home, analysis_timeout_s=TIME_LIMIT_S, analysis_memory_mb=MEMORY_LIMIT_MB
    )
    actions = AnalysisActions(registry, settings)
    print(f"{label}.dataset_mb: {frame.memory_usage(deep=True).sum() / 1_048_576:.0f}")
    try:
        for name, (raw, baseline) in OPS.items():
            if ops and name not in ops:
                continue
            spec = parse_analysis_spec(raw)
            ours_s, isolated_s, base_s = interleaved_medians(
                [
                    lambda spec=spec: run_analysis(spec, frame),
                    lambda raw=raw: actions.execute({"type": "analysis", **raw}, dataset_id),
                    lambda baseline=baseline: baseline(frame),
                ],
                repeats,
            )
            print(f"{label}.{name}.ours_s: {ours_s:.3f}")
            print(f"{label}.{name}.isolated_median_s: {isolated_s:.3f}")
            print(f"{label}.{name}.pandas_s: {base_s:.3f}")
            print(f"{label}.{name}.ratio: {ours_s / base_s:.2f}")
            print(f"{label}.{name}.isolated_ratio: {isolated_s / base_s:.2f}")
            peak = peak_growth_mb(lambda spec=spec: run_analysis(spec, frame))
            report(f"{label}.{name}", isolated_s, peak)
        for kind, raw in PLOTS.items():
            if ops and "plot" not in ops and f"plot.{kind}" not in ops:
                continue
            spec = parse_plot_spec(raw)
            isolated = timed(lambda raw=raw: actions.execute({"type": "plot", **raw}, dataset_id))
            report(
                f"{label}.plot.{kind}",
                isolated,
                peak_growth_mb(lambda spec=spec: run_plot(spec, frame)),
            )
    finally:
        actions.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,5000000", help="comma-separated row counts")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per op")
    parser.add_argument("--ops", default="", help="comma-separated ops (and 'plot'); all if empty")
    args = parser.parse_args()
    ops = {value for value in args.ops.split(",") if value}
    home = Path(os.environ.get("TMPDIR", "/tmp")) / "keiri-bench-ops"
    print(f"load_average_1m: {os.getloadavg()[0]:.2f}")
    for rows in (int(value) for value in args.rows.split(",")):
        frame = make_sales(rows)
        label = f"{rows // 1_000_000}M" if rows >= 1_000_000 else str(rows)
        bench(frame, label, args.repeats, ops, home)
        bench(with_gaps(frame), f"{label}_nan1pct", args.repeats, ops, home)
        del frame
    print(f"load_average_1m_end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
