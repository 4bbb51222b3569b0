"""How result tables, numbers, dates and column kinds are shown to people.

The one formatter for every place a person reads an analysis result: the chat
(Streamlit), the report, the terminal and the display fields of the HTTP API. The
machine form (``--json``, the API's ``columns``/``records``) keeps the ops' column
names (``売上_sum``) and ISO values; what a person reads comes from here:

- numbers with thousands separators and few decimals (``1,234,567``, ``84,180.47``);
- dates as dates (``2024-01-01``, not ``2024-01-01T00:00:00``), a month period as
  ``2024-01``, a quarter as ``2024年Q1``, a year as ``2024年``;
- shares as percentages (``37.7 %``);
- computed columns with their Japanese label (``売上（合計）``), taken from the
  table payload's ``labels`` written by the op that built the table;
- a period the data covers only in part marked ``（途中まで）`` (payload ``partial_rows``).

A table payload (``ops.results.table_payload``) may carry, besides ``columns``,
``records`` and ``total_rows``: ``labels`` (column → display label), ``formats``
(column → ``"percent"`` or a period ``"D"``, ``"W"``, ``"M"``, ``"Q"``, ``"Y"``) and
``partial_rows`` (row positions whose period is only partly covered, with
``partial_column`` naming the period column).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

MISSING_LABEL = "(欠損)"
PARTIAL_MARK = "（途中まで）"
AGG_LABELS = {
    "sum": "合計",
    "mean": "平均",
    "median": "中央値",
    "min": "最小",
    "max": "最大",
    "count": "件数",
    "nunique": "ユニーク数",
    "std": "標準偏差",
}
COLUMN_KIND_LABELS = {
    "numeric": "数値",
    "datetime": "日付",
    "categorical": "カテゴリ",
    "text": "テキスト",
    "boolean": "真偽",
}
PERIOD_FORMATS = ("D", "W", "M", "Q", "Y")
_ISO_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2})?)(\.\d+)?$")


def agg_label(column: str, agg: str) -> str:
    """The Japanese label of an aggregated column: ``agg_label("売上", "sum")`` → 売上（合計）."""
    return f"{column}（{AGG_LABELS.get(agg, agg)}）"


def column_kind_label(kind: str) -> str:
    """A dataset summary's column kind in Japanese (numeric → 数値, datetime → 日付 ...)."""
    return COLUMN_KIND_LABELS.get(kind, kind)


def _timestamp(value: Any) -> pd.Timestamp | None:
    if isinstance(value, pd.Timestamp):
        return None if value is pd.NaT else value
    if isinstance(value, dt.datetime | dt.date | np.datetime64):
        stamp = pd.Timestamp(value)
        return None if stamp is pd.NaT else stamp
    if (isinstance(value, str) and _ISO_DATETIME.match(value)) or (
        isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value)
    ):
        try:
            return pd.Timestamp(value)
        except ValueError:
            return None
    return None


def period_label(value: Any, freq: str) -> str:
    """The start of a period shown as the period: ``2024-01`` for a month, ``2024年Q1`` ..."""
    stamp = _timestamp(value)
    if stamp is None:
        return format_value(value)
    if freq == "M":
        return stamp.strftime("%Y-%m")
    if freq == "Q":
        return f"{stamp.year}年Q{(stamp.month - 1) // 3 + 1}"
    if freq == "Y":
        return f"{stamp.year}年"
    if freq == "W":
        return f"{stamp.strftime('%Y-%m-%d')}の週"
    return stamp.strftime("%Y-%m-%d")


def format_number(value: Any) -> str:
    """A number for Japanese text: thousands separators, few decimals; missing → "—"."""
    if value is None or value is pd.NA or value is pd.NaT:
        return "—"
    plain = value.item() if isinstance(value, np.generic) else value
    if isinstance(plain, float) and not math.isfinite(plain):
        return "—"
    if isinstance(plain, bool) or not isinstance(plain, int | float):
        return format_value(plain) or "—"
    if isinstance(plain, int):
        return f"{plain:,}"
    if plain.is_integer() and abs(plain) < 1e15:
        return f"{plain:,.0f}"
    return f"{plain:,.1f}" if abs(plain) >= 100 else f"{plain:.4g}"


def format_percent(value: Any) -> str:
    """A share (0〜1) as a percentage with one decimal: ``0.377`` → ``37.7 %``."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return format_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return f"{value * 100:,.1f} %"


def format_value(value: Any, fmt: str | None = None) -> str:
    """Accounting-friendly text: thousands separators, no exponents, dates without 00:00.

    ``fmt`` is a column format of a table payload (``"percent"`` or a period).

    >>> format_value(73322767), format_value(84180.47), format_value(0.37702)
    ('73,322,767', '84,180.47', '0.377')
    >>> format_value("2024-01-01T00:00:00"), format_value("2024-03-01T00:00:00", "M")
    ('2024-01-01', '2024-03')
    >>> format_value(0.37702, "percent")
    '37.7 %'
    """
    if fmt == "percent":
        return format_percent(value)
    if fmt in PERIOD_FORMATS and value is not None:
        return period_label(value, fmt)
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, np.generic):
        return format_value(value.item())
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if value.is_integer() and abs(value) < 1e15:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
        return f"{value:.3g}"
    stamp = _timestamp(value) if not isinstance(value, str) else None
    if stamp is not None:
        return stamp.strftime("%Y-%m-%d") if stamp == stamp.normalize() else str(stamp)
    text = str(value)
    match = _ISO_DATETIME.match(text)
    if match:
        date, time = match.group(1), match.group(2)
        return date if time in ("00:00", "00:00:00") else f"{date} {time}"
    return text


def display_label(value: Any) -> str:
    """A group key for text and axes: missing → "(欠損)", midnight timestamps as dates."""
    if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
        return MISSING_LABEL
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d") if value == value.normalize() else str(value)
    return str(value)


def column_labels(payload: Mapping[str, Any]) -> list[str]:
    """The display labels of a table payload's columns (computed columns in Japanese)."""
    labels = payload.get("labels") or {}
    return [str(labels.get(column, column)) for column in payload.get("columns", [])]


def display_rows(payload: Mapping[str, Any], limit: int | None = None) -> list[list[str]]:
    """The payload's records as text cells, each column in its format; partial periods marked."""
    columns = list(payload.get("columns", []))
    formats = payload.get("formats") or {}
    partial = set(payload.get("partial_rows") or [])
    partial_column = payload.get("partial_column")
    records = list(payload.get("records", []))
    if limit is not None:
        records = records[:limit]
    rows = []
    for position, record in enumerate(records):
        row = []
        for column in columns:
            cell = format_value(record.get(column), formats.get(column))
            if position in partial and column == partial_column:
                cell += PARTIAL_MARK
            row.append(cell)
        rows.append(row)
    return rows


def display_table(payload: Mapping[str, Any], limit: int | None = None) -> dict[str, Any]:
    """``{"columns": [labels], "rows": [[text]]}``: a table payload as a person reads it."""
    return {"columns": column_labels(payload), "rows": display_rows(payload, limit)}


def display_frame(payload: Mapping[str, Any], limit: int | None = None) -> pd.DataFrame:
    """The payload as a frame of display text with Japanese column labels (for the UI).

    Labels that happen to be equal get a numbered suffix so the frame stays valid.
    """
    labels = column_labels(payload)
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return pd.DataFrame(display_rows(payload, limit), columns=unique)
