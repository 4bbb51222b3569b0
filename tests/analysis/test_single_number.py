"""Single-number answers (issue 28): one total, count or average for the whole table or
the rows a request keeps, decided offline and run end to end on a CP932 file."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from tests.analysis.offline_support import acted_spec, dataset_summary, decide

from keiri_agent.agents.analysis.ops.executor import run_analysis

EXPENSES = dataset_summary(
    400,
    [
        ("伝票番号", "text", ["E-0001", "E-0002"], 400),
        ("計上日", "datetime", ["2025-04-01", "2026-03-31"], 250),
        ("部署", "categorical", ["営業部", "総務部", "開発部"], 3),
        ("勘定科目", "categorical", ["交際費", "旅費交通費", "消耗品費"], 3),
        ("金額", "numeric", ["12000", "3300"], 300),
        ("参加人数", "numeric", ["2", "5"], 10),
    ],
    "ds_expenses",
)
HOTEL = dataset_summary(
    300,
    [
        ("booking_id", "text", ["B-1"], 300),
        ("star_rating", "numeric", ["3", "5"], 5),
        ("channel", "categorical", ["Direct", "Booking.com"], 2),
        ("rate_jpy", "numeric", ["18000", "42000"], 200),
    ],
    "ds_hotel",
)


@pytest.mark.parametrize(
    ("text", "metrics", "filters"),
    [
        ("交際費だけの合計金額は？", {"金額": ["sum"]}, [("勘定科目", "==", "交際費")]),
        ("金額が10万円を超える明細は何件？", {}, [("金額", ">", 100000)]),
        ("金額の平均は？", {"金額": ["mean"]}, []),
        ("how many bookings have a star rating of 5?", {}, [("star_rating", "==", 5)]),
        (
            "What is the total rate_jpy for Direct?",
            {"rate_jpy": ["sum"]},
            [("channel", "==", "Direct")],
        ),
    ],
)
def test_one_number_is_answered_not_asked(
    text: str, metrics: dict[str, list[str]], filters: list[tuple[str, str, Any]]
) -> None:
    summary = HOTEL if text.isascii() else EXPENSES
    spec = acted_spec(text, summary)
    assert spec["op"] == "total" and spec["metrics"] == metrics
    assert [(f["col"], f["op"], f["value"]) for f in spec["filters"]] == filters


@pytest.mark.parametrize(
    "text",
    [
        "部署ごとの件数は？",  # a grouping said: never a total of the whole table
        "参加人数と金額の相関は？",  # 人数 is a part of a column name, not a count
    ],
)
def test_no_total_when_the_request_is_something_else(text: str) -> None:
    decision = decide(text, EXPENSES)
    spec = decision.analysis_spec or decision.plot_spec or {}
    assert spec.get("op") != "total"


def test_a_grouping_word_without_a_column_is_asked() -> None:
    decision = decide("班ごとの金額の合計は？", EXPENSES)
    assert decision.next_action == "ask"


def test_the_answer_is_one_headline_computed_from_the_file(tmp_path: Any) -> None:
    frame = pd.DataFrame(
        {
            "勘定科目": ["交際費", "交際費", "消耗品費", "交際費"],
            "金額": [12000, 48000, 3300, None],
            "計上日": pd.to_datetime(["2025-04-01", "2025-05-10", "2025-05-11", "2025-06-01"]),
        }
    )
    path = tmp_path / "経費.csv"
    frame.to_csv(path, index=False, encoding="cp932")
    loaded = pd.read_csv(path, encoding="cp932")
    spec = acted_spec("交際費だけの合計金額は？", EXPENSES)
    result = run_analysis(spec | {"dataset_id": None}, loaded)
    headline = next(a for a in result.artifacts if a["kind"] == "text")["payload"]
    kept = loaded[loaded["勘定科目"] == "交際費"]
    assert headline == (
        f"対象 {len(kept)} 件（勘定科目が交際費）。"
        f"金額の合計: ¥{kept['金額'].sum():,.0f}（2 件、空欄 1 件を除く）。"
    )


@pytest.mark.parametrize(
    ("text", "filters"),
    [
        ("精算日が入っていない明細は何件ある？", [("精算日", "is_null", None)]),
        ("精算日が入っている明細は何件？", [("精算日", "not_null", None)]),
        ("金額が5万円を超えている明細は何件？", [("金額", ">", 50000)]),
    ],
)
def test_counts_of_the_rows_a_condition_keeps(
    text: str, filters: list[tuple[str, str, Any]]
) -> None:
    summary = dataset_summary(
        120,
        [
            ("伝票番号", "text", ["E-1"], 120),
            ("精算日", "datetime", ["2025-04-03"], 80),
            ("金額", "numeric", ["12000"], 90),
        ],
        "ds_claims",
    )
    spec = acted_spec(text, summary)
    assert spec["op"] == "total"
    assert [(f["col"], f["op"], f.get("value")) for f in spec["filters"]] == filters


def test_a_condition_no_rule_read_is_asked_never_the_count_of_every_row() -> None:
    decision = decide("金額がだいぶ5万円超っぽい明細は何件？", EXPENSES)
    spec = decision.analysis_spec or {}
    assert decision.next_action == "ask" or spec.get("filters"), decision


def test_the_share_of_blank_cells_is_the_missing_values_check() -> None:
    spec = acted_spec("部署が空欄になっている割合を知りたい", EXPENSES)
    assert spec["op"] == "missingness" and spec["columns"] == ["部署"] and not spec["filters"]


INVENTORY = dataset_summary(
    200,
    [
        ("品番", "text", ["P-1"], 200),
        ("倉庫", "categorical", ["川崎第1倉庫", "大阪倉庫"], 2),
        ("仕入先", "categorical", ["山田商事", "青葉物産"], 30),
        ("在庫区分", "categorical", ["通常", "滞留"], 2),
        ("在庫金額", "numeric", ["12000"], 180),
    ],
    "ds_inventory",
)


@pytest.mark.parametrize(
    ("text", "metrics"),
    [
        ("仕入先って何社ありますか", {"仕入先": ["nunique"]}),
        ("滞留在庫の金額はどれくらい？", {"在庫金額": ["sum"]}),
        ("在庫金額で一番小さいのはいくら", {"在庫金額": ["min"]}),
    ],
)
def test_questions_of_quantity_are_one_number(text: str, metrics: dict[str, list[str]]) -> None:
    spec = acted_spec(text, INVENTORY)
    assert spec["op"] == "total" and spec["metrics"] == metrics


@pytest.mark.parametrize(
    "text",
    [
        "仕入先別の在庫金額トップ5。仕入先が空のものは除いて",
        "仕入先（未入力は除く）ごとの在庫金額の合計",
    ],
)
def test_blanks_left_out_of_a_grouping(text: str) -> None:
    spec = acted_spec(text, INVENTORY)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["仕入先"]
    assert {"col": "仕入先", "op": "not_null"} in spec["filters"]


def test_one_column_is_both_the_condition_and_the_value() -> None:
    spec = acted_spec("交際費で金額が5万円以上のものを部署別に合計して", EXPENSES)
    assert spec["group_cols"] == ["部署"] and spec["metrics"] == {"金額": ["sum"]}
    assert {"col": "金額", "op": ">=", "value": 50000} in spec["filters"]
    total = acted_spec("金額が10万円を超える明細の合計は？", EXPENSES)
    assert total["op"] == "total" and total["metrics"] == {"金額": ["sum"]}


def test_a_year_on_year_comparison_on_one_year_of_data_says_why() -> None:
    summary = dataset_summary(
        100,
        [
            ("計上日", "datetime", ["2025-04-01", "2026-03-31"], 300),
            ("金額", "numeric", ["1000"], 90),
        ],
        "ds_fy",
    )
    decision = decide("前年同月比を出して", summary)
    assert decision.next_action == "ask"
    (question,) = decision.clarifying_questions
    assert "2025-04-01〜2026-03-31" in question and "前年比は出せません" in question
    two_years = dataset_summary(
        100,
        [
            ("計上日", "datetime", ["2024-04-01", "2026-03-31"], 700),
            ("金額", "numeric", ["1000"], 90),
        ],
        "ds_two",
    )
    assert "前年比は出せません" not in " ".join(
        decide("前年同月比を出して", two_years).clarifying_questions
    )


def test_a_status_value_wins_over_a_word_of_another_column() -> None:
    billing = dataset_summary(
        120,
        [
            ("invoice_id", "text", ["INV-1"], 120),
            ("status", "categorical", ["paid", "overdue", "void"], 3),
            ("days_overdue", "numeric", ["0", "14"], 40),
            ("mrr_usd", "numeric", ["1200"], 100),
        ],
        "ds_billing",
    )
    spec = acted_spec("How many invoices are overdue?", billing)
    assert spec["op"] == "total"
    assert spec["filters"] == [{"col": "status", "op": "==", "value": "overdue"}]


@pytest.mark.parametrize(
    ("text", "filters"),
    [
        ("金額がマイナスになってる明細、何件ある？", [("金額", "<", 0)]),
        ("金額ゼロの明細はいくつある？", [("金額", "==", 0)]),
    ],
)
def test_signs_said_in_words(text: str, filters: list[tuple[str, str, Any]]) -> None:
    spec = acted_spec(text, EXPENSES)
    assert spec["op"] == "total"
    assert [(f["col"], f["op"], f["value"]) for f in spec["filters"]] == filters


def test_how_many_of_a_category_is_a_distinct_count() -> None:
    spec = acted_spec("How many distinct channel are in this data?", HOTEL)
    assert spec["op"] == "total" and spec["metrics"] == {"channel": ["nunique"]}


FISCAL = dataset_summary(
    300,
    [
        ("売上日", "datetime", ["2024-04-01", "2025-03-31"], 300),
        ("粗利", "numeric", ["1200"], 250),
    ],
    "ds_fiscal",
)


def test_a_month_of_a_fiscal_year_is_read_with_its_year() -> None:
    spec = acted_spec("2月の粗利合計は？", FISCAL)  # February of this data is 2025's
    assert spec["op"] == "total"
    expanded = {(f["op"], f["value"]) for f in spec["filters"]}
    assert expanded in ({("==", "2025-02")}, {(">=", "2025-02-01"), ("<", "2025-03-01")})


def test_a_range_of_months_is_one_period() -> None:
    spec = acted_spec("第3四半期（10〜12月）の粗利合計いくらになった？", FISCAL)
    assert spec["op"] == "total" and spec["metrics"] == {"粗利": ["sum"]}
    assert [(f["op"], f["value"]) for f in spec["filters"]] == [
        (">=", "2024-10-01"),
        ("<", "2025-01-01"),
    ]


def test_a_quarter_without_its_months_is_asked() -> None:
    decision = decide("第1四半期の粗利合計は？", FISCAL)
    assert decision.next_action == "ask"
    assert "「第1四半期」はどの月からどの月までですか" in decision.clarifying_questions[0]


def test_a_category_word_that_names_the_measure_groups_nothing() -> None:
    tickets = dataset_summary(
        200,
        [
            ("order_id", "text", ["O-1"], 200),
            ("ticket_type", "categorical", ["standard", "vip", "student"], 3),
            ("price_jpy", "numeric", ["8000"], 40),
        ],
        "ds_tickets",
    )
    spec = acted_spec("What's the average ticket price?", tickets)
    assert spec["op"] == "total" and spec["metrics"] == {"price_jpy": ["mean"]}
    by_type = acted_spec("average price per ticket type", tickets)
    assert by_type["op"] == "groupby_agg" and by_type["group_cols"] == ["ticket_type"]


@pytest.mark.parametrize(
    "text",
    [
        "仕入先ごとの在庫金額合計を多い順に。仕入先が入っていない行は対象外でお願いします",
        "仕入先別の在庫金額ランキング上位5社。仕入先が未入力の行は入れないでください",
    ],
)
def test_blanks_left_out_in_other_words(text: str) -> None:
    spec = acted_spec(text, INVENTORY)
    assert {"col": "仕入先", "op": "not_null"} in spec["filters"]
    assert spec["group_cols"] == ["仕入先"]


def test_skip_the_rows_where_a_column_is_blank() -> None:
    spec = acted_spec("total rate_jpy by channel, skip the rows where channel is blank", HOTEL)
    assert {"col": "channel", "op": "not_null"} in spec["filters"]


def test_units_sold_are_the_sum_of_the_quantity_column() -> None:
    tickets = dataset_summary(
        200,
        [
            ("order_id", "text", ["O-1"], 200),
            ("ticket_type", "categorical", ["standard", "vip"], 2),
            ("quantity", "numeric", ["2", "4"], 8),
        ],
        "ds_sold",
    )
    spec = acted_spec("How many tickets did we sell in total?", tickets)
    assert spec["op"] == "total" and spec["metrics"] == {"quantity": ["sum"]}


def test_a_number_said_before_its_column() -> None:
    spec = acted_spec("Count of bookings with more than 4 star_rating", HOTEL)
    assert spec["filters"] == [{"col": "star_rating", "op": ">", "value": 4}]


def test_counters_ask_one_number() -> None:
    decision = decide("交際費の明細は何枚ありますか", EXPENSES)
    spec = decision.analysis_spec or {}
    assert spec.get("op") == "total"
    assert spec.get("filters") == [{"col": "勘定科目", "op": "==", "value": "交際費"}]
