"""Conditions for ``when`` and ``while`` (seed 002 §5.1): a small typed grammar, no eval.

    condition  := or
    or         := and (("or" | "||") and)*
    and        := not (("and" | "&&") not)*
    not        := ("not" | "!") not | comparison
    comparison := operand (("==" | "!=" | ">" | ">=" | "<" | "<=") operand)?
    operand    := literal | reference | "(" condition ")"
    literal    := number | 'text' | "text" | true | false | null
    reference  := ${...}   (see plans.dsl.references)

Numbers are integers or decimals (``-`` allowed in front, no exponent); quoted text
takes ``\\\\ \\' \\" \\n \\t \\r`` escapes and may contain ``${...}`` (replaced by its
text form; ``$${`` for a literal ``${``). ``True``/``False``/``None`` are accepted too.

Semantics: a bare operand is truthy per Python (None, 0, "", [], {} are false);
``and``/``or``/``not`` give booleans and short-circuit; ``==``/``!=`` compare values
(``1 == 1.0``; a boolean only equals a boolean); ordering needs two numbers or two
strings (ISO dates compare as text), anything else raises ConditionEvaluationError.

Bounded: text length, nesting depth and literal size are limited; anything else
(``__import__``, attribute access, ``**``, calls) is a syntax error with a position.
A hand-written lexer (small regular expressions for token shapes, one token of
lookahead) feeds a recursive-descent parser that builds frozen dataclasses
(``plans.dsl._condition_tree``), evaluated by walking them: nothing is ever handed to
``eval``/``exec``/``compile``, and the first problem stops parsing at once.

CONTRACT (implementation owned by the references/expressions work; signatures are fixed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NoReturn

from keiri_agent.errors import UserInputError, closest_match
from keiri_agent.plans.dsl._condition_tree import (
    BoolOp,
    Compare,
    ConditionEvaluationError,
    Data,
    Literal,
    Node,
    Not,
    Ref,
    Text,
    evaluate,
    references_of,
    truth,
)
from keiri_agent.plans.dsl.models import Condition, ConditionCompare, ConditionExpr
from keiri_agent.plans.dsl.references import (
    Reference,
    ReferenceError_,
    Resolver,
    find_references,
    is_whole_reference,
    parse_reference,
    read_reference,
    split_template,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPRESSION_LENGTH",
    "BoolOp",
    "Compare",
    "ConditionEvaluationError",
    "ConditionSyntaxError",
    "Data",
    "Literal",
    "Not",
    "ParsedCondition",
    "Ref",
    "Text",
    "parse_condition",
    "parse_when",
]

MAX_EXPRESSION_LENGTH = 2000
MAX_DEPTH = 32
MAX_NUMBER_DIGITS = 30
MAX_STRING_LENGTH = 1000


class ConditionSyntaxError(UserInputError):
    """A condition that does not parse; ``position`` is the 0-based character offset."""

    code = "CONDITION_SYNTAX"

    def __init__(self, message: str, *, text: str, position: int) -> None:
        super().__init__(
            f"条件の書き方に誤りがあります: {message}"
            f"（{position} 文字目: {text[max(0, position - 20) : position + 20]!r}）",
            hint="条件に使えるのは ${...} の参照、値（数、'文字列'、true、false、null）、"
            "==、!=、>、>=、<、<=、and、or、not です",
            details={"position": position, "expression": text[:200]},
        )
        self.position = position


# --- tokens ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str
    """value, op, and, or, not, (, ), end"""
    value: Any
    position: int
    text: str


_TOKEN = re.compile(
    r"(?P<number>-?([0-9]+)(?:\.([0-9]+))?)|(?P<word>[^\W\d]\w*)"
    r"|(?P<op>==|!=|>=|<=|>|<)|(?P<symbol>&&|\|\||[()!])"
)
_SPACE = re.compile(r"\s*")
_PLAIN = {quote: re.compile(rf"[^{quote}\\]*") for quote in "'\""}
_NUMBER_END = re.compile(r"[.\w]")
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None}
_CONSTANTS.update({"True": True, "False": False, "None": None})
_KINDS = {"and": "and", "or": "or", "not": "not", "&&": "and", "||": "or", "!": "not"}
_KINDS.update({"(": "(", ")": ")"})
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_UNSUPPORTED = {
    "=": "比べるときは '==' を使ってください",
    "&": "'and' か '&&' を使ってください",
    "|": "'or' か '||' を使ってください",
    ".": "'.' で中を取り出すことはできません（${...} の中に書いてください）",
    "[": "番号での取り出しやリストは使えません（${a.items[0]} のように書いてください）",
    "]": "番号での取り出しやリストは使えません（${a.items[0]} のように書いてください）",
}
_PYTHON_SYNTAX = "計算、関数呼び出しなどの Python の書き方は使えません"


def _fail(message: str, text: str, position: int) -> NoReturn:
    raise ConditionSyntaxError(message, text=text, position=position)


def _read_string(text: str, start: int) -> tuple[Node, int]:
    """A quoted literal starting at ``text[start]``: its node and the end offset."""
    quote, plain, chunks, size, pos = text[start], _PLAIN[text[start]], [], 0, start + 1
    while True:
        run = plain.match(text, pos)
        assert run is not None  # the pattern matches the empty string
        chunks.append(run.group())
        size, pos = size + len(run.group()), run.end()
        if size > MAX_STRING_LENGTH:
            _fail(f"文字列が {MAX_STRING_LENGTH} 文字より長いです", text, start)
        if pos >= len(text):
            _fail(f"文字列が閉じていません（終わりの {quote} がありません）", text, start)
        if text[pos] == quote:
            break
        escaped = text[pos + 1 : pos + 2]  # text[pos] is a backslash
        if escaped not in _ESCAPES:
            _fail(f"文字列の中の '\\{escaped}' は使えないエスケープです", text, pos)
        chunks.append(_ESCAPES[escaped])
        size, pos = size + 1, pos + 2
    value = "".join(chunks)
    if "${" not in value:
        return Literal(value), pos + 1
    try:
        parts = split_template(value)
    except ReferenceError_ as exc:
        _fail(f"引用符の中の参照に誤りがあります: {exc.details.get('reason', exc)}", text, start)
    if len(parts) == 1 and isinstance(parts[0], str):
        return Literal(parts[0]), pos + 1
    return Text(tuple(parts)), pos + 1


def _number(text: str, match: re.Match[str]) -> _Token:
    lexeme, whole, fraction = match.group("number", 2, 3)
    if len(whole) + len(fraction or "") > MAX_NUMBER_DIGITS:
        _fail(f"数の桁が {MAX_NUMBER_DIGITS} 桁を超えています", text, match.start())
    if _NUMBER_END.match(text, match.end()):
        _fail("数の書き方に誤りがあります（12、-3、0.5 のように書きます）", text, match.start())
    value = float(lexeme) if fraction is not None else int(lexeme)
    return _Token("value", Literal(value), match.start(), lexeme)


def _next_token(text: str, pos: int) -> tuple[_Token, int]:
    """The token starting at ``text[pos]`` (not whitespace) and the offset after it."""
    char = text[pos]
    if char == "$":
        if not text.startswith("${", pos):
            _fail("ここでは '$' は使えません（参照は ${...} と書きます）", text, pos)
        try:
            reference, end = read_reference(text, pos)
        except ReferenceError_ as exc:
            reason = exc.details.get("reason", exc.message)
            _fail(f"参照の書き方に誤りがあります: {reason}", text, exc.details.get("position", pos))
        return _Token("value", Ref(reference), pos, text[pos:end]), end
    if char in "'\"":
        node, end = _read_string(text, pos)
        return _Token("value", node, pos, text[pos:end]), end
    match = _TOKEN.match(text, pos)
    if match is None:
        reason = _UNSUPPORTED.get(char, _PYTHON_SYNTAX if char in "*+-/%^~@,:;{}`\\" else "")
        _fail(
            f"ここでは {char!r} は使えません: {reason}"
            if reason
            else f"ここでは {char!r} は使えません",
            text,
            pos,
        )
    lexeme, kind = match.group(), match.lastgroup
    if kind == "number":
        return _number(text, match), match.end()
    if kind == "op":
        return _Token("op", lexeme, pos, lexeme), match.end()
    if lexeme in _CONSTANTS:
        return _Token("value", Literal(_CONSTANTS[lexeme]), pos, lexeme), match.end()
    if lexeme in _KINDS:
        return _Token(_KINDS[lexeme], lexeme, pos, lexeme), match.end()
    suggestion = closest_match(lexeme, ["and", "or", "not", "true", "false", "null"])
    advice = (
        f"{suggestion!r} のことですか？"
        if suggestion
        else "文字列は引用符で囲み、値は ${...} で参照してください"
    )
    _fail(f"{lexeme[:40]!r} という名前は使えません（{advice}）", text, pos)


# --- the parser -----------------------------------------------------------------------


class _Parser:
    """Recursive descent with one token of lookahead, lexed on demand (so the first
    problem stops everything); ``depth`` counts open '(' and 'not'."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.depth = text, 0, 0
        self.current = self._lex()

    def _lex(self) -> _Token:
        space = _SPACE.match(self.text, self.pos)
        self.pos = space.end() if space else self.pos
        if self.pos >= len(self.text):
            return _Token("end", None, len(self.text), "条件の終わり")
        token, self.pos = _next_token(self.text, self.pos)
        return token

    def _peek(self) -> _Token:
        return self.current

    def _take(self) -> _Token:
        token = self.current
        if token.kind != "end":
            self.current = self._lex()
        return token

    def _enter(self, token: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            _fail(f"入れ子が {MAX_DEPTH} 段より深いです", self.text, token.position)

    def parse(self) -> Node:
        if self._peek().kind == "end":
            _fail("条件が空です", self.text, 0)
        node = self._bool("or")
        token = self._peek()
        if token.kind != "end":
            _fail(
                (
                    f"ここでは {token.text!r} は使えません"
                    "（ここには and、or、比較、または条件の終わりが来ます）"
                ),
                self.text,
                token.position,
            )
        return node

    def _bool(self, op: str) -> Node:
        operands = [self._bool("and") if op == "or" else self._not()]
        while self._peek().kind == op:
            self._take()
            operands.append(self._bool("and") if op == "or" else self._not())
        return operands[0] if len(operands) == 1 else BoolOp(op, tuple(operands))

    def _not(self) -> Node:
        if self._peek().kind != "not":
            return self._comparison()
        self._enter(self._take())
        operand = self._not()
        self.depth -= 1
        return Not(operand)

    def _comparison(self) -> Node:
        left = self._operand()
        if self._peek().kind != "op":
            return left
        op = self._take().value
        node = Compare(op, left, self._operand())
        token = self._peek()
        if token.kind == "op":
            _fail(
                "比較を続けて書くことはできません（'and' でつないでください）",
                self.text,
                token.position,
            )
        return node

    def _operand(self) -> Node:
        token = self._take()
        if token.kind == "value":
            node: Node = token.value
            return node
        if token.kind == "(":
            self._enter(token)
            node = self._bool("or")
            if self._peek().kind != ")":
                found = self._peek()
                _fail(
                    (
                        f"{token.position} 文字目の '(' を閉じる ')' がありません"
                        f"（{found.text!r} があります）"
                    ),
                    self.text,
                    found.position,
                )
            self._take()
            self.depth -= 1
            return node
        _fail(f"値が必要な所に {token.text!r} があります", self.text, token.position)


@dataclass(frozen=True)
class ParsedCondition:
    """A parsed condition: evaluate it with a resolver; ``references`` lists what it reads."""

    source: str
    tree: Any
    references: tuple[Reference, ...]

    def evaluate(self, resolver: Resolver) -> bool:
        """Truth value. Comparing incompatible types raises ConditionEvaluationError naming
        both values (never a silent False); resolver errors (ReferenceError_) propagate."""
        return truth(evaluate(self.tree, resolver, self.source))


def _build(source: str, tree: Node) -> ParsedCondition:
    return ParsedCondition(source, tree, tuple(dict.fromkeys(references_of(tree))))


def parse_condition(text: str) -> ParsedCondition:
    """Parse an ``expr`` string; ConditionSyntaxError on anything outside the grammar."""
    if not isinstance(text, str):
        _fail(
            f"条件は文字列で書いてください（{type(text).__name__} になっています）",
            repr(text)[:200],
            0,
        )
    if len(text) > MAX_EXPRESSION_LENGTH:
        _fail(
            f"条件が {MAX_EXPRESSION_LENGTH} 文字より長いです（{len(text)} 文字）",
            text,
            MAX_EXPRESSION_LENGTH,
        )
    return _build(text, _Parser(text).parse())


_OP_SYMBOLS = {"eq": "==", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _compare_operand(value: Any, field: str) -> tuple[Node, str]:
    """A ``{left, op, right}`` side as a node and as text for messages."""
    list(find_references(value, field))  # raises ReferenceError_ naming the field on bad syntax
    if is_whole_reference(value):
        return Ref(parse_reference(value)), value
    shown = json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, str | list | tuple | dict):
        return Data(value), shown
    return Literal(value), shown


def parse_when(condition: Condition) -> ParsedCondition:
    """A ``when``/``while`` condition (``{expr}`` or ``{left, op, right}``) parsed.

    In the comparison form ``left``/``right`` are literals or text with ``${...}``
    (a whole reference keeps its type).
    """
    if isinstance(condition, ConditionExpr):
        return parse_condition(condition.expr)
    if isinstance(condition, ConditionCompare):
        left, left_text = _compare_operand(condition.left, "left")
        right, right_text = _compare_operand(condition.right, "right")
        symbol = _OP_SYMBOLS[condition.op]
        return _build(f"{left_text} {symbol} {right_text}", Compare(symbol, left, right))
    _fail(
        f"条件は {{expr: ...}} か {{left, op, right}} の形で書いてください"
        f"（{type(condition).__name__} になっています）",
        repr(condition)[:200],
        0,
    )
