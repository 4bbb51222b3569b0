"""``table.compute``: derived columns from row expressions (``blocks.expressions``, no eval).

``columns`` maps each new (or replaced) column to an expression; they are applied in
order, so a later expression may use an earlier result. A value problem in a row
(division by zero, text where a number is needed) leaves that cell null and adds one
``problems`` entry ``{row, column, expression, reason}`` (row is 1-based) instead of
failing the whole table; a syntax error or an unknown column fails the block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.expressions import (
    FUNCTIONS,
    Expression,
    ExpressionProblem,
    ExpressionSyntaxError,
    parse_expression,
)
from keiri_agent.blocks.records import columns_of, invalid, records_input
from keiri_agent.errors import closest_match

MAX_PROBLEMS = 1000
"""At most this many problems are listed (the rest of the cells are still null)."""


def _expressions(inputs: Mapping[str, Any]) -> list[tuple[str, Expression]]:
    raw = inputs.get("columns")
    if not isinstance(raw, Mapping) or not raw:
        raise invalid(
            "columns には「新しい列名 → 式」の対応を 1 つ以上指定してください",
            hint="例: {税込金額: 'round(金額 * 1.1, 0)'}",
            field="columns",
        )
    parsed = []
    for name, source in raw.items():
        if not isinstance(name, str) or not name.strip() or not isinstance(source, str):
            raise invalid(
                f"columns.{name}: 列名と式は文字列で指定してください",
                hint="例: {税込金額: 'round(金額 * 1.1, 0)'}",
                field="columns",
            )
        try:
            parsed.append((name, parse_expression(source)))
        except ExpressionSyntaxError as error:
            raise invalid(
                f"columns.{name} の式 {source!r} を読めません: {error.message}",
                hint="使えるもの: 数値、'文字列'、列名（空白を含む列名は [列 名]）、"
                "+ - * / %、比較、and/or/not、関数 " + ", ".join(FUNCTIONS),
                field=f"columns.{name}",
                position=error.position,
            ) from None
    return parsed


def _check_columns(
    expressions: list[tuple[str, Expression]], records: list[dict[str, Any]]
) -> None:
    if not records:
        return
    known = columns_of(records)
    for name, expression in expressions:
        for column in expression.columns:
            if column not in known:
                suggestion = closest_match(column, known)
                raise invalid(
                    f"columns.{name} の式が参照する列 {column!r} がありません",
                    hint=f"{suggestion!r} ではありませんか？"
                    if suggestion
                    else "列名は大文字・小文字・空白も区別します。"
                    "空白を含む列名は [列 名] と書きます",
                    field=f"columns.{name}",
                    column=column,
                )
        known.append(name)


class ComputeBlock(ProcessingBlock):
    """``table.compute``: add or replace columns computed from each row."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        expressions = _expressions(inputs)
        _check_columns(expressions, records)
        problems: list[dict[str, Any]] = []
        output = []
        for number, row in enumerate(records):
            if number % 5_000 == 0:
                ctx.check_cancelled()
            result = dict(row)
            for name, expression in expressions:
                try:
                    result[name] = expression.evaluate(result)
                except ExpressionProblem as problem:
                    result[name] = None
                    if len(problems) < MAX_PROBLEMS:
                        problems.append(
                            {
                                "row": number + 1,
                                "column": name,
                                "expression": expression.source,
                                "reason": str(problem),
                            }
                        )
            output.append(result)
        return {"records": output, "problems": problems}
