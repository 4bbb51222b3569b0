"""入金消込: bank deposits matched to open invoices, the way an accountant does it.

For each deposit the payer is first tied to one customer (``payer_names``); then the
amount is explained by that customer's open invoices, oldest due first:

- ``exact``: one invoice of the same amount (of several with that amount, the oldest);
- ``combined``: several invoices adding up to the payment (合算入金; a bounded search
  over the customer's oldest ``MAX_COMBINED_INVOICES`` invoices);
- ``fee``: one invoice, or several, short by a transfer fee the customer deducted
  (a shortfall in ``fee_table`` or up to ``fee_tolerance``, booked as 支払手数料);
- ``partial``: less than the customer's one open invoice (一部入金; its balance stays
  open). With several open, which one it pays is asked (法定充当 — 民法 488–489 — would
  take the oldest due, but the customer may have meant another);
- ``overpaid``: more than everything the customer owes (過入金: all invoices paid,
  the rest booked as 前受金) — unless the rest is exactly another customer's open
  invoice (one payment for two customers: asked).

Exact and combined explanations come first; a fee is assumed only when no exact sum
fits. When two different explanations fit equally (two invoice combinations, an exact
sum and a fee), the line is not guessed: it goes to 要確認 with the candidates. Lines
are matched in two passes so that a clear match of a later line is never taken by a
partial or over-payment of an earlier one: first every exact/combined/fee explanation
in statement order, then partial and over-payments against what is still open.

Nothing is decided silently: a payer tied to no customer or to several, an amount no
rule explains, a customer with nothing open — each goes to 要確認 with why and the
candidates (customers by name, invoices by amount).
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from keiri_agent.accounting.bank_lines import BankLine
from keiri_agent.accounting.payer_names import Customer, PayerMatch, PayerMatcher
from keiri_agent.accounting.receivables import Invoice

DEFAULT_FEE_TABLE = (110, 220, 330, 440, 550, 660, 770, 880)
"""Transfer fees (税込) Japanese banks commonly charge a remitter."""
DEFAULT_FEE_TOLERANCE = 880
"""A shortfall up to this many yen is taken as a deducted transfer fee."""
MAX_COMBINED_INVOICES = 16
"""Combined payments are searched among this many oldest open invoices of a customer."""
SHORT_PAYMENT_SHARE = Decimal("0.20")
"""A payment short of the invoice by more than a fee but less than this share of it is
not taken as 一部入金 (an instalment leaves a real balance): such a gap is a deduction
to ask about (値引, 相殺, the consumption tax left out) — the same fifth as
``OVERPAYMENT_SHARE`` on the other side."""
OVERPAYMENT_SHARE = Decimal("0.20")
"""A payment above everything owed by more than this share of it is not taken as 過入金
(a double fee, a rounding): so large an excess is a prepayment or a transfer meant
for another invoice or company, to ask about."""
TAX_RATES = (Decimal("0.10"), Decimal("0.08"))
"""Consumption tax rates (標準, 軽減): a payment equal to an invoice without its tax is
a tax left unpaid, not a part payment."""
OWN = "__own__"
"""The id the company's own names are matched under."""
MAX_COMBINATIONS = 100_000
"""Invoice combinations tried per line at most (then the line goes to 要確認)."""

Kind = Literal["exact", "combined", "fee", "partial", "overpaid"]
Status = Literal["matched", "review", "not_payment"]

KIND_LABELS: dict[str, str] = {
    "exact": "完全一致",
    "combined": "合算入金",
    "fee": "手数料差引",
    "partial": "一部入金",
    "overpaid": "過入金",
}
_CONFIDENCE = {"exact": 1.0, "combined": 0.95, "fee": 0.95, "partial": 0.7, "overpaid": 0.7}


@dataclass(frozen=True)
class FeeRule:
    """Which shortfalls are transfer fees: any in ``table``, or up to ``tolerance``."""

    table: tuple[int, ...] = DEFAULT_FEE_TABLE
    tolerance: int = DEFAULT_FEE_TOLERANCE

    def allows(self, shortfall: Decimal) -> bool:
        return shortfall > 0 and (shortfall in self.table or shortfall <= self.tolerance)

    @property
    def largest(self) -> Decimal:
        return Decimal(max((*self.table, self.tolerance)))


@dataclass(frozen=True)
class Application:
    """Part of a payment applied to an invoice, and the invoice's balance after it."""

    invoice: Invoice
    amount: Decimal
    balance_after: Decimal


@dataclass(frozen=True)
class LineResult:
    """What became of one bank line."""

    line: BankLine
    status: Status
    customer: Customer | None = None
    kind: Kind | None = None
    applications: tuple[Application, ...] = ()
    fee: Decimal = Decimal(0)
    overpaid: Decimal = Decimal(0)
    name_reason: str = ""
    amount_reason: str = ""
    confidence: float = 0.0
    reason: str = ""
    """Why the line is in 要確認 or not a payment."""
    candidates: str = ""
    """The customers or invoices a person may choose from (要確認)."""


@dataclass
class MatchResult:
    lines: list[LineResult]
    invoices: list[Invoice]
    balances: dict[str, Decimal]
    """Invoice id → balance after every matched line."""
    paid: dict[str, Decimal] = field(default_factory=dict)
    """Invoice id → amount applied by the matched lines."""


@dataclass(frozen=True)
class _Explanation:
    invoices: tuple[Invoice, ...]
    fee: Decimal

    @property
    def kind(self) -> Kind:
        if self.fee:
            return "fee"
        return "exact" if len(self.invoices) == 1 else "combined"


def match_payments(
    lines: Sequence[BankLine],
    invoices: Sequence[Invoice],
    customers: Sequence[Customer],
    *,
    fees: FeeRule | None = None,
    matcher: PayerMatcher | None = None,
    own_names: Sequence[str] = (),
) -> MatchResult:
    """Match every deposit of ``lines`` (see the module docstring). A deposit whose
    payer is one of ``own_names`` (the company's own account names) moves money
    between the company's accounts: not a customer's payment."""
    fees = fees or FeeRule()
    matcher = matcher or PayerMatcher(customers)
    own = [name for name in own_names if name.strip()]
    ours = PayerMatcher([Customer(OWN, own[0], aliases=tuple(own))]) if own else None
    balances = {invoice.id: invoice.balance for invoice in invoices}
    by_customer: dict[str, list[Invoice]] = {}
    for invoice in sorted(invoices, key=_age):
        by_customer.setdefault(invoice.customer.id, []).append(invoice)
    results: dict[int, LineResult] = {}
    second_pass: list[tuple[BankLine, PayerMatch]] = []
    for line in lines:
        early = _not_a_payment(line)
        if early is None and ours is not None and ours.match(line.payer).customer is not None:
            early = LineResult(
                line, "not_payment", reason="自社の口座からの振替（振込名義が自社名）"
            )
        if early is not None:
            results[line.row] = early
            continue
        payer = matcher.match(line.payer)
        if payer.customer is None:
            payer = _shared_name(line, payer, by_customer, balances, fees)
        if payer.customer is None:
            results[line.row] = _unknown_payer(line, payer, invoices, balances)
            continue
        open_invoices = _open_at(line, by_customer.get(payer.customer.id, []), balances)
        found = _explanations(line, open_invoices, balances, fees)
        if found is None:
            results[line.row] = _review(
                line, payer, "請求の組み合わせが多すぎて確かめきれません", open_invoices, balances
            )
            continue
        chosen = _choose(found)
        if chosen is None and found:
            results[line.row] = _ambiguous(line, payer, found, balances)
            continue
        if chosen is None:
            second_pass.append((line, payer))
            continue
        results[line.row] = _apply(line, payer, chosen, balances, fees)
    for line, payer in second_pass:
        assert payer.customer is not None
        open_invoices = _open_at(line, by_customer.get(payer.customer.id, []), balances)
        results[line.row] = _partial_or_over(line, payer, open_invoices, balances, fees)
    ordered = [results[line.row] for line in lines]
    paid = {
        invoice.id: invoice.balance - balances[invoice.id]
        for invoice in invoices
        if balances[invoice.id] != invoice.balance
    }
    return MatchResult(ordered, list(invoices), balances, paid)


def _shared_name(
    line: BankLine,
    payer: PayerMatch,
    by_customer: dict[str, list[Invoice]],
    balances: dict[str, Decimal],
    fees: FeeRule,
) -> PayerMatch:
    """A payer name several customers share in full — one reading (大和屋・大和家), or a
    transfer name registered for each (a parent company paying for its subsidiaries) — is
    the one customer whose open invoices explain the amount (exactly, or short by a
    transfer fee), when no other of them can explain it at all; otherwise undecided."""
    shared = [c for c in payer.candidates if c.score >= 1.0]
    if len(shared) < 2:
        return payer
    fitting = []
    for candidate in shared:
        open_invoices = _open_at(line, by_customer.get(candidate.customer.id, []), balances)
        found = _explanations(line, open_invoices, balances, fees)
        if found is None:  # too many combinations to rule this customer out
            return payer
        if found:
            fitting.append((candidate, _choose(found)))
    if len(fitting) != 1 or fitting[0][1] is None:
        return payer
    chosen = fitting[0][0]
    others = "・".join(c.customer.name for c in shared if c is not chosen)
    reason = (
        f"{chosen.reason}（同じ名義に当たる{others}には金額の合う請求がなく、"
        "請求と金額が一致するのはこの取引先だけ）"
    )
    return PayerMatch(payer.payer, chosen.customer, payer.candidates, reason)


def _open_at(
    line: BankLine, invoices: Sequence[Invoice], balances: dict[str, Decimal]
) -> list[Invoice]:
    """The invoices a deposit can pay: a balance left, and issued by the day of the
    deposit (a payment cannot settle an invoice that did not exist yet)."""
    return [
        i
        for i in invoices
        if balances[i.id] > 0 and (i.issued is None or line.date is None or i.issued <= line.date)
    ]


def _age(invoice: Invoice) -> tuple[dt.date, dt.date, str]:
    return (invoice.due or dt.date.max, invoice.issued or dt.date.max, invoice.id)


def _not_a_payment(line: BankLine) -> LineResult | None:
    if line.deposit <= 0:
        reason = "出金" if line.withdrawal > 0 else "金額がありません"
        if line.record.get("取消区分") == "1" or line.record.get("取消"):
            reason = f"取り消された振込（{line.record.get('取消') or '取消のレコード'}）"
        return LineResult(line, "not_payment", reason=reason)
    if line.bank_entry:
        return LineResult(
            line,
            "not_payment",
            reason="得意先の入金ではない（利息・還付金・定期預金の解約・組戻しなど）",
        )
    return None


def _explanations(
    line: BankLine, open_invoices: Sequence[Invoice], balances: dict[str, Decimal], fees: FeeRule
) -> list[_Explanation] | None:
    """Every set of open invoices whose balances equal the deposit or exceed it by an
    allowed fee (None: too many combinations to try)."""
    amount = line.deposit
    found: list[_Explanation] = []
    pool = list(open_invoices[:MAX_COMBINED_INVOICES])
    ceiling = amount + fees.largest
    tried = 0
    for size in range(1, len(pool) + 1):
        for group in itertools.combinations(pool, size):
            tried += 1
            if tried > MAX_COMBINATIONS:
                return None
            total = sum((balances[i.id] for i in group), Decimal(0))
            if total > ceiling:
                continue
            shortfall = total - amount
            if shortfall == 0 or fees.allows(shortfall):
                found.append(_Explanation(group, shortfall))
    return _without_twins(found, balances, _named_invoices(line, pool))


def _without_twins(
    found: list[_Explanation], balances: dict[str, Decimal], named: frozenset[str]
) -> list[_Explanation]:
    """Explanations that differ only by which of two equal invoices they take are one:
    the one taking the invoices the payer named (a number typed into the name or the
    EDI field), else the oldest (invoices are in age order) — unless the other is just
    as old (the same due dates): then nothing tells them apart and both stay."""
    kept: dict[tuple[tuple[Decimal, ...], Decimal], list[_Explanation]] = {}

    def mentioned(explanation: _Explanation) -> int:
        return sum(invoice.id in named for invoice in explanation.invoices)

    for explanation in found:
        key = (tuple(sorted(balances[i.id] for i in explanation.invoices)), explanation.fee)
        twins = kept.setdefault(key, [])
        if twins and mentioned(explanation) > mentioned(twins[0]):
            twins[:] = [explanation]
        elif not twins or (
            mentioned(explanation) == mentioned(twins[0]) and _dues(twins[0]) == _dues(explanation)
        ):
            twins.append(explanation)
    return [explanation for twins in kept.values() for explanation in twins]


def _reference_key(text: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", unicodedata.normalize("NFKC", text).upper())


def _named_invoices(line: BankLine, invoices: Sequence[Invoice]) -> frozenset[str]:
    """The invoices whose number the line carries (in the payer name, 摘要 or EDI情報;
    2507-018 typed as 2507018): at least four characters with a digit."""
    said = _reference_key(f"{line.payer} {line.text}")
    found = set()
    for invoice in invoices:
        key = _reference_key(invoice.id)
        if len(key) >= 4 and any(char.isdigit() for char in key) and key in said:
            found.add(invoice.id)
    return frozenset(found)


def _dues(explanation: _Explanation) -> tuple[dt.date, ...]:
    return tuple(sorted(i.due or dt.date.max for i in explanation.invoices))


def _choose(found: list[_Explanation]) -> _Explanation | None:
    """The one explanation to apply: exact sums before fees, a single invoice before
    combinations of a fee; None when none fits or two fit equally (one invoice of the
    amount and other invoices adding up to it exactly are two explanations)."""
    for fits in (
        [e for e in found if not e.fee],
        [e for e in found if e.fee and len(e.invoices) == 1],
        [e for e in found if e.fee],
    ):
        if len(fits) == 1:
            return fits[0]
        if len(fits) > 1:
            return None
    return None


def _apply(
    line: BankLine,
    payer: PayerMatch,
    chosen: _Explanation,
    balances: dict[str, Decimal],
    fees: FeeRule,
) -> LineResult:
    applications = []
    for invoice in chosen.invoices:
        amount = balances[invoice.id]
        balances[invoice.id] = Decimal(0)
        applications.append(Application(invoice, amount, Decimal(0)))
    ids = "、".join(i.id for i in chosen.invoices)
    if chosen.kind == "exact":
        reason = f"請求 {ids} と金額が一致"
        if _named_invoices(line, chosen.invoices):
            reason += "（請求書番号が振込名義・摘要にあります）"
    elif chosen.kind == "combined":
        reason = f"請求 {len(chosen.invoices)} 件（{ids}）の合計と一致"
    else:
        listed = (
            f"請求 {ids}"
            if len(chosen.invoices) == 1
            else f"請求 {len(chosen.invoices)} 件（{ids}）の合計"
        )
        reason = f"{listed} より {_yen(chosen.fee)} 少ない: 振込手数料の差引とみなしました"
        if chosen.fee not in fees.table:
            reason += f"（手数料表にない額ですが、許容額 {_yen(Decimal(fees.tolerance))} 以内）"
    payer_score = payer.candidates[0].score if payer.candidates else 1.0
    confidence = _CONFIDENCE[chosen.kind] * min(payer_score, 1.0)
    if chosen.fee and chosen.fee not in fees.table:
        confidence *= 0.9
    return LineResult(
        line,
        "matched",
        payer.customer,
        chosen.kind,
        tuple(applications),
        fee=chosen.fee,
        name_reason=payer.reason,
        amount_reason=reason,
        confidence=round(confidence, 3),
    )


def _partial_or_over(
    line: BankLine,
    payer: PayerMatch,
    open_invoices: Sequence[Invoice],
    balances: dict[str, Decimal],
    fees: FeeRule,
) -> LineResult:
    amount = line.deposit
    if not open_invoices:
        return _review(
            line,
            payer,
            "この取引先に未入金の請求がありません（前受け・二重払いの可能性）",
            (),
            balances,
        )
    owed = sum((balances[i.id] for i in open_invoices), Decimal(0))
    oldest = open_invoices[0]
    payer_score = payer.candidates[0].score if payer.candidates else 1.0
    if amount > owed:
        mine = {invoice.id for invoice in open_invoices}
        elsewhere = sorted(
            i for i, left in balances.items() if left == amount - owed and i not in mine
        )
        if elsewhere:  # 142,560 + 63,720 of another customer: one payment for two customers?
            return _review(
                line,
                payer,
                f"未入金の請求の合計 {_yen(owed)} を {_yen(amount - owed)} 超える入金で、超えた額が"
                f"別の取引先の請求 {'、'.join(elsewhere[:3])} と同じです（2 社分をまとめた支払か、"
                "取引先に確認してください）",
                open_invoices,
                balances,
            )
        if amount - owed > owed * OVERPAYMENT_SHARE:
            return _review(
                line,
                payer,
                f"未入金の請求の合計 {_yen(owed)} より {_yen(amount - owed)} 多い入金です。"
                "過入金にしては大きく、前払いか別の請求・別の会社宛ての振込かを取引先に確認してください",
                open_invoices,
                balances,
            )
        applications = []
        for invoice in open_invoices:
            applications.append(Application(invoice, balances[invoice.id], Decimal(0)))
            balances[invoice.id] = Decimal(0)
        over = amount - owed
        reason = (
            f"未入金の請求 {len(open_invoices)} 件の合計 {_yen(owed)} より {_yen(over)} 多い: "
            "過入金（前受金）"
        )
        return LineResult(
            line,
            "matched",
            payer.customer,
            "overpaid",
            tuple(applications),
            overpaid=over,
            name_reason=payer.reason,
            amount_reason=reason,
            confidence=round(_CONFIDENCE["overpaid"] * min(payer_score, 1.0), 3),
        )
    shortfall = balances[oldest.id] - amount
    untaxed = [rate for rate in TAX_RATES if abs(balances[oldest.id] / (1 + rate) - amount) < 1]
    if untaxed:
        return _review(
            line,
            payer,
            f"請求 {oldest.id}（{_yen(balances[oldest.id])}）の税抜額（税率 {untaxed[0]:.0%}）と"
            f"同じ入金です。消費税 {_yen(shortfall)} の払い漏れか、取引先に確認してください",
            open_invoices,
            balances,
        )
    if fees.largest < shortfall < balances[oldest.id] * SHORT_PAYMENT_SHARE:
        return _review(
            line,
            payer,
            f"請求 {oldest.id} より {_yen(shortfall)} 少ない入金です。振込手数料にしては大きく、"
            "一部入金にしては残りが小さすぎます（値引・返品・相殺の確認を）",
            open_invoices,
            balances,
        )
    if amount < balances[oldest.id] - fees.largest and len(open_invoices) > 1:
        return _review(
            line,
            payer,
            f"一部入金です。未入金の請求が {len(open_invoices)} 件あり、どれに充てるか決まりません"
            f"（取引先の指定がなければ、法定充当では期日の最も古い {oldest.id}）",
            open_invoices,
            balances,
        )
    if amount < balances[oldest.id] - fees.largest:
        left = balances[oldest.id] - amount
        balances[oldest.id] = left
        reason = (
            f"最も期日の古い請求 {oldest.id}（{_yen(oldest.balance)}）の一部入金。残り {_yen(left)}"
        )
        return LineResult(
            line,
            "matched",
            payer.customer,
            "partial",
            (Application(oldest, amount, left),),
            name_reason=payer.reason,
            amount_reason=reason,
            confidence=round(_CONFIDENCE["partial"] * min(payer_score, 1.0), 3),
        )
    return _review(
        line, payer, "金額が請求（その組み合わせ・手数料差引）と合いません", open_invoices, balances
    )


def _unknown_payer(
    line: BankLine, payer: PayerMatch, invoices: Sequence[Invoice], balances: dict[str, Decimal]
) -> LineResult:
    same_amount = [i for i in invoices if balances[i.id] == line.deposit][:3]
    names = "、".join(f"{c.customer.name}（{c.score:.2f}: {c.reason}）" for c in payer.candidates)
    hints = []
    if names:
        hints.append(f"名義の候補: {names}")
    if same_amount:
        hints.append(
            "金額が同じ請求: " + "、".join(f"{i.id} {i.customer.name}" for i in same_amount)
        )
    reason = payer.reason or "取引先を特定できません"
    if not line.payer:
        reason = "振込名義がありません"
    return LineResult(
        line, "review", reason=reason, candidates=" / ".join(hints), name_reason=payer.reason
    )


def _review(
    line: BankLine,
    payer: PayerMatch,
    reason: str,
    open_invoices: Iterable[Invoice],
    balances: dict[str, Decimal],
) -> LineResult:
    listed = [
        f"{i.id} {_yen(balances[i.id])}（期限 {i.due or '-'}）" for i in list(open_invoices)[:6]
    ]
    candidates = "未入金の請求: " + "、".join(listed) if listed else ""
    return LineResult(
        line,
        "review",
        payer.customer,
        reason=reason,
        candidates=candidates,
        name_reason=payer.reason,
    )


def _ambiguous(
    line: BankLine, payer: PayerMatch, found: list[_Explanation], balances: dict[str, Decimal]
) -> LineResult:
    options = []
    for explanation in found[:4]:
        ids = "+".join(i.id for i in explanation.invoices)
        options.append(
            f"{ids}" + (f"（手数料 {_yen(explanation.fee)}）" if explanation.fee else "")
        )
    return LineResult(
        line,
        "review",
        payer.customer,
        reason=f"金額に合う請求の組み合わせが {len(found)} 通りあり、どれか決められません",
        candidates="候補: " + " / ".join(options),
        name_reason=payer.reason,
    )


def _yen(amount: Decimal) -> str:
    return f"{int(amount):,} 円" if amount == amount.to_integral_value() else f"{amount:,} 円"
