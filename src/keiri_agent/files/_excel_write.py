"""Writing records and cells into a workbook, keeping its formatting (see ``excel``).

Values: ``date``/``datetime``/``time`` become real Excel dates (an existing date number
format on the cell is kept; timezone-aware datetimes are written as their wall time);
int/float/Decimal become numbers (NaN and infinities become empty cells); bool stays
bool; lists/dicts become JSON text. With ``coerce_strings`` (default) text that is
plainly a number ("1234", "-1,234.5") or a date ("2024-03-31", "2024/3/31",
"2024-03-31 10:00") is converted too; numbers with leading zeros ("00123") stay text,
and so do numbers with more than 15 significant digits (Excel's precision: the digits
from the first non-zero one, so a 16-digit invoice or card number is never rounded).
Integers of 12 digits or more written into a General cell get the format "0", so a
13-digit 法人番号 shows every digit instead of 1.23457E+12.
Text is never written as a formula or an error code: "=SUM(A1)" is stored as text
(formula injection from data is impossible). Characters Excel forbids are removed.
A cell holds at most :data:`EXCEL_MAX_CELL_CHARS` characters; openpyxl cuts longer
text (``excel.write`` reports it as a warning).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Literal

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE, MergedCell
from openpyxl.utils.cell import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.errors import unknown_choice_message
from keiri_agent.files._xlsx import (
    ExcelError,
    ExcelErrorCode,
    column_letter_index,
    get_sheet,
    is_blank,
    open_workbook,
    parse_cell,
    save_workbook,
    split_sheet_ref,
)

_NUMBER = re.compile(r"^-?(?:0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)(?:\.\d+)?$")
_MAX_DIGITS = 15  # significant digits Excel keeps in a number
EXCEL_MAX_CELL_CHARS = 32_767
_DATE = re.compile(r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$")
_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$")


def write_records(
    workbook: bytes | None,
    records: Sequence[Mapping[str, Any]],
    *,
    sheet: str,
    start_cell: str = "A1",
    header: bool = True,
    mode: Literal["append", "overwrite"] = "append",
    column_map: Mapping[str, str] | None = None,
    create_sheet: bool = False,
    coerce_strings: bool = True,
) -> bytes:
    """Write records as a table whose header row (when ``header``) is at ``start_cell``.

    Columns: ``column_map`` maps record keys to an existing header name or a column
    letter (header names win: a header called "ID" beats column ID); only mapped keys
    are written. Without it, keys go under the existing header cell of the same name,
    else into new columns to the right, in order of first appearance. Header cells are
    written only where empty (an existing "金額" is never renamed).

    ``append`` writes below the last row holding a value in the target columns;
    ``overwrite`` clears the values (not the formatting) of the target columns below
    the header and writes from the first data row.
    """
    if mode not in ("append", "overwrite"):
        raise _arg_error(f"mode must be 'append' or 'overwrite', not {mode!r}")
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise _arg_error(f"record {index} is a {type(record).__name__}, not a mapping")
    book = _load(workbook, sheet)
    if sheet not in book.sheetnames and create_sheet:
        book.create_sheet(sheet)
    ws = get_sheet(book, sheet)
    start_row, start_col = parse_cell(start_cell)
    data_row = start_row + 1 if header else start_row
    existing = _existing_headers(ws, start_row, start_col) if header else {}
    columns = _resolve_columns(records, existing, start_col, column_map)
    if not columns:
        return save_workbook(book)
    last = _last_used_row(ws, data_row, [col for _, col in columns])
    if mode == "overwrite":
        _clear_values(ws, range(data_row, last + 1), [col for _, col in columns])
        next_row = data_row
    else:
        next_row = last + 1
    if header:
        for key, col in columns:
            if is_blank(ws.cell(row=start_row, column=col).value):
                _set(ws, start_row, col, key, coerce=False)
    for offset, record in enumerate(records):
        for key, col in columns:
            if key in record:
                _set(ws, next_row + offset, col, record[key], coerce=coerce_strings)
    return save_workbook(book)


def _clear_values(ws: Worksheet, rows: range, columns: list[int]) -> None:
    """Empty the cells' values (their formatting stays); merged cells are left alone."""
    for row in rows:
        for col in columns:
            cell = ws.cell(row=row, column=col)
            if not isinstance(cell, MergedCell):
                cell.value = None


def write_cells(
    workbook: bytes | None, cells: Mapping[str, Any], *, coerce_strings: bool = True
) -> bytes:
    """Set single cells: keys like ``"Sheet!B3"``, ``"'My Sheet'!B3"`` or ``"B3"`` (first sheet).

    With ``workbook=None`` a new workbook is made and the sheets named are created.
    """
    book = _load(workbook, None)
    fresh = workbook is None
    for ref, value in cells.items():
        sheet_name, cell_ref = split_sheet_ref(ref)
        if fresh and sheet_name is not None and sheet_name not in book.sheetnames:
            book.create_sheet(sheet_name)
        ws = get_sheet(book, sheet_name)
        row, col = parse_cell(cell_ref)
        _set(ws, row, col, value, coerce=coerce_strings)
    if fresh and len(book.sheetnames) > 1 and _is_empty_default(book):
        del book["Sheet"]
    return save_workbook(book)


def to_excel_value(value: Any, *, coerce: bool = True) -> Any:
    """The value as openpyxl should store it (see the module docstring)."""
    if value is None or isinstance(value, bool | int | Decimal):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        return value.replace(tzinfo=None) if value.tzinfo is not None else value
    if isinstance(value, time):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return value
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    if not isinstance(value, str):
        if hasattr(value, "item"):  # numpy scalars
            return to_excel_value(value.item(), coerce=coerce)
        return str(value)
    text = ILLEGAL_CHARACTERS_RE.sub("", value)
    return _coerce_text(text) if coerce else text


def _coerce_text(text: str) -> Any:
    stripped = text.strip()
    if _NUMBER.match(stripped):
        plain = stripped.replace(",", "")
        significant = plain.lstrip("-").replace(".", "").lstrip("0")
        if len(significant) > _MAX_DIGITS:
            return text
        return float(plain) if "." in plain else int(plain)
    try:
        if m := _DATE.match(stripped):
            return date(int(m[1]), int(m[2]), int(m[3]))
        if m := _DATETIME.match(stripped):
            y, mo, d, h, mi, sec = (int(p) for p in m.groups(default="0"))
            return datetime(y, mo, d, h, mi, sec)
    except ValueError:  # "2024-02-30": not a real date, keep the text
        return text
    return text


LONG_INTEGER = 10**11
"""From 12 digits Excel's General format switches to 1.23457E+12: such cells get "0"."""


def _set(ws: Worksheet, row: int, col: int, value: Any, *, coerce: bool) -> None:
    cell = ws.cell(row=row, column=col)
    if isinstance(cell, MergedCell):
        coord = f"{get_column_letter(col)}{row}"
        raise ExcelError(
            f"セル {ws.title}!{coord} は結合されたセルの中にあるため書き込めません",
            code=ExcelErrorCode.MERGED_CELL,
            hint="結合セルの左上のセルを指定するか、Excel でセルの結合を解除してください。",
            details={"sheet": ws.title, "cell": coord},
        )
    converted = to_excel_value(value, coerce=coerce)
    cell.value = converted
    if isinstance(converted, str) and cell.data_type in ("f", "e"):
        cell.data_type = "s"  # text from data is never a formula or an error value
    if (
        isinstance(converted, int)
        and not isinstance(converted, bool)
        and abs(converted) >= LONG_INTEGER
        and cell.number_format == "General"
    ):
        cell.number_format = "0"  # General shows 12+ digits as 1.23457E+12 (法人番号)


def _load(workbook: bytes | None, sheet: str | None) -> Workbook:
    if workbook is not None:
        return open_workbook(workbook, data_only=False)
    book = Workbook()
    if sheet is not None and book.active is not None:
        book.active.title = sheet
    return book


def _is_empty_default(book: Workbook) -> bool:
    if "Sheet" not in book.sheetnames:
        return False
    ws = book["Sheet"]
    return isinstance(ws, Worksheet) and ws.max_row == 1 and ws["A1"].value is None


def _existing_headers(ws: Worksheet, row: int, start_col: int) -> dict[str, int]:
    headers: dict[str, int] = {}
    for col, value in sorted(
        (col, cell.value) for (r, col), cell in _stored_cells(ws) if r == row and col >= start_col
    ):
        if not is_blank(value):
            headers.setdefault(str(value).strip(), col)
    return headers


def _stored_cells(ws: Worksheet) -> list[tuple[tuple[int, int], Any]]:
    """The cells the sheet holds, ``((row, column), cell)``, without walking a grid.

    ``ws.max_row``/``ws.max_column`` count styled-but-empty cells: one at XFD1048576 would
    make a row-by-row walk create billions of cells (see ``keiri_agent.files.bounds``).
    """
    return list(ws._cells.items())


def _resolve_columns(
    records: Sequence[Mapping[str, Any]],
    existing: dict[str, int],
    start_col: int,
    column_map: Mapping[str, str] | None,
) -> list[tuple[str, int]]:
    if column_map is not None:
        resolved = []
        for key, target in column_map.items():
            col = existing.get(str(target).strip()) or column_letter_index(str(target))
            if col is None:
                raise ExcelError(
                    unknown_choice_message("列", str(target), existing),
                    code=ExcelErrorCode.UNKNOWN_COLUMN,
                    hint="見出しの名前をそのまま書くか、'C' のような列の英字を指定してください。",
                    details={"key": key, "target": target, "headers": list(existing)},
                )
            resolved.append((key, col))
        return resolved
    keys = list(dict.fromkeys(str(k) for record in records for k in record))
    next_col = max([start_col - 1, *existing.values()]) + 1
    result = []
    for key in keys:
        if key in existing:
            result.append((key, existing[key]))
        else:
            result.append((key, next_col))
            next_col += 1
    return result


def _last_used_row(ws: Worksheet, data_row: int, cols: list[int]) -> int:
    last = data_row - 1
    wanted = set(cols)
    for (row, col), cell in _stored_cells(ws):
        if row >= data_row and col in wanted and not is_blank(cell.value):
            last = max(last, row)
    return last


def _arg_error(message: str) -> ExcelError:
    return ExcelError(message, code=ExcelErrorCode.INVALID_ARGUMENT)
