"""Conditions the offline reasoner used to drop while still answering (issue 28): a count
or a total over every row, reported as if the condition had been applied. Shown on
made-up data of domains no benchmark uses: a facility inspection log (Japanese headers)
and a courier shipment list (English headers)."""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary

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
