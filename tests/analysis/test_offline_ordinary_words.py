"""The offline reasoner reads requests written in ordinary words (issue 16, item 2).

Each rule is shown on made-up data of domains the rules were not tuned on and that
the held-out benchmark does not use either: a delivery fleet (English), a warehouse
stock list and an expense ledger (Japanese).
"""

from __future__ import annotations

from typing import Any

import pytest
from offline_support import dataset_summary, decide, spec_of

ROWS = 800


FLEET = dataset_summary(
    ROWS,
    [
        ("vehicle_name", "text", ["Van 001", "Van 002"], ROWS),
        ("trip_date", "datetime", ["2024-01-02", "2024-12-30"], 300),
        ("depot", "categorical", ["North", "South", "Harbor"], 3),
        ("service_type", "categorical", ["Express", "Standard", "Truck"], 3),
        ("fuelLitres", "numeric", ["12.5", "80.1"], 500),
        ("distance", "numeric", ["3.2", "410.0"], 600),
        ("tollfee", "numeric", ["0", "12.40"], 90),
        ("stop_count", "numeric", ["1", "25"], 25),
        ("avg_speed", "numeric", ["18.0", "74.5"], 400),
        ("loadClass", "numeric", ["1", "2", "3"], 3),
        ("utilisation", "numeric", ["35", "100"], 60),
    ],
    "ds_fleet",
)
# Yearly columns and no date column: a year in the request names a column.
YEARLY = dataset_summary(
    ROWS,
    [
        ("depot", "categorical", ["North", "South"], 2),
        ("fuel_2023", "numeric", ["1.0", "2.0"], 300),
        ("fuel_2024", "numeric", ["1.5", "2.5"], 300),
    ],
    "ds_yearly",
)
WAREHOUSE = dataset_summary(
    ROWS,
    [
        ("品番", "text", ["A-001", "A-002"], ROWS),
        ("品名", "text", ["ボルト", "ナット"], ROWS),
        ("倉庫", "categorical", ["東倉庫", "西倉庫", "南倉庫"], 3),
        ("保管区分", "numeric", ["1", "2", "3"], 3),
        ("在庫数", "numeric", ["0", "120", "5400"], 700),
        ("重量", "numeric", ["0.1", "12.0"], 300),
        ("入庫日", "datetime", ["2024-04-01", "2025-03-31"], 200),
    ],
    "ds_wh",
)
EXPENSES = dataset_summary(
    ROWS,
    [
        ("精算番号", "text", ["EX-0001"], ROWS),
        ("申請日", "datetime", ["2024-04-01", "2025-03-31"], 300),
        ("部門", "categorical", ["営業部", "総務部"], 4),
        ("勘定科目", "categorical", ["旅費交通費", "会議費"], 6),
        ("取引先", "categorical", ["東西交通", "山川ホテル"], 40),
        ("勤務地", "categorical", ["本社", "支店"], 2),
        ("基本給", "numeric", ["250000", "410000"], 300),
        ("金額", "numeric", ["1200", "88000"], 500),
    ],
    "ds_exp",
)


def columns_of(spec: dict[str, Any]) -> set[str]:
    found = set(spec.get("columns") or []) | set(spec.get("group_cols") or [])
    found |= set(spec.get("metrics") or {}) | set(spec.get("subset") or [])
    found |= {spec[k] for k in ("x", "y", "hue", "group_col", "value_col") if spec.get(k)}
    return found


@pytest.mark.parametrize(
    "text,summary,expected",
    [
        # camelCase and snake_case split into words
        ("Average fuel litres by depot", FLEET, {"fuelLitres", "depot"}),
        # a name written as one word, said as two
        ("What is the mean toll fee?", FLEET, {"tollfee"}),
        # the user cuts a long word short
        ("What is the mean dist?", FLEET, {"distance"}),
        # a count column said as "number of ..."
        ("Total number of stops per depot", FLEET, {"stop_count", "depot"}),
        # a word of the name that no other column has
        ("What is the average speed?", FLEET, {"avg_speed"}),
        # a year in the name, with no date column: no period question
        ("What is the median fuel in 2024?", YEARLY, {"fuel_2024"}),
        # accounting vocabulary: 部署 → 部門, 科目 → 勘定科目, 支払先 → 取引先, 給料 → 基本給
        ("部署別の金額合計", EXPENSES, {"部門", "金額"}),
        ("科目別の金額の合計を出して", EXPENSES, {"勘定科目", "金額"}),
        ("支払先ごとの金額の合計", EXPENSES, {"取引先", "金額"}),
        ("給料の平均はいくら？", EXPENSES, {"基本給"}),
    ],
)
def test_columns_named_in_ordinary_words(
    text: str, summary: dict[str, Any], expected: set[str]
) -> None:
    assert columns_of(spec_of(decide(text, summary))) == expected


INVOICES = dataset_summary(
    ROWS,
    [
        ("invoice_number", "text", ["INV-1", "INV-2"], ROWS),
        ("depot", "categorical", ["North", "South"], 2),
        ("net_total", "numeric", ["10.0", "99.5"], 500),
    ],
    "ds_inv",
)


@pytest.mark.parametrize(
    "text,summary",
    [("Number of vehicles by depot", FLEET), ("Number of invoices by depot", INVOICES)],
)
def test_an_identifier_column_is_not_named_by_its_entity(
    text: str, summary: dict[str, Any]
) -> None:
    spec = spec_of(decide(text, summary))
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"depot": ["count"]}


@pytest.mark.parametrize(
    "text,summary,column,value",
    [
        ("Mean fuel litres where load class = 2", FLEET, "loadClass", 2),
        ("Median distance when load class is 3", FLEET, "loadClass", 3),
        ("Average speed for vehicles with a load class of 1", FLEET, "loadClass", 1),
        ("保管区分が2の行の在庫数の平均", WAREHOUSE, "保管区分", 2),
        ("保管区分=3の品目の重量の中央値", WAREHOUSE, "保管区分", 3),
    ],
)
def test_equality_conditions(text: str, summary: dict[str, Any], column: str, value: int) -> None:
    spec = spec_of(decide(text, summary))
    assert spec["op"] == "total"  # one number for the rows kept
    assert {"col": column, "op": "==", "value": value} in spec["filters"]
    assert column not in spec["metrics"]


@pytest.mark.parametrize(
    "text,summary,group,metric,agg",
    [
        ("average fuel litres by load class", FLEET, "loadClass", "fuelLitres", "mean"),
        ("average distance in each load class", FLEET, "loadClass", "distance", "mean"),
        (
            "For each of the load classes, the median toll fee",
            FLEET,
            "loadClass",
            "tollfee",
            "median",
        ),
        ("For each of the depots, what is the total distance?", FLEET, "depot", "distance", "sum"),
        ("各保管区分の在庫数の合計", WAREHOUSE, "保管区分", "在庫数", "sum"),
    ],
)
def test_grouping_by_a_numeric_column_and_for_each_of(
    text: str, summary: dict[str, Any], group: str, metric: str, agg: str
) -> None:
    spec = spec_of(decide(text, summary))
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == [group]
    assert spec["metrics"] == {metric: [agg]}


def test_a_single_numeric_column_after_by_is_still_the_metric() -> None:
    spec = spec_of(decide("Top 5 depots by distance", FLEET))
    assert spec["group_cols"] == ["depot"] and "distance" in spec["metrics"]


@pytest.mark.parametrize(
    "text,summary,column,top_k",
    [
        ("the two most common service types", FLEET, "service_type", 2),
        ("倉庫で多い値を上位2つ", WAREHOUSE, "倉庫", 2),
    ],
)
def test_most_common_values_are_ranked_by_count(
    text: str, summary: dict[str, Any], column: str, top_k: int
) -> None:
    # the values ranked by their row count (with their share), the k most common kept
    spec = spec_of(decide(text, summary))
    assert spec["op"] == "share_ratio" and spec["group_col"] == column
    assert spec["value_col"] is None and spec["top_k"] == top_k


def test_headcount_is_a_count() -> None:
    spec = spec_of(decide("勤務地別の人数", EXPENSES))
    assert spec["metrics"] == {"勤務地": ["count"]}


@pytest.mark.parametrize(
    "text,summary,op",
    [
        ("percentage of missing values in depot", FLEET, "missingness"),
        ("倉庫の欠損値の割合", WAREHOUSE, "missingness"),
        ("What is the mean utilisation percentage?", FLEET, "total"),
    ],
)
def test_missing_percentage_and_mean_percentage(
    text: str, summary: dict[str, Any], op: str
) -> None:
    assert spec_of(decide(text, summary))["op"] == op


@pytest.mark.parametrize(
    "text,summary",
    [
        ("Fill the missing depot values with 'North'", FLEET),
        ("Normalise distance to z-scores", FLEET),
        ("Show trips whose distance is above the average distance", FLEET),
        ("Compare the fuel with the official statistics", FLEET),
        ("在庫数の欠損を0で埋めて", WAREHOUSE),
        ("在庫数を標準化して", WAREHOUSE),
        ("在庫数が平均以上の品目を抽出して", WAREHOUSE),
    ],
)
def test_what_the_vocabulary_cannot_express_is_refused(text: str, summary: dict[str, Any]) -> None:
    decision = decide(text, summary)
    assert decision.next_action == "out_of_scope", decision
    assert decision.analysis_spec is None and decision.plot_spec is None


@pytest.mark.parametrize(
    "text,summary,said",
    [
        ("Total fuel litres by depot, and forecast next month's fuel", FLEET, "forecast"),
        ("倉庫別の在庫数合計と、返品率の平均", WAREHOUSE, "返品率"),
    ],
)
def test_an_unanswerable_part_does_not_block_the_rest(
    text: str, summary: dict[str, Any], said: str
) -> None:
    decision = decide(text, summary)
    spec = spec_of(decision)
    assert spec["op"] == "groupby_agg"
    assert any(said in a for a in decision.assumptions), decision.assumptions


def test_correlation_between_two_columns_is_one_clause() -> None:
    spec = spec_of(decide("correlation between the toll fee and the number of stops", FLEET))
    assert spec["op"] == "correlation_matrix"
    assert set(spec["columns"]) == {"tollfee", "stop_count"}


@pytest.mark.parametrize(
    "text,summary",
    [
        ("What is the average fuel a truck uses per depot?", FLEET),
        ("東倉庫も含めて、倉庫ごとの在庫数合計", WAREHOUSE),
    ],
)
def test_a_common_noun_equal_to_a_value_is_not_a_filter(text: str, summary: dict[str, Any]) -> None:
    spec = spec_of(decide(text, summary))
    assert spec["op"] == "groupby_agg" and spec["filters"] == []


def test_a_value_used_as_a_condition_still_filters() -> None:
    spec = spec_of(decide("Total distance by depot for the Truck service type", FLEET))
    assert {"col": "service_type", "op": "==", "value": "Truck"} in spec["filters"]
