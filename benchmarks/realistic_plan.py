"""What the Plan runner costs on a Plan like a user's (issue 31, item 4), through the CLI.

The Plan reads a 10,000-row CSV (CP932, office number formats) and a 10,000-row XLSX,
filters and aggregates both, then makes one 200 ms call per item over 50 items (a
``bench.sleep`` of 200 ms standing in for a scripted model call), and writes the
totals to Excel — everything one node at a time (``default_max_workers: 1``, the loop
``max_concurrency: 1``), so the run's wall time is its blocks' time plus what the
runner adds. ``keiri-agent plan run`` runs it ``--repeats`` times (a new process each
time, the way a user runs it). Prints medians:

- ``plan.command_s`` — the whole command (process start-up included);
- ``plan.run_s`` — the runner's own ``total_duration_ms`` (``plan_complete``);
- ``plan.blocks_s`` — the sum of every block's ``duration_ms`` (``node_complete`` of
  the nodes that run blocks, loop items included);
- ``plan.runner_overhead_ratio`` — (run − blocks) ÷ run: scheduling, logging, schema
  checks and saving the state, as a share of the Plan's wall time. Target ≤ 0.01.

    uv run python benchmarks/realistic_plan.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from openpyxl import Workbook

HERE = Path(__file__).resolve().parent
BLOCKS = HERE / "plan_blocks"
ROWS = 10_000
ITEMS = 50

PLAN = """
apiVersion: v1
id: realistic
version: 1.0.0
policy:
  concurrency: {{default_max_workers: 1}}
vars:
  expenses: null
  sales: null
  items: {items}
graph:
  - id: read_expenses
    block: csv.read
    in: {{file: "${{vars.expenses}}"}}
    out: {{records: expenses}}
  - id: big_expenses
    block: table.filter
    in:
      records: "${{read_expenses.expenses}}"
      conditions: [{{col: 金額, op: ">=", value: 50000}}]
    out: {{records: big}}
  - id: by_department
    block: table.aggregate
    in:
      records: "${{big_expenses.big}}"
      group_by: [部門]
      metrics: {{金額: [sum, count]}}
    out: {{records: totals}}
  - id: read_sales
    block: excel.read_data
    in: {{workbook: "${{vars.sales}}"}}
    out: {{records: sales}}
  - id: tokyo_sales
    block: table.filter
    in:
      records: "${{read_sales.sales}}"
      conditions: [{{col: 地域, op: "==", value: 東京}}]
    out: {{records: tokyo}}
  - id: ask_each
    type: loop
    foreach: {{input: "${{vars.items}}", max_concurrency: 1}}
    body:
      plan:
        graph:
          - id: model
            block: bench.sleep
            in: {{ms: 200, value: "${{item}}"}}
        exports:
          - {{from: model.value, as: answer}}
    out: {{collect: answer}}
  - id: write
    block: excel.write
    in:
      data: "${{by_department.totals}}"
      output_config: {{sheet: 部門別}}
    out: {{workbook: workbook}}
"""


def make_files(folder: Path) -> tuple[Path, Path]:
    departments = ["営業部", "経理部", "総務部", "開発部", "人事部"]
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["日付", "部門", "勘定科目", "金額"])
    for row in range(ROWS):
        amount = 1000 + (row * 7919) % 120_000
        writer.writerow(
            [
                f"2025/{row % 12 + 1}/{row % 28 + 1}",
                departments[row % 5],
                "旅費交通費",
                f"￥{amount:,}",
            ]
        )
    expenses = folder / "経費.csv"
    expenses.write_bytes(text.getvalue().encode("cp932"))
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["地域", "商品", "売上"])
    regions = ["東京", "大阪", "名古屋", "福岡"]
    for row in range(ROWS):
        sheet.append([regions[row % 4], f"商品{row % 50}", 500 + row % 9000])
    sales = folder / "売上.xlsx"
    book.save(sales)
    return expenses, sales


def _cli() -> list[str]:
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "keiri_agent.cli"]


def run_once(home: Path, plan: Path, expenses: Path, sales: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_AGENT_")}
    env.update(
        KEIRI_AGENT_HOME=str(home),
        KEIRI_AGENT_PROVIDER="offline",
        KEIRI_AGENT_BLOCK_SPEC_DIRS=json.dumps([str(BLOCKS)]),
    )
    command = [*_cli(), "plan", "run", str(plan), "--file", f"expenses={expenses}"]
    command += ["--file", f"sales={sales}", "--json"]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=home, capture_output=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"plan run failed ({done.returncode}):\n{done.stderr.decode(errors='replace')}")
    log = max((home / "runs").rglob("*.jsonl"), key=lambda path: path.stat().st_mtime)
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    total = next(line for line in lines if line["event"] == "plan_complete")
    assert total["status"] == "success", total
    blocks = sum(
        line["duration_ms"]
        for line in lines
        if line["event"] == "node_complete" and line.get("node_id") != "ask_each"
    )
    return {
        "command_s": wall,
        "run_s": total["total_duration_ms"] / 1000,
        "blocks_s": blocks / 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="keiri-bench-realistic-"))
    try:
        expenses, sales = make_files(home)
        plan = home / "realistic.yaml"
        plan.write_text(PLAN.format(items=list(range(ITEMS))), encoding="utf-8")
        runs = [run_once(home, plan, expenses, sales) for _ in range(args.repeats)]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    figures = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    for name, value in figures.items():
        print(f"plan.{name} {value:.3f}")
    overheads = [(run["run_s"] - run["blocks_s"]) / run["run_s"] for run in runs]
    print(f"plan.runner_overhead_ratio {statistics.median(overheads):.4f}")


if __name__ == "__main__":
    main()
