"""The 経費精算チェック sample Plan: validates, dry-runs, and runs on the sample workbook.

Expectations are worked out by hand from scripts/build_expense_samples.py's rows
(limit 30,000 円): 和暦/西暦 dates to ISO, office amounts to numbers, four bad
registration numbers (check digit, 12 digits, no T, blank), two rows over the limit
and one date that does not exist (令和5年2月30日).
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import docx
from openpyxl import load_workbook

from keiri_agent.config import Settings
from keiri_agent.plans.engine import PlanEngine

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "src" / "keiri_agent" / "samples" / "plans" / "expense_check.yaml"
WORKBOOK = ROOT / "src" / "keiri_agent" / "samples" / "expenses" / "経費明細.xlsx"

# (日付, 摘要, 取引先, 金額) after text.normalize
NORMALIZED = [
    ("2023-04-03", "タクシー代", "ニッポン交通", 2300),
    ("2023-04-10", "会議用弁当", "山田弁当", 12000),
    ("2023-04-12", "出張宿泊費", "ホテル東京", 45000),
    ("2023-04-15", "文房具", "文具のABC", 3980),
    ("2023-04-20", "取引先接待", "料亭さくら", 38500),
    ("2023-04-25", "文房具の返品", "文具のABC", -500),
    ("令和5年2月30日", "書籍代", "駅前書店", 2750),
    ("2023-04-28", "新幹線", "JR東海", 28000),
    ("2023-04-30", "備品", "家電の店", 30000),
]
INVALID = {
    "出張宿泊費": "チェックディジット",
    "取引先接待": "桁数",
    "書籍代": "先頭のT",
    "備品": "空欄",
}
OVER_LIMIT = ["出張宿泊費", "取引先接待"]


def engine() -> PlanEngine:
    return PlanEngine(Settings(provider="offline"), env={})


def test_the_sample_workbook_is_what_the_script_builds() -> None:
    spec = importlib.util.spec_from_file_location(
        "build", ROOT / "scripts" / "build_expense_samples.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == WORKBOOK.read_bytes()


def test_plan_validates_and_dry_runs_clean(keiri_home: Path) -> None:
    plan_engine = engine()
    report = plan_engine.check(PLAN)
    assert report.issues == (), report.issues
    assert plan_engine.dry_run(plan_engine.load(PLAN)).ok


def test_plan_runs_on_the_sample_workbook(keiri_home: Path) -> None:
    plan_engine = engine()
    plan = plan_engine.load(PLAN)
    paused = plan_engine.run(plan)
    assert paused.status == "paused", paused.errors
    assert [w["node_id"] for w in paused.waiting] == ["collect"]
    result = plan_engine.resume(
        paused.run_id,
        answers={"collect": {"workbook": WORKBOOK.read_bytes(), "limit": 30000}},
    )
    assert result.status == "success", result.errors
    outputs = result.outputs

    rows = outputs["normalize"]["rows"]
    assert [(r["日付"], r["摘要"], r["取引先"], r["金額"]) for r in rows] == NORMALIZED
    [problem] = outputs["normalize"]["problems"]
    assert (problem["row"], problem["column"], problem["value"]) == (7, "日付", "令和5年2月30日")

    checked = outputs["check_numbers"]
    assert {r["摘要"]: r["登録番号_エラー"] for r in checked["invalid"]}.keys() == INVALID.keys()
    for row in checked["invalid"]:
        assert INVALID[row["摘要"]] in row["登録番号_エラー"]
    assert checked["summary"] == {"total": 9, "valid": 5, "invalid": 4}
    assert [r["摘要"] for r in outputs["over_limit"]["rows"]] == OVER_LIMIT
    assert outputs["classify_accounts"] == {"rows": None}  # skipped: vars.classify is false

    document = docx.Document(io.BytesIO(outputs["render_report"]["document"]))
    assert document.paragraphs[0].text == "経費精算チェック"
    [table] = document.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["項目", "件数"],
        ["明細", "9"],
        ["登録番号の不備", "4"],
        ["上限（30,000 円）超過", "2"],
        ["読めなかった日付・金額", "1"],
    ]

    workbook = load_workbook(io.BytesIO(outputs["write_over_limit"]["workbook"]))
    invalid_sheet = list(workbook["登録番号エラー"].values)
    over_sheet = list(workbook["上限超過"].values)
    column = invalid_sheet[0].index("摘要")
    assert [row[column] for row in invalid_sheet[1:]] == list(INVALID)
    assert [row[column] for row in over_sheet[1:]] == OVER_LIMIT
