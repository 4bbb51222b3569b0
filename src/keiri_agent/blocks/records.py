"""Helpers for blocks that take tables as records (a JSON list of objects).

Missing keys and NaN count as null. Values of one column are compared only when
they are of one kind: numbers (not booleans), text, or booleans.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from keiri_agent.errors import BlockError, BlockErrorCode, closest_match, unknown_choice_message


def invalid(message: str, *, hint: str | None = None, **details: Any) -> BlockError:
    """An INPUT_VALIDATION_FAILED BlockError."""
    return BlockError(BlockErrorCode.INPUT_VALIDATION_FAILED, message, details=details, hint=hint)


def records_input(inputs: Mapping[str, Any], name: str = "records") -> list[dict[str, Any]]:
    """``inputs[name]`` as a list of dicts; BlockError naming the first bad row."""
    value = inputs.get(name)
    if not isinstance(value, list):
        raise invalid(
            f"{name!r} must be a list of records (objects), not {type(value).__name__}",
            field=name,
        )
    for index, row in enumerate(value):
        if not isinstance(row, Mapping):
            raise invalid(
                f"{name}[{index}] is {type(row).__name__}, not a record (object)",
                field=f"{name}[{index}]",
            )
    return [dict(row) for row in value]


def string_list(inputs: Mapping[str, Any], name: str, default: list[str]) -> list[str]:
    """``inputs[name]`` as a list of strings (``default`` when absent or None)."""
    value = inputs.get(name)
    if value is None:
        return list(default)
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(f"{name!r} must be a list of column names", field=name)
    return list(value)


def columns_of(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every column name, in order of first appearance."""
    seen: dict[str, None] = {}
    for row in records:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def check_columns(names: Iterable[str], records: Sequence[Mapping[str, Any]], field: str) -> None:
    """BlockError for a name that is no column (skipped when there are no records)."""
    if not records:
        return
    known = columns_of(records)
    for name in names:
        if name not in known:
            suggestion = closest_match(name, known)
            raise invalid(
                f"{field}: " + unknown_choice_message("column", name, known),
                hint=f"did you mean {suggestion!r}?"
                if suggestion
                else "column names are case- and space-sensitive",
                field=field,
                column=name,
            )


def is_null(value: Any) -> bool:
    """None, or a float NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def kind_of(value: Any) -> str:
    """'number', 'text', 'boolean' or the type name (for comparisons)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return type(value).__name__


def same_value(left: Any, right: Any) -> bool:
    """Equality where booleans never equal numbers and NaN equals None."""
    if is_null(left) or is_null(right):
        return is_null(left) and is_null(right)
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    return bool(left == right)


def check_comparable(values: Iterable[Any], column: str, field: str) -> None:
    """BlockError when the non-null values of a column mix kinds or cannot be ordered."""
    kinds = {kind_of(v) for v in values if not is_null(v)}
    if len(kinds) > 1 or kinds - {"number", "text", "boolean"}:
        raise invalid(
            f"{field}: column {column!r} holds values of different kinds "
            f"({', '.join(sorted(kinds))}) that cannot be compared",
            hint="make the column one kind (e.g. all numbers) before comparing or sorting",
            field=field,
            column=column,
        )


def sort_records(
    records: list[dict[str, Any]], by: Sequence[str], ascending: Sequence[bool]
) -> list[dict[str, Any]]:
    """Stable multi-column sort; nulls last whatever the direction."""
    rows = list(records)
    for column, up in reversed(list(zip(by, ascending, strict=True))):
        present = [row for row in rows if not is_null(row.get(column))]
        missing = [row for row in rows if is_null(row.get(column))]
        rows = sorted(present, key=itemgetter(column), reverse=not up) + missing
    return rows
