"""``${...}`` references: parsing, finding, lookup in a Scope and resolving values."""

from __future__ import annotations

import contextlib
import operator
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.references import (
    MAX_PATH_SEGMENTS,
    MAX_REFERENCE_LENGTH,
    MAX_VALUE_DEPTH,
    Reference,
    ReferenceError_,
    Scope,
    find_references,
    is_whole_reference,
    parse_reference,
    read_reference,
    resolve_value,
    split_template,
    to_text,
)


class _Thing:
    """An object with attributes: references must never reach them."""

    secret = "attribute"


def make_scope(**overrides: Any) -> Scope:
    values: dict[str, Any] = {
        "nodes": {
            "parse": {"evidence": {"files": ["a.pdf", "b.pdf", "c.pdf"], "count": 3}},
            "collect-inputs": {"collected": {"evidence_zip": b"PK", "proceed": True}},
            "skipped": None,
            "empty": {},
        },
        "vars": {
            "x": 1,
            "name": "山田",
            "ratio": 1.5,
            "flag": False,
            "nothing": None,
            "items": [{"id": 10}, {"id": 20}],
            "codes": {"0": "zero", "length": 99},
            "nested": {"a": [1, {"b": "deep"}]},
            "請求書": "invoice",
            "row": {"請求 金額": 1200, "a.b": "dotted"},
        },
        "env": {"HOME": "/home/u", "API_KEY": "k"},
        "config": {"task": {"output": {"sheet": "Summary"}}, "limits": [5, 6]},
        "locals": {"file": {"name": "a.pdf"}, "idx": 2, "thing": _Thing()},
    }
    values.update(overrides)
    return Scope(**values)


# --- parse_reference ------------------------------------------------------------------

PARSE_CASES: list[tuple[str, str, tuple[str | int, ...]]] = [
    ("vars.x", "vars", ("x",)),
    ("parse.evidence.files", "parse", ("evidence", "files")),
    ("items.0", "items", (0,)),
    ("items[0]", "items", (0,)),
    ("a.items[12].name", "a", ("items", 12, "name")),
    ("a.b.length", "a", ("b", "length")),
    ("a.length.b", "a", ("length", "b")),
    ("collect-inputs.collected", "collect-inputs", ("collected",)),
    ("_private.key_2", "_private", ("key_2",)),
    ("vars.請求書", "vars", ("請求書",)),
    ("row['請求 金額']", "row", ("請求 金額",)),
    ('row["a.b"]', "row", ("a.b",)),
    ("row['0']", "row", ("0",)),
    ("file", "file", ()),
    ("a.__class__.__mro__", "a", ("__class__", "__mro__")),
    ("  vars.x  ", "vars", ("x",)),
    ("${vars.x}", "vars", ("x",)),
]


@pytest.mark.parametrize(("text", "root", "path"), PARSE_CASES)
def test_parse_reference(text: str, root: str, path: tuple[str | int, ...]) -> None:
    reference = parse_reference(text)
    assert (reference.root, reference.path) == (root, path)


def test_reference_text_and_str() -> None:
    reference = parse_reference("  config.a[0] ")
    assert reference.text == "config.a[0]"
    assert str(reference) == "${config.a[0]}"
    assert parse_reference("${config.a[0]}") == reference


SYNTAX_ERRORS: list[tuple[str, str, int]] = [
    ("", "の中が空です", 0),
    ("   ", "の中が空です", 3),
    ("${}", "の中が空です", 2),
    ("1abc", "参照は名前（ノード id", 0),
    ("-a", "参照は名前（ノード id", 0),
    ("a b", "ここでは ' ' は使えません", 1),
    ("a.", "'.' の後にキーがありません", 1),
    ("a..b", "'.' の後にキーがありません", 1),
    ("a[", "のような番号か", 1),
    ("a[x]", "のような番号か", 1),
    ("a[-1]", "のような番号か", 1),
    ("a['x]", "のような番号か", 1),
    ("a.b()", "ここでは '(' は使えません", 3),
    ("a+b", "ここでは '+' は使えません", 1),
    ("a}", "ここでは '}' は使えません", 1),
    ("a\x00", "ここでは '\\x00' は使えません", 1),
    ("a.b\u200b", "は使えません", 3),
    ("${a.${b}}", "参照の中に '${'", 4),
    ("${a{b}", "参照の中に '{' があります", 3),
    ("${a", "'${' が閉じていません", 0),
    ("${a}${b}", "参照の後に余分な文字", 4),
    ("a" * (MAX_REFERENCE_LENGTH + 1), "500 文字より長い", 0),
    (".".join(["a"] * (MAX_PATH_SEGMENTS + 2)), "参照の段数が 32 を超えて", 65),
]


@pytest.mark.parametrize(("text", "fragment", "position"), SYNTAX_ERRORS)
def test_parse_reference_syntax_errors(text: str, fragment: str, position: int) -> None:
    with pytest.raises(ReferenceError_, match="参照の書き方に誤り") as caught:
        parse_reference(text)
    assert fragment in caught.value.message
    assert caught.value.details["position"] == position
    assert f"（{position} 文字目" in caught.value.message
    assert isinstance(caught.value, UserInputError)
    assert caught.value.code == "REFERENCE_ERROR"


def test_parse_reference_limits_are_inclusive() -> None:
    assert parse_reference("a" * MAX_REFERENCE_LENGTH).root == "a" * MAX_REFERENCE_LENGTH
    assert len(parse_reference(".".join(["a"] * (MAX_PATH_SEGMENTS + 1))).path) == 32


def test_parse_reference_rejects_non_text() -> None:
    with pytest.raises(ReferenceError_, match="文字列で書いてください"):
        parse_reference(42)  # type: ignore[arg-type]


def test_read_reference_returns_the_end_offset() -> None:
    reference, end = read_reference("x ${vars.x} y", 2)
    assert (reference.text, end) == ("vars.x", 11)


# --- templates, find_references, is_whole_reference -----------------------------------

SPLIT_CASES: list[tuple[str, list[str | Reference]]] = [
    ("plain text", ["plain text"]),
    ("", [""]),
    ("${a}", [parse_reference("a")]),
    ("n=${a.b} and ${c}!", ["n=", parse_reference("a.b"), " and ", parse_reference("c"), "!"]),
    ("${a}${b}", [parse_reference("a"), parse_reference("b")]),
    ("$${a}", ["${a}"]),
    ("cost $5 {not a ref} }", ["cost $5 {not a ref} }"]),
    ("$${a} ${b}", ["${a} ", parse_reference("b")]),
]


@pytest.mark.parametrize(("text", "parts"), SPLIT_CASES)
def test_split_template(text: str, parts: list[str | Reference]) -> None:
    assert split_template(text) == parts


TEMPLATE_ERRORS: list[tuple[str, str, int]] = [
    ("x ${} y", "の中が空です", 4),
    ("x ${a", "'${' が閉じていません", 2),
    ("x ${a ${b}}", "参照の中に '${'", 6),
    ("x ${a b} y", "ここでは ' ' は使えません", 5),
    ("${" + "a" * 600 + "}", "500 文字より長い", 2),
]


@pytest.mark.parametrize(("text", "fragment", "position"), TEMPLATE_ERRORS)
def test_template_syntax_errors(text: str, fragment: str, position: int) -> None:
    with pytest.raises(ReferenceError_) as caught:
        split_template(text)
    assert fragment in caught.value.message
    assert caught.value.details["position"] == position


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${a}", True),
        ("${a.b[0].length}", True),
        (" ${a}", False),
        ("${a} ", False),
        ("${a}${b}", False),
        ("x${a}", False),
        ("$${a}", False),
        ("${a", False),
        ("${}", False),
        ("${a b}", False),
        (42, False),
        (None, False),
        (["${a}"], False),
    ],
)
def test_is_whole_reference(value: Any, expected: bool) -> None:
    assert is_whole_reference(value) is expected


def test_find_references_gives_field_paths() -> None:
    value = {
        "mode": "mixed",
        "count": 3,
        "requirements": [
            {"id": "a", "label": "${vars.label}"},
            {"id": "b", "label": "File ${vars.name} (${parse.evidence.count})"},
        ],
        "escaped": "$${vars.not_a_reference}",
        "nested": {"deep": [["${config.a.b}"]]},
    }
    found = [(path, ref.text) for path, ref in find_references(value, "in")]
    assert found == [
        ("in.requirements[0].label", "vars.label"),
        ("in.requirements[1].label", "vars.name"),
        ("in.requirements[1].label", "parse.evidence.count"),
        ("in.nested.deep[0][0]", "config.a.b"),
    ]
    assert [path for path, _ in find_references(["${a}"])] == ["[0]"]
    assert list(find_references(42)) == []


def test_find_references_names_the_field_on_bad_syntax() -> None:
    with pytest.raises(ReferenceError_, match=r"in\.items\[1\]: 参照の書き方に誤り") as caught:
        list(find_references({"items": ["ok", "bad ${x"]}, "in"))
    assert caught.value.details["field"] == "in.items[1]"


def test_find_references_bounds_nesting() -> None:
    value: Any = "${a}"
    for _ in range(MAX_VALUE_DEPTH + 5):
        value = [value]
    with pytest.raises(ReferenceError_, match="段より深いです"):
        list(find_references(value))
    with pytest.raises(ReferenceError_, match="段より深いです"):
        resolve_value(value, lambda reference: 1)


# --- Scope.lookup ---------------------------------------------------------------------

LOOKUP_CASES: list[tuple[str, Any]] = [
    ("vars.x", 1),
    ("vars.name", "山田"),
    ("vars.請求書", "invoice"),
    ("vars.items[1].id", 20),
    ("vars.items.0.id", 10),
    ("vars.items.length", 2),
    ("vars.name.length", 2),
    ("vars.nested.length", 1),
    ("vars.nested.a[1].b", "deep"),
    ("vars.codes.0", "zero"),
    ("vars.codes.length", 99),
    ("vars.row['請求 金額']", 1200),
    ("vars.row['a.b']", "dotted"),
    ("vars.nothing", None),
    ("parse.evidence.files", ["a.pdf", "b.pdf", "c.pdf"]),
    ("collect-inputs.collected.proceed", True),
    ("env.HOME", "/home/u"),
    ("env.HOME.length", 7),
    ("config.task.output.sheet", "Summary"),
    ("config.limits[1]", 6),
    ("file.name", "a.pdf"),
    ("idx", 2),
    ("skipped.anything", None),
    ("skipped.anything.deeper[3].length", None),
    ("empty", {}),
]


@pytest.mark.parametrize(("text", "expected"), LOOKUP_CASES)
def test_lookup(text: str, expected: Any) -> None:
    assert make_scope().lookup(parse_reference(text)) == expected


def test_loop_locals_are_looked_up_first() -> None:
    scope = make_scope(locals={"parse": "shadowed", "vars": {"x": "local"}})
    assert scope.lookup(parse_reference("parse")) == "shadowed"
    assert scope.lookup(parse_reference("vars.x")) == "local"
    assert make_scope().lookup(parse_reference("vars")) == make_scope().vars


LOOKUP_ERRORS: list[tuple[str, list[str]]] = [
    ("nope.x", ["参照の名前 'nope' は見つかりません", "vars", "config", "parse"]),
    ("prase.evidence", ["'prase'", "'parse' のことですか"]),
    (
        "collect-inputs.colected",
        ["出力の別名 'colected' は見つかりません", "'collected' のことですか"],
    ),
    ("empty.x", ["出力の別名 'x' は見つかりません", "empty は空です"]),
    ("vars.y", ["キー 'y' は見つかりません", "使えるもの: x, name", "（vars の中）"]),
    ("vars.nested.a[5]", ["番号 5 は範囲外です", "vars.nested.a", "0〜1"]),
    ("vars.items.first", ["2 個の要素のリスト", "[0] のような番号"]),
    ("vars.x.length", ["vars.x は int", ".length（長さ）がありません"]),
    ("vars.nothing.length", ["vars.nothing は null", ".length（長さ）がありません"]),
    ("vars.nothing.key", ["vars.nothing は null", "'key' は取り出せません"]),
    ("vars.name.first", ["vars.name は 文字列"]),
    ("vars.x.__class__", ["vars.x は int", "マッピングとリストだけ"]),
    ("vars.__class__.__mro__", ["キー '__class__' は見つかりません"]),
    ("thing.secret", ["thing は _Thing", "マッピングとリストだけ"]),
    ("thing.__class__.__mro__", ["マッピングとリストだけ"]),
    ("env.HOMEE", ["環境変数 'HOMEE' が設定されていません", "'HOME' のことですか"]),
    ("env.PATH_TO_NOTHING", ["環境変数 'PATH_TO_NOTHING' が設定されていません"]),
    ("env", ["環境変数の名前を書いてください"]),
    ("config.task.outptu", ["キー 'outptu' は見つかりません", "'output' のことですか"]),
]


@pytest.mark.parametrize(("text", "fragments"), LOOKUP_ERRORS)
def test_lookup_errors(text: str, fragments: list[str]) -> None:
    with pytest.raises(ReferenceError_) as caught:
        make_scope().lookup(parse_reference(text))
    message = caught.value.message
    assert message.startswith(f"${{{text}}} の値を取り出せません")
    for fragment in fragments:
        assert fragment in message
    assert caught.value.details["reference"] == text


def test_lookup_error_details_list_what_exists() -> None:
    with pytest.raises(ReferenceError_) as caught:
        make_scope().lookup(parse_reference("config.task.nope"))
    assert caught.value.details["missing"] == "nope"
    assert caught.value.details["available"] == ["output"]
    assert caught.value.details["at"] == "config.task"


def test_env_error_does_not_list_every_variable() -> None:
    with pytest.raises(ReferenceError_) as caught:
        make_scope().lookup(parse_reference("env.ZZZ"))
    assert "API_KEY" not in caught.value.message


# --- resolve_value --------------------------------------------------------------------

RESOLVE_CASES: list[tuple[Any, Any]] = [
    ("${vars.x}", 1),
    ("${vars.ratio}", 1.5),
    ("${vars.flag}", False),
    ("${vars.nothing}", None),
    ("${vars.items}", [{"id": 10}, {"id": 20}]),
    ("n=${vars.x}", "n=1"),
    ("r=${vars.ratio}", "r=1.5"),
    ("[${vars.nothing}]", "[]"),
    ("f=${vars.flag}", "f=false"),
    ("${vars.name}さん", "山田さん"),
    ("items=${vars.items}", 'items=[{"id":10},{"id":20}]'),
    ("row=${vars.row}", 'row={"請求 金額":1200,"a.b":"dotted"}'),
    ("${vars.x}${vars.x}", "11"),
    ("$${vars.x} is ${vars.x}", "${vars.x} is 1"),
    ("$${vars.x}", "${vars.x}"),
    ("no references {here}", "no references {here}"),
    (42, 42),
    (None, None),
    (
        {"a": "${vars.x}", "b": ["${vars.name}", {"c": "x${vars.x}"}], "${vars.x}": "k"},
        {"a": 1, "b": ["山田", {"c": "x1"}], "${vars.x}": "k"},
    ),
    (("${vars.x}", 2), (1, 2)),
]


@pytest.mark.parametrize(("value", "expected"), RESOLVE_CASES)
def test_resolve_value(value: Any, expected: Any) -> None:
    assert resolve_value(value, make_scope().lookup) == expected


def test_resolve_value_keeps_the_referenced_object() -> None:
    scope = make_scope()
    assert resolve_value("${vars.items}", scope.lookup) is scope.vars["items"]


def test_resolve_value_propagates_lookup_errors() -> None:
    with pytest.raises(ReferenceError_, match="キー 'missing' は見つかりません"):
        resolve_value({"a": ["text ${vars.missing}"]}, make_scope().lookup)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        ("s", "s"),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (2.5, "2.5"),
        ({"a": [1, "é"]}, '{"a":[1,"é"]}'),
        ((1, 2), "[1,2]"),
        ({"b": b"x"}, '{"b":"b\'x\'"}'),
    ],
)
def test_to_text(value: Any, text: str) -> None:
    assert to_text(value) == text


# --- hostile input --------------------------------------------------------------------

HOSTILE = [
    "${" + "a" * 10**6 + "}",
    "${" * 500_000,
    "${a" + "." * 10**6,
    "${__import__('os').system('x')}",
    "${a.__class__.__mro__[1].__subclasses__()}",
    "${().__class__}",
    "${a\x00b}",
    "${a.b" + "[0]" * 100 + "}",
    "${" + "{" * 10_000 + "}" * 10_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda text: repr(text[:30]))
def test_hostile_references_are_rejected_quickly(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ReferenceError_, match="参照の書き方に誤り"):
        split_template(text)
    with pytest.raises(ReferenceError_):
        parse_reference(text)
    assert time.perf_counter() - started < 0.5


def test_long_plain_text_is_fast() -> None:
    started = time.perf_counter()
    text = "x" * 10**6 + "$" * 1000 + "}" * 1000
    assert resolve_value(text, make_scope().lookup) == text
    assert list(find_references(text)) == []
    assert time.perf_counter() - started < 0.5


# --- properties -----------------------------------------------------------------------


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=60) | st.text(alphabet="${}[]. 'a0_-\\\"", max_size=40))
def test_random_text_only_raises_reference_errors(text: str) -> None:
    is_whole_reference(text)  # never raises
    for call in (
        lambda: parse_reference(text),
        lambda: split_template(text),
        lambda: list(find_references({"k": [text]})),
        lambda: resolve_value(text, lambda reference: reference.text),
    ):
        with contextlib.suppress(ReferenceError_):
            call()


_NAME_START = "abcxyzABCXYZ_請"
_names = st.builds(
    operator.add,
    st.sampled_from(_NAME_START),
    st.text(alphabet=_NAME_START + "0189-", max_size=8),
)
_segments = st.lists(
    st.one_of(
        _names.filter(lambda name: not name.isdigit()),
        st.integers(min_value=0, max_value=10**6),
    ),
    max_size=MAX_PATH_SEGMENTS,
)


@settings(max_examples=300, deadline=None, database=None)
@given(_names, _segments, st.booleans())
def test_generated_references_round_trip(root: str, path: list[str | int], brackets: bool) -> None:
    text = root + "".join(
        f"[{segment}]" if isinstance(segment, int) and brackets else f".{segment}"
        for segment in path
    )
    reference = parse_reference(text)
    assert (reference.root, reference.path, reference.text) == (root, tuple(path), text)
    assert split_template(f"<${{{text}}}>") == ["<", reference, ">"]
    assert is_whole_reference(f"${{{text}}}")


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=40))
def test_text_without_dollar_is_unchanged(text: str) -> None:
    assert resolve_value(text, make_scope().lookup) == text
    assert split_template("<${x}>" + text) == ["<", parse_reference("x"), ">" + text]
