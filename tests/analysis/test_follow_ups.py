"""Follow-ups on a finished result (issue 28): 「それを営業部だけで」「部署別に」「月別に」
"now by channel" edit the spec that answered the previous request — through the real
agent and its thread, each answer computed here independently."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.config import Settings

EXPENSES = pd.DataFrame(
    {
        "計上日": pd.to_datetime(
            ["2025-04-03", "2025-04-20", "2025-05-02", "2025-05-18", "2025-06-07", "2025-06-30"]
        ),
        "部署": ["営業部", "総務部", "営業部", "開発部", "営業部", "総務部"],
        "勘定科目": ["交際費", "交際費", "旅費交通費", "交際費", "交際費", "消耗品費"],
        "金額": [12000, 48000, 3300, 56000, 60000, 8000],
    }
)


def _conversation(frame: pd.DataFrame, texts: list[str]) -> list[Any]:
    with (
        tempfile.TemporaryDirectory() as home,
        AnalysisAgent(Settings(home=Path(home)), chat_model=None) as agent,
    ):
        dataset = agent.registry.add_frame(frame, "data.csv")
        return [agent.ask(text, dataset_id=dataset, thread_id="t") for text in texts]


def _spec(turn: Any) -> dict[str, Any]:
    """The spec the turn ran (its last action)."""
    return turn.actions[-1]["spec"]


def test_japanese_follow_ups_over_four_turns() -> None:
    turns = _conversation(
        EXPENSES,
        ["交際費の合計金額は？", "それを営業部だけで", "部署別に", "総務部以外で"],
    )
    first, only_sales, by_department, not_general = (_spec(t) for t in turns)
    assert first["op"] == "total" and first["metrics"] == {"金額": ["sum"]}
    entertainment = EXPENSES[EXPENSES["勘定科目"] == "交際費"]
    assert f"¥{entertainment['金額'].sum():,}" in turns[0].report_md
    sales = entertainment[entertainment["部署"] == "営業部"]
    assert only_sales["op"] == "total"
    assert f"¥{sales['金額'].sum():,}" in turns[1].report_md
    # 「部署別に」 after a filter on 部署: the total split by 部署, the filters kept
    assert by_department["op"] == "groupby_agg" and by_department["group_cols"] == ["部署"]
    assert {"col": "勘定科目", "op": "==", "value": "交際費"} in by_department["filters"]
    assert {"col": "部署", "op": "!=", "value": "総務部"} in not_general["filters"]
    assert {"col": "部署", "op": "==", "value": "営業部"} not in not_general["filters"]


def test_english_follow_ups_over_three_turns() -> None:
    bookings = pd.DataFrame(
        {
            "check_in": pd.to_datetime(["2025-03-02", "2025-03-15", "2025-04-01", "2025-04-20"]),
            "channel": ["Direct", "Expedia", "Direct", "Booking.com"],
            "room_type": ["Suite", "Twin", "Twin", "Suite"],
            "rate_jpy": [42000, 18000, 21000, 39000],
        }
    )
    turns = _conversation(
        bookings,
        ["What is the total rate_jpy?", "now by channel", "only for Suite"],
    )
    total, by_channel, suites = (_spec(t) for t in turns)
    assert total["op"] == "total"
    assert by_channel["op"] == "groupby_agg" and by_channel["group_cols"] == ["channel"]
    assert suites["group_cols"] == ["channel"]
    assert suites["filters"] == [{"col": "room_type", "op": "==", "value": "Suite"}]
    assert "Suite" in turns[2].report_md


def test_a_chart_of_one_number_is_asked_not_drawn() -> None:
    turns = _conversation(EXPENSES, ["交際費の合計金額は？", "グラフにして"])
    assert turns[1].next_action == "ask"
    assert "1つの数値はグラフにできません" in turns[1].reply


def test_a_new_request_is_not_taken_as_a_follow_up() -> None:
    turns = _conversation(EXPENSES, ["交際費の合計金額は？", "部署別の金額の平均"])
    spec = _spec(turns[1])
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"金額": ["mean"]}
    assert spec["filters"] == []  # the earlier 交際費 is not carried into a new request


def test_refusals_are_in_the_request_language_without_op_names() -> None:
    turns = _conversation(EXPENSES, ["来月の金額を予測して", "Forecast next month's spending"])
    japanese, english = turns[0].reply, turns[1].reply
    assert "対応していません" in japanese and "代わりに" in japanese
    assert english.startswith("Sorry, this request is out of scope.")
    assert "Instead, the uploaded data can answer" in english
    for reply in (japanese, english):
        for op in ("groupby_agg", "line", "scatter", "correlation_matrix", "missingness"):
            assert f"（{op}" not in reply and f"({op}" not in reply


def test_the_share_of_missing_values_is_shown_as_a_percentage() -> None:
    from keiri_agent.agents.analysis.formatting import display_rows

    frame = EXPENSES.assign(部署=["営業部", None, "営業部", None, None, "総務部"])
    turns = _conversation(frame, ["欠損値の割合を確認して"])
    table = next(a for a in turns[0].artifacts if a["kind"] == "table")["payload"]
    assert ["部署", "3", "50.0 %"] in display_rows(table)


def test_follow_ups_that_change_the_aggregation_or_the_top_n() -> None:
    turns = _conversation(
        EXPENSES,
        ["部署別の金額の合計を上位3つ", "合計じゃなくて平均で見たいです", "上位2つにして"],
    )
    mean, top2 = _spec(turns[1]), _spec(turns[2])
    assert mean["metrics"] == {"金額": ["mean"]} and mean["group_cols"] == ["部署"]
    assert top2["top_k"] == 2 and top2["metrics"] == {"金額": ["mean"]}


def test_a_grouping_said_to_go_leaves_the_monthly_line() -> None:
    """「部署は関係なく」 / "instead" after a grouped total: one line for the whole; a plain
    「月別の推移にして」 keeps the departments as the line's series."""
    dismissed, instead, kept = (
        _conversation(EXPENSES, ["部署別の金額合計", text])[1]
        for text in (
            "部署は関係なく、月別の推移をグラフで",
            "make it monthly instead, as a line chart",
            "月別の推移にして",
        )
    )
    for turn in (dismissed, instead):
        spec = _spec(turn)
        assert spec["kind"] == "line" and spec["x"] == "計上日" and spec["y"] == "金額"
        assert "hue" not in spec
    assert _spec(kept)["hue"] == "部署"


def test_a_new_period_keeps_the_lines_date_column() -> None:
    """「月次に変えて」 after a quarterly line over 支払日 stays on 支払日, not the table's
    first date column (発注日)."""
    orders = EXPENSES.rename(columns={"計上日": "発注日"}).assign(
        支払日=EXPENSES["計上日"] + pd.Timedelta(days=40)
    )
    first, monthly = _conversation(
        orders, ["支払日ごとの金額の四半期推移を折れ線で", "月次に変えて"]
    )
    assert _spec(first)["x"] == "支払日" and _spec(first)["freq"] == "Q"
    assert _spec(monthly)["x"] == "支払日" and _spec(monthly)["freq"] == "M"


def test_what_those_cost_is_the_whole_of_the_money_columns_parts() -> None:
    """ "and what did those cost in total?" after a count, with 基本料金 and 割増料金 beside
    料金: the total of 料金 for the same rows."""
    trips = pd.DataFrame(
        {
            "伝票番号": ["B1", "B2", "B3", "B4"],
            "至急": [True, False, True, False],
            "基本料金": [800, 900, 1000, 700],
            "割増料金": [500, 0, 700, 0],
            "料金": [1300, 900, 1700, 700],
        }
    )
    count, cost = _conversation(trips, ["至急の便は何件？", "and what did those cost in total?"])
    assert _spec(count)["filters"] == [{"col": "至急", "op": "==", "value": True}]
    assert _spec(cost)["metrics"] == {"料金": ["sum"]}
    assert _spec(cost)["filters"] == [{"col": "至急", "op": "==", "value": True}]
    assert "¥3,000" in cost.report_md


def test_blanks_dropped_with_no_column_named_are_those_of_the_grouping() -> None:
    """ "now exclude the blank ones" after a grouped total: the blank groups go (before: a
    question what to analyse)."""
    frame = EXPENSES.assign(部署=["営業部", None, "営業部", "開発部", None, "総務部"])
    for text in ("now exclude the blank ones", "空欄は除いて"):
        dropped = _conversation(frame, ["部署別の金額合計", text])[1]
        assert _spec(dropped)["group_cols"] == ["部署"]
        assert _spec(dropped)["filters"] == [{"col": "部署", "op": "not_null"}], text


def test_a_value_said_to_be_added_joins_the_condition() -> None:
    """「調整後合格も含めると？」 after 「不合格は何件？」: both results (before: the condition
    went and every instrument was counted); "add Thailand too" after Vietnam likewise."""
    checks = pd.DataFrame(
        {
            "校正番号": ["C1", "C2", "C3", "C4", "C5"],
            "判定": ["合格", "不合格", "調整後合格", "合格", "不合格"],
            "校正費用": [8000, 9000, 12000, 8000, 9500],
        }
    )
    failed, with_adjusted = _conversation(checks, ["不合格は何件？", "調整後合格も含めると？"])
    assert _spec(failed)["filters"] == [{"col": "判定", "op": "==", "value": "不合格"}]
    assert _spec(with_adjusted)["filters"] == [
        {"col": "判定", "op": "in", "value": ["不合格", "調整後合格"]}
    ]
    assert "3" in with_adjusted.report_md
    marks = pd.DataFrame(
        {
            "Mark": ["A", "B", "C", "D"],
            "Country": ["VN", "TH", "VN", "JP"],
            "Official Fee": [100, 200, 300, 400],
        }
    )
    _, added = _conversation(marks, ["how many dockets in VN?", "add TH too"])
    assert _spec(added)["filters"] == [{"col": "Country", "op": "in", "value": ["VN", "TH"]}]


def test_switching_the_date_of_a_line_keeps_the_line() -> None:
    """ "switch to paid date" after a monthly line over the due date: the same line over
    Paid Date (before: a summary of the Paid Date column)."""
    dockets = pd.DataFrame(
        {
            "Mark": ["A", "B", "C", "D"],
            "Renewal Due": pd.to_datetime(["2025-01-10", "2025-02-11", "2025-02-20", "2025-03-01"]),
            "Paid Date": pd.to_datetime(["2025-01-05", "2025-01-30", "2025-02-15", "2025-03-20"]),
            "Total Cost JPY": [100000, 80000, 120000, 90000],
        }
    )
    line, moved = _conversation(
        dockets, ["monthly trend of Total Cost JPY by Renewal Due", "switch to paid date"]
    )
    assert _spec(line)["kind"] == "line" and _spec(line)["x"] == "Renewal Due"
    assert _spec(moved)["kind"] == "line" and _spec(moved)["x"] == "Paid Date"
    assert _spec(moved)["y"] == "Total Cost JPY"
