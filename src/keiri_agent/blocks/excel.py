"""Built-in Excel blocks: ``excel.read_data`` and ``excel.write``.

They wrap :mod:`keiri_agent.files.excel`; workbooks travel as ``bytes``. Every
``ExcelError`` becomes an ``INPUT_VALIDATION_FAILED`` BlockError with the original code
in ``details.error_code`` and the original hint.

``excel.read_data`` returns JSON-friendly records: dates become ISO text
("2024-03-31", "2024-03-31T10:00:00", "10:00:00"), which ``excel.write`` turns back
into Excel dates; then each column is typed as :mod:`keiri_agent.files.column_types`
says (numbers stored as text become numbers, date text ISO dates; ``types`` /
``infer_types`` change that). ``excel.write`` has no side effect: it returns the new workbook's
bytes; saving a file happens only when a surface (UI download, CLI) stores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any, Literal, cast

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.files import bytes_input, from_user_error
from keiri_agent.blocks.records import invalid, records_input, type_read_columns
from keiri_agent.files._excel_write import (
    EXCEL_MAX_CELL_CHARS,
    _existing_headers,
    _last_used_row,
    _resolve_columns,
    to_excel_value,
)
from keiri_agent.files._xlsx import get_sheet, open_workbook, parse_cell
from keiri_agent.files.excel import (
    ExcelError,
    ExcelErrorCode,
    list_sheets,
    lost_parts,
    read_sheet,
    write_records,
)

_CONFIG_KEYS = ("sheet", "start_cell", "header", "mode", "column_map", "create_sheet")
_READ_FIELDS = {
    ExcelErrorCode.UNKNOWN_SHEET: "sheet",
    ExcelErrorCode.INVALID_RANGE: "range",
    ExcelErrorCode.INVALID_HEADER: "header",
}
_WRITE_FIELDS = {
    ExcelErrorCode.UNKNOWN_SHEET: "output_config",
    ExcelErrorCode.INVALID_CELL: "output_config",
    ExcelErrorCode.UNKNOWN_COLUMN: "output_config",
    ExcelErrorCode.MERGED_CELL: "output_config",
    ExcelErrorCode.INVALID_ARGUMENT: "data",
}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.time() == time() and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return value


class ReadDataBlock(ProcessingBlock):
    """``excel.read_data``: one sheet (or a range of it) as records."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        data = bytes_input(inputs, "workbook")
        sheet = inputs.get("sheet")
        if isinstance(sheet, bool) or not isinstance(sheet, str | int | None):
            raise invalid(
                "sheet はシート名か、0 から数えたシートの番号で指定してください",
                hint="例: sheet: 売上（先頭のシートなら sheet: 0）",
                field="sheet",
            )
        cell_range = inputs.get("range")
        if cell_range is not None and not isinstance(cell_range, str):
            raise invalid(
                "range は 'B3:F20' のようなセル範囲の文字列で指定してください",
                hint="省略すると表の範囲を自動で見つけます",
                field="range",
            )
        header = inputs.get("header", "auto")
        try:
            table = read_sheet(data, sheet=sheet, cell_range=cell_range or None, header=header)
        except ExcelError as error:
            raise from_user_error(error, _READ_FIELDS.get(error.code, "workbook")) from error
        records = [{k: _plain(v) for k, v in row.items()} for row in table.records]
        ctx.check_cancelled()
        type_read_columns(records, table.columns, inputs)
        return {
            "records": records,
            "columns": table.columns,
            "sheet": table.sheet,
            "warnings": table.notes,
        }


def data_records(inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``data`` as records: a list, or a mapping's "records" (else "items") list."""
    data = inputs.get("data")
    if isinstance(data, Mapping):
        for key in ("records", "items"):
            if key in data:
                return records_input({f"data.{key}": data[key]}, f"data.{key}")
        raise invalid(
            "data は行（オブジェクト）のリストか、records または items にそのリストを持つ"
            "オブジェクトで指定してください",
            hint="表データ（例: table.filter の records 出力）をつないでください",
            field="data",
        )
    return records_input({"data": data}, "data")


def _config(inputs: Mapping[str, Any]) -> dict[str, Any]:
    raw = inputs.get("output_config") or {}
    if not isinstance(raw, Mapping):
        raise invalid(
            "output_config は「設定名: 値」の対応で指定してください",
            hint="例: output_config: {sheet: 集計, start_cell: A1}",
            field="output_config",
        )
    unknown = [key for key in raw if key not in _CONFIG_KEYS]
    if unknown:
        raise invalid(
            f"output_config: 設定名 {unknown[0]!r} は使えません",
            hint="使える設定名: " + ", ".join(_CONFIG_KEYS),
            field="output_config",
        )
    config = {
        "sheet": raw.get("sheet"),
        "start_cell": raw.get("start_cell") or "A1",
        "header": raw.get("header", True),
        "mode": raw.get("mode") or "append",
        "column_map": raw.get("column_map"),
        "create_sheet": raw.get("create_sheet", False),
    }
    if config["mode"] not in ("append", "overwrite"):
        raise invalid(
            "output_config.mode は append（追記）か overwrite（上書き）で指定してください",
            field="output_config",
        )
    for key in ("header", "create_sheet"):
        if not isinstance(config[key], bool):
            raise invalid(
                f"output_config.{key} は true か false で指定してください", field="output_config"
            )
    column_map = config["column_map"]
    if column_map is not None and not (
        isinstance(column_map, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in column_map.items())
    ):
        raise invalid(
            "output_config.column_map は「行のキー: 見出し名または列記号」の対応で指定してください",
            hint="例: column_map: {amount: 金額, date: B}",
            field="output_config",
        )
    return config


def _first_data_row(
    workbook: bytes | None, records: list[dict[str, Any]], config: dict[str, Any]
) -> int:
    """The worksheet row ``write_records`` will write the first record to."""
    start_row, start_col = parse_cell(config["start_cell"])
    data_row = start_row + 1 if config["header"] else start_row
    if workbook is None or config["mode"] == "overwrite":
        return data_row
    book = open_workbook(workbook, data_only=False)
    if config["sheet"] not in book.sheetnames and config["create_sheet"]:
        return data_row
    ws = get_sheet(book, config["sheet"])
    existing = _existing_headers(ws, start_row, start_col) if config["header"] else {}
    columns = _resolve_columns(records, existing, start_col, config["column_map"])
    if not columns:
        return data_row
    return _last_used_row(ws, data_row, [col for _, col in columns]) + 1


class WriteBlock(ProcessingBlock):
    """``excel.write``: records written into a workbook (or a new one) → the new bytes."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        workbook = None if inputs.get("workbook") is None else bytes_input(inputs, "workbook")
        records = data_records(inputs)
        config = _config(inputs)
        try:
            if config["sheet"] is None:
                config["sheet"] = list_sheets(workbook)[0] if workbook is not None else "Sheet1"
            first_row = _first_data_row(workbook, records, config)
            written = write_records(
                workbook,
                records,
                sheet=config["sheet"],
                start_cell=config["start_cell"],
                header=config["header"],
                mode=cast(Literal["append", "overwrite"], config["mode"]),
                column_map=config["column_map"],
                create_sheet=config["create_sheet"],
            )
        except ExcelError as error:
            raise from_user_error(error, _WRITE_FIELDS.get(error.code, "workbook")) from error
        count = len(records)
        summary: dict[str, Any] = {
            "sheet": config["sheet"],
            "rows_written": count,
            "first_row": first_row if count else None,
            "last_row": first_row + count - 1 if count else None,
        }
        warnings: list[str] = []
        lost = lost_parts(workbook, written) if workbook is not None else []
        if lost:
            warnings.append(
                f"元のブックの{'・'.join(lost)}は書き出したブックに残っていません"
                "（openpyxl が保持できないため）。元のブックは変更されていません。"
            )
        warnings += _cut_text_warnings(records, config["column_map"], first_row)
        if warnings:
            summary["warnings"] = warnings
            for warning in warnings:
                ctx.logger.warning("excel.write: %s", warning)
        return {"workbook": written, "write_summary": summary}


_MAX_CUT_WARNINGS = 10


def _cut_text_warnings(
    records: list[dict[str, Any]], column_map: Mapping[str, str] | None, first_row: int
) -> list[str]:
    """One warning per written text longer than an Excel cell holds (openpyxl cuts it)."""
    cut: list[str] = []
    for index, record in enumerate(records):
        for key, value in record.items():
            if column_map is not None and key not in column_map:
                continue  # not written
            text = to_excel_value(value)
            if isinstance(text, str) and len(text) > EXCEL_MAX_CELL_CHARS:
                cut.append(
                    f"{index + 1} 件目のレコード（{first_row + index} 行目）の「{key}」は"
                    f" {len(text):,} 文字あり、Excel のセル上限に合わせて"
                    f" {EXCEL_MAX_CELL_CHARS:,} 文字に切り詰めました。"
                )
    if len(cut) > _MAX_CUT_WARNINGS:
        rest = len(cut) - _MAX_CUT_WARNINGS
        cut = [*cut[:_MAX_CUT_WARNINGS], f"ほかに {rest} 個のセルも同様に切り詰めました。"]
    return cut
