"""Column resolution by scored lexical similarity (issue 16, item 2): the fallback after
the exact terms, shown on made-up data of domains no other test or benchmark uses — a
public library's loan log (English) and a greenhouse's harvest sheet (Japanese)."""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary, decide

from keiri_agent.agents.analysis.reasoning.offline.similarity import stem

ROWS = 700


LOANS = dataset_summary(
    ROWS,
    [
        ("loan_id", "text", ["L-0001", "L-0002"], ROWS),
        ("borrowedVia", "categorical", ["Counter", "Kiosk", "App"], 3),
        ("genre", "categorical", ["Fiction", "History", "Science"], 3),
        ("lateFeeJpy", "numeric", ["0", "300"], 20),
        ("pagesRead", "numeric", ["12", "480"], 300),
    ],
    "ds_loans",
)
HARVEST = dataset_summary(
    ROWS,
    [
        ("収穫ID", "text", ["H-0001"], ROWS),
        ("温室区画", "categorical", ["A棟", "B棟", "C棟"], 3),
        ("作物名", "categorical", ["トマト", "きゅうり"], 2),
        ("収穫量（kg）", "numeric", ["1.2", "40.5"], 400),
        ("出荷単価（円）", "numeric", ["120", "800"], 90),
    ],
    "ds_harvest",
)


def test_stem_reads_inflections_alike() -> None:
    assert stem("borrowing") == stem("borrowed") == stem("borrow")
    assert stem("countries") == stem("country")


def test_an_inflected_word_of_a_name_names_the_column() -> None:
    spec = acted_spec("share of loans by borrowing channel", LOANS)
    assert spec["op"] == "share_ratio"
    assert spec["group_col"] == "borrowedVia"


def test_a_japanese_word_sharing_most_characters_names_the_column() -> None:
    spec = acted_spec("温室ごとに収穫量の合計を出して", HARVEST)
    assert spec["group_cols"] == ["温室区画"]
    assert spec["metrics"] == {"収穫量（kg）": ["sum"]}
    # before: the grouping word was dropped and a plain summary ran silently
    spec = acted_spec("出荷の単価の平均を温室別に", HARVEST)
    assert spec["group_cols"] == ["温室区画"]
    assert spec["metrics"] == {"出荷単価（円）": ["mean"]}


def test_a_word_of_an_identifier_column_names_nothing() -> None:
    spec = acted_spec("収穫の件数を作物名ごとに", HARVEST)
    assert spec["group_cols"] == ["作物名"]


def test_a_threshold_that_is_a_computed_average_is_refused_in_any_comparison() -> None:
    for text, summary in [
        ("loans where the pages read are longer than the average pages read", LOANS),
        ("収穫量が平均収穫量を上回る区画の一覧", HARVEST),
    ]:
        assert decide(text, summary).next_action == "out_of_scope", text
    # a fixed number after the average is a condition on a group's average, not refused
    assert decide("出荷単価の平均が300円を超える作物名", HARVEST).next_action != "out_of_scope"


SHELVES = dataset_summary(
    ROWS,
    [
        ("item_id", "text", ["I-0001"], ROWS),
        ("genre", "categorical", ["Fiction", "History"], 2),
        ("shelf_no", "numeric", ["1", "2", "3", "4"], 4),
        ("pagesRead", "numeric", ["10", "400"], 300),
    ],
    "ds_shelves",
)


def test_a_numbered_column_with_few_values_is_a_group_not_an_identifier() -> None:
    spec = acted_spec("average pages read by shelf number", SHELVES)
    assert spec["group_cols"] == ["shelf_no"]
    assert spec["metrics"] == {"pagesRead": ["mean"]}


def test_a_bare_number_after_a_numeric_column_is_an_equality() -> None:
    spec = acted_spec("For shelf 3, what's the average pages read by genre?", SHELVES)
    assert spec["group_cols"] == ["genre"]
    assert spec["filters"] == [{"col": "shelf_no", "op": "==", "value": 3}]
