"""Built-in table blocks on records (a JSON list of objects).

``table.filter``, ``table.sort``, ``table.select``, ``table.aggregate``,
``table.concat``. Inputs are never modified; outputs are plain Python values.
Null handling follows pandas: nulls sort last, aggregates skip them. ``table.filter``
orders a number cell against text that reads as a number (``"50000"``, ``"¥50,000"``) as
numbers, so a value typed into a form compares with a number column.
"""

from __future__ import annotations

import math
import operator
import statistics
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import (
    check_columns,
    check_comparable,
    columns_of,
    invalid,
    is_null,
    kind_label,
    kind_of,
    records_input,
    same_value,
    sort_records,
    string_list,
)
from keiri_agent.files.column_types import number_value

FILTER_OPS = (
    "==",
    "!=",
    ">",
    ">=",
    "<",
    "<=",
    "in",
    "not_in",
    "contains",
    "not_contains",
    "is_null",
    "not_null",
)
AGGREGATIONS = ("sum", "mean", "median", "count", "nunique", "min", "max")
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def _conditions(inputs: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    raw = inputs.get("conditions") or []
    if not isinstance(raw, list):
        raise invalid(
            "conditions は {col, op, value} のリストで指定してください",
            hint="例: conditions: [{col: 金額, op: '>=', value: 10000}]",
            field="conditions",
        )
    checked = []
    for index, item in enumerate(raw):
        field = f"conditions[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("col"), str):
            raise invalid(
                f"{field} には col（列名）と op（比較の種類）が必要です",
                hint="例: {col: 金額, op: '>=', value: 10000}",
                field=field,
            )
        op, value = item.get("op"), item.get("value")
        if op not in FILTER_OPS:
            raise invalid(
                f"{field}: op {op!r} は使えません",
                hint="使える op: " + ", ".join(FILTER_OPS),
                field=field,
            )
        if op in ("in", "not_in") and not isinstance(value, list):
            raise invalid(
                f"{field}: op {op!r} の value は候補のリストにしてください",
                hint="例: value: [東京, 大阪]",
                field=field,
            )
        if op in _ORDER and kind_of(value) not in {"number", "text"}:
            raise invalid(
                f"{field}: op {op!r} の value は数値か文字列にしてください"
                f"（指定されたのは {kind_label(value)}）",
                field=field,
            )
        if op in ("contains", "not_contains") and is_null(value):
            raise invalid(
                f"{field}: op {op!r} には value（含まれているか調べる文字列）が必要です",
                field=field,
            )
        checked.append((item["col"], op, value))
    return checked


def _width_folded(value: Any) -> Any:
    """Text as NFKC without edge blanks (「第２ハウス」 is 「第2ハウス」, 「ｲﾁｺﾞ」 is 「イチゴ」):
    an office types a value in either width, and a file holds it in the other."""
    return unicodedata.normalize("NFKC", value).strip() if isinstance(value, str) else value


def _same(cell: Any, value: Any) -> bool:
    return same_value(_width_folded(cell), _width_folded(value))


def _contains(cell: Any, value: Any, op: str, field: str) -> bool:
    if isinstance(cell, str) and isinstance(value, str):
        return _width_folded(value) in _width_folded(cell)
    if isinstance(cell, list):
        return any(_same(item, value) for item in cell)
    raise invalid(
        f"{field}: op {op!r} は列が文字列（またはリスト）、value が文字列のときに使えます"
        f"（列の値は {kind_label(cell)}、value は {kind_label(value)}）",
        hint="数値の比較には ==, >, >= などを使ってください",
        field=field,
    )


def _matches(cell: Any, op: str, value: Any, field: str) -> bool:
    if op == "is_null":
        return is_null(cell)
    if op == "not_null":
        return not is_null(cell)
    if op == "==":
        return _same(cell, value)
    if op == "!=":
        return not _same(cell, value)
    if op in ("in", "not_in"):  # 「A社・B社以外」: a blank is none of them, so it is kept
        folded = _width_folded(cell)
        found = any(same_value(folded, _width_folded(option)) for option in value)
        return found if op == "in" else not found
    if op in ("contains", "not_contains"):  # a blank contains nothing
        return (op == "not_contains") != (not is_null(cell) and _contains(cell, value, op, field))
    if is_null(cell):
        return False
    if kind_of(cell) == "number" and isinstance(value, str):
        number = number_value(value)  # "50000", "¥50,000": a number written as text
        value = value if number is None else number
    if kind_of(cell) != kind_of(value):
        raise invalid(
            f"{field}: {kind_label(cell)} {cell!r} と "
            f"{kind_label(value)} {value!r} は比べられません",
            hint="数値は数値と、"
            "文字列は文字列と比べてください（日付は 2024-01-31 の形の文字列で比べられます）",
            field=field,
        )
    return _ORDER[op](cell, value)


class FilterBlock(ProcessingBlock):
    """``table.filter``: keep the records that meet every condition (AND)."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        conditions = _conditions(inputs)
        for index, (column, _, _) in enumerate(conditions):
            check_columns([column], records, f"conditions[{index}].col")
        kept = []
        for number, row in enumerate(records):
            if number % 10_000 == 0:
                ctx.check_cancelled()
            if all(
                _matches(row.get(col), op, value, f"conditions[{i}]")
                for i, (col, op, value) in enumerate(conditions)
            ):
                kept.append(row)
        return {"records": kept}


class SortBlock(ProcessingBlock):
    """``table.sort``: order records by columns (nulls last)."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        by = string_list(inputs, "by", [])
        if not by:
            raise invalid(
                "by に並べ替えの基準にする列を 1 つ以上指定してください",
                hint="例: by: [日付]",
                field="by",
            )
        check_columns(by, records, "by")
        ascending = inputs.get("ascending", True)
        flags = [ascending] * len(by) if isinstance(ascending, bool) else ascending
        if not isinstance(flags, list) or not all(isinstance(f, bool) for f in flags):
            raise invalid(
                "ascending は true / false か、そのリストで指定してください",
                hint="true で昇順、false で降順です",
                field="ascending",
            )
        if len(flags) != len(by):
            raise invalid(
                f"ascending の指定が {len(flags)} 個ありますが、by の列は {len(by)} 個です",
                hint="by の列ごとに 1 つずつ指定するか、true / false を 1 つだけ指定してください",
                field="ascending",
            )
        for column in by:
            check_comparable((row.get(column) for row in records), column, "by")
        limit = inputs.get("limit")
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 1
        ):
            raise invalid(
                f"limit は 1 以上の整数で指定してください（指定されたのは {limit!r}）",
                hint="上位 10 件なら limit: 10。すべての行を残すなら limit を書かないでください",
                field="limit",
            )
        ordered = sort_records(records, by, flags)
        return {"records": ordered if limit is None else ordered[:limit]}


class SelectBlock(ProcessingBlock):
    """``table.select``: keep some columns (in the order given) and/or rename columns."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        columns = inputs.get("columns")
        rename = inputs.get("rename") or {}
        if columns is not None:
            columns = string_list(inputs, "columns", [])
            if len(set(columns)) != len(columns):
                raise invalid(
                    "columns に同じ列が 2 回書かれています",
                    hint="重複を除いてください",
                    field="columns",
                )
            check_columns(columns, records, "columns")
        if not isinstance(rename, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in rename.items()
        ):
            raise invalid(
                "rename は「元の列名: 新しい列名」の対応で指定してください",
                hint="例: rename: {amount: 金額}",
                field="rename",
            )
        if columns is None and not rename:
            raise invalid(
                "columns（残す列）か rename（列名の変更）の少なくとも一方を指定してください",
                field="columns",
            )
        check_columns(rename, records, "rename")
        if columns is not None:
            outside = [name for name in rename if name not in columns]
            if outside:
                raise invalid(
                    f"rename: 列 {outside[0]!r} は columns で選んだ列に入っていません",
                    hint="columns に加えるか、rename から外してください",
                    field="rename",
                )
        final = [
            rename.get(c, c) for c in (columns if columns is not None else columns_of(records))
        ]
        if len(set(final)) != len(final):
            duplicate = next(name for name in final if final.count(name) > 1)
            raise invalid(
                f"rename: 変更後に 2 つの列が同じ名前 {duplicate!r} になります",
                hint="新しい列名が重ならないようにしてください",
                field="rename",
            )
        if columns is None:
            return {"records": [{rename.get(k, k): v for k, v in row.items()} for row in records]}
        return {"records": [{rename.get(c, c): row.get(c) for c in columns} for row in records]}


def _metrics(inputs: Mapping[str, Any]) -> list[tuple[str, str]]:
    raw = inputs.get("metrics")
    if not isinstance(raw, Mapping) or not raw:
        raise invalid(
            "metrics は「列名: 集計方法のリスト」の対応で指定してください",
            hint="例: metrics: {金額: [sum, mean]}",
            field="metrics",
        )
    pairs: list[tuple[str, str]] = []
    for column, aggs in raw.items():
        names = [aggs] if isinstance(aggs, str) else aggs
        if not isinstance(names, list) or not names:
            raise invalid(
                f"metrics.{column}: 集計方法をリストで指定してください",
                hint="使える集計方法: " + ", ".join(AGGREGATIONS),
                field="metrics",
            )
        for agg in names:
            if agg not in AGGREGATIONS:
                raise invalid(
                    f"metrics.{column}: 集計方法 {agg!r} は使えません",
                    hint="使える集計方法: " + ", ".join(AGGREGATIONS),
                    field="metrics",
                )
            if (column, agg) not in pairs:
                pairs.append((str(column), agg))
    return pairs


def _aggregate(values: list[Any], agg: str, column: str) -> Any:
    present = [v for v in values if not is_null(v)]
    if agg == "count":
        return len(present)
    field = f"metrics.{column}"
    if agg == "nunique":  # distinct values, blanks not counted; 1 and True stay apart
        bad = next((v for v in present if isinstance(v, list | dict)), None)
        if bad is not None:
            raise invalid(
                f"{field}: 列 {column!r} に {kind_label(bad)} の値があり、"
                "異なる値の数を数えられません",
                hint="nunique には文字列・数値・真偽値の列を使ってください",
                field=field,
            )
        return len({(kind_of(v), v) for v in present})
    if agg in {"sum", "mean", "median"}:
        bad = next((v for v in present if kind_of(v) != "number"), None)
        if bad is not None:
            raise invalid(
                f"{field}: {agg} は数値の列にだけ使えます。列 {column!r} に "
                f"{kind_label(bad)} {bad!r} があります",
                hint="文字列の列には count, nunique, min, max を使うか、値を数値に直してください",
                field=field,
            )
        if agg == "mean":
            return math.fsum(present) / len(present) if present else None
        if agg == "median":
            return statistics.median(present) if present else None
        if all(isinstance(v, int) for v in present):
            return sum(present)
        return math.fsum(present)
    check_comparable(present, column, field)
    if not present:
        return None
    return min(present) if agg == "min" else max(present)


def _group_key(row: Mapping[str, Any], group_by: list[str]) -> tuple[Any, ...]:
    key: list[tuple[Any, ...]] = []
    for column in group_by:
        value = row.get(column)
        if is_null(value):
            key.append(("null",))
        elif isinstance(value, list | dict):
            raise invalid(
                f"group_by: 列 {column!r} に {kind_label(value)} の値があり、"
                f"グループ分けに使えません",
                hint="グループ分けには文字列・数値・真偽値の列を使ってください",
                field="group_by",
            )
        else:
            key.append((kind_of(value) == "boolean", value))
    return tuple(key)


class AggregateBlock(ProcessingBlock):
    """``table.aggregate``: one record per group with ``{col}_{agg}`` metrics."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        group_by = string_list(inputs, "group_by", [])
        pairs = _metrics(inputs)
        check_columns(group_by, records, "group_by")
        check_columns([column for column, _ in pairs], records, "metrics")
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for row in records:
            groups.setdefault(_group_key(row, group_by), []).append(row)
        if not group_by and not groups:
            groups[()] = []
        output = []
        for rows in groups.values():
            first = rows[0] if rows else {}
            result = {c: None if is_null(first.get(c)) else first.get(c) for c in group_by}
            for column, agg in pairs:
                result[f"{column}_{agg}"] = _aggregate(
                    [row.get(column) for row in rows], agg, column
                )
            output.append(result)
        return {"records": output}


class ConcatBlock(ProcessingBlock):
    """``table.concat``: several record lists one after another."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        tables = inputs.get("tables")
        if not isinstance(tables, list):
            raise invalid(
                "tables は表（行のリスト）のリストで指定してください",
                hint="例: tables: [${a.records}, ${b.records}]",
                field="tables",
            )
        combined: list[dict[str, Any]] = []
        for index, table in enumerate(tables):
            combined += records_input({f"tables[{index}]": table}, f"tables[{index}]")
        if not inputs.get("align_columns", True):
            return {"records": combined}
        columns = columns_of(combined)
        return {"records": [{c: row.get(c) for c in columns} for row in combined]}
