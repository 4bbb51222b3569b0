"""Bounds checked before a spreadsheet or a CSV is parsed: one place for every reader.

A few kilobytes can declare a huge table: an .xlsx whose only far cell is an empty,
styled one at XFD1048576 (openpyxl then pads every row to 16,384 columns and fills a
million rows), or a CSV line of a million commas (pandas builds a million columns).
Every reader of untrusted tables (analysis loading, ``excel.read_data``, document text
extraction, the FAQ CSV reader) goes through this module, so they share the same limits
(settings ``input_max_*``, installed when ``Settings`` are built: ``keiri_agent.limits``):

- :func:`check_package`: the workbook's XML parts declare at most
  ``input_max_unpacked_mb`` once unpacked, and none has a DTD (entity declarations are
  refused: no XML in an Office file needs them);
- :func:`read_sheet_cells`: one streaming pass over the sheet XML keeps only cells that
  hold a value (styled-but-empty cells and the stored ``<dimension>`` are ignored), refuses
  more than ``input_max_cells`` value cells (text extraction stops there instead), then
  cuts the *real* used range to ``input_max_rows`` x ``input_max_columns`` with a
  "truncated" note (which rows/columns held the values not read, how many cells), and
  refuses a range whose grid would exceed ``input_max_cells`` before any grid is built
  (text extraction walks the filled rows only, never a grid);
- :func:`check_csv_text`: the first lines of a CSV, where the header is searched (the
  header fixes the number of columns pandas builds; a longer data line is a parse error),
  have at most ``input_max_columns`` fields and ``input_max_line_chars`` characters.

With these checks the work of a parse is linear in the (size-capped) input and the grid
it builds is capped, so loading needs no child process of its own (a child would have to
pickle the whole loaded table back to the parent, doubling peak memory and time).
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.limits import InputLimits
from keiri_agent.stopping import check_stop

_PROLOG_SCAN_BYTES = 1 << 20


class InputBoundsCode:
    """Stable codes of :class:`InputBoundsError`."""

    TOO_MANY_CELLS = "INPUT_TOO_MANY_CELLS"
    TOO_MANY_COLUMNS = "INPUT_TOO_MANY_COLUMNS"
    LINE_TOO_LONG = "INPUT_LINE_TOO_LONG"
    UNPACKED_TOO_LARGE = "INPUT_UNPACKED_TOO_LARGE"
    XML_DTD = "INPUT_XML_DTD"


class InputBoundsError(UserInputError):
    """A table refused before parsing; readers re-raise it as their own error type."""

    code = "INPUT_TOO_LARGE"


def _setting_hint(setting: str) -> str:
    return (
        "不要な行・列（書式だけの行や列も含みます）を削除するか、必要な範囲だけを別のファイルに"
        f"保存してください。上限を上げるには設定 KEIRI_AGENT_{setting.upper()} を変更します。"
    )


def check_package(data: bytes, limits: InputLimits) -> None:
    """Refuse a workbook (or other Office package) too large unpacked or with a DTD.

    Raises:
        InputBoundsError: declared size over the limit, or an XML part declares a DTD.
        zipfile.BadZipFile: the bytes are not a ZIP package (callers report it their way).
    """
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        infos = package.infolist()
        unpacked = sum(info.file_size for info in infos)
        if unpacked > limits.max_unpacked_bytes:
            raise InputBoundsError(
                f"ファイルを展開すると {unpacked / 2**20:,.0f} MB になり、上限"
                f"（{limits.max_unpacked_bytes / 2**20:,.0f} MB）を超えるため読み込みません。",
                hint=_setting_hint("input_max_unpacked_mb"),
                code=InputBoundsCode.UNPACKED_TOO_LARGE,
                details={"unpacked_bytes": unpacked, "limit": limits.max_unpacked_bytes},
            )
        for info in infos:
            if info.filename.endswith((".xml", ".rels", ".vml")) and _has_dtd(package, info):
                raise InputBoundsError(
                    f"ファイル内の {info.filename} に DTD（エンティティ宣言）が含まれているため"
                    "読み込みません（Excel や Word が保存したファイルには含まれません）。",
                    hint="Excel（または Word）で開いて「名前を付けて保存」し直したファイルを"
                    "使ってください。心当たりのないファイルなら送り主に確認してください。",
                    code=InputBoundsCode.XML_DTD,
                    details={"part": info.filename},
                )


def _has_dtd(package: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """True when the part's prolog (everything before the root element) has ``<!DOCTYPE``."""
    with package.open(info) as part:
        head = part.read(_PROLOG_SCAN_BYTES)
    position = 0
    while True:
        start = head.find(b"<", position)
        if start < 0:
            return False
        if head.startswith(b"<?", start):  # XML declaration or processing instruction
            position = head.find(b"?>", start) + 2
        elif head.startswith(b"<!--", start):
            position = head.find(b"-->", start) + 3
        else:  # <!DOCTYPE ...> before the root element, or the root element itself
            return head.startswith(b"<!", start)
        if position < start:  # unterminated: not well-formed, the parser will say so
            return False


@dataclass
class SheetCells:
    """A sheet's cells holding a value, within the bounds, kept sparse.

    ``cells`` maps a worksheet row to its cells (column → ``(value, data_type)`` as
    openpyxl's parser reads them); ``first_row``/``first_column`` is the top-left corner
    and ``row_count`` x ``column_count`` the (cut) used range; ``notes`` are Japanese
    "truncated" notes for the user.
    """

    cells: dict[int, dict[int, tuple[Any, str]]]
    first_row: int
    first_column: int
    row_count: int = 0
    column_count: int = 0
    notes: list[str] = field(default_factory=list)

    def grid(self) -> list[list[tuple[Any, str] | None]]:
        """The used range as a dense grid (``row_count`` x ``column_count``, None = empty)."""
        grid: list[list[tuple[Any, str] | None]] = [
            [None] * self.column_count for _ in range(self.row_count)
        ]
        for row, columns in self.cells.items():
            line = grid[row - self.first_row]
            for column, cell in columns.items():
                line[column - self.first_column] = cell
        return grid

    def values(self) -> list[list[Any]]:
        """The dense grid of values."""
        return [[None if cell is None else cell[0] for cell in row] for row in self.grid()]

    def filled_rows(self) -> Iterator[list[Any]]:
        """The rows holding a value, top first, each from the first column to its last value."""
        for row in sorted(self.cells):
            columns = self.cells[row]
            line: list[Any] = [None] * (max(columns) - self.first_column + 1)
            for column, (value, _) in columns.items():
                line[column - self.first_column] = value
            yield line


def _parsed_rows(sheet: Any) -> Iterator[list[dict[str, Any]]]:
    """The rows of a read-only openpyxl worksheet as its parser yields them (cells present).

    The same parser ``ReadOnlyWorksheet.iter_rows`` uses, without its padding of every
    row to the sheet's (declared or last-cell) width.
    """
    from openpyxl.worksheet._reader import WorkSheetParser

    workbook = sheet.parent
    with sheet._get_source() as source:
        parser = WorkSheetParser(
            source,
            sheet._shared_strings,
            data_only=workbook.data_only,
            epoch=workbook.epoch,
            date_formats=workbook._date_formats,
            timedelta_formats=workbook._timedelta_formats,
        )
        for _, row in parser.parse():
            check_stop()
            yield row


def read_sheet_cells(
    sheet: Any,
    limits: InputLimits,
    *,
    area: tuple[int, int, int, int] | None = None,
    cut_to_fit: bool = False,
) -> SheetCells:
    """The value cells of a read-only worksheet, bounded (see the module docstring).

    Args:
        sheet: an openpyxl ``ReadOnlyWorksheet`` (``load_workbook(read_only=True)``).
        limits: the bounds.
        area: ``(min_row, min_col, max_row, max_col)`` to read (1-based, inclusive); its
            top-left corner is the grid's (else the top-left value cell is).
        cut_to_fit: stop at ``max_cells`` value cells (with a note) instead of refusing,
            and never refuse for the grid's size (the caller uses :meth:`filled_rows`);
            for text extraction, where a prefix of the sheet is still useful.

    Raises:
        InputBoundsError: more value cells than ``max_cells``, or a used range whose grid
            would exceed it (unless ``cut_to_fit``).
    """
    min_row, min_col, max_row, max_col = area or (1, 1, 1_048_576, 16_384)
    cells: dict[int, dict[int, tuple[Any, str]]] = {}
    count = 0
    top, left, bottom, right = max_row + 1, max_col + 1, 0, 0
    notes: list[str] = []
    for row in _parsed_rows(sheet):
        if not row or not min_row <= row[0]["row"] <= max_row:
            continue
        line = {
            cell["column"]: (cell["value"], cell["data_type"])
            for cell in row
            if cell["value"] is not None
            and cell["value"] != ""
            and min_col <= cell["column"] <= max_col
        }
        if not line:
            continue
        row_number = row[0]["row"]
        cells.setdefault(row_number, {}).update(line)
        count += len(line)
        top, bottom = min(top, row_number), max(bottom, row_number)
        left, right = min(left, *line), max(right, *line)
        if count > limits.max_cells:
            if not cut_to_fit:
                raise InputBoundsError(
                    f"シート「{sheet.title}」に値の入ったセルが上限"
                    f"（{limits.max_cells:,} 個）より多くあるため読み込みません。",
                    hint=_setting_hint("input_max_cells"),
                    code=InputBoundsCode.TOO_MANY_CELLS,
                    details={"sheet": sheet.title, "limit": limits.max_cells},
                )
            notes.append(
                f"シート「{sheet.title}」は値の入ったセルが {limits.max_cells:,} 個を超えるため、"
                "そこまでを読み込みました（上限 KEIRI_AGENT_INPUT_MAX_CELLS）。"
            )
            break
    if not cells:
        return SheetCells({}, min_row, min_col, notes=notes)
    if area is not None:  # a requested area keeps its top-left corner
        top, left = min_row, min_col
    total_rows, total_columns = bottom - top + 1, right - left + 1
    rows, columns = min(total_rows, limits.max_rows), min(total_columns, limits.max_columns)
    if not cut_to_fit and rows * columns > limits.max_cells:
        raise InputBoundsError(
            f"シート「{sheet.title}」の使用範囲が {rows:,} 行 × {columns:,} 列"
            f"（{rows * columns:,} セル）あり、上限（{limits.max_cells:,} セル）を超えるため"
            "読み込みません。離れた場所（例えば右下の端）に値の入ったセルがないか確認してください。",
            hint=_setting_hint("input_max_cells"),
            code=InputBoundsCode.TOO_MANY_CELLS,
            details={"sheet": sheet.title, "rows": rows, "columns": columns},
        )
    if columns < total_columns:
        notes.append(_columns_cut_note(sheet.title, cells, left, total_columns, columns))
    if rows < total_rows:
        notes.append(_rows_cut_note(sheet.title, cells, top, total_rows, rows))
    if rows < total_rows or columns < total_columns:  # cut: drop what is outside
        cells = {
            row_number: {c: cell for c, cell in line.items() if c - left < columns}
            for row_number, line in cells.items()
            if row_number - top < rows
        }
        cells = {row_number: line for row_number, line in cells.items() if line}
    return SheetCells(cells, top, left, rows, columns, notes)


def _columns_cut_note(
    title: str, cells: dict[int, dict[int, Any]], left: int, total: int, kept: int
) -> str:
    """The note on the columns the column limit cut: which ones held values, how many."""
    from openpyxl.utils.cell import get_column_letter

    dropped = [column for line in cells.values() for column in line if column - left >= kept]
    first, last = get_column_letter(min(dropped)), get_column_letter(max(dropped))
    where = f"{first} 列" if first == last else f"{first}〜{last} 列"
    return (
        f"シート「{title}」は {total:,} 列あるため、先頭の {kept:,} 列"
        f"（{get_column_letter(left)}〜{get_column_letter(left + kept - 1)} 列）だけを"
        f"読み込みました。{where}にある値 {len(dropped):,} セルは読み込んでいません"
        "（上限 KEIRI_AGENT_INPUT_MAX_COLUMNS）。"
    )


def _rows_cut_note(
    title: str, cells: dict[int, dict[int, Any]], top: int, total: int, kept: int
) -> str:
    """The note on the rows the row limit cut: which ones held values, how many."""
    dropped = {row: len(line) for row, line in cells.items() if row - top >= kept}
    first, last = min(dropped), max(dropped)
    where = f"{first:,} 行目" if first == last else f"{first:,}〜{last:,} 行目"
    return (
        f"シート「{title}」は {total:,} 行あるため、先頭の {kept:,} 行"
        f"（{top:,}〜{top + kept - 1:,} 行目）だけを読み込みました。{where}にある値 "
        f"{sum(dropped.values()):,} セルは読み込んでいません（上限 KEIRI_AGENT_INPUT_MAX_ROWS）。"
    )


def check_csv_text(text: str, delimiter: str, limits: InputLimits, *, lines: int) -> None:
    """Refuse a CSV whose first ``lines`` lines (where the header is searched) are too wide.

    ``text`` is the decoded file; only its first ``lines`` lines are looked at (the header
    is among them, and pandas refuses a later line with more fields than the header).

    Raises:
        InputBoundsError: a line longer than ``max_line_chars`` or more than
            ``max_columns`` fields in the header line.
    """
    start = 0
    for number in range(lines):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if len(line) > limits.max_line_chars:
            raise InputBoundsError(
                f"{number + 1} 行目が {len(line):,} 文字あり、1 行の上限"
                f"（{limits.max_line_chars:,} 文字）を超えるため読み込みません。",
                hint="区切り文字や改行が正しいか確認し、CSV を保存し直してください。"
                "上限を上げるには設定 KEIRI_AGENT_INPUT_MAX_LINE_CHARS を変更します。",
                code=InputBoundsCode.LINE_TOO_LONG,
                details={"line": number + 1, "limit": limits.max_line_chars},
            )
        if line.count(delimiter) >= limits.max_columns:
            try:
                fields = len(next(csv.reader([line], delimiter=delimiter), []))
            except csv.Error:  # a field longer than csv's own limit: count separators
                fields = line.count(delimiter) + 1
            if fields > limits.max_columns:
                raise InputBoundsError(
                    f"{number + 1} 行目に {fields:,} 列あり、列数の上限"
                    f"（{limits.max_columns:,} 列）を超えるため読み込みません。",
                    hint="区切り文字が正しいか、不要な列がないかを確認してください。"
                    "上限を上げるには設定 KEIRI_AGENT_INPUT_MAX_COLUMNS を変更します。",
                    code=InputBoundsCode.TOO_MANY_COLUMNS,
                    details={"line": number + 1, "columns": fields, "limit": limits.max_columns},
                )
        if end >= len(text):
            return
        start = end + 1
