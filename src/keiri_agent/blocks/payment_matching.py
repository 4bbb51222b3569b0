"""``accounting.match_payments``: 入金消込 of a bank statement against open invoices.

Reads the three tables (files or records; columns found by their headers), matches
(:mod:`keiri_agent.accounting.payment_matching`) and returns the four tables a user
works from — 消込結果, 要確認 (未消込入金), 未入金請求 with days overdue, 仕訳案 — plus
the lines that are not customers' payments and a summary. Every output is a list of
flat rows that ``excel.write`` writes as a sheet.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from keiri_agent.accounting.bank_statements import read_statement
from keiri_agent.accounting.business_calendar import BusinessCalendar
from keiri_agent.accounting.journal import Accounts, payment_entries
from keiri_agent.accounting.payer_names import THRESHOLD, PayerMatcher
from keiri_agent.accounting.payment_matching import (
    DEFAULT_FEE_TABLE,
    DEFAULT_FEE_TOLERANCE,
    KIND_LABELS,
    FeeRule,
    LineResult,
    MatchResult,
    match_payments,
)
from keiri_agent.accounting.receivables import (
    CUSTOMER_ROLES,
    CUSTOMERS,
    INVOICE_ROLES,
    INVOICES,
    read_customers,
    read_invoices,
)
from keiri_agent.accounting.tables import records_of
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import column_overrides, invalid
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import date_value


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def _iso(value: dt.date | None) -> str | None:
    return value.isoformat() if value else None


def _fees(inputs: Mapping[str, Any]) -> FeeRule:
    table = inputs.get("fee_table")
    tolerance = inputs.get("fee_tolerance")
    steps = DEFAULT_FEE_TABLE if table is None else tuple(int(step) for step in table)
    return FeeRule(steps, DEFAULT_FEE_TOLERANCE if tolerance is None else int(tolerance))


def _as_of(inputs: Mapping[str, Any], result: MatchResult) -> tuple[dt.date, str]:
    given = inputs.get("as_of")
    if given not in (None, ""):
        date = date_value(given)
        if date is None:
            raise invalid(
                f"as_of {given!r} を日付として読めません",
                hint="2026-11-30 の形で書いてください",
                field="as_of",
            )
        return date, "指定"
    dates = [r.line.date for r in result.lines if r.line.date is not None]
    if dates:
        return max(dates), "入金明細の最終日"
    return dt.date.today(), "今日"


def matched_row(result: LineResult) -> dict[str, Any]:
    assert result.customer is not None and result.kind is not None
    line = result.line
    return {
        "明細行": line.row,
        "入金日": _iso(line.date),
        "振込名義": line.payer,
        "入金額": _number(line.deposit),
        "得意先コード": result.customer.id,
        "得意先名": result.customer.name,
        "区分": KIND_LABELS[result.kind],
        "請求書番号": "、".join(a.invoice.id for a in result.applications),
        "消込額": _number(sum((a.amount for a in result.applications), Decimal(0))),
        "手数料": _number(result.fee),
        "過入金額": _number(result.overpaid),
        "請求残高": _number(sum((a.balance_after for a in result.applications), Decimal(0))),
        "名義の判定": result.name_reason,
        "金額の判定": result.amount_reason,
        "信頼度": result.confidence,
    }


def review_row(result: LineResult) -> dict[str, Any]:
    line = result.line
    return {
        "明細行": line.row,
        "入金日": _iso(line.date),
        "振込名義": line.payer,
        "摘要": line.text,
        "入金額": _number(line.deposit),
        "得意先コード": result.customer.id if result.customer else None,
        "得意先名": result.customer.name if result.customer else None,
        "理由": result.reason,
        "候補": result.candidates,
    }


def other_row(result: LineResult) -> dict[str, Any]:
    line = result.line
    return {
        "明細行": line.row,
        "日付": _iso(line.date),
        "摘要": line.text or line.payer,
        "入金額": _number(line.deposit),
        "出金額": _number(line.withdrawal),
        "理由": result.reason,
    }


def open_invoice_rows(
    result: MatchResult, as_of: dt.date, calendar: BusinessCalendar
) -> list[dict[str, Any]]:
    """Invoices with a balance after matching, the longest overdue first. A due date on
    a day the banks or the company are closed moves to the next business day (民法 142:
    a term ending on a holiday ends on the next day business is done), and the days
    overdue count from there."""
    keyed: list[tuple[tuple[int, dt.date, str], dict[str, Any]]] = []
    for invoice in result.invoices:
        balance = result.balances[invoice.id]
        if balance <= 0:
            continue
        paid = result.paid.get(invoice.id, Decimal(0))
        due = calendar.next_business_day(invoice.due) if invoice.due else None
        overdue = (as_of - due).days if due and as_of > due else 0
        if invoice.due is None:
            state = "期限の記載なし"
        elif overdue:
            state = "期限超過"
        else:
            state = "期限内"
        if paid > 0 or balance < invoice.amount:
            state = f"一部入金済・{state}"
        order = (-overdue, invoice.due or dt.date.max, invoice.id)
        keyed.append(
            (
                order,
                {
                    "請求書番号": invoice.id,
                    "得意先コード": invoice.customer.id,
                    "得意先名": invoice.customer.name,
                    "請求日": _iso(invoice.issued),
                    "支払期限": _iso(invoice.due),
                    "期限（営業日）": _iso(due),
                    "請求額": _number(invoice.amount),
                    "今回入金額": _number(paid),
                    "残高": _number(balance),
                    "延滞日数": overdue,
                    "状態": state,
                },
            )
        )
    return [row for _, row in sorted(keyed, key=lambda pair: pair[0])]


class MatchPaymentsBlock(ProcessingBlock):
    """``accounting.match_payments``: see the module docstring."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        try:
            statement = read_statement(
                inputs.get("bank"), column_overrides(inputs, "deposit: 入金金額", "bank")
            )
            customers = read_customers(
                records_of(inputs.get("customers"), CUSTOMERS, CUSTOMER_ROLES),
                column_overrides(inputs, "name: 得意先名", "customers"),
            )
            invoices = read_invoices(
                records_of(inputs.get("invoices"), INVOICES, INVOICE_ROLES),
                customers,
                column_overrides(inputs, "id: 請求No", "invoices"),
            )
        except UserInputError as error:
            raise invalid(error.message, hint=error.hint, **(error.details or {})) from None
        ctx.check_cancelled()
        threshold = inputs.get("name_threshold")
        matcher = PayerMatcher(customers, threshold=THRESHOLD if threshold is None else threshold)
        own_names = [str(name) for name in inputs.get("own_names") or []]
        if statement.holder:
            own_names.append(statement.holder)
        result = match_payments(
            statement.lines,
            invoices,
            customers,
            fees=_fees(inputs),
            matcher=matcher,
            own_names=own_names,
        )
        as_of, as_of_source = _as_of(inputs, result)
        accounts = Accounts(**{k: v for k, v in (inputs.get("accounts") or {}).items() if v})
        matched = [matched_row(r) for r in result.lines if r.status == "matched"]
        review = [review_row(r) for r in result.lines if r.status == "review"]
        others = [other_row(r) for r in result.lines if r.status == "not_payment"]
        calendar = BusinessCalendar.from_setting(ctx.settings.plans.closed_days)
        open_rows = open_invoice_rows(result, as_of, calendar)
        journal = [row.to_record() for row in payment_entries(result.lines, accounts)]
        deposits = sum(1 for r in result.lines if r.status != "not_payment")
        summary = {
            "入金明細の形式": statement.format,
            "明細行数": len(result.lines),
            "入金件数": deposits,
            "消込件数": len(matched),
            "要確認件数": len(review),
            "入金以外": len(others),
            "未入金請求件数": len(open_rows),
            "未入金残高合計": sum(row["残高"] for row in open_rows),
            "基準日": as_of.isoformat(),
            "基準日の決め方": as_of_source,
            "自社の名義": "、".join(own_names),
        }
        return {
            "matched": matched,
            "review": review,
            "not_payments": others,
            "open_invoices": open_rows,
            "journal": journal,
            "summary": summary,
        }
