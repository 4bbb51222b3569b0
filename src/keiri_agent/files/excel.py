"""ExcelManager (seed 002 §2): read sheets as tables, write records and cells with openpyxl.

Reading (:func:`read_sheet`) loads cached values (``data_only``): formulas give the value
Excel last computed, or None for a workbook never opened in Excel. Merged cells give their
value at the top-left cell only. Blank rows inside the table are dropped; trailing blank
rows and columns are trimmed. The sheet is read within :mod:`keiri_agent.files.bounds`
(its real used range, cut at the row/column limits with ``Table.notes``; refused past the
cell limit).

Header detection (``header="auto"``) is :func:`keiri_agent.files.header.detect_header_row`,
the detector the analysis loader uses too: title rows above the header (a report name,
an output date) are passed over; a first row that does not name the columns (numbers,
dates, repeated names) means no header, and columns are named by their letters ("A",
"B", ...). ``header=<int>`` is the worksheet row number (as Excel shows it);
``header=None`` means no header row.

Writing (:func:`write_records`, :func:`write_cells`, in :mod:`._excel_write`) opens the
workbook, changes cell values only and saves to new bytes, so fonts, fills, number
formats, column widths and other sheets are kept. openpyxl does NOT keep charts, images
and shapes, nor some extensions (slicers); VBA is kept for .xlsm. :func:`lost_parts`
compares a workbook before and after writing and names what was lost (in practice
shapes, text boxes, slicers; charts and images openpyxl reads are kept).

Every failure is an :class:`ExcelError` (a ``UserInputError``) with an
:class:`ExcelErrorCode`; unknown sheets list the sheets that exist.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from openpyxl.utils.cell import get_column_letter, range_boundaries
from openpyxl.utils.exceptions import CellCoordinatesException

from keiri_agent.files._excel_write import write_cells, write_records
from keiri_agent.files._xlsx import (
    ExcelError,
    ExcelErrorCode,
    get_sheet,
    is_blank,
    open_workbook,
    split_sheet_ref,
)
from keiri_agent.files.bounds import InputBoundsError, read_sheet_cells
from keiri_agent.files.header import detect_header_row
from keiri_agent.limits import current_input_limits

__all__ = [
    "ExcelError",
    "ExcelErrorCode",
    "ExcelManager",
    "Table",
    "list_sheets",
    "lost_parts",
    "read_sheet",
    "write_cells",
    "write_records",
]

_SHAPE = re.compile(rb"<(?:xdr:)?sp[ >]")
Header = Literal["auto"] | int | None
_MAX_ROW, _MAX_COLUMN = 1_048_576, 16_384


@dataclass(frozen=True)
class Table:
    """A sheet read as records; ``header_row`` is the worksheet row number or None."""

    columns: list[str]
    records: list[dict[str, Any]]
    sheet: str
    header_row: int | None = None
    notes: list[str] = field(default_factory=list)


def _inventory(data: bytes) -> dict[str, int]:
    """How many charts, images, shapes, slicers and timelines a workbook package holds."""
    counts = dict.fromkeys(("グラフ", "画像", "図形", "スライサー", "タイムライン"), 0)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            for name in package.namelist():
                if name.startswith("xl/charts/chart"):
                    counts["グラフ"] += 1
                elif name.startswith("xl/media/"):
                    counts["画像"] += 1
                elif name.startswith("xl/drawings/drawing") and name.endswith(".xml"):
                    counts["図形"] += len(_SHAPE.findall(package.read(name)))
                elif name.startswith("xl/slicers/"):
                    counts["スライサー"] += 1
                elif name.startswith("xl/timelines/"):
                    counts["タイムライン"] += 1
    except (zipfile.BadZipFile, OSError, KeyError):
        pass  # not a package: nothing to compare (opening it fails with a clear error)
    return counts


def lost_parts(before: bytes, after: bytes) -> list[str]:
    """What ``before`` had that ``after`` (the same workbook written by openpyxl) lost.

    openpyxl keeps the charts and images it can read but drops shapes, text boxes,
    slicers and timelines; comparing the two packages says which ones this workbook lost.
    """
    old, new = _inventory(before), _inventory(after)
    return [label for label, count in old.items() if new[label] < count]


def list_sheets(data: bytes) -> list[str]:
    """The workbook's sheet names, in order."""
    workbook = open_workbook(data, data_only=True, read_only=True)
    try:
        return list(workbook.sheetnames)
    finally:
        workbook.close()


def read_sheet(
    data: bytes,
    *,
    sheet: str | int | None = None,
    cell_range: str | None = None,
    header: Header = "auto",
) -> Table:
    """Read one sheet (first when None; name or 0-based index) or a range of it as a Table.

    ``cell_range`` is like ``"B3:F20"``, ``"B:F"`` or ``"Sheet1!B3:F20"``.
    """
    if cell_range is not None:
        range_sheet, cell_range = split_sheet_ref(cell_range)
        if range_sheet is not None:
            if sheet is not None and sheet != range_sheet:
                raise ExcelError(
                    f"セル範囲はシート {range_sheet!r} を指していますが、"
                    f"シートには {sheet!r} が指定されています",
                    code=ExcelErrorCode.INVALID_RANGE,
                    hint="セル範囲のシート名とシートの指定を同じにしてください。",
                )
            sheet = range_sheet
    workbook = open_workbook(data, data_only=True, read_only=True)
    try:
        ws = get_sheet(workbook, sheet)
        area = _bounds(_MAX_ROW, _MAX_COLUMN, cell_range)
        try:
            cells = read_sheet_cells(ws, current_input_limits(), area=area)
        except InputBoundsError as exc:
            raise ExcelError(
                exc.message, hint=exc.hint, details=exc.details, code=ExcelErrorCode.TOO_LARGE
            ) from None
    finally:
        workbook.close()
    min_row, min_col = area[0], area[1]
    grid = cells.values()
    width = max((i + 1 for row in grid for i, v in enumerate(row) if not is_blank(v)), default=0)
    grid = [row[:width] for row in grid]
    header_index = _header_index(grid, width, min_row, header)
    if header_index is None:
        columns = [get_column_letter(min_col + i) for i in range(width)]
    else:
        columns = _column_names(grid[header_index], min_col)
    start = 0 if header_index is None else header_index + 1
    records = [
        dict(zip(columns, row, strict=True))
        for row in grid[start:]
        if not all(is_blank(v) for v in row)
    ]
    header_row = None if header_index is None else min_row + header_index
    return Table(
        columns=columns,
        records=records,
        sheet=ws.title,
        header_row=header_row,
        notes=cells.notes,
    )


def _bounds(max_row: int, max_col: int, cell_range: str | None) -> tuple[int, int, int, int]:
    if not cell_range:
        return 1, 1, max_row, max_col
    try:
        min_c, min_r, max_c, max_r = range_boundaries(cell_range.replace("$", "").upper())
    except (ValueError, TypeError, CellCoordinatesException) as exc:
        raise ExcelError(
            f"セル範囲 {cell_range!r} を読み取れません",
            code=ExcelErrorCode.INVALID_RANGE,
            hint="セル範囲は 'B3:F20' や 'B:F' のように書いてください。",
            details={"cell_range": cell_range},
        ) from exc
    return (
        min_r or 1,
        min_c or 1,
        min(max_r or max_row, max_row),
        min(max_c or max_col, max_col),
    )


def _header_index(grid: list[list[Any]], width: int, min_row: int, header: Header) -> int | None:
    if header is None or width == 0:
        return None
    if header == "auto":
        return detect_header_row(grid)
    if isinstance(header, bool) or not isinstance(header, int):
        raise ExcelError(
            f"見出し行の指定 {header!r} は使えません",
            code=ExcelErrorCode.INVALID_HEADER,
            hint="見出し行には 'auto'（自動で探す）か行番号を指定してください。",
        )
    index = header - min_row
    if not 0 <= index < len(grid):
        raise ExcelError(
            f"見出し行 {header} は読み込んだ範囲（{min_row}〜{min_row + len(grid) - 1} 行目）"
            "の外です",
            code=ExcelErrorCode.INVALID_HEADER,
            hint="見出し行の番号か、読み込むセル範囲を見直してください。",
            details={"header": header},
        )
    return index


def _column_names(row: Sequence[Any], min_col: int) -> list[str]:
    names: list[str] = []
    for i, value in enumerate(row):
        if is_blank(value):
            name = get_column_letter(min_col + i)
        elif isinstance(value, datetime):
            name = value.date().isoformat() if value.time() == datetime.min.time() else str(value)
        else:
            name = str(value).strip()
        base, n = name, 2
        while name in names:
            name, n = f"{base}_{n}", n + 1
        names.append(name)
    return names


class ExcelManager:
    """The seed's ExcelManager: the module functions gathered for callers that want one name."""

    list_sheets = staticmethod(list_sheets)
    read_sheet = staticmethod(read_sheet)
    write_records = staticmethod(write_records)
    write_cells = staticmethod(write_cells)

    @staticmethod
    def read_records(data: bytes, **options: Any) -> list[dict[str, Any]]:
        """Shortcut: ``read_sheet(data, **options).records``."""
        return read_sheet(data, **options).records
