"""table.join / table.reconcile / table.dedupe against pandas and hand-computed matches."""

from __future__ import annotations

import copy
import datetime as dt

import pandas as pd
import pytest
from block_harness import failure, make_context, run

from keiri_agent.blocks import table_match

ORDERS = [
    {"id": 1, "コード": "C01", "金額": 1200},
    {"id": 2, "コード": "C02", "金額": 300},
    {"id": 3, "コード": "C09", "金額": 50},
    {"id": 4, "コード": None, "金額": 10},
    {"id": 5, "コード": "C01", "金額": 80},
]
MASTER = [
    {"コード": "C01", "取引先": "あおば", "金額": 1},
    {"コード": "C02", "取引先": "みなと", "金額": 2},
    {"コード": "C01", "取引先": "あおば（旧）", "金額": 3},
]


def test_left_join_equals_pandas_merge_on_first_right_rows() -> None:
    out = run("table.join", make_context(), left=ORDERS, right=MASTER, on=["コード"])
    first = pd.DataFrame(MASTER).drop_duplicates("コード", keep="first")
    frame = pd.DataFrame(ORDERS).merge(first, on="コード", how="left", suffixes=("", "_right"))
    expected = [
        {k: (None if pd.isna(v) else v) for k, v in row.items()} for row in frame.to_dict("records")
    ]
    # pandas matches a null key with nothing here too (no null keys on the right)
    assert out["records"] == expected
    assert out["duplicates"] == [{"key": {"コード": "C01"}, "count": 2}]
    assert out["summary"] == {
        "left_rows": 5,
        "right_rows": 3,
        "rows": 5,
        "matched": 3,
        "unmatched_left": 2,
    }


def test_inner_join_with_different_key_names_and_duplicate_error() -> None:
    right = [{"code": "C02", "名称": "みなと"}]
    out = run(
        "table.join",
        make_context(),
        left=ORDERS,
        right=right,
        on=[{"left": "コード", "right": "code"}],
        how="inner",
    )
    assert out["records"] == [{"id": 2, "コード": "C02", "金額": 300, "名称": "みなと"}]
    error = failure(
        "table.join", make_context(), left=ORDERS, right=MASTER, on=["コード"], on_duplicate="error"
    )
    assert "重複" in (error.hint or "") and "C01" in error.message
    error = failure("table.join", make_context(), left=ORDERS, right=MASTER, on=["ｺｰﾄﾞ"])
    assert "ｺｰﾄﾞ" in error.message


INVOICES = [
    {"請求番号": "A-1", "取引先": "株式会社あおば", "請求額": "110,000", "請求日": "2025/04/30"},
    {"請求番号": "A-2", "取引先": "ミナト印刷", "請求額": "33,000", "請求日": "2025-04-30"},
    {"請求番号": "A-3", "取引先": "ＡＢＣ商事 ", "請求額": "55,000", "請求日": "2025年4月25日"},
    {"請求番号": "A-4", "取引先": "ABC商事", "請求額": "55,000", "請求日": "2025-04-28"},
    {"請求番号": "A-5", "取引先": "北斗物産", "請求額": "8,800", "請求日": "2025-04-30"},
    {"請求番号": "A-6", "取引先": "株式会社あおば", "請求額": "22,000", "請求日": "2025-04-01"},
]
PAYMENTS = [
    {"名義": "株式会社あおば", "入金額": 109560, "入金日": dt.date(2025, 5, 2)},  # fee 440
    {"名義": "ﾐﾅﾄ印刷", "入金額": 20000, "入金日": "2025-05-07"},  # partial
    {"名義": "abc商事", "入金額": 55000, "入金日": "2025-04-29"},
    {"名義": "abc商事", "入金額": 55000, "入金日": "2025-04-26"},
    {"名義": "不明商事", "入金額": 5000, "入金日": "2025-05-01"},
    {"名義": "株式会社あおば", "入金額": "¥22,000", "入金日": "2025-04-20"},  # 19 days late
]


def reconcile(**extra: object) -> dict[str, object]:
    before = copy.deepcopy((INVOICES, PAYMENTS))
    out = run(
        "table.reconcile",
        make_context(),
        left=INVOICES,
        right=PAYMENTS,
        keys=[{"left": "取引先", "right": "名義"}],
        amount={"left": "請求額", "right": "入金額", "tolerance": 660},
        date={"left": "請求日", "right": "入金日", "window_days": 10},
        **extra,
    )
    assert before == (INVOICES, PAYMENTS)
    return out


def test_reconcile_one_to_one_with_tolerance_window_and_tie_breaks() -> None:
    out = reconcile()
    pairs = [(r["請求番号"], r["右_入金日"], r["金額差"], r["日付差_日"]) for r in out["matched"]]
    # hand-computed: A-1 ↔ the fee-deducted payment (440 ≤ 660, 2 days);
    # A-3 (4/25) and A-4 (4/28) both key-match the two ABC payments with equal amounts:
    # the closest dates win first: A-4 ↔ 4/29 (1 day) then A-3 ↔ 4/26 (1 day).
    assert pairs == [
        ("A-1", dt.date(2025, 5, 2), 440, 2),
        ("A-3", "2025-04-26", 0, 1),
        ("A-4", "2025-04-29", 0, 1),
    ]
    assert out["matched"][0]["右_名義"] == "株式会社あおば"
    differences = {r["請求番号"]: r for r in out["differences"]}
    assert set(differences) == {"A-2", "A-6"}
    assert differences["A-2"]["金額差"] == 13000
    assert "金額差 13000" in differences["A-2"]["理由"]
    assert differences["A-6"]["日付差_日"] == 19 and "19 日" in differences["A-6"]["理由"]
    assert [r["請求番号"] for r in out["unmatched_left"]] == ["A-5"]
    assert out["unmatched_right"] == [PAYMENTS[4]]
    assert out["summary"] == {
        "left_rows": 6,
        "right_rows": 6,
        "matched": 3,
        "differences": 2,
        "unmatched_left": 1,
        "unmatched_right": 1,
    }


def test_every_row_lands_in_exactly_one_output() -> None:
    out = reconcile()
    sides = ("matched", "differences", "unmatched_left")
    lefts = [r["請求番号"] for key in sides for r in out[key]]
    assert sorted(lefts) == sorted(r["請求番号"] for r in INVOICES)
    rights = [r["右_名義"] for key in ("matched", "differences") for r in out[key]]
    rights += [r["名義"] for r in out["unmatched_right"]]
    assert sorted(rights) == sorted(r["名義"] for r in PAYMENTS)


def test_without_key_normalisation_full_width_names_do_not_match() -> None:
    out = reconcile(normalize_keys=False)
    assert {r["請求番号"] for r in out["unmatched_left"]} == {"A-2", "A-3", "A-4", "A-5"}


def test_the_closest_amount_wins_over_order() -> None:
    left = [{"k": "x", "amt": 1000}, {"k": "x", "amt": 1010}]
    right = [{"k": "x", "amt": 1010}, {"k": "x", "amt": 1000}]
    out = run(
        "table.reconcile",
        make_context(),
        left=left,
        right=right,
        keys=["k"],
        amount={"left": "amt", "right": "amt", "tolerance": 20},
    )
    assert [(r["amt"], r["右_amt"]) for r in out["matched"]] == [(1000, 1000), (1010, 1010)]


def test_unreadable_amounts_are_differences_and_bad_inputs_errors() -> None:
    out = run(
        "table.reconcile",
        make_context(),
        left=[{"k": "x", "amt": "未定"}],
        right=[{"k": "x", "amt": 5}],
        keys=["k"],
        amount={"left": "amt", "right": "amt"},
    )
    assert out["matched"] == [] and "左の金額（amt）" in out["differences"][0]["理由"]
    error = failure(
        "table.reconcile", make_context(), left=INVOICES, right=PAYMENTS, keys=["取引先"]
    )
    assert "取引先" in error.message


def test_dedupe_equals_pandas_drop_duplicates() -> None:
    rows = [
        {"番号": "INV-1", "金額": 100},
        {"番号": "INV-2", "金額": 200},
        {"番号": "INV-1", "金額": 100.0},
        {"番号": "inv-1 ", "金額": 100},
        {"番号": None, "金額": 5},
        {"番号": None, "金額": 5},
    ]
    for keep in ("first", "last"):
        out = run("table.dedupe", make_context(), records=rows, keep=keep)
        frame = pd.DataFrame(rows).drop_duplicates(keep=keep)
        assert [rows[i] for i in frame.index] == out["records"]
    out = run("table.dedupe", make_context(), records=rows, keys=["番号"], normalize=True)
    assert out["records"] == [rows[0], rows[1], rows[4]]
    assert [(r["元の行番号"], r["残した行番号"]) for r in out["duplicates"]] == [
        (3, 1),
        (4, 1),
        (6, 5),
    ]
    assert out["summary"] == {"rows": 6, "kept": 3, "removed": 3}


def test_a_key_shared_by_too_many_rows_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_match, "MAX_CANDIDATE_PAIRS", 10)
    rows = [{"k": "同じ", "amt": n} for n in range(4)]
    error = failure("table.reconcile", make_context(), left=rows, right=rows, keys=["k"])
    assert "10 組を超える" in error.message and error.hint and "keys" in error.hint
    small = run("table.reconcile", make_context(), left=rows[:3], right=rows[:3], keys=["k"])
    assert len(small["matched"]) == 3
