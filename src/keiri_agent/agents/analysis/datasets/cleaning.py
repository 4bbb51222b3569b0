"""Cleaning a loaded table: column names, blank cells, and text that holds numbers or dates.

- Column names are stripped and made unique; fully empty rows and unnamed empty
  columns are dropped. A column without a name is named by its position in the file
  (``column_5`` for the fifth column, counted from 1 as a user counts, whether or not
  empty columns before it were dropped); a name taken twice gets ``_2``, ``_3``.
  Cells holding only spaces are missing.
- Text is NFKC-normalised (full-width ``１,２３４``, ``－``, ``￥``, ``（``) before
  detection; the frame keeps the original text of columns that stay text.
- Text columns whose values are all dates (``2025-01-31``, ``2025/01/31``,
  ``2025年1月31日``, optionally with a time) become ``datetime64``. Text columns whose
  values are numbers (``1,234``, ``¥1,234``, ``1,234円``, ``−500``, negatives as
  ``△1,234``/``▲1,234``/``(1,234)``) become numbers when at least 95% of the values
  are; the others become missing and the column's notes say which. Digit strings
  with a leading zero (``007``) are codes and stay text, as do all-ASCII plain digit
  strings an Excel sheet stores as text.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from keiri_agent.errors import DatasetError
from keiri_agent.files.cells import DATE_RE, JA_DATE_RE, MINUS_RE, NUMBER_RE

NUMERIC_MIN_RATIO = 0.95  # a text column this numeric becomes numbers (the rest missing)
_SAMPLE_ROWS = 1000
_DATE_SLICE_ROWS = 65536
_NUMBER_MARKS_RE = r"[\s,¥$\\円()+△▲-]"
_NEGATIVE_RE = r"[-△▲(]"
_CODE_RE = r"0\d+"  # '007': a code, not a number
_PLAIN_NUMBER_RE = r"[-+]?\d+(?:\.\d+)?"


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
    """``files.cells.nfkc`` of each value of a ``str`` series, vectorised (non-ASCII only)."""
    wide = ~text.str.isascii()
    if not wide.any():
        return text.str.strip()
    folded = text[wide].str.normalize("NFKC").str.replace(MINUS_RE, "-", regex=True)
    return text.mask(wide, folded).str.strip()


def _parse_numbers(text: pd.Series) -> pd.Series:
    """Matching strings (``NUMBER_RE``) to numbers; anything else to NaN."""
    matched = text.str.fullmatch(NUMBER_RE).fillna(False).astype(bool)
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
    if head.str.fullmatch(NUMBER_RE).mean() < NUMERIC_MIN_RATIO:
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
    if JA_DATE_RE.fullmatch(sample):
        return "%Y年%m月%d日"
    match = DATE_RE.fullmatch(sample)
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
    # in slices: ``to_datetime`` makes a Python string of every value it parses, which
    # for a whole 1 M-row column is ~100 MB at once
    parts: list[pd.Series] = []
    for start in range(0, len(text), _DATE_SLICE_ROWS):
        part = pd.to_datetime(
            text.iloc[start : start + _DATE_SLICE_ROWS], format=fmt, errors="coerce"
        )
        if part.isna().any():
            return None
        parts.append(part)
    if len({part.dtype for part in parts}) == 1:
        return pd.concat(parts)
    converted = pd.to_datetime(text, format=fmt, errors="coerce")  # e.g. mixed time zones
    if converted.isna().any():
        return None
    return converted


def _convert_column(series: pd.Series) -> tuple[pd.Series, list[str]]:
    """A text column as dates or numbers when it holds them (and notes on what changed)."""
    if not _is_text(series):
        return series, []
    # a ``str`` column is tested in place (no copy of a million ids); others as strings first
    strings = series if series.dtype == "str" else series.dropna().astype("str")
    # blank: empty or only whitespace (also the ideographic space U+3000); missing is not
    blank = (strings.str.isspace() | (strings == "")).fillna(False).astype(bool)
    had_blanks = bool(blank.any())
    if had_blanks:
        series = series.mask(
            blank if strings is series else blank.reindex(series.index, fill_value=False)
        )
    filled = (strings.notna() & ~blank).to_numpy()
    if not filled.any():
        return series, []
    head = _normalized(strings.iloc[np.flatnonzero(filled)[:_SAMPLE_ROWS]])
    if _date_format(str(head.iloc[0])) is None and (
        head.str.fullmatch(NUMBER_RE).mean() < NUMERIC_MIN_RATIO
    ):
        return series, []  # neither dates nor numbers: skip normalising the whole column
    original = strings[filled]
    text = _normalized(original)
    converted = _to_datetime(text)
    if converted is not None:
        return converted.reindex(series.index), []
    numbers = _to_number(text, original, had_blanks=had_blanks)
    if numbers is not None:
        return numbers[0].reindex(series.index), numbers[1]
    return series, []


def clean_columns(frame: pd.DataFrame) -> pd.DataFrame:
    names: list[str] = []
    seen: set[str] = set()
    for position, raw in enumerate(frame.columns):
        name = str(raw).strip()
        unnamed = re.fullmatch(r"Unnamed: (\d+)(_level_\d+)?", name)
        if unnamed:  # the reader's 0-based position in the file, kept when columns are dropped
            name = f"column_{int(unnamed.group(1)) + 1}"
        elif not name:
            name = f"column_{position + 1}"
        unique, counter = name, 2
        while unique in seen:
            unique, counter = f"{name}_{counter}", counter + 1
        seen.add(unique)
        names.append(unique)
    frame = frame.copy(deep=False)
    frame.columns = pd.Index(names)
    return frame


def normalize_frame(frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """The cleaned, converted frame and the notes per column on what conversion changed.

    The frame keeps the reader's index labels (the caller maps them to file rows).
    """
    empty = frame.isna().all(axis=1)
    if empty.any():  # ``dropna(how="all")`` would copy the whole frame even when none is empty
        frame = frame[~empty]
    unnamed = [
        column
        for column in frame.columns
        if re.fullmatch(r"Unnamed: \d+", str(column)) and frame[column].isna().all()
    ]
    frame = frame.drop(columns=unnamed)
    if len(frame.columns) == 0:
        raise DatasetError(
            f"「{name}」に列がありません。",
            hint="見出しの行がある表をアップロードしてください。",
        )
    if len(frame) == 0:
        raise DatasetError(
            f"「{name}」には見出しの行しかなく、データの行がありません。",
            hint="見出しの下にデータの行が 1 行以上あるファイルをアップロードしてください。",
            details={"columns": [str(column).strip() for column in frame.columns]},
        )
    frame = clean_columns(frame)
    changed: dict[str, pd.Series] = {}
    notes: dict[str, list[str]] = {}
    for column in frame.columns:
        series = frame[column]
        converted, column_notes = _convert_column(series)
        if converted is not series:
            changed[column] = converted
        if column_notes:
            notes[column] = column_notes
    # only the converted columns are replaced: rebuilding the frame from every column
    # would copy the untouched ones (the parser's blocks) into new blocks
    frame = frame.copy(deep=False)
    for column, converted in changed.items():
        frame[column] = converted
    return frame, notes


def convert_text_columns(
    frame: pd.DataFrame, columns: list[str]
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """``columns`` of ``frame`` converted again (after rows were removed), and their notes.

    A date column whose total row reads 合計 stays text at first; without that row it
    becomes dates.
    """
    frame = frame.copy(deep=False)
    notes: dict[str, list[str]] = {}
    for column in columns:
        frame[column], column_notes = _convert_column(frame[column])
        if column_notes:
            notes[column] = column_notes
    return frame, notes
