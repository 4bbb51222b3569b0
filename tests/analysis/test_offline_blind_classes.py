"""Failure classes of the later blind sets (issue 28), each shown on made-up data of
domains no benchmark uses: a bank's transfer log and a bakery's sales (English), a
municipal facility-booking ledger and a fleet of rental cars (Japanese)."""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary, decide, decide_after, spec_of

ROWS = 800

FACILITIES = dataset_summary(
    ROWS,
    [
        ("予約番号", "text", ["R-0001", "R-0002"], ROWS),
        ("申込日", "datetime", ["2025-04-01", "2025-09-30"], 150),
        ("利用日", "datetime", ["2025-04-10", "2025-10-31"], 170),
        ("施設名", "categorical", ["市民ホール", "体育館", "会議室A"], 3),
        ("利用者区分", "categorical", ["市民", "市外", "団体"], 3),
        ("予約状態", "categorical", ["確定", "取消", "仮予約"], 3),
        ("利用人数", "numeric", ["5", "300"], 120),
        ("使用料", "numeric", ["1200", "48000"], 90),
        ("列3", "text", ["要連絡", "鍵返却済"], 6),
    ],
    "ds_facilities",
)
TRANSFERS = dataset_summary(
    ROWS,
    [
        ("transfer_id", "text", ["TR-0001", "TR-0002"], ROWS),
        ("transferred_on", "datetime", ["2025-01-04", "2025-03-28"], 80),
        ("bank", "categorical", ["Mizuho", "MUFG", "Resona"], 3),
        ("purpose", "categorical", ["payroll", "rent", "supplier"], 3),
        ("fee_jpy", "numeric", ["0", "440", "880"], 3),
        ("amount", "numeric", ["1200", "980000"], 700),
        ("reversed", "categorical", ["No", "Yes"], 2),
        ("payee_city", "categorical", ["Tokyo", "Osaka"], 40),
    ],
    "ds_transfers",
)
BAKERY = dataset_summary(
    ROWS,
    [
        ("sale_id", "text", ["S-1", "S-2"], ROWS),
        ("sold_at", "datetime", ["2025-05-02 08:10:00", "2025-08-30 18:00:00"], 700),
        ("shop", "categorical", ["Ebisu", "Nakameguro", "Daikanyama"], 3),
        ("bread_type", "categorical", ["baguette", "croissant", "melonpan"], 3),
        ("units", "numeric", ["1", "2", "6"], 6),
        ("unit_price_jpy", "numeric", ["180", "320"], 12),
    ],
    "ds_bakery",
)


def test_a_word_of_the_rows_is_not_another_column_cut_short() -> None:
    # before: "transfers" / "transfer" named transferred_on (stemmed, or cut to "transf…"),
    # so "by number of transfers" grouped by a date and "per transfer" drew a daily line
    spec = acted_spec("Top 2 banks by number of transfers", TRANSFERS)
    assert spec["op"] in ("groupby_agg", "share_ratio") and spec["top_k"] == 2
    assert spec.get("group_cols", [spec.get("group_col")]) == ["bank"]
    spec = acted_spec("Median amount per transfer for Resona", TRANSFERS)
    assert spec["op"] == "total" and spec["metrics"] == {"amount": ["median"]}
    assert spec["filters"] == [{"col": "bank", "op": "==", "value": "Resona"}]


def test_units_sold_are_the_quantity_summed_per_group() -> None:
    # before: the grouping asked which numeric column, or a bar counted rows
    spec = acted_spec("Plot the loaves sold per shop as a bar graph", BAKERY)
    assert (spec["kind"], spec["x"], spec["y"], spec["agg"]) == ("bar", "shop", "units", "sum")
    spec = acted_spec("Which shop sells the most croissants?", BAKERY)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["shop"]
    assert spec["metrics"] == {"units": ["sum"]}


def test_a_superlative_that_is_the_maximum_groups_nothing() -> None:
    # before: "highest"/"lowest" read as a ranking: a top-10 table per category
    spec = acted_spec("What is the lowest bread price at Ebisu?", BAKERY)
    assert spec["op"] == "total" and spec["metrics"] == {"unit_price_jpy": ["min"]}
    assert spec["filters"] == [{"col": "shop", "op": "==", "value": "Ebisu"}]


def test_a_value_before_its_columns_word_is_a_condition_after_an_article() -> None:
    # before: "a croissant bread" read as a common noun after "a": the filter was lost
    spec = acted_spec("Highest price ever charged for a melonpan bread", BAKERY)
    assert spec["metrics"] == {"unit_price_jpy": ["max"]}
    assert spec["filters"] == [{"col": "bread_type", "op": "==", "value": "melonpan"}]


def test_an_english_month_without_a_year_takes_the_year_of_the_data() -> None:
    # before: "in July" was no period at all: every row counted
    spec = acted_spec("How many sales happened in July?", BAKERY)
    assert spec["filters"] == [{"col": "sold_at", "op": "==", "value": "2025-07"}]
    decision = decide("How many transfers were made in October?", TRANSFERS)
    assert decision.next_action == "ask"  # October is not in the data's span: which year?
    assert "October" in decision.clarifying_questions[0]


def test_the_datas_word_for_its_rows_counts_them() -> None:
    # before: "the most transfers" asked which numeric column to total
    spec = acted_spec("Which purpose has the most transfers?", TRANSFERS)
    assert spec["group_cols"] == ["purpose"] and spec["metrics"] == {"purpose": ["count"]}


def test_leave_out_blanks_said_on_its_own_applies_to_the_grouping() -> None:
    # before: the second sentence was its own clause (a missing-values check) and the
    # grouping kept its blank group
    decision = decide("Which bank handles the most transfers? Drop blanks.", TRANSFERS)
    assert decision.next_action == "act"
    spec = decision.analysis_spec or {}
    assert spec["group_cols"] == ["bank"]
    assert spec["filters"] == [{"col": "bank", "op": "not_null"}]
    assert "(1 of" not in decision.rationale  # one step: no missing-values check after it


def test_a_date_said_in_general_is_asked_when_the_data_has_several() -> None:
    # before: the first date column (申込日) was taken without a word
    decision = decide("日付単位で予約件数を折れ線グラフにして", FACILITIES)
    assert decision.next_action == "ask"
    assert "申込日" in decision.clarifying_questions[0]
    assert "利用日" in decision.clarifying_questions[0]


def test_how_many_rows_is_one_count_when_no_grouping_is_said() -> None:
    # before: the category named in passing (利用者区分) grouped the count
    spec = acted_spec("仮予約のままの利用者区分の申込は何件ある？", FACILITIES)
    assert spec["op"] == "total" and spec["metrics"] == {}
    assert spec["filters"] == [{"col": "予約状態", "op": "==", "value": "仮予約"}]
    # 「何行」 with a condition: the rows it keeps, not the overview of the table
    spec = acted_spec("利用人数が100人以上の予約は何行ある？", FACILITIES)
    assert spec["op"] == "total"
    assert spec["filters"] == [{"col": "利用人数", "op": ">=", "value": 100}]


def test_how_much_money_totals_the_amount_column() -> None:
    # before: 「いくら」 with no amount named asked for a grouping
    spec = acted_spec("体育館と会議室Aで合わせていくら入った？", FACILITIES)
    assert spec["op"] == "total" and spec["metrics"] == {"使用料": ["sum"]}
    assert spec["filters"] == [{"col": "施設名", "op": "in", "value": ["体育館", "会議室A"]}]


def test_asking_which_columns_there_are_is_the_overview() -> None:
    # before: 「どういう列がある」 asked what to analyse
    spec = acted_spec("このファイルにはどういう列が入っているか知りたい", FACILITIES)
    assert spec["op"] == "dataset_overview"


def test_a_superlative_split_by_its_column_and_the_latest_date() -> None:
    # before: 「一番…が少ない」 split by the column was no minimum; a date's latest asked
    spec = acted_spec("市民ホールで、一番利用人数が小さいのは何人？", FACILITIES)
    assert spec["op"] == "total" and spec["metrics"] == {"利用人数": ["min"]}
    spec = acted_spec("利用日で最も新しいのはいつ？", FACILITIES)
    assert spec["op"] == "total" and spec["metrics"] == {"利用日": ["max"]}


_BY_FACILITY = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["施設名"],
    "metrics": {"施設名": ["count"]},
    "filters": [],
}


def test_a_follow_up_naming_another_measure_replaces_it() -> None:
    # before: the count's metrics were emptied and the spec rejected
    spec = spec_of(
        decide_after(
            "施設ごとの予約件数", _BY_FACILITY, "件数ではなく使用料の平均にして", FACILITIES
        )
    )
    assert spec["group_cols"] == ["施設名"] and spec["metrics"] == {"使用料": ["mean"]}


def test_a_follow_up_asking_the_count_keeps_the_conditions() -> None:
    # before: 「件数なら？」 was a request of its own: every row counted
    earlier = {
        "type": "analysis",
        "op": "total",
        "metrics": {"使用料": ["sum"]},
        "filters": [{"col": "施設名", "op": "==", "value": "体育館"}],
    }
    spec = spec_of(decide_after("体育館の使用料の合計", earlier, "件数なら何件？", FACILITIES))
    assert spec["op"] == "total" and spec["metrics"] == {}
    assert spec["filters"] == earlier["filters"]


def test_a_swapped_value_replaces_the_one_held() -> None:
    # before: both values were kept ("in")
    earlier = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["purpose"],
        "metrics": {"amount": ["sum"]},
        "filters": [{"col": "bank", "op": "==", "value": "MUFG"}],
    }
    spec = spec_of(
        decide_after("amount by purpose for MUFG", earlier, "replace MUFG with Resona", TRANSFERS)
    )
    assert spec["filters"] == [{"col": "bank", "op": "==", "value": "Resona"}]


def test_regrouping_a_share_keeps_it_a_share() -> None:
    # before: the shares became a grouped sum
    earlier = {
        "type": "analysis",
        "op": "share_ratio",
        "group_col": "施設名",
        "value_col": "使用料",
        "filters": [],
    }
    spec = spec_of(
        decide_after("施設別の使用料の割合", earlier, "利用者区分でも同じように", FACILITIES)
    )
    assert (spec["op"], spec["group_col"], spec["value_col"]) == (
        "share_ratio",
        "利用者区分",
        "使用料",
    )


def test_values_left_out_in_other_words_are_negated() -> None:
    # before: "ignore"/「は対象外」 before or after a value kept only that value
    spec = acted_spec("Total amount by purpose, ignoring MUFG", TRANSFERS)
    assert spec["filters"] == [{"col": "bank", "op": "!=", "value": "MUFG"}]
    spec = acted_spec("施設別の使用料合計、取消は対象外で", FACILITIES)
    assert spec["filters"] == [{"col": "予約状態", "op": "!=", "value": "取消"}]


def test_blank_cells_said_in_other_words() -> None:
    # before: "don't have a payee city" lost the column after "a"; 「に何か入力されている」
    # was no condition
    spec = acted_spec("How many transfers don't have a payee city?", TRANSFERS)
    assert spec["filters"] == [{"col": "payee_city", "op": "is_null"}]
    spec = acted_spec("「列3」に何か記入されている予約は何件？", FACILITIES)
    assert spec["filters"] == [{"col": "列3", "op": "not_null"}]


def test_a_yes_no_column_named_as_a_predicate_is_its_yes() -> None:
    # before: grouped by the yes/no column, or asked for a numeric column; "no" in
    # "no payee city" was a condition reversed = No
    spec = acted_spec("How many transfers were reversed?", TRANSFERS)
    assert spec["op"] == "total"
    assert spec["filters"] == [{"col": "reversed", "op": "==", "value": "Yes"}]
    spec = acted_spec("Which bank has the most reversals?", TRANSFERS)
    assert spec["group_cols"] == ["bank"]
    assert spec["filters"] == [{"col": "reversed", "op": "==", "value": "Yes"}]
    spec = acted_spec("How many transfers have no payee city recorded?", TRANSFERS)
    assert spec["filters"] == [{"col": "payee_city", "op": "is_null"}]


def test_distinct_count_of_the_named_category_is_one_number() -> None:
    # before: a row count per value of the column
    spec = acted_spec("施設名のユニーク数は？", FACILITIES)
    assert spec["op"] == "total" and spec["metrics"] == {"施設名": ["nunique"]}


def test_how_many_to_keep_said_with_a_counter_after_a_comma() -> None:
    # before: 「上位3施設」… 「上位2件」 worked but 「上位2名」 after a comma was dropped
    spec = acted_spec("利用者区分別の使用料シェア、上位2名", FACILITIES)
    assert spec["op"] == "share_ratio" and spec["top_k"] == 2


def test_a_cross_tabulation_groups_by_both_categories() -> None:
    # before: only the first category grouped
    spec = acted_spec("施設名と利用者区分で使用料をクロス集計", FACILITIES)
    assert spec["group_cols"] == ["施設名", "利用者区分"]
    assert spec["metrics"] == {"使用料": ["sum"]}


_JUNE_FEES = {
    "type": "analysis",
    "op": "total",
    "metrics": {"使用料": ["sum"]},
    "filters": [
        {"col": "利用日", "op": ">=", "value": "2025-06-01"},
        {"col": "利用日", "op": "<", "value": "2025-07-01"},
    ],
}


def test_a_follow_up_month_replaces_the_period_and_another_measure_keeps_it() -> None:
    # before: July was added to June (an empty answer), and 「利用人数のほうは？」 dropped
    # the period (the whole table's total)
    spec = spec_of(
        decide_after("6月分の使用料の合計", _JUNE_FEES, "7月分もお願いします", FACILITIES)
    )
    dates = [f for f in spec["filters"] if f["col"] == "利用日"]
    assert dates in (
        [{"col": "利用日", "op": "==", "value": "2025-07"}],
        [
            {"col": "利用日", "op": ">=", "value": "2025-07-01"},
            {"col": "利用日", "op": "<", "value": "2025-08-01"},
        ],
    )
    spec = spec_of(
        decide_after(
            "6月分の使用料の合計",
            _JUNE_FEES,
            "同じ月で利用人数のほうも合計お願いします",
            FACILITIES,
        )
    )
    assert spec["metrics"] == {"利用人数": ["sum"]} and spec["filters"] == _JUNE_FEES["filters"]


def test_shares_years_of_ranges_blanks_left_out_and_values_taken_together() -> None:
    spec = acted_spec("施設名ごとの使用料、全体の何％ずつか知りたい", FACILITIES)
    assert spec["op"] == "share_ratio" and spec["group_col"] == "施設名"
    spec = acted_spec("2025年4月から6月までの使用料の合計は？", FACILITIES)
    assert {f["value"] for f in spec["filters"]} == {"2025-04-01", "2025-07-01"}
    spec = acted_spec("Units sold from May to July 2025?", BAKERY)
    assert {f["value"] for f in spec["filters"]} >= {"2025-05-01"}
    spec = acted_spec("Leaving out rows with a blank bank, total amount by bank", TRANSFERS)
    assert spec["filters"] == [{"col": "bank", "op": "not_null"}]
    spec = acted_spec("市民ホールと体育館、2施設あわせた使用料の合計は？", FACILITIES)
    assert spec["op"] == "total" and spec["metrics"] == {"使用料": ["sum"]}
    assert spec["filters"] == [{"col": "施設名", "op": "in", "value": ["市民ホール", "体育館"]}]
    spec = acted_spec("What was the amount altogether for Mizuho?", TRANSFERS)
    assert spec["op"] == "total" and spec["metrics"] == {"amount": ["sum"]}


EXPENSES = dataset_summary(
    ROWS,
    [
        ("伝票番号", "text", ["E-1", "E-2"], ROWS),
        ("支出日", "datetime", ["2024-04-01", "2025-03-31"], 300),
        ("所属部門", "categorical", ["総務部", "営業部", "開発部"], 3),
        ("区分", "categorical", ["接待", "慶弔", "贈答"], 3),
        ("店名", "categorical", ["タクシー東京", "料亭さくら", "花屋"], 80),
        ("支出額", "numeric", ["3000", "180000"], 500),
        ("一人当たり金額", "numeric", ["1000", "30000"], 400),
        ("一人1万円以下", "boolean", ["True", "False"], 2),
    ],
    "ds_expenses",
)


def test_amount_words_name_no_column_and_a_per_head_amount_is_not_the_amount() -> None:
    # before: 「1件5万円以上」 was read as the yes/no column 一人1万円以下 (「万円以」 shared),
    # then as 一人当たり金額 (the ledger's amount is 支出額)
    spec = acted_spec("１件５万円以上の支出は何件ありますか", EXPENSES)
    assert spec["filters"] == [{"col": "支出額", "op": ">=", "value": 50000}]


def test_a_word_held_in_a_text_column() -> None:
    # before: 「店名に「タクシー」を含む」 had no reading: a total per 店名 of every row
    spec = acted_spec("店名に「タクシー」を含むものの支出額の合計は？", EXPENSES)
    assert spec["op"] == "total" and spec["metrics"] == {"支出額": ["sum"]}
    assert spec["filters"] == [{"col": "店名", "op": "contains", "value": "タクシー"}]


def test_a_follow_up_widened_to_every_value_drops_the_condition() -> None:
    earlier = {
        "type": "analysis",
        "op": "total",
        "metrics": {"支出額": ["sum"]},
        "filters": [
            {"col": "区分", "op": "==", "value": "慶弔"},
            {"col": "所属部門", "op": "==", "value": "総務部"},
        ],
    }
    spec = spec_of(
        decide_after(
            "総務部の慶弔の合計", earlier, "総務部だけじゃなくて全部門だとどうなりますか", EXPENSES
        )
    )
    assert spec["filters"] == [{"col": "区分", "op": "==", "value": "慶弔"}]


def test_actions_outside_the_data_are_refused() -> None:
    for text, data in (
        ("この台帳の内容で年金事務所に電子申請までしておいてください", EXPENSES),
        ("Please cancel the unused SIM contracts with the carriers for me", TRANSFERS),
    ):
        assert decide(text, data).next_action == "out_of_scope"
    assert decide("総務部は何回発注している？", EXPENSES).next_action != "out_of_scope"


FEES = dataset_summary(
    ROWS,
    [
        ("請求番号", "text", ["F-1", "F-2"], ROWS),
        ("請求月", "datetime", ["2024-04-01", "2025-03-01"], 12),
        ("入金日", "datetime", ["2024-04-20", "2025-04-30"], 300),
        ("顧問先", "categorical", ["A社", "B社", "C社"], 40),
        ("事務担当", "categorical", ["佐藤", "鈴木"], 2),
        ("顧問料", "numeric", ["30000", "150000"], 30),
        ("入金額", "numeric", ["30000", "150000"], 30),
        ("源泉徴収対象", "boolean", ["True", "False"], 2),
    ],
    "ds_fees",
)


def test_true_false_columns_dates_by_their_event_and_months_as_a_table() -> None:
    spec = acted_spec("源泉徴収の対象になっている請求は何件ありますか？", FEES)
    assert spec["filters"] == [{"col": "源泉徴収対象", "op": "==", "value": True}]
    # before: the first date column (請求月) took a period said of the payment
    spec = acted_spec("令和７年１月に入金があった分の入金額、合計でいくらでしょうか", FEES)
    assert {f["col"] for f in spec["filters"]} == {"入金日"}
    # before: a line per day of 請求月 instead of the table asked for
    spec = acted_spec("請求月別の顧問料の合計を一覧で出してもらえますか", FEES)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["請求月"]
    # before: 「決まっていない」 was no blank: every row counted
    spec = acted_spec("事務担当が決まっていない行、何件ある？", FEES)
    assert spec["filters"] == [{"col": "事務担当", "op": "is_null"}]


def test_english_scales_mailing_and_a_grouping_added() -> None:
    spec = acted_spec("Total amount of the transfers worth 5 million or more?", TRANSFERS)
    assert spec["filters"] == [{"col": "amount", "op": ">=", "value": 5_000_000}]
    assert decide("Please mail reminder letters to the payees.", TRANSFERS).next_action == (
        "out_of_scope"
    )
    earlier = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["施設名"],
        "metrics": {"使用料": ["sum"]},
        "filters": [],
    }
    spec = spec_of(
        decide_after("施設別の使用料", earlier, "それを利用者区分ごとにも分けて", FACILITIES)
    )
    assert spec["group_cols"] == ["施設名", "利用者区分"]
