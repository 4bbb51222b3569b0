"""Peak memory of loading a CSV: our loader ÷ ``pandas.read_csv`` of the same file.

Writes a synthetic sales CSV (``--rows`` rows, 16 columns: ids, dates, Japanese
text categories, integers and floats) once in UTF-8 and once in CP932 (Shift_JIS as
Excel writes it), then loads each file ``--repeats`` times in a fresh Python process
per load, alternating:

- ``ours``: ``DatasetRegistry.load_path`` (what ``keiri-agent analyze`` and the app do:
  encoding detection, header search, parsing, cleaning, total-row detection);
- ``pandas``: ``pandas.read_csv(path, encoding=...)`` with the encoding given.

Each child reports its peak resident set size (``ru_maxrss``) minus its resident set
after imports (so importing our package is not counted as loading), and the wall time
of the load. Printed: medians per file and the ratios ours ÷ pandas (target ≤ 1.2 for
memory):

    uv run python benchmarks/analysis_loading.py [--rows 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from synthetic import make_sales

CHILD = r"""
import json, resource, sys, time
import psutil
mode, path, encoding = sys.argv[1:4]
if mode == "ours":
    from keiri_agent.agents.analysis.datasets.registry import DatasetRegistry
    registry = DatasetRegistry(max_bytes=2**40)
else:
    import pandas as pd
before = psutil.Process().memory_info().rss
started = time.perf_counter()
if mode == "ours":
    frame = registry.get(registry.load_path(path))
else:
    frame = pd.read_csv(path, encoding=encoding)
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"peak_mb": (peak - before) / 2**20, "seconds": elapsed,
                  "rows": len(frame), "columns": len(frame.columns),
                  "frame_mb": float(frame.memory_usage(deep=True).sum()) / 2**20}))
"""


def run_child(mode: str, path: Path, encoding: str) -> dict[str, float]:
    """One load in a fresh interpreter; its JSON line."""
    here = Path(__file__).resolve().parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path), encoding],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Write the files, load each through both paths, print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"rows: {args.rows}")
    print(f"repeats: {args.repeats}")
    print(f"cpus: {os.cpu_count()}")
    print(f"load_average_1m: {os.getloadavg()[0]:.2f}")
    frame = make_sales(args.rows, seed=0, extra_numeric=8)
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for label, encoding in (("utf8", "utf-8"), ("cp932", "cp932")):
            path = Path(folder) / f"sales_{label}.csv"
            frame.to_csv(path, index=False, encoding=encoding)
            files[label] = (path, encoding)
            print(f"{label}.file_mb: {path.stat().st_size / 2**20:.1f}")
        print(f"columns: {len(frame.columns)}")
        del frame
        for label, (path, encoding) in files.items():
            samples: dict[str, list[dict[str, float]]] = {"ours": [], "pandas": []}
            for _ in range(args.repeats):
                for mode in ("pandas", "ours"):
                    samples[mode].append(run_child(mode, path, encoding))
            medians = {
                mode: {
                    key: statistics.median(sample[key] for sample in runs)
                    for key in ("peak_mb", "seconds", "frame_mb")
                }
                for mode, runs in samples.items()
            }
            for mode, figures in medians.items():
                print(f"{label}.{mode}.peak_mb: {figures['peak_mb']:.1f}")
                print(f"{label}.{mode}.frame_mb: {figures['frame_mb']:.1f}")
                print(f"{label}.{mode}.seconds: {figures['seconds']:.2f}")
            ratio = medians["ours"]["peak_mb"] / medians["pandas"]["peak_mb"]
            print(f"{label}.peak_ratio: {ratio:.2f}")
            speed = medians["ours"]["seconds"] / medians["pandas"]["seconds"]
            print(f"{label}.time_ratio: {speed:.2f}")
    print(f"load_average_1m_end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
