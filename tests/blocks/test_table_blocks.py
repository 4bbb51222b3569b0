"""Built-in table blocks against expectations computed independently (by hand and pandas)."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pandas as pd
import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.plans.catalog.catalog import BlockCatalog, schema_problems

SALES = [
    {"id": 1, "部門": "営業", "担当": "佐藤", "金額": 1200, "日付": "2025-01-05", "タグ": ["至急"]},
    {"id": 2, "部門": "総務", "担当": "鈴木", "金額": 300, "日付": "2025-02-10", "タグ": []},
    {"id": 3, "部門": "営業", "担当": "高橋", "金額": None, "日付": "2025-01-20", "タグ": []},
    {"id": 4, "部門": "経理", "担当": "佐藤", "金額": 800.5, "日付": "2025-03-01"},
    {"id": 5, "部門": "営業", "担当": None, "金額": 50, "日付": "2025-02-28", "タグ": ["確認"]},
]
CATALOG = BlockCatalog.discover()


@pytest.fixture
def ctx() -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(),
    )


def run(block_id: str, ctx: BlockContext, **inputs: Any) -> list[dict[str, Any]]:
    spec = CATALOG.resolve(block_id)
    values = {**spec.input_defaults(), **inputs}
    for name, value in values.items():
        assert schema_problems(value, spec.input_schema(name)) == [], name
    before = copy.deepcopy(values)
    outputs = CATALOG.load(spec).run(values, ctx)
    assert values == before  # inputs are not modified
    assert schema_problems(outputs["records"], spec.output_schema("records")) == []
    return outputs["records"]


def invalid(block_id: str, ctx: BlockContext, **inputs: Any) -> BlockError:
    spec = CATALOG.resolve(block_id)
    with pytest.raises(BlockError) as caught:
        CATALOG.load(spec).run({**spec.input_defaults(), **inputs}, ctx)
    assert caught.value.code == BlockErrorCode.INPUT_VALIDATION_FAILED
    return caught.value


def ids(records: list[dict[str, Any]]) -> list[int]:
    return [row["id"] for row in records]


# --- table.filter -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([], [1, 2, 3, 4, 5]),
        ([{"col": "部門", "op": "==", "value": "営業"}], [1, 3, 5]),
        ([{"col": "部門", "op": "!=", "value": "営業"}], [2, 4]),
        ([{"col": "金額", "op": ">", "value": 300}], [1, 4]),
        ([{"col": "金額", "op": ">=", "value": 300}], [1, 2, 4]),
        ([{"col": "金額", "op": "<", "value": 300}], [5]),
        ([{"col": "金額", "op": "<=", "value": 800.5}], [2, 4, 5]),
        ([{"col": "金額", "op": "==", "value": None}], [3]),
        ([{"col": "金額", "op": "is_null"}], [3]),
        ([{"col": "担当", "op": "not_null"}], [1, 2, 3, 4]),
        ([{"col": "担当", "op": "!=", "value": "佐藤"}], [2, 3, 5]),
        ([{"col": "担当", "op": "in", "value": ["佐藤", "高橋"]}], [1, 3, 4]),
        ([{"col": "担当", "op": "in", "value": [None]}], [5]),
        ([{"col": "担当", "op": "contains", "value": "藤"}], [1, 4]),
        ([{"col": "タグ", "op": "contains", "value": "至急"}], [1]),
        ([{"col": "タグ", "op": "is_null"}], [4]),
        # the complements keep blank cells: a blank is none of the values and holds no text
        ([{"col": "担当", "op": "not_in", "value": ["佐藤", "高橋"]}], [2, 5]),
        ([{"col": "担当", "op": "not_contains", "value": "藤"}], [2, 3, 5]),
        ([{"col": "タグ", "op": "not_contains", "value": "至急"}], [2, 3, 4, 5]),
        ([{"col": "日付", "op": ">=", "value": "2025-02-01"}], [2, 4, 5]),
        (
            [
                {"col": "部門", "op": "==", "value": "営業"},
                {"col": "金額", "op": ">", "value": 100},
            ],
            [1],
        ),
        ([{"col": "id", "op": "==", "value": 1.0}], [1]),
        # a number column against number text (a form's answer, office notation)
        ([{"col": "金額", "op": ">", "value": "300"}], [1, 4]),
        ([{"col": "金額", "op": ">=", "value": "¥1,200"}], [1]),
    ],
)
def test_filter(ctx: BlockContext, conditions: list[dict[str, Any]], expected: list[int]) -> None:
    assert ids(run("table.filter", ctx, records=SALES, conditions=conditions)) == expected


def test_filter_keeps_records_intact_and_matches_pandas(ctx: BlockContext) -> None:
    kept = run(
        "table.filter", ctx, records=SALES, conditions=[{"col": "金額", "op": ">=", "value": 50}]
    )
    assert kept == [SALES[0], SALES[1], SALES[3], SALES[4]]
    frame = pd.DataFrame(SALES)
    assert ids(kept) == frame[frame["金額"] >= 50]["id"].tolist()


def test_booleans_are_not_numbers(ctx: BlockContext) -> None:
    records = [{"id": 1, "flag": True}, {"id": 2, "flag": 1}, {"id": 3, "flag": False}]
    assert ids(
        run(
            "table.filter",
            ctx,
            records=records,
            conditions=[{"col": "flag", "op": "==", "value": True}],
        )
    ) == [1]
    assert ids(
        run(
            "table.filter",
            ctx,
            records=records,
            conditions=[{"col": "flag", "op": "in", "value": [1]}],
        )
    ) == [2]


def test_filter_unknown_column_has_a_close_match_hint(ctx: BlockContext) -> None:
    error = invalid(
        "table.filter", ctx, records=SALES, conditions=[{"col": "金 額", "op": ">", "value": 1}]
    )
    assert "列 '金 額' は見つかりません" in error.message and "'金額' のことですか" in error.message
    assert error.hint == "'金額' ではありませんか？"
    assert error.details["column"] == "金 額"


def test_filter_compares_text_in_either_width(ctx: BlockContext) -> None:
    # before: 「第2ハウス」 (an instruction, folded) kept none of the file's 「第２ハウス」 rows
    rows = [
        {"圃場": "第２ハウス", "品名": "ｲﾁｺﾞ", "備考": "Ａ級 "},
        {"圃場": "第2ハウス", "品名": "イチゴ", "備考": "B級"},
        {"圃場": "第3ハウス", "品名": "トマト", "備考": None},
    ]

    def kept(*conditions: dict[str, Any]) -> list[str]:
        kept = run("table.filter", ctx, records=rows, conditions=list(conditions))
        return [row["圃場"] for row in kept]

    assert kept({"col": "圃場", "op": "==", "value": "第2ハウス"}) == ["第２ハウス", "第2ハウス"]
    assert kept({"col": "圃場", "op": "!=", "value": "第２ハウス"}) == ["第3ハウス"]
    assert kept({"col": "品名", "op": "in", "value": ["イチゴ"]}) == ["第２ハウス", "第2ハウス"]
    assert kept({"col": "品名", "op": "not_in", "value": ["ｲﾁｺﾞ"]}) == ["第3ハウス"]
    assert kept({"col": "備考", "op": "contains", "value": "A級"}) == ["第２ハウス"]
    assert kept({"col": "備考", "op": "not_contains", "value": "級"}) == ["第3ハウス"]
    assert kept({"col": "備考", "op": "==", "value": "a級"}) == []  # case is not width


def test_filter_on_no_records_returns_no_records(ctx: BlockContext) -> None:
    conditions = [{"col": "anything", "op": "==", "value": 1}]
    assert run("table.filter", ctx, records=[], conditions=conditions) == []


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ({"col": "部門", "op": ">", "value": 1}, "文字列 '営業' と 数値 1 は比べられません"),
        (
            {"col": "金額", "op": ">", "value": "多い"},
            "数値 1200 と 文字列 '多い' は比べられません",
        ),
        ({"col": "金額", "op": "contains", "value": "1"}, "op 'contains' は列が文字列"),
        ({"col": "金額", "op": "in", "value": 1}, "value は候補のリスト"),
        ({"col": "金額", "op": "not_in", "value": "営業"}, "value は候補のリスト"),
        ({"col": "金額", "op": "not_contains", "value": "1"}, "op 'not_contains' は列が文字列"),
        ({"col": "金額", "op": ">", "value": None}, "value は数値か文字列"),
        ({"col": "金額", "op": "~", "value": 1}, "op '~' は使えません"),
        ({"op": "==", "value": 1}, "col（列名）と op"),
        (
            {"col": "担当", "op": "contains", "value": None},
            "value（含まれているか調べる文字列）が必要",
        ),
    ],
)
def test_filter_bad_conditions(ctx: BlockContext, condition: dict[str, Any], message: str) -> None:
    error = invalid("table.filter", ctx, records=SALES, conditions=[condition])
    assert message in error.message and "conditions[0]" in error.message


def test_bad_records_are_refused(ctx: BlockContext) -> None:
    assert "records[1]" in invalid("table.filter", ctx, records=[{"a": 1}, 3]).message
    assert (
        "行（オブジェクト）のリスト"
        in invalid("table.sort", ctx, records={"a": 1}, by=["a"]).message
    )


# --- table.sort -------------------------------------------------------------------------


def test_sort_matches_pandas_with_nulls_last(ctx: BlockContext) -> None:
    frame = pd.DataFrame(SALES)
    for by, ascending in [
        (["金額"], True),
        (["金額"], False),
        (["部門", "金額"], [True, False]),
        (["担当", "id"], [False, True]),
        (["日付"], True),
    ]:
        flags = ascending if isinstance(ascending, list) else [ascending] * len(by)
        expected = frame.sort_values(by, ascending=flags, na_position="last", kind="stable")
        result = run("table.sort", ctx, records=SALES, by=by, ascending=ascending)
        assert ids(result) == expected["id"].tolist(), (by, ascending)


def test_sort_is_stable(ctx: BlockContext) -> None:
    result = run("table.sort", ctx, records=SALES, by=["部門"])
    assert ids(result) == [1, 3, 5, 4, 2]  # 営業 < 経理 < 総務 in code points, ties kept
    assert sorted(["営業", "総務", "経理"]) == ["営業", "経理", "総務"]


def test_sort_errors(ctx: BlockContext) -> None:
    assert "'金額' のことですか" in invalid("table.sort", ctx, records=SALES, by=["金"]).message
    error = invalid("table.sort", ctx, records=SALES, by=["id", "金額"], ascending=[True])
    assert "ascending の指定が 1 個ありますが、by の列は 2 個です" in error.message
    mixed = [{"v": 1}, {"v": "a"}]
    assert "種類の違う値" in invalid("table.sort", ctx, records=mixed, by=["v"]).message
    assert "1 つ以上" in invalid("table.sort", ctx, records=SALES, by=[]).message


# --- table.select -----------------------------------------------------------------------


def test_select_columns_in_order_with_rename(ctx: BlockContext) -> None:
    result = run(
        "table.select",
        ctx,
        records=SALES,
        columns=["金額", "id", "タグ"],
        rename={"金額": "amount"},
    )
    assert result[0] == {"amount": 1200, "id": 1, "タグ": ["至急"]}
    assert list(result[0]) == ["amount", "id", "タグ"]
    assert result[3] == {"amount": 800.5, "id": 4, "タグ": None}  # missing key -> null
    assert len(result) == len(SALES)


def test_rename_only_keeps_every_column(ctx: BlockContext) -> None:
    result = run("table.select", ctx, records=SALES, rename={"担当": "person"})
    assert result == [{("person" if k == "担当" else k): v for k, v in r.items()} for r in SALES]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"columns": ["ID"]}, "'id' のことですか"),
        ({"rename": {"名前": "x"}}, "列 '名前' は見つかりません"),
        ({"columns": ["id"], "rename": {"金額": "x"}}, "columns で選んだ列に入っていません"),
        ({"rename": {"id": "金額"}}, "同じ名前 '金額' になります"),
        ({"columns": ["id", "id"]}, "2 回"),
        ({}, "少なくとも一方"),
        ({"rename": {"id": 1}}, "「元の列名: 新しい列名」"),
    ],
)
def test_select_errors(ctx: BlockContext, inputs: dict[str, Any], message: str) -> None:
    assert message in invalid("table.select", ctx, records=SALES, **inputs).message


# --- table.aggregate --------------------------------------------------------------------


def test_aggregate_by_group_matches_pandas(ctx: BlockContext) -> None:
    metrics = {"金額": ["sum", "mean", "count", "min", "max"], "id": ["count"]}
    result = run("table.aggregate", ctx, records=SALES, group_by=["部門"], metrics=metrics)
    frame = pd.DataFrame(SALES)
    grouped = frame.groupby("部門", sort=False, dropna=False)
    assert [row["部門"] for row in result] == list(grouped.groups)
    for row in result:
        group = grouped.get_group(row["部門"])
        for agg in metrics["金額"]:
            expected = getattr(group["金額"], agg)()
            actual = row[f"金額_{agg}"]
            assert (actual is None and pd.isna(expected)) or actual == pytest.approx(expected)
        assert row["id_count"] == len(group)
    eigyo = result[0]
    assert eigyo == {
        "部門": "営業",
        "金額_sum": 1250,
        "金額_mean": 625.0,
        "金額_count": 2,
        "金額_min": 50,
        "金額_max": 1200,
        "id_count": 3,
    }
    assert isinstance(eigyo["金額_sum"], int)


def test_aggregate_median_and_distinct_count_match_pandas(ctx: BlockContext) -> None:
    metrics = {"金額": ["median", "nunique"], "担当": ["nunique"]}
    result = run("table.aggregate", ctx, records=SALES, group_by=["部門"], metrics=metrics)
    grouped = pd.DataFrame(SALES).groupby("部門", sort=False, dropna=False)
    for row in result:
        group = grouped.get_group(row["部門"])
        assert row["金額_median"] == pytest.approx(group["金額"].median())
        assert row["金額_nunique"] == group["金額"].nunique()
        assert row["担当_nunique"] == group["担当"].nunique()
    assert result[0] == {"部門": "営業", "金額_median": 625.0, "金額_nunique": 2, "担当_nunique": 2}
    whole = run("table.aggregate", ctx, records=SALES, metrics={"担当": ["nunique"]})
    assert whole == [{"担当_nunique": 3}]  # 佐藤 twice, a blank not counted
    empty = run("table.aggregate", ctx, records=[], metrics={"x": ["median", "nunique"]})
    assert empty == [{"x_median": None, "x_nunique": 0}]


def test_aggregate_without_groups_is_one_row(ctx: BlockContext) -> None:
    result = run("table.aggregate", ctx, records=SALES, metrics={"金額": ["sum", "max"]})
    assert result == [{"金額_sum": 2350.5, "金額_max": 1200}]
    empty = run("table.aggregate", ctx, records=[], metrics={"x": ["sum", "mean", "count", "min"]})
    assert empty == [{"x_sum": 0, "x_mean": None, "x_count": 0, "x_min": None}]
    assert run("table.aggregate", ctx, records=[], group_by=["g"], metrics={"x": ["sum"]}) == []


def test_aggregate_null_groups_and_text_min_max(ctx: BlockContext) -> None:
    result = run(
        "table.aggregate", ctx, records=SALES, group_by=["担当"], metrics={"日付": ["min", "max"]}
    )
    assert result == [
        {"担当": "佐藤", "日付_min": "2025-01-05", "日付_max": "2025-03-01"},
        {"担当": "鈴木", "日付_min": "2025-02-10", "日付_max": "2025-02-10"},
        {"担当": "高橋", "日付_min": "2025-01-20", "日付_max": "2025-01-20"},
        {"担当": None, "日付_min": "2025-02-28", "日付_max": "2025-02-28"},
    ]


def test_aggregate_all_null_column(ctx: BlockContext) -> None:
    records = [{"g": "a", "v": None}, {"g": "a", "v": float("nan")}]
    result = run(
        "table.aggregate",
        ctx,
        records=records,
        group_by=["g"],
        metrics={"v": ["sum", "mean", "count", "min", "max"]},
    )
    assert result == [
        {"g": "a", "v_sum": 0, "v_mean": None, "v_count": 0, "v_min": None, "v_max": None}
    ]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"metrics": {"部門": ["sum"]}}, "sum は数値の列にだけ使えます"),
        ({"metrics": {"金額": ["mode"]}}, "集計方法 'mode' は使えません"),
        ({"metrics": {"部門": ["median"]}}, "median は数値の列にだけ使えます"),
        ({"metrics": {"タグ": ["nunique"]}}, "リスト の値があり"),
        ({"metrics": {"金額x": ["sum"]}}, "'金額' のことですか"),
        ({"metrics": {}}, "metrics は「列名: 集計方法のリスト」"),
        ({"group_by": ["部"], "metrics": {"金額": ["sum"]}}, "列 '部' は見つかりません"),
        ({"group_by": ["タグ"], "metrics": {"金額": ["sum"]}}, "リスト の値があり"),
        ({"metrics": {"金額": []}}, "集計方法をリストで"),
    ],
)
def test_aggregate_errors(ctx: BlockContext, inputs: dict[str, Any], message: str) -> None:
    assert message in invalid("table.aggregate", ctx, records=SALES, **inputs).message


def test_aggregate_min_of_mixed_kinds_is_refused(ctx: BlockContext) -> None:
    records = [{"v": 1}, {"v": "a"}]
    error = invalid("table.aggregate", ctx, records=records, metrics={"v": ["min"]})
    assert "種類の違う値" in error.message


# --- table.concat -----------------------------------------------------------------------


def test_concat_aligns_columns_by_default(ctx: BlockContext) -> None:
    first, second = SALES[:2], [{"id": 9, "備考": "追加"}]
    result = run("table.concat", ctx, tables=[first, [], second])
    expected = pd.concat([pd.DataFrame(first), pd.DataFrame(second)], ignore_index=True)
    assert [list(row) for row in result] == [list(expected.columns)] * 3
    assert ids(result) == [1, 2, 9]
    assert result[2]["金額"] is None and result[0]["備考"] is None
    assert run("table.concat", ctx, tables=[first, second], align_columns=False) == [
        *first,
        *second,
    ]
    assert run("table.concat", ctx, tables=[]) == []


def test_concat_errors(ctx: BlockContext) -> None:
    assert "tables[1][0]" in invalid("table.concat", ctx, tables=[[{"a": 1}], [2]]).message
    assert "表（行のリスト）のリスト" in invalid("table.concat", ctx, tables={"a": []}).message


def test_normalize_writes_company_forms_out(ctx: BlockContext) -> None:
    rows = [{"得意先": "㈱ＡＢＣ商事"}, {"得意先": "ABC商事(株)"}, {"得意先": "株式会社 ABC商事"}]
    cleaned = run("text.normalize", ctx, records=rows, columns={"得意先": "company"})
    assert [row["得意先"] for row in cleaned] == [
        "株式会社ABC商事",
        "ABC商事株式会社",
        "株式会社ABC商事",
    ]
    (text,) = run("text.normalize", ctx, records=rows[:1], columns={"得意先": "text"})
    assert text["得意先"] == "(株)ABC商事"  # text alone keeps the short form
