"""Forms of saying a condition, a period, a grouping or a count that the offline
reasoner used to misread (issue 28), each shown on made-up data of domains no
benchmark uses: a trade association's membership dues (Japanese) and a grant
register (English)."""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary

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
    ],
    "ds_dues",
)
GRANTS = dataset_summary(
    ROWS,
    [
        ("grant_id", "text", ["G-001", "G-002"], ROWS),
        ("program", "categorical", ["Youth", "Culture", "Sports"], 3),
        ("awarded_on", "datetime", ["2024-01-10", "2024-12-20"], 300),
        ("amount", "numeric", ["50000", "2000000"], 400),
        ("reported", "boolean", ["True", "False"], 2),
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
