"""General rules read from a dataset's structure and a request's grammar (issue 28), each
shown on made-up data of domains no benchmark uses: an association's membership-dues
ledger (Japanese) and a club's renewals and a box office's bookings (English)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from offline_support import acted_spec, dataset_summary, decide

from keiri_agent.agents.analysis.messages import agent_message
from keiri_agent.agents.analysis.reasoning.decision import Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner
from keiri_agent.agents.analysis.reasoning.offline.request_filters import money_column

ROWS = 900

DUES = dataset_summary(
    ROWS,
    [
        ("会員番号", "text", ["M-00001", "M-00002"], ROWS),
        ("入会日", "datetime", ["2024-04-01", "2025-03-31"], 240),
        ("支部", "categorical", ["札幌支部", "仙台支部", "福岡支部"], 3),
        ("会員種別", "categorical", ["正会員", "賛助会員", "学生会員"], 3),
        ("開催会場", "categorical", ["本部ホール", "市民会館"], 2),
        ("納付方法", "categorical", ["口座振替", "クレジット", "現金"], 3),
        ("納付金額", "numeric", ["3000", "12000", "50000"], 40),
        ("クレジット手数料", "numeric", ["0", "90", "360"], 3),
        ("担当", "categorical", ["佐々木", "原田", "三浦"], 3),
        ("備考", "text", ["住所変更", "再発行"], 30),
    ],
    "ds_dues",
)
RENEWALS = dataset_summary(
    ROWS,
    [
        ("renewal_id", "text", ["RN-0001", "RN-0002"], ROWS),
        ("renewed_on", "datetime", ["2024-07-01", "2025-06-30"], 300),
        ("member_type", "categorical", ["Student", "Senior", "Family"], 3),
        ("chapter", "categorical", ["North", "Coastal", "Valley"], 3),
        ("paid_via", "categorical", ["Card", "Check", "Transfer"], 3),
        ("dues_gbp", "numeric", ["20.0", "65.0", "140.0"], 30),
        ("months", "numeric", ["1", "6", "12", "24"], 4),
        ("auto_renew", "categorical", ["Yes", "No"], 2),
        ("coordinator", "categorical", ["P. Shaw", "K. Doyle"], 2),
        ("comments", "text", ["moved abroad", "paid late"], 40),
    ],
    "ds_renewals",
)
TICKETS = dataset_summary(
    ROWS,
    [
        ("bookingId", "text", ["B-1", "B-2"], ROWS),
        ("bookingDate", "datetime", ["2025-01-01", "2025-06-30"], 180),
        ("venueName", "categorical", ["Arena", "Hall", "Park"], 3),
        ("bookingTotal", "numeric", ["15", "80"], 60),
        ("serviceFee", "numeric", ["1.5", "4.0"], 8),
        ("seatRow", "numeric", ["1", "30"], 30),
    ],
    "ds_tickets",
)


def _follow_up(text: str, previous: dict[str, Any], dataset: dict[str, Any]) -> Decision:
    """The decision on ``text`` said right after ``previous`` was answered."""
    return OfflineReasoner().decide(
        ReasonInput(
            messages=[
                HumanMessage("（前の依頼）"),
                agent_message("（回答済み）", "report"),
                HumanMessage(text),
            ],
            dataset_id=dataset["dataset_id"],
            dataset_summary=dataset,
            previous_specs=[previous],
        )
    )


def test_a_blank_read_as_a_condition_is_no_missing_values_check() -> None:
    # before: 「未入力」/"blank" asked for the missing-values check of the named column
    spec = acted_spec("担当が未入力になっている会員の納付金額合計を出して", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {"納付金額": ["sum"]}
    assert spec["filters"] == [{"col": "担当", "op": "is_null"}]
    spec = acted_spec("担当が未入力のもの、支部ごとに納付金額を合計して", DUES)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["支部"]
    assert spec["filters"] == [{"col": "担当", "op": "is_null"}]
    spec = acted_spec("sum of dues_gbp where coordinator is blank", RENEWALS)
    assert spec["op"] == "total" and spec["metrics"] == {"dues_gbp": ["sum"]}
    assert spec["filters"] == [{"col": "coordinator", "op": "is_null"}]


def test_blank_and_filled_cells_in_other_words() -> None:
    # before: a bracketed column, 「書いてある」, 「ブランク」, "missing a", "a blank X" and
    # "a value in X" were not read, so every row was counted or totalled
    cases = [
        ("[備考] が入っている会員は何人?", DUES, {"col": "備考", "op": "not_null"}),
        ("『備考』に何か書いてある会員は何件", DUES, {"col": "備考", "op": "not_null"}),
        ("担当がブランクの会員は何件", DUES, {"col": "担当", "op": "is_null"}),
        (
            "How many renewals are missing a coordinator?",
            RENEWALS,
            {"col": "coordinator", "op": "is_null"},
        ),
        (
            "How many renewals have a value in [comments]?",
            RENEWALS,
            {"col": "comments", "op": "not_null"},
        ),
    ]
    for text, data, condition in cases:
        spec = acted_spec(text, data)
        assert spec["op"] == "total" and spec["filters"] == [condition], text
    spec = acted_spec("renewals with a blank coordinator - total dues_gbp by chapter", RENEWALS)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["chapter"]
    assert spec["filters"] == [{"col": "coordinator", "op": "is_null"}]


def test_a_word_for_money_takes_the_amount_column() -> None:
    # before: 「会費」 named no column (or the category 開催会場 for 「会場費」) and the
    # measure was asked; "collected", "income" and "the average renewal" likewise
    spec = acted_spec("会費の総額を教えてください", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {"納付金額": ["sum"]}
    spec = acted_spec("会場費の合計はいくら", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {"納付金額": ["sum"]}
    spec = acted_spec("支部ごとの会費の平均", DUES)
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"納付金額": ["mean"]}
    spec = acted_spec("What was collected from students in total?", RENEWALS)
    assert spec["op"] == "total" and spec["metrics"] == {"dues_gbp": ["sum"]}
    assert spec["filters"] == [{"col": "member_type", "op": "==", "value": "Student"}]
    spec = acted_spec("average renewal per chapter", RENEWALS)
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"dues_gbp": ["mean"]}
    spec = acted_spec("What share of our income does each chapter bring?", RENEWALS)
    assert spec["op"] == "share_ratio" and spec["value_col"] == "dues_gbp"
    # "booking" is a word of three columns, but of one numeric column only
    spec = acted_spec("total booking value by venue", TICKETS)
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"bookingTotal": ["sum"]}


def test_a_column_is_named_like_money_by_a_word_of_its_name() -> None:
    # before: the "fee" inside feedbackScore made it a money column
    numeric = ["feedbackScore", "fare_eur"]
    assert money_column(numeric, lambda n: n in numeric, None, None) == "fare_eur"


def test_two_dates_joined_are_a_range_and_a_date_may_be_written_month_first() -> None:
    # before: each date of 「A〜B」 was a day of its own; 1/2/2025 and 「6月30日まで」 unread
    spec = acted_spec("入会日が2024/5/1〜2024/9/30の会員は何件", DUES)
    assert spec["filters"] == [
        {"col": "入会日", "op": ">=", "value": "2024-05-01"},
        {"col": "入会日", "op": "<=", "value": "2024-09-30"},
    ]
    spec = acted_spec("How many renewals since 2/1/2025?", RENEWALS)
    assert spec["filters"] == [{"col": "renewed_on", "op": ">=", "value": "2025-02-01"}]
    spec = acted_spec("入会日が6月30日までの会員は何件", DUES)
    assert spec["filters"] == [{"col": "入会日", "op": "<=", "value": "2024-06-30"}]


def test_a_comparison_said_after_the_number() -> None:
    # before: "or more" was not read, so every row was counted
    spec = acted_spec("How many renewals of $100 or more?", RENEWALS)
    assert spec["filters"] == [{"col": "dues_gbp", "op": ">=", "value": 100}]
    spec = acted_spec("how many renewals have months of 6 or fewer", RENEWALS)
    assert spec["filters"] == [{"col": "months", "op": "<=", "value": 6}]


def test_how_many_in_total_counts_and_by_a_value_groups_nothing() -> None:
    # before: "in total" asked for a sum and "by check" for a grouping
    spec = acted_spec("how many renewals are there in total", RENEWALS)
    assert spec["op"] == "total" and spec["metrics"] == {}
    spec = acted_spec("How much was paid by check?", RENEWALS)
    assert spec["op"] == "total" and spec["metrics"] == {"dues_gbp": ["sum"]}
    assert spec["filters"] == [{"col": "paid_via", "op": "==", "value": "Check"}]
    # a value word opening the request as its verb is no condition
    spec = acted_spec("Check whether any renewals are duplicated", RENEWALS)
    assert spec["op"] == "duplicate_check" and spec["filters"] == []


def test_counts_said_with_a_noun() -> None:
    # before: 「…の数」「…ごとの会員数」 asked what to compute
    spec = acted_spec("口座振替で納めている会員の数", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {}
    assert spec["filters"] == [{"col": "納付方法", "op": "==", "value": "口座振替"}]
    spec = acted_spec("支部ごとの会員数を出して", DUES)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["支部"]
    assert list(spec["metrics"].values()) == [["count"]]


def test_a_measure_before_de_shuukei_is_aggregated_when_another_column_groups() -> None:
    # before: 「納付金額で集計」 made 納付金額 a grouping and the measure was asked
    spec = acted_spec("会員種別別に納付金額で集計して", DUES)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["会員種別"]
    assert spec["metrics"] == {"納付金額": ["sum"]}


def test_preparing_or_submitting_a_filing_is_out_of_scope() -> None:
    assert decide("この名簿から届出書を作って提出しておいて", DUES).next_action == "out_of_scope"
    decision = decide("prepare our tax return from this and submit it", RENEWALS)
    assert decision.next_action == "out_of_scope"


def test_a_value_starting_one_other_column_is_still_a_condition() -> None:
    # before: クレジット (a 納付方法) also starts クレジット手数料, so it was read as the
    # data's word for its rows and dropped
    spec = acted_spec("クレジットで納めた会員の納付金額合計", DUES)
    assert spec["filters"] == [{"col": "納付方法", "op": "==", "value": "クレジット"}]


def test_follow_ups_that_only_aggregate_or_name_a_yes_no_column() -> None:
    # before: 「平均でお願いします」 asked for a grouping; "only auto renew ones" was unread
    previous = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["支部"],
        "metrics": {"納付金額": ["sum"]},
        "filters": [],
        "sort": {"by": "納付金額_sum", "ascending": False},
    }
    decision = _follow_up("平均でお願いします", previous, DUES)
    assert decision.next_action == "act" and decision.analysis_spec is not None
    assert decision.analysis_spec["metrics"] == {"納付金額": ["mean"]}
    assert decision.analysis_spec["group_cols"] == ["支部"]
    previous = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["chapter"],
        "metrics": {"dues_gbp": ["sum"]},
        "filters": [],
        "sort": {"by": "dues_gbp_sum", "ascending": False},
    }
    decision = _follow_up("only auto renew ones", previous, RENEWALS)
    assert decision.next_action == "act" and decision.analysis_spec is not None
    assert decision.analysis_spec["filters"] == [{"col": "auto_renew", "op": "==", "value": "Yes"}]
