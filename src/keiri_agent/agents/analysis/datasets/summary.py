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

``prompt_summary`` is the view a prompt carries: the whole summary while it is small, and
for wide data the columns a request names or resembles in full, the rest by name and kind
(so an LLM prompt stays bounded as the data widens).
"""

from __future__ import annotations

import json
import re
import unicodedata
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


# --- the summary a prompt carries (bounded as the data widens) ---------------------

SUMMARY_BUDGET_TOKENS = 3000
"""A summary whose JSON fits this many tokens (``estimate_tokens``) goes to the model as it
is; a wider one is sent as ``prompt_summary`` describes."""
FULL_COLUMNS_MAX = 12
"""At most this many columns in full when the summary is over budget."""
NAMES_BUDGET_TOKENS = 8000
"""Column names listed by kind up to this many tokens; the rest are only counted."""
_EXAMPLE_CHARS = 40


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def _part_matches(part: str, focus: str, words: set[str]) -> bool:
    if part.isascii():
        return len(part) >= 3 and part in words
    if len(part) < 2:
        return False
    if part in focus:
        return True
    grams = _bigrams(part)
    return len(part) >= 4 and len(grams & _bigrams(focus)) >= max(2, len(grams) / 2)


def column_relevance(column: dict[str, Any], focus: str) -> int:
    """How clearly ``focus`` (a request, the specs that ran, an error) points at a column:
    3 names it, 2 names one of its values, 1 resembles its name (a word of it, or half of
    a Japanese word's character pairs), 0 not at all."""
    text = _normal(focus)
    name = _normal(str(column["name"]))
    if name and name in text:
        return 3
    if any(len(value) >= 2 and _normal(value) in text for value in column.get("values", [])):
        return 2
    words = set(re.findall(r"[a-z0-9]+", text))
    parts = [part for part in re.split(r"[\W_\d]+", name) if part]
    return 1 if any(_part_matches(part, text, words) for part in parts) else 0


def _short(column: dict[str, Any]) -> dict[str, Any]:
    examples = [
        text if len(text) <= _EXAMPLE_CHARS else text[: _EXAMPLE_CHARS - 1] + "…"
        for text in column.get("examples", [])
    ]
    return {**column, "examples": examples}


def estimate_tokens(text: str) -> int:
    """Tokens of summary JSON as cl100k_base counts it, estimated offline: two per non-ASCII
    character (kanji in column names and values often take two or three), one per 3 ASCII
    characters (digits, quotes and commas compress poorly). Fitted on the summaries of
    ``benchmarks/llm_cost.py``: within 20% of cl100k_base on Japanese data."""
    non_ascii = sum(1 for char in text if ord(char) > 127)
    return 2 * non_ascii + -(-(len(text) - non_ascii) // 3)


def _size(value: Any) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False, default=str))


_LAST_NUMBER = re.compile(r"(\d+)(?!.*\d)")
SERIES_MIN = 3
"""Names that differ only in their last number are listed as one series from this many on."""


def _numbers(numbers: list[str]) -> str:
    """``1..3,7,10..12``: runs of consecutive numbers of the same width as ``a..b``."""
    parts: list[str] = []
    start = previous = numbers[0]
    for number in [*numbers[1:], ""]:
        if number and len(number) == len(previous) and int(number) == int(previous) + 1:
            previous = number
            continue
        parts.append(start if start == previous else f"{start}..{previous}")
        start = previous = number
    return ",".join(parts)


def name_series(names: list[str]) -> list[str]:
    """Column names with numbered series folded: names equal but for their last number
    (``勘定科目_1_金額``, ``勘定科目_4_金額`` ...) become one entry
    ``勘定科目_{n}_金額 (n=1,4,...)`` when there are at least ``SERIES_MIN`` of them;
    other names stay as they are. A series stands where its first member stood."""
    groups: dict[str, list[str]] = {}
    for name in names:
        match = _LAST_NUMBER.search(name)
        if match:
            template = name[: match.start()] + "{n}" + name[match.end() :]
            groups.setdefault(template, []).append(match.group(1))
    entries: list[str] = []
    folded: set[str] = set()
    for name in names:
        match = _LAST_NUMBER.search(name)
        template = name[: match.start()] + "{n}" + name[match.end() :] if match else ""
        if match and len(groups[template]) >= SERIES_MIN and "{n}" not in name:
            if template not in folded:
                folded.add(template)
                entries.append(f"{template} (n={_numbers(groups[template])})")
        else:
            entries.append(name)
    return entries


def prompt_summary(
    summary: dict[str, Any], focus: str, *, budget: int = SUMMARY_BUDGET_TOKENS
) -> dict[str, Any]:
    """The summary as a prompt carries it: whole when its JSON fits ``budget`` tokens
    (``estimate_tokens``).

    A wider one keeps the dataset fields and ``column_count``; ``columns`` holds in full
    (examples shortened) the columns ``focus`` names or resembles (``column_relevance``,
    at most ``FULL_COLUMNS_MAX``, the clearest first); ``other_columns`` lists every other
    column by name under its kind, numbered series folded (``name_series``; up to
    ``NAMES_BUDGET_TOKENS`` of names, then
    ``columns_not_listed`` counts the rest); ``other_values`` gives the distinct values of
    low-cardinality other columns, fewest values first, while the view stays in budget.
    """
    if _size(summary) <= budget:
        return summary
    columns = list(summary.get("columns", []))
    scored = [(column_relevance(column, focus), index) for index, column in enumerate(columns)]
    ranked = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]))
    chosen = {index for _, index in ranked[:FULL_COLUMNS_MAX]}
    view = {key: value for key, value in summary.items() if key != "columns"}
    view["column_count"] = len(columns)
    view["columns"] = [_short(columns[i]) for i in sorted(chosen)]
    others = [column for index, column in enumerate(columns) if index not in chosen]
    by_kind: dict[str, list[str]] = {}
    listed = 0
    used = 0
    for column in others:
        name = str(column["name"])
        cost = _size(name) + 1
        if used + cost > NAMES_BUDGET_TOKENS:
            break
        by_kind.setdefault(str(column.get("kind", "text")), []).append(name)
        used += cost
        listed += 1
    if others:
        view["other_columns"] = {kind: name_series(names) for kind, names in by_kind.items()}
    if listed < len(others):
        view["columns_not_listed"] = len(others) - listed
    values: dict[str, list[str]] = {}
    room = budget - _size(view) - _size({"other_values": {}})
    for column in sorted(others[:listed], key=lambda c: len(c.get("values", []))):
        if not column.get("values") or column.get("kind") == "numeric":
            continue
        entry = _size({str(column["name"]): column["values"]})
        if entry > room:
            continue
        values[str(column["name"])] = list(column["values"])
        room -= entry
    if values:
        view["other_values"] = values
    return view
