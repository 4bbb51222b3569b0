"""DOCX (paragraphs and tables, nested tables too) and XLSX (used ranges) as plain text."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from typing import Any

from keiri_agent.documents.errors import DocumentError, DocumentErrorCode, corrupt
from keiri_agent.files.bounds import (
    InputBoundsCode,
    InputBoundsError,
    check_package,
    read_sheet_cells,
)
from keiri_agent.limits import InputLimits, current_input_limits
from keiri_agent.stopping import check_stop

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_WHOLE_SHEET = (1, 1, 1_048_576, 16_384)  # rows and columns start at A1, as Excel shows them


def check_zip(data: bytes, name: str, kind: str) -> None:
    """Office Open XML is a zip; an OLE file is an encrypted (or pre-2007) Office file.

    The package is then checked by :func:`keiri_agent.files.bounds.check_package`
    (unpacked size, no DTD) before any XML of it is parsed.
    """
    if data.startswith(OLE_MAGIC):
        legacy = ".doc" if kind == "docx" else ".xls"
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_ENCRYPTED,
            name,
            "パスワード付きのファイルか、"
            f"古い {legacy} 形式のファイルの拡張子を .{kind} に変えたものです",
            hint=f"ファイルを開いてパスワードを外し（または .{kind} 形式で「名前を付けて保存」し）"
            "、"
            "もう一度アップロードしてください。",
            details={"kind": kind},
        )
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise corrupt(name, kind)
    try:
        check_package(data, current_input_limits())
    except zipfile.BadZipFile as exc:
        raise corrupt(name, kind, exc) from None
    except InputBoundsError as exc:
        code = (
            DocumentErrorCode.DOCUMENT_CORRUPT
            if exc.code == InputBoundsCode.XML_DTD
            else DocumentErrorCode.DOCUMENT_TOO_LARGE
        )
        raise DocumentError(
            code, name, exc.message, hint=exc.hint or "", details={"kind": kind, **exc.details}
        ) from None


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ") if value.time() != dt.time() else value.date().isoformat()
    return str(value).replace("\t", " ").replace("\n", " ")


def read_docx(data: bytes, name: str, max_chars: int) -> tuple[str, list[str]]:
    """Paragraphs and tables in document order; a table row is tab-separated cells."""
    from docx import Document
    from docx.table import Table

    check_zip(data, name, "docx")
    try:
        document = Document(io.BytesIO(data))
        blocks: list[str] = []
        size = 0
        for item in document.iter_inner_content():
            check_stop()
            lines = [*_table_lines(item), ""] if isinstance(item, Table) else [item.text]
            blocks += lines
            size += sum(len(line) + 1 for line in lines)
            if size > max_chars:
                break
    except Exception as exc:
        raise corrupt(name, "docx", exc) from None
    return "\n".join(blocks).strip("\n"), []


def _table_lines(table: Any) -> list[str]:
    """A row per line (tab-separated cells); a table inside a cell follows its row."""
    from docx.table import Table

    lines: list[str] = []
    for row in table.rows:
        seen: list[Any] = []
        cells: list[str] = []
        nested: list[str] = []
        for cell in row.cells:  # a merged cell repeats: keep it once
            if any(cell._tc is other for other in seen):
                continue
            seen.append(cell._tc)
            paragraphs: list[str] = []
            for part in cell.iter_inner_content():
                if isinstance(part, Table):
                    nested += _table_lines(part)
                elif part.text:  # a cell holding a table ends with an empty paragraph
                    paragraphs.append(part.text)
            cells.append(_cell_text("\n".join(paragraphs)))
        lines.append("\t".join(cells))
        lines += nested
    return lines


def read_xlsx_rows(data: bytes, name: str) -> list[tuple[str, list[list[str]]]]:
    """Each sheet's title and its filled rows as cell texts (cached values), read within
    :mod:`keiri_agent.files.bounds` (rows past the limits are cut): a table such as an FAQ.
    """
    from openpyxl import load_workbook

    check_zip(data, name, "xlsx")
    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise corrupt(name, "xlsx", exc) from None
    limits = current_input_limits()
    try:
        return [(sheet.title, _sheet_rows(sheet, limits)) for sheet in workbook.worksheets]
    except Exception as exc:
        raise corrupt(name, "xlsx", exc) from None
    finally:
        workbook.close()


def _sheet_rows(sheet: Any, limits: InputLimits) -> list[list[str]]:
    """The sheet's rows from its first filled one to its last, an empty row as ``[]``: a
    row keeps its place (a data row's number is the same as in a CSV export)."""
    cells = read_sheet_cells(sheet, limits, area=_WHOLE_SHEET, cut_to_fit=True)
    numbers = sorted(cells.cells)
    filled = dict(zip(numbers, cells.filled_rows(), strict=True))
    if not numbers:
        return []
    return [
        [_cell_text(value) for value in filled.get(number, [])]
        for number in range(numbers[0], numbers[-1] + 1)
    ]


def read_xlsx(
    data: bytes, name: str, max_chars: int
) -> tuple[str, list[tuple[int, str]], list[str]]:
    """Each sheet as '## name' and its used range as tab-separated rows (cached values).

    The used range is the real one (cells holding a value), read within
    :mod:`keiri_agent.files.bounds`: rows past the limits are cut with a warning.
    """
    from openpyxl import load_workbook

    check_zip(data, name, "xlsx")
    sheets: list[tuple[int, str]] = []
    warnings: list[str] = []
    size = 0
    rows = 0
    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise corrupt(name, "xlsx", exc) from None
    limits = current_input_limits()
    try:
        for number, sheet in enumerate(workbook.worksheets, start=1):
            lines = [f"## {sheet.title}"]
            cells = read_sheet_cells(sheet, limits, area=_WHOLE_SHEET, cut_to_fit=True)
            warnings += cells.notes
            for row in cells.filled_rows():
                texts = [_cell_text(value) for value in row]
                while texts and not texts[-1]:
                    texts.pop()
                if texts:
                    rows += 1
                    lines.append("\t".join(texts))
                    size += len(lines[-1]) + 1
                if size > max_chars:
                    break
            sheets.append((number, "\n".join(lines)))
            if size > max_chars:
                if number < len(workbook.worksheets):
                    warnings.append(
                        f"文字数の上限に達したため、シート「{sheet.title}」より後のシートは読み込んでいません"
                    )
                break
    except Exception as exc:
        raise corrupt(name, "xlsx", exc) from None
    finally:
        workbook.close()
    if not rows:
        return "", [], warnings
    return "\n\n".join(text for _, text in sheets), sheets, warnings
