"""Conditions (``when``/``while``): the grammar, its semantics, its limits and its errors."""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import operator
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl import conditions
from keiri_agent.plans.dsl.conditions import (
    MAX_DEPTH,
    MAX_EXPRESSION_LENGTH,
    ConditionEvaluationError,
    ConditionSyntaxError,
    ParsedCondition,
    parse_condition,
    parse_when,
)
from keiri_agent.plans.dsl.models import ConditionCompare, ConditionExpr
from keiri_agent.plans.dsl.references import Reference, ReferenceError_, Scope, parse_reference

VALUES: dict[str, Any] = {
    "count": 3,
    "zero": 0,
    "ratio": 0.5,
    "price": Decimal("0.1"),
    "name": "山田",
    "empty_text": "",
    "date": "2024-03-31",
    "flag": True,
    "off": False,
    "nothing": None,
    "items": ["a", "b"],
    "no_items": [],
    "mapping": {"k": 1},
    "no_mapping": {},
}

SCOPE = Scope(
    nodes={"parse": {"evidence": {"files": ["a.pdf"]}}, "skipped": None},
    vars=VALUES,
    env={},
    config={},
    locals={"idx": 1},
)


def check(text: str) -> bool:
    return parse_condition(text).evaluate(SCOPE.lookup)


# --- literals, comparisons, boolean logic ---------------------------------------------

TRUTH_CASES: list[tuple[str, bool]] = [
    # bare literals: Python truthiness
    ("1", True),
    ("0", False),
    ("0.0", False),
    ("-1", True),
    ("-0.5", True),
    ("'a'", True),
    ("''", False),
    ('"x"', True),
    ('""', False),
    ("true", True),
    ("True", True),
    ("false", False),
    ("False", False),
    ("null", False),
    ("None", False),
    # comparisons
    ("1 == 1", True),
    ("1 == 1.0", True),
    ("1 != 1.0", False),
    ("1 != 2", True),
    ("2 > 1", True),
    ("2 >= 2", True),
    ("2 < 1", False),
    ("2 <= 1.5", False),
    ("-2 < -1", True),
    ("0.1 == 0.10", True),
    ("'abc' == \"abc\"", True),
    ("'a' < 'b'", True),
    ("'2024-01-31' < '2024-02-01'", True),
    ("'10' < '9'", True),
    ("null == None", True),
    ("null == 0", False),
    ("null != false", True),
    ("true == 1", False),
    ("false == 0", False),
    ("true == True", True),
    ("'1' == 1", False),
    ("1 == '1'", False),
    # boolean operators and precedence
    ("true and false", False),
    ("true && true", True),
    ("false or true", True),
    ("false || false", False),
    ("not true", False),
    ("!false", True),
    ("! 0", True),
    ("not not 1", True),
    ("!!''", False),
    ("true or false and false", True),
    ("(true or false) and false", False),
    ("not true == false", True),
    ("not (1 == 1) or 2 > 1", True),
    ("1 and 'x' and 2", True),
    ("0 or '' or null", False),
    ("(((1)))", True),
    ("(1 == 1) == true", True),
    ("(1 or 0) == 1", False),
    ("1\u3000==\t1\n", True),
    # references
    ("${vars.count} > 2", True),
    ("${vars.count} == 3.0", True),
    ("${vars.zero}", False),
    ("${vars.ratio} < 1", True),
    ("${vars.price} == 0.1", True),
    ("${vars.price} < 0.2", True),
    ("${vars.name} == '山田'", True),
    ("${vars.empty_text}", False),
    ("${vars.date} >= '2024-01-01'", True),
    ("${vars.flag}", True),
    ("${vars.flag} == true", True),
    ("not ${vars.off}", True),
    ("${vars.nothing} == null", True),
    ("${vars.items}", True),
    ("${vars.no_items}", False),
    ("${vars.items.length} == 2", True),
    ("${vars.mapping}", True),
    ("${vars.no_mapping}", False),
    ("${vars.items} == ${vars.items}", True),
    ("${parse.evidence.files.length} > 0", True),
    ("${skipped.evidence} != null", False),
    ("${skipped.evidence} == null and ${idx} == 1", True),
    ("${vars.count}>2&&${vars.flag}", True),
    # quoted text with references inside is text
    ("'${vars.count}' == '3'", True),
    ("'n=${vars.count}, ${vars.nothing}!' == 'n=3, !'", True),
    ("'$${vars.count}' != '3'", True),
    # escapes
    ("'it\\'s' == \"it's\"", True),
    ("'a\\nb' != 'a b'", True),
    ("'tab\\there' == \"tab\\there\"", True),
    ("'\\\\' == \"\\\\\"", True),
    ("'\\r' != ''", True),
]


@pytest.mark.parametrize(("text", "expected"), TRUTH_CASES)
def test_truth(text: str, expected: bool) -> None:
    assert check(text) is expected


def test_escapes_decode() -> None:
    tree = parse_condition("'a\\'b\\\"c\\\\d\\ne\\tf\\rg'").tree
    assert tree == conditions.Literal("a'b\"c\\d\ne\tf\rg")
    assert parse_condition("'$${x} ${a}$${'").tree == conditions.Text(
        ("${x} ", parse_reference("a"), "${")
    )


def test_depth_limit_is_inclusive() -> None:
    assert check("(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH)
    assert check("not " * MAX_DEPTH + "0") is (MAX_DEPTH % 2 == 1)


def test_references_are_listed_once_in_order() -> None:
    parsed = parse_condition("${b.x} > 1 and ('${a}' == 'x' or ${b.x} < 5) and ${c[0]}")
    assert [str(reference) for reference in parsed.references] == ["${b.x}", "${a}", "${c[0]}"]
    assert parse_condition("1 == 1").references == ()


def test_parsed_tree_is_immutable() -> None:
    parsed = parse_condition("not ${a} and 1 < 2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.tree.op = "or"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.source = "x"  # type: ignore[misc]


def test_and_or_short_circuit() -> None:
    seen: list[str] = []

    def resolver(reference: Reference) -> Any:
        seen.append(reference.text)
        if reference.root == "boom":
            raise ReferenceError_("should not be read")
        return VALUES[reference.path[0]] if reference.path else None

    assert parse_condition("false and ${boom}").evaluate(resolver) is False
    assert parse_condition("${vars.off} and ${boom} > 'a'").evaluate(resolver) is False
    assert parse_condition("true or ${boom}").evaluate(resolver) is True
    assert parse_condition("${vars.flag} || ${boom}").evaluate(resolver) is True
    assert seen == ["vars.off", "vars.flag"]
    with pytest.raises(ReferenceError_, match="should not be read"):
        parse_condition("true and ${boom}").evaluate(resolver)


def test_reference_errors_propagate() -> None:
    with pytest.raises(ReferenceError_, match="キー 'missing' は見つかりません"):
        check("${vars.missing} == 1")


# --- evaluation type errors -----------------------------------------------------------

TYPE_ERRORS: list[tuple[str, list[str]]] = [
    ("${vars.count} > 'a'", ["${vars.count} = 3 (int)", "'a' (str)", ">"]),
    ("'a' >= 1", ["'a' (str)", "1 (int)"]),
    ("${vars.nothing} > 0", ["${vars.nothing} = None (null)", "0 (int)"]),
    ("${skipped.files.length} > 0", ["${skipped.files.length} = None (null)"]),
    ("true > false", ["True (bool)", "False (bool)"]),
    ("${vars.flag} < 2", ["True (bool)", "2 (int)"]),
    ("${vars.items} < ${vars.items}", ["(list)"]),
    ("${vars.mapping} <= 1", ["(dict)"]),
    ("${vars.date} > 20240101", ["'2024-03-31' (str)", "20240101 (int)"]),
]


@pytest.mark.parametrize(("text", "fragments"), TYPE_ERRORS)
def test_ordering_needs_two_numbers_or_two_strings(text: str, fragments: list[str]) -> None:
    with pytest.raises(ConditionEvaluationError) as caught:
        check(text)
    error = caught.value
    assert isinstance(error, UserInputError)
    assert error.code == "CONDITION_TYPE"
    assert "大小を比べられるのは数どうしか文字列どうしだけです" in error.message
    assert text in error.message
    for fragment in fragments:
        assert fragment in error.message
    assert {"left_type", "right_type", "op"} <= set(error.details)


def test_value_without_truth_value_is_an_evaluation_error() -> None:
    class Ambiguous:
        def __bool__(self) -> bool:
            raise ValueError("ambiguous")

    with pytest.raises(ConditionEvaluationError, match="Ambiguous は真偽"):
        parse_condition("${x}").evaluate(lambda reference: Ambiguous())


# --- syntax errors --------------------------------------------------------------------

SYNTAX_ERRORS: list[tuple[str, str, int]] = [
    ("", "条件が空です", 0),
    ("   ", "条件が空です", 0),
    ("__import__('os')", "'__import__' という名前は使えません", 0),
    ('__import__("os").system("x")', "'__import__' という名前は使えません", 0),
    ("a.b", "'a' という名前は使えません", 0),
    ("x**y", "'x' という名前は使えません", 0),
    ("9**9**9", "ここでは '*' は使えません", 1),
    ("().__class__", "ここでは '.' は使えません", 2),
    ("()", "値が必要な所に ')'", 1),
    ("f(1)", "'f' という名前は使えません", 0),
    ("${a}(1)", "ここでは '(' は使えません", 4),
    ("${a}.b", "ここでは '.' は使えません", 4),
    ("[1]", "ここでは '[' は使えません", 0),
    ("1 in [1]", "'in' という名前は使えません", 2),
    ("lambda: 1", "'lambda' という名前は使えません", 0),
    ("1 if 1 else 0", "'if' という名前は使えません", 2),
    ("1 + 2", "ここでは '+' は使えません", 2),
    ("1 - 2", "ここでは '-' は使えません", 2),
    ("1 -2", "ここでは '-2' は使えません", 2),
    ("1 = 1", "'==' を使って", 2),
    ("1 === 1", "'==' を使って", 4),
    ("1 <> 2", "値が必要な所に '>'", 3),
    ("1 & 2", "'and' か '&&'", 2),
    ("1 | 2", "'or' か '||'", 2),
    ("{}", "ここでは '{' は使えません", 0),
    ("1 == ", "値が必要な所に '条件の終わり'", 5),
    ("not", "値が必要な所に", 3),
    ("1 and", "値が必要な所に", 5),
    ("and 1", "値が必要な所に 'and'", 0),
    ("(1", "0 文字目の '(' を閉じる ')'", 2),
    ("(1 2)", "を閉じる ')' がありません", 3),
    ("1)", "ここでは ')' は使えません", 1),
    ("1 2", "ここでは '2' は使えません", 2),
    ("${a} ${b}", "ここでは '${b}' は使えません", 5),
    ("1 == 1 == 1", "比較を続けて書くことはできません", 7),
    ("1 < 2 < 3", "比較を続けて書くことはできません", 6),
    ("'abc", "文字列が閉じていません", 0),
    ("\"abc'", "文字列が閉じていません", 0),
    ("'a\\", "使えないエスケープ", 2),
    ("'\\q'", "'\\q' は使えないエスケープ", 1),
    ("'\\u0041'", "'\\u' は使えないエスケープ", 1),
    ("1.", "数の書き方に誤り", 0),
    (".5", "ここでは '.' は使えません", 0),
    ("1.2.3", "数の書き方に誤り", 0),
    ("1abc", "数の書き方に誤り", 0),
    ("1_000", "数の書き方に誤り", 0),
    ("1e5", "数の書き方に誤り", 0),
    ("0x10", "数の書き方に誤り", 0),
    ("1" * 31, "30 桁を超えて", 0),
    ("1" * 20 + "." + "1" * 11, "30 桁を超えて", 0),
    ("9" * 1000, "30 桁を超えて", 0),
    ("'" + "a" * 1001 + "'", "1000 文字より長い", 0),
    ("AND", "'and' のことですか", 0),
    ("TRUE == 1", "'true' のことですか", 0),
    ("nul", "'null' のことですか", 0),
    ("山田 == 1", "'山田' という名前は使えません", 0),
    ("1 == １", "ここでは '１' は使えません", 5),
    ("1 ==\x00 1", "ここでは '\\x00' は使えません", 4),
    ("😀", "は使えません", 0),
    ("$x", "ここでは '$' は使えません", 0),
    ("${}", "参照の書き方に誤りがあります: 参照 '${}' の中が空", 2),
    ("${a", "参照の書き方に誤りがあります: '${' が閉じていません", 0),
    ("${a b} == 1", "参照の書き方に誤りがあります: ここでは ' ' は使えません", 3),
    ("${a.${b}}", "参照の書き方に誤りがあります: 参照の中に '${'", 4),
    ("${a.__class__()}", "参照の書き方に誤りがあります: ここでは '(' は使えません", 13),
    ("'x ${a' == 1", "引用符の中の参照に誤り", 0),
    ("x" * (MAX_EXPRESSION_LENGTH + 1), "2000 文字より長い", MAX_EXPRESSION_LENGTH),
    ("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), "入れ子が 32 段", MAX_DEPTH),
    ("not " * (MAX_DEPTH + 1) + "1", "入れ子が 32 段", 4 * MAX_DEPTH),
    ("!" * (MAX_DEPTH + 1) + "1", "入れ子が 32 段", MAX_DEPTH),
    ("(" * 999 + "1" + ")" * 999, "入れ子が 32 段", MAX_DEPTH),
]


@pytest.mark.parametrize(("text", "fragment", "position"), SYNTAX_ERRORS)
def test_syntax_errors(text: str, fragment: str, position: int) -> None:
    with pytest.raises(ConditionSyntaxError) as caught:
        parse_condition(text)
    error = caught.value
    assert fragment in error.message
    assert error.position == position
    assert error.details["position"] == position
    assert f"（{position} 文字目" in error.message
    assert error.code == "CONDITION_SYNTAX"
    assert isinstance(error, UserInputError)


def test_non_text_condition() -> None:
    with pytest.raises(ConditionSyntaxError, match="文字列で書いてください"):
        parse_condition(None)  # type: ignore[arg-type]


HOSTILE = [
    '__import__("os").system("x")',
    "${a.__class__.__mro__}",
    "().__class__",
    "9**9**9",
    "(" * 10_000 + "1" + ")" * 10_000,
    "not " * 10_000 + "1",
    "x" * 10**6,
    "'" + "a" * 10**6 + "'",
    "9" * 10**6,
    "9" * 1999,
    "'" + "\\n" * 999,
    "1 == 1 and " * 180 + "1",
    "\x00" * 1000,
    "${" * 999,
    "(" * 1999,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda text: repr(text[:24]))
def test_hostile_conditions_fail_fast(text: str) -> None:
    started = time.perf_counter()
    try:
        parsed = parse_condition(text)
    except ConditionSyntaxError:
        pass
    else:
        with contextlib.suppress(ReferenceError_):
            assert isinstance(parsed.evaluate(SCOPE.lookup), bool)
    assert time.perf_counter() - started < 0.5


def test_dunder_reference_never_reaches_attributes() -> None:
    with pytest.raises(ReferenceError_, match="キー '__class__' は見つかりません"):
        check("${vars.__class__.__mro__} == 1")
    with pytest.raises(ReferenceError_, match="マッピングとリストだけ"):
        check("${vars.count.__class__} == 1")


def test_deep_nesting_is_rejected_while_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even without the length limit, 10,000 levels fail on depth, not RecursionError."""
    monkeypatch.setattr(conditions, "MAX_EXPRESSION_LENGTH", 10**6)
    for text in ("(" * 10_000 + "1" + ")" * 10_000, "not " * 10_000 + "1"):
        started = time.perf_counter()
        with pytest.raises(ConditionSyntaxError, match="入れ子が 32 段"):
            parse_condition(text)
        assert time.perf_counter() - started < 0.5


def test_no_python_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("eval/exec/compile must not be used")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, forbidden)
    assert check("${vars.count} > 2 and not (${vars.name} == 'x' or false)")
    assert parse_when(ConditionCompare(left="${vars.count}", op="gte", right=3)).evaluate(
        SCOPE.lookup
    )


# --- parse_when -----------------------------------------------------------------------

COMPARE_CASES: list[tuple[Any, str, Any, bool]] = [
    ("${vars.count}", "eq", 3, True),
    ("${vars.count}", "ne", 3, False),
    ("${vars.count}", "gt", 2, True),
    ("${vars.count}", "gte", 3.0, True),
    ("${vars.count}", "lt", 3, False),
    ("${vars.count}", "lte", 3, True),
    (10, "gt", "${vars.count}", True),
    ("${vars.name}", "eq", "山田", True),
    ("${vars.date}", "lt", "2024-12-31", True),
    ("n=${vars.count}", "eq", "n=3", True),
    ("${vars.nothing}", "eq", None, True),
    ("${vars.flag}", "eq", True, True),
    ("${vars.flag}", "eq", 1, False),
    ("${vars.items}", "eq", ["a", "b"], True),
    ("${vars.items}", "eq", ["a", "${vars.name}"], False),
    (["a", "b"], "eq", "${vars.items}", True),
    ({"k": "${vars.mapping.k}"}, "eq", "${vars.mapping}", True),
    ("$${vars.count}", "eq", "${vars.count}", False),
    ("$${x}", "eq", "$${x}", True),
    ("${skipped.x}", "eq", None, True),
    ("abc", "eq", "abc", True),
]


@pytest.mark.parametrize(("left", "op", "right", "expected"), COMPARE_CASES)
def test_parse_when_compare(left: Any, op: str, right: Any, expected: bool) -> None:
    condition = ConditionCompare.model_validate({"left": left, "op": op, "right": right})
    assert parse_when(condition).evaluate(SCOPE.lookup) is expected


def test_parse_when_expr_and_references() -> None:
    parsed = parse_when(ConditionExpr(expr="${vars.count} > 2 and ${vars.flag}"))
    assert parsed.source == "${vars.count} > 2 and ${vars.flag}"
    assert [ref.text for ref in parsed.references] == ["vars.count", "vars.flag"]
    assert parsed.evaluate(SCOPE.lookup) is True


def test_parse_when_compare_source_and_references() -> None:
    condition = ConditionCompare(left="${vars.count}", op="gte", right=["x ${vars.name}", 2])
    parsed = parse_when(condition)
    assert isinstance(parsed, ParsedCondition)
    assert parsed.source == '${vars.count} >= ["x ${vars.name}", 2]'
    assert [ref.text for ref in parsed.references] == ["vars.count", "vars.name"]


def test_parse_when_compare_type_error() -> None:
    condition = ConditionCompare(left="${vars.name}", op="gt", right=1)
    with pytest.raises(ConditionEvaluationError, match=r"\$\{vars.name\} = '山田' \(str\)"):
        parse_when(condition).evaluate(SCOPE.lookup)


def test_parse_when_compare_bad_reference_names_the_side() -> None:
    with pytest.raises(ReferenceError_, match="right: 参照の書き方に誤り"):
        parse_when(ConditionCompare(left=1, op="eq", right="${oops"))
    with pytest.raises(ReferenceError_, match=r"left\[0\]: 参照の書き方に誤り"):
        parse_when(ConditionCompare(left=["${}"], op="eq", right=1))


def test_parse_when_expr_syntax_error() -> None:
    with pytest.raises(ConditionSyntaxError, match="'x' という名前は使えません"):
        parse_when(ConditionExpr(expr="x > 1"))


def test_parse_when_rejects_other_objects() -> None:
    with pytest.raises(ConditionSyntaxError, match="の形で書いてください"):
        parse_when({"expr": "1"})  # type: ignore[arg-type]


# --- properties -----------------------------------------------------------------------

_TOKENS = [
    "${vars.count}",
    "${vars.name}",
    "${vars.nothing}",
    "${nope}",
    "${",
    "}",
    "(",
    ")",
    " and ",
    " or ",
    " not ",
    "!",
    "&&",
    "||",
    "==",
    "!=",
    ">",
    ">=",
    "<",
    "<=",
    "=",
    "1",
    "-",
    "0.5",
    ".",
    "'",
    '"',
    "\\",
    " ",
    "true",
    "null",
    "x",
    "$",
    "$${",
    "*",
    "[",
    "__class__",
]


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=80) | st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join))
def test_random_text_only_raises_condition_errors(text: str) -> None:
    try:
        parsed = parse_condition(text)
    except ConditionSyntaxError:
        return
    with contextlib.suppress(ConditionEvaluationError, ReferenceError_):
        assert isinstance(parsed.evaluate(SCOPE.lookup), bool)


# Well-formed expressions from a structure, checked against an independent evaluator.
# A node is ("lit", text, value) | ("ref", name) | ("paren", node) | ("not", spelling, node)
# | ("and"/"or", spelling, left, right) | ("cmp", op, left, right).

REF_VALUES = {
    name: VALUES[name]
    for name in ("count", "zero", "ratio", "name", "empty_text", "flag", "off", "nothing")
} | {"items": [1, 2], "no_items": []}


class Mismatch(Exception):
    """The reference evaluator's 'cannot order these values'."""


def _quote(text: str, quote: str) -> str:
    escaped = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return quote + escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r") + quote


def _number(text: str) -> tuple[str, str, Any]:
    return ("lit", text, float(text) if "." in text else int(text))


_literals = st.one_of(
    st.integers(min_value=-2, max_value=2).map(lambda n: _number(str(n))),
    st.integers(min_value=-(10**12), max_value=10**12).map(lambda n: _number(str(n))),
    st.integers(min_value=-300, max_value=300).map(lambda n: _number(f"{n / 100:.2f}")),
    st.tuples(
        st.text(alphabet="ab'\"\\\n", max_size=3)
        | st.text(alphabet=st.characters(blacklist_characters="$", codec="utf-8"), max_size=12),
        st.sampled_from(["'", '"']),
    ).map(lambda pair: ("lit", _quote(pair[0], pair[1]), pair[0])),
    st.sampled_from(
        [
            ("lit", word, value)
            for word, value in [
                ("true", True),
                ("True", True),
                ("false", False),
                ("False", False),
                ("null", None),
                ("None", None),
            ]
        ]
    ),
)
_leaves = _literals | st.sampled_from(sorted(REF_VALUES)).map(lambda name: ("ref", name))
_KINDS = ["leaf", "paren", "not", "and", "and", "or", "or", "cmp", "cmp"]


@st.composite
def _trees(draw: st.DrawFn, depth: int = 0) -> tuple[Any, ...]:
    """A random well-formed condition structure (at most 4 levels of operators)."""
    kind = "leaf" if depth >= 4 else draw(st.sampled_from(_KINDS[depth == 0 :]))
    if kind == "leaf":
        return draw(_leaves)
    if kind == "paren":
        return ("paren", draw(_trees(depth + 1)))
    if kind == "not":
        return ("not", draw(st.sampled_from(["not", "!"])), draw(_trees(depth + 1)))
    spellings = {
        "and": ["and", "&&"],
        "or": ["or", "||"],
        "cmp": ["==", "!=", "==", "!=", ">", ">=", "<", "<="],
    }
    return (
        kind,
        draw(st.sampled_from(spellings[kind])),
        draw(_trees(depth + 1)),
        draw(_trees(depth + 1)),
    )


_LEVEL = {"or": 1, "and": 2, "not": 3, "cmp": 4}


def render(node: tuple[Any, ...], needed: int = 0) -> tuple[str, int]:
    """Text with the fewest parentheses the precedence needs, and its nesting depth."""
    kind = node[0]
    if kind == "lit":
        return node[1], 0
    if kind == "ref":
        return f"${{vars.{node[1]}}}", 0
    if kind == "paren":
        text, depth = render(node[1])
        return f"({text})", depth + 1
    if kind == "not":
        text, depth = render(node[2], 3)
        text, depth = f"{node[1]} {text}", depth + 1
    elif kind in ("and", "or"):
        left, left_depth = render(node[2], _LEVEL[kind] + 1)
        right, right_depth = render(node[3], _LEVEL[kind] + 1)
        text, depth = f"{left} {node[1]} {right}", max(left_depth, right_depth)
    else:
        left, left_depth = render(node[2], 5)
        right, right_depth = render(node[3], 5)
        text, depth = f"{left} {node[1]} {right}", max(left_depth, right_depth)
    if _LEVEL[kind] < needed:
        return f"({text})", depth + 1
    return text, depth


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _same(left: Any, right: Any) -> bool:
    if type(left) is bool or type(right) is bool:
        return type(left) is type(right) and left == right
    return bool(left == right)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def reference_value(node: tuple[Any, ...]) -> Any:
    """The independent evaluator: the same semantics, written directly on the structure."""
    kind = node[0]
    if kind == "lit":
        return node[2]
    if kind == "ref":
        return REF_VALUES[node[1]]
    if kind == "paren":
        return reference_value(node[1])
    if kind == "not":
        return not reference_value(node[2])
    if kind == "and":
        return bool(reference_value(node[2])) and bool(reference_value(node[3]))
    if kind == "or":
        return bool(reference_value(node[2])) or bool(reference_value(node[3]))
    left, right = reference_value(node[2]), reference_value(node[3])
    if node[1] == "==":
        return _same(left, right)
    if node[1] == "!=":
        return not _same(left, right)
    if (_is_number(left) and _is_number(right)) or (
        isinstance(left, str) and isinstance(right, str)
    ):
        return _ORDER[node[1]](left, right)
    raise Mismatch


def _lookup(reference: Reference) -> Any:
    assert reference.root == "vars"
    return REF_VALUES[str(reference.path[0])]


@settings(max_examples=300, deadline=None, database=None)
@given(_trees())
def test_generated_expressions_match_the_reference_evaluator(tree: tuple[Any, ...]) -> None:
    text, depth = render(tree)
    if len(text) > MAX_EXPRESSION_LENGTH or depth > MAX_DEPTH:
        with pytest.raises(ConditionSyntaxError, match=r"longer than|nested more than"):
            parse_condition(text)
        return
    parsed = parse_condition(text)
    try:
        expected = bool(reference_value(tree))
    except Mismatch:
        with pytest.raises(ConditionEvaluationError):
            parsed.evaluate(_lookup)
        return
    assert parsed.evaluate(_lookup) is expected, text


@settings(max_examples=300, deadline=None, database=None)
@given(st.sampled_from(sorted(REF_VALUES)), st.sampled_from(sorted(REF_VALUES)))
def test_compare_objects_match_expressions(left: str, right: str) -> None:
    for op, symbol in (("eq", "=="), ("ne", "!="), ("gt", ">"), ("lte", "<=")):
        texts = (f"${{vars.{left}}}", f"${{vars.{right}}}")
        compare = parse_when(ConditionCompare(left=texts[0], op=op, right=texts[1]))  # type: ignore[arg-type]
        expr = parse_condition(f"{texts[0]} {symbol} {texts[1]}")
        outcomes = []
        for parsed in (compare, expr):
            try:
                outcomes.append(parsed.evaluate(_lookup))
            except ConditionEvaluationError:
                outcomes.append("error")
        assert outcomes[0] == outcomes[1]
        assert (
            compare.references
            == expr.references
            == tuple(dict.fromkeys(parse_reference(text) for text in texts))
        )
