"""Rules of the offline reasoner: asks, out of scope, specs, multi-step plans, recovery."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from keiri_agent.agents.analysis.messages import agent_message
from keiri_agent.agents.analysis.ops.specs import (
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
)
from keiri_agent.agents.analysis.reasoning.decision import ActionRecord, Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner, repair

_JA = [
    ("注文ID", "text", ["ORD-000001"]),
    ("日付", "datetime", ["2024-01-01", "2025-06-30"]),
    ("地域", "categorical", ["関東", "関西", "中部", "九州"]),
    ("店舗", "categorical", ["新宿店", "梅田店", "名古屋店"]),
    ("商品カテゴリ", "categorical", ["IT機器", "文房具", "消耗品"]),
    ("商品名", "categorical", ["ノートPC", "マウス", "トナー"]),
    ("数量", "numeric", ["5", "88"]),
    ("単価", "numeric", ["128000", "180"]),
    ("売上", "numeric", ["640000", "15840"]),
    ("値引額", "numeric", ["0", "1740"]),
    ("担当者", "categorical", ["小林", "田中"]),
    ("顧客区分", "categorical", ["法人", "個人"]),
]
_EN_NAMES = [
    "order_id",
    "date",
    "region",
    "store",
    "category",
    "product",
    "quantity",
    "unit_price",
    "sales",
    "discount",
    "staff",
    "customer_type",
]
_EN_EXAMPLES = {
    "region": ["Kanto", "Kansai", "Chubu"],
    "customer_type": ["corporate", "individual"],
}


def make_summary(
    columns: list[tuple[str, str, list[str]]], dataset_id: str = "ds_1"
) -> dict[str, Any]:
    """A dataset summary in the shape the UI gives the reasoner."""
    return {
        "dataset_id": dataset_id,
        "name": "sales.csv",
        "rows": 500,
        "columns": [
            {
                "name": name,
                "dtype": "object",
                "kind": kind,
                "missing": 0,
                "unique": 10,
                "examples": examples,
            }
            for name, kind, examples in columns
        ],
        "memory_mb": 0.2,
    }


JA = make_summary(_JA)
EN = make_summary(
    [(en, kind, _EN_EXAMPLES.get(en, ex)) for en, (_, kind, ex) in zip(_EN_NAMES, _JA, strict=True)]
)


def decide(
    messages: str | list[BaseMessage],
    summary: dict[str, Any] | None = JA,
    *,
    records: tuple[ActionRecord, ...] = (),
    last_error: str | None = None,
    artifacts: tuple[Any, ...] = (),
) -> Decision:
    msgs = [HumanMessage(messages)] if isinstance(messages, str) else messages
    return OfflineReasoner().decide(
        ReasonInput(
            messages=msgs,
            dataset_id=summary["dataset_id"] if summary else None,
            dataset_summary=summary,
            artifacts=list(artifacts),
            last_error=last_error,
            turn_actions=records,
        )
    )


def spec_of(decision: Decision) -> dict[str, Any]:
    assert decision.next_action == "act", decision
    assert (decision.analysis_spec is None) != (decision.plot_spec is None)
    spec = decision.analysis_spec or decision.plot_spec
    assert spec is not None
    return spec


def assert_valid(spec: dict[str, Any], summary: dict[str, Any]) -> None:
    model = parse_plot_spec(spec) if spec.get("type") == "plot" else parse_analysis_spec(spec)
    check_columns(model, [c["name"] for c in summary["columns"]])


# --- no dataset, out of scope, unknown -------------------------------------------------------


@pytest.mark.parametrize("text", ["売上の分布", "Histogram of sales", ""])
def test_no_dataset_asks_for_an_upload(text: str) -> None:
    decision = decide(text, None)
    assert decision.next_action == "ask"
    question = " ".join(decision.clarifying_questions)
    assert "CSV" in question and ("Excel" in question)


@pytest.mark.parametrize(
    "text",
    [
        "来月の売上を予測して",
        "売上の予測モデルを作って",
        "機械学習で分類して",
        "顧客をクラスタリングして",
        "結果をメールで送って",
        "集計結果をCSVに保存して",
        "Web検索で業界平均を調べて",
        "Forecast next quarter's revenue",
        "Train a regression model on sales",
        "Send the chart by email",
        "Search the web for competitors",
    ],
)
def test_out_of_scope(text: str) -> None:
    decision = decide(text)
    assert decision.next_action == "out_of_scope"
    assert decision.rationale and decision.analysis_spec is None and decision.plot_spec is None


@pytest.mark.parametrize(
    "text",
    [
        "Change every blank 地域 to 関東.",
        "Please change the returned flag to FALSE for order ORD-000155.",
        "Set the status of these rows to closed",
        "源泉徴収対象なのに源泉徴収額が0円の行、直しておいてもらえますか",
        "地域が空いてるやつ、関東で埋めといてもらえますか",
        "東京の分、全部日付を2025/12/31に更新しておいて",
    ],
)
def test_a_data_edit_is_declined_not_answered_with_an_analysis(text: str) -> None:
    """Before: "Change every blank 地域 to 関東" ran a missing-values check and looked
    answered; the data is never edited, so it is declined and said why."""
    assert decide(text).next_action == "out_of_scope"


@pytest.mark.parametrize(
    "text", ["Change the chart to bars", "change it to monthly", "Set the grouping to 地域"]
)
def test_a_change_to_the_result_is_no_data_edit(text: str) -> None:
    assert decide(text).next_action != "out_of_scope"


@pytest.mark.parametrize(
    "text",
    [
        "Draft a letter to the stores about their sales",
        "売上の少ない店舗に注意喚起の文書を作成して",
        "この取引先、続けるべきだと思う？",
        "店舗、どこがいいと思う？",
        "Should we keep the Shinjuku store open?",
        "Which of these stores do you think we can just close?",
    ],
)
def test_a_document_or_a_judgement_asked_is_declined(text: str) -> None:
    """Before: a letter to draft asked which analysis to run, an opinion was answered
    with a summary of the column named."""
    assert decide(text).next_action == "out_of_scope"


@pytest.mark.parametrize(
    "text", ["should we look at the monthly trend?", "部署別に合計したらどうなると思う？"]
)
def test_a_question_about_the_analysis_is_no_judgement(text: str) -> None:
    assert decide(text).next_action != "out_of_scope"


def test_out_of_scope_rationale_follows_the_language() -> None:
    assert re.search(r"[ぁ-んァ-ン一-龥]", decide("来月の売上を予測して").rationale)
    assert not re.search(r"[ぁ-んァ-ン一-龥]", decide("Predict next month's sales", EN).rationale)


def test_after_the_refusal_the_in_scope_part_runs() -> None:
    messages = [
        HumanMessage("売上の推移を見せて、来月も予測して"),
        agent_message("対応範囲外です", "out_of_scope"),
    ]
    spec = spec_of(decide(messages))
    assert (spec["kind"], spec["x"], spec["y"]) == ("line", "日付", "売上")


@pytest.mark.parametrize(
    "text,summary",
    [
        ("売上の推移を見せて、来月も予測して", JA),
        ("Monthly sales trend, and forecast next year", EN),
    ],
)
def test_an_out_of_scope_part_does_not_block_the_parts_that_can_run(
    text: str, summary: dict[str, Any]
) -> None:
    decision = decide(text, summary)
    spec = spec_of(decision)
    assert spec["kind"] == "line"
    assert any("予測" in a or "forecast" in a for a in decision.assumptions)


@pytest.mark.parametrize(
    "text,summary", [("こんにちは", JA), ("hello there", EN), ("分析して", JA)]
)
def test_unrecognised_request_asks_with_examples(text: str, summary: dict[str, Any]) -> None:
    decision = decide(text, summary)
    assert decision.next_action == "ask"
    assert "例" in decision.clarifying_questions[0] or "example" in decision.clarifying_questions[0]


# --- intents and columns ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,summary,key,expected",
    [
        ("このデータの概要を教えて", JA, "op", "dataset_overview"),
        ("What kind of data is this?", EN, "op", "dataset_overview"),
        ("欠損値を確認して", JA, "op", "missingness"),
        ("Show null counts", EN, "op", "missingness"),
        ("基本統計量を見せて", JA, "op", "column_summary"),
        ("describe the data", EN, "op", "column_summary"),
        ("重複をチェック", JA, "op", "duplicate_check"),
        ("any duplicate rows?", EN, "op", "duplicate_check"),
        ("地域別の売上合計", JA, "op", "groupby_agg"),
        ("average sales per store", EN, "op", "groupby_agg"),
        ("地域別の売上構成比", JA, "op", "share_ratio"),
        ("Pareto of products by sales", EN, "op", "share_ratio"),
        ("相関を見せて", JA, "op", "correlation_matrix"),
        ("correlation between sales and quantity", EN, "op", "correlation_matrix"),
        ("売上のヒストグラム", JA, "kind", "hist"),
        ("distribution of discount", EN, "kind", "hist"),
        ("数量と売上の散布図", JA, "kind", "scatter"),
        ("scatter of unit price and quantity", EN, "kind", "scatter"),
        ("売上の月別推移", JA, "kind", "line"),
        ("sales trend over time", EN, "kind", "line"),
        ("地域別売上の棒グラフ", JA, "kind", "bar"),
        ("bar chart of sales by region", EN, "kind", "bar"),
        ("地域別の売上の箱ひげ図", JA, "kind", "box"),
        ("box plot of sales by store", EN, "kind", "box"),
    ],
)
def test_every_op_and_kind(text: str, summary: dict[str, Any], key: str, expected: str) -> None:
    spec = spec_of(decide(text, summary))
    assert spec[key] == expected
    assert_valid(spec, summary)


def test_groupby_spec_shape() -> None:
    spec = spec_of(decide("地域別の売上合計を出して"))
    assert spec["group_cols"] == ["地域"] and spec["metrics"] == {"売上": ["sum"]}
    assert spec["sort"] == {"by": "売上_sum", "ascending": False}
    assert spec["dataset_id"] == "ds_1"


@pytest.mark.parametrize(
    "text,metrics",
    [
        ("店舗毎の売上の中央値と最大値", {"売上": ["median", "max"]}),
        ("担当者別の売上のばらつき", {"売上": ["std"]}),
        ("担当者別の件数", {"担当者": ["count"]}),
        ("売上の合計と数量の平均を地域別に", {"売上": ["sum"], "数量": ["mean"]}),
        ("total sales and average quantity by region", {"売上": ["sum"], "数量": ["mean"]}),
        ("minimum and maximum unit price by region", {"単価": ["min", "max"]}),
    ],
)
def test_metrics_from_words(text: str, metrics: dict[str, list[str]]) -> None:
    assert spec_of(decide(text))["metrics"] == metrics


def test_default_aggregation_is_stated_as_an_assumption() -> None:
    decision = decide("sales by region", EN)
    assert spec_of(decision)["metrics"] == {"sales": ["sum"]}
    assert any("sum" in a for a in decision.assumptions)


@pytest.mark.parametrize(
    "text,summary,group,metric",
    [
        ("ＳＡＬＥＳ　ｂｙ　ＲＥＧＩＯＮ", EN, "region", "sales"),
        ("Sales by Region", JA, "地域", "売上"),
        ("地域ごとの売上", EN, "region", "sales"),
        ("revenue per area", JA, "地域", "売上"),
        ("商品カテゴリ別の数量合計", JA, "商品カテゴリ", "数量"),
        ("商品別の数量合計", JA, "商品名", "数量"),
        ("顧客区分別の平均値引額", JA, "顧客区分", "値引額"),
        ("staff member sales totals by store", EN, "store", "sales"),
    ],
)
def test_column_matching(text: str, summary: dict[str, Any], group: str, metric: str) -> None:
    spec = spec_of(decide(text, summary))
    assert spec["group_cols"][0] == group and metric in spec["metrics"]


def test_columns_are_never_invented() -> None:
    small = make_summary(
        [
            ("地域", "categorical", ["関東"]),
            ("数量", "numeric", ["1"]),
            ("単価", "numeric", ["100"]),
        ]
    )
    assert decide("売上の分布", small).next_action == "ask"
    decision = decide("利益別の数量合計", small)
    assert decision.next_action == "ask"


def test_words_inside_column_names_are_not_read_as_intents() -> None:
    odd = make_summary(
        [
            ("予測売上", "numeric", ["1"]),
            ("total", "numeric", ["2"]),
            ("店舗", "categorical", ["渋谷店"]),
        ]
    )
    assert spec_of(decide("予測売上の分布", odd))["x"] == "予測売上"
    spec = spec_of(decide("店舗別のtotal", odd))
    assert spec["metrics"] == {"total": ["sum"]}


def test_correlation_keeps_named_columns() -> None:
    spec = spec_of(decide("数量・単価・売上の相関を見せて"))
    assert spec["columns"] == ["数量", "単価", "売上"]
    assert spec_of(decide("相関行列"))["columns"] is None


@pytest.mark.parametrize(
    "text,freq",
    [
        ("月別の売上推移", "M"),
        ("週ごとの売上推移", "W"),
        ("日別の売上推移", "D"),
        ("年別の売上推移", "Y"),
        ("四半期ごとの売上推移", "Q"),
        ("monthly sales trend", "M"),
        ("weekly sales", "W"),
        ("daily sales over time", "D"),
        ("quarterly revenue", "Q"),
        ("yearly sales trend", "Y"),
    ],
)
def test_line_frequency(text: str, freq: str) -> None:
    spec = spec_of(decide(text))
    assert (spec["kind"], spec["x"], spec["y"], spec["freq"]) == ("line", "日付", "売上", freq)


def test_line_by_category_uses_hue() -> None:
    spec = spec_of(decide("地域別の月別売上推移"))
    assert spec["hue"] == "地域"


@pytest.mark.parametrize(
    "text,summary,expected",
    [
        ("2025年1月以降の地域別売上合計", JA, [{"col": "日付", "op": ">=", "value": "2025-01-01"}]),
        ("2024年の地域別売上合計", JA, [{"col": "日付", "op": "==", "value": "2024"}]),
        ("2024年3月の地域別売上合計", JA, [{"col": "日付", "op": "==", "value": "2024-03"}]),
        (
            "total sales by region since 2025-03",
            EN,
            [{"col": "date", "op": ">=", "value": "2025-03-01"}],
        ),
        ("total sales by region in 2024", EN, [{"col": "date", "op": "==", "value": "2024"}]),
        (
            "sales by region until March 2025",
            EN,
            [{"col": "date", "op": "<", "value": "2025-04-01"}],
        ),
        ("関東の売上推移", JA, [{"col": "地域", "op": "==", "value": "関東"}]),
        ("関東と関西の店舗別売上", JA, [{"col": "地域", "op": "in", "value": ["関東", "関西"]}]),
        ("関東以外の店舗別売上", JA, [{"col": "地域", "op": "!=", "value": "関東"}]),
        (
            "売上が10万円以上の取引の件数を地域別に",
            JA,
            [{"col": "売上", "op": ">=", "value": 100000}],
        ),
        ("sales by store for Kanto", EN, [{"col": "region", "op": "==", "value": "Kanto"}]),
    ],
)
def test_filters(text: str, summary: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    spec = spec_of(decide(text, summary))
    assert spec["filters"] == expected
    assert_valid(spec, summary)


def test_a_value_named_in_another_clause_does_not_filter_its_own_grouping() -> None:
    text = "Top 5 products by revenue in Kanto, and a box plot of sales by region"
    first = spec_of(decide(text, EN))
    assert first["filters"] == [{"col": "region", "op": "==", "value": "Kanto"}]
    second = spec_of(decide(text, EN, records=(ActionRecord(first, True),)))
    assert (second["kind"], second["x"], second["filters"]) == ("box", "region", [])


def test_fiscal_year_is_april_to_march() -> None:
    decision = decide("2024年度の地域別売上")
    assert spec_of(decision)["filters"] == [
        {"col": "日付", "op": ">=", "value": "2024-04-01"},
        {"col": "日付", "op": "<", "value": "2025-04-01"},
    ]
    assert any("2024年度" in a for a in decision.assumptions)


@pytest.mark.parametrize(
    "text", ["直近3ヶ月の売上推移", "sales by region last year", "3月の売上推移"]
)
def test_periods_that_cannot_be_pinned_down_are_asked(text: str) -> None:
    assert decide(text).next_action == "ask"


@pytest.mark.parametrize(
    "text,top_k,ascending",
    [
        ("売上上位10商品", 10, False),
        ("Top 5 stores by sales", 5, False),
        ("worst 3 products by quantity", 3, True),
        ("店舗別の売上ランキング", 10, False),
    ],
)
def test_ranking_is_groupby_with_top_k(text: str, top_k: int, ascending: bool) -> None:
    spec = spec_of(decide(text))
    assert spec["op"] == "groupby_agg" and spec["top_k"] == top_k
    assert spec["sort"]["ascending"] is ascending


# --- asks and continuation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,summary,candidate",
    [
        ("地域別に集計して", JA, "売上"),
        ("ヒストグラムを描いて", JA, "数量"),
        ("Aggregate by region", EN, "sales"),
        ("Draw a scatter plot", EN, "quantity"),
    ],
)
def test_missing_metric_asks_with_candidates(
    text: str, summary: dict[str, Any], candidate: str
) -> None:
    decision = decide(text, summary)
    assert decision.next_action == "ask"
    assert candidate in decision.clarifying_questions[0]


def test_single_numeric_column_is_a_default_not_a_question() -> None:
    one = make_summary([("地域", "categorical", ["関東"]), ("売上", "numeric", ["1"])])
    decision = decide("ヒストグラムを描いて", one)
    assert spec_of(decision)["x"] == "売上" and decision.assumptions


def test_ask_then_answer_continues_the_request() -> None:
    first = decide("地域別に集計して")
    assert first.next_action == "ask"
    messages = [
        HumanMessage("地域別に集計して"),
        agent_message(first.clarifying_questions[0], "ask"),
        HumanMessage("売上の平均"),
    ]
    spec = spec_of(decide(messages))
    assert spec["op"] == "groupby_agg"
    assert spec["group_cols"] == ["地域"] and spec["metrics"] == {"売上": ["mean"]}


def test_answer_to_a_histogram_question() -> None:
    messages = [
        HumanMessage("Draw a histogram"),
        agent_message("Which column?", "ask"),
        HumanMessage("unit price"),
    ]
    spec = spec_of(decide(messages, EN))
    assert (spec["kind"], spec["x"]) == ("hist", "unit_price")


def test_a_new_request_after_a_report_is_not_joined() -> None:
    messages = [
        HumanMessage("地域別の売上合計"),
        agent_message("# レポート", "report"),
        HumanMessage("売上の分布"),
    ]
    assert spec_of(decide(messages))["kind"] == "hist"


# --- multi-step plans, finalize, recovery ----------------------------------------------------


def test_multi_spec_request_progresses_to_finalize() -> None:
    text = "売上の分布と地域別の合計"
    first = spec_of(decide(text))
    assert (first["kind"], first["x"]) == ("hist", "売上")
    records: tuple[ActionRecord, ...] = (ActionRecord(spec=first, ok=True, artifact_ids=("a1",)),)
    second = spec_of(decide(text, records=records))
    assert second["op"] == "groupby_agg" and second["metrics"] == {"売上": ["sum"]}
    records += (ActionRecord(spec=second, ok=True, artifact_ids=("a2",)),)
    final = decide(text, records=records)
    assert final.next_action == "finalize"
    assert "売上の分布" in final.rationale and "地域別の売上合計" in final.rationale


def test_three_part_english_request() -> None:
    text = "Show the distribution of sales, total sales by region and the monthly trend"
    records: tuple[ActionRecord, ...] = ()
    kinds = []
    for _ in range(4):
        decision = decide(text, EN, records=records)
        if decision.next_action == "finalize":
            break
        spec = spec_of(decision)
        assert_valid(spec, EN)
        kinds.append(spec.get("kind") or spec.get("op"))
        records += (ActionRecord(spec=spec, ok=True),)
    assert kinds == ["hist", "groupby_agg", "line"]
    assert decision.next_action == "finalize"


def test_artifacts_of_earlier_turns_do_not_count() -> None:
    old = {
        "artifact_id": "a1",
        "kind": "figure",
        "title": "売上の分布",
        "description": "",
        "payload": b"",
    }
    assert decide("売上の分布", artifacts=(old,)).next_action == "act"


def test_records_match_specs_dumped_with_defaults() -> None:
    spec = spec_of(decide("売上の分布"))
    dumped = parse_plot_spec(spec).model_dump(mode="json")
    assert (
        decide("売上の分布", records=(ActionRecord(spec=dumped, ok=True),)).next_action
        == "finalize"
    )


def test_close_match_suggestion_is_retried_once() -> None:
    spec = spec_of(decide("売上の分布"))
    error = {
        "code": "SPEC_ERROR",
        "message": "列 '売上' は見つかりません。もしかして '値引額' ですか？（指定できるもの:"
        " 値引額）",
        "hint": None,
    }
    records: tuple[ActionRecord, ...] = (ActionRecord(spec=spec, ok=False, error=error),)
    retry = decide("売上の分布", records=records)
    assert spec_of(retry)["x"] == "値引額" and "再実行" in retry.rationale
    records += (ActionRecord(spec=spec_of(retry), ok=False, error=error),)
    final = decide("売上の分布", records=records)
    assert final.next_action == "ask" and "もしかして" in final.clarifying_questions[0]


def test_time_limit_relaxes_the_spec() -> None:
    spec = spec_of(decide("数量と売上の散布図"))
    error = {"code": "ACTION_TIMEOUT", "message": "action ran longer than 30 s", "hint": None}
    retry = spec_of(decide("数量と売上の散布図", records=(ActionRecord(spec, False, error=error),)))
    assert retry["max_points"] < spec.get("max_points", 20_000)
    assert_valid(retry, JA)


def test_unfixable_error_asks_quoting_it() -> None:
    spec = spec_of(decide("2024年の地域別売上合計"))
    error = {"code": "SPEC_ERROR", "message": "filters[0]: '2024' is not a date", "hint": None}
    decision = decide("2024年の地域別売上合計", records=(ActionRecord(spec, False, error=error),))
    assert decision.next_action == "ask"
    assert "'2024' is not a date" in decision.clarifying_questions[0]


def test_failed_record_without_error_quotes_last_error() -> None:
    spec = spec_of(decide("売上の分布"))
    decision = decide("売上の分布", records=(ActionRecord(spec, False),), last_error="boom: bad")
    assert decision.next_action == "ask" and "boom: bad" in decision.clarifying_questions[0]


def test_failed_step_does_not_block_reporting_done_ones() -> None:
    text = "売上の分布と地域別の合計"
    first = spec_of(decide(text))
    records = (ActionRecord(first, True),)
    second = spec_of(decide(text, records=records))
    error = {"code": "SPEC_ERROR", "message": "something odd", "hint": None}
    decision = decide(text, records=(*records, ActionRecord(second, False, error=error)))
    assert decision.next_action == "ask"


@pytest.mark.parametrize(
    "spec,error,field,value",
    [
        (
            {"kind": "correlation_matrix", "op": "correlation_matrix", "max_columns": 10},
            "ACTION_MEMORY",
            "max_columns",
            5,
        ),
        (
            {"type": "analysis", "op": "groupby_agg", "group_cols": ["a", "b"]},
            "timed out",
            "group_cols",
            ["a"],
        ),
        ({"type": "plot", "kind": "line", "freq": "D"}, "ACTION_TIMEOUT", "freq", "W"),
    ],
)
def test_repair_relaxes(spec: dict[str, Any], error: str, field: str, value: Any) -> None:
    fixed = repair(spec, error, [])
    assert fixed is not None and fixed[field] == value


def test_repair_gives_up_on_other_errors() -> None:
    assert repair({"kind": "hist", "x": "a"}, "column 'a' is not numeric", ["a"]) is None


# --- validity and the benchmark --------------------------------------------------------------

_REQUESTS = [
    "概要",
    "欠損",
    "重複",
    "要約統計",
    "地域別の売上合計",
    "商品カテゴリ別の平均単価と件数",
    "売上の構成比を地域別に",
    "パレート分析",
    "相関",
    "売上の分布",
    "数量と売上の散布図",
    "月別の売上推移",
    "店舗別の売上を棒グラフで",
    "売上の箱ひげ図",
    "上位5商品の売上",
    "商品名の種類数を地域別に",
    "2024年4月から2024年9月までの月別売上",
    "担当者ごとの売上のばらつきを箱ひげ図で",
    "関西と九州の店舗別売上を比べたい",
    "値引額と売上の散布図を地域で色分けして",
]
_EN_REQUESTS = [
    "overview",
    "missing values",
    "duplicates",
    "summary statistics",
    "total sales by region",
    "average unit price and count by category",
    "sales share by region",
    "ABC analysis",
    "correlation matrix",
    "distribution of sales",
    "sales vs quantity",
    "monthly sales trend",
    "bar chart of sales by store",
    "box plot of sales",
    "top 5 products by sales",
    "how many unique products per store",
    "sales from 2024-04 to 2024-09 by month",
    "orders with sales over 100k by store",
    "compare average sales between corporate and individual",
    "weekly quantity trend split by category",
]


@pytest.mark.parametrize(
    "text,summary", [(t, JA) for t in _REQUESTS] + [(t, EN) for t in _EN_REQUESTS]
)
def test_produced_specs_are_valid(text: str, summary: dict[str, Any]) -> None:
    decision = decide(text, summary)
    assert decision.next_action in ("act", "ask")
    if decision.next_action == "act":
        assert_valid(spec_of(decision), summary)
        language_is_ja = bool(
            re.search(
                r"[ぁ-んァ-ン一-龥]", decision.rationale.replace("売上", "").replace("数量", "")
            )
        )
        assert language_is_ja == bool(re.search(r"[ぁ-んァ-ン一-龥]", text))


def _benchmark() -> Any:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "offline_reasoner_accuracy.py"
    spec = importlib.util.spec_from_file_location("offline_reasoner_accuracy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_benchmark_covers_every_op_and_kind() -> None:
    cases = _benchmark().load_cases()
    assert len(cases) >= 60
    counts = Counter(c["expected"].get("op") or c["expected"].get("kind") for c in cases)
    for name in (
        "dataset_overview",
        "missingness",
        "column_summary",
        "duplicate_check",
        "groupby_agg",
        "share_ratio",
        "correlation_matrix",
        "hist",
        "scatter",
        "line",
        "bar",
        "box",
    ):
        assert counts[name] >= 4, name
    actions = Counter(c["expected"]["next_action"] for c in cases)
    assert actions["ask"] >= 4 and actions["out_of_scope"] >= 4


def test_benchmark_accuracy_stays_high() -> None:
    result = _benchmark().evaluate()
    assert result["invalid_specs"] == 0
    assert result["accuracy"] >= 0.9, [o.case["text"] for o in result["failures"]]
    assert result["ja_accuracy"] >= 0.9 and result["en_accuracy"] >= 0.9


def test_heldout_accuracy_stays_high() -> None:
    """The held-out requests (other domains, written before the issue-16 rules) too."""
    bench = _benchmark()
    result = bench.evaluate(bench.load_cases(bench.HELDOUT))
    assert result["invalid_specs"] == 0
    assert result["accuracy"] >= 0.9, [o.case["text"] for o in result["failures"]]
    assert result["ja_accuracy"] >= 0.9 and result["en_accuracy"] >= 0.9


@pytest.mark.parametrize(
    "text",
    [
        "ここまでの結果をレポートにまとめて",
        "これまでの分析を報告書にまとめてください",
        "レポートを作成して",
        "Summarize the results so far",
        "write the final report",
    ],
)
def test_summary_request_finalizes_when_something_ran(text: str) -> None:
    artifact = {
        "artifact_id": "t1",
        "kind": "text",
        "title": "x",
        "description": "",
        "payload": "y",
    }
    with_results = ReasonInput(
        messages=[HumanMessage(text)],
        dataset_id="ds_1",
        dataset_summary=JA,
        artifacts=[artifact],  # type: ignore[list-item]
    )
    assert OfflineReasoner().decide(with_results).next_action == "finalize"
    nothing_yet = ReasonInput(messages=[HumanMessage(text)], dataset_id="ds_1", dataset_summary=JA)
    assert OfflineReasoner().decide(nothing_yet).next_action == "ask"


def test_a_check_whether_something_was_sent_twice_is_no_request_to_send() -> None:
    """「２回送ってないかチェック」 asks for a duplicate check (before: declined as sending a
    file); 「結果をメールで送って」 is still declined."""
    decision = decide("同じ注文IDで２回送ってないかチェックして")
    assert decision.next_action == "act"
    assert decision.analysis_spec is not None
    assert decision.analysis_spec["op"] == "duplicate_check"
    assert decide("結果を経理に送ってください").next_action == "out_of_scope"
