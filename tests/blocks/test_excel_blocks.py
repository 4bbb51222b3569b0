"""excel.read_data, excel.write, and a Plan (ZIP → select → excel.write) run by the engine."""

from __future__ import annotations

import io
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from block_harness import CATALOG, failure, make_context, run
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font

from keiri_agent.blocks.base import BlockContext
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.files.excel import lost_parts
from keiri_agent.plans.check.dry_run import dry_run
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.run_state import load_state
from keiri_agent.plans.run.runner import PlanRunner


@pytest.fixture
def ctx() -> BlockContext:
    return make_context()


def workbook_bytes(rows: dict[str, list[list[Any]]]) -> bytes:
    book = Workbook()
    first = True
    for title, values in rows.items():
        ws = book.active if first else book.create_sheet()
        assert ws is not None
        ws.title = title
        first = False
        for row in values:
            ws.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


SALES = workbook_bytes(
    {
        "表紙": [["売上報告"]],
        "売上": [
            ["2024年度 売上"],
            [],
            ["日付", "取引先", "金額"],
            [datetime(2024, 3, 31), "A社", 1200],
            [datetime(2024, 4, 1, 10, 30), "B社", 300.5],
        ],
    }
)


def test_read_data_detects_the_header_and_gives_iso_dates(ctx: BlockContext) -> None:
    out = run("excel.read_data", ctx, workbook=SALES, sheet="売上")
    assert out == {
        "records": [
            {"日付": "2024-03-31", "取引先": "A社", "金額": 1200},
            {"日付": "2024-04-01T10:30:00", "取引先": "B社", "金額": 300.5},
        ],
        "columns": ["日付", "取引先", "金額"],
        "sheet": "売上",
        "warnings": [],
    }


def test_read_data_by_index_range_and_no_header(ctx: BlockContext) -> None:
    out = run("excel.read_data", ctx, workbook=SALES, sheet=1, range="B4:C5", header=None)
    assert out["columns"] == ["B", "C"]
    assert out["records"] == [{"B": "A社", "C": 1200}, {"B": "B社", "C": 300.5}]
    first = run("excel.read_data", ctx, workbook=SALES)
    assert first["sheet"] == "表紙"


def test_read_data_errors_carry_the_excel_code(ctx: BlockContext) -> None:
    unknown = failure("excel.read_data", ctx, workbook=SALES, sheet="売り上げ")
    assert unknown.details["error_code"] == "EXCEL_UNKNOWN_SHEET"
    assert unknown.details["field"] == "sheet"
    assert "売上" in unknown.message
    bad_range = failure("excel.read_data", ctx, workbook=SALES, range="B3-F20")
    assert bad_range.details["error_code"] == "EXCEL_INVALID_RANGE"
    legacy = failure(
        "excel.read_data", ctx, workbook=b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"0" * 64
    )
    assert legacy.details["error_code"] == "EXCEL_LEGACY_OR_ENCRYPTED" and legacy.hint
    assert failure("excel.read_data", ctx, workbook="sales.xlsx").details["field"] == "workbook"


def test_write_new_workbook_then_append_keeps_formatting(ctx: BlockContext) -> None:
    first = run(
        "excel.write",
        ctx,
        workbook=None,
        data=[{"取引先": "A社", "金額": "1,200", "日付": "2024-03-31"}],
        output_config={"sheet": "集計"},
    )
    assert first["write_summary"] == {
        "sheet": "集計",
        "rows_written": 1,
        "first_row": 2,
        "last_row": 2,
    }
    book = load_workbook(io.BytesIO(first["workbook"]))
    assert book.sheetnames == ["集計"]
    ws = book["集計"]
    ws["A1"].font = Font(bold=True)
    buf = io.BytesIO()
    book.save(buf)

    second = run(
        "excel.write",
        ctx,
        workbook=buf.getvalue(),
        data={"records": [{"金額": 300, "取引先": "B社"}, {"取引先": "=SUM(B1:B2)", "金額": None}]},
    )
    assert second["write_summary"] == {
        "sheet": "集計",
        "rows_written": 2,
        "first_row": 3,
        "last_row": 4,
    }
    ws = load_workbook(io.BytesIO(second["workbook"]))["集計"]
    assert [[c.value for c in row] for row in ws.iter_rows()] == [
        ["取引先", "金額", "日付"],
        ["A社", 1200, datetime(2024, 3, 31)],
        ["B社", 300, None],
        ["=SUM(B1:B2)", None, None],
    ]
    assert ws["A4"].data_type == "s"  # text from data never becomes a formula
    assert ws["A1"].font.bold is True


def test_write_overwrite_items_and_column_map(ctx: BlockContext) -> None:
    template = workbook_bytes(
        {"台帳": [["No", "相手先", "金額"], [1, "旧", 1], [2, "旧", 2], [3, "旧", 3]]}
    )
    out = run(
        "excel.write",
        ctx,
        workbook=template,
        data={"items": [{"vendor": "A社", "amount": 10, "ignored": "x"}]},
        output_config={
            "sheet": "台帳",
            "mode": "overwrite",
            "column_map": {"vendor": "相手先", "amount": "C"},
        },
    )
    assert out["write_summary"] == {
        "sheet": "台帳",
        "rows_written": 1,
        "first_row": 2,
        "last_row": 2,
    }
    ws = load_workbook(io.BytesIO(out["workbook"]))["台帳"]
    assert [[c.value for c in row] for row in ws.iter_rows()] == [
        ["No", "相手先", "金額"],
        [1, "A社", 10],
        [2, None, None],
        [3, None, None],
    ]


def test_write_start_cell_create_sheet_and_empty_data(ctx: BlockContext) -> None:
    out = run(
        "excel.write",
        ctx,
        workbook=SALES,
        data=[{"a": date(2024, 1, 2)}],
        output_config={"sheet": "新", "create_sheet": True, "start_cell": "C3", "header": False},
    )
    assert out["write_summary"] == {"sheet": "新", "rows_written": 1, "first_row": 3, "last_row": 3}
    book = load_workbook(io.BytesIO(out["workbook"]))
    assert book.sheetnames == ["表紙", "売上", "新"]
    assert book["新"]["C3"].value == datetime(2024, 1, 2)
    empty = run("excel.write", ctx, workbook=SALES, data=[])
    assert empty["write_summary"] == {
        "sheet": "表紙",
        "rows_written": 0,
        "first_row": None,
        "last_row": None,
    }


def test_write_errors(ctx: BlockContext) -> None:
    unknown_sheet = failure(
        "excel.write", ctx, workbook=SALES, data=[{"a": 1}], output_config={"sheet": "x"}
    )
    assert unknown_sheet.details["error_code"] == "EXCEL_UNKNOWN_SHEET"
    assert unknown_sheet.details["field"] == "output_config"
    unknown_column = failure(
        "excel.write",
        ctx,
        workbook=SALES,
        data=[{"a": 1}],
        output_config={"sheet": "売上", "start_cell": "A3", "column_map": {"a": "金 額"}},
    )
    assert unknown_column.details["error_code"] == "EXCEL_UNKNOWN_COLUMN"
    assert "金額" in unknown_column.message
    bad_cell = failure("excel.write", ctx, data=[{"a": 1}], output_config={"start_cell": "A0"})
    assert bad_cell.details["error_code"] == "EXCEL_INVALID_CELL"
    assert failure("excel.write", ctx, data={"rows": []}).details["field"] == "data"
    with pytest.raises(BlockError) as exc:  # the engine's schema check catches this first
        CATALOG.load(CATALOG.resolve("excel.write")).run({"data": [1, 2]}, ctx)
    assert exc.value.details["field"] == "data[0]"
    assert failure("excel.write", ctx, workbook="book.xlsx", data=[]).details["field"] == "workbook"


PLAN = """
apiVersion: v1
id: evidence_to_excel
version: 1.0.0
vars: {zip: null}
graph:
  - id: parse
    block: file.parse_zip_2tier
    in: {zip_bytes: "${vars.zip}", per_file_chars: 20}
    out: {evidence_data: evidence}
  - id: pick
    block: table.select
    in:
      records: "${parse.evidence.files}"
      columns: [group, name, size, text]
      rename: {group: 取引先, name: ファイル, size: バイト数, text: 本文}
  - id: write
    block: excel.write
    in:
      workbook: null
      data: "${pick.records}"
      output_config: {sheet: 証憑一覧}
exports:
  - {from: write.workbook, as: workbook}
  - {from: write.write_summary, as: summary}
"""


def test_plan_zip_to_excel_runs_through_the_engine(tmp_path: Path) -> None:
    plan = load_plan_text(PLAN)
    report = PlanValidator(CATALOG, env={}).validate(plan)
    assert report.errors == [], report.errors
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("A社/請求書.txt", "請求書 12,000円".encode())
        zf.writestr("B社/領収書.md", "領収書".encode())
        zf.writestr("B社/写真.png", b"\x89PNG")
    runner = PlanRunner(
        CATALOG, Settings(), runs_dir=tmp_path / "runs", plan_loader=_no_plans, env={}
    )

    result = runner.start(plan, vars={"zip": archive.getvalue()})

    assert result.status == "success", result.errors
    summary = result.outputs["write"]["write_summary"]
    assert summary == {"sheet": "証憑一覧", "rows_written": 3, "first_row": 2, "last_row": 4}
    ws = load_workbook(io.BytesIO(result.outputs["write"]["workbook"]))["証憑一覧"]
    assert [[c.value for c in row] for row in ws.iter_rows()] == [
        ["取引先", "ファイル", "バイト数", "本文"],
        ["A社", "請求書.txt", len("請求書 12,000円".encode()), "請求書 12,000円"],
        ["B社", "写真.png", 4, None],
        ["B社", "領収書.md", len("領収書".encode()), "領収書"],
    ]
    # the state file round-trips the bytes (the ZIP var and the workbook output)
    state = load_state(tmp_path / "runs", result.run_id)
    assert state.vars["zip"] == archive.getvalue()


def test_plan_with_a_hostile_zip_fails_with_the_archive_code(tmp_path: Path) -> None:
    plan = load_plan_text(PLAN)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../../evil.txt", b"x")
    runner = PlanRunner(
        CATALOG, Settings(), runs_dir=tmp_path / "runs", plan_loader=_no_plans, env={}
    )

    result = runner.start(plan, vars={"zip": buf.getvalue()})

    assert result.status == "failed"
    (error,) = result.errors
    assert error["code"] == BlockErrorCode.INPUT_VALIDATION_FAILED
    assert error["details"]["error_code"] == "ARCHIVE_UNSAFE_PATH"
    assert error["details"]["node_id"] == "parse"
    assert error["hint"] and error["recoverable"] is True


def _no_plans(plan_id: str) -> Plan:
    raise AssertionError(f"no subflow plans here (asked for {plan_id!r})")


def test_plan_dry_run_uses_the_declared_samples() -> None:
    report = dry_run(load_plan_text(PLAN), CATALOG, env={})
    assert report.ok, report.problems


def _with_shape(workbook: bytes) -> bytes:
    """``workbook`` with a text-box shape added to its first drawing (as Excel writes one)."""
    source = zipfile.ZipFile(io.BytesIO(workbook))
    out = io.BytesIO()
    shape = (  # openpyxl writes the drawing namespace unprefixed
        b"<oneCellAnchor><from><col>5</col><colOff>0</colOff><row>1</row><rowOff>0</rowOff>"
        b'</from><ext cx="900000" cy="300000"/><sp macro="" textlink="">'
        b'<nvSpPr><cNvPr id="9" name="Memo"/><cNvSpPr txBox="1"/></nvSpPr><spPr/></sp>'
        b"<clientData/></oneCellAnchor>"
    )
    with zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.startswith("xl/drawings/drawing") and item.filename.endswith(".xml"):
                data = data.replace(b"</wsDr>", shape + b"</wsDr>")
            target.writestr(item, data)
    return out.getvalue()


def test_write_keeps_charts_and_warns_about_a_shape_it_cannot_keep(ctx: BlockContext) -> None:
    from openpyxl.chart import BarChart, Reference

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "集計"
    sheet.append(["月", "金額"])
    sheet.append(["4月", 100])
    chart = BarChart()
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=2), titles_from_data=True)
    sheet.add_chart(chart, "D2")
    buffer = io.BytesIO()
    book.save(buffer)
    with_chart = buffer.getvalue()

    kept = run(
        "excel.write",
        ctx,
        workbook=with_chart,
        data=[{"月": "5月", "金額": 200}],
        output_config={"sheet": "集計", "mode": "append"},
    )
    assert "warnings" not in kept["write_summary"]  # the chart survives
    assert lost_parts(with_chart, kept["workbook"]) == []

    with_shape = _with_shape(with_chart)
    out = run(
        "excel.write",
        ctx,
        workbook=with_shape,
        data=[{"月": "5月", "金額": 200}],
        output_config={"sheet": "集計", "mode": "append"},
    )
    (warning,) = out["write_summary"]["warnings"]
    assert warning.startswith("元のブックの図形は書き出したブックに残っていません")
    assert lost_parts(with_shape, out["workbook"]) == ["図形"]


def test_write_without_a_workbook_has_no_warnings(ctx: BlockContext) -> None:
    out = run("excel.write", ctx, data=[{"a": 1}])
    assert "warnings" not in out["write_summary"]


def test_write_warns_when_text_is_cut_to_the_excel_cell_limit(ctx: BlockContext) -> None:
    data = [{"摘要": "短い", "備考": "ok"}, {"摘要": "あ" * 40_000, "備考": "い" * 32_767}]
    out = run("excel.write", ctx, data=data)
    (warning,) = out["write_summary"]["warnings"]
    assert warning == (
        "2 件目のレコード（3 行目）の「摘要」は 40,000 文字あり、"
        "Excel のセル上限に合わせて 32,767 文字に切り詰めました。"
    )
    ws = load_workbook(io.BytesIO(out["workbook"]))["Sheet1"]
    assert ws["A3"].value == "あ" * 32_767 and ws["B3"].value == "い" * 32_767
    unmapped = run("excel.write", ctx, data=data, output_config={"column_map": {"備考": "A"}})
    assert "warnings" not in unmapped["write_summary"]
    many = run("excel.write", ctx, data=[{"x": "a" * 32_768}] * 12)
    assert len(many["write_summary"]["warnings"]) == 11
    assert many["write_summary"]["warnings"][-1] == "ほかに 2 個のセルも同様に切り詰めました。"
