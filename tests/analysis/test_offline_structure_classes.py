"""Failure classes read from the ninth blind set and the older sets' leftovers (issue 28),
each shown on made-up data of domains no benchmark uses: a car-rental log (English) and a
company's insurance-policy register and cash book of a sports club (Japanese). Each rule
reads the data's structure (names, kinds, values, blank counts) or the request's grammar."""

from __future__ import annotations

from typing import Any

from offline_support import acted_spec, dataset_summary, decide

ROWS = 900

RENTALS = dataset_summary(
    ROWS,
    [
        ("rental_no", "text", ["RN-0001", "RN-0900"], ROWS),
        ("car_id", "text", ["C-01", "C-77"], 77),
        ("rented_on", "datetime", ["2024-04-02", "2025-09-28"], 500),
        ("returned_on", "datetime", ["2024-04-05", "2025-10-02"], 480),
        ("branch", "categorical", ["Osaka", "Kyoto", "Kobe"], 3),
        ("car_class", "categorical", ["Compact", "Van", "Premium"], 3),
        ("customer_name", "categorical", ["Aoki Ltd", "Baba Co", "Chiba Inc"], 260),
        ("currency", "categorical", ["JPY", "EUR", "US"], 3),
        ("price_eur", "numeric", ["40", "380"], 300),
        ("deposit_number", "text", ["D-1", "D-2"], 850),
        ("insured", "categorical", ["Yes", "No"], 2),
        ("shift", "categorical", ["Morning", "Evening"], 2),
        ("status", "categorical", ["Closed", "Out", "Late"], 3),
        ("damage_pct", "numeric", ["0", "35"], 20),
        ("km_driven", "numeric", ["12", "940"], 600),
        ("notes", "text", ["scratch", "late return"], 40),
    ],
    "ds_rentals",
)
POLICIES = dataset_summary(
    ROWS,
    [
        ("証券番号", "text", ["P-0001", "P-0900"], ROWS),
        ("保険開始日", "datetime", ["2021-04-01", "2025-07-01"], 300),
        ("保険終了日", "datetime", ["2025-03-31", "2030-06-30"], 300),
        ("保険種目", "categorical", ["火災", "自動車", "賠償"], 3),
        ("管理拠点", "categorical", ["本店", "北支店", "南支店"], 3),
        ("担当課", "categorical", ["総務課", "財務課"], 2),
        ("月額保険料", "numeric", ["3000", "98000"], 400),
        ("年間支払額", "numeric", ["36000", "1176000"], 500),
        ("免責額", "numeric", ["0", "100000"], 6),
        ("自動更新", "categorical", ["有", "無"], 2),
        ("充当割合", "numeric", ["10", "90"], 9),
        ("加入理由", "categorical", ["法定", "任意"], 2),
    ],
    "ds_policies",
)
CASHBOOK = dataset_summary(
    ROWS,
    [
        ("伝票番号", "text", ["C-0001", "C-0900"], ROWS),
        ("日付", "datetime", ["2025-04-01", "2026-03-31"], 300),
        ("科目", "categorical", ["遠征費", "用具代", "会場費", "会費"], 4),
        ("受入金額", "numeric", ["10000", "300000"], 30),
        ("払出金額", "numeric", ["500", "88000"], 600),
        ("立替者", "categorical", ["山田", "川口"], 20),
    ],
    "ds_cashbook",
)
for _column in CASHBOOK["columns"]:
    if _column["name"] in ("受入金額", "立替者"):
        _column["missing"] = 800  # income on a few rows only; most rows paid directly


def _group(spec: dict[str, Any]) -> list[str]:
    return list(spec.get("group_cols") or [spec.get("group_col") or spec.get("x")])


def test_a_value_in_a_reason_or_in_a_refused_part_is_no_condition() -> None:
    # before: 本店 (who the result is for) and "Morning"/"Kyoto" of a refused part filtered
    spec = acted_spec("本店の監査で見せるので、保険種目別の月額保険料の合計を出して", POLICIES)
    assert _group(spec) == ["保険種目"] and spec["filters"] == []
    spec = acted_spec("Average km driven per car class; I need it before the morning", RENTALS)
    assert spec["filters"] == []
    spec = acted_spec("Count rentals per car class and email it to Kyoto", RENTALS)
    assert spec["filters"] == []
    # a reason that restricts stays a condition
    spec = acted_spec("本店だけ見たいので、保険種目別の月額保険料の合計を出して", POLICIES)
    assert spec["filters"] == [{"col": "管理拠点", "op": "==", "value": "本店"}]


def test_regardless_of_a_value_and_a_pronoun_spelled_like_a_value_restrict_nothing() -> None:
    # before: 「自動車かどうかを問わず」 kept the car policies; "us" was the country US
    spec = acted_spec("Regardless of whether it was Late, count rentals per branch", RENTALS)
    assert spec["filters"] == []
    spec = acted_spec("Give us the number of rentals per branch", RENTALS)
    assert spec["filters"] == []
    spec = acted_spec("自動車かどうかを問わず、管理拠点ごとの件数を数えて", POLICIES)
    assert spec["filters"] == []


def test_a_yes_no_column_said_with_a_negation_holds_the_no_rows() -> None:
    # before: the column named with 「なし」/"un-" kept the yes rows, or nothing
    spec = acted_spec("自動更新なしの契約は何件？", POLICIES)
    assert spec["filters"] == [{"col": "自動更新", "op": "==", "value": "無"}]
    spec = acted_spec("How many uninsured rentals were there?", RENTALS)
    assert spec["filters"] == [{"col": "insured", "op": "==", "value": "No"}]
    spec = acted_spec("How many rentals are not insured?", RENTALS)
    assert spec["filters"] == [{"col": "insured", "op": "==", "value": "No"}]


def test_the_amount_is_the_filled_money_column_and_a_money_value_asks_it() -> None:
    # before: the mostly blank 受入金額 was the amount; 「遠征費の合計」 asked a grouping
    spec = acted_spec("遠征費で、合計いくら使った？", CASHBOOK)
    assert spec["metrics"] == {"払出金額": ["sum"]}
    spec = acted_spec("2025年度の遠征費の合計", CASHBOOK)
    assert spec["metrics"] == {"払出金額": ["sum"]}
    assert {"col": "科目", "op": "==", "value": "遠征費"} in spec["filters"]


def test_a_general_amount_word_among_several_money_columns_is_asked() -> None:
    # before: 「金額」 named 年間支払額 because its name holds 支払額
    decision = decide("金額の合計は？", POLICIES)
    assert decision.next_action == "ask"
    assert "月額保険料" in decision.clarifying_questions[0]


def test_blanks_left_out_are_a_condition_not_a_missing_values_check() -> None:
    # before: 「空白は除いて」 asked the missing-values check; 「空欄のは」 was not read
    spec = acted_spec("担当課別の免責額、空白は除いて集計して", POLICIES)
    assert spec["op"] == "groupby_agg" and _group(spec) == ["担当課"]
    assert spec["filters"] == [{"col": "担当課", "op": "not_null"}]
    spec = acted_spec("立替者ごとの払出金額の合計、空欄のは除いて", CASHBOOK)
    assert spec["filters"] == [{"col": "立替者", "op": "not_null"}]


def test_comparing_an_aggregation_per_group_is_a_table() -> None:
    # before: 「比べて」/"compare" drew bars although the figure was said
    spec = acted_spec("保険種目ごとに免責額の中央値を比べて", POLICIES)
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"免責額": ["median"]}
    spec = acted_spec("Compare the average km driven across branches", RENTALS)
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"km_driven": ["mean"]}


def test_a_share_word_is_the_form_of_a_missing_values_answer() -> None:
    # before: 「割合」 named 充当割合 and "percentage" damage_pct as columns to check
    spec = acted_spec("加入理由の欠損はどのくらいの割合？", POLICIES)
    assert spec["op"] == "missingness" and spec["columns"] == ["加入理由"]
    spec = acted_spec("What percentage of notes are missing?", RENTALS)
    assert spec["op"] == "missingness" and spec["columns"] == ["notes"]
    # a blank condition with a share and no category: that column's missing values
    spec = acted_spec("立替者が入っていない行はどのくらいの割合？", CASHBOOK)
    assert spec["op"] == "missingness" and spec["columns"] == ["立替者"]


def test_which_value_is_the_most_common_is_one_value() -> None:
    # before: every branch ranked; 「多く借りられている」 asked a numeric column
    spec = acted_spec("Which car class is the most popular?", RENTALS)
    assert _group(spec) == ["car_class"] and spec["top_k"] == 1
    spec = acted_spec("いちばん多く契約されている保険種目を上位2つ", POLICIES)
    assert _group(spec) == ["保険種目"] and spec["top_k"] == 2


def test_a_currency_value_that_is_a_columns_unit_names_that_column() -> None:
    # before: "in EUR" also kept only the rows paid in euros
    spec = acted_spec("average rental in EUR for Premium cars?", RENTALS)
    assert spec["metrics"] == {"price_eur": ["mean"]}
    assert spec["filters"] == [{"col": "car_class", "op": "==", "value": "Premium"}]
    # counted, the currency is a condition
    spec = acted_spec("How many rentals are in EUR?", RENTALS)
    assert spec["filters"] == [{"col": "currency", "op": "==", "value": "EUR"}]


def test_a_category_after_a_value_of_another_is_no_grouping() -> None:
    # before: "Kobe customers" grouped by customer_name
    spec = acted_spec("Total EUR paid by Kobe customers", RENTALS)
    assert spec["op"] == "total" and spec["metrics"] == {"price_eur": ["sum"]}
    assert spec["filters"] == [{"col": "branch", "op": "==", "value": "Kobe"}]


def test_an_english_fiscal_year_is_april_to_march_said_once() -> None:
    # before: "FY2024" was not read at all
    fiscal = [
        {"col": "rented_on", "op": ">=", "value": "2024-04-01"},
        {"col": "rented_on", "op": "<", "value": "2025-04-01"},
    ]
    assert acted_spec("Total km driven in FY2024", RENTALS)["filters"] == fiscal
    spec = acted_spec("Total km driven in FY2024 (Apr 2024 - Mar 2025)", RENTALS)
    assert sorted(spec["filters"], key=str) == sorted(fiscal, key=str)


def test_a_period_applies_to_the_date_it_is_said_of() -> None:
    # before: the first date column (保険開始日) took every period
    spec = acted_spec("2026/3/31までに満了する契約の月額保険料の合計", POLICIES)
    assert spec["filters"] == [{"col": "保険終了日", "op": "<=", "value": "2026-03-31"}]
    spec = acted_spec("How many cars were returned since 2025-06-01?", RENTALS)
    assert spec["filters"][0]["col"] == "returned_on"


def test_duplicate_keys_are_the_things_said_the_same() -> None:
    # before: "deposit numbers" named nothing (another column holds "number"); "same car"
    # missed car_id; "damage records" checked damage_pct
    spec = acted_spec("check for duplicate rental numbers", RENTALS)
    assert spec["subset"] == ["rental_no"]
    spec = acted_spec("any duplicates (same car and rented on date)?", RENTALS)
    assert spec["subset"] == ["car_id", "rented_on"]
    spec = acted_spec("Are any damage records duplicated?", RENTALS)
    assert spec["subset"] is None


def test_how_many_of_a_category_counts_its_values() -> None:
    # before: a count per customer
    spec = acted_spec("how many customers did we rent a van to", RENTALS)
    assert spec["op"] == "total" and spec["metrics"] == {"customer_name": ["nunique"]}


def test_handing_the_data_to_another_system_or_external_data_is_out_of_scope() -> None:
    # before: asked what to analyse
    assert decide("この出納帳を会計ソフトに取り込んで仕訳を作成して", CASHBOOK).next_action == (
        "out_of_scope"
    )
    assert decide("外部の保険料相場データと照合して", POLICIES).next_action == "out_of_scope"


def test_a_value_pointed_at_but_not_named_is_asked() -> None:
    # before: the column was summarised as a whole
    decision = decide("show me that customer's rentals", RENTALS)
    assert decision.next_action == "ask"
    assert "Aoki Ltd" in decision.clarifying_questions[0]
    decision = decide("その保険種目の月額保険料の合計は？", POLICIES)
    assert decision.next_action == "ask"
    assert "火災" in decision.clarifying_questions[0]


def test_a_question_ending_on_the_category_asks_which_one() -> None:
    """「仕入額が最も大きい仕入先は？」 asks which supplier (a ranking), while 「…品目の単価は？」
    asks the price (one number)."""
    suppliers = dataset_summary(
        40,
        [
            ("伝票番号", "text", ["P-001", "P-002"], 40),
            ("仕入先", "categorical", ["山川商事", "海野産業"], 5),
            ("品目", "categorical", ["紙", "インク"], 4),
            ("仕入額", "numeric", ["12000", "8000"], 38),
            ("単価", "numeric", ["120", "80"], 30),
        ],
        "purchases",
    )
    which = decide("仕入額が最も大きい仕入先は？", suppliers).analysis_spec
    assert which is not None and which["op"] == "groupby_agg" and which["group_cols"] == ["仕入先"]
    amount = decide("単価がいちばん高い品目の単価は？", suppliers).analysis_spec
    assert amount is not None and amount["op"] == "total"
