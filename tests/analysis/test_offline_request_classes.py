"""Request forms the offline reasoner misread on held-out sets, one class per test, each on
a made-up table of its own (not a set's words): the class is what is tested."""

from __future__ import annotations

from tests.analysis.offline_support import (
    acted_spec,
    dataset_summary,
    decide,
    decide_after,
    spec_of,
)

EXPENSES_EN = dataset_summary(
    300,
    [
        ("expense_no", "text", ["EX-001", "EX-002"], 300),
        ("spent_on", "datetime", ["2025-04-01", "2025-09-30"], 120),
        ("department", "categorical", ["Sales", "Finance", "HR"], 3),
        ("amount", "numeric", ["1200", "58000"], 250),
        ("receipt_matched", "boolean", ["True", "False"], 2),
    ],
    "ds_expenses_en",
)


def test_a_flag_negated_after_a_loanword_verb_keeps_its_no_rows() -> None:
    # before: 「領収書とマッチしてない」 counted the matched rows (the verb's negation unread)
    spec = acted_spec("領収書とマッチしてない経費は何件？", EXPENSES_EN)
    assert spec["filters"] == [{"col": "receipt_matched", "op": "==", "value": False}]


def test_an_order_said_with_highest_is_no_maximum() -> None:
    # before: "highest first" / "biggest first" turned each group's sum into its maximum
    for text in ("Spend by department, highest first", "amount by department, biggest first"):
        spec = acted_spec(text, EXPENSES_EN)
        assert spec["metrics"] == {"amount": ["sum"]}, text


TRANSFERS_JA = dataset_summary(
    200,
    [
        ("伝票番号", "text", ["T-001", "T-002"], 200),
        ("処理区分", "categorical", ["振込", "差戻し", "払戻し"], 3),
        ("金額", "numeric", ["1200", "58000"], 190),
    ],
    "ds_transfers_ja",
)


def test_a_value_is_found_with_or_without_its_okurigana() -> None:
    # before: 「差し戻し」 did not name 差戻し nor 「払い戻し」 払戻し: every row was counted
    for text, value in (("差し戻しになった件数", "差戻し"), ("払い戻しの金額合計", "払戻し")):
        spec = acted_spec(text, TRANSFERS_JA)
        assert spec["filters"] == [{"col": "処理区分", "op": "==", "value": value}], text


def test_a_number_said_not_to_be_is_a_not_equal() -> None:
    # before: 「金額が0でない」 kept the rows at 0 (read as 「が0で」) and 「ゼロじゃない」 kept all
    for text in ("金額が0でない伝票は何件", "金額がゼロじゃない伝票は何件"):
        spec = acted_spec(text, TRANSFERS_JA)
        assert spec["filters"] == [{"col": "金額", "op": "!=", "value": 0}], text


def test_an_amount_asked_of_the_total_is_no_row_condition() -> None:
    # before: 「合計、100万円超えてる？」 summed only the rows above 1,000,000 yen
    decision = decide("払戻しの金額トータル、100万円超えてる？", TRANSFERS_JA)
    spec = spec_of(decision)
    assert spec["metrics"] == {"金額": ["sum"]}
    assert spec["filters"] == [{"col": "処理区分", "op": "==", "value": "払戻し"}]
    assert any("100万円" in said for said in decision.assumptions)
    # not asked: a condition on the rows, as before
    spec = acted_spec("合計が100万円を超える伝票は何件", TRANSFERS_JA)
    assert spec["filters"] == [{"col": "金額", "op": ">", "value": 1_000_000}]


FX_JA = dataset_summary(
    400,
    [
        ("取引番号", "text", ["FX-001", "FX-002"], 400),
        ("取引種類", "categorical", ["預金利息", "売掛金回収", "買掛金支払"], 3),
        ("通貨", "categorical", ["USD", "EUR"], 2),
        ("外貨金額", "numeric", ["1200.5", "58000"], 380),
        ("円換算額", "numeric", ["180000", "8700000"], 390),
    ],
    "ds_fx_ja",
)


def test_a_value_holding_an_outside_data_word_is_still_a_value() -> None:
    # before: 「預金利息」 holds 金利 (an interest rate from outside): declined as external data
    spec = acted_spec("預金利息の円換算額の合計", FX_JA)
    assert spec["filters"] == [{"col": "取引種類", "op": "==", "value": "預金利息"}]


def test_an_amount_asked_in_yen_is_the_yen_column() -> None:
    # before: 「円でいくら」「円貨で」 summed the foreign-currency amounts (the first amount)
    for text in ("売掛金回収の合計は円でいくら？", "売掛金回収の円貨合計"):
        assert acted_spec(text, FX_JA)["metrics"] == {"円換算額": ["sum"]}, text


def test_reconciling_with_another_file_is_declined_with_its_reason() -> None:
    # before: 「先月のファイルとも突き合わせて」 asked for a period, "against the bank file" acted
    for text in (
        "先月の送金ファイルとも突き合わせてもらえますか？",
        "Can you match these against the bank statement file?",
    ):
        decision = decide(text, FX_JA)
        assert decision.next_action == "out_of_scope", (text, decision)
        assert "ファイル" in decision.rationale or "file" in decision.rationale


def test_counts_and_their_shares_are_one_share_table() -> None:
    # before: 「件数と割合」 was cut in two and the first part, the counts alone, was run
    spec = acted_spec("処理区分ごとの件数と割合を見たい", TRANSFERS_JA)
    assert (spec["op"], spec["group_col"], spec["value_col"]) == ("share_ratio", "処理区分", None)


TICKETS_JA = dataset_summary(
    150,
    [
        ("チケット番号", "text", ["TK-001", "TK-002"], 150),
        ("承認済み", "boolean", ["True", "False"], 2),
        ("運賃", "numeric", ["1200", "5800"], 140),
        ("合計金額", "numeric", ["1500", "6100"], 145),
    ],
    "ds_tickets_ja",
)


def test_a_count_and_an_amount_asked_together_is_the_amount_total() -> None:
    # before: 「件数と金額」 counted the rows and left the amount out
    spec = acted_spec("払戻しの件数と金額を教えて", TRANSFERS_JA)
    assert spec["metrics"] == {"金額": ["sum"]}
    spec = acted_spec("未承認のチケット、件数と金額教えて", TICKETS_JA)
    assert spec["metrics"] == {"合計金額": ["sum"]}


def test_a_chart_kind_said_after_a_comma_draws_what_was_asked_before_it() -> None:
    # before: 「…のばらつき、箱ひげで見たい」 ran the first part alone (a table of std)
    spec = acted_spec("処理区分ごとの金額のばらつき、箱ひげで見たい", TRANSFERS_JA)
    assert (spec["kind"], spec["x"], spec["y"]) == ("box", "処理区分", "金額")
    spec = acted_spec("処理区分ごとの金額の合計、棒グラフで", TRANSFERS_JA)
    assert (spec["kind"], spec["x"], spec["y"]) == ("bar", "処理区分", "金額")


TRIPS_JA = dataset_summary(
    120,
    [
        ("精算番号", "text", ["M-001", "M-002"], 120),
        ("走行距離(km)", "numeric", ["12.5", "88"], 110),
        ("作業面積(㎡)", "numeric", ["30", "120"], 90),
        ("精算額", "numeric", ["1500", "6100"], 115),
    ],
    "ds_trips_ja",
)


def test_a_unit_asked_with_an_average_names_the_column_in_that_unit() -> None:
    # before: 「平均何km」 averaged the amount the condition was on, 「何㎡」 likewise
    spec = acted_spec("精算額が1万円以上のものは平均何km走ってる？", TRIPS_JA)
    assert spec["metrics"] == {"走行距離(km)": ["mean"]}
    spec = acted_spec("精算額が1万円以上のものは平均何㎡？", TRIPS_JA)
    assert spec["metrics"] == {"作業面積(㎡)": ["mean"]}


def test_two_columns_named_in_one_phrase_are_one_measure() -> None:
    # before: "amount repaid" summed PrincipalAmount ("amount") and Repaid; "shipped amount"
    # summed qty_shipped ("shipped") beside amount
    loans = dataset_summary(
        90,
        [
            ("LoanID", "text", ["L-1", "L-2"], 90),
            ("PrincipalAmount", "numeric", ["100000", "250000"], 80),
            ("Repaid", "numeric", ["5000", "25000"], 70),
        ],
        "ds_loans_en",
    )
    assert acted_spec("Total amount repaid?", loans)["metrics"] == {"Repaid": ["sum"]}
    shipments = dataset_summary(
        90,
        [
            ("shipment_id", "text", ["S-1", "S-2"], 90),
            ("qty_shipped", "numeric", ["5", "12"], 20),
            ("amount", "numeric", ["5000", "25000"], 70),
        ],
        "ds_shipments_en",
    )
    assert acted_spec("total shipped amount?", shipments)["metrics"] == {"amount": ["sum"]}


def test_a_date_is_the_one_of_the_event_the_rows_are_said_as() -> None:
    # before: "how many write-offs in March" filtered on the first date, InvoiceDate
    refunds = dataset_summary(
        90,
        [
            ("RefundID", "text", ["R-1", "R-2"], 90),
            ("InvoiceDate", "datetime", ["2025-01-05", "2025-03-20"], 80),
            ("ChargebackDate", "datetime", ["2025-02-05", "2025-04-20"], 70),
            ("Amount", "numeric", ["5000", "25000"], 70),
        ],
        "ds_refunds_en",
    )
    spec = acted_spec("How many charge-backs in March 2025?", refunds)
    assert [f["col"] for f in spec["filters"]] in (["ChargebackDate"], ["ChargebackDate"] * 2)


def test_a_quoted_flag_said_false_keeps_its_no_rows() -> None:
    # before: '"receipt_matched" is false' kept the matched rows (the quote hid the "false")
    spec = acted_spec(
        'What\'s the total of "amount" where "receipt_matched" is false?', EXPENSES_EN
    )
    assert spec["filters"] == [{"col": "receipt_matched", "op": "==", "value": False}]


def test_a_quoted_word_said_written_in_a_note_column_is_held_not_equal() -> None:
    # before: 「摘要に「返金」って書いてある」 compared the whole note with 返金 (and held it too)
    notes = dataset_summary(
        80,
        [
            ("伝票番号", "text", ["D-1", "D-2"], 80),
            ("摘要", "text", ["返金 4月分", "手数料"], 60),
            ("金額", "numeric", ["500", "9800"], 70),
        ],
        "ds_notes_ja",
    )
    spec = acted_spec("摘要に「返金」って書いてある伝票は何件？", notes)
    assert spec["filters"] == [{"col": "摘要", "op": "contains", "value": "返金"}]


def test_undoing_an_entry_and_asking_an_opinion_are_declined() -> None:
    # before: both asked 「どのような分析をしますか？」 as if an analysis could answer them
    for text in ("T-0042の処理、取り消して台帳に戻しておいて", "この手数料って高いと思いますか？"):
        decision = decide(text, TRANSFERS_JA)
        assert decision.next_action == "out_of_scope", (text, decision)


def test_a_flag_said_not_yet_keeps_its_no_rows_and_unselected_is_blank() -> None:
    # before: 「部長承認がまだのもの」 counted the approved rows; 「未選択」 was no blank
    approvals = dataset_summary(
        60,
        [
            ("申請番号", "text", ["A-1", "A-2"], 60),
            ("部長承認", "boolean", ["True", "False"], 2),
            ("支払方法", "categorical", ["振込", "現金"], 2),
        ],
        "ds_approvals_ja",
    )
    spec = acted_spec("部長承認がまだのもの、何件？", approvals)
    assert spec["filters"] == [{"col": "部長承認", "op": "==", "value": False}]
    spec = acted_spec("支払方法が未選択の申請は何件？", approvals)
    assert spec["filters"] == [{"col": "支払方法", "op": "is_null"}]


def test_rows_meeting_a_condition_said_left_out_keep_the_rest() -> None:
    # before: 「1万円超のは除いて」 kept only the rows above 10,000 yen
    spec = acted_spec("金額が1万円超のものは除いて合計して", TRANSFERS_JA)
    assert spec["filters"] == [{"col": "金額", "op": "<=", "value": 10_000}]
    spec = acted_spec("平均いくら？1万円以上のは除いて", TRANSFERS_JA)
    assert spec["filters"] == [{"col": "金額", "op": "<", "value": 10_000}]


def test_a_number_said_in_a_unit_is_a_condition_on_the_column_in_that_unit() -> None:
    # before: 「60歳以上」「200km以上」 were not read at all: every row was counted
    members = dataset_summary(
        70,
        [
            ("会員番号", "text", ["C-1", "C-2"], 70),
            ("年齢", "numeric", ["34", "61"], 40),
            ("移動距離", "numeric", ["12", "340"], 60),
            ("km単価", "numeric", ["15", "20"], 3),
        ],
        "ds_members_ja",
    )
    spec = acted_spec("60歳以上の会員は何人？", members)
    assert spec["filters"] == [{"col": "年齢", "op": ">=", "value": 60}]
    spec = acted_spec("200km以上移動した会員は何人？", members)
    assert spec["filters"] == [{"col": "移動距離", "op": ">=", "value": 200}]


def test_a_restriction_to_rows_of_a_word_not_read_is_asked_not_dropped() -> None:
    # before: 「ネットバンクだけの金額合計」 totalled every row, "only the overseas ones" too
    for text in ("ネットバンクだけの金額合計", "total amount, only the overseas ones"):
        assert decide(text, TRANSFERS_JA).next_action == "ask", text
    # a restriction read, or one on the answer's form, still acts
    spec = acted_spec("払戻しだけの金額合計", TRANSFERS_JA)
    assert spec["filters"] == [{"col": "処理区分", "op": "==", "value": "払戻し"}]
    assert acted_spec("件数だけ教えて", TRANSFERS_JA)["filters"] == []


def test_a_value_in_its_base_form_is_said_as_what_was_done() -> None:
    # before: "rejected" did not name the value Reject: the rows were grouped by result
    reviews = dataset_summary(
        50,
        [
            ("review_id", "text", ["V-1", "V-2"], 50),
            ("review_result", "categorical", ["Accept", "Reject", "Hold"], 3),
            ("amount", "numeric", ["100", "900"], 40),
        ],
        "ds_reviews_en",
    )
    spec = acted_spec("how many claims were rejected at review?", reviews)
    assert spec["filters"] == [{"col": "review_result", "op": "==", "value": "Reject"}]


def test_how_many_different_counts_the_column_said_after_it() -> None:
    # before: "how many different vendors did we receive from" counted qty_received values
    orders = dataset_summary(
        50,
        [
            ("order_id", "text", ["O-1", "O-2"], 50),
            ("vendor", "categorical", ["Acme", "Beta", "Core"], 3),
            ("qty_received", "numeric", ["1", "9"], 9),
        ],
        "ds_orders_en",
    )
    spec = acted_spec("how many different vendors did we receive from?", orders)
    assert spec["metrics"] == {"vendor": ["nunique"]}


def test_a_percent_of_the_total_per_category_is_a_share() -> None:
    # before: "what % of the total amount" summed per department (the "total" won)
    spec = acted_spec("What % of the total amount does each department account for?", EXPENSES_EN)
    assert (spec["op"], spec["group_col"], spec["value_col"]) == (
        "share_ratio",
        "department",
        "amount",
    )


def test_a_trend_runs_over_the_date_of_the_measures_event() -> None:
    # before: 「支払額の月別推移」 ran over the first date, 請求日, not 支払日
    payments = dataset_summary(
        120,
        [
            ("伝票番号", "text", ["P-1", "P-2"], 120),
            ("請求日", "datetime", ["2025-04-01", "2025-09-30"], 100),
            ("支払日", "datetime", ["2025-04-30", "2025-10-31"], 100),
            ("請求額", "numeric", ["1000", "5000"], 100),
            ("支払額", "numeric", ["1000", "5000"], 100),
        ],
        "ds_payments_ja",
    )
    spec = acted_spec("支払額の月別推移を折れ線で", payments)
    assert (spec["x"], spec["y"]) == ("支払日", "支払額")


def test_tax_deductible_is_said_in_its_accounting_word() -> None:
    # before: 「損金算入できる」 named no column of an English ledger (deductible: 免責 only)
    costs = dataset_summary(
        40,
        [
            ("CostID", "text", ["K-1", "K-2"], 40),
            ("Deductible", "boolean", ["True", "False"], 2),
            ("Amount", "numeric", ["100", "900"], 30),
        ],
        "ds_costs_en",
    )
    spec = acted_spec("損金算入できるのは何件？", costs)
    assert spec["filters"] == [{"col": "Deductible", "op": "==", "value": True}]


REPAIRS_JA = dataset_summary(
    90,
    [
        ("作業番号", "text", ["W-1", "W-2"], 90),
        ("作業時間", "numeric", ["1.5", "8"], 30),
        ("部品数", "numeric", ["1", "12"], 12),
        ("修繕費", "numeric", ["12000", "98000"], 80),
    ],
    "ds_repairs_ja",
)


def test_the_word_for_what_one_japanese_column_is_names_it_in_english() -> None:
    # before: "cost" (the head of 修繕費's reading, "repair cost") was too loose alone: asked
    assert acted_spec("What's the median cost per job?", REPAIRS_JA)["metrics"] == {
        "修繕費": ["median"]
    }


def test_an_action_on_what_a_column_counts_is_declined_not_summarised() -> None:
    # before: "mail inspection notices" named 点検回数 ("inspection count") and summarised it
    checks = dataset_summary(
        40,
        [
            ("顧客番号", "text", ["C-1", "C-2"], 40),
            ("点検回数", "numeric", ["1", "4"], 4),
        ],
        "ds_checks_ja",
    )
    decision = decide("Please mail inspection notices to the customers.", checks)
    assert decision.next_action == "out_of_scope", decision


def test_the_word_for_what_a_category_is_names_it_as_the_grouping() -> None:
    # before: "by location" (the head of 保管場所's reading, "storage location") was asked
    stock = dataset_summary(
        90,
        [
            ("品番", "text", ["P-1", "P-2"], 90),
            ("保管場所", "categorical", ["第1倉庫", "第2倉庫"], 2),
            ("在庫金額", "numeric", ["1000", "9000"], 80),
        ],
        "ds_stock_ja",
    )
    spec = acted_spec("total stock value by location", stock)
    assert spec["group_cols"] == ["保管場所"]


def test_a_counter_that_is_a_columns_name_counts_its_values() -> None:
    # before: 「何倉庫に置いてる？」 asked what to analyse
    stock = dataset_summary(
        90,
        [
            ("品番", "text", ["P-1", "P-2"], 90),
            ("倉庫", "categorical", ["東", "西", "南"], 3),
            ("在庫金額", "numeric", ["1000", "9000"], 80),
        ],
        "ds_warehouses_ja",
    )
    assert acted_spec("何倉庫に置いてる？", stock)["metrics"] == {"倉庫": ["nunique"]}


def test_a_grouping_changed_keeps_every_measure_of_the_result() -> None:
    # before: 「取引先別に切り替えて」 after two sums kept the first and dropped 手数料
    fees = dataset_summary(
        90,
        [
            ("伝票番号", "text", ["F-1", "F-2"], 90),
            ("部門", "categorical", ["営業部", "総務部"], 2),
            ("取引先", "categorical", ["A社", "B社"], 2),
            ("売上", "numeric", ["1000", "9000"], 80),
            ("手数料", "numeric", ["10", "90"], 80),
        ],
        "ds_fees_ja",
    )
    earlier = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["部門"],
        "metrics": {"売上": ["sum"], "手数料": ["sum"]},
        "filters": [],
    }
    decision = decide_after("部門ごとの売上と手数料", earlier, "取引先別に切り替えて", fees)
    spec = spec_of(decision)
    assert (spec["group_cols"], spec["metrics"]) == (
        ["取引先"],
        {"売上": ["sum"], "手数料": ["sum"]},
    )


CLAIMS_JA = dataset_summary(
    200,
    [
        ("精算番号", "text", ["E-1", "E-2"], 200),
        ("部署", "categorical", ["営業部", "総務部"], 2),
        ("距離", "numeric", ["3", "120"], 150),
        ("精算額", "numeric", ["500", "9000"], 180),
        ("部長承認", "boolean", ["True", "False"], 2),
    ],
    "ds_claims_ja",
)


def test_a_histogram_or_scatter_is_edited_by_a_follow_up() -> None:
    # before: each of these asked 「どのような分析をしますか？」 (only tables, bars and lines
    # could be edited)
    hist = {"type": "plot", "kind": "hist", "x": "距離", "filters": []}
    spec = spec_of(decide_after("距離の分布", hist, "部長承認済みのものだけで", CLAIMS_JA))
    assert (spec["kind"], spec["filters"]) == (
        "hist",
        [{"col": "部長承認", "op": "==", "value": True}],
    )
    spec = spec_of(decide_after("距離の分布", hist, "部署ごとに箱ひげにして", CLAIMS_JA))
    assert (spec["kind"], spec["x"], spec["y"]) == ("box", "部署", "距離")
    scatter = {"type": "plot", "kind": "scatter", "x": "距離", "y": "精算額", "filters": []}
    spec = spec_of(decide_after("距離と精算額の散布図", scatter, "部署で色分けして", CLAIMS_JA))
    assert (spec["kind"], spec["hue"]) == ("scatter", "部署")


def test_a_one_character_reading_groups_and_a_top_n_in_its_counter_ranks() -> None:
    # before: 「国別」 named no column of an English table (国 is Country's one-character
    # reading) and 「上位5か国」 was a clause of its own: the share was asked
    countries = dataset_summary(
        120,
        [
            ("FileNo", "text", ["T-1", "T-2"], 120),
            ("Country", "categorical", ["Japan", "China", "USA"], 3),
            ("Total Cost JPY", "numeric", ["50000", "90000"], 100),
        ],
        "ds_countries_en",
    )
    spec = acted_spec("国別の費用シェア、上位5か国", countries)
    assert (spec["op"], spec["group_col"], spec["top_k"]) == ("share_ratio", "Country", 5)


def test_a_number_said_in_a_unit_is_put_in_the_columns_unit() -> None:
    parcels = dataset_summary(
        60,
        [
            ("伝票番号", "text", ["S-1", "S-2"], 60),
            ("重量(g)", "numeric", ["300", "5200"], 50),
            ("送料", "numeric", ["500", "1800"], 20),
        ],
        "ds_parcels_ja",
    )
    spec = acted_spec("2kg以上の荷物は何件？", parcels)
    assert spec["filters"] == [{"col": "重量(g)", "op": ">=", "value": 2000}]


def test_an_amount_said_alone_is_the_total_column_of_a_table_without_sales() -> None:
    # before: 「合計金額いくら？」 summed 燃料費, the first money-like column, not 支払合計
    trips = dataset_summary(
        80,
        [
            ("申請番号", "text", ["T-1", "T-2"], 80),
            ("部署", "categorical", ["営業部", "総務部"], 2),
            ("燃料費", "numeric", ["500", "3000"], 70),
            ("駐車料", "numeric", ["300", "900"], 20),
            ("支払合計", "numeric", ["800", "3900"], 75),
            ("合計時間", "numeric", ["1", "9"], 9),
        ],
        "ds_trips_total_ja",
    )
    spec = acted_spec("部署が営業部の申請、合計金額いくら？", trips)
    assert spec["metrics"] == {"支払合計": ["sum"]}


def test_a_statistic_per_a_column_distinct_on_every_row_is_over_the_rows() -> None:
    # before: "the median repair cost per request" grouped by 依頼番号 (one group per row)
    requests = dataset_summary(
        90,
        [
            ("依頼番号", "text", ["R-1", "R-2"], 90),
            ("部署", "categorical", ["営業部", "総務部"], 2),
            ("修繕費", "numeric", ["12000", "98000"], 80),
        ],
        "ds_requests_ja",
    )
    spec = acted_spec("What is the median repair cost per request?", requests)
    assert (spec["op"], spec["metrics"]) == ("total", {"修繕費": ["median"]})


def test_the_amount_of_the_rows_word_is_the_column_named_by_that_word() -> None:
    # before: 「返金額の合計」 on a refund log (RefundID) summed the table's amount,
    # SaleAmount, not Refunded
    refunds = dataset_summary(
        80,
        [
            ("RefundID", "text", ["RF-1", "RF-2"], 80),
            ("SaleAmount", "numeric", ["5000", "25000"], 70),
            ("Refunded", "numeric", ["500", "2500"], 60),
        ],
        "ds_refund_log_en",
    )
    assert acted_spec("返金額の合計は？", refunds)["metrics"] == {"Refunded": ["sum"]}


def test_a_bar_of_a_total_of_something_not_read_is_asked_not_counted() -> None:
    # before: "bar chart of total bonuses by 部署" drew row counts per 部署
    decision = decide("Bar chart of total bonuses by 部署", CLAIMS_JA)
    assert decision.next_action == "ask", decision


def test_a_count_of_days_said_as_the_rows_state_is_above_zero() -> None:
    # before: "how many invoices were paid overdue" counted every row
    invoices = dataset_summary(
        80,
        [
            ("invoice_no", "text", ["I-1", "I-2"], 80),
            ("days_overdue", "numeric", ["0", "12"], 20),
            ("amount", "numeric", ["500", "2500"], 60),
        ],
        "ds_overdue_en",
    )
    spec = acted_spec("how many invoices were paid overdue?", invoices)
    assert spec["filters"] == [{"col": "days_overdue", "op": ">", "value": 0}]
    assert acted_spec("max days overdue?", invoices)["filters"] == []


def test_a_count_asked_instead_of_the_measure_counts_the_rows() -> None:
    # before: "the number of claims instead of the amount" kept the bars of 精算額
    bars = {"type": "plot", "kind": "bar", "x": "部署", "y": "精算額", "agg": "sum", "filters": []}
    spec = spec_of(
        decide_after(
            "bar chart of 精算額 by 部署",
            bars,
            "show the number of claims instead of 精算額",
            CLAIMS_JA,
        )
    )
    assert (spec["kind"], spec.get("y"), spec["agg"]) == ("bar", None, "count")
