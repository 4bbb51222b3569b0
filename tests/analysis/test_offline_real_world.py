"""Offline reasoner on real-world accounting requests (reviewer findings).

Category values beyond a column's examples, a named metric that is not numeric,
era years and amount thresholds without a column, and multi-part requests.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis.ops.specs import (
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
)
from keiri_agent.agents.analysis.reasoning.decision import ActionRecord, Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner

_DEPTS = ["営業部", "管理部", "製造部", "開発部"]
_ACCOUNTS = ["旅費交通費", "消耗品費", "接待交際費", "通信費", "売上高"]
_VENDORS = ["㈱山田商事", "①田中商店", "有限会社佐藤", "ＡＢＣ株式会社", "山田商事東京"]


def _column(name: str, kind: str, examples: list[str], values: list[str] | None = None) -> dict:
    column: dict[str, Any] = {
        "name": name,
        "dtype": "object",
        "kind": kind,
        "missing": 0,
        "unique": len(values) if values else 200,
        "examples": examples,
    }
    if values is not None:
        column["values"] = values
    return column


def accounting(amount_kind: str = "numeric", *, with_tax: bool = True) -> dict[str, Any]:
    """The reviewer's accounting CSV: three examples per column, every value when ≤ 50."""
    amounts = ["43400", "23100", "1500"] if amount_kind == "numeric" else ["43,400円", "2万"]
    columns = [
        _column("取引日", "datetime", ["2025-03-19", "2024-08-25", "2025-02-16"]),
        _column("勘定科目", "categorical", ["旅費交通費", "通信費", "消耗品費"], _ACCOUNTS),
        _column("部門", "categorical", ["製造部", "開発部", "営業部"], _DEPTS),
        _column("金額(税込)", amount_kind, amounts),
        _column("取引先", "categorical", _VENDORS[:3], _VENDORS),
        _column("摘要", "text", ["摘要0", "摘要1", "摘要2"]),
    ]
    if with_tax:
        columns.insert(5, _column("消費税額", "numeric", ["3945", "2100", "136"]))
    return {"dataset_id": "ds_acc", "name": "acc.csv", "rows": 300, "columns": columns}


_SALES = {
    "dataset_id": "ds_sales",
    "name": "sales.csv",
    "rows": 500,
    "columns": [
        _column("日付", "datetime", ["2024-01-01", "2025-06-30"]),
        _column("地域", "categorical", ["関東", "関西", "中部"]),
        _column("店舗", "categorical", ["新宿店", "梅田店"]),
        _column("売上", "numeric", ["640000", "15840"]),
        _column("数量", "numeric", ["5", "88"]),
        _column("担当者", "categorical", ["小林", "田中"]),
    ],
}


def decide(text: str, summary: dict[str, Any], records: tuple[ActionRecord, ...] = ()) -> Decision:
    return OfflineReasoner().decide(
        ReasonInput(
            messages=[HumanMessage(text)],
            dataset_id=summary["dataset_id"],
            dataset_summary=summary,
            turn_actions=records,
        )
    )


def first_spec(text: str, summary: dict[str, Any]) -> dict[str, Any]:
    decision = decide(text, summary)
    assert decision.next_action == "act", decision
    spec = decision.analysis_spec or decision.plot_spec
    assert spec is not None
    return spec


def all_specs(text: str, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every spec of the plan, running them one after another until finalize."""
    records: tuple[ActionRecord, ...] = ()
    specs: list[dict[str, Any]] = []
    for _ in range(6):
        decision = decide(text, summary, records)
        if decision.next_action == "finalize":
            return specs
        assert decision.next_action == "act", decision
        spec = decision.analysis_spec or decision.plot_spec
        assert spec is not None
        model = parse_plot_spec(spec) if spec.get("type") == "plot" else parse_analysis_spec(spec)
        check_columns(model, [c["name"] for c in summary["columns"]])
        specs.append(spec)
        records += (ActionRecord(spec=spec, ok=True),)
    raise AssertionError(f"no finalize after {specs}")


def _shape(spec: dict[str, Any]) -> tuple[Any, ...]:
    if spec.get("op") == "groupby_agg":
        return ("groupby_agg", tuple(spec["group_cols"]), spec["metrics"])
    if spec.get("op") == "share_ratio":
        return ("share_ratio", spec["group_col"], spec["value_col"])
    return (spec.get("kind") or spec.get("op"), spec.get("x"), spec.get("y"))


# --- 1. category values beyond the examples -----------------------------------------------------


@pytest.mark.parametrize(
    "text,column,value",
    [
        ("接待交際費の部門別の金額合計", "勘定科目", "接待交際費"),
        ("ABC株式会社の部門別の金額合計", "取引先", "ＡＢＣ株式会社"),  # NFKC: ABC ~ ＡＢＣ
        ("ＡＢＣ株式会社の部門別の金額合計", "取引先", "ＡＢＣ株式会社"),
        ("山田商事東京の部門別の金額合計", "取引先", "山田商事東京"),  # longest value wins
        ("管理部の勘定科目別の金額合計", "部門", "管理部"),
    ],
)
def test_every_listed_value_filters(text: str, column: str, value: str) -> None:
    spec = first_spec(text, accounting())
    assert spec["filters"] == [{"col": column, "op": "==", "value": value}]
    assert spec["metrics"] == {"金額(税込)": ["sum"]}


# --- 2. a named metric that is not numeric is asked, not swapped --------------------------------


@pytest.mark.parametrize("text", ["部門別の金額合計", "金額の分布", "勘定科目別の金額の平均"])
def test_named_metric_that_is_not_numeric_is_asked(text: str) -> None:
    decision = decide(text, accounting("text"))
    assert decision.next_action == "ask", decision
    assert "金額(税込)" in decision.clarifying_questions[0]
    assert decision.analysis_spec is None and decision.plot_spec is None


def test_unnamed_metric_still_uses_the_only_numeric_column() -> None:
    spec = first_spec("部門別の合計", accounting("text"))
    assert spec["metrics"] == {"消費税額": ["sum"]}


# --- 3. era years, thresholds without a column, conditions left unread ----------------------------


@pytest.mark.parametrize(
    "text,filters",
    [
        (
            "令和6年度の部門別金額合計",
            [
                {"col": "取引日", "op": ">=", "value": "2024-04-01"},
                {"col": "取引日", "op": "<", "value": "2025-04-01"},
            ],
        ),
        (
            "R6年度の部門別金額合計",
            [
                {"col": "取引日", "op": ">=", "value": "2024-04-01"},
                {"col": "取引日", "op": "<", "value": "2025-04-01"},
            ],
        ),
        ("令和6年4月の部門別金額合計", [{"col": "取引日", "op": "==", "value": "2024-04"}]),
        ("令和元年5月以降の部門別金額合計", [{"col": "取引日", "op": ">=", "value": "2019-05-01"}]),
        ("平成30年の部門別金額合計", [{"col": "取引日", "op": "==", "value": "2018"}]),
        ("H30年の部門別金額合計", [{"col": "取引日", "op": "==", "value": "2018"}]),
    ],
)
def test_era_years(text: str, filters: list[dict[str, Any]]) -> None:
    decision = decide(text, accounting())
    assert decision.next_action == "act", decision
    assert (decision.analysis_spec or {})["filters"] == filters


def test_amount_threshold_without_a_column_goes_to_the_amount_column() -> None:
    decision = decide("10万円以上の取引を取引先別に件数", accounting())
    spec = decision.analysis_spec
    assert decision.next_action == "act" and spec is not None
    assert spec["filters"] == [{"col": "金額(税込)", "op": ">=", "value": 100000}]
    assert spec["group_cols"] == ["取引先"]
    assert any("金額(税込)" in a and "10万円以上" in a for a in decision.assumptions)


@pytest.mark.parametrize(
    "text,summary",
    [
        ("5件以上の取引先の部門別金額合計", accounting()),  # a count: which column?
        ("24年度の部門別金額合計", accounting()),  # a year no rule reads
        ("昭和60年の部門別金額合計", accounting()),
        # no amount column to put "10万円以上" on
        ("10万円以上の取引を取引先別に件数", accounting("text", with_tax=False)),
    ],
)
def test_conditions_left_unread_are_asked(text: str, summary: dict[str, Any]) -> None:
    decision = decide(text, summary)
    assert decision.next_action == "ask", decision


# --- 4. multi-part requests ---------------------------------------------------------------------


def test_also_starts_a_new_step() -> None:
    specs = all_specs("関東の売上を店舗別に、あと担当者別の件数も", _SALES)
    assert [_shape(s) for s in specs] == [
        ("groupby_agg", ("店舗",), {"売上": ["sum"]}),
        ("groupby_agg", ("担当者",), {"担当者": ["count"]}),
    ]
    assert specs[0]["filters"] == [{"col": "地域", "op": "==", "value": "関東"}]


def test_a_period_in_the_first_part_carries_to_a_part_without_one() -> None:
    specs = all_specs("2024年の地域別売上と、月別の売上推移", _SALES)
    assert [_shape(s) for s in specs] == [
        ("groupby_agg", ("地域",), {"売上": ["sum"]}),
        ("line", "日付", "売上"),
    ]
    assert all(s["filters"] == [{"col": "日付", "op": "==", "value": "2024"}] for s in specs)


def test_each_part_keeps_its_own_period() -> None:
    specs = all_specs("2024年の地域別売上と、2025年の月別の売上推移", _SALES)
    assert [s["filters"] for s in specs] == [
        [{"col": "日付", "op": "==", "value": "2024"}],
        [{"col": "日付", "op": "==", "value": "2025"}],
    ]


def test_three_parts_with_a_single_month() -> None:
    text = "2024年4月の部門別金額と、勘定科目別の構成比、月別の金額推移のグラフ"
    specs = all_specs(text, accounting())
    assert [_shape(s) for s in specs] == [
        ("groupby_agg", ("部門",), {"金額(税込)": ["sum"]}),
        ("share_ratio", "勘定科目", "金額(税込)"),
        ("line", "取引日", "金額(税込)"),
    ]
    april = [{"col": "取引日", "op": "==", "value": "2024-04"}]
    # one month is no trend: the line shows every month
    assert [s["filters"] for s in specs] == [april, april, []]


def test_values_joined_by_to_comma_stay_one_request() -> None:
    specs = all_specs("関東と、関西の店舗別売上", _SALES)
    assert len(specs) == 1
    assert specs[0]["filters"] == [{"col": "地域", "op": "in", "value": ["関東", "関西"]}]
