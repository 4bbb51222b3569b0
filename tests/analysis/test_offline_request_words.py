"""Offline reasoner: how requests name columns, rows, rankings and values.

Made-up parcel-shipping (Japanese) and event-booking (English) data. Each test is one
general class of request: a column named without its unit (重量 ~ 重量kg) or by the
tail of its name (区分 ~ 配送区分), rows counted under a condition, the top k by
frequency, common nouns that are also category values, a share of a numeric column
with "top 3 only", duplicates on named columns, and free-text classification.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis.reasoning.decision import Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner


def _column(name: str, kind: str, examples: list[str], values: list[str] | None = None) -> dict:
    column: dict[str, Any] = {"name": name, "kind": kind, "unique": 200, "examples": examples}
    if values is not None:
        column.update(values=values, unique=len(values))
    return column


def decide(text: str, summary: dict[str, Any]) -> Decision:
    return OfflineReasoner().decide(
        ReasonInput(
            messages=[HumanMessage(text)],
            dataset_id=summary["dataset_id"],
            dataset_summary=summary,
        )
    )


def first_spec(text: str, summary: dict[str, Any]) -> dict[str, Any]:
    decision = decide(text, summary)
    assert decision.next_action == "act", decision
    spec = decision.analysis_spec or decision.plot_spec
    assert spec is not None
    return spec


_SHIPPING: dict[str, Any] = {
    "dataset_id": "ds_ship",
    "name": "shipping.csv",
    "rows": 400,
    "columns": [
        _column("出荷日", "datetime", ["2025-01-04", "2025-02-11"]),
        _column("営業所", "categorical", ["札幌", "仙台"], ["札幌", "仙台", "福岡", "広島"]),
        _column("配送区分", "categorical", ["通常", "速達"], ["通常", "速達", "冷蔵"]),
        _column("荷物種別", "categorical", ["書類", "家具"], ["書類", "家具", "家電", "食品"]),
        _column("重量kg", "numeric", ["1.5", "20"]),
        _column("運賃円", "numeric", ["800", "2400"]),
        _column("待機時間_分", "numeric", ["0", "45"]),
        _column("個数", "numeric", ["0", "3"]),
        _column("備考", "text", ["午前指定", "不在"]),
    ],
}
_EVENTS: dict[str, Any] = {
    "dataset_id": "ds_evt",
    "name": "events.csv",
    "rows": 400,
    "columns": [
        {**_column("booking_id", "text", ["B-0001", "B-0002"]), "unique": 400},
        _column("event_date", "datetime", ["2025-01-04", "2025-02-11"]),
        _column("venue", "categorical", ["Hall A", "Hall B"], ["Hall A", "Hall B", "Dome"]),
        _column("ticket_tier", "categorical", ["standard"], ["standard", "partner", "vip"]),
        _column("organiser", "categorical", ["Acme", "Zen"], ["Acme", "Zen", "Orbit"]),
        _column("fee_usd", "numeric", ["20", "90"]),
        _column("stay_sec", "numeric", ["600", "9000"]),
        _column("seats", "numeric", ["1", "4"]),
    ],
}


def _group(spec: dict[str, Any]) -> tuple[Any, ...]:
    return (spec["op"], spec["group_cols"], spec["metrics"], spec["top_k"], spec["filters"])


# --- a unit or qualifier glued onto the column name ----------------------------------------


@pytest.mark.parametrize(
    "text,metric",
    [
        ("営業所別の重量の平均", {"重量kg": ["mean"]}),
        ("営業所別の運賃の合計", {"運賃円": ["sum"]}),
        ("営業所ごとの待機時間の平均", {"待機時間_分": ["mean"]}),
    ],
)
def test_a_name_without_its_unit_names_the_column(text: str, metric: dict[str, Any]) -> None:
    spec = first_spec(text, _SHIPPING)
    assert spec["group_cols"] == ["営業所"]
    assert spec["metrics"] == metric


def test_a_one_character_word_ending_is_no_unit() -> None:
    """区分 ends with 分 (minutes) but 配送区分 is no 配送区 in minutes."""
    spec = first_spec("区分別の運賃合計", _SHIPPING)
    assert spec["group_cols"] == ["配送区分"]
    assert spec["metrics"] == {"運賃円": ["sum"]}


# --- the tail of a column's name ------------------------------------------------------------


@pytest.mark.parametrize(
    "text,group",
    [("区分別の運賃合計", ["配送区分"]), ("種別ごとの件数", ["荷物種別"])],
)
def test_the_tail_of_one_column_name_names_it(text: str, group: list[str]) -> None:
    assert first_spec(text, _SHIPPING)["group_cols"] == group


def test_a_tail_shared_by_two_columns_is_asked() -> None:
    summary = {
        **_SHIPPING,
        "columns": [
            *_SHIPPING["columns"],
            _column("顧客種別", "categorical", ["法人", "個人"], ["法人", "個人"]),
        ],
    }
    decision = decide("種別ごとの件数", summary)
    assert decision.next_action == "ask"
    assert "荷物種別" in decision.clarifying_questions[0]
    assert "顧客種別" in decision.clarifying_questions[0]


# --- counting rows under a condition ---------------------------------------------------------


def test_rows_under_a_condition_are_counted_by_group() -> None:
    spec = first_spec("個数が0の行を営業所別に数えて", _SHIPPING)
    assert _group(spec) == (
        "groupby_agg",
        ["営業所"],
        {"営業所": ["count"]},
        None,
        [{"col": "個数", "op": "==", "value": 0}],
    )


# --- top k by frequency ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,summary,group,k",
    [
        ("いちばん多い種別を上から3つ", _SHIPPING, "荷物種別", 3),
        ("Which 5 organisers show up most often?", _EVENTS, "organiser", 5),
    ],
)
def test_the_most_frequent_values_keep_k(
    text: str, summary: dict[str, Any], group: str, k: int
) -> None:
    spec = first_spec(text, summary)
    assert spec["op"] == "share_ratio" and spec["group_col"] == group
    assert (spec["value_col"], spec["top_k"], spec["filters"]) == (None, k, [])


# --- common nouns that are also category values ----------------------------------------------


def test_a_value_inside_a_phrase_of_what_is_asked_is_no_filter() -> None:
    spec = first_spec("Show the standard deviation of fee", _EVENTS)
    assert spec["filters"] == []


def test_a_value_before_a_noun_of_no_column_is_no_filter() -> None:
    spec = first_spec("For the partner meeting, show the average fee by venue", _EVENTS)
    assert spec["metrics"] == {"fee_usd": ["mean"]}
    assert spec["filters"] == []


@pytest.mark.parametrize(
    "text",
    [
        "Total fee for the partner tier by venue",
        "Total fee by venue for partner bookings",
        "Total fee by venue, only partner",
    ],
)
def test_a_value_used_as_a_condition_filters(text: str) -> None:
    spec = first_spec(text, _EVENTS)
    assert spec["filters"] == [{"col": "ticket_tier", "op": "==", "value": "partner"}]


# --- share of a numeric column, top k only ---------------------------------------------------


@pytest.mark.parametrize(
    "text,summary,group,value",
    [
        ("What share of stay comes from each venue? Top 3 only.", _EVENTS, "venue", "stay_sec"),
        ("営業所別の重量の構成比を出して。上位3つだけ", _SHIPPING, "営業所", "重量kg"),
    ],
)
def test_a_share_of_a_numeric_column_keeps_top_k(
    text: str, summary: dict[str, Any], group: str, value: str
) -> None:
    spec = first_spec(text, summary)
    assert (spec["op"], spec["group_col"], spec["value_col"], spec["top_k"]) == (
        "share_ratio",
        group,
        value,
        3,
    )


# --- duplicates on named columns -------------------------------------------------------------


@pytest.mark.parametrize(
    "text,subset",
    [
        ("Find duplicate booking ids", ["booking_id"]),
        ("Check duplicates (same venue and event date)", ["venue", "event_date"]),
    ],
)
def test_duplicates_on_the_named_columns(text: str, subset: list[str]) -> None:
    spec = first_spec(text, _EVENTS)
    assert (spec["op"], spec["subset"]) == ("duplicate_check", subset)


# --- classifying free text -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,summary",
    [("備考を自動で分類して", _SHIPPING), ("Automatically categorise the bookings", _EVENTS)],
)
def test_classifying_free_text_is_out_of_scope(text: str, summary: dict[str, Any]) -> None:
    assert decide(text, summary).next_action == "out_of_scope"
