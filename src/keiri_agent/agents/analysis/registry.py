"""The in-process dataset registry: uploaded files become DataFrames keyed by ``dataset_id``.

The UI (Streamlit, one thread per session) loads a file once; agents then refer to it
by ``dataset_id`` and read its cached summary every step. Loading normalises the data:

- CSV in UTF-8 (with or without BOM), Shift_JIS/CP932 (Japanese Excel) or UTF-16
  (Excel "Unicode text"); TSV/TXT tab separated; XLSX/XLSM through openpyxl.
- Title rows above the header (a report name, an output date: rows with at most half
  as many filled cells as the table is wide) are skipped: the header is the first of
  the first 20 rows that fills the table's dominant width with non-numeric names and
  has rows under it. Otherwise the first row is the header.
- Column names are stripped and made unique; fully empty rows and unnamed empty
  columns are dropped. Cells holding only spaces are missing.
- Text is NFKC-normalised (full-width ``１,２３４``, ``－``, ``￥``, ``（``) before
  detection; the frame keeps the original text of columns that stay text.
- Text columns whose values are all dates (``2025-01-31``, ``2025/01/31``,
  ``2025年1月31日``, optionally with a time) become ``datetime64``. Text columns whose
  values are numbers (``1,234``, ``¥1,234``, ``1,234円``, ``−500``, negatives as
  ``△1,234``/``▲1,234``/``(1,234)``) become numbers when at least 95% of the values
  are; the others become missing and the column's ``notes`` says which. Digit
  strings with a leading zero (``007``) are codes and stay text, as do all-ASCII plain
  digit strings an Excel sheet stores as text.

The summary (computed once at load, returned as a copy) is the contract agents use::

    {"dataset_id": str, "name": str, "rows": int, "memory_mb": float,
     "notes": [str, ...],                      # only when loading changed something
     "columns": [{"name": str, "dtype": str,
                  "kind": "numeric" | "datetime" | "categorical" | "text" | "boolean",
                  "missing": int, "unique": int, "examples": [str, ...],  # <= 3
                  "values": [str, ...],        # only when unique <= 50
                  "notes": [str, ...]}]}       # only when loading changed values

``categorical``: non-numeric with at most 50 distinct values or 5% of the rows.
``values``: every distinct non-missing value (formatted like ``examples``), most
frequent first, ties by text; present for every column with at most
``CATEGORICAL_MAX_UNIQUE`` (50) distinct values, so a reasoner can match a value it
does not see among the examples. ``notes`` (dataset and column): what loading did
that the data does not show, in Japanese (``先頭の2行（タイトル）を飛ばしました: ...``,
``数値でない2件を欠損にしました: ...``).
"""

from __future__ import annotations

import copy
import csv
import io
import itertools
import re
import secrets
import threading
import unicodedata
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from keiri_agent.agents.analysis.results import count_distinct
from keiri_agent.config import Settings
from keiri_agent.errors import DatasetError, UnknownDatasetError, unknown_choice_message

CSV_SUFFIXES = (".csv",)
TAB_SUFFIXES = (".tsv", ".txt")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED_SUFFIXES = CSV_SUFFIXES + TAB_SUFFIXES + EXCEL_SUFFIXES

CATEGORICAL_MAX_UNIQUE = 50
CATEGORICAL_MAX_RATIO = 0.05
_SAMPLE_ROWS = 1000

NUMERIC_MIN_RATIO = 0.95  # a text column this numeric becomes numbers (the rest missing)
_HEADER_SCAN_ROWS = 20

# numbers are matched after NFKC (full-width digits, "￥", "－", "（" fold to ASCII) and
# _MINUS_SIGNS: "1,234" "¥1,234" "1,234円" "-500" "¥-500" "△500" "▲500" "(500)" "¥(500)"
_AMOUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_YEN = r"[¥$\\]"  # a CP932 file's half-width yen (0x5C) decodes as a backslash
_SIGN = rf"(?:[-+△▲]\s*(?:{_YEN}\s*)?|{_YEN}\s*(?:[-+△▲]\s*)?)?"
_NUMBER_RE = (
    rf"{_SIGN}{_AMOUNT}(?:\s*円)?"
    rf"|\(\s*(?:{_YEN}\s*)?{_AMOUNT}(?:\s*円)?\s*\)"
    rf"|{_YEN}\s*\(\s*{_AMOUNT}\s*\)"
)
_NUMBER_MARKS_RE = r"[\s,¥$\\円()+△▲-]"
_NEGATIVE_RE = r"[-△▲(]"
_CODE_RE = r"0\d+"  # '007': a code, not a number
_PLAIN_NUMBER_RE = r"[-+]?\d+(?:\.\d+)?"
_MINUS_SIGNS = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d", "-"))
_MINUS_RE = "[\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d]"
_DATE_RE = re.compile(r"(\d{4})([-/.])\d{1,2}\2\d{1,2}(?:([ T])\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?")
_JA_DATE_RE = re.compile(r"\d{4}年\d{1,2}月\d{1,2}日")
_BINARY_MAGIC = {
    b"PK\x03\x04": "an Excel (.xlsx) or other zip file",
    b"\xd0\xcf\x11\xe0": "an old Excel (.xls) or other Office file",
    b"%PDF": "a PDF file",
}


def _fail(message: str, hint: str, **details: Any) -> DatasetError:
    return DatasetError(message, hint=hint, details=details)


def excel_sheet_names(data: bytes) -> list[str]:
    """The sheet names of an .xlsx/.xlsm file, in workbook order.

    Raises:
        DatasetError: the bytes are not a readable Excel workbook.
    """
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise _fail(
            f"not a valid Excel workbook: {exc}",
            "open the file in Excel and save it again as .xlsx, or export the sheet as CSV",
        ) from exc
    try:
        return list(workbook.sheetnames)
    finally:
        workbook.close()


def _decode(data: bytes, name: str) -> tuple[str, str]:
    """Decode CSV bytes strictly: UTF-16 (BOM), then UTF-8 (BOM optional), then CP932."""
    for magic, what in _BINARY_MAGIC.items():
        if data.startswith(magic):
            raise _fail(
                f"{name!r} is not a text file; it looks like {what}",
                "upload it with its proper suffix (.xlsx), or export the sheet as CSV",
            )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        candidates: tuple[str, ...] = ("utf-16",)
    else:
        candidates = ("utf-8-sig", "cp932")
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        head = text[:65536]
        controls = sum(1 for ch in head if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n")
        if "\x00" in head or controls > max(2, len(head) // 100):
            break
        return text, encoding
    raise _fail(
        f"{name!r} could not be read as text: it is neither UTF-8 nor Shift_JIS (CP932)",
        "save the file as 'CSV UTF-8' from Excel, or check that it is really a CSV file",
        tried=list(candidates),
    )


def _nfkc(value: str) -> str:
    """Full-width digits, signs and marks folded to ASCII (and minus signs to ``-``), stripped."""
    if value.isascii():
        return value.strip()
    return unicodedata.normalize("NFKC", value).translate(_MINUS_SIGNS).strip()


def _looks_like_value(cell: str) -> bool:
    text = _nfkc(cell)
    return bool(
        re.fullmatch(_NUMBER_RE, text) or _DATE_RE.fullmatch(text) or _JA_DATE_RE.fullmatch(text)
    )


def _header_row(rows: list[list[str]]) -> int:
    """The index of the header row among the first rows (0: the first row, or no guess).

    The header is the first row whose filled-cell count equals the table's dominant
    width, holds names (no number or date), follows only title rows (at most half as
    wide, or blank) and has a filled row under it.
    """
    counts = [sum(1 for cell in row if cell.strip()) for row in rows]
    tally = Counter(count for count in counts if count)
    if not tally:
        return 0
    width = max(tally, key=lambda count: (tally[count], count))
    if width < 2:
        return 0
    index = next((i for i, count in enumerate(counts) if count == width), 0)
    if any(count > width // 2 for count in counts[:index]):
        return 0
    if not any(counts[:index]) or not any(counts[index + 1 :]):  # no titles, or no data
        return 0
    if any(_looks_like_value(cell) for cell in rows[index] if cell.strip()):
        return 0
    return index


def _skipped_note(rows: list[list[str]], header: int) -> str:
    titles = [" ".join(cell.strip() for cell in row if cell.strip()) for row in rows[:header]]
    shown = " / ".join(title[:60] for title in titles if title)
    return f"先頭の{header}行（タイトル）を飛ばしました" + (f": {shown}" if shown else "")


def _read_text_table(data: bytes, name: str, suffix: str) -> tuple[pd.DataFrame, list[str]]:
    text, encoding = _decode(data, name)
    if not text or text.isspace():
        raise _fail(f"{name!r} is empty", "upload a file with a header row and data rows")
    head = text[:65536]
    lines = [line for line in head.lstrip().split("\n")[:_HEADER_SCAN_ROWS] if line.strip()]
    header = next((line for line in lines if "\t" in line or "," in line), lines[0])
    tabbed = suffix in TAB_SUFFIXES or ("\t" in header and "," not in header)
    sep = "\t" if tabbed else ","
    reader = csv.reader(io.StringIO(head), delimiter=sep)
    try:
        scanned = list(itertools.islice(reader, _HEADER_SCAN_ROWS))
    except csv.Error:
        scanned = []
    notes: list[str] = []
    skip = 0
    header_index = _header_row(scanned)
    if header_index:
        scanned = scanned[: header_index + 1]
        reader = csv.reader(io.StringIO(head), delimiter=sep)
        for _ in range(header_index):
            next(reader)
        skip = reader.line_num
        notes.append(_skipped_note(scanned, header_index))
    # the C parser reads bytes far faster than a StringIO (which it re-encodes in chunks)
    payload = data if encoding == "utf-8-sig" else text.encode("utf-8")
    del text, head
    try:
        frame = pd.read_csv(
            io.BytesIO(payload), sep=sep, encoding="utf-8-sig", low_memory=False, skiprows=skip
        )
    except pd.errors.EmptyDataError as exc:
        raise _fail(f"{name!r} is empty", "upload a file with a header row and data rows") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        raise _fail(
            f"{name!r} could not be parsed as a {'tab' if tabbed else 'comma'}-separated "
            f"table: {str(exc).strip()}",
            "check that every row has as many fields as the header and that values "
            "containing the delimiter are in double quotes",
            encoding=encoding,
        ) from exc
    return frame, notes


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


def _read_excel(data: bytes, name: str, sheet: str | int | None) -> tuple[pd.DataFrame, list[str]]:
    sheets = excel_sheet_names(data)
    if not sheets:
        raise _fail(f"{name!r} has no sheets", "save a workbook with at least one sheet")
    if sheet is None:
        chosen = sheets[0]
    elif isinstance(sheet, int) and not isinstance(sheet, bool):
        if not 0 <= sheet < len(sheets):
            raise _fail(
                f"{name!r} has no sheet number {sheet} (it has {len(sheets)}: {', '.join(sheets)})",
                "choose a sheet by name or by index from 0",
                sheets=sheets,
            )
        chosen = sheets[sheet]
    elif sheet in sheets:
        chosen = sheet
    else:
        raise _fail(
            f"{name!r}: " + unknown_choice_message("sheet", str(sheet), sheets),
            "choose one of the listed sheets",
            sheets=sheets,
        )
    try:
        # dtype=object keeps text cells such as '007' as text; infer_objects types the rest
        raw = pd.read_excel(
            io.BytesIO(data), sheet_name=chosen, engine="openpyxl", dtype=object, header=None
        )
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        raise _fail(
            f"sheet {chosen!r} of {name!r} could not be read: {exc}",
            "open the file in Excel and save it again, or export the sheet as CSV",
        ) from exc
    if len(raw) == 0 or len(raw.columns) == 0:
        raise _fail(f"sheet {chosen!r} of {name!r} is empty", "choose a sheet that has data")
    scanned = [
        ["" if pd.isna(cell) else str(cell) for cell in row]
        for row in raw.head(_HEADER_SCAN_ROWS).itertuples(index=False)
    ]
    header = _header_row(scanned)
    notes = [_skipped_note(scanned, header)] if header else []
    frame = raw.iloc[header + 1 :].infer_objects()
    frame.columns = pd.Index(_header_names(list(raw.iloc[header])))
    return frame, notes


def _is_text(series: pd.Series) -> bool:
    """Text, or (from Excel) text mixed with numbers in an object column."""
    if isinstance(series.dtype, pd.StringDtype):
        return True
    if series.dtype != object:
        return False
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    return inferred == "string" or (
        inferred in ("mixed", "mixed-integer")
        and any(isinstance(value, str) for value in series.dropna().head(_SAMPLE_ROWS * 10))
    )


def _normalized(text: pd.Series) -> pd.Series:
    """``_nfkc`` of each value of a ``str`` series, vectorised (only non-ASCII values fold)."""
    wide = ~text.str.isascii()
    if not wide.any():
        return text.str.strip()
    folded = text[wide].str.normalize("NFKC").str.replace(_MINUS_RE, "-", regex=True)
    return text.mask(wide, folded).str.strip()


def _parse_numbers(text: pd.Series) -> pd.Series:
    """Matching strings (``_NUMBER_RE``) to numbers; anything else to NaN."""
    matched = text.str.fullmatch(_NUMBER_RE).fillna(False).astype(bool)
    cleaned = text.str.replace(_NUMBER_MARKS_RE, "", regex=True)
    numbers = pd.to_numeric(cleaned.astype(object), errors="coerce").where(matched)
    negative = text.str.contains(_NEGATIVE_RE, regex=True).fillna(False).astype(bool)
    if negative.any():
        numbers = numbers.where(~negative, -numbers)
    return numbers


def _to_number(
    text: pd.Series, original: pd.Series, *, had_blanks: bool = False
) -> tuple[pd.Series, list[str]] | None:
    """Normalised strings to numbers when >= 95% are numbers (the rest NaN, with a note).

    None when too few values are numbers, when a value is a code (``007``), or when
    every value is a plain ASCII digit string and no cell was blank (Excel text cells:
    left as they are).
    """
    head = text.head(_SAMPLE_ROWS)
    if head.str.fullmatch(_NUMBER_RE).mean() < NUMERIC_MIN_RATIO:
        return None
    numbers = _parse_numbers(text)
    valid = numbers.notna()
    if valid.mean() < NUMERIC_MIN_RATIO:
        return None
    if text[valid].str.fullmatch(_CODE_RE).any():
        return None  # leading zeros: codes such as '007'
    plain = bool(valid.all()) and bool(text.str.fullmatch(_PLAIN_NUMBER_RE).all())
    if plain and not had_blanks and bool((original == text).all()):
        return None  # plain digits that pandas kept as text (an Excel text column): leave alone
    notes: list[str] = []
    if not valid.all():
        bad = original[~valid].astype("str")
        shown = "、".join(f"「{value}」" for value in bad.drop_duplicates().head(5))
        notes.append(f"数値でない{len(bad)}件を欠損にしました: {shown}")
    return numbers, notes


def _date_format(sample: str) -> str | None:
    """An explicit strptime format for a sample value, or None when it is no date."""
    if _JA_DATE_RE.fullmatch(sample):
        return "%Y年%m月%d日"
    match = _DATE_RE.fullmatch(sample)
    if match is None:
        return None
    sep, time_sep, seconds, fraction = match.group(2, 3, 4, 5)
    if sep == "-":
        return "ISO8601"  # fast, and accepts a mix of dates and date-times
    fmt = f"%Y{sep}%m{sep}%d"
    if time_sep:
        fmt += f"{time_sep}%H:%M" + (":%S" if seconds else "") + (".%f" if fraction else "")
    return fmt


def _to_datetime(text: pd.Series) -> pd.Series | None:
    """Date strings to datetime64 when every value parses with one guessed format."""
    fmt = _date_format(str(text.iloc[0]))
    if fmt is None:
        return None
    sample = pd.to_datetime(text.head(_SAMPLE_ROWS), format=fmt, errors="coerce")
    if sample.isna().any():
        return None
    converted = pd.to_datetime(text, format=fmt, errors="coerce")
    if converted.isna().any():
        return None
    return converted


def _convert_column(series: pd.Series) -> tuple[pd.Series, list[str]]:
    """A text column as dates or numbers when it holds them (and notes on what changed)."""
    if not _is_text(series):
        return series, []
    original = series.dropna().astype("str")
    blank = original.str.strip() == ""  # also the ideographic space U+3000
    if blank.any():
        series = series.mask(blank.reindex(series.index, fill_value=False))
        original = original[~blank]
    if original.empty:
        return series, []
    head = _normalized(original.head(_SAMPLE_ROWS))
    if _date_format(str(head.iloc[0])) is None and (
        head.str.fullmatch(_NUMBER_RE).mean() < NUMERIC_MIN_RATIO
    ):
        return series, []  # neither dates nor numbers: skip normalising the whole column
    text = _normalized(original)
    converted = _to_datetime(text)
    if converted is not None:
        return converted.reindex(series.index), []
    numbers = _to_number(text, original, had_blanks=bool(blank.any()))
    if numbers is not None:
        return numbers[0].reindex(series.index), numbers[1]
    return series, []


def _clean_columns(frame: pd.DataFrame) -> pd.DataFrame:
    names: list[str] = []
    seen: set[str] = set()
    for position, raw in enumerate(frame.columns):
        name = str(raw).strip()
        if not name or re.fullmatch(r"Unnamed: \d+(_level_\d+)?", name):
            name = f"column_{position + 1}"
        unique, counter = name, 2
        while unique in seen:
            unique, counter = f"{name}_{counter}", counter + 1
        seen.add(unique)
        names.append(unique)
    frame = frame.copy(deep=False)
    frame.columns = pd.Index(names)
    return frame


def _normalize(frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """The cleaned, converted frame and the notes per column on what conversion changed."""
    frame = frame.dropna(axis=0, how="all")
    unnamed = [
        column
        for column in frame.columns
        if re.fullmatch(r"Unnamed: \d+", str(column)) and frame[column].isna().all()
    ]
    frame = frame.drop(columns=unnamed)
    if len(frame.columns) == 0:
        raise _fail(f"{name!r} has no columns", "upload a table with a header row")
    if len(frame) == 0:
        raise _fail(
            f"{name!r} has a header row but no data rows",
            "upload a file with at least one data row under the header",
            columns=[str(column).strip() for column in frame.columns],
        )
    frame = _clean_columns(frame).reset_index(drop=True)
    converted: dict[str, pd.Series] = {}
    notes: dict[str, list[str]] = {}
    for column in frame.columns:
        converted[column], column_notes = _convert_column(frame[column])
        if column_notes:
            notes[column] = column_notes
    return pd.DataFrame(converted), notes


def _kind(series: pd.Series, unique: int, rows: int) -> str:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return "numeric"
    if unique <= CATEGORICAL_MAX_UNIQUE or unique <= CATEGORICAL_MAX_RATIO * rows:
        return "categorical"
    return "text"


def _example(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        if value == value.normalize():
            return value.strftime("%Y-%m-%d")
        return value.isoformat(sep=" ")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _distinct_values(series: pd.Series) -> list[str] | None:
    """Every distinct non-missing value as text, most frequent first, ties by text."""
    try:
        counts = series.value_counts(dropna=True, sort=False)
    except TypeError:  # unhashable values (lists in an added frame)
        return None
    tally: Counter[str] = Counter()
    for value, count in counts.items():
        tally[_example(value)] += int(count)
    return sorted(tally, key=lambda text: (-tally[text], text))


def summarize(
    frame: pd.DataFrame,
    dataset_id: str,
    name: str,
    *,
    notes: list[str] | None = None,
    column_notes: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """The summary agents read every step (the contract in the module docstring).

    Args:
        frame: the loaded data.
        dataset_id: its id.
        name: its file name.
        notes: what loading did to the file as a whole (summary ``notes``).
        column_notes: what loading did to a column's values (that column's ``notes``).
    """
    rows = len(frame)
    columns = []
    for column in frame.columns:
        series = frame[column]
        unique = count_distinct(series)
        head = series.head(_SAMPLE_ROWS).dropna()
        if head.empty:
            head = series.dropna()
        examples = [_example(value) for value in head.unique()[:3]]
        info: dict[str, Any] = {
            "name": str(column),
            "dtype": str(series.dtype),
            "kind": _kind(series, unique, rows),
            "missing": int(series.isna().sum()),
            "unique": unique,
            "examples": examples,
        }
        if unique <= CATEGORICAL_MAX_UNIQUE:
            values = _distinct_values(series)
            if values is not None:
                info["values"] = values
        if column_notes and column_notes.get(str(column)):
            info["notes"] = list(column_notes[str(column)])
        columns.append(info)
    memory = float(frame.memory_usage(index=True, deep=True).sum()) / 2**20
    summary: dict[str, Any] = {
        "dataset_id": dataset_id,
        "name": name,
        "rows": rows,
        "columns": columns,
        "memory_mb": round(memory, 3),
    }
    if notes:
        summary["notes"] = list(notes)
    return summary


class DatasetRegistry:
    """Thread-safe map ``dataset_id -> DataFrame`` with a summary cached at load time.

    ``get`` returns a shallow copy (pandas Copy-on-Write makes it cheap and keeps the
    registered frame safe from a caller's edits). Parsing runs outside the lock.
    """

    def __init__(self, *, max_bytes: int | None = None, settings: Settings | None = None) -> None:
        """Create an empty registry.

        Args:
            max_bytes: largest file accepted; default ``Settings.max_upload_mb`` MiB.
            settings: settings to read the default limit from (``Settings()`` if None).
        """
        if max_bytes is None:
            max_bytes = (settings or Settings()).max_upload_mb * 2**20
        self.max_bytes = max_bytes
        self._lock = threading.RLock()
        self._frames: dict[str, pd.DataFrame] = {}
        self._summaries: dict[str, dict[str, Any]] = {}

    def load_bytes(self, data: bytes, name: str, *, sheet: str | int | None = None) -> str:
        """Parse an uploaded file (format from ``name``'s suffix) and register it.

        Args:
            data: the file's bytes.
            name: the file name; its suffix picks the format.
            sheet: for Excel, a sheet name or 0-based index (default: first sheet).

        Returns:
            The new dataset_id (``ds_`` + 8 hex digits).

        Raises:
            DatasetError: unsupported suffix, empty, too large, undecodable or unparsable.
        """
        suffix = Path(name).suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES:
            raise _fail(
                f"unsupported file type {suffix or '(no suffix)'!r} for {name!r}; supported: "
                + ", ".join(SUPPORTED_SUFFIXES),
                "save the data as CSV (UTF-8 or Shift_JIS), TSV or Excel .xlsx",
                supported=list(SUPPORTED_SUFFIXES),
            )
        self._check_size(len(data), name)
        if not data or data.isspace():
            raise _fail(f"{name!r} is empty", "upload a file with a header row and data rows")
        if suffix in EXCEL_SUFFIXES:
            frame, notes = _read_excel(data, name, sheet)
        else:
            frame, notes = _read_text_table(data, name, suffix)
        frame, column_notes = _normalize(frame, name)
        return self._register(frame, name, notes=notes, column_notes=column_notes)

    def load_path(self, path: str | Path, *, sheet: str | int | None = None) -> str:
        """Load a file from disk (CLI and tests); see ``load_bytes``."""
        file = Path(path)
        try:
            size = file.stat().st_size
        except OSError as exc:
            raise _fail(f"cannot read {str(file)!r}: {exc.strerror}", "check the path") from exc
        self._check_size(size, file.name)
        return self.load_bytes(file.read_bytes(), file.name, sheet=sheet)

    def add_frame(self, df: pd.DataFrame, name: str) -> str:
        """Register an existing DataFrame (column names are cleaned, values kept)."""
        if len(df.columns) == 0 or len(df) == 0:
            raise _fail(
                f"{name!r} has no {'columns' if len(df.columns) == 0 else 'rows'}",
                "register a frame with at least one column and one row",
            )
        return self._register(_clean_columns(df), name)

    def get(self, dataset_id: str) -> pd.DataFrame:
        """The DataFrame (a cheap Copy-on-Write shallow copy); UnknownDatasetError if absent."""
        with self._lock:
            frame = self._frames.get(dataset_id)
            if frame is None:
                raise self._unknown(dataset_id)
            return frame.copy(deep=False)

    def summary(self, dataset_id: str) -> dict[str, Any]:
        """The summary computed at load time (a copy; safe to modify)."""
        with self._lock:
            cached = self._summaries.get(dataset_id)
            if cached is None:
                raise self._unknown(dataset_id)
        return copy.deepcopy(cached)

    def remove(self, dataset_id: str) -> bool:
        """Forget a dataset; True if it was registered."""
        with self._lock:
            self._summaries.pop(dataset_id, None)
            return self._frames.pop(dataset_id, None) is not None

    def ids(self) -> list[str]:
        """Registered dataset_ids, oldest first."""
        with self._lock:
            return list(self._frames)

    def __contains__(self, dataset_id: object) -> bool:
        with self._lock:
            return dataset_id in self._frames

    def __len__(self) -> int:
        with self._lock:
            return len(self._frames)

    def _check_size(self, size: int, name: str) -> None:
        if size > self.max_bytes:
            raise _fail(
                f"{name!r} is {size / 2**20:.1f} MiB; "
                f"the limit is {self.max_bytes / 2**20:.1f} MiB",
                "filter or split the file before uploading, or raise KEIRI_AGENT_MAX_UPLOAD_MB",
                size_bytes=size,
                max_bytes=self.max_bytes,
            )

    def _register(
        self,
        frame: pd.DataFrame,
        name: str,
        *,
        notes: list[str] | None = None,
        column_notes: dict[str, list[str]] | None = None,
    ) -> str:
        dataset_id = "ds_" + secrets.token_hex(4)
        # the slow part, outside the lock
        summary = summarize(frame, dataset_id, name, notes=notes, column_notes=column_notes)
        with self._lock:
            while dataset_id in self._frames:
                dataset_id = "ds_" + secrets.token_hex(4)
            summary["dataset_id"] = dataset_id
            self._frames[dataset_id] = frame
            self._summaries[dataset_id] = summary
        return dataset_id

    def _unknown(self, dataset_id: str) -> UnknownDatasetError:
        registered = list(self._frames)
        if not registered:
            return UnknownDatasetError(
                f"unknown dataset_id {dataset_id!r}: no datasets are loaded",
                hint="upload a CSV or Excel file first",
                details={"dataset_id": dataset_id, "registered": []},
            )
        return UnknownDatasetError(
            unknown_choice_message("dataset_id", dataset_id, registered),
            hint="use one of the registered dataset_ids",
            details={"dataset_id": dataset_id, "registered": registered},
        )
