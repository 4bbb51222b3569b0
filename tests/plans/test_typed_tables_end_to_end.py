"""A CP932 CSV as Japanese Excel saves it, read by csv.read, filtered on its amounts and
summed per department, through PlanEngine: the amounts written as text (``"50,000"``,
``"¥120,000"``) arrive as numbers, so the filter and the sum work (issue 27 item 1)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.issues import IssueCode

# (部門, 金額 as written in the file, the amount it means)
ROWS = [
    ("営業", "50,000", 50_000),
    ("営業", "¥120,000", 120_000),
    ("総務", "80,000", 80_000),
    ("営業", "75,500", 75_500),
    ("総務", "△3,000", -3_000),
    ("経理", "50,001", 50_001),
    ("経理", "1,234円", 1_234),
]
PLAN = """\
apiVersion: v1
id: sales_over_limit
title: 高額売上の部門別合計
version: 1.0.0
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: 売上の CSV をアップロードしてください
      requirements:
        - {id: sales, type: file, label: 売上（CSV）, accept: .csv}
    out: {collected_data: collected}
  - id: read
    title: 売上の読み込み
    block: csv.read
    in: {file: "${collect.collected.sales}"READ_OPTIONS}
  - id: large
    title: 5万円を超える売上
    block: table.filter
    in:
      records: ${read.records}
      conditions: [{col: 金額, op: ">", value: 50000}]
  - id: by_dept
    title: 部門別合計
    block: table.aggregate
    in: {records: "${large.records}", group_by: [部門], metrics: {金額: [sum]}}
exports:
  - {from: by_dept.records, as: totals}
"""


def cp932_csv() -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(["部門", "金額"])
    writer.writerows((department, written) for department, written, _ in ROWS)
    # Japanese Excel writes the half-width yen sign as the byte 0x5C (a backslash in CP932)
    return buffer.getvalue().replace("¥", "\\").encode("cp932")


def expected_totals() -> list[dict[str, Any]]:
    totals: dict[str, int] = {}
    for department, _, amount in ROWS:
        if amount > 50_000:
            totals[department] = totals.get(department, 0) + amount
    return [{"部門": name, "金額_sum": total} for name, total in totals.items()]


def test_a_cp932_csv_is_filtered_and_summed_on_its_amounts(keiri_home: Path) -> None:
    data = cp932_csv()
    assert b'"50,000"' in data and b'"\\120,000"' in data  # quoted, as Excel writes them
    assert expected_totals() == [
        {"部門": "営業", "金額_sum": 195_500},
        {"部門": "総務", "金額_sum": 80_000},
        {"部門": "経理", "金額_sum": 50_001},
    ]
    engine = PlanEngine(Settings(provider="offline"), env={})
    plan = load_plan_text(PLAN.replace("READ_OPTIONS", ""))
    assert engine.dry_run(plan).ok

    paused = engine.run(plan)
    assert paused.status == "paused", paused.errors
    answers = {"collect": {"sales": {"name": "売上.csv", "data": cp932_csv()}}}
    result = engine.resume(paused.run_id, answers=answers)

    assert result.status == "success", result.errors
    assert result.outputs["read"]["summary"]["encoding"] == "cp932"
    assert [row["金額"] for row in result.outputs["read"]["records"]] == [r[2] for r in ROWS]
    assert result.outputs["by_dept"]["records"] == expected_totals()


def test_reading_the_amounts_as_text_fails_the_dry_run_not_the_run(keiri_home: Path) -> None:
    engine = PlanEngine(Settings(provider="offline"), env={})
    plan = load_plan_text(PLAN.replace("READ_OPTIONS", ", types: {金額: text}"))
    report = engine.dry_run(plan)
    # reported once, at the filter: a failed node passes no schema on to the aggregate
    assert report.codes() == [IssueCode.COMPARE_TYPE_MISMATCH]
    assert [record.node_id for record in report.failed] == ["large"]
