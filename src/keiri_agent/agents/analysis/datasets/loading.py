"""Reading an uploaded file's bytes into a raw table (before cleaning).

- CSV in UTF-8 (with or without BOM), Shift_JIS/CP932 (Japanese Excel) or UTF-16
  (Excel "Unicode text"), the encoding detected by ``keiri_agent.textcodec`` from the
  file's first MiB and confirmed by the parse (a decode error retries the next
  encoding); ``read_csv`` reads the bytes (or the file itself) in chunks, never a decoded
  copy of the whole file, and text columns are Arrow-backed ``str``. TSV/TXT tab
  separated; XLSX/XLSM through openpyxl.
- The header row is found by ``keiri_agent.files.header`` (the detector the
  ``excel.read_data`` block uses too): title rows above it (a report name, an output
  date) are skipped and named in a note (``先頭の2行（タイトル）を飛ばしました: ...``).
  When it finds no header, the first filled row names the columns (as pandas reads it).
- Before parsing, the work is bounded by ``keiri_agent.files.bounds`` (settings
  ``input_max_*``): a CSV's first lines may not be wider than the column/line limits
  (pandas takes its column count from the header), a workbook is checked unpacked (size,
  no DTD) and only its sheet's real used range is built, refused past the cell limit.
  Loading thus stays linear in the (``max_upload_mb``-capped) input with a capped grid,
  the same guarantee the action limits give, without a child process that would have to
  pickle the whole table back.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO

import pandas as pd

from keiri_agent.errors import DatasetError, closest_match
from keiri_agent.files.bounds import (
    InputBoundsError,
    check_csv_text,
    check_package,
    read_sheet_cells,
)
from keiri_agent.files.header import (
    HEADER_SCAN_ROWS,
    detect_header_row,
    first_filled_row,
    is_filled,
)
from keiri_agent.limits import InputLimits, current_input_limits
from keiri_agent.textcodec import Encoding, TextDecodeError, read_detected

CSV_SUFFIXES = (".csv",)
TAB_SUFFIXES = (".tsv", ".txt")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED_SUFFIXES = CSV_SUFFIXES + TAB_SUFFIXES + EXCEL_SUFFIXES
_BINARY_MAGIC = {
    b"PK\x03\x04": "Excel（.xlsx）などの ZIP 形式のファイル",
    b"\xd0\xcf\x11\xe0": "古い Excel（.xls）などの Office ファイル",
    b"%PDF": "PDF ファイル",
}
_EMPTY_HINT = "見出しの行とデータの行が入ったファイルをアップロードしてください。"
_HEAD_CHARS = 65536  # the text the separator and the header are searched in
_CHUNK = 1 << 16

TextSource = bytes | Path
"""A text table's bytes (an upload) or its file (read in chunks, never whole)."""


RowNumbers = Callable[[Sequence[int]], list[int]]
"""Maps index labels of a loaded frame to the rows as the file counts them (1-based)."""


def dataset_error(message: str, hint: str, **details: Any) -> DatasetError:
    """A ``DatasetError`` with its fix (``hint``) and ``details`` for programs."""
    return DatasetError(message, hint=hint, details=details)


def excel_sheet_names(data: bytes) -> list[str]:
    """The sheet names of an .xlsx/.xlsm file, in workbook order.

    Raises:
        DatasetError: the bytes are not a readable Excel workbook.
    """
    workbook = _open_workbook(data)
    try:
        return list(workbook.sheetnames)
    finally:
        workbook.close()


def _refused(exc: InputBoundsError) -> DatasetError:
    return DatasetError(exc.message, hint=exc.hint, details=exc.details, code=exc.code)


def _open_workbook(data: bytes) -> Any:
    """A read-only openpyxl workbook, after the package checks (caller closes it)."""
    from openpyxl import load_workbook

    try:
        check_package(data, current_input_limits())
        return load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except InputBoundsError as exc:
        raise _refused(exc) from None
    except Exception as exc:  # openpyxl raises many types (ParseError, KeyError...)
        raise dataset_error(
            "Excel ブック（.xlsx）として読み込めません。ファイルが壊れているか、"
            "Excel 以外の形式です。",
            "Excel で開いて「名前を付けて保存」で .xlsx として保存し直すか、"
            "シートを CSV で保存してアップロードしてください。",
            reason=f"{type(exc).__name__}: {exc}",
        ) from exc


def _open(source: TextSource) -> BinaryIO:
    """A seekable binary stream over ``source`` (the caller closes it)."""
    return io.BytesIO(source) if isinstance(source, bytes) else source.open("rb")


def _open_text(source: TextSource, encoding: Encoding) -> IO[str]:
    """``source`` decoded as it streams, lines ending at ``\n`` only (as ``str.split``)."""
    return io.TextIOWrapper(_open(source), encoding=encoding, newline="\n")


def _refuse_binary_magic(start: bytes, name: str) -> None:
    """An Office file or PDF named .csv is named as such."""
    for magic, what in _BINARY_MAGIC.items():
        if start.startswith(magic):
            raise dataset_error(
                f"「{name}」はテキスト（CSV）ファイルではなく、{what}のようです。",
                "Excel ファイルなら拡張子を .xlsx にしてアップロードするか、"
                "シートを CSV で保存してください。",
            )


def _head_text(stream: BinaryIO, encoding: Encoding, limits: InputLimits, lines: int) -> str:
    """The file's first characters, decoded strictly: enough for the header and the bounds.

    At least ``_HEAD_CHARS`` characters, and either ``lines`` whole lines or more
    characters than ``lines`` lines within ``max_line_chars`` can hold (so
    ``check_csv_text`` on it decides as on the whole text). Empty when the file holds
    only white space.

    Raises:
        UnicodeDecodeError: the start of the file is not in ``encoding``.
    """
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    wanted = lines * (limits.max_line_chars + 1)
    parts: list[str] = []
    size = newlines = 0
    filled = False
    while True:
        chunk = stream.read(_CHUNK)
        text = decoder.decode(chunk, final=not chunk)
        filled = filled or (bool(text) and not text.isspace())
        if size <= max(wanted, _HEAD_CHARS):
            parts.append(text)
            size += len(text)
            newlines += text.count("\n")
        if not chunk:
            break
        if filled and size >= _HEAD_CHARS and (newlines >= lines or size > wanted):
            break
    return "".join(parts) if filled else ""


def _csv_row_numbers(source: TextSource, encoding: Encoding, sep: str, skip: int) -> RowNumbers:
    """Index labels of ``pd.read_csv(skiprows=skip)`` (records, blank lines skipped) to lines."""

    def row_numbers(labels: Sequence[int]) -> list[int]:
        starts: list[int] = []
        wanted = max(labels, default=-1)
        with _open_text(source, encoding) as text:
            reader = csv.reader(text, delimiter=sep)
            line = 0
            for record in reader:
                start, line = line + 1, reader.line_num
                if start <= skip or not any(field.strip() for field in record):
                    continue
                starts.append(start)  # the header first, then one entry per data record
                if len(starts) > wanted + 1:
                    break
        return [starts[label + 1] if label + 1 < len(starts) else label + 2 for label in labels]

    return row_numbers


def _read_csv(stream: BinaryIO, encoding: Encoding, sep: str, skip: int) -> pd.DataFrame:
    """``pd.read_csv`` in chunks; a column whose chunks disagree is read again whole.

    Chunked parsing (``low_memory``) keeps pandas' peak memory low, but a column whose
    chunks infer different types (numbers, then text) would come back as a mix: pandas
    warns (``DtypeWarning``) and the file is parsed again in one piece, as text.
    """
    # pandas' C parser reads UTF-8 bytes itself (strictly, skipping a BOM); any other
    # name, "utf-8-sig" included, wraps the file in a decoder and re-encodes every chunk.
    source_encoding = "utf-8" if encoding in ("utf-8", "utf-8-sig") else encoding
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.DtypeWarning)
        frame = pd.read_csv(stream, sep=sep, encoding=source_encoding, skiprows=skip)
    if not any(issubclass(warning.category, pd.errors.DtypeWarning) for warning in caught):
        return frame
    del frame
    stream.seek(0)
    return pd.read_csv(stream, sep=sep, encoding=source_encoding, low_memory=False, skiprows=skip)


def read_text_table(
    source: TextSource, name: str, suffix: str
) -> tuple[pd.DataFrame, list[str], RowNumbers]:
    """A CSV/TSV's raw table, its notes (title rows skipped) and its row numbering.

    Raises:
        DatasetError: not text, empty, too wide, or not a table.
    """
    with _open(source) as stream:
        _refuse_binary_magic(stream.read(8), name)
        try:
            return read_detected(
                stream, lambda encoding: _parse_text(source, stream, encoding, name, suffix)
            )[0]
        except TextDecodeError as exc:
            raise dataset_error(
                f"「{name}」を文字として読めません"
                "（UTF-8 でも Shift_JIS（CP932）でもありません）。",
                "Excel で開いて「CSV UTF-8（コンマ区切り）」で保存し直すか、"
                "本当に CSV ファイルかを確認してください。",
                tried=list(exc.tried),
            ) from exc


def _parse_text(
    source: TextSource, stream: BinaryIO, encoding: Encoding, name: str, suffix: str
) -> tuple[pd.DataFrame, list[str], RowNumbers]:
    """``read_text_table`` in ``encoding`` (``UnicodeDecodeError`` when it is not that)."""
    limits = current_input_limits()
    text = _head_text(stream, encoding, limits, HEADER_SCAN_ROWS + 1)
    if not text:
        raise dataset_error(f"「{name}」は空のファイルです。", _EMPTY_HINT)
    head = text[:_HEAD_CHARS]
    lines = [line for line in head.lstrip().split("\n")[:HEADER_SCAN_ROWS] if line.strip()]
    header = next((line for line in lines if "\t" in line or "," in line), lines[0])
    tabbed = suffix in TAB_SUFFIXES or ("\t" in header and "," not in header)
    sep = "\t" if tabbed else ","
    try:
        check_csv_text(text, sep, limits, lines=HEADER_SCAN_ROWS + 1)
    except InputBoundsError as exc:
        raise _refused(exc) from None
    del text
    reader = csv.reader(io.StringIO(head), delimiter=sep)
    try:
        scanned = list(itertools.islice(reader, HEADER_SCAN_ROWS))
    except csv.Error:
        scanned = []
    notes: list[str] = []
    skip = 0
    header_index = _header_index(scanned)
    if header_index:
        reader = csv.reader(io.StringIO(head), delimiter=sep)
        for _ in range(header_index):
            next(reader)
        skip = reader.line_num
        note = _skipped_note(scanned, header_index)
        notes.extend([note] if note else [])
    del head
    stream.seek(0)
    try:
        frame = _read_csv(stream, encoding, sep, skip)
    except UnicodeDecodeError:
        raise  # not this encoding after all: read_detected tries the next one
    except pd.errors.EmptyDataError as exc:
        raise dataset_error(f"「{name}」は空のファイルです。", _EMPTY_HINT) from exc
    except (pd.errors.ParserError, ValueError) as exc:
        raise dataset_error(
            f"「{name}」を{'タブ' if tabbed else 'コンマ'}区切りの表として読めません"
            "（見出しより項目の多い行があります）。",
            'どの行も見出しと同じ数の項目か、区切り文字を含む値がダブルクォート（"）で'
            "囲まれているかを確認してください。",
            encoding=encoding,
            reason=str(exc).strip(),
        ) from exc
    return frame, notes, _csv_row_numbers(source, encoding, sep, skip)


def _header_index(rows: list[list[Any]]) -> int:
    """The header row (``files.header``), else the first filled row (as pandas reads it)."""
    header = detect_header_row(rows)
    if header is None:
        header = first_filled_row(rows) or 0
    return header


def _skipped_note(rows: list[list[Any]], header: int) -> str | None:
    """The note on the title rows above the header (None when only blank rows were above)."""
    titles = [
        " ".join(str(cell).strip() for cell in row if is_filled(cell)) for row in rows[:header]
    ]
    shown = " / ".join(title[:60] for title in titles if title)
    if not shown:
        return None
    return f"先頭の{header}行（タイトル）を飛ばしました: {shown}"


def _header_names(cells: list[Any]) -> list[str]:
    """Column names from a header row the way ``pandas.read_excel`` makes them."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for position, cell in enumerate(cells):
        if cell is None or (isinstance(cell, float) and cell != cell) or not str(cell).strip():
            name = f"Unnamed: {position}"
        else:
            name = str(cell)
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    return names


def read_excel(
    data: bytes, name: str, sheet: str | int | None
) -> tuple[pd.DataFrame, list[str], RowNumbers]:
    sheets = excel_sheet_names(data)
    if not sheets:
        raise dataset_error(
            f"「{name}」にシートがありません。",
            "シートのあるブックを保存してアップロードしてください。",
        )
    if sheet is None:
        chosen = sheets[0]
    elif isinstance(sheet, int) and not isinstance(sheet, bool):
        if not 0 <= sheet < len(sheets):
            raise dataset_error(
                f"「{name}」にシート番号 {sheet} はありません"
                f"（シートは {len(sheets)} 枚: {', '.join(sheets)}）。",
                "シートを名前か、0 から数えた番号で選んでください。",
                sheets=sheets,
            )
        chosen = sheets[sheet]
    elif sheet in sheets:
        chosen = sheet
    else:
        suggestion = closest_match(str(sheet), sheets)
        raise dataset_error(
            f"「{name}」にシート「{sheet}」はありません"
            + (f"（「{suggestion}」のことですか？）" if suggestion else "")
            + "。シート: "
            + ", ".join(sheets),
            "表示されたシートの中から選んでください。",
            sheets=sheets,
        )
    raw, notes = _sheet_frame(data, name, chosen)
    if len(raw) == 0 or len(raw.columns) == 0:
        raise dataset_error(
            f"「{name}」のシート「{chosen}」は空です。", "データの入ったシートを選んでください。"
        )
    scanned = [
        [None if pd.isna(cell) else cell for cell in row]
        for row in raw.head(HEADER_SCAN_ROWS).itertuples(index=False)
    ]
    header = _header_index(scanned)
    note = _skipped_note(scanned, header)
    notes.extend([note] if note else [])
    frame = raw.iloc[header + 1 :].infer_objects()
    frame.columns = pd.Index(_header_names(list(raw.iloc[header])))
    return frame, notes, _sheet_row_numbers


def _sheet_row_numbers(labels: Sequence[int]) -> list[int]:
    """The sheet's frame is indexed from its row 1 (``A1``): label 0 is row 1."""
    return [label + 1 for label in labels]


def _sheet_frame(data: bytes, name: str, sheet: str) -> tuple[pd.DataFrame, list[str]]:
    """The sheet's real used range from A1 as ``pd.read_excel(header=None, dtype=object)`` reads it.

    With the notes on what the row/column limits cut (the summary must say what was not
    read).

    The cells come from :func:`keiri_agent.files.bounds.read_sheet_cells` (bounded); they
    are converted as pandas' openpyxl reader converts them (error cells are NaN, whole
    floats are ints) and parsed by the same ``TextParser`` (so "NA" and "" become NaN).
    """
    from pandas.io.parsers.readers import TextParser  # type: ignore[attr-defined]  # no stub

    workbook = _open_workbook(data)
    try:
        cells = read_sheet_cells(
            workbook[sheet], current_input_limits(), area=(1, 1, 1_048_576, 16_384)
        )
    except InputBoundsError as exc:
        raise _refused(exc) from None
    except Exception as exc:
        raise dataset_error(
            f"「{name}」のシート「{sheet}」を読み込めません。",
            "Excel で開いて保存し直すか、シートを CSV で保存してアップロードしてください。",
            reason=f"{type(exc).__name__}: {exc}",
        ) from exc
    finally:
        workbook.close()
    rows = [[_pandas_cell(cell) for cell in row] for row in cells.grid()]
    for row in rows:
        while row and row[-1] == "":
            row.pop()
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        return pd.DataFrame(), cells.notes
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    return TextParser(rows, header=None, dtype=object, skip_blank_lines=False).read(), cells.notes


def _pandas_cell(cell: tuple[Any, str] | None) -> Any:
    """A cell as ``pandas``' openpyxl reader converts it (``_convert_cell``)."""
    if cell is None:
        return ""
    value, data_type = cell
    if data_type == "e":
        return float("nan")
    if data_type == "n" and isinstance(value, int | float) and not isinstance(value, bool):
        whole = int(value)
        return whole if whole == value else float(value)
    return value
