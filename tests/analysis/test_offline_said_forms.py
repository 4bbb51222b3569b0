"""Forms of saying a condition, a period, a grouping or a count that the offline
reasoner used to misread (issue 28), each shown on made-up data of domains no
benchmark uses: a trade association's membership dues (Japanese) and a grant
register (English)."""

from __future__ import annotations

from typing import Any

from offline_support import acted_spec, dataset_summary, decide, decide_after, spec_of

ROWS = 900

DUES = dataset_summary(
    ROWS,
    [
        ("会費番号", "text", ["MD-0001", "MD-0002"], ROWS),
        ("会員名", "categorical", ["青葉商店", "桜井工業", "北斗運輸"], 240),
        ("会員種別", "categorical", ["正会員", "賛助会員", "特別会員"], 3),
        ("支部", "categorical", ["東支部", "西支部", "南支部"], 3),
        ("請求月", "datetime", ["2024-04-01", "2024-09-01", "2025-03-01"], 12),
        ("入金日", "datetime", ["2024-04-15", "2025-04-10"], 260),
        ("会費額", "numeric", ["6000", "30000"], 5),
        ("入金額", "numeric", ["0", "30000"], 9),
        ("口座振替", "boolean", ["True", "False"], 2),
        ("集金担当", "categorical", ["小川", "松田"], 2),
        ("前年度会費額", "numeric", ["6000", "30000"], 5),
        ("摘要", "text", ["ｶｲﾋ ｱｵﾊﾞｼｮｳﾃﾝ", "会費 4月分"], 700),
    ],
    "ds_dues",
)
GRANTS = dataset_summary(
    ROWS,
    [
        ("grant_id", "text", ["G-001", "G-002"], ROWS),
        ("program", "categorical", ["Youth", "Culture", "Sports"], 3),
        ("applied_on", "datetime", ["2023-11-01", "2024-11-30"], 300),
        ("decision_date", "datetime", ["2024-01-10", "2025-02-20"], 300),
        ("amount", "numeric", ["50000", "2000000"], 400),
        ("reported", "boolean", ["True", "False"], 2),
        ("department", "categorical", ["Sales", "Planning"], 2),
    ],
    "ds_grants",
)


def test_a_yes_no_column_said_with_a_negation_holds_its_no_rows() -> None:
    # before: every one of these counted the rows where 口座振替 is True
    for text in (
        "口座振替じゃない会費は何件ありますか",
        "口座振替ではない請求の件数を教えて",
        "口座振替以外の会費額の合計は？",
        "口座振替になっていない会員の件数",
    ):
        spec = acted_spec(text, DUES)
        assert spec["filters"] == [{"col": "口座振替", "op": "==", "value": False}], text
    spec = acted_spec("口座振替の請求は何件？", DUES)
    assert spec["filters"] == [{"col": "口座振替", "op": "==", "value": True}]
    spec = acted_spec("How many grants without reported?", GRANTS)
    assert spec["filters"] == [{"col": "reported", "op": "==", "value": False}]
    # before: "set to" hid the value: a summary of the column, every row
    spec = acted_spec("How many rows have reported set to True?", GRANTS)
    assert spec["op"] == "total"
    assert spec["filters"] == [{"col": "reported", "op": "==", "value": True}]


def test_a_month_said_as_its_bill_keeps_the_end_of_the_range() -> None:
    # before: 「12月分まで」 lost its まで: the range became "from October and in December"
    spec = acted_spec("2024年10月から12月分までの会費額、合計いくら？", DUES)
    assert spec["filters"] == [
        {"col": "請求月", "op": ">=", "value": "2024-10-01"},
        {"col": "請求月", "op": "<", "value": "2025-01-01"},
    ]
    spec = acted_spec("2024年10月分から2025年2月分までの入金額合計", DUES)
    assert [f["op"] for f in spec["filters"]] == [">=", "<"]
    assert spec["filters"][1]["value"] == "2025-03-01"


def test_a_column_of_months_groups_beside_a_category() -> None:
    # before: the month column was dropped and the table grouped by 会員種別 alone
    spec = acted_spec("会員種別と請求月ごとの会費額の合計", DUES)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["会員種別", "請求月"]
    spec = acted_spec("Total amount by program and month", GRANTS)
    assert spec.get("kind") == "line" and spec["hue"] == "program" and spec["freq"] == "M"
    # a grain word with a day-level date: each category's line per month, not one table
    spec = acted_spec("支部別・月別の入金額の合計", DUES)
    assert spec["kind"] == "line" and spec["hue"] == "支部" and spec["freq"] == "M"
    # before: 「×」 named only the first axis
    spec = acted_spec("支部×会員種別で会費額集計", DUES)
    assert spec["group_cols"] == ["支部", "会員種別"]


def test_how_many_different_values_of_a_category() -> None:
    # before: a summary of 会員種別 and 支部 (「種類」 read as 種別), the row count, or a
    # count per value
    for text, column in (
        ("会員種別って何種類くらいありますか", "会員種別"),
        ("会員名は全部でいくつありますか？", "会員名"),
        ("支部はいくつある？", "支部"),
        ("集金担当の数は？", "集金担当"),
    ):
        spec = acted_spec(text, DUES)
        assert spec["op"] == "total" and spec["metrics"] == {column: ["nunique"]}, text
    spec = acted_spec("支部ごとの件数", DUES)
    assert spec["op"] == "groupby_agg"


def test_a_period_applies_to_the_date_whose_event_is_said() -> None:
    # before: the first date column (請求月 / applied_on) took the period
    spec = acted_spec("2024年中に入金した分の入金額、合計いくら？", DUES)
    assert {f["col"] for f in spec["filters"]} == {"入金日"}
    spec = acted_spec("Total amount of grants decided in 2024?", GRANTS)
    assert {f["col"] for f in spec["filters"]} == {"decision_date"}


def test_month_ranges_led_by_a_year_or_joined_by_and() -> None:
    # before: 「6月」 was asked for its year
    spec = acted_spec("2024年10〜12月分の会費額の合計", DUES)
    assert spec["filters"] == [
        {"col": "請求月", "op": ">=", "value": "2024-10-01"},
        {"col": "請求月", "op": "<", "value": "2025-01-01"},
    ]
    spec = acted_spec("How many grants were decided between March and May 2024?", GRANTS)
    assert spec["filters"] == [
        {"col": "decision_date", "op": ">=", "value": "2024-03-01"},
        {"col": "decision_date", "op": "<", "value": "2024-06-01"},
    ]


def test_a_column_name_holding_a_relative_period_is_no_period() -> None:
    # before: 「前年」 in the name asked for dates
    spec = acted_spec("「前年度会費額」の平均を教えて", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {"前年度会費額": ["mean"]}


def test_duplicates_left_out_of_a_count_and_said_in_english() -> None:
    # before: 「重複なしで」 ran the duplicate check, of the first 会員 column
    spec = acted_spec("会員って何社？会費番号の重複なしで数えてください", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {"会費番号": ["nunique"]}
    spec = acted_spec("Check whether any grant_id appears more than once", GRANTS)
    assert spec["op"] == "duplicate_check" and spec["subset"] == ["grant_id"]


def test_data_said_in_the_past_is_no_action_to_refuse() -> None:
    # before: "submitted" / 「提出した」 refused as sending documents out
    spec = acted_spec("Bar chart of how many grants each department submitted", GRANTS)
    assert spec["kind"] == "bar" and spec["x"] == "department"
    assert acted_spec("支部ごとに提出した件数", DUES)["group_cols"] == ["支部"]
    assert decide("この集計を本部に提出して", DUES).next_action == "out_of_scope"


def test_all_of_a_category_is_one_total() -> None:
    # before: 「全支部」 grouped by 支部
    spec = acted_spec("2025年3月分の会費額、全支部の合計でいくら？", DUES)
    assert spec["op"] == "total" and spec["metrics"] == {"会費額": ["sum"]}
    assert acted_spec("支部ごとの会費額の合計", DUES)["op"] == "groupby_agg"


def test_a_quoted_column_holding_a_quoted_word() -> None:
    # before: 「摘要」 closed by 」 hid the condition and 摘要 became a grouping
    spec = acted_spec("「摘要」に「ｱｵﾊﾞ」が含まれる行の入金額を合計して", DUES)
    assert spec["op"] == "total"
    assert spec["filters"] == [{"col": "摘要", "op": "contains", "value": "アオバ"}]


BILLS = dataset_summary(
    400,
    [
        ("請求番号", "text", ["UB-0001", "UB-0002"], 400),
        ("拠点", "categorical", ["東京本社", "名古屋支店", "札幌営業所", "横浜倉庫"], 4),
        ("種別", "categorical", ["電気", "ガス", "水道"], 3),
        ("供給会社", "categorical", ["札幌ガス", "東邦ガス", "東京電力"], 3),
        ("使用月", "datetime", ["2024-04-01", "2025-03-01"], 12),
        ("請求金額", "numeric", ["12000", "480000"], 300),
        ("源泉徴収税額", "numeric", ["0", "10210"], 20),
        ("仕訳済", "boolean", ["True", "False"], 2),
    ],
    "ds_bills",
)


def test_a_value_said_by_its_first_word() -> None:
    # before: 「名古屋」 was read as nothing: the total of every site
    spec = acted_spec("名古屋のガスの請求金額合計", BILLS)
    assert {(f["col"], f["value"]) for f in spec["filters"]} == {
        ("拠点", "名古屋支店"),
        ("種別", "ガス"),
    }
    # 「札幌」 begins a site and a supplier: asked, never guessed
    decision = decide("札幌の請求金額の合計", BILLS)
    assert decision.next_action == "ask"
    assert any("札幌営業所" in q and "札幌ガス" in q for q in decision.clarifying_questions)


def test_english_reaches_japanese_columns_and_values() -> None:
    # before: every one of these asked which column was meant, or dropped the value
    spec = acted_spec("What's the total withholding tax for the Nagoya branch?", BILLS)
    assert spec["metrics"] == {"源泉徴収税額": ["sum"]}
    assert spec["filters"] == [{"col": "拠点", "op": "==", "value": "名古屋支店"}]
    spec = acted_spec("How many bills are not journalized yet?", BILLS)
    assert spec["filters"] == [{"col": "仕訳済", "op": "==", "value": False}]
    spec = acted_spec("Total 請求金額 for electricity at the Tokyo head office", BILLS)
    assert {(f["col"], f["value"]) for f in spec["filters"]} == {
        ("拠点", "東京本社"),
        ("種別", "電気"),
    }


def test_follow_ups_keep_a_chart_and_the_year_of_the_period() -> None:
    bars = {"type": "plot", "kind": "bar", "x": "種別", "y": None, "agg": "count", "filters": []}
    # before: 「同じグラフ」 on a chart asked which category to chart
    spec = spec_of(
        decide_after("種別ごとの件数を棒グラフで", bars, "ガス以外で同じグラフを作って", BILLS)
    )
    assert spec["kind"] == "bar" and spec["x"] == "種別"
    assert spec["filters"] == [{"col": "種別", "op": "!=", "value": "ガス"}]
    august = {
        "type": "analysis",
        "op": "total",
        "metrics": {"請求金額": ["sum"]},
        "filters": [
            {"col": "使用月", "op": ">=", "value": "2024-08-01"},
            {"col": "使用月", "op": "<", "value": "2024-09-01"},
        ],
    }
    spanning = {
        **BILLS,
        "columns": [
            {**c, "examples": ["2023-10-01", "2025-03-01"]} if c["name"] == "使用月" else c
            for c in BILLS["columns"]
        ],
    }
    # before: the data holds two Septembers, so the month's year was asked
    spec = spec_of(
        decide_after("Total 請求金額 for August 2024", august, "and September?", spanning)
    )
    assert spec["filters"] == [{"col": "使用月", "op": "==", "value": "2024-09"}]


def test_blank_said_in_more_words_and_a_guessed_word_does_not_group() -> None:
    # before: 「記録されていない」 was no blank; 「会費分」 (~ 会員種別? no: guessed) grouped
    spec = acted_spec("集金担当が記録されていない会費分の入金額、合計でいくら？", DUES)
    assert spec["op"] == "total" and spec["filters"] == [{"col": "集金担当", "op": "is_null"}]
    spec = acted_spec("What's the average amount where no department is assigned?", GRANTS)
    assert spec["filters"] == [{"col": "department", "op": "is_null"}]


def test_a_year_and_its_month_and_the_same_month_of_another_year() -> None:
    spec = acted_spec("2025年の3月の会費額合計", DUES)
    assert spec["filters"] == [{"col": "請求月", "op": "==", "value": "2025-03"}]
    july = {
        "type": "analysis",
        "op": "total",
        "metrics": {"請求金額": ["sum"]},
        "filters": [{"col": "使用月", "op": "==", "value": "2024-07"}],
    }
    # before: the whole of 2025 was added to July 2024: no row could match
    spec = spec_of(decide_after("2024年7月分の請求金額合計", july, "2025年の同じ月は？", BILLS))
    assert spec["filters"] == [{"col": "使用月", "op": "==", "value": "2025-07"}]


def test_english_around_a_japanese_value_and_plural_readings() -> None:
    # before: "the 支部 rows" read 東支部 as a common noun; "sole proprietors" read nothing
    spec = acted_spec("Total 会費額 for only the 東支部 rows", DUES)
    assert spec["filters"] == [{"col": "支部", "op": "==", "value": "東支部"}]
    spec = acted_spec("How many bills are for Nagoya branches?", BILLS)
    assert spec["filters"] == [{"col": "拠点", "op": "==", "value": "名古屋支店"}]


TOLLS = dataset_summary(
    1200,
    [
        ("明細番号", "text", ["T-0001", "T-0002"], 1200),
        ("車両番号", "text", ["品川 300 あ 12-34", "練馬 400 さ 56-78"], 30),
        ("顧客コード", "text", ["C001", "C002"], 300),
        ("利用部署", "categorical", ["営業部", "物流部"], 2),
        ("精算区分", "categorical", ["会社負担", "本人負担"], 2),
        ("評価", "categorical", ["A", "B", "C", "D"], 4),
        ("確認ステータス", "categorical", ["済", "未"], 2),
        ("延滞金", "numeric", ["0", "500"], 3),
        ("総支給額", "numeric", ["100000", "900000"], 300),
        ("差引支給額", "numeric", ["80000", "700000"], 300),
        ("請求額", "numeric", ["300", "9800"], 400),
    ],
    "ds_tolls",
)


def test_counts_of_things_an_identifier_names_and_charges_incurred() -> None:
    # before: the rows were counted, not the vehicles; 「かかった」 read no condition
    spec = acted_spec("物流部が使った車両は何台？", TOLLS)
    assert spec["metrics"] == {"車両番号": ["nunique"]}
    assert spec["filters"] == [{"col": "利用部署", "op": "==", "value": "物流部"}]
    spec = acted_spec("延滞金がかかった明細は何件？", TOLLS)
    assert spec["op"] == "total" and spec["filters"] == [{"col": "延滞金", "op": ">", "value": 0}]
    assert acted_spec("車両ごとの請求額合計", TOLLS)["group_cols"] == ["車両番号"]


def test_groupings_said_as_a_combination_and_identifiers_never_implied() -> None:
    spec = acted_spec("精算区分と利用部署の組み合わせで請求額を合計して", TOLLS)
    assert spec["group_cols"] == ["精算区分", "利用部署"]
    spec = acted_spec("車両番号と利用部署の組み合わせで重複がないか調べて", TOLLS)
    assert spec["op"] == "duplicate_check" and spec["subset"] == ["車両番号", "利用部署"]
    # before: a table per 顧客コード; the one-letter value was not read
    spec = acted_spec("評価がＤの顧客の請求額合計", TOLLS)
    assert spec["op"] == "total" and spec["filters"] == [{"col": "評価", "op": "==", "value": "D"}]


def test_pay_words_a_verb_beside_a_key_and_writing_to_a_system() -> None:
    assert acted_spec("営業部は平均いくら？額面で", TOLLS)["metrics"] == {"総支給額": ["mean"]}
    assert acted_spec("手取りの最低額は？", TOLLS)["metrics"] == {"差引支給額": ["min"]}
    # before: 「確認」 made 確認ステータス a second key
    spec = acted_spec("明細番号がダブってないか確認お願いします", TOLLS)
    assert spec["subset"] == ["明細番号"]
    decision = decide("Update the toll amounts in our ERP with these figures", TOLLS)
    assert decision.next_action == "out_of_scope"


def test_an_english_identifier_names_the_things_it_counts() -> None:
    trips = dataset_summary(
        3000,
        [
            ("trip_no", "text", ["T1", "T2"], 3000),
            ("vehicle_id", "categorical", ["V01", "V02"], 40),
            ("depot", "categorical", ["North", "South"], 2),
            ("distance_km", "numeric", ["12", "480"], 900),
        ],
        "ds_trips",
    )
    # before: "vehicles" named no column, so the grouping was asked
    spec = acted_spec("Top 10 vehicles by distance driven", trips)
    assert spec["group_cols"] == ["vehicle_id"] and spec["top_k"] == 10


def test_japanese_reaches_english_columns() -> None:
    reviews = dataset_summary(
        700,
        [
            ("review_id", "text", ["R1", "R2"], 700),
            ("industry", "categorical", ["Retail", "Construction"], 2),
            ("approved_limit", "numeric", ["0", "50000000"], 300),
            ("requested_limit", "numeric", ["0", "80000000"], 300),
            ("collateral_held", "boolean", ["True", "False"], 2),
            ("data_used_gb", "numeric", ["0.5", "40"], 300),
        ],
        "ds_reviews",
    )
    # before: 担保 named nothing, so every review was counted
    spec = acted_spec("担保なしの審査って何件ありますか？", reviews)
    assert spec["filters"] == [{"col": "collateral_held", "op": "==", "value": False}]
    assert acted_spec("承認限度額の合計は？", reviews)["metrics"] == {"approved_limit": ["sum"]}
    assert acted_spec("業種別の申請限度額の平均", reviews)["group_cols"] == ["industry"]
    assert acted_spec("データ使用量の合計は何GB？", reviews)["metrics"] == {"data_used_gb": ["sum"]}


PARCELS = dataset_summary(
    2000,
    [
        ("発送番号", "text", ["P-0001", "P-0002"], 2000),
        ("配送業者", "categorical", ["佐川急便", "ヤマト運輸", "日本郵便"], 3),
        ("宛先区分", "categorical", ["取引先", "個人顧客", "官公庁"], 3),
        ("承認状況", "categorical", ["承認待ち", "承認済", "却下"], 3),
        ("至急", "boolean", ["True", "False"], 2),
        ("重量(g)", "numeric", ["20", "9000"], 900),
        ("見積金額", "numeric", ["500", "90000"], 800),
        ("合計料金", "numeric", ["84", "3000"], 300),
        ("売上（千円）", "numeric", ["1", "9000"], 800),
        ("作業時間_分", "numeric", ["5", "300"], 200),
    ],
    "ds_parcels",
)


def test_a_number_said_in_a_unit_is_read_in_the_column_unit() -> None:
    # before: 500万円 compared with a column in 千円 as 5,000,000; kg and 時間 were unread
    for text, column, value in (
        ("売上が500万円以上の発送は何件？", "売上（千円）", 5000),
        ("500万円以上の売上の発送は何件？", "売上（千円）", 5000),
        ("重さが1kg以上の発送は何件？", "重量(g)", 1000),
        ("重量が2キロ以上は何件？", "重量(g)", 2000),
        ("作業時間が2時間を超える発送は何件？", "作業時間_分", 120),
        ("How many with 見積金額 over 2 million yen?", "見積金額", 2_000_000),
    ):
        spec = acted_spec(text, PARCELS)
        assert [(f["col"], f["value"]) for f in spec["filters"]] == [(column, value)], text
    # a bare number is in the column's unit already
    spec = acted_spec("売上（千円）が5000以上の件数", PARCELS)
    assert spec["filters"][0]["value"] == 5000


def test_english_reaches_japanese_names_values_and_carriers() -> None:
    spec = acted_spec("What's the highest estimated amount?", PARCELS)
    assert spec["metrics"] == {"見積金額": ["max"]}
    spec = acted_spec("How many urgent parcels are still waiting for approval?", PARCELS)
    assert {(f["col"], f["value"]) for f in spec["filters"]} == {
        ("至急", True),
        ("承認状況", "承認待ち"),
    }
    spec = acted_spec("Average weight of the parcels sent via Sagawa?", PARCELS)
    assert spec["metrics"] == {"重量(g)": ["mean"]}
    assert spec["filters"] == [{"col": "配送業者", "op": "==", "value": "佐川急便"}]
    # a value beats a word only inside another column's name (取引先 ~ 配送業者)
    spec = acted_spec("取引先宛ての合計料金の合計", PARCELS)
    assert spec["filters"] == [{"col": "宛先区分", "op": "==", "value": "取引先"}]


def test_past_extremes_added_exclusions_and_actions_on_records() -> None:
    # before: 「いちばん高かった」 summed
    spec = acted_spec("官公庁宛てで、いちばん高かった合計料金はいくら？", PARCELS)
    assert spec["metrics"] == {"合計料金": ["max"]}
    # before: 「…のものも除外」 kept only those rows
    spec = acted_spec("承認状況が却下のものも除外して合計料金の合計", PARCELS)
    assert spec["filters"] == [{"col": "承認状況", "op": "!=", "value": "却下"}]
    assert decide("Please approve all the pending parcels", PARCELS).next_action == "out_of_scope"
    assert decide("How many parcels were sent by email as PDF?", PARCELS).next_action != (
        "out_of_scope"
    )
    decision = decide("How many different people handled parcels?", PARCELS)
    assert decision.next_action == "ask"
    assert "of of" not in decision.clarifying_questions[0]


def test_an_amount_said_with_a_verb_and_a_thing_not_tied_to_anything() -> None:
    claims = dataset_summary(
        900,
        [
            ("claim_id", "text", ["C1", "C2"], 900),
            ("benefit_type", "categorical", ["Medical", "Childcare"], 2),
            ("project", "categorical", ["P1", "P2"], 2),
            ("claimed_amount", "numeric", ["1000", "90000"], 500),
            ("approved_amount", "numeric", ["0", "90000"], 500),
        ],
        "ds_claims",
    )
    # before: asked which column (the yen amount was unread), then took the main amount
    spec = acted_spec("Median approved amount where more than 10,000 yen was claimed", claims)
    assert spec["metrics"] == {"approved_amount": ["median"]}
    assert spec["filters"] == [{"col": "claimed_amount", "op": ">", "value": 10000}]
    spec = acted_spec("How many claims that aren't tied to any project?", claims)
    assert spec["filters"] == [{"col": "project", "op": "is_null"}]
    spec = acted_spec(
        "プロジェクトに紐づいていない支払の件数",
        TOLLS
        | {
            "columns": [
                *TOLLS["columns"],
                {
                    "name": "プロジェクト",
                    "kind": "categorical",
                    "missing": 40,
                    "unique": 3,
                    "examples": ["A", "B", "C"],
                },
            ]
        },
    )
    assert spec["filters"] == [{"col": "プロジェクト", "op": "is_null"}]


ADVANCES = dataset_summary(
    900,
    [
        ("前受番号", "text", ["AR-001", "AR-002"], 900),
        ("得意先コード", "text", ["C001", "C002"], 120),
        ("得意先名", "categorical", ["青葉商事", "北斗物産"], 118),
        ("取引区分", "categorical", ["保守契約", "工事着手金"], 2),
        ("入金日", "datetime", ["2024-04-01", "2025-09-30"], 300),
        ("入金額", "numeric", ["10000", "9000000"], 600),
        ("前受残高", "numeric", ["0", "9000000"], 600),
        ("返金有無", "boolean", ["True", "False"], 2),
        ("支払済", "boolean", ["True", "False"], 2),
        ("出張費", "numeric", ["0", "8000"], 4),
        ("経理担当", "categorical", ["小林", "森"], 2),
    ],
    "ds_advances",
)


def test_done_columns_said_as_not_yet_and_flags_said_by_their_thing() -> None:
    # before: 「支払いが済んでない」「未払い」 counted the paid rows
    for text in (
        "まだ支払いが済んでない案件って何件？",
        "未払いの入金額の合計",
        "逆に未払いのほうは何件？",
    ):
        spec = acted_spec(text, ADVANCES)
        assert {"col": "支払済", "op": "==", "value": False} in spec["filters"], text
    # before: 「返金」 named no column
    spec = acted_spec("返金が発生した案件はいくつありますか", ADVANCES)
    assert spec["filters"] == [{"col": "返金有無", "op": "==", "value": True}]
    spec = acted_spec("経理担当が未割当になってる分の入金額を合計して", ADVANCES)
    assert spec["op"] == "total" and spec["filters"] == [{"col": "経理担当", "op": "is_null"}]


def test_guessed_measures_keys_and_quoted_equalities() -> None:
    # before: 「前受金」 (~ 前受残高) was summed beside 入金額, or instead of counting
    assert acted_spec("2025年3月に入金された前受金の入金額合計", ADVANCES)["metrics"] == {
        "入金額": ["sum"]
    }
    spec = acted_spec("保守契約の前受、件数はどれくらい？", ADVANCES)
    assert spec["metrics"] == {} and spec["op"] == "total"
    # before: 得意先名 was counted, not the code said
    spec = acted_spec("得意先の数を、得意先コードで数えてもらえますか", ADVANCES)
    assert spec["metrics"] == {"得意先コード": ["nunique"]}
    # before: the 」 hid the condition
    spec = acted_spec("「出張費」が８０００円の件数は？", ADVANCES)
    assert spec["filters"] == [{"col": "出張費", "op": "==", "value": 8000}]
    assert decide("前受残高を会計システムに仕訳として登録しておいて", ADVANCES).next_action == (
        "out_of_scope"
    )


def test_a_verb_of_a_date_with_its_period_is_no_measure() -> None:
    licences = dataset_summary(
        480,
        [
            ("licence_id", "text", ["L1", "L2"], 480),
            ("purchase_date", "datetime", ["2023-01-05", "2025-06-30"], 300),
            ("seats_purchased", "numeric", ["1", "500"], 80),
            ("annual_cost_jpy", "numeric", ["1000", "9000000"], 300),
            ("offer_salary", "numeric", ["300", "900"], 50),
        ],
        "ds_licences",
    )
    spec = acted_spec("Sum of annual cost for licences purchased in 2024", licences)
    assert spec["metrics"] == {"annual_cost_jpy": ["sum"]}
    assert acted_spec("total seats purchased", licences)["metrics"] == {"seats_purchased": ["sum"]}
    assert acted_spec("年額コストが100万円以上は何件？", licences)["filters"] == [
        {"col": "annual_cost_jpy", "op": ">=", "value": 1_000_000}
    ]
    offers = dataset_summary(
        50,
        [("ID", "text", ["1", "2"], 50), ("提示年収（万円）", "numeric", ["300", "900"], 40)],
        "o",
    )
    # before: 600万 was compared as 6,000,000 with a column in 万円
    assert acted_spec("提示年収600万以上のオファーは何件？", offers)["filters"] == [
        {"col": "提示年収（万円）", "op": ">=", "value": 600}
    ]


def test_a_two_digit_year_is_read_only_where_the_data_has_it() -> None:
    # before: 「24年4月～25年3月」 was asked although the data runs through 2024 and 2025
    spec = acted_spec("2024年度（24年4月～25年3月）の入金額っていくら？", ADVANCES)
    assert spec["filters"] == [
        {"col": "入金日", "op": ">=", "value": "2024-04-01"},
        {"col": "入金日", "op": "<", "value": "2025-04-01"},
    ]
    assert acted_spec("24年10月以降の入金額合計", ADVANCES)["filters"] == [
        {"col": "入金日", "op": ">=", "value": "2024-10-01"}
    ]
    # no date in 2030, and 「24年度」 alone stays a question
    assert decide("30年4月の入金額合計", ADVANCES).next_action == "ask"
    assert decide("24年度の入金額合計", ADVANCES).next_action == "ask"


SEMINARS = dataset_summary(
    2400,
    [
        ("申込番号", "text", ["S-1", "S-2"], 2400),
        ("紹介経路", "categorical", ["展示会", "Web広告", "紹介"], 3),
        ("年度", "categorical", ["2023年度", "2024年度", "2025年度"], 3),
        ("リスク評価", "categorical", ["高", "中", "低"], 3),
        ("対応期限", "datetime", ["2024-04-30", "2025-09-30"], 40),
        ("入金日", "datetime", ["2024-04-01", "2025-09-30"], 400),
        ("セミナー名", "text", ["インボイス入門", "電帳法実務"], 60),
        ("受講料", "numeric", ["0", "30000"], 5),
        ("入金額", "numeric", ["0", "30000"], 50),
        ("owner", "categorical", ["Ito", "Mori"], 2),
    ],
    "ds_seminars",
)


def test_blanks_of_the_grouping_are_a_group_of_their_own() -> None:
    # before: each of these kept only the blank rows
    for text in (
        "紹介経路別の入金額合計を多い順に。紹介経路が未入力のものも分かるようにしてほしいです",
        "紹介経路ごとの入金額合計（紹介経路が空欄のものも一つの区分として見たいです）",
        "Rank owners by total 入金額. Lines without an owner should show up as their own group.",
    ):
        spec = acted_spec(text, SEMINARS)
        assert spec["op"] == "groupby_agg" and spec["filters"] == [], text
    # said to be the only rows, the blanks stay a condition
    spec = acted_spec("紹介経路が空欄のものだけ、紹介経路別の入金額合計", SEMINARS)
    assert spec["filters"] == [{"col": "紹介経路", "op": "is_null"}]


def test_values_ends_of_months_free_and_period_like_categories() -> None:
    spec = acted_spec("リスク評価が高で、入金額の合計は？", SEMINARS)
    assert spec["filters"] == [{"col": "リスク評価", "op": "==", "value": "高"}]
    spec = acted_spec("対応期限が2025年3月末までの件数", SEMINARS)
    assert spec["filters"] == [{"col": "対応期限", "op": "<", "value": "2025-04-01"}]
    spec = acted_spec("受講料が無料（0円）の申込は何件？", SEMINARS)
    assert spec["filters"] == [{"col": "受講料", "op": "==", "value": 0}]
    # before: read as the fiscal year's dates of the first date column
    spec = acted_spec("2024年度分の入金額の合計", SEMINARS)
    assert spec["filters"] == [{"col": "年度", "op": "==", "value": "2024年度"}]
    spec = acted_spec("列「セミナー名」に『インボイス』が含まれる申込の件数", SEMINARS)
    assert spec["filters"] == [{"col": "セミナー名", "op": "contains", "value": "インボイス"}]


def test_the_next_month_and_a_conditional_to() -> None:
    may = {
        "type": "analysis",
        "op": "total",
        "metrics": {"入金額": ["sum"]},
        "filters": [
            {"col": "入金日", "op": ">=", "value": "2024-05-01"},
            {"col": "入金日", "op": "<", "value": "2024-06-01"},
        ],
    }
    spec = spec_of(decide_after("2024年5月の入金額合計", may, "翌月の分もお願いします", SEMINARS))
    assert spec["filters"] == [
        {"col": "入金日", "op": ">=", "value": "2024-06-01"},
        {"col": "入金日", "op": "<", "value": "2024-07-01"},
    ]
    # before: 「…別だと、」 split the request and the average was lost
    spec = acted_spec("紹介経路別だと、入金額の平均はどうなってますか", SEMINARS)
    assert spec["metrics"] == {"入金額": ["mean"]}


def test_the_bare_word_for_money_is_asked_when_two_columns_hold_money() -> None:
    findings = dataset_summary(
        400,
        [
            ("指摘番号", "text", ["F-1", "F-2"], 400),
            ("対象部署", "categorical", ["経理部", "購買部"], 2),
            ("影響額（千円）", "numeric", ["0", "9000"], 300),
            ("是正費用（千円）", "numeric", ["0", "800"], 200),
        ],
        "ds_findings",
    )
    # before: 「金額」 silently named 影響額 (its 額) although 是正費用 is money too
    assert decide("部署別に指摘の金額を合計してほしい", findings).next_action == "ask"
    assert acted_spec("部署別に影響額を合計", findings)["metrics"] == {"影響額（千円）": ["sum"]}


SCRAP = dataset_summary(
    960,
    [
        ("伝票番号", "text", ["D-1", "D-2"], 960),
        ("加盟店コード", "text", ["F01", "F02"], 120),
        ("品目", "categorical", ["鉄くず", "銅線"], 2),
        ("機種区分", "categorical", ["飲料", "食品・菓子"], 2),
        ("担当SV", "categorical", ["小野", "井上"], 2),
        ("貸付日", "datetime", ["2023-04-01", "2025-09-30"], 300),
        ("重量(kg)", "numeric", ["10", "9000"], 800),
        ("単価(円/kg)", "numeric", ["20", "900"], 80),
        ("稼働時間", "numeric", ["0.5", "40"], 80),
        ("貸付額", "numeric", ["10000", "3000000"], 300),
        ("報酬区分", "categorical", ["着手金", "タイムチャージ"], 2),
        ("報酬額（税抜）", "numeric", ["10000", "900000"], 300),
        ("支払額", "numeric", ["10000", "990000"], 300),
        ("計量証明書あり", "boolean", ["True", "False"], 2),
    ],
    "ds_scrap",
)


def test_counters_units_and_verbs_name_the_measure() -> None:
    # before: 「何店舗」 named 店舗…; 「何kg」「何時間」 counted rows; 「貸し付けた総額」 was asked
    spec = acted_spec("鉄くずって全部で何kg売りました？", SCRAP)
    assert spec["metrics"] == {"重量(kg)": ["sum"]}
    spec = acted_spec("タイムチャージの稼働時間って全部で何時間？", SCRAP)
    assert spec["metrics"] == {"稼働時間": ["sum"]}
    spec = acted_spec("2024年に貸し付けた総額っていくらでしたっけ", SCRAP)
    assert spec["metrics"] == {"貸付額": ["sum"]}
    assert {f["col"] for f in spec["filters"]} == {"貸付日"}
    # before: 支払額 (the data's amount) instead of the 報酬額（税抜） said
    spec = acted_spec("着手金の報酬（税抜）は合計でいくら？", SCRAP)
    assert spec["metrics"] == {"報酬額（税抜）": ["sum"]}


def test_keys_latin_parts_and_things_attached() -> None:
    spec = acted_spec("SV未割当ての加盟店って何店舗あります？", SCRAP)
    assert spec["metrics"] == {"加盟店コード": ["nunique"]}
    assert spec["filters"] == [{"col": "担当SV", "op": "is_null"}]
    spec = acted_spec("加盟店コードベースで、加盟店は何件ある？", SCRAP)
    assert spec["metrics"] == {"加盟店コード": ["nunique"]}
    spec = acted_spec("計量証明書が付いてない取引って何件ある？", SCRAP)
    assert spec["filters"] == [{"col": "計量証明書あり", "op": "==", "value": False}]
    spec = acted_spec("食品・菓子の機種は除いて重量の合計", SCRAP)
    assert spec["filters"] == [{"col": "機種区分", "op": "!=", "value": "食品・菓子"}]
    spec = acted_spec("同じ伝票番号で同じ貸付日のものが2件ないかチェック", SCRAP)
    assert spec["op"] == "duplicate_check"


def test_follow_ups_of_a_year_and_a_top_n_in_full_width() -> None:
    year = {
        "type": "analysis",
        "op": "total",
        "metrics": {},
        "filters": [
            {"col": "貸付日", "op": ">=", "value": "2023-01-01"},
            {"col": "貸付日", "op": "<", "value": "2024-01-01"},
        ],
    }
    # before: 2025 was added to 2023: no row could match
    spec = spec_of(decide_after("2023年に貸し付けた件数は？", year, "2025年だと？", SCRAP))
    assert spec["filters"] == [{"col": "貸付日", "op": "==", "value": "2025"}]
    total = {"type": "analysis", "op": "total", "metrics": {"支払額": ["sum"]}, "filters": []}
    spec = spec_of(
        decide_after("支払額の合計", total, "それを品目別に。上位３つだけでいいです", SCRAP)
    )
    assert spec["group_cols"] == ["品目"] and spec["top_k"] == 3


def test_generic_money_words_exclusions_said_as_done_and_regrouping() -> None:
    scrap = dataset_summary(
        900,
        [
            ("伝票番号", "text", ["D-1", "D-2"], 900),
            ("品目", "categorical", ["鉄くず", "銅線"], 2),
            ("状態", "categorical", ["完済", "返済中", "延滞"], 3),
            ("事務所名", "categorical", ["青葉法律事務所", "北斗総合法律事務所"], 2),
            ("売却額", "numeric", ["100", "90000"], 500),
            ("運搬費", "numeric", ["0", "5000"], 50),
            ("差引入金額", "numeric", ["100", "90000"], 500),
            ("入金額", "numeric", ["100", "90000"], 500),
        ],
        "ds_scrap2",
    )
    # before: 「金額」 was guessed as 差引入金額 among three money columns
    assert decide("品目別に金額を合計して", scrap).next_action == "ask"
    assert acted_spec("品目別に入ってきた金額を合計して", scrap)["metrics"] == {"入金額": ["sum"]}
    # before: 「完済したものは除いて」 kept only the repaid rows
    spec = acted_spec("完済したものは除いて売却額の合計", scrap)
    assert spec["filters"] == [{"col": "状態", "op": "!=", "value": "完済"}]
    total = {"type": "analysis", "op": "total", "metrics": {"売却額": ["sum"]}, "filters": []}
    # before: 「事務所別」 read whole by similarity was no grouping: the request ran alone
    spec = spec_of(decide_after("売却額の合計は？", total, "それを事務所別に", scrap))
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["事務所名"]


ADVANCES2 = dataset_summary(
    1300,
    [
        ("仮払番号", "text", ["K-1", "K-2"], 1300),
        ("社員番号", "text", ["E001", "E002"], 240),
        ("所属部門", "categorical", ["営業部", "総務部"], 2),
        ("資格名", "categorical", ["税理士", "簿記1級"], 2),
        ("物件名", "categorical", ["天神ビル", "博多ビル"], 2),
        ("支給月", "datetime", ["2024-04-01", "2025-09-01"], 18),
        ("仮払日", "datetime", ["2024-04-03", "2025-09-28"], 400),
        ("仮払額", "numeric", ["1000", "300000"], 800),
        ("精算額", "numeric", ["1000", "300000"], 800),
        ("手当月額", "numeric", ["5000", "30000"], 6),
        ("戻入済", "boolean", ["True", "False"], 2),
    ],
    "ds_advances2",
)


def test_people_money_nouns_and_amounts_to_compare() -> None:
    # before: rows were counted, or 手当月額's distinct values
    spec = acted_spec("税理士の手当をもらってる人って何人？", ADVANCES2)
    assert spec["metrics"] == {"社員番号": ["nunique"]}
    # before: 「仮払い」 asked which column beside 精算額
    spec = acted_spec("営業部の仮払いって平均いくらくらい？", ADVANCES2)
    assert spec["metrics"] == {"仮払額": ["mean"]}
    # before: a bar of row counts for 「金額を比べたい」
    assert decide("物件ごとの金額を比べたい", ADVANCES2).next_action == "ask"
    spec = acted_spec("仮払データって全部で何行ある？", ADVANCES2)
    assert spec["op"] == "total" and spec["metrics"] == {}
    spec = acted_spec("まだ戻入していないものの仮払額合計", ADVANCES2)
    assert spec["filters"] == [{"col": "戻入済", "op": "==", "value": False}]
    assert decide("この結果を会計システムに仕訳として登録しといて", ADVANCES2).next_action == (
        "out_of_scope"
    )


def test_follow_ups_that_replace_or_add_a_grouping_or_draw_a_line() -> None:
    by_dept = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["所属部門"],
        "metrics": {"仮払額": ["sum"]},
        "filters": [],
    }
    spec = spec_of(
        decide_after("部門別の仮払額", by_dept, "部門ごとじゃなくて、資格名ごとで見せて", ADVANCES2)
    )
    assert spec["group_cols"] == ["資格名"]
    spec = spec_of(
        decide_after("部門別の仮払額", by_dept, "物件名も加えて分けてください", ADVANCES2)
    )
    assert spec["group_cols"] == ["所属部門", "物件名"]
    by_month = {**by_dept, "group_cols": ["支給月"], "metrics": {"手当月額": ["sum"]}}
    spec = spec_of(
        decide_after("支給月ごとの手当月額", by_month, "それを折れ線グラフにして", ADVANCES2)
    )
    assert spec["kind"] == "line" and spec["x"] == "支給月" and spec["y"] == "手当月額"


def test_japanese_on_an_english_export_and_english_superlatives() -> None:
    exports = dataset_summary(
        960,
        [
            ("shipment_id", "text", ["X-1", "X-2"], 960),
            ("destination_country", "categorical", ["Mexico", "Vietnam"], 2),
            ("forwarder", "categorical", ["Nippon Express", "Kintetsu"], 2),
            ("gross_weight_kg", "numeric", ["10", "9000"], 800),
            ("freight_jpy", "numeric", ["1000", "900000"], 800),
            ("invoice_value_jpy", "numeric", ["1000", "9000000"], 800),
            ("approver", "categorical", ["Ito", "Mori"], 2),
        ],
        "ds_exports",
    )
    assert acted_spec("フォワーダー別に総重量を合計して", exports)["group_cols"] == ["forwarder"]
    spec = acted_spec("仕向国別のインボイス金額の合計", exports)
    assert spec["group_cols"] == ["destination_country"]
    assert spec["metrics"] == {"invoice_value_jpy": ["sum"]}
    spec = acted_spec("What's the heaviest single shipment we sent, in kg?", exports)
    assert spec["metrics"] == {"gross_weight_kg": ["max"]}
    spec = acted_spec("Count the entries where the approver field has been filled in", exports)
    assert spec["filters"] == [{"col": "approver", "op": "not_null"}]


def test_english_loanwords_reach_katakana_values_and_names() -> None:
    from keiri_agent.agents.analysis.reasoning.offline.katakana import skeleton

    assert skeleton("operator") == skeleton("オペレーター")
    assert skeleton("referral") == skeleton("リファラル")
    hires = dataset_summary(
        640,
        [
            ("採用番号", "text", ["H-1", "H-2"], 640),
            ("採用チャネル", "categorical", ["リファラル", "求人広告", "人材紹介"], 3),
            ("オペレーター", "categorical", ["北斗サービス", "青葉ベンディング"], 2),
            ("採用人数", "numeric", ["1", "3"], 3),
            ("手数料額", "numeric", ["0", "900000"], 300),
        ],
        "ds_hires",
    )
    # before: "through referrals" was dropped and every row counted
    spec = acted_spec("How many hires came through referrals?", hires)
    assert spec["filters"] == [{"col": "採用チャネル", "op": "==", "value": "リファラル"}]
    spec = acted_spec("Average commission amount per operator", hires)
    assert spec["group_cols"] == ["オペレーター"] and spec["metrics"] == {"手数料額": ["mean"]}


def test_litres_counters_curly_quotes_and_yen_first() -> None:
    fuel = dataset_summary(
        2000,
        [
            ("利用番号", "text", ["U-1", "U-2"], 2000),
            ("カード番号", "text", ["C-1", "C-2"], 60),
            ("車両番号", "text", ["品川 1", "品川 2"], 40),
            ("油種", "categorical", ["軽油", "レギュラー"], 2),
            ("協賛先", "categorical", ["市民マラソン実行委員会", "商店会"], 80),
            ("イベント名", "text", ["春のマラソン", "夏祭り"], 200),
            ("勘定科目", "categorical", ["広告宣伝費", "寄付金"], 2),
            ("給油量（L）", "numeric", ["10", "80"], 500),
            ("利用金額", "numeric", ["1000", "12000"], 900),
        ],
        "ds_fuel",
    )
    assert acted_spec("軽油の給油量って全部で何リットル？", fuel)["metrics"] == {
        "給油量（L）": ["sum"]
    }
    spec = acted_spec("1回あたりの給油量が50L以上だった件数", fuel)
    assert spec["filters"] == [{"col": "給油量（L）", "op": ">=", "value": 50}]
    assert acted_spec("カードを使った車両は何台ありますか？", fuel)["metrics"] == {
        "車両番号": ["nunique"]
    }
    assert acted_spec("協賛先は全部で何団体？", fuel)["metrics"] == {"協賛先": ["nunique"]}
    spec = acted_spec("「イベント名」に“マラソン”が入っている件数", fuel)
    assert spec["filters"] == [{"col": "イベント名", "op": "contains", "value": "マラソン"}]
    spec = acted_spec("勘定科目がまだ付いていない利用金額の合計", fuel)
    assert spec["filters"] == [{"col": "勘定科目", "op": "is_null"}]
    remit = dataset_summary(
        800,
        [
            ("remittance_id", "text", ["R-1", "R-2"], 800),
            ("amount_fc", "numeric", ["100", "90000"], 700),
            ("amount_jpy", "numeric", ["10000", "9000000"], 700),
            ("bank_fee_jpy", "numeric", ["2500", "4000"], 3),
            ("beneficiary_country", "categorical", ["TH", "US"], 2),
        ],
        "ds_remit",
    )
    assert acted_spec("total yen amount", remit)["metrics"] == {"amount_jpy": ["sum"]}
    assert decide("How much did we send to TH in total?", remit).next_action != "out_of_scope"
    assert decide("Release the pending remittances today", remit).next_action == "out_of_scope"


def test_the_amount_word_is_asked_between_two_filled_money_columns() -> None:
    cards = dataset_summary(
        900,
        [
            ("利用番号", "text", ["U-1", "U-2"], 900),
            ("区分", "categorical", ["見舞金", "祝い金"], 2),
            ("利用金額", "numeric", ["1000", "90000"], 800),
            ("請求金額", "numeric", ["1000", "90000"], 800),
            ("包み金額", "numeric", ["5000", "30000"], 6),
        ],
        "ds_cards2",
    )
    # before: 利用金額 was assumed although 請求金額 is as filled in
    assert decide("金額の合計っていくら？", cards).next_action == "ask"
    spec = acted_spec("見舞金で包んだ金額の最小はいくら", cards)
    assert spec["metrics"] == {"包み金額": ["min"]}


def test_a_yes_no_column_is_no_condition_when_only_its_shared_word_is_said() -> None:
    refunds = dataset_summary(
        2300,
        [
            ("返金番号", "text", ["R-1", "R-2"], 2300),
            ("販売チャネル", "categorical", ["楽天市場", "自社EC"], 2),
            ("一部返金", "boolean", ["True", "False"], 2),
            ("返金額", "numeric", ["100", "90000"], 900),
        ],
        "ds_refunds",
    )
    purchases = dataset_summary(
        1500,
        [
            ("line_id", "text", ["L1", "L2"], 1500),
            ("is_spot_purchase", "boolean", ["True", "False"], 2),
            ("weight_kg", "numeric", ["1", "900"], 700),
        ],
        "ds_purchases",
    )
    # before: 「返金」 kept only the partial refunds; "purchase" only the spot purchases
    assert acted_spec("チャネル別の返金件数を棒グラフで", refunds)["filters"] == []
    spec = acted_spec("Show the distribution of purchase weights as a histogram", purchases)
    assert spec["filters"] == []
    assert acted_spec("一部返金の件数は？", refunds)["filters"] == [
        {"col": "一部返金", "op": "==", "value": True}
    ]
    assert acted_spec("How many spot purchases?", purchases)["filters"] == [
        {"col": "is_spot_purchase", "op": "==", "value": True}
    ]
    # nor a category to group by: one count, one mean over the rows said
    spec = acted_spec("楽天市場経由の返金、件数どれくらい？", refunds)
    assert spec["op"] == "total" and spec["metrics"] == {}
    spec = acted_spec("how many purchase lines weigh over 500 kg", purchases)
    assert spec["op"] == "total"
    assert acted_spec("一部返金ごとの返金額の合計", refunds)["group_cols"] == ["一部返金"]


FREIGHT = dataset_summary(
    50,
    [
        ("伝票番号", "text", ["A1", "A2"], 50),
        ("出荷元倉庫", "categorical", ["東京倉庫", "大阪倉庫"], 2),
        ("出荷先倉庫", "categorical", ["福岡倉庫", "札幌倉庫"], 2),
        ("運賃", "numeric", ["1000", "2000"], 40),
        ("保険加入", "boolean", ["True", "False"], 2),
    ],
    "ds_freight",
)


def test_a_yes_no_column_said_with_its_verb_negated_or_not() -> None:
    # before: 「保険に入ってない」 kept the insured rows, 「入っている」 every row (not blank)
    for text in ("保険に入ってない分の運賃合計", "保険加入していない分の運賃合計"):
        assert acted_spec(text, FREIGHT)["filters"] == [
            {"col": "保険加入", "op": "==", "value": False}
        ], text
    for text in ("保険に入っている分の運賃合計", "保険加入の運賃合計"):
        assert acted_spec(text, FREIGHT)["filters"] == [
            {"col": "保険加入", "op": "==", "value": True}
        ], text


def test_a_grouping_word_naming_two_columns_is_asked_with_no_aggregation_said() -> None:
    # before: 「倉庫別の運賃は？」 showed the summary of 運賃 over every warehouse
    decision = decide("倉庫別の運賃は？", FREIGHT)
    assert decision.next_action == "ask"
    assert "出荷元倉庫" in decision.clarifying_questions[0]
    assert "出荷先倉庫" in decision.clarifying_questions[0]
    spec = acted_spec("出荷先倉庫別の運賃は？", FREIGHT)
    assert spec["group_cols"] == ["出荷先倉庫"]


REMITTANCES = dataset_summary(
    500,
    [
        ("remittance_id", "text", ["FX-1", "FX-2"], 500),
        ("department", "categorical", ["IT", "Legal"], 2),
        ("status", "categorical", ["completed", "pending", "returned"], 3),
        ("amount_jpy", "numeric", ["1000", "90000"], 400),
    ],
    "ds_remittances",
)


def test_an_english_value_before_a_word_for_the_rows_is_a_condition() -> None:
    # before: "the completed ones" read "completed" as an ordinary word (as in "the
    # partner meeting"), so the follow-up changed nothing and was asked again
    previous = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["department"],
        "metrics": {"amount_jpy": ["sum"]},
        "filters": [],
    }
    completed = [{"col": "status", "op": "==", "value": "completed"}]
    decision = decide_after(
        "Total amount_jpy by department", previous, "Only the completed ones", REMITTANCES
    )
    assert decision.next_action == "act"
    assert (decision.analysis_spec or {})["filters"] == completed
    spec = acted_spec("total amount_jpy of the returned remittances", REMITTANCES)
    assert spec["filters"] == [{"col": "status", "op": "==", "value": "returned"}]


def test_an_english_quantity_asked_in_a_unit_is_the_total_of_that_column() -> None:
    purchases = dataset_summary(
        900,
        [
            ("receipt_id", "text", ["RM-1", "RM-2"], 900),
            ("material", "categorical", ["PP pellets", "Kraft pulp"], 2),
            ("quantity", "numeric", ["1", "40"], 40),
            ("weight_kg", "numeric", ["25", "8000"], 700),
            ("unit_price_per_kg", "numeric", ["18", "410"], 300),
        ],
        "ds_purchases_kg",
    )
    # before: both were row counts ("how many" read as a count of rows)
    spec = acted_spec("How many kilograms of PP pellets did we buy in total?", purchases)
    assert spec["metrics"] == {"weight_kg": ["sum"]}
    assert spec["filters"] == [{"col": "material", "op": "==", "value": "PP pellets"}]
    assert acted_spec("how many units of Kraft pulp", purchases)["metrics"] == {"quantity": ["sum"]}
    assert acted_spec("how many receipts of Kraft pulp", purchases)["metrics"] == {}


def test_a_country_is_read_in_any_of_its_forms() -> None:
    remittances = dataset_summary(
        400,
        [
            ("remittance_id", "text", ["FX-1", "FX-2"], 400),
            ("beneficiary_country", "categorical", ["US", "TH", "DE"], 3),
            ("destination", "categorical", ["Mexico", "Canada"], 2),
            ("amount_jpy", "numeric", ["1000", "90000"], 300),
        ],
        "ds_countries",
    )
    # before: "Thailand" and 「メキシコ」 named nothing, so every row was totalled
    spec = acted_spec("Total yen amount of remittances to Thailand", remittances)
    assert spec["filters"] == [{"col": "beneficiary_country", "op": "==", "value": "TH"}]
    spec = acted_spec("メキシコ向けの金額の合計は？", remittances)
    assert spec["filters"] == [{"col": "destination", "op": "==", "value": "Mexico"}]
    # a country the examples do not show is still a condition, in the column's form
    codes = dataset_summary(
        400,
        [
            ("remittance_id", "text", ["FX-1", "FX-2"], 400),
            ("country", "categorical", ["US", "TH", "DE"], 3),
            ("amount_jpy", "numeric", ["1000", "90000"], 300),
        ],
        "ds_country_codes",
    )
    spec = acted_spec("フランス向けの金額の合計は？", codes)
    assert spec["filters"] == [{"col": "country", "op": "==", "value": "FR"}]
    spec = acted_spec("Total amount for Brazil", codes)
    assert spec["filters"] == [{"col": "country", "op": "==", "value": "BR"}]


EXHIBITIONS = dataset_summary(
    120,
    [
        ("出展番号", "text", ["EX-1", "EX-2"], 120),
        ("開催地", "categorical", ["インテックス大阪", "幕張メッセ"], 2),
        ("人件費", "numeric", ["100", "900"], 100),
        ("商談件数", "numeric", ["1", "40"], 40),
    ],
    "ds_exhibitions",
)


def test_most_or_least_said_of_a_measure_is_its_extreme() -> None:
    # before: 「最も少なかった」 summed the column; 「一番多かった…何件」 counted the rows
    spec = acted_spec("インテックス大阪の出展で人件費が最も少なかったのはいくら", EXHIBITIONS)
    assert spec["metrics"] == {"人件費": ["min"]}
    spec = acted_spec("商談件数が一番多かった出展だと何件？", EXHIBITIONS)
    assert spec["op"] == "total" and spec["metrics"] == {"商談件数": ["max"]}
    spec = acted_spec("1回の出展で一番多かった商談件数っていくつ？", EXHIBITIONS)
    assert spec["op"] == "total" and spec["metrics"] == {"商談件数": ["max"]}
    # with a category to rank, the categories are ranked by their total
    spec = acted_spec("人件費が一番多い開催地はどこ？", EXHIBITIONS)
    assert spec["group_cols"] == ["開催地"] and spec["metrics"] == {"人件費": ["sum"]}
    spec = acted_spec("人件費が最も少なかった開催地は？", EXHIBITIONS)
    assert spec["metrics"] == {"人件費": ["sum"]} and spec["sort"]["ascending"] is True


RELOCATIONS = dataset_summary(
    300,
    [
        ("申請番号", "text", ["FT-1", "FT-2"], 300),
        ("異動元拠点", "categorical", ["東京本社", "福岡支店"], 2),
        ("異動先拠点", "categorical", ["東京本社", "福岡支店"], 2),
        ("支給額", "numeric", ["50000", "748000"], 200),
    ],
    "ds_relocations",
)


def test_a_value_of_two_columns_of_one_movement_follows_its_direction() -> None:
    def condition(text: str) -> list[dict[str, Any]]:
        return list(acted_spec(text, RELOCATIONS)["filters"])

    # before: every 福岡支店 was read as the origin (the first column holding it)
    to_fukuoka = [{"col": "異動先拠点", "op": "==", "value": "福岡支店"}]
    from_fukuoka = [{"col": "異動元拠点", "op": "==", "value": "福岡支店"}]
    assert condition("福岡支店へ異動した分の支給額の合計はいくら？") == to_fukuoka
    assert condition("福岡支店から異動した分の支給額の合計はいくら？") == from_fukuoka
    assert condition("異動先拠点が福岡支店の支給額の合計") == to_fukuoka
    # neither direction nor column said: asked, never taken as the first
    decision = decide("福岡支店の支給額の合計はいくら？", RELOCATIONS)
    assert decision.next_action == "ask"
    assert "異動元拠点と異動先拠点" in decision.clarifying_questions[0]


COURIER_TRIPS = dataset_summary(
    300,
    [
        ("伝票番号", "text", ["BK-1", "BK-2"], 300),
        ("利用日", "datetime", ["2024-01-05", "2025-06-30"], 200),
        ("発地区", "categorical", ["品川区", "港区", "新宿区"], 3),
        ("着地区", "categorical", ["品川区", "港区", "新宿区"], 3),
        ("料金", "numeric", ["800", "5400"], 120),
    ],
    "ds_courier_trips",
)


def test_origin_and_destination_named_by_発_and_着_follow_the_direction() -> None:
    """発地区 / 着地区 are one movement's two ends like 異動元 / 異動先: 「品川区あてに」 is the
    destination; with no direction said, which end is meant is asked (before: the origin,
    silently)."""
    spec = acted_spec("2024年中に品川区あてに送ったのは何回？", COURIER_TRIPS)
    assert {"col": "着地区", "op": "==", "value": "品川区"} in spec["filters"]
    spec = acted_spec("品川区から出した便の料金合計は？", COURIER_TRIPS)
    assert spec["filters"] == [{"col": "発地区", "op": "==", "value": "品川区"}]
    decision = decide("品川区の料金合計は？", COURIER_TRIPS)
    assert decision.next_action == "ask"
    assert "発地区と着地区" in decision.clarifying_questions[0]


def test_a_word_two_columns_hold_alike_names_neither() -> None:
    # before: 拠点 (the word of the concept "site") was given to 異動元拠点, the first
    decision = decide("拠点ごとの支給額の合計を出して", RELOCATIONS)
    assert decision.next_action == "ask"
    assert "異動元拠点" in decision.clarifying_questions[0]
    assert "異動先拠点" in decision.clarifying_questions[0]
    spec = acted_spec("異動先拠点ごとの支給額の合計を出して", RELOCATIONS)
    assert spec["group_cols"] == ["異動先拠点"]


def test_english_requests_read_japanese_headers_through_the_glossary() -> None:
    allowances = dataset_summary(
        600,
        [
            ("申請番号", "text", ["Q-1", "Q-2"], 600),
            ("所属", "categorical", ["工事部", "総務部"], 2),
            ("雇用区分", "categorical", ["正社員", "契約社員"], 2),
            ("受験料補助", "numeric", ["0", "30000"], 40),
            ("手当月額", "numeric", ["5000", "20000"], 10),
        ],
        "ds_allowances",
    )
    # before: neither the subsidy column nor the department grouping was read
    spec = acted_spec("Total exam fee subsidy by department", allowances)
    assert spec["group_cols"] == ["所属"] and spec["metrics"] == {"受験料補助": ["sum"]}
    spec = acted_spec("Average monthly allowance for full-time employees", allowances)
    assert spec["metrics"] == {"手当月額": ["mean"]}
    assert spec["filters"] == [{"col": "雇用区分", "op": "==", "value": "正社員"}]


def test_japanese_requests_read_english_headers_through_the_glossary() -> None:
    policies = dataset_summary(
        300,
        [
            ("policy_id", "text", ["P-1", "P-2"], 300),
            ("insurer", "categorical", ["Tokio", "Sompo"], 2),
            ("premium_jpy", "numeric", ["10000", "90000"], 200),
            ("deductible_jpy", "numeric", ["0", "50000"], 20),
        ],
        "ds_policies",
    )
    spec = acted_spec("免責金額の平均はいくら？", policies)
    assert spec["metrics"] == {"deductible_jpy": ["mean"]}


def test_values_listed_and_summed_up_are_one_total() -> None:
    trips = dataset_summary(
        400,
        [
            ("出張番号", "text", ["T-1", "T-2"], 400),
            ("役職区分", "categorical", ["一般", "課長", "部長"], 3),
            ("日当額", "numeric", ["2000", "5000"], 20),
        ],
        "ds_trips",
    )
    # before: one total per 役職区分 was shown for 「合計するといくら」
    spec = acted_spec("課長と部長の出張について、日当額を合計するといくら？", trips)
    assert spec["op"] == "total" and spec["metrics"] == {"日当額": ["sum"]}
    assert spec["filters"] == [{"col": "役職区分", "op": "in", "value": ["課長", "部長"]}]
    spec = acted_spec("役職区分別に日当額を合計すると？", trips)
    assert spec["group_cols"] == ["役職区分"]


def test_an_english_word_for_what_a_japanese_number_identifies_names_it() -> None:
    claims = dataset_summary(
        320,
        [
            ("申請番号", "text", ["A-1", "A-2"], 320),
            ("社員番号", "text", ["E1", "E2"], 301),
            ("設備番号", "text", ["M1", "M2"], 40),
            ("支給額", "numeric", ["1000", "9000"], 200),
        ],
        "ds_employee_claims",
    )
    # before: "employees" and "equipment" named nothing (asked which column)
    spec = acted_spec("How many distinct employees appear in the claims?", claims)
    assert spec["metrics"] == {"社員番号": ["nunique"]}
    spec = acted_spec("How many different pieces of equipment are there?", claims)
    assert spec["metrics"] == {"設備番号": ["nunique"]}


def test_a_total_said_inside_a_column_name_is_its_sum() -> None:
    fees = dataset_summary(
        300,
        [
            ("請求番号", "text", ["B-1", "B-2"], 300),
            ("入金方法", "categorical", ["振込", "口座振替"], 2),
            ("請求合計", "numeric", ["1000", "90000"], 250),
            ("total_billed", "numeric", ["1000", "90000"], 250),
        ],
        "ds_billing_totals",
    )
    # before: a summary of the column (count, mean, quartiles) instead of its total
    spec = acted_spec("入金方法が未入力になっている請求の請求合計を出して", fees)
    assert spec["op"] == "total" and spec["metrics"] == {"請求合計": ["sum"]}
    spec = acted_spec("What's the total billed for bank transfers (振込)?", fees)
    assert spec["op"] == "total" and spec["metrics"] == {"total_billed": ["sum"]}
    spec = acted_spec("請求合計の平均は？", fees)
    assert spec["metrics"] == {"請求合計": ["mean"]}


RENT = dataset_summary(
    600,
    [
        ("計上月", "datetime", ["2024-04-01", "2025-09-01"], 18),
        ("事業所", "categorical", ["本社", "大阪支社"], 2),
        ("賃料", "numeric", ["100000", "900000"], 50),
    ],
    "ds_rent_months",
)


def period(text: str) -> list[tuple[str, str]]:
    return [(f["op"], f["value"]) for f in acted_spec(text, RENT)["filters"]]


def test_a_part_of_a_fiscal_year_is_its_months() -> None:
    # before: 「2024年度下期」 and 「2025年度上期」 were the whole fiscal year, silently
    assert period("2024年度下期の賃料の合計は？") == [(">=", "2024-10-01"), ("<", "2025-04-01")]
    assert period("2025年度上期の賃料の合計") == [(">=", "2025-04-01"), ("<", "2025-10-01")]
    assert period("2024年度第3四半期の賃料の合計") == [(">=", "2024-10-01"), ("<", "2025-01-01")]
    assert period("total rent for FY2024 H2") == [(">=", "2024-10-01"), ("<", "2025-04-01")]
    assert period("2024年度の賃料の合計は？") == [(">=", "2024-04-01"), ("<", "2025-04-01")]
    # a quarter with no fiscal year is still asked (fiscal or calendar?)
    assert decide("第1四半期の賃料の合計", RENT).next_action == "ask"


def test_the_months_of_a_fiscal_year_restated_after_it_are_read_once() -> None:
    # before: 「（4月〜翌3月）」 asked which year 4月 and 3月 were
    said = "2024年度（4月～翌3月）の賃料の合計は？"
    assert period(said) == [(">=", "2024-04-01"), ("<", "2025-04-01")]
    said = "2024年度下期（10月〜翌3月）の賃料の合計"
    assert period(said) == [(">=", "2024-10-01"), ("<", "2025-04-01")]
    # other months in the brackets are a period of their own: their year is asked
    assert decide("2024年度（4月〜9月）の賃料の合計", RENT).next_action == "ask"


def test_english_periods_in_more_of_their_usual_forms() -> None:
    # before: "calendar year 2024" was dropped (every row totalled, silently); "between April
    # and September 2025" and "Q1 2025 (Jan–Mar)" were not read
    assert period("rent total for calendar year 2024") == [("==", "2024")]
    assert period("rent total in calendar 2024") == [("==", "2024")]
    assert period("rent total between April and September 2025") == [
        (">=", "2025-04-01"),
        ("<", "2025-10-01"),
    ]
    assert period("rent total in Q1 2025 (Jan–Mar)") == [(">=", "2025-01-01"), ("<", "2025-04-01")]
    # a quarter alone is still asked once; a year no rule reads is asked, never dropped
    assert decide("rent total in Q1 2025", RENT).clarifying_questions == [
        "Which months is Q1? (e.g. April to June)"
    ]
    decision = decide("rent total 2024", RENT)
    assert decision.next_action == "ask" and "2024" in decision.clarifying_questions[0]
    decision = decide("賃料の合計 2024", RENT)
    assert decision.clarifying_questions[0].startswith("「2024」を期間として")


TRAINING = dataset_summary(
    400,
    [
        ("application_id", "text", ["A-1", "A-2"], 400),
        ("department", "categorical", ["Sales", "Finance"], 2),
        ("course_type", "categorical", ["degree", "seminar"], 2),
        ("application_date", "datetime", ["2024-04-01", "2025-09-30"], 300),
        ("fee_jpy", "numeric", ["10000", "900000"], 200),
    ],
    "ds_training_fees",
)
FILTERED = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["course_type"],
    "metrics": {"fee_jpy": ["mean"]},
    "filters": [
        {"col": "department", "op": "==", "value": "Sales"},
        {"col": "application_date", "op": ">=", "value": "2025-01-01"},
        {"col": "application_date", "op": "<", "value": "2026-01-01"},
    ],
}
SALES = [{"col": "department", "op": "==", "value": "Sales"}]
YEAR_2025 = FILTERED["filters"][1:]


def test_a_follow_up_takes_a_condition_off_the_result() -> None:
    def after(text: str) -> dict[str, Any]:
        decision = decide_after("2025年の営業の講座種別ごとの平均", FILTERED, text, TRAINING)
        assert decision.next_action == "act", decision.clarifying_questions
        return dict(decision.analysis_spec or {})

    # before: each was asked what to analyse, or the condition stayed
    assert after("部署の条件は外して")["filters"] == YEAR_2025
    assert after("年の絞り込みは外して、全期間で出し直して")["filters"] == SALES
    assert after("期間の指定はなしで")["filters"] == SALES
    spec = after("やっぱり部署の条件は外して、中央値にしてください")
    assert spec["filters"] == YEAR_2025 and spec["metrics"] == {"fee_jpy": ["median"]}
    assert after("remove the department filter")["filters"] == YEAR_2025
    assert after("same, but for all time")["filters"] == SALES
    assert after("without the Sales filter, as a median")["filters"] == YEAR_2025


def test_a_measure_said_not_to_be_meant_is_left_out() -> None:
    parking = dataset_summary(
        500,
        [
            ("拠点", "categorical", ["本社", "大阪"], 2),
            ("月額賃料", "numeric", ["10000", "30000"], 20),
            ("支払額", "numeric", ["11000", "33000"], 20),
            ("freight_usd", "numeric", ["10", "900"], 200),
            ("freight_jpy", "numeric", ["1500", "135000"], 200),
        ],
        "ds_not_this_measure",
    )
    # before: both columns were averaged / totalled
    spec = acted_spec("[月額賃料]じゃなくて[支払額]の平均を、拠点別に見たいです", parking)
    assert spec["metrics"] == {"支払額": ["mean"]}
    spec = acted_spec("Total of the 'freight_usd' column (not freight_jpy)", parking)
    assert spec["metrics"] == {"freight_usd": ["sum"]}
    spec = acted_spec("月額賃料と支払額の平均を拠点別に", parking)
    assert spec["metrics"] == {"月額賃料": ["mean"], "支払額": ["mean"]}


STOCKTAKE = dataset_summary(
    900,
    [
        ("倉庫", "categorical", ["東京", "大阪"], 2),
        ("差異数量", "numeric", ["-20", "15"], 30),
        ("差異金額", "numeric", ["-250000", "180000"], 600),
    ],
    "ds_stock_variances",
)


def test_a_signed_amount_keeps_its_sign() -> None:
    def condition(text: str) -> list[dict[str, Any]]:
        return list(acted_spec(text, STOCKTAKE)["filters"])

    # before: 「マイナス10万円を下回る」 was < 100000 and "is negative" was dropped, silently
    assert condition("差異金額がマイナス10万円を下回るものは何件ありますか") == [
        {"col": "差異金額", "op": "<", "value": -100000}
    ]
    assert condition("差異金額が▲50,000以下の件数") == [
        {"col": "差異金額", "op": "<=", "value": -50000}
    ]
    assert condition("how many rows have a difference amount below -50,000") == [
        {"col": "差異金額", "op": "<", "value": -50000}
    ]
    assert condition("Sum of the difference amounts where the difference quantity is negative") == [
        {"col": "差異数量", "op": "<", "value": 0}
    ]
    assert condition("how many rows have a positive difference amount") == [
        {"col": "差異金額", "op": ">", "value": 0}
    ]
    over = [{"col": "差異金額", "op": ">=", "value": 100000}]
    assert condition("差異金額が10万円以上の件数") == over


def test_an_english_word_for_what_a_japanese_name_or_flag_is_of_names_it() -> None:
    lots = dataset_summary(
        800,
        [
            ("契約番号", "text", ["P-1", "P-2"], 800),
            ("駐車場名", "categorical", ["第一駐車場", "第二駐車場"], 2),
            ("返却有無", "boolean", ["True", "False"], 2),
            ("支払額", "numeric", ["10000", "30000"], 40),
        ],
        "ds_parking_lots",
    )
    # before: "parking lot" and "returned" named nothing
    spec = acted_spec("total payments by parking lot", lots)
    assert spec["group_cols"] == ["駐車場名"]
    spec = acted_spec("How many contracts were returned?", lots)
    assert spec["filters"] == [{"col": "返却有無", "op": "==", "value": True}]
    # the word alone, with no grouping said, is the data's topic: one total
    spec = acted_spec("What was the total paid for parking?", lots)
    assert spec["op"] == "total" and spec["metrics"] == {"支払額": ["sum"]}


def test_the_currency_said_in_japanese_picks_the_english_column_in_it() -> None:
    freight = dataset_summary(
        500,
        [
            ("invoice_no", "text", ["F-1", "F-2"], 500),
            ("freight_usd", "numeric", ["10", "900"], 300),
            ("freight_jpy", "numeric", ["1500", "135000"], 300),
            ("amount_jpy", "numeric", ["1500", "135000"], 300),
        ],
        "ds_freight_currencies",
    )
    # before: 「運賃」 names both freight columns, so which one was asked every time
    for said in ("運賃（円換算）の合計っていくら？", "円建て運賃の合計"):
        assert acted_spec(said, freight)["metrics"] == {"freight_jpy": ["sum"]}
    assert acted_spec("ドル建ての運賃の平均", freight)["metrics"] == {"freight_usd": ["mean"]}
    assert decide("運賃の合計", freight).next_action == "ask"


GIFTS = dataset_summary(
    300,
    [
        ("贈答番号", "text", ["G-1", "G-2"], 300),
        ("区分", "categorical", ["お中元", "お歳暮"], 2),
        ("贈答先区分", "categorical", ["取引先", "個人"], 2),
        ("carrier", "categorical", ["Yamato", "Sagawa"], 2),
        ("mode", "categorical", ["Air", "Sea"], 2),
        ("金額", "numeric", ["3000", "30000"], 50),
    ],
    "ds_gift_follow_ups",
)


def test_follow_ups_said_with_also_a_share_or_an_exclusion_of_the_rows() -> None:
    count = {
        "type": "analysis",
        "op": "total",
        "metrics": {},
        "filters": [{"col": "区分", "op": "==", "value": "お中元"}],
    }
    # before: 「…も出して」 dropped the お中元 condition (read as a request of its own)
    decision = decide_after("お中元は何件？", count, "金額の合計も出して", GIFTS)
    assert (decision.analysis_spec or {})["filters"] == count["filters"]
    assert (decision.analysis_spec or {})["metrics"] == {"金額": ["sum"]}
    grouped = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["贈答先区分"],
        "metrics": {"金額": ["sum"]},
        "filters": [],
    }
    # before: a bar chart, though shares were asked for
    said = "円グラフみたいに構成比で見たい"
    decision = decide_after("贈答先区分ごとの金額合計", grouped, said, GIFTS)
    assert (decision.analysis_spec or {})["op"] == "share_ratio"
    by_carrier = {**grouped, "group_cols": ["carrier"]}
    # before: "the Air shipments" read Air as an ordinary word: asked what to analyse
    decision = decide_after("金額 by carrier", by_carrier, "leave out the Air shipments", GIFTS)
    assert (decision.analysis_spec or {})["filters"] == [
        {"col": "mode", "op": "!=", "value": "Air"}
    ]


def test_per_a_word_for_the_rows_is_an_average_over_the_rows() -> None:
    freight = dataset_summary(
        700,
        [
            ("invoice_no", "text", ["F-1", "F-2"], 700),
            ("mode", "categorical", ["Air", "Sea LCL"], 2),
            ("carrier", "categorical", ["Yamato", "Sagawa"], 2),
            ("weight_kg", "numeric", ["10", "9000"], 500),
        ],
        "ds_per_row",
    )
    # before: "per shipment" was read as a grouping, so which column was asked
    spec = acted_spec("average weight per shipment for Sea LCL", freight)
    assert spec["op"] == "total" and spec["metrics"] == {"weight_kg": ["mean"]}
    spec = acted_spec("average weight per carrier", freight)
    assert spec["group_cols"] == ["carrier"]


def test_the_highest_measures_of_a_top_n_ranking_are_totals() -> None:
    payments = dataset_summary(
        900,
        [
            ("user", "categorical", ["Sato", "Ito"], 40),
            ("payment_jpy", "numeric", ["1000", "90000"], 500),
        ],
        "ds_ranked_payments",
    )
    # before: each user's largest single payment was ranked
    spec = acted_spec("Which users rack up the highest payments? Top 5 please.", payments)
    assert spec["metrics"] == {"payment_jpy": ["sum"]} and spec["top_k"] == 5
    spec = acted_spec("Top 5 users by their largest single payment", payments)
    assert spec["metrics"] == {"payment_jpy": ["max"]}


def test_the_keys_said_the_same_name_their_columns() -> None:
    parking = dataset_summary(
        900,
        [
            ("明細番号", "text", ["M-1", "M-2"], 900),
            ("駐車場名", "categorical", ["第一", "第二"], 2),
            ("区画番号", "text", ["A-1", "B-2"], 60),
            ("支払月", "datetime", ["2024-04-01", "2025-03-01"], 12),
            ("支払額", "numeric", ["10000", "30000"], 20),
        ],
        "ds_same_keys",
    )
    courses = dataset_summary(
        400,
        [
            ("application_id", "text", ["A-1", "A-2"], 400),
            ("employee_id", "text", ["E1", "E2"], 200),
            ("course_name", "categorical", ["Excel", "Bookkeeping"], 2),
            ("fee_jpy", "numeric", ["1000", "90000"], 100),
        ],
        "ds_same_keys_en",
    )

    def keys(text: str, data: dict[str, Any]) -> list[str] | None:
        spec = acted_spec(text, data)
        assert spec["op"] == "duplicate_check"
        return spec["subset"]

    # before: a name column (駐車場名, course_name) and 「同じ月」 were no keys
    said = "同じ駐車場の同じ区画で、同じ月に二重に払っているものがないか確認して"
    assert keys(said, parking) == ["駐車場名", "区画番号", "支払月"]
    said = "同じ社員・同じ講座で二重申請になっているものがないか調べて"
    assert keys(said, courses) == ["employee_id", "course_name"]
    # the data's own word for its rows is the whole row
    assert keys("同じ明細が二重に入っていないか重複チェックして", parking) is None
    # 「二重に取り込まれて」 is how the rows came in, not a request to import anything
    assert keys("同じ明細が二重に取り込まれてないか重複チェックして", parking) is None


def test_blanks_said_to_be_included_in_a_grouping_are_no_missing_values_check() -> None:
    causes = dataset_summary(
        900,
        [
            ("倉庫", "categorical", ["東京", "大阪"], 2),
            ("原因区分", "categorical", ["記帳漏れ", "破損"], 2),
            ("差異金額", "numeric", ["-250000", "180000"], 600),
        ],
        "ds_blank_causes",
    )
    # before: the missing-values check of the whole table
    spec = acted_spec("原因区分ごとの件数の内訳を見せて（空欄も含めて）", causes)
    assert spec["op"] in ("share_ratio", "groupby_agg")
    assert spec.get("group_col") == "原因区分" or spec.get("group_cols") == ["原因区分"]
    assert acted_spec("原因区分の空欄は何件？", causes)["op"] in ("missingness", "total")


def test_japanese_said_of_english_money_columns_and_sums_said_as_adding_up() -> None:
    payments = dataset_summary(
        900,
        [
            ("payment_id", "text", ["P-1", "P-2"], 900),
            ("vendor_category", "categorical", ["IT", "Office"], 2),
            ("amount_jpy", "numeric", ["1000", "900000"], 700),
            ("withholding_jpy", "numeric", ["0", "90000"], 70),
        ],
        "ds_money_readings",
    )
    # before: 「金額」 was asked (withholding_jpy is money too) though it is amount_jpy's name
    spec = acted_spec("vendor_categoryが空欄のものの金額合計は？", payments)
    assert spec["metrics"] == {"amount_jpy": ["sum"]}
    # before: 「全部足すと」 counted the rows
    spec = acted_spec("ITの金額を全部足すといくつになる？", payments)
    assert spec["metrics"] == {"amount_jpy": ["sum"]}


def test_a_follow_up_on_every_row_takes_every_condition_off() -> None:
    previous = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["course_type"],
        "metrics": {"fee_jpy": ["sum"]},
        "filters": [{"col": "department", "op": "==", "value": "Sales"}],
    }
    said = "営業に限定しないで、全件で同じ集計をして"
    decision = decide_after("営業だけ", previous, said, TRAINING)
    assert (decision.analysis_spec or {})["filters"] == []


SUBSCRIPTIONS = dataset_summary(
    200,
    [
        ("subscription_id", "text", ["SUB-1", "SUB-2"], 200),
        ("department", "categorical", ["Sales", "IT"], 2),
        ("billing_cycle", "categorical", ["monthly", "annual"], 2),
        ("renewal_date", "datetime", ["2024-11-30", "2025-06-30"], 40),
        ("monthly_cost_usd", "numeric", ["12.5", "450"], 100),
    ],
    "ds_subscription_costs",
)


def test_a_period_said_as_the_rate_of_an_amount_is_no_trend() -> None:
    # before: both were monthly / yearly line charts over renewal_date
    said = "What's the most we pay per month for a single subscription, in dollars?"
    spec = acted_spec(said, SUBSCRIPTIONS)
    assert spec["op"] == "total" and spec["metrics"] == {"monthly_cost_usd": ["max"]}
    spec = acted_spec("How many subscriptions are billed annually?", SUBSCRIPTIONS)
    assert spec["op"] == "total"
    assert spec["filters"] == [{"col": "billing_cycle", "op": "==", "value": "annual"}]
    # a trend said as one is still a trend
    assert acted_spec("monthly_cost_usd by month as a line chart", SUBSCRIPTIONS)["kind"] == "line"


ASSETS = dataset_summary(
    700,
    [
        ("資産番号", "text", ["A-1", "A-2"], 700),
        ("資産区分", "categorical", ["器具備品", "車両"], 2),
        ("精算済", "boolean", ["True", "False"], 2),
        ("除却", "boolean", ["True", "False"], 2),
        ("auto_renew", "boolean", ["True", "False"], 2),
        ("期末帳簿価額", "numeric", ["0", "900000"], 500),
    ],
    "ds_negated_flags",
)


def test_a_yes_no_column_said_in_the_negative_is_its_no() -> None:
    def condition(text: str) -> list[dict[str, Any]]:
        return list(acted_spec(text, ASSETS)["filters"])

    # before: each of these kept the rows where the column is yes: the opposite, silently
    assert condition("How many line items haven't been settled yet?") == [
        {"col": "精算済", "op": "==", "value": False}
    ]
    assert condition("How many assets are still on the books, i.e. not retired?") == [
        {"col": "除却", "op": "==", "value": False}
    ]
    assert condition("How many rows have auto-renew switched off?") == [
        {"col": "auto_renew", "op": "==", "value": False}
    ]
    assert condition("除却したものは除いて資産区分ごとの期末帳簿価額") == [
        {"col": "除却", "op": "==", "value": False}
    ]
    # said as it is, yes
    assert condition("How many line items have been settled?") == [
        {"col": "精算済", "op": "==", "value": True}
    ]
    assert condition("除却したものの件数") == [{"col": "除却", "op": "==", "value": True}]


LOANS = dataset_summary(
    600,
    [
        ("invoice_no", "text", ["I-1", "I-2"], 600),
        ("借入区分", "categorical", ["短期借入金", "当座貸越"], 2),
        ("担当", "categorical", ["佐藤", "伊藤"], 2),
        ("status", "categorical", ["Paid", "Scheduled"], 2),
        ("paid_date", "datetime", ["2025-01-10", "2025-09-30"], 200),
        ("元金", "numeric", ["100000", "9000000"], 300),
        ("金利(%)", "numeric", ["0.5", "2.5"], 30),
    ],
    "ds_loan_lines",
)


def test_more_conditions_said_around_their_values() -> None:
    # before: the value in brackets after "leave out the overdraft" was kept, not left out
    spec = acted_spec("Total 元金 by 担当, leave out the overdraft (当座貸越) lines", LOANS)
    assert spec["filters"] == [{"col": "借入区分", "op": "!=", "value": "当座貸越"}]
    # before: "interest rate" was external data although 金利(%) is in the file
    spec = acted_spec("What's the highest interest rate in the list?", LOANS)
    assert spec["metrics"] == {"金利(%)": ["max"]}
    # before: a column name in backticks read no blank condition
    spec = acted_spec("`paid_date` が入っていない支払いは何件？", LOANS)
    assert spec["filters"] == [{"col": "paid_date", "op": "is_null"}]
    # before: "we may have paid" kept only the rows with status Paid
    spec = acted_spec("Check for duplicate invoice numbers - we may have paid some twice", LOANS)
    assert spec["filters"] == [] and spec["subset"] == ["invoice_no"]
    spec = acted_spec("how many invoices were paid", LOANS)
    assert spec["filters"] == [{"col": "status", "op": "==", "value": "Paid"}]


def test_a_word_of_its_own_is_never_a_column_word_cut_short() -> None:
    payments = dataset_summary(
        900,
        [
            ("vendor_category", "categorical", ["IT", "Office"], 2),
            ("status", "categorical", ["Paid", "Scheduled"], 2),
            ("amount_jpy", "numeric", ["1000", "900000"], 700),
            ("withholding_jpy", "numeric", ["0", "90000"], 70),
            ("temperature", "numeric", ["10", "30"], 20),
        ],
        "ds_cut_short",
    )
    previous = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["vendor_category"],
        "metrics": {"amount_jpy": ["sum"]},
        "filters": [],
    }
    # before: "with" named withholding_jpy, and the follow-up totalled it instead
    decision = decide_after(
        "Total amount by category", previous, "Just the ones with status Paid", payments
    )
    spec = decision.analysis_spec or {}
    assert spec["metrics"] == {"amount_jpy": ["sum"]}
    assert spec["filters"] == [{"col": "status", "op": "==", "value": "Paid"}]
    assert acted_spec("average temp", payments)["metrics"] == {"temperature": ["mean"]}


def test_english_words_of_a_japanese_measure_said_apart_name_it() -> None:
    assets = dataset_summary(
        700,
        [
            ("資産番号", "text", ["A-1", "A-2"], 700),
            ("取得価額", "numeric", ["100000", "9000000"], 600),
            ("当期償却額", "numeric", ["0", "900000"], 500),
            ("期末帳簿価額", "numeric", ["0", "8000000"], 600),
        ],
        "ds_spread_words",
    )
    # before: which numeric column was asked for both
    said = "What's the total depreciation expense for the current period?"
    assert acted_spec(said, assets)["metrics"] == {"当期償却額": ["sum"]}
    said = "What's the total net book value at year end across all assets?"
    assert acted_spec(said, assets)["metrics"] == {"期末帳簿価額": ["sum"]}
    # words of no one column: still asked
    assert decide("What's the total value?", assets).next_action == "ask"


def test_a_follow_up_swaps_the_measure_said_not_to_be_meant() -> None:
    previous = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["department"],
        "metrics": {"monthly_cost_usd": ["sum"]},
        "filters": [],
    }
    costs = dataset_summary(
        200,
        [
            ("department", "categorical", ["Sales", "IT"], 2),
            ("monthly_cost_usd", "numeric", ["12.5", "450"], 100),
            ("monthly_cost_jpy", "numeric", ["1900", "67500"], 100),
        ],
        "ds_swapped_measure",
    )
    # before: both currencies were totalled
    decision = decide_after("cost by department", previous, "use yen instead of dollars", costs)
    assert (decision.analysis_spec or {})["metrics"] == {"monthly_cost_jpy": ["sum"]}


def test_a_follow_up_including_a_value_again_takes_its_condition_off() -> None:
    visits = dataset_summary(
        600,
        [
            ("担当者", "categorical", ["佐藤", "伊藤"], 2),
            ("訪問形態", "categorical", ["対面", "オンライン"], 2),
            ("配属拠点", "categorical", ["本社", "大阪支店"], 2),
            ("交通費", "numeric", ["0", "9000"], 100),
        ],
        "ds_included_again",
    )
    shown = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["担当者"],
        "metrics": {"交通費": ["sum"]},
        "filters": [{"col": "訪問形態", "op": "==", "value": "対面"}],
    }

    def after(text: str) -> list[dict[str, Any]]:
        decision = decide_after("対面訪問の担当者別交通費", shown, text, visits)
        assert decision.next_action == "act", decision.clarifying_questions
        return list((decision.analysis_spec or {})["filters"])

    # before: the overview of the whole table, and a question
    assert after("オンラインも含めた全体で見せて") == []
    assert after("Drop the filter and show all rows.") == []


def test_a_status_read_in_english_said_as_what_we_did_is_no_condition() -> None:
    receivables = dataset_summary(
        900,
        [
            ("請求番号", "text", ["B-1", "B-2"], 900),
            ("回収状況", "categorical", ["回収済", "未回収"], 2),
            ("入金額", "numeric", ["0", "900000"], 700),
            ("差額", "numeric", ["-5000", "900000"], 300),
        ],
        "ds_collected",
    )
    # before: "have we collected" kept only the rows 回収済, silently
    spec = acted_spec("How much have we collected in total?", receivables)
    assert spec["metrics"] == {"入金額": ["sum"]} and spec["filters"] == []
    # before: a column name in 『』 lost its sign condition
    spec = acted_spec("『差額』がマイナスになっている請求は何件ある？", receivables)
    assert spec["filters"] == [{"col": "差額", "op": "<", "value": 0}]


def test_duplicate_keys_named_whole_and_a_verb_opening_the_request() -> None:
    invoices = dataset_summary(
        300,
        [
            ("stay_id", "text", ["S-1", "S-2"], 300),
            ("contractor_id", "text", ["C-1", "C-2"], 40),
            ("contractor_name", "categorical", ["Ann", "Bob"], 40),
            ("invoice_month", "datetime", ["2025-01-01", "2025-06-01"], 6),
            ("check_in", "datetime", ["2025-01-03", "2025-06-30"], 200),
        ],
        "ds_duplicate_keys",
    )

    def keys(text: str) -> list[str] | None:
        return acted_spec(text, invoices)["subset"]

    # before: contractor_name (sharing "contractor") and check_in ("Check …") were keys too
    said = "Check for duplicate invoices - same contractor_id and invoice_month"
    assert keys(said) == ["contractor_id", "invoice_month"]
    assert keys("Check whether any stay_id appears more than once.") == ["stay_id"]


def test_japanese_words_for_english_category_values() -> None:
    stays = dataset_summary(
        500,
        [
            ("stay_id", "text", ["S-1", "S-2"], 500),
            ("city", "categorical", ["Tokyo", "Osaka", "Fukuoka"], 3),
            ("accident_type", "categorical", ["parking lot", "theft"], 2),
            ("total_jpy", "numeric", ["8000", "90000"], 400),
        ],
        "ds_japanese_for_values",
    )
    # before: 「東京」 and 「駐車場」 named nothing, so every row was counted
    spec = acted_spec("東京での宿泊は何件ありますか", stays)
    assert spec["filters"] == [{"col": "city", "op": "==", "value": "Tokyo"}]
    spec = acted_spec("駐車場での事故は何件？", stays)
    assert spec["filters"] == [{"col": "accident_type", "op": "==", "value": "parking lot"}]


def test_money_spent_is_the_column_of_totals_among_several() -> None:
    stays = dataset_summary(
        500,
        [
            ("hotel_chain", "categorical", ["APA Hotel", "Toyoko Inn"], 2),
            ("room_rate_jpy", "numeric", ["6000", "30000"], 200),
            ("total_jpy", "numeric", ["6000", "90000"], 400),
            ("policy_limit_jpy", "numeric", ["12000", "15000"], 2),
        ],
        "ds_spend_totals",
    )
    # before: which of the three money columns was asked
    spec = acted_spec("What did we spend on hotels in total?", stays)
    assert spec["metrics"] == {"total_jpy": ["sum"]}
    assert acted_spec("Top 3 hotel chains by total spend", stays)["metrics"] == {
        "total_jpy": ["sum"]
    }


def test_a_follow_up_puts_another_measure_beside_the_one_shown() -> None:
    pay = dataset_summary(
        900,
        [
            ("職位", "categorical", ["一般", "主任"], 2),
            ("残業手当", "numeric", ["0", "90000"], 700),
            ("深夜手当", "numeric", ["0", "20000"], 300),
        ],
        "ds_measure_beside",
    )
    shown = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["職位"],
        "metrics": {"残業手当": ["sum"]},
        "filters": [],
    }
    # before: one total of 深夜手当 in place of the table
    decision = decide_after("職位別の残業手当の合計", shown, "深夜手当の合計も横に並べて", pay)
    spec = decision.analysis_spec or {}
    assert spec["group_cols"] == ["職位"]
    assert spec["metrics"] == {"残業手当": ["sum"], "深夜手当": ["sum"]}
    # 「…じゃなくて」 still replaces it
    decision = decide_after("職位別の残業手当の合計", shown, "残業手当じゃなくて深夜手当で", pay)
    assert (decision.analysis_spec or {})["metrics"] == {"深夜手当": ["sum"]}


def test_the_months_restated_after_a_fiscal_half_may_drop_the_first_month_word() -> None:
    said = "2025年度上期（4〜9月）の賃料の合計"
    assert period(said) == [(">=", "2025-04-01"), ("<", "2025-10-01")]


def test_a_japanese_flag_said_unpaid_or_not_yet_paid_is_its_no() -> None:
    commissions = dataset_summary(
        900,
        [
            ("明細番号", "text", ["C-1", "C-2"], 900),
            ("支払済", "boolean", ["True", "False"], 2),
            ("手数料額", "numeric", ["0", "90000"], 700),
        ],
        "ds_unpaid_flag",
    )
    unpaid = [{"col": "支払済", "op": "==", "value": False}]
    # before: "unpaid" named nothing (every row), 「支払っていない」 was not read
    assert (
        acted_spec("How many commission lines are still unpaid?", commissions)["filters"] == unpaid
    )
    said = "まだ支払っていない手数料はいくら残っていますか"
    assert acted_spec(said, commissions)["filters"] == unpaid


CONTRACTORS = dataset_summary(
    344,
    [
        ("contractor_id", "text", ["C-1", "C-2"], 80),
        ("invoice_month", "datetime", ["2025-01-01", "2025-06-01"], 6),
        ("amount_jpy", "numeric", ["10000", "900000"], 300),
        ("paid_on", "datetime", ["2025-02-10", "2025-07-10"], 100),
    ],
    "ds_contractor_invoices",
)


def test_rows_said_by_a_date_columns_word_and_blank_dates_said_no() -> None:
    # before: a daily line chart over invoice_month ("across all invoices" read as a grouping)
    spec = acted_spec("Total amount_jpy across all invoices?", CONTRACTORS)
    assert spec["op"] == "total" and spec["metrics"] == {"amount_jpy": ["sum"]}
    # before: every row counted ("no paid_on date" read no condition)
    spec = acted_spec("How many invoices are still unpaid, i.e. no paid_on date?", CONTRACTORS)
    assert spec["filters"] == [{"col": "paid_on", "op": "is_null"}]
    # "on or before" keeps the day itself
    spec = acted_spec("How many invoices were paid on or before 2025-03-31?", CONTRACTORS)
    assert spec["filters"] == [{"col": "paid_on", "op": "<=", "value": "2025-03-31"}]


def test_a_status_said_in_english_and_a_one_character_value_in_brackets() -> None:
    devices = dataset_summary(
        600,
        [
            ("資産番号", "text", ["A-1", "A-2"], 600),
            ("状態", "categorical", ["利用中", "予備", "廃棄予定"], 3),
            ("緊急度", "categorical", ["高", "中", "低"], 3),
        ],
        "ds_status_words",
    )
    # before: both counted every row, silently
    spec = acted_spec("How many devices are in use right now?", devices)
    assert spec["filters"] == [{"col": "状態", "op": "==", "value": "利用中"}]
    spec = acted_spec("緊急度が「高」の案件って何件？", devices)
    assert spec["filters"] == [{"col": "緊急度", "op": "==", "value": "高"}]


def test_one_long_english_word_of_a_japanese_measure_names_it_when_no_other_has_it() -> None:
    repairs = dataset_summary(
        600,
        [
            ("設備名", "categorical", ["空調機", "昇降機"], 2),
            ("見積額", "numeric", ["10000", "900000"], 400),
            ("請求額", "numeric", ["10000", "900000"], 400),
            ("手数料額", "numeric", ["100", "90000"], 400),
            ("手数料率(%)", "numeric", ["1.5", "8"], 10),
            ("出金", "numeric", ["0", "50000"], 300),
        ],
        "ds_long_word",
    )
    # before: which numeric column was asked each time
    spec = acted_spec("What's the average estimate for 空調機 repairs?", repairs)
    assert spec["metrics"] == {"見積額": ["mean"]}
    assert acted_spec("What's the total commission?", repairs)["metrics"] == {"手数料額": ["sum"]}
    assert acted_spec("How much was paid out in total?", repairs)["metrics"] == {"出金": ["sum"]}


def test_the_japanese_of_an_english_money_column_without_its_money_word_names_it() -> None:
    cards = dataset_summary(
        900,
        [
            ("card_id", "text", ["G-1", "G-2"], 900),
            ("channel", "categorical", ["SMS", "Email"], 2),
            ("face_value_jpy", "numeric", ["1000", "10000"], 5),
            ("requested_amount", "numeric", ["1000", "90000"], 300),
            ("approved_amount", "numeric", ["1000", "90000"], 300),
        ],
        "ds_face_value",
    )
    # before: 「額面」 named nothing (face_value reads 額面金額), so the column was asked
    spec = acted_spec("SMSで配ったカードの額面合計っていくら？", cards)
    assert spec["metrics"] == {"face_value_jpy": ["sum"]}
    # such a shortened name is weak: 「申請」 (of 申請金額) beside a measure named whole
    spec = acted_spec("申請で、approved_amountの平均はいくら？", cards)
    assert spec["metrics"] == {"approved_amount": ["mean"]}


VISAS = dataset_summary(
    300,
    [
        ("Case ID", "text", ["V-1"], 300),
        ("Application Date", "datetime", ["2024-04-01", "2025-09-30"], 200),
        ("Approval Date", "datetime", ["2024-05-01", "2025-09-30"], 150),
        ("Visa Type", "categorical", ["Engineer", "Dependent"], 2),
        ("Total Cost", "numeric", ["30000", "250000"], 200),
    ],
    "ds_visas",
)


def test_an_english_event_not_done_is_a_blank_date_of_that_event() -> None:
    """ "still waiting for approval" with an Approval Date column: its blank rows (before:
    every application was counted)."""
    for text in (
        "how many applications are still waiting for approval",
        "How many cases have not been approved yet?",
    ):
        spec = acted_spec(text, VISAS)
        assert spec["filters"] == [{"col": "Approval Date", "op": "is_null"}], text
    spec = acted_spec("How many cases have already been approved?", VISAS)
    assert spec["filters"] == [{"col": "Approval Date", "op": "not_null"}]


def test_空いてる_is_blank_and_an_unread_state_is_asked_not_counted_away() -> None:
    rentals = dataset_summary(
        300,
        [
            ("貸出番号", "text", ["R-1"], 300),
            ("貸出日", "datetime", ["2024-04-01", "2025-09-30"], 200),
            ("返却日", "datetime", ["2024-04-05", "2025-09-30"], 180),
            ("拠点", "categorical", ["東京", "大阪"], 2),
            ("枚数", "numeric", ["10", "200"], 100),
        ],
        "ds_pallet_rentals",
    )
    spec = acted_spec("返却日が空いてる貸出を数えてもらえますか", rentals)
    assert spec["filters"] == [{"col": "返却日", "op": "is_null"}]
    # 「まだ返ってきてない」 is read by no rule: asked, never the count of every rental
    decision = decide("まだ返ってきてない貸出って何件ありますか", rentals)
    assert decision.next_action == "ask"


def test_a_flag_or_an_event_said_to_be_left_out_keeps_the_other_rows() -> None:
    """ "excluding renewals", "renewals excluded", 「解約済みのを除いて」: the rows where it is
    no (before: only the renewals and only the cancelled contracts were totalled, silently)."""
    visas = dataset_summary(
        300,
        [
            ("Case ID", "text", ["V-1"], 300),
            ("Visa Type", "categorical", ["Engineer", "Dependent"], 2),
            ("Renewal", "boolean", ["True", "False"], 2),
            ("Total Cost", "numeric", ["30000", "250000"], 200),
        ],
        "ds_visa_renewals",
    )
    for text in ("Total Cost excluding renewals", "total cost, renewals excluded"):
        spec = acted_spec(text, visas)
        assert spec["filters"] == [{"col": "Renewal", "op": "==", "value": False}], text
    plants = dataset_summary(
        300,
        [
            ("契約番号", "text", ["C-1"], 300),
            ("契約日", "datetime", ["2024-04-01", "2025-09-30"], 200),
            ("解約日", "datetime", ["2024-05-01", "2025-09-30"], 50),
            ("月額料金", "numeric", ["3000", "25000"], 100),
        ],
        "ds_plant_contracts",
    )
    spec = acted_spec("解約済みのを除いて、月額料金の合計いくら？", plants)
    assert spec["filters"] == [{"col": "解約日", "op": "is_null"}]
    spec = acted_spec("解約済みの月額料金の合計", plants)
    assert spec["filters"] == [{"col": "解約日", "op": "not_null"}]


def test_the_heaviest_asked_in_its_unit_is_the_largest_not_the_total() -> None:
    """「いちばん重かった…何kg」: the largest weight (before: every weight summed)."""
    pickups = dataset_summary(
        300,
        [
            ("回収番号", "text", ["S-1"], 300),
            ("拠点", "categorical", ["本社", "大阪"], 2),
            ("重量kg", "numeric", ["5", "480"], 200),
            ("処理費用", "numeric", ["3000", "90000"], 200),
        ],
        "ds_shred_pickups",
    )
    spec = acted_spec("重量がいちばん重かった回収って何kgでした?", pickups)
    assert spec["metrics"] == {"重量kg": ["max"]}
    spec = acted_spec("いちばん軽かった回収は何kg？", pickups)
    assert spec["metrics"] == {"重量kg": ["min"]}


def test_an_action_said_as_a_verb_before_its_measure_names_the_measure() -> None:
    """「紛失した枚数…何枚」 is the total of 紛失枚数 (before: the rows with 紛失あり counted);
    「紛失した貸出は何件」 still counts the rows of the flag."""
    pallets = dataset_summary(
        300,
        [
            ("貸出番号", "text", ["P-1"], 300),
            ("拠点", "categorical", ["東京", "大阪"], 2),
            ("枚数", "numeric", ["10", "200"], 100),
            ("紛失枚数", "numeric", ["0", "12"], 10),
            ("紛失あり", "boolean", ["True", "False"], 2),
        ],
        "ds_pallet_losses",
    )
    spec = acted_spec("紛失した枚数って全部で何枚？", pallets)
    assert spec["metrics"] == {"紛失枚数": ["sum"]} and spec["filters"] == []
    spec = acted_spec("紛失した貸出は何件？", pallets)
    assert not spec.get("metrics")
    assert spec["filters"] == [{"col": "紛失あり", "op": "==", "value": True}]


def test_blanks_said_only_to_be_left_out_ask_no_missing_values_check() -> None:
    """ "skip rows where the branch is blank" with nothing else read: the question is asked
    (before: a missing-values check was shown as the answer)."""
    plants = dataset_summary(
        300,
        [
            ("契約番号", "text", ["C-1"], 300),
            ("事業所", "categorical", ["東京本社", "福岡支店"], 2),
            ("鉢数", "numeric", ["1", "20"], 20),
        ],
        "ds_office_plants",
    )
    decision = decide(
        "Which branch has the most plants? skip rows where the branch is blank", plants
    )
    assert decision.next_action == "ask"
    assert acted_spec("Which columns have blanks?", plants)["op"] == "missingness"
    assert acted_spec("空欄のある列は？", plants)["op"] == "missingness"


def test_two_entries_in_the_same_month_is_a_duplicate_check_on_the_month_column() -> None:
    """Before: a summary of 社員番号. The month is the date column that is a month
    (拠出月), not 入会日."""
    contributions = dataset_summary(
        300,
        [
            ("明細番号", "text", ["E-1"], 300),
            ("社員番号", "text", ["S-001"], 120),
            ("拠出月", "datetime", ["2024-04-01", "2025-03-01"], 12),
            ("入会日", "datetime", ["2010-04-01", "2024-10-01"], 100),
            ("拠出金額", "numeric", ["1000", "50000"], 50),
        ],
        "ds_stock_plan",
    )
    spec = acted_spec("Check whether any employee has two entries in the same month", contributions)
    assert spec["op"] == "duplicate_check" and spec["subset"] == ["社員番号", "拠出月"]
    spec = acted_spec("同じ社員が同じ月に二重に拠出していないか確認して", contributions)
    assert spec["op"] == "duplicate_check" and set(spec["subset"]) == {"社員番号", "拠出月"}


def test_the_trend_of_a_price_per_unit_is_its_average() -> None:
    """「買付単価の推移」: the monthly average unit price (before: the prices summed);
    an amount's trend is still its total, and a total said is kept."""
    purchases = dataset_summary(
        300,
        [
            ("明細番号", "text", ["E-1"], 300),
            ("拠出月", "datetime", ["2024-04-01", "2025-03-01"], 12),
            ("拠出金額", "numeric", ["1000", "50000"], 50),
            ("買付単価", "numeric", ["1500", "2400"], 200),
        ],
        "ds_stock_purchases",
    )
    spec = acted_spec("買付単価の推移を月次で折れ線に", purchases)
    assert spec["kind"] == "line" and spec["y"] == "買付単価" and spec["agg"] == "mean"
    assert acted_spec("拠出金額の推移を月次で折れ線に", purchases)["agg"] == "sum"
    assert acted_spec("買付単価の合計の月別推移", purchases)["agg"] == "sum"


def test_a_condition_in_a_counter_of_the_column_is_read() -> None:
    """「１０口以上」 on 拠出口数 (before: asked which rows were meant)."""
    contributions = dataset_summary(
        300,
        [
            ("明細番号", "text", ["E-1"], 300),
            ("拠出口数", "numeric", ["1", "50"], 50),
            ("拠出金額", "numeric", ["1000", "50000"], 50),
        ],
        "ds_stock_units",
    )
    spec = acted_spec("拠出口数が１０口以上の明細は何件？", contributions)
    assert spec["filters"] == [{"col": "拠出口数", "op": ">=", "value": 10}]


def test_rows_described_by_what_happened_to_them_are_asked_when_unread() -> None:
    """「納品が遅れた発注は何件」 beside a 納品遅延 flag and a 納品日 date, so that 納品 names
    neither: asked (before: every order counted); 「一番高かったのは」 is no such
    description; with no 納品日 the flag is read."""
    columns = [
        ("発注番号", "text", ["PO-1"], 300),
        ("印刷会社", "categorical", ["三光印刷", "ひかり印刷"], 2),
        ("金額", "numeric", ["3500", "1240000"], 250),
        ("納品遅延", "boolean", ["True", "False"], 2),
    ]
    dated = dataset_summary(
        300, [*columns, ("納品日", "datetime", ["2024-01-16", "2025-09-05"], 250)], "ds_po_dated"
    )
    assert decide("納品が遅れた発注は何件ありました？", dated).next_action == "ask"
    assert acted_spec("金額が一番高かったのはいくら？", dated)["metrics"] == {"金額": ["max"]}
    spec = acted_spec("納品が遅れた発注は何件ありました？", dataset_summary(300, columns, "ds_po"))
    assert spec["filters"] == [{"col": "納品遅延", "op": "==", "value": True}]


def test_a_money_word_with_代_ranks_the_amount_not_the_row_counts() -> None:
    """「部署別に名刺代まとめて。多い順で」: the amount per department, largest first (before:
    each department's share of the orders, counted); 「一番多い部署は？」 still ranks rows."""
    cards = dataset_summary(
        300,
        [
            ("発注番号", "text", ["M-1"], 300),
            ("部署", "categorical", ["営業部", "総務部", "経理部"], 3),
            ("枚数", "numeric", ["100", "500"], 5),
            ("金額", "numeric", ["2000", "30000"], 100),
        ],
        "ds_card_orders",
    )
    spec = acted_spec("部署別に名刺代まとめて。多い順で", cards)
    assert spec["op"] == "groupby_agg" and spec["group_cols"] == ["部署"]
    assert spec["metrics"] == {"金額": ["sum"]} and spec["sort"]["ascending"] is False
    spec = acted_spec("発注が一番多い部署は？", cards)
    assert "金額" not in (spec.get("metrics") or {}) and spec.get("value_col") is None


def test_an_english_outcome_said_of_the_rows_is_asked_when_unread() -> None:
    """ "ended up with a recurrence", "flagged for the bonus" with no column read: asked
    (before: every visit counted)."""
    visits = dataset_summary(
        300,
        [
            ("作業番号", "text", ["W-1"], 300),
            ("拠点", "categorical", ["東京", "大阪"], 2),
            ("請求額", "numeric", ["5000", "90000"], 200),
            ("再発生", "boolean", ["True", "False"], 2),
        ],
        "ds_pest_visits",
    )
    for text in (
        "How many visits ended up with a recurrence?",
        "How many visits were flagged for a follow-up?",
    ):
        assert decide(text, visits).next_action == "ask", text
    assert acted_spec("How many visits were there?", visits)["filters"] == []


def test_a_company_said_without_the_kind_of_company_is_its_value() -> None:
    """「佐川分だけで」 is 配送業者 佐川急便 (before: the condition was dropped and every
    shipment's postage totalled)."""
    shipments = dataset_summary(
        300,
        [
            ("発送番号", "text", ["Y-1"], 300),
            ("配送業者", "categorical", ["ヤマト運輸", "佐川急便", "日本郵便"], 3),
            ("送料", "numeric", ["500", "1500"], 30),
        ],
        "ds_gift_shipments",
    )
    spec = acted_spec("送料の合計、佐川分だけで", shipments)
    assert spec["filters"] == [{"col": "配送業者", "op": "==", "value": "佐川急便"}]
