"""table.compute and its expression grammar against hand-computed values and pandas."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd
import pytest
from block_harness import failure, make_context, run

from keiri_agent.blocks.expressions import (
    MAX_DEPTH,
    MAX_EXPRESSION_LENGTH,
    ExpressionProblem,
    ExpressionSyntaxError,
    parse_expression,
)

ITEMS = [
    {"品名": "用紙", "単価": 500, "数量": 3, "税率": 0.1},
    {"品名": "トナー", "単価": 12800, "数量": 1, "税率": 0.1},
    {"品名": "お茶", "単価": 128, "数量": 7, "税率": 0.08},
    {"品名": "不明", "単価": None, "数量": 2, "税率": 0.1},
]


def evaluate(source: str, **row: object) -> object:
    return parse_expression(source).evaluate(row)


def test_derived_columns_equal_pandas_with_half_up_rounding() -> None:
    out = run(
        "table.compute",
        make_context(),
        records=ITEMS,
        columns={"小計": "単価 * 数量", "税込": "round(小計 * (1 + 税率), 0)"},
    )
    frame = pd.DataFrame(ITEMS)
    frame["小計"] = frame["単価"] * frame["数量"]
    # pandas rounds half to even: round half up by hand on exact decimals instead
    expected_tax = [
        None
        if pd.isna(subtotal)
        else int(
            (Decimal(str(int(subtotal))) * (1 + Decimal(str(rate)))).quantize(
                Decimal(1), rounding=ROUND_HALF_UP
            )
        )
        for subtotal, rate in zip(frame["小計"], frame["税率"], strict=True)
    ]
    records = out["records"]
    assert [r["小計"] for r in records[:3]] == frame["小計"][:3].astype(int).tolist()
    assert records[3]["小計"] is None  # null propagates
    assert [r["税込"] for r in records] == expected_tax
    assert expected_tax[2] == 968  # 896 * 1.08 = 967.68
    assert out["problems"] == []
    assert records[0] == {**ITEMS[0], "小計": 1500, "税込": 1650}


@pytest.mark.parametrize(
    ("source", "row", "expected"),
    [
        ("round(2.5)", {}, 3),
        ("round(-2.5)", {}, -3),  # half away from zero, as offices round
        ("round(1.005, 2)", {}, 1.01),  # exact decimals: float would give 1.0
        ("round(1234, -2)", {}, 1200),
        ("floor(-1.5) + ceil(1.2)", {}, 0),
        ("abs(-3) * 2", {}, 6),
        ("0.1 + 0.2 == 0.3", {}, True),
        ("7 % 3 + -7 % 3", {}, 1 + 2),  # floor modulo, as Python and pandas
        ("10 / 4", {}, 2.5),
        ("min(3, 1, 2) + max(1, 5)", {}, 6),
        ("min(null, 4)", {}, 4),
        ("coalesce(null, b, 3)", {"b": None}, 3),
        ("if(a > 1, 'big', 'small')", {"a": 2}, "big"),
        ("if(a > 1, 'big', 'small')", {"a": None}, "small"),
        ("len('請求書')", {}, 3),
        ("concat(a, '-', null, 1)", {"a": "INV"}, "INV-1"),
        ("[税込 金額] - 金額", {"税込 金額": 1100, "金額": 1000}, 100),
        ("金額 + 1", {"金額": "¥1,200"}, 1201),
        ("a + b", {"a": "1,000", "b": "△200"}, 800),
        ("a + b", {"a": "株式会社", "b": "あおば"}, "株式会社あおば"),
        ("a > b", {"a": "1,000", "b": "900"}, True),  # numbers as text compare as numbers
        ("a < b", {"a": "2025-01-31", "b": "2025-02-01"}, True),
        ("a == 1", {"a": 1.0}, True),
        ("a == 'x' or not b", {"a": "y", "b": False}, True),
        ("a * 2", {"a": None}, None),
        ("a > 1", {"a": None}, None),
        ("a", {"a": float("nan")}, None),
    ],
)
def test_expressions_against_hand_computed_values(
    source: str, row: dict[str, object], expected: object
) -> None:
    assert evaluate(source, **row) == expected


def test_a_row_problem_leaves_null_and_a_problem_row() -> None:
    records = [{"金額": 1000, "数量": 4}, {"金額": 1000, "数量": 0}, {"金額": "不明", "数量": 2}]
    out = run("table.compute", make_context(), records=records, columns={"単価": "金額 / 数量"})
    assert [r["単価"] for r in out["records"]] == [250, None, None]
    assert [(p["row"], p["column"]) for p in out["problems"]] == [(2, "単価"), (3, "単価")]
    assert "0 で割っています" in out["problems"][0]["reason"]
    assert "数値が必要" in out["problems"][1]["reason"]
    assert records[1] == {"金額": 1000, "数量": 0}  # inputs untouched


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os').system('x')",
        "a.__class__",
        "2 ** 3",
        "open('x')",
        "lambda: 1",
        "a[0]",
        "1 +",
        "round()",
        "if(1, 2)",
        "a b",
        "'unterminated",
        "",
    ],
)
def test_anything_outside_the_grammar_is_a_syntax_error(source: str) -> None:
    with pytest.raises(ExpressionSyntaxError):
        parse_expression(source)


def test_length_and_depth_are_bounded() -> None:
    with pytest.raises(ExpressionSyntaxError, match="長すぎます"):
        parse_expression("1+" * MAX_EXPRESSION_LENGTH + "1")
    with pytest.raises(ExpressionSyntaxError, match="入れ子"):
        parse_expression("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(ExpressionSyntaxError, match="入れ子"):
        parse_expression("-" * (MAX_DEPTH + 1) + "1")
    assert parse_expression("(" * 10 + "1" + ")" * 10).evaluate({}) == 1


def test_huge_values_are_problems_not_crashes() -> None:
    with pytest.raises(ExpressionProblem):
        evaluate("a * a * a * a", a=1e308)
    huge = "x" * 60_000
    with pytest.raises(ExpressionProblem, match="長すぎ"):
        evaluate("concat(a, a)", a=huge)
    assert evaluate("len(a)", a=huge) == 60_000
    assert math.isclose(evaluate("a / 3", a=1e300), 1e300 / 3)  # type: ignore[arg-type]


def test_formula_text_stays_text() -> None:
    out = run(
        "table.compute",
        make_context(),
        records=[{"備考": '=HYPERLINK("http://x")'}],
        columns={"表示": "concat('メモ:', 備考)"},
    )
    assert out["records"][0]["表示"] == 'メモ:=HYPERLINK("http://x")'


def test_bad_columns_and_unknown_names_are_japanese_errors() -> None:
    error = failure("table.compute", make_context(), records=ITEMS, columns={"x": "単価 * 数"})
    assert "'数'" in error.message and error.hint and "数量" in error.hint
    error = failure("table.compute", make_context(), records=ITEMS, columns={"x": "単価 **"})
    assert "読めません" in error.message and error.details["position"] == 4
    # a later expression may use an earlier one
    out = run(
        "table.compute", make_context(), records=ITEMS[:1], columns={"a": "単価", "b": "a * 2"}
    )
    assert out["records"][0]["b"] == 1000
