"""Conditions the offline reasoner used to drop while still answering (issue 28): a count
or a total over every row, reported as if the condition had been applied. Shown on
made-up data of domains no benchmark uses: a facility inspection log (Japanese headers)
and a courier shipment list (English headers)."""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary, decide, decide_after, spec_of

ROWS = 700

INSPECTIONS = dataset_summary(
    ROWS,
    [
        ("点検番号", "text", ["IN-0001", "IN-0002"], ROWS),
        ("設備名", "categorical", ["空調機A", "受変電設備", "給水ポンプ"], 40),
        ("点検日", "datetime", ["2024-04-03", "2025-03-28"], 240),
        ("点検費用", "numeric", ["12000", "380000"], 300),
        ("要調査", "boolean", ["True", "False"], 2),
        ("源泉対象", "boolean", ["True", "False"], 2),
        ("担当業者", "categorical", ["北辰設備", "東和メンテ"], 2),
        ("拠点", "categorical", ["札幌営業所", "仙台営業所"], 2),
        ("費目", "categorical", ["点検費予算", "修繕費予算"], 2),
        ("中止有無", "boolean", ["True", "False"], 2),
        ("中止料", "numeric", ["0", "5000"], 3),
        ("未収残高", "numeric", ["0", "90000"], 300),
        ("資材費", "numeric", ["0", "80000"], 300),
        ("天候", "categorical", ["晴れ", "曇り", "雨", "雪"], 4),
        ("優先度", "categorical", ["高", "中", "低"], 3),
        ("カウンター料金", "numeric", ["1000", "9000"], 200),
        ("モノクロ枚数", "numeric", ["0", "4000"], 300),
        ("是正確認済", "boolean", ["True", "False"], 2),
    ],
    "ds_inspections",
)
SHIPMENTS = dataset_summary(
    ROWS,
    [
        ("shipment_id", "text", ["SH-1", "SH-2"], ROWS),
        ("carrier", "categorical", ["Yamato", "Sagawa"], 2),
        ("days", "numeric", ["1", "12"], 12),
        ("weight_kg", "numeric", ["0.5", "40"], 200),
        ("fee_jpy", "numeric", ["800", "12000"], 300),
        ("daily_rate_jpy", "numeric", ["100", "900"], 30),
        ("delivered", "boolean", ["True", "False"], 2),
        ("surcharge_amount_jpy", "numeric", ["0", "800"], 20),
        ("total_charge_jpy", "numeric", ["800", "12800"], 300),
        ("packing_cost_jpy", "numeric", ["0", "900"], 30),
    ],
    "ds_shipments",
)


def test_a_yes_no_column_named_by_what_it_says_is_needed_or_applies() -> None:
    # before: "subject to withholding" counted every row (源泉対象 read as nothing)
    for text, column in (
        ("How many inspections are subject to withholding?", "源泉対象"),
        ("源泉の点検は何件？", "源泉対象"),
    ):
        spec = acted_spec(text, INSPECTIONS)
        assert spec["op"] == "total", text
        assert spec["filters"] == [{"col": column, "op": "==", "value": True}], text


def test_english_comparisons_said_with_any_comparative() -> None:
    # before: "longer than", "fewer than", "heavier than" were not comparisons: every row
    for text, condition in (
        ("How many shipments took longer than 5 days?", ("days", ">", 5)),
        ("How many shipments took fewer than 3 days?", ("days", "<", 3)),
        ("How many shipments are heavier than 10 kg?", ("weight_kg", ">", 10)),
        ("Total fee for shipments with a fee no higher than 2,000 yen", ("fee_jpy", "<=", 2000)),
    ):
        spec = acted_spec(text, SHIPMENTS)
        col, op, value = condition
        assert spec["filters"] == [{"col": col, "op": op, "value": value}], text


def test_a_month_right_after_kara_ends_the_range() -> None:
    # before: 「2025年1月から3月の」 kept "from January" and "in March": March alone
    for text, end in (
        ("2025年1月から3月の点検は何件？", "2025-04-01"),
        ("2024年10月から12月に行った点検の点検費用合計", "2025-01-01"),
    ):
        spec = acted_spec(text, INSPECTIONS)
        assert [(f["op"], f["value"]) for f in spec["filters"]][-1] == ("<", end), text
        assert len(spec["filters"]) == 2, text


def test_a_word_begins_a_value_only_as_its_place_not_as_more_of_its_subject() -> None:
    # before: 「修繕」 was read as 費目 修繕費予算, a condition nobody asked for
    spec = acted_spec("札幌の修繕、点検費用の合計は？", INSPECTIONS)
    assert spec["filters"] == [{"col": "拠点", "op": "==", "value": "札幌営業所"}]


def test_a_flag_is_named_by_its_stem_beside_a_fee_named_after_it() -> None:
    # before: 中止 was shared with 中止料, so 「中止になった」 named nothing: every row
    spec = acted_spec("中止になった点検は何件？", INSPECTIONS)
    assert spec["filters"] == [{"col": "中止有無", "op": "==", "value": True}]
    assert acted_spec("中止料の合計は？", INSPECTIONS)["metrics"] == {"中止料": ["sum"]}


def test_a_measure_named_by_the_english_of_its_head_word() -> None:
    # before: "balance" named no column (未収残高 reads "uncollected balance"): asked
    spec = acted_spec("What's the total balance?", INSPECTIONS)
    assert spec["metrics"] == {"未収残高": ["sum"]}
    earlier = {"type": "analysis", "op": "total", "metrics": {}, "filters": []}
    decision = decide_after("点検は何件？", earlier, "What's their total balance?", INSPECTIONS)
    spec = spec_of(decision)
    assert spec["metrics"] == {"未収残高": ["sum"]}


def test_a_column_named_daily_is_no_period_in_a_follow_up() -> None:
    # before: "daily" of daily_rate_jpy turned the total into a daily line chart
    earlier = {
        "type": "analysis",
        "op": "total",
        "metrics": {},
        "filters": [{"col": "delivered", "op": "==", "value": False}],
    }
    decision = decide_after(
        "How many are not delivered?", earlier, "And their combined daily rate?", SHIPMENTS
    )
    spec = spec_of(decision)
    assert spec["op"] == "total" and spec["metrics"] == {"daily_rate_jpy": ["sum"]}
    assert spec["filters"] == earlier["filters"]


def test_money_spent_is_the_total_not_an_amount_named_inside_another_column() -> None:
    # before: "amount" inside surcharge_amount_jpy made it the money of the table
    spec = acted_spec("What did we spend on shipping in total?", SHIPMENTS)
    assert spec["metrics"] == {"total_charge_jpy": ["sum"]}


def test_a_value_left_out_after_it_is_excluded() -> None:
    # before: "leave Yamato out" and "Yamato excluded" kept only Yamato
    for text in (
        "Total fee, leave Yamato out",
        "Total fee with Yamato excluded",
        "Total fee, Yamato aside",
        "Total fee, take the Yamato ones out",
    ):
        spec = acted_spec(text, SHIPMENTS)
        assert spec["filters"] == [{"col": "carrier", "op": "!=", "value": "Yamato"}], text


def test_a_measure_set_aside_is_not_measured() -> None:
    # before: "not counting the surcharge amount" summed it beside the fee
    spec = acted_spec("Total fee for Sagawa, not counting the surcharge amount", SHIPMENTS)
    assert spec["metrics"] == {"fee_jpy": ["sum"]}


def test_an_amount_or_more_said_after_a_japanese_measure_in_english() -> None:
    # before: "of 50,000 yen or more" was read by no rule: every row counted
    spec = acted_spec("How many records had material costs of 50,000 yen or more?", INSPECTIONS)
    assert spec["filters"] == [{"col": "資材費", "op": ">=", "value": 50000}]
    # one said of no column is on the table's amount, said as an assumption, never dropped
    decision = decide("How many shipments were 10,000 yen or more?", SHIPMENTS)
    spec = spec_of(decision)
    assert spec["filters"] == [{"col": "total_charge_jpy", "op": ">=", "value": 10000}]
    assert any("total_charge_jpy" in said for said in decision.assumptions)


def test_a_one_kanji_value_said_alone_as_the_kind_of_day() -> None:
    # before: 「雨」 was read only in brackets: every row counted
    spec = acted_spec("雨の日の点検は何件？", INSPECTIONS)
    assert spec["filters"] == [{"col": "天候", "op": "==", "value": "雨"}]
    spec = acted_spec("天候が雪だった点検の点検費用合計", INSPECTIONS)
    assert spec["filters"] == [{"col": "天候", "op": "==", "value": "雪"}]
    # inside a word, or after そ / こ, it is no value
    assert acted_spec("その中の件数は？", INSPECTIONS)["filters"] == []
    assert acted_spec("期間中の点検は何件？", INSPECTIONS)["filters"] == []


def test_a_word_a_request_asks_with_is_no_loanword_of_the_data() -> None:
    # before: "count" shared the consonants of カウンター: カウンター料金 was summed
    decision = decide("What's the total mono page count?", INSPECTIONS)
    spec = spec_of(decision) if decision.next_action == "act" else {}
    assert "カウンター料金" not in str(spec)


def test_the_highest_and_lowest_said_as_adverbs() -> None:
    # before: 「最高でいくら」「多くていくら」 summed every row
    for text, agg in (
        ("点検費用は最高でいくら？", "max"),
        ("点検費用の最高は？", "max"),
        ("点検費用は多くていくら？", "max"),
        ("点検費用は最低でいくら？", "min"),
    ):
        assert acted_spec(text, INSPECTIONS)["metrics"] == {"点検費用": [agg]}, text
    # 「最低でも」 is "at least": a condition, not the smallest
    spec = acted_spec("点検費用が最低でも10万円以上の点検は何件？", INSPECTIONS)
    assert spec["filters"] == [{"col": "点検費用", "op": ">=", "value": 100000}]
    assert spec["metrics"] == {}


def test_a_flag_whose_check_is_not_yet_done_holds_its_no() -> None:
    # before: 「まだ済んでいない」 was not read as a negation: the rows where it is done
    spec = acted_spec("是正の確認がまだ済んでいない点検は何件？", INSPECTIONS)
    assert spec["filters"] == [{"col": "是正確認済", "op": "==", "value": False}]
    spec = acted_spec("是正の確認が済んでいる点検は何件？", INSPECTIONS)
    assert spec["filters"] == [{"col": "是正確認済", "op": "==", "value": True}]


def test_spend_is_the_verb_when_the_thing_spent_on_is_named() -> None:
    # before: "spend" named packing_cost_jpy too, and both were summed
    spec = acted_spec("What did we spend on fees in total?", SHIPMENTS)
    assert spec["metrics"] == {"fee_jpy": ["sum"]}


def test_a_yes_no_column_said_with_an_article_is_its_yes() -> None:
    # before: "a delivered" was read as a common noun, not a condition: every row
    spec = acted_spec("How many shipments had a delivered flag?", SHIPMENTS)
    assert spec["filters"] == [{"col": "delivered", "op": "==", "value": True}]


def test_money_spent_on_a_measure_that_holds_no_money() -> None:
    # before: "spend on heavy parcels by weight" summed the kilograms as money
    spec = acted_spec("How much did we spend on weight in total?", SHIPMENTS)
    assert spec["metrics"] == {"total_charge_jpy": ["sum"]}


def test_an_event_done_or_not_done_holds_its_date_filled_or_blank() -> None:
    rentals = dataset_summary(
        500,
        [
            ("貸出番号", "text", ["R-1", "R-2"], 500),
            ("品目", "categorical", ["脚立", "台車"], 2),
            ("貸出日", "datetime", ["2024-04-01", "2025-03-01"], 200),
            ("返却日", "datetime", ["2024-04-05", "2025-03-20"], 150),
            ("延滞料", "numeric", ["0", "3000"], 20),
        ],
        "ds_rentals",
    )
    # before: every row counted, as if the event had not been said
    for text, op in (
        ("返却済みの貸出は何件？", "not_null"),
        ("返却された貸出の延滞料合計", "not_null"),
        ("How many rentals have been returned?", "not_null"),
        ("未返却の貸出は何件？", "is_null"),
        ("まだ返却されていない貸出は何件？", "is_null"),
        ("How many rentals are not returned yet?", "is_null"),
    ):
        spec = acted_spec(text, rentals)
        assert spec["filters"] == [{"col": "返却日", "op": op}], text
    # with a period, the period is the condition on that date
    spec = acted_spec("2024年に返却された貸出は何件？", rentals)
    assert spec["filters"] == [{"col": "返却日", "op": "==", "value": "2024"}]


def test_an_action_word_names_no_state_value_said_in_english() -> None:
    payments = dataset_summary(
        400,
        [
            ("payment_id", "text", ["P-1", "P-2"], 400),
            ("status", "categorical", ["Paid", "Unpaid"], 2),
            ("amount_jpy", "numeric", ["1000", "900000"], 300),
        ],
        "ds_payments_en",
    )
    # 支払い is a payment, not the Paid rows; 支払済 is the Paid rows
    assert acted_spec("100万円以上の支払いは何件？", payments)["filters"] == [
        {"col": "amount_jpy", "op": ">=", "value": 1000000}
    ]
    assert acted_spec("支払済の件数は？", payments)["filters"] == [
        {"col": "status", "op": "==", "value": "Paid"}
    ]


def test_a_japanese_compound_names_an_english_money_column() -> None:
    trips = dataset_summary(
        300,
        [
            ("trip_id", "text", ["T-1", "T-2"], 300),
            ("department", "categorical", ["Sales", "IT"], 2),
            ("registration_fee_jpy", "numeric", ["0", "50000"], 40),
            ("travel_cost_jpy", "numeric", ["0", "90000"], 200),
        ],
        "ds_trips_en",
    )
    # before: 旅費 / 交通費 / 登録料 named no column (readings were 旅費費用, 登録料金 …): asked
    for text, column in (
        ("交通費の平均っていくら？", "travel_cost_jpy"),
        ("旅費の合計は？", "travel_cost_jpy"),
        ("登録料の合計は？", "registration_fee_jpy"),
    ):
        metrics = acted_spec(text, trips)["metrics"]
        assert list(metrics) == [column], text


def test_money_billed_is_the_tables_amount() -> None:
    invoices = dataset_summary(
        300,
        [
            ("invoice_no", "text", ["I-1", "I-2"], 300),
            ("vendor", "categorical", ["AWS", "Azure"], 2),
            ("storage_gb", "numeric", ["10", "900"], 200),
            ("unit_price_jpy", "numeric", ["1", "3"], 5),
            ("amount_jpy", "numeric", ["100", "90000"], 250),
        ],
        "ds_invoices_en",
    )
    # before: "the total billed" named no column: asked which
    spec = acted_spec("What was the total billed?", invoices)
    assert spec["metrics"] == {"amount_jpy": ["sum"]}


CASES = dataset_summary(
    300,
    [
        ("事件番号", "text", ["C-1", "C-2"], 300),
        ("区分", "categorical", ["訴訟", "調停"], 2),
        ("請求額", "numeric", ["100000", "300000000"], 250),
        ("着手金", "numeric", ["100000", "900000"], 50),
        ("報酬", "numeric", ["0", "2000000"], 80),
        ("完了日", "datetime", ["2024-01-10", "2025-03-01"], 100),
        ("完了の有無", "boolean", ["True", "False"], 2),
    ],
    "ds_cases",
)


def test_an_amount_in_oku_or_senman_yen() -> None:
    # before: 「1億円以上」 was read by no rule: asked which rows
    for text, op, value in (
        ("請求額が1億円以上の事件は何件？", ">=", 100_000_000),
        ("請求額が5千万円を超える事件は何件？", ">", 50_000_000),
    ):
        spec = acted_spec(text, CASES)
        assert spec["filters"] == [{"col": "請求額", "op": op, "value": value}], text


def test_a_flag_said_with_its_mark_beside_a_date_of_the_same_word() -> None:
    # before: 完了 was shared with 完了日, so 「完了フラグ」 named nothing: every row
    spec = acted_spec("完了フラグが立っている事件は何件？", CASES)
    assert spec["filters"] == [{"col": "完了の有無", "op": "==", "value": True}]


def test_the_measure_said_not_to_be_meant_in_a_sentence_of_its_own() -> None:
    # before: 「報酬のほうじゃないです」 left 報酬 beside 着手金
    spec = acted_spec("「着手金」の平均を出して。報酬のほうじゃないです", CASES)
    assert spec["metrics"] == {"着手金": ["mean"]}


def test_a_follow_up_pointing_back_after_an_interjection_keeps_the_conditions() -> None:
    earlier = {
        "type": "analysis",
        "op": "total",
        "metrics": {},
        "filters": [{"col": "区分", "op": "==", "value": "調停"}],
    }
    # before: 「じゃあその分の…」 was a request of its own: every case totalled
    spec = spec_of(
        decide_after("調停は何件？", earlier, "じゃあその分の請求額は合計でいくら？", CASES)
    )
    assert spec["metrics"] == {"請求額": ["sum"]} and spec["filters"] == earlier["filters"]


def test_a_follow_up_asking_what_those_cost_totals_the_tables_amount() -> None:
    earlier = {
        "type": "analysis",
        "op": "total",
        "metrics": {},
        "filters": [{"col": "delivered", "op": "==", "value": False}],
    }
    decision = decide_after(
        "How many are not delivered?", earlier, "And what did those cost in total?", SHIPMENTS
    )
    spec = spec_of(decision)
    assert spec["metrics"] == {"total_charge_jpy": ["sum"]}
    assert spec["filters"] == earlier["filters"]


FARM = dataset_summary(
    800,
    [
        ("作業番号", "text", ["W-1", "W-2"], 800),
        ("作業日", "datetime", ["2024-04-01", "2025-03-31"], 300),
        ("圃場", "categorical", ["北1", "南2"], 2),
        ("作物", "categorical", ["水稲", "トマト"], 2),
        ("作業時間", "numeric", ["0.5", "6"], 20),
        ("検収日", "datetime", ["2024-05-01", "2025-04-01"], 200),
    ],
    "ds_farm",
)


def test_a_fiscal_year_said_in_words_and_restated_as_months() -> None:
    # before: "April 2024 through March 2025" kept April alone beside the range
    spec = acted_spec("How many records in fiscal 2024, i.e. April 2024 through March 2025?", FARM)
    assert spec["filters"] == [
        {"col": "作業日", "op": ">=", "value": "2024-04-01"},
        {"col": "作業日", "op": "<", "value": "2025-04-01"},
    ]


def test_a_date_named_by_the_words_of_a_compound_and_said_not_filled_in() -> None:
    # before: 検収日 read only "acceptance date", and "filled in" was no blank: every row
    spec = acted_spec("How many records have no inspection date filled in?", FARM)
    assert spec["filters"] == [{"col": "検収日", "op": "is_null"}]


def test_fields_with_gaps_are_the_tables_columns_not_a_column_named_field() -> None:
    # 圃場 is a farm field in English, but "which fields have gaps" asks about every column
    decision = decide("Which fields in this log have gaps?", FARM)
    spec = spec_of(decision)
    assert spec["op"] == "missingness" and not spec.get("columns")
    spec = acted_spec("Top 3 crops by total hours worked", FARM)
    assert spec["group_cols"] == ["作物"] and spec["metrics"] == {"作業時間": ["sum"]}


def test_a_value_said_as_a_verb_a_text_said_written_and_a_count_with_its_unit() -> None:
    vouchers = dataset_summary(
        600,
        [
            ("伝票番号", "text", ["V-1", "V-2"], 600),
            ("区分", "categorical", ["受入", "払出"], 2),
            ("金額", "numeric", ["500", "90000"], 300),
            ("摘要", "text", ["棚卸差異", "来客用"], 500),
        ],
        "ds_vouchers",
    )
    # before: 「払い出した」 named no value: every row totalled
    spec = acted_spec("払い出した分の金額って合計いくら？", vouchers)
    assert spec["filters"] == [{"col": "区分", "op": "==", "value": "払出"}]
    # before: 「…と書かれている」 was no condition on the text: every row counted
    spec = acted_spec("「摘要」に“棚卸”と書かれている行は何件？", vouchers)
    assert spec["filters"] == [{"col": "摘要", "op": "contains", "value": "棚卸"}]
    leases = dataset_summary(
        200,
        [
            ("asset_tag", "text", ["A-1", "A-2"], 200),
            ("term_months", "numeric", ["36", "60"], 3),
            ("monthly_payment_jpy", "numeric", ["1000", "900000"], 150),
        ],
        "ds_leases_en",
    )
    # before: "a 60-month term" summed term_months beside the payment
    spec = acted_spec("Sum of [monthly_payment_jpy] for leases with a 60-month term", leases)
    assert spec["metrics"] == {"monthly_payment_jpy": ["sum"]}
    assert spec["filters"] == [{"col": "term_months", "op": "==", "value": 60}]


def test_the_amount_of_the_rows_said_in_japanese_on_an_english_table() -> None:
    invoices = dataset_summary(
        300,
        [
            ("invoice_no", "text", ["I-1", "I-2"], 300),
            ("service", "categorical", ["Backup", "Archive"], 2),
            ("unit_price_jpy", "numeric", ["1", "3"], 5),
            ("amount_jpy", "numeric", ["100", "90000"], 250),
            ("registration_fee_jpy", "numeric", ["0", "5000"], 10),
        ],
        "ds_invoices_ja_said",
    )
    # before: 「請求額」 (the invoices' amount) and 「参加費」 named no column: asked
    spec = acted_spec("サービスごとの請求額合計を出して", invoices)
    assert spec["metrics"] == {"amount_jpy": ["sum"]}
    spec = acted_spec("参加費の合計は？", invoices)
    assert spec["metrics"] == {"registration_fee_jpy": ["sum"]}


def test_a_count_per_year_said_before_the_number_and_all_said_across() -> None:
    contracts = dataset_summary(
        300,
        [
            ("契約番号", "text", ["M-1", "M-2"], 300),
            ("点検回数", "numeric", ["4", "12"], 4),
            ("年額", "numeric", ["100000", "2400000"], 200),
        ],
        "ds_contracts",
    )
    # before: 「年12回の」 was no condition, and 点検回数 was summed beside 年額
    spec = acted_spec("点検回数が年12回の契約だと、年額の合計はいくら？", contracts)
    assert spec["metrics"] == {"年額": ["sum"]}
    assert spec["filters"] == [{"col": "点検回数", "op": "==", "value": 12}]
    # before: "across all carriers" grouped by carrier ("all" read as a qualifying word)
    spec = acted_spec("What's the total fee across all carriers?", SHIPMENTS)
    assert spec["op"] == "total" and spec["metrics"] == {"fee_jpy": ["sum"]}


def test_a_status_word_after_an_aggregation_is_the_amount_named_like_it() -> None:
    claims = dataset_summary(
        300,
        [
            ("claim_no", "text", ["C-1", "C-2"], 300),
            ("status", "categorical", ["Open", "Settled"], 2),
            ("claimed_jpy", "numeric", ["1000", "900000"], 250),
            ("settled_jpy", "numeric", ["0", "800000"], 200),
        ],
        "ds_claims_en",
    )
    # before: "total settled" kept the Settled rows and summed claimed_jpy
    spec = acted_spec("Total settled where more than 500,000 yen was claimed", claims)
    assert spec["metrics"] == {"settled_jpy": ["sum"]}
    assert spec["filters"] == [{"col": "claimed_jpy", "op": ">", "value": 500000}]
    # said as the rows, it stays the status
    spec = acted_spec("How many settled claims?", claims)
    assert spec["filters"] == [{"col": "status", "op": "==", "value": "Settled"}]


def test_a_monthly_line_over_a_column_named_month_has_no_hue_of_it() -> None:
    lines = dataset_summary(
        300,
        [
            ("line_id", "text", ["L-1", "L-2"], 300),
            ("month", "datetime", ["2024-04-01", "2025-03-01"], 12),
            ("monthly_charge_jpy", "numeric", ["1000", "9000"], 200),
        ],
        "ds_lines_en",
    )
    earlier = {"type": "analysis", "op": "total", "metrics": {"monthly_charge_jpy": ["sum"]}}
    spec = spec_of(decide_after("Total monthly charge?", earlier, "break it down by month", lines))
    assert spec.get("hue") != "month"


def test_an_expense_is_the_money_out_of_a_ledger_with_money_in_and_out() -> None:
    petty = dataset_summary(
        900,
        [
            ("伝票番号", "text", ["PC-1", "PC-2"], 900),
            ("勘定科目", "categorical", ["旅費交通費", "通信費", "会議費"], 3),
            ("入金", "numeric", ["30000", "100000"], 10),
            ("出金", "numeric", ["160", "9000"], 500),
            ("残高", "numeric", ["1000", "100000"], 800),
        ],
        "ds_petty",
    )
    # before: 入金 or 出金? asked, though an expense is paid out
    spec = acted_spec("旅費交通費の合計っていくら？", petty)
    assert spec["metrics"] == {"出金": ["sum"]}
    spec = acted_spec("通信費で5,000円を超えてるのって何件？", petty)
    assert {"col": "出金", "op": ">", "value": 5000} in spec["filters"]
    # money in is still said by its own name
    assert acted_spec("入金の合計は？", petty)["metrics"] == {"入金": ["sum"]}


def test_a_japanese_money_word_for_an_english_column_of_an_overage() -> None:
    lines = dataset_summary(
        300,
        [
            ("line_id", "text", ["L-1", "L-2"], 300),
            ("department", "categorical", ["Sales", "Engineering"], 2),
            ("monthly_charge_jpy", "numeric", ["1000", "9000"], 200),
            ("overage_charge_jpy", "numeric", ["0", "5000"], 60),
        ],
        "ds_lines_overage",
    )
    # before: 「超過料金」 named no column ("overage" had no Japanese): asked which
    spec = acted_spec("Engineeringの超過料金、平均でいくら？", lines)
    assert spec["metrics"] == {"overage_charge_jpy": ["mean"]}
