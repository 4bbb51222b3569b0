"""Helpers for blocks that take tables as records (a JSON list of objects).

Missing keys and NaN count as null. Values of one column are compared only when
they are of one kind: numbers (not booleans), text, or booleans.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from keiri_agent.errors import BlockError, BlockErrorCode, closest_match
from keiri_agent.files.column_types import ColumnTypeError, type_columns


def invalid(message: str, *, hint: str | None = None, **details: Any) -> BlockError:
    """An INPUT_VALIDATION_FAILED BlockError."""
    return BlockError(BlockErrorCode.INPUT_VALIDATION_FAILED, message, details=details, hint=hint)


def column_overrides(
    inputs: Mapping[str, Any], example: str, table: str | None = None
) -> dict[str, str] | None:
    """The ``columns`` input (role → header), or ``columns.<table>`` of a block that
    reads several tables; None when not given. ``example`` shows one pair."""
    given = inputs.get("columns")
    where = "columns"
    if table is not None:
        given, where = (given or {}).get(table), f"columns.{table}"
    if given is None:
        return None
    if not isinstance(given, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in given.items()
    ):
        raise invalid(
            f"{where} は 役割: 列名 の対応で書いてください（例: {{{example}}}）",
            field="columns",
        )
    return dict(given)


_KIND_LABELS = {"number": "数値", "text": "文字列", "boolean": "真偽値"}


def kind_label(value: Any) -> str:
    """A Japanese name for the kind of ``value`` (数値, 文字列, リスト, ...)."""
    if value is None:
        return "空（null）"
    if isinstance(value, bool):
        return "真偽値"
    if isinstance(value, int | float):
        return "数値"
    if isinstance(value, str):
        return "文字列"
    if isinstance(value, list | tuple):
        return "リスト"
    if isinstance(value, Mapping):
        return "オブジェクト"
    return type(value).__name__


def unknown_choice_text(kind: str, value: str, choices: Iterable[str]) -> str:
    """``列 'sales ' は見つかりません。'sales' のことですか？（使えるもの: a, b, c）``."""
    options = list(choices)
    suggestion = closest_match(value, options)
    text = f"{kind} {value!r} は見つかりません"
    if suggestion is not None:
        text += f"。{suggestion!r} のことですか？"
    shown = ", ".join(options[:40]) + (", ..." if len(options) > 40 else "")
    return f"{text}（使えるもの: {shown}）"


def records_input(inputs: Mapping[str, Any], name: str = "records") -> list[dict[str, Any]]:
    """``inputs[name]`` as a list of dicts; BlockError naming the first bad row."""
    value = inputs.get(name)
    if not isinstance(value, list):
        raise invalid(
            f"{name} は行（オブジェクト）"
            f"のリストで渡してください（渡されたのは {kind_label(value)}）",
            hint="表データ（例: csv.read や table.filter の records 出力）をつないでください",
            field=name,
        )
    for index, row in enumerate(value):
        if not isinstance(row, Mapping):
            raise invalid(
                f"{name} の {index + 1} 行目（{name}[{index}]）が {kind_label(row)} です。"
                "各行は「列名: 値」のオブジェクトにしてください",
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
        raise invalid(
            f"{name} は列名（文字列）のリストで指定してください",
            hint=f"例: {name}: [取引先, 金額]",
            field=name,
        )
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
                f"{field}: " + unknown_choice_text("列", name, known),
                hint=f"{suggestion!r} ではありませんか？"
                if suggestion
                else "列名は大文字・小文字・空白も区別します。入力の列名を確かめてください",
                field=field,
                column=name,
            )


def type_read_columns(
    records: list[dict[str, Any]], columns: Sequence[str], inputs: Mapping[str, Any]
) -> None:
    """The ``types`` / ``infer_types`` inputs of a reader (``csv.read``, ``excel.read_data``)
    applied to its records in place (:mod:`keiri_agent.files.column_types`)."""
    infer = inputs.get("infer_types")
    if infer is not None and not isinstance(infer, bool):
        raise invalid("infer_types は true か false で指定してください", field="infer_types")
    try:
        type_columns(records, columns, types=inputs.get("types"), infer=infer is not False)
    except ColumnTypeError as error:
        raise invalid(
            error.message, hint=error.hint, **error.details, field="types", error_code=error.code
        ) from None


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
        shown = "、".join(_KIND_LABELS.get(kind, kind) for kind in sorted(kinds))
        raise invalid(
            f"{field}: 列 {column!r} に種類の違う値（{shown}）が混ざっていて比べられません",
            hint="比較や並べ替えの前に、列の値を 1 種類（例: すべて数値）にそろえてください",
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
