"""``accounting.check_invoice_tax``: インボイス制度の請求書チェック.

Reads the invoice list and, when given, its line items (files or records; columns
found by their headers, or named in ``columns``), checks every invoice
(:mod:`keiri_agent.accounting.invoice_tax`: the tax of each rate rounded once, the
記載事項, the 合計) with the 登録番号 check of ``validate.registration_number``, and
returns the findings, each invoice with its computed figures and 判定, and a summary.
Every output is a list of flat rows that ``excel.write`` writes as a sheet.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from keiri_agent.accounting.invoice_tax import (
    CHECK,
    EXEMPT,
    FIX,
    INVOICE_ROLES,
    INVOICES,
    LINE_ROLES,
    LINES,
    PRICES,
    REDUCED,
    ROUNDINGS,
    STANDARD,
    Checked,
    CheckResult,
    Finding,
    check_invoices,
    issued_text,
    read_invoices,
    read_lines,
)
from keiri_agent.accounting.tables import records_of
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import column_overrides, invalid
from keiri_agent.blocks.registration_number import registration_problem
from keiri_agent.errors import UserInputError


def _number(value: Decimal | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def _registration(value: Any) -> str | None:
    return registration_problem(value, "invoice")


def _choice(inputs: Mapping[str, Any], name: str, choices: tuple[str, ...], default: str) -> str:
    value = inputs.get(name)
    if value is None:
        return default
    if value not in choices:
        raise invalid(
            f"{name} {value!r} は使えません",
            hint=f"{'・'.join(choices)} のどれかを指定してください",
            field=name,
        )
    return str(value)


def finding_row(finding: Finding) -> dict[str, Any]:
    return {
        "請求書番号": finding.invoice,
        "行": finding.row,
        "項目": finding.item,
        "内容": finding.text,
        "重要度": finding.severity,
    }


def _basis_text(one: Checked) -> str:
    if one.basis is not None:
        return f"{one.basis}（{one.basis_from}）"
    return "課税の対価なし" if one.basis_from == "課税の対価なし" else "判別できず"


def invoice_row(one: Checked) -> dict[str, Any]:
    invoice = one.invoice
    row: dict[str, Any] = {
        "請求書番号": invoice.id,
        "行": invoice.row,
        "発行者": invoice.issuer or None,
        "登録番号": None if invoice.registration is None else str(invoice.registration),
        "交付年月日": issued_text(invoice.issued),
        "受領者": invoice.recipient or None,
        "対象額の扱い": _basis_text(one),
        "明細行数": one.lines,
    }
    for rate in (STANDARD, REDUCED):
        row[f"{rate}%対象額"] = _number(one.bases.get(rate))
        row[f"{rate}%消費税額（記載）"] = _number(invoice.taxes.get(rate))
        row[f"{rate}%消費税額（計算）"] = _number(one.taxes.get(rate))
    row["非課税・免税の額"] = _number(one.bases.get(EXEMPT))
    row["合計（記載）"] = _number(invoice.total)
    row["合計（計算）"] = _number(one.total)
    row["指摘件数"] = len(one.findings)
    row["判定"] = one.verdict
    return row


def summary_of(result: CheckResult, prices: str, rounding: str) -> dict[str, Any]:
    severities = [finding.severity for finding in result.findings]
    return {
        "請求書数": len(result.invoices),
        "OK": sum(1 for one in result.invoices if one.verdict == "OK"),
        "要確認": sum(1 for one in result.invoices if one.verdict != "OK"),
        "指摘件数": len(result.findings),
        "要修正の指摘": severities.count(FIX),
        "要確認の指摘": severities.count(CHECK),
        "明細行数": result.lines,
        "請求書番号のない行": len(result.skipped),
        "対象額の扱い": prices,
        "端数処理": rounding,
    }


class CheckInvoiceTaxBlock(ProcessingBlock):
    """``accounting.check_invoice_tax``: see the module docstring."""

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _choice(inputs, "prices", PRICES, "自動")
        _choice(inputs, "rounding", tuple(ROUNDINGS), "切り捨て")

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        prices = _choice(inputs, "prices", PRICES, "自動")
        rounding = _choice(inputs, "rounding", tuple(ROUNDINGS), "切り捨て")
        try:
            table = read_invoices(
                records_of(inputs.get("invoices"), INVOICES, INVOICE_ROLES),
                column_overrides(inputs, "id: 請求No", "invoices"),
            )
            given = inputs.get("lines")
            lines = (
                None
                if given is None
                else read_lines(
                    records_of(given, LINES, LINE_ROLES),
                    column_overrides(inputs, "id: 請求No", "lines"),
                )
            )
            ctx.check_cancelled()
            result = check_invoices(
                table, lines, registration=_registration, prices=prices, rounding=rounding
            )
        except UserInputError as error:
            raise invalid(error.message, hint=error.hint, **(error.details or {})) from None
        return {
            "findings": [finding_row(finding) for finding in result.findings],
            "invoices": [invoice_row(one) for one in result.invoices],
            "summary": summary_of(result, prices, rounding),
        }
