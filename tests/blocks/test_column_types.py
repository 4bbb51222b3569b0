"""Typed columns in csv.read and excel.read_data: the office rules of files.cells per column,
the ``types`` overrides and ``infer_types``."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from block_harness import CATALOG, failure, make_context, run
from openpyxl import Workbook

from keiri_agent.errors import BlockError


def csv_bytes(rows: list[list[str]], encoding: str = "utf-8") -> bytes:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode(encoding)


def xlsx_bytes(rows: list[list[Any]]) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def read_csv(rows: list[list[str]], **inputs: Any) -> list[dict[str, Any]]:
    return run("csv.read", make_context(), file=csv_bytes(rows), **inputs)["records"]


def column(records: list[dict[str, Any]], name: str) -> list[Any]:
    return [row[name] for row in records]


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("1,234", 1234),
        ("¥1,234", 1234),
        ("￥1,234", 1234),
        ("1,234円", 1234),
        ("△500", -500),
        ("▲1,000", -1000),
        ("(500)", -500),
        ("-500", -500),
        ("１２３", 123),
        ("1,234.5", 1234.5),
        ("0", 0),
        ("0.5", 0.5),
    ],
)
def test_an_office_number_column_becomes_numbers(written: str, value: int | float) -> None:
    records = read_csv([["取引先", "金額"], ["A社", written], ["B社", "300"]])
    assert column(records, "金額") == [value, 300]
    assert type(records[0]["金額"]) is type(value)  # whole numbers stay int
    assert column(records, "取引先") == ["A社", "B社"]


@pytest.mark.parametrize(
    "written",
    ["2025/4/1", "2025-04-01", "2025/04/01", "2025年4月1日", "令和7年4月1日", "R7.4.1"],
)
def test_a_date_column_becomes_iso_text(written: str) -> None:
    records = read_csv([["日付"], [written], ["平成31年4月30日"]])
    assert column(records, "日付") == ["2025-04-01", "2019-04-30"]


def test_codes_with_a_leading_zero_keep_their_column_text() -> None:
    records = read_csv([["取引先コード", "部門"], ["00123", "10"], ["45", "20"]])
    assert column(records, "取引先コード") == ["00123", "45"]
    assert column(records, "部門") == [10, 20]


def test_a_mixed_column_stays_text_as_read_and_empty_cells_are_null() -> None:
    records = read_csv(
        [
            ["金額", "備考", "空", "日時"],
            ["100", "1,000", "", "2025-04-01 10:00"],
            ["", "なし", "", "2025-04-02"],
            ["2,000", "2025/4/1", "", ""],
        ]
    )
    assert column(records, "金額") == [100, None, 2000]
    assert column(records, "備考") == ["1,000", "なし", "2025/4/1"]
    assert column(records, "空") == [None, None, None]
    # a time of day is never dropped by inference: the column stays text
    assert column(records, "日時") == ["2025-04-01 10:00", "2025-04-02", None]


def test_a_cp932_csv_from_japanese_excel_reads_typed() -> None:
    text = "部門,金額,計上日\r\n営業,\\50,000,2025/4/1\r\n総務,（300）,令和7年4月2日\r\n"
    # Japanese Excel writes its half-width yen as the byte 0x5C (a backslash in CP932)
    data = text.replace(",\\50,000,", ',"\\50,000",').encode("cp932")
    out = run("csv.read", make_context(), file=data)
    assert out["summary"]["encoding"] == "cp932"
    assert out["records"] == [
        {"部門": "営業", "金額": 50000, "計上日": "2025-04-01"},
        {"部門": "総務", "金額": -300, "計上日": "2025-04-02"},
    ]


def test_an_xlsx_with_numbers_stored_as_text_reads_numbers() -> None:
    data = xlsx_bytes(
        [
            ["取引先コード", "金額", "数量", "日付"],
            ["00123", "1,200", 3, "2025/4/1"],
            ["00456", "¥3,400", "4", "2025年4月2日"],
        ]
    )
    records = run("excel.read_data", make_context(), workbook=data)["records"]
    assert records == [
        {"取引先コード": "00123", "金額": 1200, "数量": 3, "日付": "2025-04-01"},
        {"取引先コード": "00456", "金額": 3400, "数量": 4, "日付": "2025-04-02"},
    ]


def test_types_force_a_column_and_auto_infers_when_inference_is_off() -> None:
    rows = [["コード", "金額", "日付", "備考"], ["00123", "1,200", "2025/4/1", "12"]]
    records = read_csv(rows, types={"コード": "number", "金額": "text"})
    assert records == [{"コード": 123, "金額": "1,200", "日付": "2025-04-01", "備考": 12}]
    records = read_csv(rows, infer_types=False, types={"日付": "auto"})
    assert records == [{"コード": "00123", "金額": "1,200", "日付": "2025-04-01", "備考": "12"}]
    data = xlsx_bytes([["コード", "金額"], [123, 1200.0]])
    out = run("excel.read_data", make_context(), workbook=data, types={"コード": "text"})
    assert out["records"] == [{"コード": "123", "金額": 1200}]


def test_a_value_the_forced_type_cannot_read_names_column_row_and_value() -> None:
    rows = [["取引先", "金額"], ["A社", "1,200"], ["B社", "未定"]]
    error = failure("csv.read", make_context(), file=csv_bytes(rows), types={"金額": "number"})
    assert "'金額'" in error.message and "2 行目" in error.message and "'未定'" in error.message
    assert "数値として読めません" in error.message and error.hint
    assert error.details["column"] == "金額" and error.details["row"] == 2
    assert error.details["value"] == "未定" and error.details["field"] == "types"
    data = xlsx_bytes([["日付"], ["2025/4/1"], ["来月"]])
    error = failure("excel.read_data", make_context(), workbook=data, types={"日付": "date"})
    assert "'日付'" in error.message and "2 行目" in error.message and "日付として" in error.message


def test_types_naming_an_unknown_column_or_type_are_refused() -> None:
    rows = [["取引先", "金額"], ["A社", "1"]]
    error = failure("csv.read", make_context(), file=csv_bytes(rows), types={"金額 ": "number"})
    assert "'金額 '" in error.message and error.hint is not None and "'金額'" in error.hint
    # the port's enum refuses a bad type before the block runs; the block says it too
    block = CATALOG.load(CATALOG.resolve("csv.read"))
    with pytest.raises(BlockError) as refused:
        block.run({"file": csv_bytes(rows), "types": {"金額": "integer"}}, make_context())
    assert "'integer'" in refused.value.message and "number" in refused.value.message
