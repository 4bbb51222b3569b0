"""Generation metrics: one masked JSONL line per generation, a summary that never raises."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from keiri_agent.plans.design.metrics import (
    METRICS_FILE,
    generation_record,
    record_generation,
    summarize_generations,
)
from keiri_agent.plans.design.models import DesignAttempt, GeneratedPlan
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.issues import IssueCode, ValidationReport, make_issue

PLAN = """
apiVersion: v1
id: demo
version: 0.1.0
graph:
  - id: read
    block: excel.read_data@^1
    in: {workbook: null}
  - id: each
    type: loop
    foreach: {input: [1], itemVar: n}
    body: {plan: {graph: [{id: t, block: text.template, in: {template: x}}]}}
"""
SECRET = "sk-" + "a" * 30


def _result() -> GeneratedPlan:
    report = ValidationReport(
        (
            make_issue(IssueCode.UNUSED_NODE, "x", severity="warning"),
            make_issue(IssueCode.UNKNOWN_INPUT, "y"),
            make_issue(IssueCode.UNKNOWN_INPUT, "z"),
        )
    )
    return GeneratedPlan(
        plan=load_plan_text(PLAN),
        yaml_text=PLAN,
        reasoning="structured: two stages",
        apply_mode="hint",
        report=report,
        attempts=[
            DesignAttempt(1, "a", error_codes={"UNKNOWN_BLOCK": 1}),
            DesignAttempt(2, "b", error_codes={"UNKNOWN_INPUT": 2}),
        ],
        templates=["bank_read"],
    )


def test_record_has_counts_and_no_text(tmp_path: Path) -> None:
    instruction = f"請求書と入金を照合 key={SECRET}"
    record = generation_record(
        _result(),
        instruction=instruction,
        documents=["社内規程の本文"],
        total_seconds=1.23456,
        dry_run_seconds=0.2,
        tokens={"prompt": 900, "completion": 120},
        plan_id=f"demo-{SECRET}",
        now=datetime(2025, 1, 31, 9, 0, tzinfo=UTC),
    )
    path = record_generation(tmp_path / "logs", record)
    assert path == tmp_path / "logs" / METRICS_FILE
    line = path.read_text(encoding="utf-8")
    assert "照合" not in line and "社内規程" not in line and SECRET not in line
    saved = json.loads(line)
    assert saved["timestamp"] == "2025-01-31T09:00:00+00:00"
    assert saved["plan_id"] == "demo-***"
    assert saved["mode"] == "structured"
    assert (saved["attempts"], saved["repair_iterations"], saved["ok"]) == (2, 1, False)
    assert saved["attempt_issues"][1] == {"number": 2, "errors": {"UNKNOWN_INPUT": 2}}
    assert saved["issues"] == {"errors": {"UNKNOWN_INPUT": 2}, "warnings": {"UNUSED_NODE": 1}}
    assert saved["blocks"] == ["excel.read_data", "text.template"]
    assert saved["tokens"] == {"prompt": 900, "completion": 120}
    expected = hashlib.sha256(instruction.encode()).hexdigest()[:16]
    assert saved["instruction"] == {"chars": len(instruction), "sha256": expected}
    assert saved["documents"] == [
        {"chars": 7, "sha256": hashlib.sha256("社内規程の本文".encode()).hexdigest()[:16]}
    ]
    assert saved["total_seconds"] == 1.235


APPEND_MANY = """
import sys
from pathlib import Path
from keiri_agent.plans.design.metrics import record_generation
worker = int(sys.argv[2])
for index in range(50):
    record_generation(Path(sys.argv[1]), {"worker": worker, "index": index, "pad": "x" * 5000})
"""


def test_two_processes_never_interleave_lines(tmp_path: Path) -> None:
    # two fresh interpreters (not multiprocessing's spawn, which re-runs the parent's
    # __main__: after a Streamlit AppTest that can be the app itself)
    logs = tmp_path / "logs"
    workers = [
        subprocess.Popen([sys.executable, "-c", APPEND_MANY, str(logs), str(n)]) for n in (1, 2)
    ]
    # each child imports the package first: slow on a busy machine
    assert [process.wait(timeout=300) for process in workers] == [0, 0]
    lines = (logs / METRICS_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 100
    assert sorted((r["worker"], r["index"]) for r in map(json.loads, lines)) == sorted(
        (w, i) for w in (1, 2) for i in range(50)
    )


def test_summary_over_the_last_records_skips_damage(tmp_path: Path) -> None:
    path = tmp_path / METRICS_FILE
    rows = [
        {"ok": True, "total_seconds": 10, "dry_run_seconds": 1, "blocks": ["a", "b"], "mode": "x"},
        {"ok": False, "total_seconds": 2, "blocks": ["a"], "mode": "x"},
        {"ok": True, "total_seconds": 4, "dry_run_seconds": 3, "blocks": ["a", "c"], "mode": "y"},
        {"ok": True, "total_seconds": 8, "blocks": ["b"], "mode": "y"},
        {"ok": False, "total_seconds": 6, "blocks": [], "mode": "y"},
    ]
    text = "\n".join(json.dumps(row) for row in rows[:2])
    text += "\n{broken\n[1, 2]\n" + "\n".join(json.dumps(row) for row in rows[2:]) + "\n"
    path.write_text(text, encoding="utf-8")
    summary = summarize_generations(path)
    assert summary["count"] == 5
    assert summary["skipped"] == 2
    assert summary["failed"] == 2
    assert summary["error_rate"] == 0.4
    assert summary["duration_median"] == 6  # 2 4 6 8 10
    assert summary["duration_p90"] == 10  # nearest rank: ceil(4.5) = 5th
    assert summary["dry_run_median"] == 2
    assert summary["blocks"] == {"a": 3, "b": 2, "c": 1}
    last = summarize_generations(path, last=2)
    assert (last["count"], last["failed"], last["duration_median"]) == (2, 1, 7)


def test_summary_of_a_missing_file(tmp_path: Path) -> None:
    summary = summarize_generations(tmp_path / "nope.jsonl")
    assert summary["count"] == 0
    assert summary["error_rate"] is None
    assert summary["duration_p90"] is None
