"""Request forms the offline reasoner misread on held-out sets, one class per test, each on
a made-up table of its own (not a set's words): the class is what is tested."""

from __future__ import annotations

from tests.analysis.offline_support import acted_spec, dataset_summary

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
