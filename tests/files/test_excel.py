"""ExcelManager: reading tables, writing records/cells while keeping formatting."""

from __future__ import annotations

import io
import zipfile
from datetime import date, datetime
from decimal import Decimal

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font, PatternFill

from keiri_agent.errors import UserInputError
from keiri_agent.files.excel import (
    ExcelError,
    ExcelErrorCode,
    ExcelManager,
    list_sheets,
    read_sheet,
    write_cells,
    write_records,
)

YELLOW = "FFFFFF00"


def to_bytes(wb: Workbook) -> bytes:
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def formatted_book() -> bytes:
    """Sheet 売上: bold, filled header in row 1; 2 data rows; '#,##0' amounts; widths."""
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "売上"
    ws.append(["日付", "取引先", "金額"])
    for cell in ws[1]:
        cell.font = Font(bold=True)
        cell.fill = PatternFill("solid", fgColor=YELLOW)
    ws.append([datetime(2024, 4, 1), "A社", 1000])
    ws.append([datetime(2024, 4, 2), "B社", 2500])
    for row in range(2, 20):  # formatting reaches below the data: must not count as used
        ws.cell(row=row, column=3).number_format = "#,##0"
    ws.column_dimensions["B"].width = 30
    ws.column_dimensions["C"].width = 15
    other = wb.create_sheet("メモ")
    other["A1"] = "keep me"
    other["A1"].font = Font(italic=True)
    return to_bytes(wb)


def assert_formatting_kept(data: bytes) -> None:
    wb = load_workbook(io.BytesIO(data))
    ws = wb["売上"]
    for cell in ws[1][:3]:
        assert cell.font.bold, cell.coordinate
        assert cell.fill.fgColor.rgb == YELLOW, cell.coordinate
    assert ws.column_dimensions["B"].width == 30
    assert ws.column_dimensions["C"].width == 15
    assert [c.value for c in ws[1][:3]] == ["日付", "取引先", "金額"]
    assert wb.sheetnames == ["売上", "メモ"]
    assert wb["メモ"]["A1"].value == "keep me" and wb["メモ"]["A1"].font.italic


def values(data: bytes, sheet: str = "売上") -> list[list[object]]:
    ws = load_workbook(io.BytesIO(data))[sheet]
    return [list(row) for row in ws.iter_rows(values_only=True)]


def test_append_keeps_formatting_and_writes_typed_values() -> None:
    records = [
        {"日付": date(2024, 4, 3), "取引先": "C社", "金額": 3000},
        {"日付": "2024-04-04", "取引先": "D社", "金額": "4,500"},
    ]
    out = write_records(formatted_book(), records, sheet="売上")
    assert_formatting_kept(out)
    ws = load_workbook(io.BytesIO(out))["売上"]
    assert ws.max_row == 19  # formatting rows only; values end at row 5
    assert [ws.cell(row=r, column=2).value for r in range(1, 7)] == [
        "取引先", "A社", "B社", "C社", "D社", None,
    ]  # fmt: skip
    assert ws["A4"].value == datetime(2024, 4, 3) and ws["A4"].is_date
    assert ws["A5"].value == datetime(2024, 4, 4) and ws["A5"].is_date
    assert ws["C4"].value == 3000 and ws["C4"].data_type == "n"
    assert ws["C5"].value == 4500 and ws["C5"].data_type == "n"
    assert ws["C4"].number_format == "#,##0" and ws["C5"].number_format == "#,##0"


def test_overwrite_clears_only_target_values() -> None:
    wb = load_workbook(io.BytesIO(formatted_book()))
    wb["売上"]["E2"] = "outside the table"
    out = write_records(
        to_bytes(wb), [{"取引先": "Z社", "金額": 9}], sheet="売上", mode="overwrite"
    )
    assert_formatting_kept(out)
    assert values(out)[:3] == [
        ["日付", "取引先", "金額", None, None],
        [datetime(2024, 4, 1), "Z社", 9, None, "outside the table"],  # A: not a target
        [datetime(2024, 4, 2), None, None, None, None],
    ]
    ws = load_workbook(io.BytesIO(out))["売上"]
    assert ws["C3"].number_format == "#,##0"  # cleared value, kept format


def test_column_map_by_header_name_and_letter() -> None:
    records = [{"vendor": "E社", "amount": Decimal("12.5"), "note": "メモ", "ignored": 1}]
    out = write_records(
        formatted_book(),
        records,
        sheet="売上",
        column_map={"vendor": "取引先", "amount": "C", "note": "E"},
    )
    rows = values(out)
    assert rows[0] == ["日付", "取引先", "金額", None, "note"]  # empty header cell filled
    assert rows[3] == [None, "E社", 12.5, None, "メモ"]
    assert_formatting_kept(out)
    with pytest.raises(ExcelError) as exc:
        write_records(formatted_book(), records, sheet="売上", column_map={"vendor": "取引 先"})
    assert exc.value.code == ExcelErrorCode.UNKNOWN_COLUMN
    assert "取引先" in exc.value.message


def test_new_keys_become_new_columns_and_new_workbook() -> None:
    out = write_records(formatted_book(), [{"取引先": "F社", "部門": "経理"}], sheet="売上")
    assert values(out)[0][:4] == ["日付", "取引先", "金額", "部門"]
    assert values(out)[3][:4] == [None, "F社", None, "経理"]
    fresh = write_records(None, [{"a": 1, "b": "x"}, {"b": "y", "c": 2.5}], sheet="出力")
    assert values(fresh, "出力") == [["a", "b", "c"], [1, "x", None], [None, "y", 2.5]]
    shifted = write_records(None, [{"a": 1}], sheet="S", start_cell="C3", header=False)
    assert load_workbook(io.BytesIO(shifted))["S"]["C3"].value == 1


def test_text_is_never_a_formula_and_leading_zeros_stay() -> None:
    records = [{"code": "00123", "evil": '=HYPERLINK("http://x")', "err": "#N/A", "n": "-1.5"}]
    out = write_records(None, records, sheet="S")
    ws = load_workbook(io.BytesIO(out))["S"]
    assert ws["A2"].value == "00123"
    assert ws["B2"].value == '=HYPERLINK("http://x")' and ws["B2"].data_type == "s"
    assert ws["C2"].value == "#N/A" and ws["C2"].data_type == "s"
    assert ws["D2"].value == -1.5


def test_write_cells() -> None:
    out = write_cells(
        formatted_book(),
        {"売上!E1": "確認", "'メモ'!B2": date(2025, 1, 31), "C2": 1234},
    )
    wb = load_workbook(io.BytesIO(out))
    assert wb["売上"]["E1"].value == "確認"
    assert wb["メモ"]["B2"].value == datetime(2025, 1, 31) and wb["メモ"]["B2"].is_date
    assert wb["売上"]["C2"].value == 1234 and wb["売上"]["C2"].number_format == "#,##0"
    assert_formatting_kept(out)
    with pytest.raises(ExcelError) as exc:
        write_cells(formatted_book(), {"売り上げ!A1": 1})
    assert exc.value.code == ExcelErrorCode.UNKNOWN_SHEET
    assert "売上" in exc.value.message and exc.value.details["sheets"] == ["売上", "メモ"]
    with pytest.raises(ExcelError) as exc:
        write_cells(formatted_book(), {"売上!3B": 1})
    assert exc.value.code == ExcelErrorCode.INVALID_CELL
    new = write_cells(None, {"集計!A1": "合計"})
    assert list_sheets(new) == ["集計"]


def test_merged_cell_is_refused() -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.merge_cells("A1:C1")
    with pytest.raises(ExcelError) as exc:
        write_cells(to_bytes(wb), {"B1": "x"})
    assert exc.value.code == ExcelErrorCode.MERGED_CELL


def test_read_sheet_detects_header_below_title() -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "一覧"
    ws["A1"] = "2024年度 経費一覧"
    ws.append([])
    ws.append(["日付", "科目", "金額", None])
    ws.append([datetime(2024, 5, 1), "旅費交通費", 1200])
    ws.append([None, None, None])
    ws.append([datetime(2024, 5, 2), "消耗品費", 800.5])
    table = read_sheet(to_bytes(wb))
    assert table.sheet == "一覧" and table.header_row == 3
    assert table.columns == ["日付", "科目", "金額"]
    assert table.records == [
        {"日付": datetime(2024, 5, 1), "科目": "旅費交通費", "金額": 1200},
        {"日付": datetime(2024, 5, 2), "科目": "消耗品費", "金額": 800.5},
    ]
    explicit = read_sheet(to_bytes(wb), sheet="一覧", header=1)
    assert explicit.columns == ["2024年度 経費一覧", "B", "C"]
    plain = read_sheet(to_bytes(wb), header=None, cell_range="B4:C6")
    assert plain.columns == ["B", "C"] and plain.records[0] == {"B": "旅費交通費", "C": 1200}
    ranged = read_sheet(to_bytes(wb), cell_range="一覧!B3:C6")
    assert ranged.columns == ["科目", "金額"] and len(ranged.records) == 2
    assert ExcelManager.read_records(to_bytes(wb), sheet=0)[1]["科目"] == "消耗品費"


def test_read_sheet_header_names_blank_and_duplicate() -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["a", None, "a", "b"])
    ws.append([1, 2, 3, 4])
    assert read_sheet(to_bytes(wb), header=1).columns == ["a", "B", "a_2", "b"]
    # repeated names are not taken as a header by detection
    assert read_sheet(to_bytes(wb)).columns == ["A", "B", "C", "D"]


def test_read_errors() -> None:
    data = formatted_book()
    assert list_sheets(data) == ["売上", "メモ"]
    with pytest.raises(ExcelError) as exc:
        read_sheet(data, sheet="Sheet1")
    assert exc.value.code == ExcelErrorCode.UNKNOWN_SHEET
    assert "売上" in exc.value.message and "メモ" in exc.value.message
    with pytest.raises(ExcelError) as exc:
        read_sheet(data, sheet=5)
    assert exc.value.code == ExcelErrorCode.UNKNOWN_SHEET
    with pytest.raises(ExcelError) as exc:
        read_sheet(data, cell_range="ZZZZ1:A")
    assert exc.value.code == ExcelErrorCode.INVALID_RANGE
    with pytest.raises(ExcelError) as exc:
        read_sheet(data, header=99)
    assert exc.value.code == ExcelErrorCode.INVALID_HEADER


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", ExcelErrorCode.NOT_A_WORKBOOK),
        (b"garbage bytes, not a workbook" * 20, ExcelErrorCode.NOT_A_WORKBOOK),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100, ExcelErrorCode.LEGACY_OR_ENCRYPTED),
    ],
)
def test_not_a_workbook(data: bytes, code: str) -> None:
    with pytest.raises(ExcelError) as exc:
        read_sheet(data)
    assert exc.value.code == code
    assert isinstance(exc.value, UserInputError)


def test_zip_that_is_not_a_workbook_and_corrupt_workbook() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("word/document.xml", "<x/>")
    with pytest.raises(ExcelError) as exc:
        list_sheets(buf.getvalue())
    assert exc.value.code == ExcelErrorCode.NOT_A_WORKBOOK
    good = io.BytesIO(formatted_book())
    damaged = io.BytesIO()
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(damaged, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "xl/workbook.xml":
                body = body[: len(body) // 2]
            dst.writestr(info, body)
    with pytest.raises(ExcelError) as exc:
        write_records(damaged.getvalue(), [{"a": 1}], sheet="売上")
    assert exc.value.code == ExcelErrorCode.CORRUPT_WORKBOOK


def test_write_argument_errors() -> None:
    with pytest.raises(ExcelError) as exc:
        write_records(formatted_book(), [{"a": 1}], sheet="無い")
    assert exc.value.code == ExcelErrorCode.UNKNOWN_SHEET
    created = write_records(formatted_book(), [{"a": 1}], sheet="無い", create_sheet=True)
    assert list_sheets(created) == ["売上", "メモ", "無い"]
    with pytest.raises(ExcelError) as exc:
        write_records(None, [{"a": 1}], sheet="S", mode="replace")  # type: ignore[arg-type]
    assert exc.value.code == ExcelErrorCode.INVALID_ARGUMENT
    with pytest.raises(ExcelError) as exc:
        write_records(None, ["not a record"], sheet="S")  # type: ignore[list-item]
    assert exc.value.code == ExcelErrorCode.INVALID_ARGUMENT


def test_digit_strings_beyond_excel_precision_stay_text() -> None:
    records = [
        {
            "invoice": "2024033100000123",  # 16 digits: a double would end in ...120
            "card": "4111 1111 1111 1111".replace(" ", ""),
            "max": "123456789012345",  # 15 significant digits: still a number
            "amount": "-1,234,567,890,123.45",  # 15 significant digits with separators
            "long_fraction": "0.1234567890123456",  # 16 significant digits
            "small": "0.000000000000000001",  # leading zeros are not significant
        }
    ]
    ws = load_workbook(io.BytesIO(write_records(None, records, sheet="S")))["S"]
    assert ws["A2"].value == "2024033100000123" and ws["A2"].data_type == "s"
    assert ws["B2"].value == "4111111111111111" and ws["B2"].data_type == "s"
    assert ws["C2"].value == 123456789012345
    assert ws["D2"].value == -1234567890123.45
    assert ws["E2"].value == "0.1234567890123456"
    assert ws["F2"].value == 1e-18


def test_long_integers_get_a_format_that_shows_every_digit() -> None:
    records = [{"法人番号": "1234567890123", "金額": 12000, "大きな金額": 123456789012}]
    ws = load_workbook(io.BytesIO(write_records(None, records, sheet="S")))["S"]
    assert ws["A2"].value == 1234567890123 and ws["A2"].number_format == "0"
    assert ws["B2"].value == 12000 and ws["B2"].number_format == "General"
    assert ws["C2"].number_format == "0"  # 12 digits: General would show 1.23457E+11
