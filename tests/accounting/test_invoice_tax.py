"""インボイス制度の請求書チェック: tax once per rate, 記載事項, 合計 — findings, not errors.

Every expected figure is worked out by hand in the comments.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from tests.blocks.block_harness import failure, make_context, run

from keiri_agent.accounting.invoice_tax import (
    CHECK,
    EXCLUDED,
    FIX,
    INCLUDED,
    WHOLE_LIST,
    CheckResult,
    Finding,
    check_invoices,
    rate_of,
    read_invoices,
    read_lines,
    tax_once,
)
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.invoice_tax import CheckInvoiceTaxBlock
from keiri_agent.blocks.registration_number import registration_problem
from keiri_agent.errors import BlockError, UserInputError

BLOCK = "accounting.check_invoice_tax"
VALID = "T7000012050002"  # 国税庁's own 法人番号 7000012050002 with T
WRONG_DIGIT = "T7000012050003"  # its check digit would be 6


def registration(value: Any) -> str | None:
    return registration_problem(value, "invoice")


def invoice(
    number: str = "INV-1",
    *,
    base10: Any = None,
    tax10: Any = None,
    base8: Any = None,
    tax8: Any = None,
    total: Any = None,
    **cells: Any,
) -> dict[str, Any]:
    """An invoice row with every 記載事項 filled in (override any cell by its header)."""
    row = {
        "請求書番号": number,
        "発行者": "国税商事株式会社",
        "登録番号": VALID,
        "交付年月日": "2026-11-30",
        "受領者": "株式会社あおば商事",
        "10%対象額": base10,
        "10%消費税額": tax10,
        "8%対象額": base8,
        "8%消費税額": tax8,
        "合計": total,
    }
    row.update(cells)
    return row


def line(number: str, item: str, amount: Any, **cells: Any) -> dict[str, Any]:
    return {"請求書番号": number, "品目": item, "金額": amount, **cells}


def check(
    invoices: list[dict[str, Any]],
    lines: list[dict[str, Any]] | None = None,
    *,
    columns: dict[str, str] | None = None,
    **options: str,
) -> CheckResult:
    table = read_invoices(invoices, columns)
    line_table = None if lines is None else read_lines(lines)
    return check_invoices(table, line_table, registration=registration, **options)


def items(result: CheckResult) -> list[tuple[str, str, str]]:
    return [(f.invoice, f.item, f.severity) for f in result.findings]


def only(result: CheckResult) -> Finding:
    assert len(result.findings) == 1, items(result)
    return result.findings[0]


# --------------------------------------------------------------------------- figures


@pytest.mark.parametrize(
    ("base", "rate", "basis", "expected"),
    [
        # 12,345 × 10% = 1,234.5
        (12345, 10, EXCLUDED, {"切り捨て": 1234, "四捨五入": 1235, "切り上げ": 1235}),
        # 12,345 × 10/110 = 1,122.27…
        (12345, 10, INCLUDED, {"切り捨て": 1122, "四捨五入": 1122, "切り上げ": 1123}),
        # 294 × 8% = 23.52
        (294, 8, EXCLUDED, {"切り捨て": 23, "四捨五入": 24, "切り上げ": 24}),
        # 294 × 8/108 = 21.77…
        (294, 8, INCLUDED, {"切り捨て": 21, "四捨五入": 22, "切り上げ": 22}),
        # 10,800 × 8/108 = 800 exactly: no rounding at all
        (10800, 8, INCLUDED, {"切り捨て": 800, "四捨五入": 800, "切り上げ": 800}),
        # a credit note: -12,345 × 10% = -1,234.5, rounded towards / away from zero
        (-12345, 10, EXCLUDED, {"切り捨て": -1234, "四捨五入": -1235, "切り上げ": -1235}),
    ],
)
def test_tax_once_per_rate_by_hand(
    base: int, rate: int, basis: str, expected: dict[str, int]
) -> None:
    for rounding, tax in expected.items():
        assert tax_once(Decimal(base), rate, basis, rounding) == Decimal(tax), rounding


@pytest.mark.parametrize(
    ("cell", "rate"),
    [
        ("10%", 10),
        ("１０％", 10),
        ("8%", 8),
        ("軽減8%", 8),
        ("8%（軽減）", 8),
        ("軽減", 8),
        ("標準", 10),
        (0.1, 10),
        ("0.08", 8),
        (8, 8),
        ("0%", 0),
        ("非課税", 0),
        ("免税", 0),
        ("不課税", 0),
        ("5%", None),
        ("3%", None),
        ("10%軽減", None),  # a contradiction is not guessed
        ("課税", None),
        (True, None),
    ],
)
def test_rate_cells(cell: Any, rate: int | None) -> None:
    assert rate_of(cell) == rate


# --------------------------------------------------------------------------- the tax


def test_a_correct_invoice_has_no_findings_and_its_figures() -> None:
    # 12,345 × 10% = 1,234.5 → 1,234; 合計 12,345 + 1,234 = 13,579
    result = check([invoice(base10=12345, tax10=1234, total=13579)])
    assert result.findings == []
    one = result.invoices[0]
    assert (one.verdict, one.basis, one.basis_from) == ("OK", EXCLUDED, "合計から判定")
    assert one.taxes == {10: Decimal(1234)} and one.total == Decimal(13579)


def test_a_wrong_tax_shows_stated_correct_and_difference() -> None:
    result = check([invoice(base10=12345, tax10=1240, total=13585)], prices="税抜")
    finding = only(result)
    assert (finding.item, finding.severity) == ("10%消費税額", FIX)
    assert "記載 1,240円、正しくは 1,234円" in finding.text
    assert "12,345円（税抜）× 10% = 1,234.5円 → 切り捨てで 1,234円" in finding.text
    assert "差 +6円" in finding.text


def test_a_tax_another_rounding_explains_is_only_to_be_confirmed() -> None:
    # 1,234.5 rounded half up is 1,235: the issuer may round that way
    result = check([invoice(base10=12345, tax10=1235, total=13580)], prices="税抜")
    finding = only(result)
    assert (finding.item, finding.severity) == ("10%消費税額", CHECK)
    assert "四捨五入なら一致します" in finding.text and "1,234円" in finding.text
    rounded_half_up = check(
        [invoice(base10=12345, tax10=1235, total=13580)], prices="税抜", rounding="四捨五入"
    )
    assert rounded_half_up.findings == []


def test_rounding_per_line_is_not_allowed() -> None:
    # three 8% lines of 98: per line 98 × 8% = 7.84 → 7, 7 + 7 + 7 = 21;
    # once per rate 294 × 8% = 23.52 → 23
    lines = [line("INV-1", "牛乳 ※", 98) for _ in range(3)]
    result = check([invoice(base8=294, tax8=21, total=315)], lines, prices="税抜")
    finding = only(result)
    assert (finding.item, finding.severity) == ("端数処理", FIX)
    assert "21円は、明細ごとに端数処理（切り捨て）した税額の合計（7 + 7 + 7）" in finding.text
    assert "正しくは 23円" in finding.text and "差 -2円" in finding.text
    assert result.invoices[0].taxes == {8: Decimal(23)}


def test_the_same_wrong_tax_without_lines_is_a_plain_mismatch() -> None:
    # no lines: nothing says it was rounded per line; 23.52 → 切り上げ/四捨五入 24, not 21
    finding = only(check([invoice(base8=294, tax8=21, total=315)], prices="税抜"))
    assert (finding.item, finding.severity) == ("8%消費税額", FIX)
    assert "記載 21円、正しくは 23円" in finding.text


def test_tax_included_invoices() -> None:
    # 11,000 × 10/110 = 1,000; 5,400 × 8/108 = 400; 合計 (税込) 16,400
    good = invoice(base10=11000, tax10=1000, base8=5400, tax8=400, total=16400)
    # 12,345 × 10/110 = 1,122.27… → 1,122 — not 1,234 (10% of a price that includes tax)
    wrong = invoice("INV-2", base10=12345, tax10=1234, total=12345)
    result = check([good, wrong])
    assert [one.basis_from for one in result.invoices] == ["合計から判定", "合計から判定"]
    assert [one.basis for one in result.invoices] == [INCLUDED, INCLUDED]
    finding = only(result)
    assert (finding.invoice, finding.item, finding.severity) == ("INV-2", "10%消費税額", FIX)
    assert "記載 1,234円、正しくは 1,122円" in finding.text
    assert "12,345円（税込）× 10/110 = 1,122.27…円" in finding.text
    assert "差 +112円" in finding.text


def test_a_header_saying_tax_included_decides() -> None:
    row = {"請求書番号": "INV-1", "10%対象額（税込）": 12345, "10%消費税額": 1122}
    result = check([row])
    one = result.invoices[0]
    assert (one.basis, one.basis_from) == (INCLUDED, "列名")
    assert [f.item for f in result.findings if f.invoice == "INV-1"] == []


def test_when_excluded_or_included_cannot_be_told_nothing_is_guessed() -> None:
    no_total = {"請求書番号": "INV-1", "10%対象額": 12345, "10%消費税額": 1234}
    result = check([no_total])
    finding = next(f for f in result.findings if f.invoice == "INV-1")
    assert (finding.item, finding.severity) == ("対象額の扱い（税抜・税込）", CHECK)
    assert "合計の記載がないため" in finding.text
    assert "税抜なら 1,234円、税込なら 1,122円" in finding.text
    assert "税抜として計算した額と一致します" in finding.text
    assert "prices に 税抜 か 税込 を指定してください" in finding.text
    one = result.invoices[0]
    assert one.basis is None and one.taxes == {} and one.verdict == CHECK
    # a 合計 neither reading explains: 12,345 + 1,234 = 13,579, not 13,000
    off = check([invoice(base10=12345, tax10=1234, total=13000)])
    assert "税抜・税込どちらの計算とも合わないため" in off.findings[0].text


def test_mixed_rates_and_a_wrong_total() -> None:
    # 50,000 × 10% = 5,000; 3,250 × 8% = 260; 50,000 + 3,250 + 5,000 + 260 = 58,510
    right = invoice(base10=50000, tax10=5000, base8=3250, tax8=260, total=58510)
    wrong = invoice("INV-2", base10=50000, tax10=5000, base8=3250, tax8=260, total=58500)
    result = check([right, wrong], prices="税抜")
    finding = only(result)
    assert (finding.invoice, finding.item, finding.severity) == ("INV-2", "合計", FIX)
    assert "記載 58,500円、税率ごとの対価と消費税額を足すと 58,510円（差 -10円）" in finding.text
    assert result.invoices[0].total == Decimal(58510)


def test_a_wrong_total_also_names_the_total_with_the_correct_tax() -> None:
    # stated 合計 50,000 + 5,001 = 55,001 is off by 100; correct tax 5,000 → 合計 55,000
    result = check([invoice(base10=50000, tax10=5001, total=55101)], prices="税抜")
    assert items(result) == [("INV-1", "10%消費税額", FIX), ("INV-1", "合計", FIX)]
    assert "正しい消費税額で計算した合計は 55,000円です" in result.findings[1].text


def test_a_tax_total_column_is_checked_against_the_rates() -> None:
    row = invoice(base10=50000, tax10=5000, base8=3250, tax8=260, total=58510)
    row["消費税額合計"] = 5200  # 5,000 + 260 = 5,260
    finding = only(check([row]))
    assert (finding.item, finding.severity) == ("消費税額合計", FIX)
    assert "5,200円が税率ごとの消費税額の合計 5,260円と違います（差 -60円）" in finding.text


# --------------------------------------------------------------------------- 記載事項


@pytest.mark.parametrize(
    ("number", "severity", "said"),
    [
        (VALID, None, None),
        ("Ｔ７０００－０１２０－５０００２", None, None),  # full-width with hyphens
        (WRONG_DIGIT, FIX, "チェックディジットが合いません（先頭の数字は6のはずが7です）"),
        ("7000012050002", FIX, "先頭のTがありません"),
        ("T700001205000", FIX, "桁数が違います"),
        (None, CHECK, "登録番号（T + 13桁）の記載がありません"),
        ("", CHECK, "登録番号（T + 13桁）の記載がありません"),
    ],
)
def test_registration_numbers(number: Any, severity: str | None, said: str | None) -> None:
    result = check([invoice(base10=12345, tax10=1234, total=13579, 登録番号=number)])
    if severity is None:
        assert result.findings == []
        return
    finding = only(result)
    assert (finding.item, finding.severity) == ("登録番号", severity)
    assert said is not None and said in finding.text


def test_missing_date_recipient_and_issuer_are_each_a_finding() -> None:
    row = invoice(base10=12345, tax10=1234, total=13579, 交付年月日="", 受領者=None, 発行者=" ")
    result = check([row])
    assert items(result) == [
        ("INV-1", "発行者", FIX),
        ("INV-1", "交付年月日", FIX),
        ("INV-1", "受領者", FIX),
    ]
    assert result.invoices[0].verdict == CHECK


def test_a_date_that_is_no_date_is_to_be_confirmed() -> None:
    finding = only(check([invoice(base10=12345, tax10=1234, total=13579, 交付年月日="月末")]))
    assert (finding.item, finding.severity) == ("交付年月日", CHECK)
    assert "'月末' を日付として読めません" in finding.text


def test_a_rate_present_needs_its_tax_and_its_consideration() -> None:
    # 8% present, its tax blank: 3,250 × 8% = 260 is named; the 合計 adds up with it
    no_tax = invoice(base10=50000, tax10=5000, base8=3250, tax8=None, total=58510)
    # a tax of 8% with no 8% consideration
    no_base = invoice("INV-2", base10=50000, tax10=5000, base8=None, tax8=260, total=55260)
    result = check([no_tax, no_base], prices="税抜")
    assert items(result) == [("INV-1", "8%消費税額", FIX), ("INV-2", "8%対象額", FIX)]
    assert "消費税額が空欄です。記載が必要です。正しくは 260円" in result.findings[0].text
    assert "消費税額 260円の記載がありますが" in result.findings[1].text


def test_a_column_the_list_lacks_is_one_finding_for_the_whole_list() -> None:
    rows = [
        {"請求書番号": n, "登録番号": VALID, "10%対象額": 1000, "10%消費税額": 100, "合計": 1100}
        for n in ("INV-1", "INV-2", "INV-3")
    ]
    result = check(rows)
    assert items(result) == [
        (WHOLE_LIST, "発行者", CHECK),
        (WHOLE_LIST, "交付年月日", CHECK),
        (WHOLE_LIST, "受領者", CHECK),
    ]
    assert "columns.invoices の issued に列名を指定" in result.findings[1].text
    assert [one.verdict for one in result.invoices] == ["OK", "OK", "OK"]


def test_a_missing_tax_column_is_reported_only_when_a_rate_needs_it() -> None:
    rows = [{**invoice(base10=1000, total=1100), "8%対象額": None}]
    for row in rows:
        del row["10%消費税額"], row["8%消費税額"]
    result = check(rows, prices="税抜")
    assert items(result) == [(WHOLE_LIST, "10%消費税額", CHECK)]


# --------------------------------------------------------------------------- lines


def test_rates_of_lines_from_the_rate_column_a_mark_column_or_the_item() -> None:
    lines = [
        line("INV-1", "お弁当", 1000, 税率="8%"),
        line("INV-1", "お茶", "500", 税率="軽減"),
        line("INV-1", "割り箸", 100, 税率="10%"),
        line("INV-1", "切手", 84, 税率="非課税"),
    ]
    # 10%: 100 → 10; 8%: 1,500 → 120; 非課税 84; 合計 100 + 10 + 1,500 + 120 + 84 = 1,814
    row = invoice(base10=100, tax10=10, base8=1500, tax8=120, total=1814)
    result = check([row], lines)
    assert result.findings == []
    one = result.invoices[0]
    assert one.bases == {10: Decimal(100), 8: Decimal(1500), 0: Decimal(84)}
    assert (one.basis, one.total, one.lines) == (EXCLUDED, Decimal(1814), 4)

    marks = [
        {"請求書番号": "INV-1", "品名": "牛乳", "金額": 200, "軽減": "※"},
        {"請求書番号": "INV-1", "品名": "洗剤", "金額": 300, "軽減": None},
    ]
    assert (
        check([invoice(base10=300, tax10=30, base8=200, tax8=16, total=546)], marks).findings == []
    )
    in_item = [line("INV-1", "牛乳（軽）", 200), line("INV-1", "ヨーグルト※", 100)]
    by_item = check([invoice(base8=300, tax8=24, total=324)], in_item)
    assert by_item.findings == [] and by_item.invoices[0].bases == {8: Decimal(300)}


def test_a_blank_rate_is_taken_as_standard_and_said_so() -> None:
    lines = [line("INV-1", "文具", 1000, 税率=None)]
    finding = only(check([invoice(base10=1000, tax10=100, total=1100)], lines))
    assert (finding.item, finding.severity) == ("税率", CHECK)
    assert "税率が空欄です。軽減税率の印もないため 10% として計算しました" in finding.text


def test_an_unknown_rate_is_left_out_and_the_total_is_not_checked() -> None:
    lines = [line("INV-1", "文具", 1000, 税率="10%"), line("INV-1", "旧商品", 500, 税率="5%")]
    result = check([invoice(base10=1000, tax10=100, total=1625)], lines, prices="税抜")
    finding = only(result)
    assert (finding.item, finding.severity) == ("税率", CHECK)
    assert (
        "税率「5%」は 10%・8%（軽減税率）・0%（非課税・免税）のどれでもありません" in finding.text
    )
    assert "請求明細 2 行目（旧商品・500円）" in finding.text
    assert result.invoices[0].bases == {10: Decimal(1000)}
    # 合計 1,625 cannot tell 税抜 from 税込 while a line's rate is unknown
    auto = check([invoice(base10=1000, tax10=100, total=1625)], lines)
    assert "税率の分からない明細があり合計からは決められないため" in auto.findings[1].text


def test_a_stated_consideration_is_compared_with_its_lines() -> None:
    lines = [line("INV-1", "文具", 600), line("INV-1", "用紙", 500), line("INV-1", "牛乳※", 200)]
    # lines: 10% 1,100 → 110; 8% 200 → 16; the list states 10% 1,000 and no 8% figure
    result = check([invoice(base10=1000, tax10=110, tax8=16)], lines, prices="税抜")
    assert items(result) == [("INV-1", "10%対象額", FIX), ("INV-1", "8%対象額", FIX)]
    assert "10%対象額の記載 1,000円が明細の合計 1,100円と違います（差 -100円）" in (
        result.findings[0].text
    )
    assert "明細の合計は 200円です" in result.findings[1].text
    # a tax of a rate no line has
    stray_tax = check([invoice(base10=1100, tax10=110, tax8=16)], lines[:2], prices="税抜")
    finding = only(stray_tax)
    assert (finding.item, finding.severity) == ("8%消費税額", FIX)
    assert "消費税額 16円の記載がありますが、請求明細に8%（軽減税率）の明細がありません" in (
        finding.text
    )


def test_lines_of_an_unknown_invoice_and_an_invoice_without_lines() -> None:
    lines = [line("INV-1", "文具", 1000), line("INV-9", "文具", 10), line("INV-9", "紙", 20)]
    rows = [
        invoice(base10=1000, tax10=100, total=1100),
        invoice("INV-2", base10=2000, tax10=200, total=2200),
    ]
    result = check(rows, lines)
    assert items(result) == [("INV-2", "明細", CHECK), ("INV-9", "明細", CHECK)]
    assert "記載の対象額で計算しました" in result.findings[0].text
    assert "請求明細の 2・3 行目の請求書番号 INV-9 は請求書一覧にありません" in (
        result.findings[1].text
    )
    assert result.invoices[1].taxes == {10: Decimal(200)}


# --------------------------------------------------------------------------- errors


def test_no_invoice_number_column_is_an_error_saying_how_to_name_it() -> None:
    with pytest.raises(UserInputError) as caught:
        check([{"伝票": "A", "10%対象額": 1000}])
    assert caught.value.message == "請求書一覧に「請求書番号」の列が見つかりません"
    assert "伝票, 10%対象額" in (caught.value.hint or "")
    assert "columns.invoices の id" in (caught.value.hint or "")


def test_an_unreadable_amount_names_the_row_and_the_column() -> None:
    rows = [invoice(base10=1000, tax10=100), invoice("INV-2", base10="1,OOO", tax10=100)]
    with pytest.raises(UserInputError) as caught:
        check(rows)
    assert (
        caught.value.message == "請求書一覧の 2 行目の「10%対象額」'1,OOO' を金額として読めません"
    )
    assert caught.value.details["row"] == 2
    with pytest.raises(UserInputError, match="請求明細の 1 行目の「金額」'時価' を金額"):
        check([invoice(base10=1000)], [line("INV-1", "まぐろ", "時価")])


def test_a_line_with_an_amount_and_no_invoice_number_is_an_error() -> None:
    with pytest.raises(UserInputError, match="請求明細の 2 行目に請求書番号がありません"):
        check([invoice(base10=1000)], [line("INV-1", "紙", 500), line("", "紙", 500)])


def test_a_duplicated_invoice_number_is_an_error_only_when_lines_must_be_assigned() -> None:
    rows = [invoice(base10=1000, tax10=100, total=1100), invoice(base10=20, tax10=2, total=22)]
    assert check(rows).findings == []  # each row checked on its own
    with pytest.raises(UserInputError, match="1 行目と 2 行目の請求書番号 'INV-1' が同じ"):
        check(rows, [line("INV-1", "紙", 1000)])


def test_no_consideration_at_all_is_an_error() -> None:
    with pytest.raises(UserInputError, match=r"税率ごとの対価の額.*の列が見つかりません") as caught:
        check([{"請求書番号": "INV-1", "合計": 1100}])
    assert "請求書一覧の列: 請求書番号, 合計。" in (caught.value.hint or "")
    assert "請求明細（lines）" in (caught.value.hint or "")
    assert check([{"請求書番号": "INV-1", "合計": 1100}], [line("INV-1", "紙", 1000)])


def test_an_empty_list_and_unknown_options_are_errors() -> None:
    with pytest.raises(UserInputError, match="請求書一覧に請求書がありません"):
        check([])
    with pytest.raises(UserInputError, match="prices '外税' は使えません"):
        check([invoice(base10=1000)], prices="外税")
    with pytest.raises(UserInputError, match="rounding '五捨六入' は使えません"):
        check([invoice(base10=1000)], rounding="五捨六入")


# --------------------------------------------------------------------------- the block


@pytest.fixture
def ctx() -> BlockContext:
    return make_context()


def test_the_block_reads_a_csv_download_by_its_headers(ctx: BlockContext) -> None:
    text = (
        "請求書チェック用,2026年11月分\r\n"
        "\r\n"
        "請求書番号,取引先名,登録番号,請求日,宛先,10%対象額(税抜),10%消費税額,"
        "8%対象額(税抜),8%消費税額,合計\r\n"
        'INV-1,国税商事,T7000012050002,2026/11/30,あおば商事,"12,345","1,234",294,23,"13,896"\r\n'
        'INV-2,ミナト食品,T7000012050002,2026/11/30,あおば商事,"1,000",100,294,21,"1,415"\r\n'
        ',,,,,"13,345","1,334",588,44,"15,311"\r\n'
    )
    outputs = run(BLOCK, ctx, invoices={"name": "請求.csv", "data": text.encode("cp932")})
    # INV-1: 12,345 → 1,234 and 294 → 23; 12,345 + 294 + 1,234 + 23 = 13,896
    first, second = outputs["invoices"]
    assert first["対象額の扱い"] == "税抜（列名）"
    assert (first["10%消費税額（計算）"], first["8%消費税額（計算）"]) == (1234, 23)
    assert (first["合計（計算）"], first["判定"], first["交付年月日"]) == (
        13896,
        "OK",
        "2026-11-30",
    )
    assert (second["8%消費税額（記載）"], second["8%消費税額（計算）"]) == (21, 23)
    assert outputs["findings"] == [
        {
            "請求書番号": "INV-2",
            "行": 2,
            "項目": "8%消費税額",
            "内容": "8%（軽減税率）の消費税額が合いません。記載 21円、正しくは 23円"
            "（8%対象 294円（税抜）× 8% = 23.52円 → 切り捨てで 23円）。差 -2円",
            "重要度": FIX,
        }
    ]
    assert outputs["summary"] == {
        "請求書数": 2,
        "OK": 1,
        "要確認": 1,
        "指摘件数": 1,
        "要修正の指摘": 1,
        "要確認の指摘": 0,
        "明細行数": 0,
        "請求書番号のない行": 1,  # the totals row at the bottom
        "対象額の扱い": "自動",
        "端数処理": "切り捨て",
    }


def test_the_block_takes_columns_named_by_the_user(ctx: BlockContext) -> None:
    rows = [{"伝票No": "A-1", "課税対象額": 12345, "税額": 1235, "総計": 13580}]
    columns = {"id": "伝票No", "base_10": "課税対象額", "tax_10": "税額", "total": "総計"}
    outputs = run(
        BLOCK, ctx, invoices=rows, columns={"invoices": columns}, prices="税抜", rounding="四捨五入"
    )
    assert outputs["invoices"][0]["10%消費税額（計算）"] == 1235  # 1,234.5 → 四捨五入 1,235
    assert [f["請求書番号"] for f in outputs["findings"]] == [WHOLE_LIST] * 4


def test_the_block_wants_the_t_of_a_registration_number(ctx: BlockContext) -> None:
    # 7000012050002 is a valid 法人番号, but an invoice's 登録番号 is T + 13 digits
    row = invoice(base10=12345, tax10=1234, total=13579, 登録番号="7000012050002")
    [finding] = run(BLOCK, ctx, invoices=[row])["findings"]
    assert (finding["項目"], finding["重要度"]) == ("登録番号", FIX)
    assert "先頭のTがありません" in finding["内容"]


def test_the_block_gives_input_errors_in_japanese(ctx: BlockContext) -> None:
    error = failure(BLOCK, ctx, invoices=[{"伝票": "A", "10%対象額": 1}])
    assert error.message == "請求書一覧に「請求書番号」の列が見つかりません"
    error = failure(BLOCK, ctx, invoices=[invoice()], columns={"invoices": {"base_10": "課税対象"}})
    assert "請求書一覧に列 '課税対象' がありません" in error.message
    error = failure(BLOCK, ctx, invoices=[invoice(base10="千円")])
    assert error.message == "請求書一覧の 1 行目の「10%対象額」'千円' を金額として読めません"
    error = failure(BLOCK, ctx, invoices="請求書.pdf")
    assert "CSV・Excel ファイルか、表" in error.message
    block = CheckInvoiceTaxBlock()
    with pytest.raises(BlockError, match="prices '外税' は使えません"):
        block.validate({"prices": "外税"}, ctx)
    with pytest.raises(BlockError, match=r"columns\.invoices は 役割: 列名 の対応"):
        block.run({"invoices": [invoice()], "columns": {"invoices": {"base_10": 3}}}, ctx)
