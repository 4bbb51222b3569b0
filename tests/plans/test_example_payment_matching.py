"""The bundled 入金消込 Plan, run as the README says: ``plan run … --file …`` on the sample
files (a CP932 bank download with preamble lines, a CP932 invoice list and master).

The expected outcome of each bank line is worked out by hand from the files:

1. ｶ)ｱｵﾊﾞｼﾖｳｼﾞ 109,340 — INV-2610-001 110,000 less a 660 円 fee;
2. ﾐﾅﾄｲﾝｻﾂ 50,000 — INV-2610-002 33,000 + INV-2611-003 17,000 (合算入金);
3. a withdrawal; 10. a withdrawal (給与); 11. interest — not payments;
4. ﾕ)ｻｸﾗﾌﾞﾂｻﾝ 100,000 — part of INV-2610-004 300,000 (200,000 stays open);
5. ﾀﾅｶ ｲﾁﾛｳ 77,000 — nobody in the master: 要確認;
6. the registered transfer name of 清和会 — INV-2611-005 220,000;
7. ﾎｼﾉｺｳﾑﾃﾝ 65,670 — INV-2611-006 66,000 less 330 円 (the older 27,500 stays open);
8. ﾐﾄﾞﾘｹﾝｾﾂ(ｶ 60,000 — INV-2610-007 55,000 and 5,000 過入金 (前受金);
9. ｶ)ﾔﾏﾀﾞｼﾖｳ 44,000 — cut off: 山田商店 or 山田商事, both owing 44,000: 要確認.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from typer.testing import CliRunner

from keiri_agent.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "designs" / "examples" / "payment_matching.yaml"
DATA = ROOT / "src" / "keiri_agent" / "samples" / "payment_matching"


def sheet_rows(workbook: Path, name: str) -> list[dict[str, Any]]:
    rows = list(load_workbook(io.BytesIO(workbook.read_bytes()))[name].values)
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:] if any(row)]


def test_the_example_runs_from_the_cli_and_gives_the_four_sheets(
    keiri_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    files = ["bank=入金明細.csv", "invoices=請求一覧.csv", "customers=取引先マスタ.csv"]
    arguments = ["plan", "run", str(PLAN), "--json", "--out", str(out)]
    for item in files:
        name, file = item.split("=")
        arguments += ["--file", f"{name}={DATA / file}"]
    done = CliRunner().invoke(app, arguments)
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["status"] == "success"

    book = out / "write_journal.workbook.xlsx"
    matched = {row["明細行"]: row for row in sheet_rows(book, "消込結果")}
    assert {
        row: (m["得意先コード"], m["区分"], m["請求書番号"], m["手数料"], m["過入金額"])
        for row, m in matched.items()
    } == {
        1: ("C001", "手数料差引", "INV-2610-001", 660, 0),
        2: ("C002", "合算入金", "INV-2610-002、INV-2611-003", 0, 0),
        4: ("C003", "一部入金", "INV-2610-004", 0, 0),
        6: ("C004", "完全一致", "INV-2611-005", 0, 0),
        7: ("C005", "手数料差引", "INV-2611-006", 330, 0),
        8: ("C006", "過入金", "INV-2610-007", 0, 5000),
    }
    assert matched[4]["請求残高"] == 200_000
    review = sheet_rows(book, "要確認")
    assert [row["明細行"] for row in review] == [5, 9]
    assert "INV-2611-009" in review[1]["候補"] and "INV-2611-010" in review[1]["候補"]
    open_rows = {row["請求書番号"]: row for row in sheet_rows(book, "未入金請求")}
    assert {k: v["残高"] for k, v in open_rows.items()} == {
        "INV-2609-011": 27_500,
        "INV-2610-004": 200_000,
        "INV-2611-008": 88_000,
        "INV-2611-009": 44_000,
        "INV-2611-010": 44_000,
    }
    assert open_rows["INV-2609-011"]["延滞日数"] == 61  # 2026-09-30 → 2026-11-30 (last line)
    journal = sheet_rows(book, "仕訳案")
    for slip in {row["伝票番号"] for row in journal}:
        rows = [row for row in journal if row["伝票番号"] == slip]
        assert sum(r["借方金額"] for r in rows) == sum(r["貸方金額"] for r in rows)
    deposited = sum(r["借方金額"] for r in journal if r["借方勘定科目"] == "普通預金")
    assert deposited == 109_340 + 50_000 + 100_000 + 220_000 + 65_670 + 60_000
    fees = [r["借方金額"] for r in journal if r["借方勘定科目"] == "支払手数料"]
    assert fees == [660, 330]
    assert [r["貸方金額"] for r in journal if r["貸方勘定科目"] == "前受金"] == [5000]


def test_the_example_without_its_files_says_which_file_is_missing(keiri_home: Path) -> None:
    done = CliRunner().invoke(app, ["plan", "run", str(PLAN), "--json", "--no-prompt"])
    assert done.exit_code == 1
    error = json.loads(done.stdout)["errors"][0]
    assert "入金明細" in error["message"] and "Traceback" not in done.output
