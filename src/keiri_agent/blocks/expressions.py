"""Row expressions for ``table.compute``: a small hand-written grammar, never ``eval``.

    expr       := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | comparison
    comparison := sum (("==" | "!=" | ">" | ">=" | "<" | "<=") sum)?
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/" | "%") unary)*
    unary      := "-" unary | atom
    atom       := number | 'text' | "text" | true | false | null
                | name "(" args ")" | name | "[" column name "]" | "(" expr ")"

A bare name is a column (Japanese names included: ``金額 * 0.1``); a column name with
spaces or symbols is written in brackets (``[税込 金額]``). Functions: ``round(x, digits)``
(half-up, as offices round), ``floor``, ``ceil``, ``abs``, ``min``, ``max``,
``coalesce`` (first non-null), ``if(cond, a, b)``, ``len`` (text length), ``concat``
(texts joined, null as empty).

Semantics: numbers are ``Decimal`` while computing (``0.1 + 0.2 == 0.3``) and come out
as ``int`` when whole, else ``float``. Null propagates through arithmetic and
comparisons; ``+`` adds two numbers or joins two texts; a cell holding office number
text (``"1,234"``, ``"¥1,200"``, ``"△500"``: CSV cells are text) is read as a number
in arithmetic and comparisons, so ``"1,000" > "900"`` compares numbers; other texts
compare as text (ISO dates order correctly) and a boolean only equals a boolean.
Division (or ``%``) by zero gives null and an :class:`ExpressionProblem`, as does a
value of the wrong kind. Text length, nesting depth and token count are bounded; a
syntax error names the position.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from keiri_agent.files.cells import decimal_value

MAX_EXPRESSION_LENGTH = 2000
MAX_DEPTH = 40
MAX_TOKENS = 500
MAX_TEXT_RESULT = 100_000
"""Longest text a ``concat`` or ``+`` may build (characters)."""

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<number>\d+(?:\.\d+)?)
    | (?P<text>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<column>\[[^\[\]]+\])
    | (?P<op>==|!=|>=|<=|[-+*/%(),<>])
    | (?P<name>[^\W\d]\w*)
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_KEYWORDS = {"and", "or", "not", "true", "false", "null"}
FUNCTIONS = ("round", "floor", "ceil", "abs", "min", "max", "coalesce", "if", "len", "concat")
_ARITY: dict[str, tuple[int, int | None]] = {
    "round": (1, 2),
    "floor": (1, 1),
    "ceil": (1, 1),
    "abs": (1, 1),
    "min": (1, None),
    "max": (1, None),
    "coalesce": (1, None),
    "if": (3, 3),
    "len": (1, 1),
    "concat": (1, None),
}


class ExpressionSyntaxError(ValueError):
    """An expression that does not parse; ``position`` is the 0-based character offset."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


class ExpressionProblem(Exception):
    """A value problem while evaluating one row (the result becomes null)."""


# --- tree ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Node


@dataclass(frozen=True)
class Binary:
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple[Node, ...]


Node = Const | Column | Unary | Binary | Call


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its text, its tree and the columns it reads."""

    source: str
    tree: Node
    columns: tuple[str, ...]

    def evaluate(self, row: Mapping[str, Any]) -> Any:
        """The value for ``row`` (int, float, text, bool or None); ExpressionProblem."""
        try:
            return _result(_eval(self.tree, row))
        except ArithmeticError:  # decimal overflow and the like on huge numbers
            raise ExpressionProblem("数値が大きすぎて計算できません") from None


# --- parsing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str
    value: str
    position: int


def _tokens(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(source):
        if source[position:].strip() == "":
            break
        match = _TOKEN.match(source, position)
        if match is None or match.lastgroup is None:
            offset = len(source[position:]) - len(source[position:].lstrip())
            raise ExpressionSyntaxError(
                f"{position + offset + 1} 文字目の {source[position + offset]!r} は使えません",
                position + offset,
            )
        kind = match.lastgroup
        start = match.start(kind)
        tokens.append(_Token(kind, match.group(kind), start))
        if len(tokens) > MAX_TOKENS:
            raise ExpressionSyntaxError(f"式が長すぎます（{MAX_TOKENS} 語まで）", start)
        position = match.end()
    tokens.append(_Token("end", "", len(source)))
    return tokens


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = _tokens(source)
        self.index = 0
        self.depth = 0
        self.columns: dict[str, None] = {}

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def fail(self, message: str, token: _Token | None = None) -> ExpressionSyntaxError:
        token = token or self.current
        return ExpressionSyntaxError(f"{token.position + 1} 文字目: {message}", token.position)

    def accept(self, *values: str) -> _Token | None:
        token = self.current
        if token.kind in {"op", "name"} and token.value in values:
            self.index += 1
            return token
        return None

    def expect(self, value: str) -> None:
        if self.accept(value) is None:
            found = self.current.value or "式の終わり"
            raise self.fail(f"{value!r} が必要ですが {found!r} があります")

    def nested(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"括弧や演算の入れ子が深すぎます（{MAX_DEPTH} 段まで）")

    def parse(self) -> Node:
        tree = self.or_()
        if self.current.kind != "end":
            raise self.fail(f"{self.current.value!r} は余分です（演算子が抜けていませんか）")
        return tree

    def or_(self) -> Node:
        node = self.and_()
        while self.accept("or"):
            node = Binary("or", node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.not_()
        while self.accept("and"):
            node = Binary("and", node, self.not_())
        return node

    def not_(self) -> Node:
        if self.accept("not"):
            self.nested()
            node = Unary("not", self.not_())
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self) -> Node:
        node = self.sum_()
        token = self.accept("==", "!=", ">", ">=", "<", "<=")
        if token:
            node = Binary(token.value, node, self.sum_())
        return node

    def sum_(self) -> Node:
        node = self.product()
        while token := self.accept("+", "-"):
            node = Binary(token.value, node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while token := self.accept("*", "/", "%"):
            node = Binary(token.value, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.accept("-"):
            self.nested()
            node = Unary("-", self.unary())
            self.depth -= 1
            return node
        return self.atom()

    def atom(self) -> Node:
        token = self.current
        if token.kind == "number":
            self.index += 1
            return Const(Decimal(token.value))
        if token.kind == "text":
            self.index += 1
            return Const(_unquote(token.value))
        if token.kind == "column":
            self.index += 1
            name = token.value[1:-1].strip()
            self.columns.setdefault(name, None)
            return Column(name)
        if token.kind == "name":
            return self.name(token)
        if self.accept("("):
            self.nested()
            node = self.or_()
            self.expect(")")
            self.depth -= 1
            return node
        found = token.value or "式の終わり"
        raise self.fail(f"値・列名・関数が必要ですが {found!r} があります")

    def name(self, token: _Token) -> Node:
        self.index += 1
        word = token.value
        lowered = word.lower()
        if lowered in {"true", "false"}:
            return Const(lowered == "true")
        if lowered == "null":
            return Const(None)
        if lowered in _KEYWORDS:
            raise self.fail(f"{word!r} の前に値が必要です", token)
        if self.accept("("):
            if lowered not in _ARITY:
                raise self.fail(
                    f"関数 {word!r} はありません（使える関数: {', '.join(FUNCTIONS)}）", token
                )
            self.nested()
            args: list[Node] = []
            if not self.accept(")"):
                args.append(self.or_())
                while self.accept(","):
                    args.append(self.or_())
                self.expect(")")
            self.depth -= 1
            low, high = _ARITY[lowered]
            if len(args) < low or (high is not None and len(args) > high):
                expected = str(low) if low == high else f"{low}〜{high or 'いくつでも'}"
                raise self.fail(
                    f"{lowered} の引数は {expected} 個です（{len(args)} 個あります）", token
                )
            return Call(lowered, tuple(args))
        self.columns.setdefault(word, None)
        return Column(word)


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


def parse_expression(source: str) -> Expression:
    """Parse ``source``; ExpressionSyntaxError (Japanese message with a position)."""
    if not isinstance(source, str) or not source.strip():
        raise ExpressionSyntaxError("式が空です", 0)
    if len(source) > MAX_EXPRESSION_LENGTH:
        raise ExpressionSyntaxError(
            f"式が長すぎます（{len(source)} 文字、{MAX_EXPRESSION_LENGTH} 文字まで）", 0
        )
    parser = _Parser(source)
    tree = parser.parse()
    return Expression(source, tree, tuple(parser.columns))


# --- evaluation ------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "真偽値"
    if isinstance(value, Decimal):
        return "数値"
    if isinstance(value, str):
        return "文字列"
    return type(value).__name__


def _cell(value: Any) -> Any:
    """A cell as an evaluation value: numbers → Decimal, NaN → None."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return None if math.isnan(value) else Decimal(repr(value))
    return value


def _number(value: Any, what: str) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, str):
        parsed = decimal_value(value)
        if parsed is not None:
            return parsed
    raise ExpressionProblem(f"{what}には数値が必要ですが {_kind(value)} {value!r} です")


def _truth(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise ExpressionProblem(f"条件には真偽値が必要ですが {_kind(value)} {value!r} です")


def _eval(node: Node, row: Mapping[str, Any]) -> Any:
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Column):
        return _cell(row.get(node.name))
    if isinstance(node, Unary):
        value = _eval(node.operand, row)
        if value is None:
            return None
        if node.op == "not":
            return not _truth(value)
        return -_number(value, "符号 - ")
    if isinstance(node, Binary):
        return _binary(node, row)
    return _call(node, row)


def _binary(node: Binary, row: Mapping[str, Any]) -> Any:
    op = node.op
    if op in {"and", "or"}:
        left = _eval(node.left, row)
        if left is not None:
            if op == "and" and not _truth(left):
                return False
            if op == "or" and _truth(left):
                return True
        right = _eval(node.right, row)
        if left is None or right is None:
            return None
        return _truth(right)
    left, right = _eval(node.left, row), _eval(node.right, row)
    if left is None or right is None:
        return None
    if op in {"==", "!=", ">", ">=", "<", "<="}:
        pair = _comparable(left, right)
        if op in {"==", "!="}:
            equal = pair is not None and pair[0] == pair[1]
            return equal if op == "==" else not equal
        if pair is None:
            raise ExpressionProblem(
                f"比較 {op} は数値どうし・文字列どうしで行います"
                f"（{_kind(left)} {left!r} と {_kind(right)} {right!r}）"
            )
        return {
            ">": pair[0] > pair[1],
            ">=": pair[0] >= pair[1],
            "<": pair[0] < pair[1],
            "<=": pair[0] <= pair[1],
        }[op]
    return _arithmetic(op, left, right)


def _arithmetic(op: str, left: Any, right: Any) -> Any:
    if (
        op == "+"
        and isinstance(left, str)
        and isinstance(right, str)
        and (decimal_value(left) is None or decimal_value(right) is None)
    ):
        return _bounded(left + right)
    a, b = _number(left, f"演算 {op} "), _number(right, f"演算 {op} ")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise ExpressionProblem("0 で割っています")
    return a / b if op == "/" else a - b * (a / b).to_integral_value(ROUND_FLOOR)


def _comparable(left: Any, right: Any) -> tuple[Any, Any] | None:
    """The pair to compare: numbers when both read as numbers, else same-kind values."""
    if isinstance(left, bool) or isinstance(right, bool):
        return (left, right) if isinstance(left, bool) and isinstance(right, bool) else None
    numbers = [
        v if isinstance(v, Decimal) else decimal_value(v) if isinstance(v, str) else None
        for v in (left, right)
    ]
    if numbers[0] is not None and numbers[1] is not None:
        return numbers[0], numbers[1]
    if isinstance(left, str) and isinstance(right, str):
        return left, right
    return None


def _bounded(text: str) -> str:
    if len(text) > MAX_TEXT_RESULT:
        raise ExpressionProblem(f"文字列が長すぎます（{MAX_TEXT_RESULT} 文字まで）")
    return text


def _round(args: list[Any]) -> Any:
    value = args[0]
    digits = args[1] if len(args) > 1 else Decimal(0)
    if value is None or digits is None:
        return None
    number = _number(value, "round の値")
    places = _number(digits, "round の桁数")
    if places != places.to_integral_value() or abs(places) > 20:
        raise ExpressionProblem(f"round の桁数は -20〜20 の整数です（{places}）")
    return number.quantize(Decimal(1).scaleb(-int(places)), rounding=ROUND_HALF_UP)


def _ordered(args: list[Any], pick: Callable[[list[Any]], Any], name: str) -> Any:
    present = [a for a in args if a is not None]
    if not present:
        return None
    if all(isinstance(a, str) for a in present):
        return pick(present)
    return pick([_number(a, f"{name} の引数") for a in present])


def _call(node: Call, row: Mapping[str, Any]) -> Any:
    name = node.function
    if name == "if":
        condition = _eval(node.args[0], row)
        chosen = node.args[1] if _truth(condition) else node.args[2]
        return _eval(chosen, row)
    if name == "coalesce":
        for arg in node.args:
            value = _eval(arg, row)
            if value is not None:
                return value
        return None
    args = [_eval(arg, row) for arg in node.args]
    if name == "round":
        return _round(args)
    if name == "min":
        return _ordered(args, min, name)
    if name == "max":
        return _ordered(args, max, name)
    if name == "concat":
        return _bounded("".join("" if a is None else _text(a) for a in args))
    value = args[0]
    if value is None:
        return None
    if name == "len":
        return Decimal(len(_text(value)))
    number = _number(value, f"{name} の引数")
    if name == "abs":
        return abs(number)
    return number.to_integral_value(ROUND_FLOOR if name == "floor" else ROUND_CEILING)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return str(_result(value))
    return str(value)


def _result(value: Any) -> Any:
    if not isinstance(value, Decimal):
        return value
    if not value.is_finite():
        raise ExpressionProblem("計算結果が数値になりません")
    if value == value.to_integral_value() and abs(value) < 10**18:
        return int(value)
    number = float(value)
    if math.isinf(number):
        raise ExpressionProblem("数値が大きすぎて計算できません")
    return number
