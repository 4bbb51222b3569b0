"""Total rows (合計, 小計, Total …) are excluded with a note, kept on request; columns
renamed from empty headers keep their file position."""

from __future__ import annotations

import io
import sys
import unicodedata

import pandas as pd
import pytest
from openpyxl import Workbook

from keiri_agent.agents.analysis.datasets import DatasetRegistry
from keiri_agent.agents.analysis.datasets.totals import _label_candidates, is_total_label


@pytest.fixture
def registry() -> DatasetRegistry:
    return DatasetRegistry(max_bytes=10 * 2**20)


def _xlsx(rows: list[list[object]]) -> bytes:
    book = Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


# a library's loans by branch (another domain than sales): two blocks with 小計, a 総計
LOANS = (
    "分館,分類,貸出冊数,返却冊数\n"  # line 1
    "中央,文学,120,100\n"
    "中央,科学,80,70\n"
    "中央,小計,200,170\n"  # line 4
    "北,文学,50,40\n"
    "北,歴史,30,25\n"
    "北 小計,,80,65\n"  # line 7
    "総計,,280,235\n"  # line 8
)


def test_csv_subtotals_and_grand_total_are_excluded_with_a_note(
    registry: DatasetRegistry,
) -> None:
    dataset_id = registry.load_bytes(LOANS.encode("cp932"), "loans.csv")
    frame = registry.get(dataset_id)
    assert len(frame) == 4
    assert frame["貸出冊数"].sum() == 280
    assert frame["分館"].notna().all() and frame["分類"].notna().all()
    notes = registry.summary(dataset_id)["notes"]
    assert "合計行を 3 行除外しました（4 行目, 7 行目, 8 行目）" in notes[0]


def test_total_rows_are_kept_on_request(registry: DatasetRegistry) -> None:
    dataset_id = registry.load_bytes(LOANS.encode(), "loans.csv", keep_total_rows=True)
    assert len(registry.get(dataset_id)) == 7
    assert "指定により残しています" in registry.summary(dataset_id)["notes"][0]


def test_xlsx_total_row_with_a_blank_key_and_a_title(registry: DatasetRegistry) -> None:
    # a title row above the header, then the data, then a Total row (rounded floats)
    rows: list[list[object]] = [
        ["Rainfall by station"],
        ["station", "rain_mm", "days"],
        ["Aomori", 12.34, 3],
        ["Sendai", 5.1, 2],
        ["Kochi", 40.25, 6],
        [None, None, None],
        ["Grand Total", 57.7, 11],
    ]
    dataset_id = registry.load_bytes(_xlsx(rows), "rain.xlsx")
    frame = registry.get(dataset_id)
    assert frame["station"].tolist() == ["Aomori", "Sendai", "Kochi"]
    notes = registry.summary(dataset_id)["notes"]
    assert any("合計行を 1 行除外しました（7 行目）" in note for note in notes)


def test_total_on_top_is_excluded(registry: DatasetRegistry) -> None:
    csv = "dept,headcount\nTotal,30\nSales,10\nHR,5\nIT,15\n"
    frame = registry.get(registry.load_bytes(csv.encode(), "hr.csv"))
    assert frame["dept"].tolist() == ["Sales", "HR", "IT"]


def test_a_labelled_row_that_is_not_a_sum_is_kept_and_noted(registry: DatasetRegistry) -> None:
    csv = "科目,金額\n旅費,100\n合計,999\n通信費,50\n"
    dataset_id = registry.load_bytes(csv.encode(), "ledger.csv")
    assert len(registry.get(dataset_id)) == 3
    note = registry.summary(dataset_id)["notes"][0]
    assert "一致しないためデータとして残しました（3 行目）" in note


def test_no_total_rows_no_notes(registry: DatasetRegistry) -> None:
    csv = "部門,費目,金額\n会計,設計,100\n統計,集計,100\n"
    dataset_id = registry.load_bytes(csv.encode(), "plain.csv")
    assert len(registry.get(dataset_id)) == 2
    assert "notes" not in registry.summary(dataset_id)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("合計", True),
        ("総計", True),
        ("計", True),
        ("小計（関東）", True),
        ("関東計", True),
        ("ＴＯＴＡＬ", True),
        ("Subtotal East", True),
        ("east sub-total", True),
        ("grand total", True),
        ("会計", False),
        ("統計", False),
        ("totally", False),
        ("関東", False),
        (3, False),
    ],
)
def test_total_labels(label: object, expected: bool) -> None:
    assert is_total_label(label) is expected


# --- 3. columns renamed from empty headers keep their file position ------------------


def test_unnamed_columns_keep_their_file_position(registry: DatasetRegistry) -> None:
    # column 2 is empty (dropped), column 4 has no name but values
    csv = "date,,amount,,memo\n2025-01-01,,10,x,a\n2025-01-02,,20,y,b\n"
    frame = registry.get(registry.load_bytes(csv.encode(), "gaps.csv"))
    assert list(frame.columns) == ["date", "amount", "column_4", "memo"]
    data = _xlsx([["date", None, "amount", None, "memo"], ["2025-01-01", None, 10, "x", "a"]])
    frame = registry.get(registry.load_bytes(data, "gaps.xlsx"))
    assert list(frame.columns) == ["date", "amount", "column_4", "memo"]
    clash = "column_4,,,\n1,,2,3\n"
    frame = registry.get(registry.load_bytes(clash.encode(), "clash.csv"))
    assert list(frame.columns) == ["column_4", "column_3", "column_4_2"]


def test_a_date_column_holding_the_total_label_becomes_dates(registry: DatasetRegistry) -> None:
    csv = "日付,件数,金額\n2025/04/01,3,1200\n2025/04/02,2,800\n合計,5,2000\n"
    frame = registry.get(registry.load_bytes(csv.encode(), "daily.csv"))
    assert len(frame) == 2
    assert str(frame["日付"].dtype).startswith("datetime64")


def test_label_candidates_cover_every_character_that_folds_into_a_label() -> None:
    """The vectorised pre-test never drops a label: every non-ASCII character whose NFKC
    form (lower-cased) holds 計, t, o, a or l matches the candidate pattern inside Japanese
    text (ASCII letters count only as the word "total")."""
    folding = [
        chr(point)
        for point in range(0x80, sys.maxunicode + 1)
        if point < 0xD800 or point > 0xDFFF
        if set(unicodedata.normalize("NFKC", chr(point)).lower()) & set("計tola")
    ]
    assert len(folding) > 200
    values = pd.Series([f"東京{character}支店" for character in folding], dtype="str")
    assert _label_candidates(values) == values.tolist()
    plain = pd.Series(["東京", "ORD-1", "2025-01-31", "Tal", "東京計", "x TOTAL"], dtype="str")
    assert _label_candidates(plain) == ["東京計", "x TOTAL"]
    mixed = pd.Series(["関東 ｔｏｔａｌ", 3, None, "東北"], dtype=object)
    assert _label_candidates(mixed) == ["関東 ｔｏｔａｌ"]
