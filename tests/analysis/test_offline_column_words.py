"""The offline reasoner reads column words, units, groups and conditions said in ordinary
words (issue 16, item 2, the classes of the unseen set's failures).

Each rule is shown on made-up data of domains no other test or benchmark uses: a bike
rental log (English, camelCase and snake_case with units) and a clinic's
appointment book (Japanese).
"""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary, decide, spec_of

ROWS = 900


BIKES = dataset_summary(
    ROWS,
    [
        ("rental_id", "text", ["R-0001", "R-0002"], ROWS),
        ("startTime", "datetime", ["2025-04-01", "2025-09-30"], 180),
        ("station", "categorical", ["Riverside", "Old Town", "Campus"], 3),
        ("bikeModel", "categorical", ["City", "Electric", "Cargo"], 3),
        ("plan", "categorical", ["Casual", "Member", "Group"], 3),
        ("riders", "numeric", ["1", "2", "3"], 3),
        ("ride_km", "numeric", ["0.8", "14.2"], 600),
        ("battery_l", "numeric", ["0.0", "1.5"], 40),
        ("fare_eur", "numeric", ["2.0", "18.5"], 300),
        ("avgWeeklyRate", "numeric", ["9.5", "24.0"], 400),
        ("feedbackScore", "numeric", ["1", "5"], 5),
    ],
    "ds_bikes",
)
CLINIC = dataset_summary(
    ROWS,
    [
        ("予約番号", "text", ["A-0001"], ROWS),
        ("予約日", "datetime", ["2025-04-01", "2025-09-30"], 180),
        ("診療科", "categorical", ["内科", "外科", "小児科"], 3),
        ("発注先", "categorical", ["北薬品", "南メディカル"], 2),
        ("購入額", "numeric", ["1200", "88000"], 500),
        ("残業時間（h）", "numeric", ["0", "3.5"], 40),
        ("待ち時間（分）", "numeric", ["0", "95"], 90),
    ],
    "ds_clinic",
)
CLINIC_VENDOR = dataset_summary(
    ROWS,
    [
        ("伝票番号", "text", ["P-0001"], ROWS),
        ("仕入先", "categorical", ["北薬品", "南メディカル"], 2),
        ("金額", "numeric", ["1200", "88000"], 500),
        ("残業時間（h）", "numeric", ["0", "3.5"], 40),
        ("診療科", "categorical", ["内科", "外科"], 2),
    ],
    "ds_clinic_vendor",
)


def test_a_short_word_of_a_name_is_said_in_full_and_keeps_its_aggregation() -> None:
    spec = acted_spec("What is the average weekly rate by bike model?", BIKES)
    assert spec["group_cols"] == ["bikeModel"]
    assert spec["metrics"] == {"avgWeeklyRate": ["mean"]}


def test_an_ordinary_synonym_names_a_column_word() -> None:
    spec = acted_spec("Show a box plot of the customer rating per station", BIKES)
    assert (spec["kind"], spec["y"], spec["x"]) == ("box", "feedbackScore", "station")


def test_a_unit_said_in_words_names_the_measure() -> None:
    spec = acted_spec("Total litres of battery per station", BIKES)
    assert spec["metrics"] == {"battery_l": ["sum"]}
    spec = acted_spec(
        "Give me the main statistics for the fare in euros and the ride kilometres", BIKES
    )
    assert spec["op"] == "column_summary"
    assert sorted(spec["columns"]) == ["fare_eur", "ride_km"]


def test_a_group_word_before_a_qualified_or_counted_column_groups() -> None:
    spec = acted_spec("Total fare per rental station", BIKES)
    assert (spec["op"], spec["group_cols"]) == ("groupby_agg", ["station"])
    spec = acted_spec("Average fare by number of riders", BIKES)
    assert spec["group_cols"] == ["riders"]
    assert spec["metrics"] == {"fare_eur": ["mean"]}


def test_a_count_before_a_numeric_column_is_an_equality() -> None:
    spec = acted_spec("Median fare for rentals with 2 riders", BIKES)
    assert spec["op"] == "total" and spec["metrics"] == {"fare_eur": ["median"]}
    assert spec["filters"] == [{"col": "riders", "op": "==", "value": 2}]


def test_a_column_named_before_its_value_is_no_grouping() -> None:
    spec = acted_spec("Median fare for rows where bike model is Cargo", BIKES)
    assert spec["op"] == "total" and spec["metrics"] == {"fare_eur": ["median"]}
    assert spec["filters"] == [{"col": "bikeModel", "op": "==", "value": "Cargo"}]


def test_a_value_word_that_starts_the_request_is_its_verb() -> None:
    spec = acted_spec("Group the rentals by station and sum the fare", BIKES)
    assert spec["group_cols"] == ["station"] and spec["filters"] == []


def test_filling_in_values_refuses_the_parts_that_depend_on_it() -> None:
    decision = decide(
        "Fill in the missing fares with the median, then show the mean per station", BIKES
    )
    assert decision.next_action == "out_of_scope"


def test_a_ratio_per_unit_and_a_threshold_on_a_qualified_average_are_refused() -> None:
    assert decide("Fare per km by bike model", BIKES).next_action == "out_of_scope"
    assert decide(
        "List rentals with a fare higher than the station average", BIKES
    ).next_action in (
        "out_of_scope",
        "ask",
    )


def test_a_unit_names_its_column_but_a_word_that_starts_several_names_names_none() -> None:
    summary = dataset_summary(
        ROWS,
        [
            ("depot", "categorical", ["A", "B"], 2),
            ("water_l", "numeric", ["1", "2"], 50),
            ("water_cost", "numeric", ["1", "2"], 50),
        ],
        "ds_water",
    )
    assert acted_spec("Total water litres per depot", summary)["metrics"] == {"water_l": ["sum"]}
    decision = decide("Which depot spends the most on water?", summary)
    spec = decision.analysis_spec or {}
    assert "water_l" not in spec.get("metrics", {})


def test_japanese_purchase_and_overtime_words() -> None:
    spec = acted_spec("支払先別に購入額を合計して", CLINIC_VENDOR)
    assert spec["group_cols"] == ["仕入先"] and spec["metrics"] == {"金額": ["sum"]}
    spec = acted_spec("時間外労働の平均を診療科ごとに", CLINIC_VENDOR)
    assert spec["group_cols"] == ["診療科"] and spec["metrics"] == {"残業時間（h）": ["mean"]}
    spec = acted_spec("残業の平均は？", CLINIC)
    assert spec["op"] == "total" and spec["metrics"] == {"残業時間（h）": ["mean"]}


# A staff canteen's event ledger with Japanese headers, asked about in English words that
# are not the readings' own ("food and drink spend" for 飲食費: food and drink cost).
EVENTS = dataset_summary(
    ROWS,
    [
        ("行事番号", "text", ["E-0001"], ROWS),
        ("開催日", "datetime", ["2025-04-01", "2025-09-30"], 180),
        ("部署", "categorical", ["営業部", "総務部", "開発部"], 3),
        ("会場費", "numeric", ["10000", "80000"], 300),
        ("飲食費", "numeric", ["5000", "120000"], 500),
        ("宿泊費", "numeric", ["0", "90000"], 200),
        ("督促回数", "numeric", ["0", "3"], 4),
        ("圃場", "categorical", ["北", "南"], 2),
    ],
    "ds_events",
)


def test_two_words_of_a_japanese_names_readings_name_it_in_english() -> None:
    spec = acted_spec("Top 3 departments by total food and drink spend?", EVENTS)
    assert spec["group_cols"] == ["部署"] and spec["metrics"] == {"飲食費": ["sum"]}
    assert spec["top_k"] == 3


def test_one_word_of_a_longer_reading_or_a_word_for_the_table_names_no_column() -> None:
    """ "reminder" is one word of 督促回数's "reminder count"; "fields" is the table's own word,
    not 圃場 (field): neither names the column."""
    mailed = decide("Please mail reminder letters to the parents who still owe money.", EVENTS)
    assert mailed.next_action != "act"
    gaps = acted_spec("Which fields in this log have gaps, and how many blanks in each?", EVENTS)
    assert gaps["op"] == "missingness" and not gaps.get("columns")


# A tool-rental log with English headers, asked about in Japanese words that are not the
# readings of whole names: 「日額単価」 (daily_rate_jpy), 「写真が添付されていない」.
TOOLS = dataset_summary(
    ROWS,
    [
        ("rental_id", "text", ["T-0001"], ROWS),
        ("application_date", "datetime", ["2025-04-01", "2025-09-30"], 150),
        ("site", "categorical", ["Minato", "Koto", "Ota"], 3),
        ("tool_type", "categorical", ["Drill", "Generator", "Scaffold"], 3),
        ("days", "numeric", ["1", "30"], 30),
        ("daily_rate_jpy", "numeric", ["1500", "12000"], 80),
        ("rental_fee_jpy", "numeric", ["1500", "360000"], 500),
        ("photo_attached", "boolean", ["True", "False"], 2),
    ],
    "ds_tools",
)


def test_a_japanese_word_only_one_english_name_has_names_it() -> None:
    spec = acted_spec("工具の種類ごとに日額単価の平均を出して", TOOLS)
    assert spec["group_cols"] == ["tool_type"]
    assert spec["metrics"] == {"daily_rate_jpy": ["mean"]}
    # the condition was dropped before and every rental counted: a silent wrong answer
    spec = acted_spec("写真が添付されていないレンタルは何件？", TOOLS)
    assert spec["op"] == "total" and not spec.get("metrics")
    assert spec["filters"] == [{"col": "photo_attached", "op": "==", "value": False}]


def test_a_date_column_is_not_named_by_the_word_of_its_event_alone() -> None:
    """「二重申請」 is a double application, not a condition on application_date."""
    exams = dataset_summary(
        400,
        [
            ("employee_id", "text", ["E-001"], 300),
            ("exam_name", "categorical", ["Bookkeeping 2", "FP 2", "TOEIC"], 3),
            ("application_date", "datetime", ["2025-04-01", "2025-09-30"], 150),
            ("fee_jpy", "numeric", ["4500", "12000"], 20),
        ],
        "ds_exams",
    )
    spec = acted_spec("同じ社員・同じ試験で二重申請になっているものがないか調べて", exams)
    assert spec["op"] == "duplicate_check" and "application_date" not in spec["subset"]


# A volunteering log: one numeric column measured in hours (活動時間), one in months.
VOLUNTEERING = dataset_summary(
    ROWS,
    [
        ("記録ID", "text", ["V-0001"], ROWS),
        ("活動日", "datetime", ["2025-04-01", "2025-09-30"], 180),
        ("部署", "categorical", ["営業部", "総務部"], 2),
        ("活動時間", "numeric", ["1", "8"], 8),
        ("継続期間(月)", "numeric", ["1", "24"], 24),
        ("交通費補助", "numeric", ["0", "3000"], 40),
    ],
    "ds_volunteering",
)


def test_the_unit_a_figure_is_asked_in_names_the_one_column_measured_in_it() -> None:
    spec = acted_spec("What's the longest single activity, in hours?", VOLUNTEERING)
    assert spec["op"] == "total" and spec["metrics"] == {"活動時間": ["max"]}
    spec = acted_spec("What's the average commitment in months?", VOLUNTEERING)
    assert spec["metrics"] == {"継続期間(月)": ["mean"]}
    spec = acted_spec("活動は平均で何時間？", VOLUNTEERING)
    assert spec["metrics"] == {"活動時間": ["mean"]}


def test_a_unit_two_columns_are_measured_in_is_asked() -> None:
    two_in_hours = dataset_summary(
        ROWS,
        [
            ("記録ID", "text", ["V-0001"], ROWS),
            ("活動時間", "numeric", ["1", "8"], 8),
            ("移動時間", "numeric", ["0", "3"], 4),
            ("交通費補助", "numeric", ["0", "3000"], 40),
        ],
        "ds_two_in_hours",
    )
    decision = decide("What's the longest single activity, in hours?", two_in_hours)
    assert decision.next_action == "ask"


def test_a_word_of_an_identifier_and_a_measure_before_amount_names_the_measure() -> None:
    """ "claim amount" beside claim_no and claimed_jpy is the claimed amount; "claims" alone
    are still the rows."""
    claims = dataset_summary(
        ROWS,
        [
            ("claim_no", "text", ["C-0001"], ROWS),
            ("carrier", "categorical", ["Sagawa", "Yamato"], 2),
            ("claimed_jpy", "numeric", ["1000", "500000"], 700),
            ("settled_jpy", "numeric", ["0", "400000"], 600),
        ],
        "ds_claims",
    )
    spec = acted_spec("biggest single claim amount?", claims)
    assert spec["op"] == "total" and spec["metrics"] == {"claimed_jpy": ["max"]}
    spec = acted_spec("How many claims are there?", claims)
    assert spec["op"] == "total" and not spec.get("metrics")


def test_an_amount_asked_is_the_whole_of_which_the_other_money_columns_are_parts() -> None:
    """「いくらかかってる？」 beside 基本料金, 割増料金 and 料金 is 料金 (the others are its
    parts); two money columns neither of which is the other's part are asked about."""
    courier = dataset_summary(
        ROWS,
        [
            ("伝票番号", "text", ["BK-1"], ROWS),
            ("部署", "categorical", ["営業一部", "総務部"], 2),
            ("距離(km)", "numeric", ["1", "30"], 200),
            ("基本料金", "numeric", ["800", "3000"], 50),
            ("割増料金", "numeric", ["0", "1500"], 30),
            ("料金", "numeric", ["800", "4500"], 300),
        ],
        "ds_courier_fees",
    )
    spec = acted_spec("営業一部の便って平均でいくらかかってる？", courier)
    assert spec["metrics"] == {"料金": ["mean"]}
    two_kinds = dataset_summary(
        ROWS,
        [
            ("伝票番号", "text", ["BK-1"], ROWS),
            ("部署", "categorical", ["営業一部", "総務部"], 2),
            ("基本料金", "numeric", ["800", "3000"], 50),
            ("保険料", "numeric", ["0", "1500"], 30),
        ],
        "ds_courier_two_kinds",
    )
    assert decide("営業一部の便って平均でいくらかかってる？", two_kinds).next_action == "ask"
    # 税込料金 is another version of 料金, not a part of it: which one is asked
    versions = dataset_summary(
        ROWS,
        [
            ("伝票番号", "text", ["BK-1"], ROWS),
            ("部署", "categorical", ["営業一部", "総務部"], 2),
            ("料金", "numeric", ["800", "3000"], 50),
            ("税込料金", "numeric", ["880", "3300"], 50),
        ],
        "ds_courier_versions",
    )
    assert decide("営業一部の便って平均でいくらかかってる？", versions).next_action == "ask"


def test_a_loanword_names_a_value_only_when_it_is_the_whole_value_or_its_kind() -> None:
    """ "print" is no condition on the printer 大和プリント (a name with more in it: the
    orders were counted for one printer, silently); "system" is システム部."""
    printing = dataset_summary(
        ROWS,
        [
            ("発注番号", "text", ["PO-1"], ROWS),
            ("部署", "categorical", ["営業部", "システム部", "総務部"], 3),
            ("印刷会社", "categorical", ["三光印刷", "大和プリント", "ひかり印刷"], 3),
            ("金額", "numeric", ["3500", "1240000"], 500),
        ],
        "ds_printing",
    )
    spec = acted_spec("How many print orders are there in total?", printing)
    assert spec["op"] == "total" and spec["filters"] == []
    spec = acted_spec("Total amount for the system department?", printing)
    assert spec["filters"] == [{"col": "部署", "op": "==", "value": "システム部"}]


def test_a_value_said_before_its_columns_word_is_that_value_not_a_column() -> None:
    """ "for Dependent visas" is Visa Type == Dependent beside a Dependents column; "leave
    out" names no unused_leave_days (before: both were summed as extra measures)."""
    visas = dataset_summary(
        ROWS,
        [
            ("Case ID", "text", ["V-1"], ROWS),
            ("Visa Type", "categorical", ["Engineer", "Dependent", "Student"], 3),
            ("Department", "categorical", ["Sales", "IT"], 2),
            ("Government Fee", "numeric", ["3000", "9000"], 20),
            ("Dependents", "numeric", ["0", "4"], 5),
            ("unused_leave_days", "numeric", ["0", "40"], 40),
        ],
        "ds_visa_fees",
    )
    spec = acted_spec("Sum of 'Government Fee' for Dependent visas", visas)
    assert spec["op"] == "total" and spec["metrics"] == {"Government Fee": ["sum"]}
    assert spec["filters"] == [{"col": "Visa Type", "op": "==", "value": "Dependent"}]
    spec = acted_spec(
        "departments ranked by total Government Fee, leave out rows without a department",
        visas,
    )
    assert spec["metrics"] == {"Government Fee": ["sum"]}
    assert spec["filters"] == [{"col": "Department", "op": "not_null"}]


def test_a_category_word_before_the_rows_word_describes_the_rows() -> None:
    """ "the total we spent on visa cases" (rows named by Case ID): one total, not a table per
    Visa Type; "by visa type" still groups."""
    visas = dataset_summary(
        ROWS,
        [
            ("Case ID", "text", ["V-1"], ROWS),
            ("Visa Type", "categorical", ["Engineer", "Dependent"], 2),
            ("Total Cost", "numeric", ["30000", "250000"], 200),
        ],
        "ds_visa_costs",
    )
    spec = acted_spec("What's the total we spent on visa cases overall?", visas)
    assert spec["op"] == "total" and spec["metrics"] == {"Total Cost": ["sum"]}
    spec = acted_spec("total cost by visa type", visas)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["Visa Type"]


def test_number_of_shares_is_no_share_and_no_column_of_another_unit() -> None:
    """ "the total number of shares purchased" beside 拠出口数 (units) and 買付株数: never the
    units column by the word "number" of its reading "number of units", and no share of a
    total (before: the units were summed, or the share asked for)."""
    plan = dataset_summary(
        ROWS,
        [
            ("明細番号", "text", ["E-1"], ROWS),
            ("所属部門", "categorical", ["営業部", "総務部"], 2),
            ("拠出口数", "numeric", ["1", "50"], 50),
            ("拠出金額", "numeric", ["1000", "50000"], 50),
            ("買付株数", "numeric", ["0.5", "30"], 200),
        ],
        "ds_stock_shares",
    )
    decision = decide("What is the total number of shares purchased?", plan)
    if decision.next_action == "act":
        assert spec_of(decision)["metrics"] == {"買付株数": ["sum"]}
    else:
        assert decision.next_action == "ask"
        assert "拠出口数" in decision.clarifying_questions[0]  # a numeric column is asked


def test_hist_said_short_is_a_histogram() -> None:
    spec = acted_spec("hist of fare_eur", BIKES)
    assert spec["kind"] == "hist" and spec["x"] == "fare_eur"
