"""``validate.registration_number``: 法人番号 and 適格請求書発行事業者登録番号 check digits.

A 法人番号 is 13 digits: a check digit then 12 base digits. The 国税庁 rule: with
``Pn`` the base digit at position ``n`` counted from the lowest digit and ``Qn`` 1
for odd ``n``, 2 for even ``n``, the check digit is ``9 − (Σ Pn×Qn mod 9)``. An
invoice registration number is ``T`` followed by a 法人番号 (or, for a sole
proprietor, another 13-digit number with the same check digit). Values are read
after NFKC (full-width digits, ``ｔ``) with hyphens and spaces removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import check_columns, invalid, is_null, records_input
from keiri_agent.files.cells import nfkc

KINDS = ("auto", "invoice", "corporate")
_SEPARATORS_RE = re.compile(r"[\s\-‐‑‒–—―ー]")


def check_digit(base: str) -> int:
    """The check digit of 12 base digits (国税庁's rule)."""
    if len(base) != 12 or not base.isdigit():
        raise ValueError("the base of a 法人番号 is 12 digits")
    total = sum(
        int(digit) * (2 if position % 2 == 0 else 1)
        for position, digit in enumerate(reversed(base), start=1)
    )
    return 9 - total % 9


def cleaned(value: str) -> str:
    """The number as written, full-width folded, hyphens and spaces removed, ``t`` → ``T``."""
    return _SEPARATORS_RE.sub("", nfkc(value)).upper()


def registration_problem(value: Any, kind: str = "auto") -> str | None:
    """Why ``value`` is no valid number of ``kind`` (a Japanese sentence), or None."""
    if is_null(value) or (isinstance(value, str) and not value.strip()):
        return "番号が空欄です"
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"番号は文字列で指定してください（{type(value).__name__} の値です）"
    text = cleaned(str(value))
    invoice = kind == "invoice" or (kind == "auto" and text.startswith("T"))
    if invoice:
        if not text.startswith("T"):
            return "登録番号の先頭のTがありません（T + 13桁の数字で書きます）"
        digits = text[1:]
    else:
        if text.startswith("T"):
            return "法人番号に先頭のTは付きません（Tで始まるのは適格請求書発行事業者登録番号です）"
        digits = text
    if not digits.isdigit() or not digits.isascii():
        return "数字以外の文字が含まれています"
    if len(digits) != 13:
        return f"桁数が違います（数字が{len(digits)}桁です。13桁が必要です）"
    expected = check_digit(digits[1:])
    if int(digits[0]) != expected:
        return (
            f"チェックディジットが合いません（先頭の数字は{expected}のはずが{digits[0]}です）。"
            "番号の写し間違いがないか確認してください"
        )
    return None


class RegistrationNumberBlock(ProcessingBlock):
    """``validate.registration_number``: flag each row's number as valid or not, and why."""

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _column(inputs)
        _kind(inputs)

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        column = _column(inputs)
        kind = _kind(inputs)
        check_columns([column], records, "column")
        flagged: list[dict[str, Any]] = []
        for index, row in enumerate(records):
            if index % 10_000 == 0:
                ctx.check_cancelled()
            problem = registration_problem(row.get(column), kind)
            flagged.append({**row, f"{column}_有効": problem is None, f"{column}_エラー": problem})
        valid = [row for row in flagged if row[f"{column}_有効"]]
        invalid_rows = [row for row in flagged if not row[f"{column}_有効"]]
        summary = {"total": len(flagged), "valid": len(valid), "invalid": len(invalid_rows)}
        return {"records": flagged, "valid": valid, "invalid": invalid_rows, "summary": summary}


def _column(inputs: Mapping[str, Any]) -> str:
    column = inputs.get("column")
    if not isinstance(column, str) or not column:
        raise invalid(
            "column に登録番号（または法人番号）の列名を指定してください",
            hint="例: column: 登録番号",
            field="column",
        )
    return column


def _kind(inputs: Mapping[str, Any]) -> str:
    kind = inputs.get("kind", "auto")
    if kind not in KINDS:
        raise invalid(
            f"kind {kind!r} は使えません",
            hint="invoice（T+13桁の登録番号）、corporate（13桁の法人番号）、auto（Tの有無で判断）",
            field="kind",
        )
    return str(kind)
