"""The dataset summary agents read every step (computed once at load).

The contract::

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

from collections import Counter
from typing import Any

import pandas as pd

from keiri_agent.agents.analysis.ops.results import count_distinct

CATEGORICAL_MAX_UNIQUE = 50
CATEGORICAL_MAX_RATIO = 0.05
_SAMPLE_ROWS = 1000


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
