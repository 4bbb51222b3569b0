"""Shared openpyxl plumbing for :mod:`keiri_agent.files.excel`: errors, loading, sheets."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from openpyxl import Workbook, load_workbook
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string
from openpyxl.utils.exceptions import CellCoordinatesException
from openpyxl.worksheet._read_only import ReadOnlyWorksheet
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.errors import UserInputError, unknown_choice_message
from keiri_agent.files.bounds import InputBoundsCode, InputBoundsError, check_package
from keiri_agent.limits import current_input_limits

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_COLUMN = re.compile(r"^[A-Za-z]{1,3}$")


class ExcelErrorCode:
    """Stable codes carried by :class:`ExcelError`."""

    NOT_A_WORKBOOK = "EXCEL_NOT_A_WORKBOOK"
    LEGACY_OR_ENCRYPTED = "EXCEL_LEGACY_OR_ENCRYPTED"
    CORRUPT_WORKBOOK = "EXCEL_CORRUPT_WORKBOOK"
    TOO_LARGE = "EXCEL_TOO_LARGE"
    UNKNOWN_SHEET = "EXCEL_UNKNOWN_SHEET"
    INVALID_RANGE = "EXCEL_INVALID_RANGE"
    INVALID_CELL = "EXCEL_INVALID_CELL"
    INVALID_HEADER = "EXCEL_INVALID_HEADER"
    UNKNOWN_COLUMN = "EXCEL_UNKNOWN_COLUMN"
    MERGED_CELL = "EXCEL_MERGED_CELL"
    INVALID_ARGUMENT = "EXCEL_INVALID_ARGUMENT"


class ExcelError(UserInputError):
    """A workbook, sheet, range or cell reference that cannot be used; ``code`` says why."""

    code = "EXCEL_ERROR"


def open_workbook(data: bytes, *, data_only: bool, read_only: bool = False) -> Workbook:
    """Load an .xlsx/.xlsm from bytes, turning every failure into an :class:`ExcelError`.

    The package is checked first (:func:`keiri_agent.files.bounds.check_package`: unpacked
    size, no DTD). A read-only workbook must be closed by the caller (``workbook.close()``).
    """
    if not data:
        raise ExcelError(
            "Excel ファイルが空です（0 バイト）",
            code=ExcelErrorCode.NOT_A_WORKBOOK,
            hint="ファイルをもう一度アップロードしてください。",
        )
    if data.startswith(_OLE_MAGIC):
        raise ExcelError(
            "古い形式（.xls）か、パスワード付きの Excel ファイルのため読めません",
            code=ExcelErrorCode.LEGACY_OR_ENCRYPTED,
            hint="Excel で開き、パスワードを外して「Excel ブック（.xlsx）"
            "」形式で保存し直してください。",
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
        check_package(data, current_input_limits())
    except zipfile.BadZipFile as exc:
        raise ExcelError(
            "Excel ブック（.xlsx）ではありません",
            code=ExcelErrorCode.NOT_A_WORKBOOK,
            hint="Excel で「Excel ブック（.xlsx）」形式で保存し直し、"
            "もう一度アップロードしてください。",
        ) from exc
    except InputBoundsError as exc:
        code = (
            ExcelErrorCode.CORRUPT_WORKBOOK
            if exc.code == InputBoundsCode.XML_DTD
            else ExcelErrorCode.TOO_LARGE
        )
        raise ExcelError(exc.message, hint=exc.hint, details=exc.details, code=code) from None
    if "xl/workbook.xml" not in names:
        raise ExcelError(
            "Excel ブック（.xlsx）ではありません（Word ファイルや通常の ZIP の可能性があります）",
            code=ExcelErrorCode.NOT_A_WORKBOOK,
            hint="Excel で「Excel ブック（.xlsx）」形式で保存したファイルを指定してください。",
        )
    keep_vba = "xl/vbaProject.bin" in names and not read_only
    try:
        workbook = load_workbook(
            io.BytesIO(data), data_only=data_only, keep_vba=keep_vba, read_only=read_only
        )
    except Exception as exc:  # openpyxl raises many types for damaged parts
        raise ExcelError(
            f"Excel ファイルが壊れているため読めません（{type(exc).__name__}: {exc}）",
            code=ExcelErrorCode.CORRUPT_WORKBOOK,
            hint="Excel で開いて修復させ、保存し直してからもう一度アップロードしてください。",
            details={"error": type(exc).__name__},
        ) from exc
    _settle_vba_archive(workbook)
    return workbook


def _settle_vba_archive(workbook: Workbook) -> None:
    """Swap openpyxl's VBA copy (a ZipFile left open for appending) for a read-only one.

    ``load_workbook(keep_vba=True)`` copies the VBA parts into ``ZipFile(BytesIO(), "a")``
    and never closes it; when the workbook is garbage-collected, ``ZipFile.__del__`` writes
    its directory too late and prints "Exception ignored in ZipFile.__del__" on stderr.
    Closing it here and reopening the bytes for reading keeps what ``save`` needs.
    """
    archive = workbook.vba_archive
    if archive is None:
        return
    buffer = archive.fp
    archive.close()
    workbook.vba_archive = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))  # type: ignore[union-attr]


def save_workbook(workbook: Workbook) -> bytes:
    """The workbook serialised to .xlsx bytes."""
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def get_sheet(workbook: Workbook, sheet: str | int | None) -> Worksheet:
    """A worksheet by name or 0-based index (the first sheet when None)."""
    names = workbook.sheetnames
    if sheet is None:
        sheet = 0
    if isinstance(sheet, int):
        if 0 <= sheet < len(names):
            return _as_worksheet(workbook, names[sheet])
        raise ExcelError(
            f"{sheet} 番目のシートはありません。シート: {', '.join(names)}",
            code=ExcelErrorCode.UNKNOWN_SHEET,
            hint="シートの番号（0 から数えます）かシート名を指定し直してください。",
            details={"sheet": sheet, "sheets": names},
        )
    if sheet not in names:
        raise ExcelError(
            unknown_choice_message("シート", sheet, names),
            code=ExcelErrorCode.UNKNOWN_SHEET,
            hint="Excel でシート名（下のタブ）を確認し、同じ名前を指定してください。",
            details={"sheet": sheet, "sheets": names},
        )
    return _as_worksheet(workbook, sheet)


def _as_worksheet(workbook: Workbook, name: str) -> Worksheet:
    ws = workbook[name]
    if not isinstance(ws, Worksheet | ReadOnlyWorksheet):
        raise ExcelError(
            f"シート {name!r} はグラフシートのため、表として読めません",
            code=ExcelErrorCode.UNKNOWN_SHEET,
            hint="表が入っているシートの名前を指定してください。",
            details={"sheet": name, "sheets": workbook.sheetnames},
        )
    return ws


def split_sheet_ref(ref: str) -> tuple[str | None, str]:
    """``"'My Sheet'!B3"`` → ``("My Sheet", "B3")``; ``"B3"`` → ``(None, "B3")``."""
    if "!" not in ref:
        return None, ref.strip()
    sheet, cell = ref.rsplit("!", 1)
    sheet = sheet.strip()
    if len(sheet) >= 2 and sheet[0] == sheet[-1] == "'":
        sheet = sheet[1:-1].replace("''", "'")
    return sheet, cell.strip()


def parse_cell(ref: str) -> tuple[int, int]:
    """``"B3"`` → ``(row 3, column 2)``; anything else is an ``INVALID_CELL`` error."""
    try:
        letters, row = coordinate_from_string(ref.replace("$", "").upper())
        col = column_index_from_string(letters)
    except (ValueError, TypeError, CellCoordinatesException) as exc:
        raise ExcelError(
            f"セル番地 {ref!r} を読み取れません",
            code=ExcelErrorCode.INVALID_CELL,
            hint="セル番地は 'B3' のように列の英字と行番号で書いてください。",
            details={"cell": ref},
        ) from exc
    if row < 1 or row > 1_048_576 or col > 16_384:
        raise ExcelError(
            f"セル番地 {ref!r} はシートの範囲外です",
            code=ExcelErrorCode.INVALID_CELL,
            hint="Excel のシートにあるセル番地（例: 'B3'）を指定してください。",
            details={"cell": ref},
        )
    return row, col


def column_letter_index(text: str) -> int | None:
    """The 1-based index of a column written as letters ("C", "AB"), else None."""
    if not _COLUMN.match(text):
        return None
    index = column_index_from_string(text.upper())
    return index if index <= 16_384 else None


def is_blank(value: Any) -> bool:
    """None or a string of whitespace."""
    return value is None or (isinstance(value, str) and not value.strip())
