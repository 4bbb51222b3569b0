"""Spec filters on a DataFrame: AND of conditions, evaluated as one boolean mask.

Values are coerced to the column's type before comparing:

- date columns (``datetime64`` or text that looks like dates): a string value is
  parsed ("2025-01-01", "2025/1/1", "2025年1月1日", "2025-01", "2025"). A value
  without a time denotes its whole day/month/year, as pandas' partial-date
  indexing does: ``== "2025-01"`` is all of January, ``<= "2025-01-31"``
  includes the whole of that day. A value that does not parse is a SpecError.
- numeric columns: numbers or numeric strings ("1,000"); anything else is a SpecError.
- text columns: strings; ``contains`` is a substring match (case-sensitive) on the
  string form of any column, blind to full/half width (NFKC: 「ﾃﾞﾝｷ」 finds 「デンキ」,
  「ＡＢＣ」 finds "ABC"), as bank statements write kana half width.

Missing values follow pandas: they never satisfy ``==``, ``<`` ... ``in``
(unless None is listed) and always satisfy ``!=``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from keiri_agent.agents.analysis.ops.specs import Filter
from keiri_agent.errors import SpecError, unknown_choice_message

_ORDERING = (">", ">=", "<", "<=")
_DATE_LIKE = re.compile(r"^\s*\d{4}\s*[-/.年]\s*\d{1,2}")
_YEAR = re.compile(r"^(\d{4})$")
_MONTH = re.compile(r"^(\d{4})[-/.](\d{1,2})$")
_DAY = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$|^(\d{4})(\d{2})(\d{2})$")
_TRUE = {"true", "1", "yes", "y", "はい", "真"}
_FALSE = {"false", "0", "no", "n", "いいえ", "偽"}
_SAMPLE = 50


@dataclass(frozen=True)
class _Span:
    """A date value: the instant ``start``, or the interval [start, end) for a day/month/year."""

    start: pd.Timestamp
    end: pd.Timestamp | None = None


def apply_filters(
    df: pd.DataFrame,
    filters: Sequence[Filter | Mapping[str, Any]],
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows of ``df`` that satisfy every filter (AND).

    Args:
        df: The dataset.
        filters: Conditions; dicts are validated as ``Filter``.
        columns: Keep only these columns (saves copying columns an op does not use).

    Returns:
        ``df`` itself when there are no filters and no column selection; otherwise
        one boolean selection of the rows (and columns).

    Raises:
        SpecError: unknown column, or a value that cannot be compared with the column.
    """
    mask = filter_mask(df, filters)
    if mask is None:
        return df if columns is None else df[list(columns)]
    if columns is None:
        return df[mask]
    return df.loc[mask, list(columns)]


def filter_mask(
    df: pd.DataFrame, filters: Sequence[Filter | Mapping[str, Any]]
) -> np.ndarray | None:
    """The AND of all filters as a boolean numpy array, or None when there are none."""
    mask: np.ndarray | None = None
    for index, item in enumerate(filters):
        condition = _as_filter(item, index)
        if condition.col not in df.columns:
            raise SpecError(
                unknown_choice_message("列", condition.col, [str(c) for c in df.columns]),
                hint="データの概要に表示された列名をそのまま指定してください",
                details={"field": f"filters[{index}].col", "value": condition.col},
            )
        part = _condition(df[condition.col], condition, index)
        mask = part if mask is None else mask & part
    return mask


def parse_date_value(value: Any) -> pd.Timestamp:
    """Parse a date given in a spec ("2025-01-01", "2025/1/1", "2025年1月1日", ...).

    Raises:
        ValueError: the value is not a date.
    """
    return _date_span(value).start


def _as_filter(item: Filter | Mapping[str, Any], index: int) -> Filter:
    if isinstance(item, Filter):
        return item
    try:
        return Filter.model_validate(dict(item))
    except (ValidationError, TypeError, ValueError) as error:
        raise SpecError(
            f"絞り込み条件 filters[{index}] の書き方が正しくありません: {error}",
            hint='絞り込み条件は {"col": 列名, "op": 演算子, "value": 値} の形で書いてください',
            details={"field": f"filters[{index}]"},
        ) from None


def _describe(condition: Filter, index: int) -> str:
    return f"filters[{index}] ({condition.col} {condition.op} {condition.value!r})"


def _error(condition: Filter, index: int, problem: str, hint: str) -> SpecError:
    return SpecError(
        f"{_describe(condition, index)}: {problem}",
        hint=hint,
        details={
            "field": f"filters[{index}].value",
            "col": condition.col,
            "value": condition.value,
        },
    )


def _to_bool_array(result: Any) -> np.ndarray:
    if isinstance(result, pd.Series | pd.Index):
        return np.asarray(result.to_numpy(dtype=bool, na_value=False))
    return np.asarray(result, dtype=bool)


def _condition(column: pd.Series, condition: Filter, index: int) -> np.ndarray:
    op = condition.op
    if op == "is_null":
        return _to_bool_array(column.isna())
    if op == "not_null":
        return _to_bool_array(column.notna())
    if op == "contains":
        return _contains(column, condition, index)
    values = condition.value if op == "in" else [condition.value]
    if op != "in" and isinstance(condition.value, list | tuple | dict | set):
        raise _error(condition, index, "needs a single value", "use 'in' with a list of values")
    if op != "in" and _is_missing(condition.value):
        raise _error(
            condition, index, "cannot compare with a missing value", "use 'is_null' or 'not_null'"
        )
    if isinstance(column.dtype, pd.CategoricalDtype):
        return _categorical(column, condition, index)
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return _dates(column, condition, index, _spans(condition, index, values))
    if pd.api.types.is_bool_dtype(column.dtype):
        coerced: list[Any] = [
            None if _is_missing(v) else _as_bool(v, condition, index) for v in values
        ]
        return _compare(column, op, coerced, condition, index)
    if pd.api.types.is_numeric_dtype(column.dtype):
        coerced = [None if _is_missing(v) else _as_number(v, condition, index) for v in values]
        return _compare(column, op, coerced, condition, index)
    if looks_like_dates(column):
        spans = _try_spans(values)
        if spans is not None:
            return _dates(to_datetime_column(column), condition, index, spans)
        if op in _ORDERING:
            raise _error(
                condition,
                index,
                "is not a date, but the column holds dates",
                'give a date such as "2025-01-01" or "2025年1月1日"',
            )
    return _text(column, condition, index, values)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NaT or value is pd.NA:
        return True
    return isinstance(value, float) and np.isnan(value)


def _compare(
    column: pd.Series, op: str, values: list[Any], condition: Filter, index: int
) -> np.ndarray:
    try:
        if op == "in":
            present = [v for v in values if v is not None]
            mask = _to_bool_array(column.isin(present))
            return mask | _to_bool_array(column.isna()) if len(present) < len(values) else mask
        value = values[0]
        result = {
            "==": lambda: column == value,
            "!=": lambda: column != value,
            ">": lambda: column > value,
            ">=": lambda: column >= value,
            "<": lambda: column < value,
            "<=": lambda: column <= value,
        }[op]()
    except TypeError as error:
        raise _error(
            condition,
            index,
            f"cannot compare with column of type {column.dtype}: {error}",
            "give a value of the column's type",
        ) from None
    return _to_bool_array(result)


def _as_number(value: Any, condition: Filter, index: int) -> float | int:
    if isinstance(value, bool | int | float | np.number):
        return value  # type: ignore[return-value]
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, str):
        text = unicodedata.normalize("NFKC", value).strip()
        text = re.sub(r"[,\s¥$]|円$", "", text)
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    raise _error(
        condition,
        index,
        f"column {condition.col!r} is numeric and {value!r} is not a number",
        "give a number, e.g. 1000",
    )


def _as_bool(value: Any, condition: Filter, index: int) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = unicodedata.normalize("NFKC", value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise _error(condition, index, f"column {condition.col!r} is true/false", "give true or false")


def _contains(column: pd.Series, condition: Filter, index: int) -> np.ndarray:
    value = condition.value
    if _is_missing(value) or isinstance(value, list | tuple | dict | set):
        raise _error(
            condition, index, "needs one text value", 'e.g. {"op": "contains", "value": "株式会社"}'
        )
    needle = unicodedata.normalize("NFKC", str(value))
    present = column.dropna().astype("str")
    # each distinct text normalised once: a column repeats few values over many rows
    held = {text: needle in unicodedata.normalize("NFKC", text) for text in present.unique()}
    found = pd.Series(False, index=column.index)
    found[present.index] = present.map(held).to_numpy(dtype=bool)
    return _to_bool_array(found)


def _categorical(column: pd.Series, condition: Filter, index: int) -> np.ndarray:
    # Evaluate on the (few) categories plus one missing slot, then look up by code:
    # code -1 (missing) indexes the last slot.
    categories = pd.Series(column.cat.categories)
    slots = categories.reindex(range(len(categories) + 1))
    per_slot = _condition(slots, condition, index)
    return per_slot[np.asarray(column.cat.codes)]


def _text(column: pd.Series, condition: Filter, index: int, values: list[Any]) -> np.ndarray:
    op = condition.op
    if op in _ORDERING:
        if not isinstance(values[0], str):
            raise _error(
                condition,
                index,
                f"column {condition.col!r} holds text and {values[0]!r} is not text",
                "compare a text column with text, or pick a numeric column",
            )
        return _compare(column, op, values, condition, index)
    candidates: list[Any] = []
    for value in values:
        candidates.append(value)
        if not isinstance(value, str) and not _is_missing(value):
            candidates.append(str(value))
    if op == "in":
        return _compare(column, "in", candidates, condition, index)
    mask = _compare(column, "in", candidates, condition, index)
    return mask if op == "==" else ~mask


def looks_like_dates(column: pd.Series) -> bool:
    """True for a text column whose first values are dates ("2025-01-01", "2025年1月")."""
    if not (column.dtype == object or isinstance(column.dtype, pd.StringDtype)):
        return False
    sample = column.head(1000).dropna().head(_SAMPLE)
    if sample.empty:
        return False
    if all(isinstance(v, dt.date) for v in sample):
        return True
    return all(isinstance(v, str) and _DATE_LIKE.match(v) for v in sample)


def _normalize_date_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).strip()
    if "年" in text:
        text = re.sub(r"\s*年\s*", "-", text)
        text = re.sub(r"\s*月\s*", "-", text)
        text = re.sub(r"\s*日", "", text).strip().rstrip("-")
    return text


def _date_span(value: Any) -> _Span:
    if isinstance(value, pd.Timestamp | np.datetime64 | dt.datetime):
        return _Span(pd.Timestamp(value))
    if isinstance(value, dt.date):
        start = pd.Timestamp(value)
        return _Span(start, start + pd.Timedelta(days=1))
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a date")
    text = _normalize_date_text(value)
    if match := _YEAR.match(text):
        start = pd.Timestamp(year=int(match[1]), month=1, day=1)
        return _Span(start, start + pd.DateOffset(years=1))
    if match := _MONTH.match(text):
        start = pd.Timestamp(year=int(match[1]), month=int(match[2]), day=1)
        return _Span(start, start + pd.DateOffset(months=1))
    if match := _DAY.match(text):
        year, month, day = (match[1], match[2], match[3]) if match[1] else match.groups()[3:]
        start = pd.Timestamp(year=int(year), month=int(month), day=int(day))
        return _Span(start, start + pd.Timedelta(days=1))
    parsed = pd.to_datetime(text)
    if pd.isna(parsed):
        raise ValueError(f"{value!r} is not a date")
    return _Span(pd.Timestamp(parsed))


def _try_spans(values: list[Any]) -> list[_Span | None] | None:
    try:
        return [None if _is_missing(v) else _date_span(v) for v in values]
    except (ValueError, TypeError, OverflowError):
        return None


def _spans(condition: Filter, index: int, values: list[Any]) -> list[_Span | None]:
    spans: list[_Span | None] = []
    for value in values:
        if _is_missing(value):
            spans.append(None)
            continue
        try:
            spans.append(_date_span(value))
        except (ValueError, TypeError, OverflowError):
            raise _error(
                condition,
                index,
                f"{value!r} is not a date (column {condition.col!r} holds dates)",
                'give a date such as "2025-01-01", "2025/01/01" or "2025年1月1日"',
            ) from None
    return spans


def to_datetime_column(column: pd.Series) -> pd.Series:
    """A datetime64 column from a date column or a text column of dates.

    Text is normalised first ("2025年1月1日" → "2025-1-1"); values that do not
    parse become NaT.
    """
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return column
    values = column
    if column.astype("str").str.contains("年", regex=False, na=False).any():
        values = column.map(lambda v: _normalize_date_text(v) if isinstance(v, str) else v)
    try:
        return pd.to_datetime(values)
    except (ValueError, TypeError):
        return pd.to_datetime(values, format="mixed", errors="coerce")


def _aligned(stamp: pd.Timestamp, tz: Any) -> pd.Timestamp:
    if tz is not None and stamp.tzinfo is None:
        return stamp.tz_localize(tz)
    if tz is None and stamp.tzinfo is not None:
        return stamp.tz_convert(None)
    return stamp


def _dates(
    column: pd.Series, condition: Filter, index: int, spans: list[_Span | None]
) -> np.ndarray:
    tz = getattr(column.dtype, "tz", None)
    op = condition.op

    def equal(span: _Span | None) -> np.ndarray:
        if span is None:
            return _to_bool_array(column.isna())
        start = _aligned(span.start, tz)
        if span.end is None:
            return _to_bool_array(column == start)
        end = _aligned(span.end, tz)
        return _to_bool_array((column >= start) & (column < end))

    if op == "in":
        mask = np.zeros(len(column), dtype=bool)
        for span in spans:
            mask |= equal(span)
        return mask
    span = spans[0]
    assert span is not None  # missing values were rejected in _condition
    if op == "==":
        return equal(span)
    if op == "!=":
        return ~equal(span)
    start = _aligned(span.start, tz)
    end = start if span.end is None else _aligned(span.end, tz)
    if op == ">":
        result = column > start if span.end is None else column >= end
    elif op == ">=":
        result = column >= start
    elif op == "<":
        result = column < start
    else:
        result = column <= start if span.end is None else column < end
    return _to_bool_array(result)
