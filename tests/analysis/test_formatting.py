"""The one formatter (issue 16 item 4): what a Japanese accountant reads in the chat,
the report, the terminal and the API's display fields."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from keiri_agent.agents.analysis.formatting import (
    column_kind_label,
    display_table,
    format_value,
)
from keiri_agent.agents.analysis.ops.executor import run_analysis
from keiri_agent.agents.analysis.ops.plots import _x_positions, partial_periods, run_plot
from keiri_agent.agents.analysis.report import _offline_suggestions, table_markdown


def _tables(result: Any) -> list[dict[str, Any]]:
    return [a["payload"] for a in result.artifacts if a["kind"] == "table"]


def _texts(result: Any) -> str:
    return "\n".join(str(a["payload"]) for a in result.artifacts if a["kind"] == "text")


def _daily(end: str) -> pd.DataFrame:
    days = pd.date_range("2024-01-01", end, freq="D")
    return pd.DataFrame(
        {
            "日付": days,
            "地域": ["東", "西"] * (len(days) // 2) + ["東"] * (len(days) % 2),
            "売上": 1000.0,
        }
    )


def test_values_dates_periods_and_percentages() -> None:
    assert format_value("2024-01-01T00:00:00") == "2024-01-01"
    assert format_value("2024-01-01T09:30:00") == "2024-01-01 09:30:00"
    assert format_value(pd.Timestamp("2024-01-01")) == "2024-01-01"
    assert format_value("2024-03-01T00:00:00", "M") == "2024-03"
    assert format_value("2024-04-01T00:00:00", "Q") == "2024年Q2"
    assert format_value(1234567) == "1,234,567"
    assert format_value(np.int64(1234567)) == "1,234,567"
    assert format_value(0.37702, "percent") == "37.7 %"


def test_column_kinds_in_japanese() -> None:
    assert [column_kind_label(k) for k in ("numeric", "datetime", "categorical", "text")] == [
        "数値",
        "日付",
        "カテゴリ",
        "テキスト",
    ]


def test_groupby_columns_have_japanese_labels_and_json_keeps_machine_names() -> None:
    frame = pd.DataFrame({"地域": ["東", "西", "東"], "売上": [1_000_000, 234_567, 1]})
    result = run_analysis(
        {"op": "groupby_agg", "group_cols": ["地域"], "metrics": {"売上": ["sum", "mean"]}},
        frame,
    )
    payload = _tables(result)[0]
    assert payload["columns"] == ["地域", "売上_sum", "売上_mean"]  # machine form unchanged
    shown = display_table(payload)
    assert shown["columns"] == ["地域", "売上（合計）", "売上（平均）"]
    assert ["東", "1,000,001", "500,000.5"] in shown["rows"]
    assert "売上_sum" not in result.artifacts[0]["description"]
    assert "売上_sum" not in _texts(result)


def test_share_ratio_is_a_percentage_of_a_named_whole() -> None:
    frame = pd.DataFrame({"地域": ["東", "西", "東"], "売上": [300.0, 200.0, 500.0]})
    result = run_analysis({"op": "share_ratio", "group_col": "地域", "value_col": "売上"}, frame)
    payload = _tables(result)[0]
    shown = display_table(payload)
    assert "構成比（売上合計に占める割合）" in shown["columns"]
    assert shown["rows"][0] == ["東", "800", "80.0 %", "80.0 %"]
    assert "売上合計に占める" in result.artifacts[0]["description"]
    assert "売上合計に占める割合" in _texts(result)
    markdown = table_markdown(payload)
    assert "80.0 %" in markdown and "売上_sum" not in markdown and "0.8 |" not in markdown


def test_a_partly_covered_last_month_is_marked_not_drawn_as_a_collapse() -> None:
    result = run_plot(
        {"kind": "line", "x": "日付", "y": "売上", "agg": "sum", "freq": "M"},
        _daily("2024-03-02"),
    )
    payload = _tables(result)[0]
    shown = display_table(payload)
    assert [row[0] for row in shown["rows"]] == ["2024-01", "2024-02", "2024-03（途中まで）"]
    assert shown["columns"] == ["日付", "売上（合計）"]
    facts = _texts(result)
    assert "2024-03 はデータが期間の一部しかない" in facts
    assert "最小: 2024-03" not in facts  # the partial month is not the minimum


def test_whole_months_and_monthly_data_are_not_partial() -> None:
    starts = pd.date_range("2024-01-01", periods=3, freq="MS")
    monthly = pd.Series(starts)
    assert partial_periods(monthly, starts, "M") == []
    business = pd.Series(pd.bdate_range("2024-01-04", "2024-03-29"))
    assert partial_periods(business, starts, "M") == []
    daily = pd.Series(pd.date_range("2024-01-01", "2024-03-02"))
    assert partial_periods(daily, starts, "M") == [2]


def test_monthly_points_get_monthly_ticks() -> None:
    figure = Figure()
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    index = pd.date_range("2024-01-01", periods=6, freq="MS")
    _x_positions(index, axes, "M")
    assert [t.get_text() for t in axes.get_xticklabels()] == [
        "2024-01",
        "2024-02",
        "2024-03",
        "2024-04",
        "2024-05",
        "2024-06",
    ]


def test_follow_up_suggestions_speak_japanese() -> None:
    actions = [
        {"spec": {"op": "groupby_agg", "group_cols": ["地域"], "metrics": {"売上": ["sum"]}}},
        {"spec": {"op": "share_ratio", "group_col": "地域", "value_col": "売上"}},
    ]
    suggestions = _offline_suggestions(actions)
    assert suggestions[0] == "地域別の売上合計を月ごとに見る（推移の折れ線グラフ）"
    ops = ("groupby_agg", "share_ratio", "line", "scatter", "correlation_matrix", "box")
    assert not any(op in text for text in suggestions for op in ops)


def test_one_whole_period_is_not_called_both_the_largest_and_the_smallest() -> None:
    # data from the 20th of one month to the 2nd of the next: a partial month each side
    dates = pd.date_range("2024-01-20", "2024-03-02")
    frame = pd.DataFrame({"日付": dates, "売上": range(len(dates))})
    result = run_plot({"kind": "line", "x": "日付", "y": "売上", "agg": "sum", "freq": "M"}, frame)
    facts = _texts(result)
    assert "途中まで" in facts
    assert "最大: 2024-02" not in facts and "最小: 2024-02" not in facts
    assert "完全な期間は 2024-02 のみ" in facts
