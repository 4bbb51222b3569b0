"""The sample Plan 請求書と入金の照合 (no LLM) on the bundled data, through PlanEngine.

The expected rows are worked out by hand from the data the build script writes
(scripts/build_reconciliation_samples.py): tolerance 880 円, window 7 days around the
due date, transfer names compared after NFKC (half-width kana → full-width).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import io
from pathlib import Path
from typing import Any

from openpyxl import load_workbook

from keiri_agent.config import Settings
from keiri_agent.plans.engine import PlanEngine

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "src" / "keiri_agent" / "samples" / "plans" / "invoice_payment_matching.yaml"
DATA = ROOT / "src" / "keiri_agent" / "samples" / "reconciliation"


def day(month: int, date: int) -> dt.datetime:
    return dt.datetime(2025, month, date)


def sheet_rows(workbook: bytes, name: str) -> list[dict[str, Any]]:
    rows = list(load_workbook(io.BytesIO(workbook))[name].values)
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def answers() -> dict[str, Any]:
    return {
        "collect_inputs": {
            "invoices": {"name": "請求一覧.csv", "data": (DATA / "請求一覧.csv").read_bytes()},
            "payments": {"name": "入金明細.xlsx", "data": (DATA / "入金明細.xlsx").read_bytes()},
        }
    }


def test_the_sample_plan_validates_and_dry_runs_clean(keiri_home: Path) -> None:
    engine = PlanEngine(Settings(provider="offline"), env={})
    plan = engine.load(PLAN)
    assert engine.validate(plan).issues == ()
    report = engine.dry_run(plan)
    assert report.ok, report.problems


def test_the_sample_data_is_what_the_build_script_writes() -> None:
    spec = importlib.util.spec_from_file_location(
        "build_reconciliation_samples", ROOT / "scripts" / "build_reconciliation_samples.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert (DATA / "請求一覧.csv").read_bytes() == script.invoice_csv()
    assert (DATA / "入金明細.xlsx").read_bytes() == script.payments_workbook()
    assert (DATA / "請求一覧.csv").read_bytes().decode("cp932").startswith("請求番号,")


def test_the_sample_plan_reconciles_end_to_end(keiri_home: Path) -> None:
    engine = PlanEngine(Settings(provider="offline"), env={})
    plan = engine.load(PLAN)
    paused = engine.run(plan)
    assert paused.status == "paused", paused.errors
    assert [w["node_id"] for w in paused.waiting] == ["collect_inputs"]

    result = engine.resume(paused.run_id, answers=answers())
    assert result.status == "success", result.errors
    # CP932 text "110,000": csv.read reads the column as numbers
    assert result.outputs["read_invoices"]["invoices"][0]["請求額"] == 110000
    assert result.outputs["reconcile"]["summary"] == {
        "left_rows": 6,
        "right_rows": 6,
        "matched": 4,
        "differences": 1,
        "unmatched_left": 1,
        "unmatched_right": 1,
    }
    workbook = result.outputs["write_matched"]["workbook"]
    assert load_workbook(io.BytesIO(workbook)).sheetnames == [
        "差異",
        "未入金",
        "不明入金",
        "消込済",
    ]

    # 消込済: (invoice, paid on, amount paid, amount difference, days after the due date)
    matched = [
        (r["請求番号"], r["右_入金日"], r["右_入金額"], r["金額差"], r["日付差_日"])
        for r in sheet_rows(workbook, "消込済")
    ]
    assert matched == [
        ("INV-2025-041", day(5, 30), 110000, 0, -1),  # due 5/31
        ("INV-2025-042", day(6, 2), 32560, 33000 - 32560, 2),  # fee deducted, within 880
        ("INV-2025-044", day(6, 9), 88000, 0, -1),  # " ﾕ)ｻｸﾗｾﾂｹｲ " = ユ)サクラセツケイ
        ("INV-2025-046", day(6, 27), 22000, 0, -3),  # the same payer's second invoice
    ]
    (difference,) = sheet_rows(workbook, "差異")
    assert difference["請求番号"] == "INV-2025-043"
    assert difference["請求額"] == 550000 and difference["右_入金額"] == 300000
    assert difference["金額差"] == 250000
    assert difference["理由"] == "金額差 250000 が許容範囲（±880）を超えています"
    (unpaid,) = sheet_rows(workbook, "未入金")
    assert unpaid["請求番号"] == "INV-2025-045" and unpaid["請求額"] == 27500
    (unknown,) = sheet_rows(workbook, "不明入金")
    assert unknown == {
        "入金日": day(6, 5),
        "振込依頼人": "ﾔﾏﾀﾞ ﾀﾛｳ",
        "入金額": 15000,
        "摘要": "振込",
    }


def test_a_tighter_tolerance_turns_the_fee_deduction_into_a_difference(keiri_home: Path) -> None:
    engine = PlanEngine(Settings(provider="offline"), env={})
    plan = engine.load(PLAN)
    paused = engine.run(plan, vars={"tolerance": 0})
    result = engine.resume(paused.run_id, answers=answers())
    assert result.status == "success", result.errors
    reasons = {r["請求番号"]: r["理由"] for r in result.outputs["reconcile"]["differences"]}
    assert reasons == {
        "INV-2025-042": "金額差 440 が許容範囲（±0）を超えています",
        "INV-2025-043": "金額差 250000 が許容範囲（±0）を超えています",
    }
