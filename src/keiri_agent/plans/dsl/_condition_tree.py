"""The tree a parsed condition is made of, and how it is evaluated (see ``plans.dsl.conditions``).

Frozen dataclasses walked by ``evaluate``: no Python evaluation of user text anywhere.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.references import (
    Reference,
    Resolver,
    find_references,
    resolve_value,
    to_text,
)


class ConditionEvaluationError(UserInputError):
    """A condition that parses but cannot be evaluated on these values (e.g. ``'a' > 1``)."""

    code = "CONDITION_TYPE"


@dataclass(frozen=True)
class Literal:
    """A number, text, true/false or null written in the condition."""

    value: Any


@dataclass(frozen=True)
class Ref:
    """A whole ``${...}``: the referenced value with its type."""

    reference: Reference


@dataclass(frozen=True)
class Text:
    """Quoted text with ``${...}`` inside: the references' text forms are joined in."""

    parts: tuple[str | Reference, ...]


@dataclass(frozen=True)
class Data:
    """A ``{left, op, right}`` operand: any literal, resolved with ``resolve_value``."""

    value: Any


@dataclass(frozen=True)
class Not:
    """``not x`` / ``!x``."""

    operand: Node


@dataclass(frozen=True)
class BoolOp:
    """``a and b and ...`` / ``a or b or ...`` (short-circuit, gives a boolean)."""

    op: str
    """'and' or 'or'."""
    operands: tuple[Node, ...]


@dataclass(frozen=True)
class Compare:
    """``left op right``."""

    op: str
    """One of ==, !=, >, >=, <, <=."""
    left: Node
    right: Node


Node = Literal | Ref | Text | Data | Not | BoolOp | Compare

_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real | Decimal) and not isinstance(value, bool)


def _align(left: Any, right: Any) -> tuple[Any, Any]:
    """Decimal against float compares exactly in Python; compare the float's shortest text."""
    if isinstance(left, Decimal) and isinstance(right, float):
        return left, Decimal(repr(right))
    if isinstance(right, Decimal) and isinstance(left, float):
        return Decimal(repr(left)), right
    return left, right


def _show(value: Any) -> str:
    text = repr(value)
    return f"{text[:80]}..." if len(text) > 80 else text


def _describe(node: Node, value: Any) -> str:
    name = f"{node.reference} = " if isinstance(node, Ref) else ""
    kind = "null" if value is None else type(value).__name__
    return f"{name}{_show(value)} ({kind})"


def truth(value: Any) -> bool:
    """Python truthiness; a value without one (e.g. an array) is an evaluation error."""
    try:
        return bool(value)
    except Exception as exc:
        raise ConditionEvaluationError(
            f"{type(value).__name__} は真偽（はい/いいえ）として扱えません: {exc}",
            hint="${x.length} > 0 のように比較を書いてください",
        ) from None


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if _is_number(left) and _is_number(right):
        left, right = _align(left, right)
    try:
        return bool(left == right)
    except Exception as exc:
        raise ConditionEvaluationError(
            f"{_show(left)} と {_show(right)} を比べられません: {exc}"
        ) from None


def _compare(node: Compare, left: Any, right: Any, source: str) -> bool:
    if node.op in ("==", "!="):
        return _equal(left, right) == (node.op == "==")
    if _is_number(left) and _is_number(right):
        left, right = _align(left, right)
    elif not (isinstance(left, str) and isinstance(right, str)):
        raise ConditionEvaluationError(
            f"条件 {source[:200]!r} の {_describe(node.left, left)} {node.op} "
            f"{_describe(node.right, right)} を比べられません: 大小を比べられるのは"
            "数どうしか文字列どうしだけです",
            hint="参照している値を確かめてください（飛ばされたノードの値は null です。"
            "先に '!= null' で確かめてください）",
            details={
                "op": node.op,
                "left": _show(left),
                "left_type": type(left).__name__,
                "right": _show(right),
                "right_type": type(right).__name__,
                "expression": source[:200],
            },
        )
    try:
        return _ORDERING[node.op](left, right)
    except ArithmeticError as exc:
        raise ConditionEvaluationError(
            f"{_show(left)} と {_show(right)} の大小を比べられません: {exc}"
        ) from None


def evaluate(node: Node, resolver: Resolver, source: str) -> Any:
    """The value of ``node`` (booleans for not/and/or/comparisons); ``source`` is for messages."""
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Ref):
        return resolver(node.reference)
    if isinstance(node, Text):
        return "".join(p if isinstance(p, str) else to_text(resolver(p)) for p in node.parts)
    if isinstance(node, Data):
        return resolve_value(node.value, resolver)
    if isinstance(node, Not):
        return not truth(evaluate(node.operand, resolver, source))
    if isinstance(node, BoolOp):
        wanted = node.op == "or"  # the value that decides early
        for operand in node.operands:
            if truth(evaluate(operand, resolver, source)) == wanted:
                return wanted
        return not wanted
    left = evaluate(node.left, resolver, source)
    right = evaluate(node.right, resolver, source)
    return _compare(node, left, right, source)


def references_of(node: Node) -> list[Reference]:
    """Every reference the tree reads, in order."""
    if isinstance(node, Ref):
        return [node.reference]
    if isinstance(node, Text):
        return [part for part in node.parts if isinstance(part, Reference)]
    if isinstance(node, Data):
        return [reference for _, reference in find_references(node.value)]
    if isinstance(node, Not):
        return references_of(node.operand)
    if isinstance(node, BoolOp):
        return [ref for operand in node.operands for ref in references_of(operand)]
    if isinstance(node, Compare):
        return references_of(node.left) + references_of(node.right)
    return []
