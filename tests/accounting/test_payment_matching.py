"""入金消込: amounts explained by a customer's open invoices, or sent to 要確認 with why."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from keiri_agent.accounting.bank_lines import BankLine
from keiri_agent.accounting.bank_statements import lines_from_records
from keiri_agent.accounting.journal import Accounts, payment_entries
from keiri_agent.accounting.payer_names import Customer
from keiri_agent.accounting.payment_matching import FeeRule, LineResult, match_payments
from keiri_agent.accounting.receivables import Invoice

AOBA = Customer("C01", "株式会社あおば商事", "アオバショウジ")
MINATO = Customer("C02", "ミナト印刷", "ミナトインサツ")
SAKURA = Customer("C03", "有限会社さくら物産", "サクラブッサン")
CUSTOMERS = [AOBA, MINATO, SAKURA]


def invoice(id_: str, customer: Customer, amount: int, due: str) -> Invoice:
    value = Decimal(amount)
    return Invoice(id_, customer, value, value, dt.date.fromisoformat(due), None, 0)


def deposit(row: int, payer: str, amount: int, text: str = "") -> BankLine:
    return BankLine(row, dt.date(2026, 11, 10), Decimal(amount), Decimal(0), payer, text)


def one(lines: list[BankLine], invoices: list[Invoice], **kwargs: object) -> LineResult:
    return match_payments(lines, invoices, CUSTOMERS, **kwargs).lines[0]  # type: ignore[arg-type]


def ids(result: LineResult) -> list[str]:
    return [a.invoice.id for a in result.applications]


def test_exact_amount_of_one_invoice() -> None:
    invoices = [
        invoice("A1", AOBA, 110_000, "2026-10-31"),
        invoice("A2", AOBA, 55_000, "2026-11-30"),
    ]
    result = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 55_000)], invoices)
    assert (result.status, result.customer, result.kind, ids(result)) == (
        "matched",
        AOBA,
        "exact",
        ["A2"],
    )
    assert "一致" in result.amount_reason and result.name_reason


def test_of_two_invoices_of_the_same_amount_the_oldest_due_is_paid() -> None:
    invoices = [
        invoice("A2", AOBA, 55_000, "2026-11-30"),
        invoice("A1", AOBA, 55_000, "2026-10-31"),
    ]
    result = one([deposit(1, "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ", 55_000)], invoices)
    assert ids(result) == ["A1"]


def test_transfer_fee_deducted_is_booked_as_fee() -> None:
    invoices = [invoice("A1", AOBA, 110_000, "2026-10-31")]
    result = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 109_340)], invoices)
    assert (result.kind, ids(result), result.fee) == ("fee", ["A1"], Decimal(660))
    journal = payment_entries([result], Accounts())
    assert [(r.debit, r.credit, r.amount) for r in journal] == [
        ("普通預金", "売掛金", Decimal(109_340)),
        ("支払手数料", "売掛金", Decimal(660)),
    ]


def test_a_shortfall_neither_a_fee_nor_a_partial_payment_goes_to_review() -> None:
    # 50 yen short: not in the fee table (tolerance 0), too little to be a partial payment
    invoices = [invoice("A1", AOBA, 110_000, "2026-10-31")]
    result = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 109_950)], invoices, fees=FeeRule(tolerance=0))
    assert result.status == "review"
    assert "合いません" in result.reason and "A1" in result.candidates


def test_several_invoices_summing_to_the_payment_are_combined() -> None:
    invoices = [
        invoice("M1", MINATO, 33_000, "2026-09-30"),
        invoice("M2", MINATO, 17_000, "2026-10-31"),
        invoice("M3", MINATO, 40_000, "2026-11-30"),
    ]
    result = one([deposit(1, "ﾐﾅﾄｲﾝｻﾂ", 50_000)], invoices)
    assert (result.kind, ids(result)) == ("combined", ["M1", "M2"])


def test_combined_with_a_fee() -> None:
    invoices = [
        invoice("M1", MINATO, 33_000, "2026-09-30"),
        invoice("M2", MINATO, 17_000, "2026-10-31"),
    ]
    result = one([deposit(1, "ﾐﾅﾄｲﾝｻﾂ", 49_560)], invoices)
    assert (result.kind, ids(result), result.fee) == ("fee", ["M1", "M2"], Decimal(440))


def test_two_different_combinations_fitting_go_to_review_with_both() -> None:
    invoices = [
        invoice("M1", MINATO, 30_000, "2026-09-30"),
        invoice("M2", MINATO, 20_000, "2026-10-31"),
        invoice("M3", MINATO, 25_000, "2026-11-30"),
        invoice("M4", MINATO, 25_000, "2026-12-31"),
    ]
    result = one([deposit(1, "ﾐﾅﾄｲﾝｻﾂ", 50_000)], invoices)
    assert result.status == "review"
    assert "2 通り" in result.reason
    assert "M1+M2" in result.candidates and "M3+M4" in result.candidates


def test_partial_payment_leaves_the_one_open_invoice_open() -> None:
    invoices = [invoice("S1", SAKURA, 300_000, "2026-10-31")]
    result = match_payments([deposit(1, "ﾕ)ｻｸﾗﾌﾞﾂｻﾝ", 100_000)], invoices, CUSTOMERS)
    line = result.lines[0]
    assert (line.kind, ids(line)) == ("partial", ["S1"])
    assert result.balances == {"S1": Decimal(200_000)}


def test_a_partial_payment_with_several_invoices_open_asks_which_it_pays() -> None:
    invoices = [
        invoice("S1", SAKURA, 300_000, "2026-10-31"),
        invoice("S2", SAKURA, 80_000, "2026-11-30"),
    ]
    result = match_payments([deposit(1, "ﾕ)ｻｸﾗﾌﾞﾂｻﾝ", 100_000)], invoices, CUSTOMERS)
    line = result.lines[0]
    assert (line.status, line.customer) == ("review", SAKURA)
    assert "法定充当では期日の最も古い S1" in line.reason
    assert result.balances == {"S1": Decimal(300_000), "S2": Decimal(80_000)}


def test_an_overpayment_by_another_customers_open_invoice_is_asked() -> None:
    invoices = [
        invoice("S1", SAKURA, 142_560, "2026-10-31"),
        invoice("M1", MINATO, 63_720, "2026-10-31"),
    ]
    line = one([deposit(1, "ﾕ)ｻｸﾗﾌﾞﾂｻﾝ", 206_280)], invoices)
    assert (line.status, line.customer) == ("review", SAKURA)
    assert "M1" in line.reason


def test_overpayment_pays_everything_and_books_the_rest_as_advance() -> None:
    invoices = [invoice("S1", SAKURA, 50_000, "2026-10-31")]
    result = one([deposit(1, "ﾕ)ｻｸﾗﾌﾞﾂｻﾝ", 60_000)], invoices)
    assert (result.kind, ids(result), result.overpaid) == ("overpaid", ["S1"], Decimal(10_000))
    rows = payment_entries([result], Accounts(advance="仮受金"))
    assert [(r.debit, r.credit, r.amount) for r in rows] == [
        ("普通預金", "売掛金", Decimal(50_000)),
        ("普通預金", "仮受金", Decimal(10_000)),
    ]


def test_an_unknown_payer_is_never_matched_even_when_an_amount_is_unique() -> None:
    invoices = [invoice("A1", AOBA, 77_000, "2026-10-31")]
    result = one([deposit(1, "ﾀﾅｶ ｲﾁﾛｳ", 77_000)], invoices)
    assert result.status == "review" and result.customer is None
    assert "A1" in result.candidates  # shown to the person, not applied


def test_a_clear_match_of_a_later_line_is_not_taken_by_an_earlier_partial_payment() -> None:
    invoices = [
        invoice("S1", SAKURA, 50_000, "2026-10-31"),
        invoice("S2", SAKURA, 70_000, "2026-11-30"),
    ]
    lines = [deposit(1, "ﾕ)ｻｸﾗﾌﾞﾂｻﾝ", 20_000), deposit(2, "ﾕ)ｻｸﾗﾌﾞﾂｻﾝ", 50_000)]
    first, second = match_payments(lines, invoices, CUSTOMERS).lines
    assert (second.kind, ids(second)) == ("exact", ["S1"])
    assert (first.kind, ids(first)) == ("partial", ["S2"])


def test_withdrawals_and_interest_are_not_payments() -> None:
    lines = [
        BankLine(1, None, Decimal(0), Decimal(5_000), "", "ATM"),
        BankLine(2, None, Decimal(12), Decimal(0), "", "利息", bank_entry=True),
    ]
    results = match_payments(lines, [], CUSTOMERS).lines
    assert [r.status for r in results] == ["not_payment", "not_payment"]


def test_a_customer_with_nothing_open_goes_to_review() -> None:
    result = one([deposit(1, "ﾐﾅﾄｲﾝｻﾂ", 10_000)], [])
    assert result.status == "review" and result.customer == MINATO
    assert "未入金の請求がありません" in result.reason


@pytest.mark.parametrize("amount", [110_000, 109_340, 50_000, 115_000])
def test_every_journal_slip_balances(amount: int) -> None:
    invoices = [invoice("A1", AOBA, 110_000, "2026-10-31")]
    result = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", amount)], invoices)
    rows = payment_entries([result], Accounts())
    assert sum(r.amount for r in rows if r.debit == "普通預金") == amount
    credited = sum(r.amount for r in rows if r.credit in ("売掛金", "前受金"))
    assert credited == amount + result.fee


def issued_invoice(id_: str, customer: Customer, amount: int, due: str, issued: str) -> Invoice:
    value = Decimal(amount)
    return Invoice(
        id_, customer, value, value, dt.date.fromisoformat(due), dt.date.fromisoformat(issued), 0
    )


def test_an_invoice_issued_after_the_payment_is_not_what_it_pays() -> None:
    # paid 2026-11-10: the November invoice did not exist yet, so 97,850 is the October
    # invoice and 500 more (過入金), not part of a later invoice
    invoices = [
        issued_invoice("N10", AOBA, 97_350, "2026-11-30", "2026-10-31"),
        issued_invoice("N11", AOBA, 102_190, "2026-12-31", "2026-11-30"),
    ]
    result = match_payments([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 97_850)], invoices, CUSTOMERS)
    line = result.lines[0]
    assert (line.kind, ids(line), line.overpaid) == ("overpaid", ["N10"], Decimal(500))
    assert result.balances["N11"] == Decimal(102_190)
    nothing_yet = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 50_000)], invoices[1:])
    assert nothing_yet.status == "review" and "未入金の請求がありません" in nothing_yet.reason


def test_two_equal_invoices_due_the_same_day_are_not_told_apart_by_a_guess() -> None:
    invoices = [
        invoice("K1", AOBA, 132_000, "2026-11-30"),
        invoice("K2", AOBA, 132_000, "2026-11-30"),
    ]
    result = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 132_000)], invoices)
    assert result.status == "review"
    assert "K1" in result.candidates and "K2" in result.candidates


def test_one_invoice_of_the_amount_and_others_adding_up_to_it_are_two_explanations() -> None:
    invoices = [
        invoice("B1", AOBA, 33_000, "2026-10-31"),
        invoice("B2", AOBA, 22_000, "2026-10-31"),
        invoice("B3", AOBA, 55_000, "2026-10-31"),
    ]
    result = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 55_000)], invoices)
    assert result.status == "review"
    assert "B3" in result.candidates and "B1+B2" in result.candidates


def test_a_gap_too_big_for_a_fee_and_too_small_for_a_partial_payment_is_asked() -> None:
    invoices = [invoice("D1", AOBA, 275_880, "2026-10-31")]
    short = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 274_340)], invoices)  # 1,540 short (0.6 %)
    assert short.status == "review" and "1,540 円 少ない" in short.reason
    half = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 137_940)], invoices)
    assert (half.status, half.kind) == ("matched", "partial")


def test_money_from_the_companys_own_account_is_not_a_payment() -> None:
    invoices = [invoice("A1", AOBA, 3_000_000, "2026-10-31")]
    lines = [deposit(1, "ｶ)ﾅﾆﾜｼﾖｸﾋﾝｼﾖｳｶｲ", 3_000_000), deposit(2, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 3_000_000)]
    result = match_payments(lines, invoices, CUSTOMERS, own_names=["ｶ)ﾅﾆﾜｼﾖｸﾋﾝｼﾖｳｶｲ"])
    assert [line.status for line in result.lines] == ["not_payment", "matched"]
    assert "自社" in result.lines[0].reason
    without = match_payments(lines, invoices, CUSTOMERS)
    assert without.lines[0].status == "review"


HOKUSEI_FUDOSAN = Customer("C14", "株式会社北星不動産", "ホクセイフドウサン", ("ﾎｸｾｲﾎ-ﾙﾃﾞｲﾝｸﾞｽ(ｶ",))
HOKUSEI_KANRI = Customer("C15", "北星管理株式会社", "ホクセイカンリ", ("ﾎｸｾｲﾎ-ﾙﾃﾞｲﾝｸﾞｽ(ｶ",))


@pytest.mark.parametrize(("paid", "fee"), [(220_000, 0), (219_340, 660)])
def test_a_parent_paying_for_two_subsidiaries_is_the_one_whose_invoice_fits(
    paid: int, fee: int
) -> None:
    group = [HOKUSEI_FUDOSAN, HOKUSEI_KANRI]
    invoices = [
        invoice("F1", HOKUSEI_FUDOSAN, 220_000, "2026-10-31"),
        invoice("K1", HOKUSEI_KANRI, 55_000, "2026-10-31"),
    ]
    result = match_payments([deposit(1, "ﾎｸｾｲﾎ-ﾙﾃﾞｲﾝｸﾞｽ(ｶ", paid)], invoices, group).lines[0]
    assert (result.status, result.customer, ids(result)) == ("matched", HOKUSEI_FUDOSAN, ["F1"])
    assert result.fee == fee
    assert "北星管理株式会社には金額の合う請求がなく" in result.name_reason


@pytest.mark.parametrize(
    ("amount", "why"),
    [
        (110_000, "both subsidiaries have a 110,000 invoice"),
        (275_000, "220,000 + 55,000: it spans two customers"),
        (109_340, "110,000 less a fee: both have a 110,000 invoice"),
    ],
)
def test_a_parent_payment_that_fits_both_or_neither_alone_is_asked(amount: int, why: str) -> None:
    group = [HOKUSEI_FUDOSAN, HOKUSEI_KANRI]
    invoices = [
        invoice("F1", HOKUSEI_FUDOSAN, 220_000, "2026-10-31"),
        invoice("F2", HOKUSEI_FUDOSAN, 110_000, "2026-10-31"),
        invoice("K1", HOKUSEI_KANRI, 55_000, "2026-10-31"),
        invoice("K2", HOKUSEI_KANRI, 110_000, "2026-10-31"),
    ]
    result = match_payments([deposit(1, "ﾎｸｾｲﾎ-ﾙﾃﾞｲﾝｸﾞｽ(ｶ", amount)], invoices, group).lines[0]
    assert (result.status, result.customer) == ("review", None), why


def test_a_refund_paid_to_us_is_not_a_customer_payment() -> None:
    statement = lines_from_records(
        [{"日付": "2026-11-10", "入金金額": "48400", "摘要": "振込 ｶ)ﾅｶﾞｾｼｼﾖｳ ﾍﾝｷﾝ"}]
    )
    invoices = [invoice("A1", AOBA, 48_400, "2026-10-31")]
    assert one(statement.lines, invoices).status == "not_payment"


def test_a_payment_equal_to_the_invoice_without_its_tax_is_asked() -> None:
    invoices = [invoice("A1", AOBA, 418_000, "2026-10-31")]
    line = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 380_000)], invoices)
    assert (line.status, line.customer) == ("review", AOBA)
    assert "税抜額" in line.reason and "38,000 円" in line.reason


@pytest.mark.parametrize(("paid", "status"), [(57_200, "matched"), (96_800, "review")])
def test_a_large_excess_over_what_is_owed_is_asked_not_booked_as_advance(
    paid: int, status: str
) -> None:
    invoices = [invoice("A1", AOBA, 52_800, "2026-10-31")]
    assert one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", paid)], invoices).status == status


@pytest.mark.parametrize(
    ("paid", "status"), [(60_500, "review"), (55_000, "review"), (33_000, "matched")]
)
def test_a_payment_leaving_under_a_fifth_is_a_deduction_to_ask_about(
    paid: int, status: str
) -> None:
    invoices = [invoice("A1", AOBA, 66_000, "2026-10-31")]
    assert one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", paid)], invoices).status == status


def test_an_invoice_number_typed_with_the_name_picks_that_invoice() -> None:
    invoices = [
        invoice("2506-018", AOBA, 55_000, "2026-09-30"),
        invoice("2507-018", AOBA, 55_000, "2026-10-31"),
    ]
    line = one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ 2507018", 55_000)], invoices)
    assert ids(line) == ["2507-018"] and "請求書番号" in line.amount_reason
    assert ids(one([deposit(1, "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", 55_000)], invoices)) == ["2506-018"]
