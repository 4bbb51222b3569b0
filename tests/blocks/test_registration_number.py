"""validate.registration_number: 国税庁's check digit on real and hand-computed numbers."""

from __future__ import annotations

import pytest
from block_harness import CATALOG, failure, make_context, run

from keiri_agent.blocks.registration_number import check_digit, registration_problem

# Published 法人番号: 国税庁 (its own example) and トヨタ自動車株式会社.
REAL = ["7000012050002", "1180301018771"]


def hand_check_digit(base: str) -> int:
    """9 − (Σ Pn×Qn mod 9), n from the lowest digit, Qn = 1 (odd n) or 2 (even n)."""
    digits = [int(c) for c in base][::-1]
    odd = sum(digits[0::2])  # n = 1, 3, 5, ...
    even = sum(digits[1::2])  # n = 2, 4, 6, ...
    return 9 - (odd + 2 * even) % 9


@pytest.mark.parametrize("number", REAL)
def test_real_numbers_are_valid_as_corporate_and_invoice(number: str) -> None:
    assert check_digit(number[1:]) == int(number[0])
    assert registration_problem(number, "corporate") is None
    assert registration_problem("T" + number, "invoice") is None
    assert registration_problem("T" + number) is None


@pytest.mark.parametrize("base", ["000000000000", "123456789012", "999999999999", "000000000009"])
def test_computed_check_digits(base: str) -> None:
    expected = hand_check_digit(base)
    assert check_digit(base) == expected
    assert registration_problem(f"T{expected}{base}") is None
    wrong = (expected % 9) + 1
    assert "チェックディジット" in (registration_problem(f"T{wrong}{base}") or "")


def test_full_width_and_hyphens_are_accepted() -> None:
    assert registration_problem("ｔ７０００－０１２０－５０００２") is None
    assert registration_problem("T 7000-0120-50002") is None
    assert registration_problem("７００００１２０５０００２", "corporate") is None


@pytest.mark.parametrize(
    ("value", "kind", "says"),
    [
        ("7000012050002", "invoice", "先頭のT"),
        ("T7000012050002", "corporate", "Tは付きません"),
        ("T700001205000", "auto", "桁数"),
        ("T70000120500021", "auto", "桁数"),
        ("T8000012050002", "auto", "チェックディジット"),
        ("T70000120500O2", "auto", "数字以外"),
        ("", "auto", "空欄"),
        (None, "auto", "空欄"),
    ],
)
def test_errors_say_what_is_wrong(value: str | None, kind: str, says: str) -> None:
    assert says in (registration_problem(value, kind) or "")


def test_block_flags_rows() -> None:
    records = [
        {"取引先": "国税庁", "登録番号": "T7000012050002"},
        {"取引先": "A社", "登録番号": "T7000012050003"},
        {"取引先": "B社", "登録番号": None},
        {"取引先": "トヨタ", "登録番号": "Ｔ1180301018771"},
    ]
    out = run("validate.registration_number", make_context(), records=records, column="登録番号")
    assert [row["登録番号_有効"] for row in out["records"]] == [True, False, False, True]
    assert [row["取引先"] for row in out["valid"]] == ["国税庁", "トヨタ"]
    assert [row["取引先"] for row in out["invalid"]] == ["A社", "B社"]
    assert out["records"][0]["登録番号_エラー"] is None
    assert "チェックディジット" in out["invalid"][0]["登録番号_エラー"]
    assert out["summary"] == {"total": 4, "valid": 2, "invalid": 2}
    assert out["records"][3]["登録番号"] == "Ｔ1180301018771"  # the value itself is kept


def test_unknown_column_is_refused() -> None:
    error = failure(
        "validate.registration_number", make_context(), records=[{"番号": "x"}], column="登録番号"
    )
    assert error.details["column"] == "登録番号"


def test_dry_run_sample_is_what_the_block_returns() -> None:
    samples = CATALOG.resolve("validate.registration_number").dry_run_samples
    assert (
        run("validate.registration_number", make_context(), **samples["inputs"])
        == samples["outputs"]
    )
