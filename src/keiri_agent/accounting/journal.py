"""Journal entries (仕訳) proposed for matched payments (仕訳案).

One slip (伝票) per matched bank line, each row one debit and one credit of the same
amount, so every row and every slip balances:

- the part of the deposit that settles invoices: 普通預金 / 売掛金 (補助: the customer);
- a transfer fee the customer deducted: 支払手数料 / 売掛金;
- an over-payment: 普通預金 / 前受金.

The account names are the user's (:class:`Accounts`); the rows are a plain 仕訳帳 that
the journal exports turn into an accounting package's import format.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from keiri_agent.accounting.payment_matching import LineResult


@dataclass(frozen=True)
class Accounts:
    """The accounts the entries use (勘定科目 names as the user's books call them)."""

    bank: str = "普通預金"
    receivable: str = "売掛金"
    fee: str = "支払手数料"
    advance: str = "前受金"


@dataclass(frozen=True)
class JournalRow:
    """One row of a slip: a debit and a credit of ``amount``."""

    slip: int
    date: dt.date | None
    debit: str
    debit_sub: str
    credit: str
    credit_sub: str
    amount: Decimal
    memo: str

    def to_record(self) -> dict[str, Any]:
        amount = int(self.amount) if self.amount == self.amount.to_integral_value() else self.amount
        return {
            "伝票番号": self.slip,
            "日付": self.date.isoformat() if self.date else None,
            "借方勘定科目": self.debit,
            "借方補助科目": self.debit_sub,
            "借方金額": amount,
            "貸方勘定科目": self.credit,
            "貸方補助科目": self.credit_sub,
            "貸方金額": amount,
            "摘要": self.memo,
        }


def payment_entries(results: list[LineResult], accounts: Accounts) -> list[JournalRow]:
    """The slips of the matched lines, numbered from 1 in statement order."""
    rows: list[JournalRow] = []
    slip = 0
    for result in results:
        if result.status != "matched" or result.customer is None:
            continue
        slip += 1
        customer = result.customer.name
        invoices = "・".join(a.invoice.id for a in result.applications)
        memo = f"入金消込 {customer} {invoices}".strip()
        settled = result.line.deposit - result.overpaid
        date = result.line.date

        pairs = (
            (accounts.bank, accounts.receivable, settled),
            (accounts.fee, accounts.receivable, result.fee),
            (accounts.bank, accounts.advance, result.overpaid),
        )
        for debit, credit, amount in pairs:
            if amount > 0:
                rows.append(JournalRow(slip, date, debit, "", credit, customer, amount, memo))
    return rows
