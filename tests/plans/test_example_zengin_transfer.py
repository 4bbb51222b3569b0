"""The bundled 総合振込 Plan, run as the README says: ``plan run … --file payments=… --var …``
on the sample 支払予定表 (CP932, a title line above the header).

Worked out by hand from the file: rows 1–5 are paid on 2026-11-30 (330,000 + 52,800 +
118,800 + 88,000 + 1,210,000 = 1,799,600 円); row 4 names 城南信用金庫 品川支店 without
codes (1344 / 002, filled in and said so); row 6 is paid on 2026-12-10 and row 7 is
0 円 — both listed as 対象外, not in the file.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from typer.testing import CliRunner

from keiri_agent.accounting.zengin_transfers import read_transfer_file
from keiri_agent.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "designs" / "examples" / "zengin_transfer.yaml"
SCHEDULE = ROOT / "src" / "keiri_agent" / "samples" / "zengin_transfer" / "支払予定表.csv"
REMITTER = [
    "remitter_code=1234567890",
    "remitter_name=カ）ケイリサンプル",
    "remitter_bank_code=0005",
    "remitter_branch_code=001",
    "remitter_account_type=当座",
    "remitter_account_number=0654321",
]


def invoke(*extra: str) -> Any:
    arguments = [
        "plan",
        "run",
        str(PLAN),
        "--json",
        "--no-prompt",
        "--file",
        f"payments={SCHEDULE}",
    ]
    for item in REMITTER:
        arguments += ["--var", item]
    return CliRunner().invoke(app, arguments + list(extra))


def test_the_example_writes_a_transfer_file_and_its_list(keiri_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = invoke("--var", "transfer_date=2026-11-30", "--out", str(out))
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["status"] == "success"

    back = read_transfer_file((out / "総合振込_20261130.txt").read_bytes(), year=2026)
    assert back.remitter.account.bank_code == "0005"
    assert back.remitter.account.number == "0654321"  # the leading zero typed in --var kept
    assert [(t.account.bank_code, t.account.branch_code, t.amount) for t in back.transfers] == [
        ("0001", "210", 330_000),
        ("0010", "299", 52_800),
        ("0009", "015", 118_800),
        ("1344", "002", 88_000),
        ("0138", "307", 1_210_000),
    ]
    assert back.total == 1_799_600

    book = load_workbook(io.BytesIO((out / "write_skipped.workbook.xlsx").read_bytes()))
    listed = list(book["振込一覧"].values)
    header = listed[0]
    rows = [dict(zip(header, row, strict=True)) for row in listed[1:]]
    assert "銀行名から銀行コード 1344 を補いました" in str(rows[3]["備考"])
    skipped = list(book["対象外"].values)
    reasons = [dict(zip(skipped[0], row, strict=True))["理由"] for row in skipped[1:]]
    assert reasons == ["支払日が 2026-12-10（振込指定日と違う）", "支払金額が 0 円"]


def test_a_holiday_as_the_transfer_day_is_refused_with_the_days_around_it(
    keiri_home: Path,
) -> None:
    done = invoke("--var", "transfer_date=2026-11-23")
    assert done.exit_code == 1
    error = json.loads(done.stdout)["errors"][0]
    assert "勤労感謝の日" in error["message"]
    assert "2026-11-20" in error["hint"] and "2026-11-24" in error["hint"]


def test_without_the_remitter_the_run_says_what_to_give(keiri_home: Path) -> None:
    arguments = [
        "plan",
        "run",
        str(PLAN),
        "--json",
        "--no-prompt",
        "--file",
        f"payments={SCHEDULE}",
    ]
    done = CliRunner().invoke(app, [*arguments, "--var", "transfer_date=2026-11-30"])
    assert done.exit_code == 1
    error = json.loads(done.stdout)["errors"][0]
    assert "委託者コード" in error["message"] and "Traceback" not in done.output
