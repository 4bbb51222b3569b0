"""``text.normalize``: clean the columns of a table the way offices write them.

Each named column gets a kind: ``text`` (NFKC: full-width letters and digits to
half-width, half-width kana to full-width, spaces collapsed), ``company`` (``text``, and
the short forms of a company's legal form written out: ㈱ / (株) → 株式会社, (有) → 有限会社,
(合) → 合同会社, where they stand), ``kana`` (only
half-width kana to full-width), ``amount`` / ``number`` (office number text to a
number, :func:`keiri_agent.files.cells.parse_number`) and ``date`` (Western or 和暦
text to ``date_format``, :func:`keiri_agent.files.cells.parse_date`). A cell that
cannot be read is kept as it was and listed in ``problems``; blanks stay blank.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import check_columns, invalid, is_null, records_input
from keiri_agent.files.cells import parse_date, parse_number

KINDS = ("text", "company", "kana", "amount", "number", "date")
_COMPANY_FORMS = (
    (re.compile(r"\(\s*株\s*\)"), "株式会社"),
    (re.compile(r"\(\s*有\s*\)"), "有限会社"),
    (re.compile(r"\(\s*合\s*\)"), "合同会社"),
    (re.compile(r"\(\s*名\s*\)"), "合名会社"),
    (re.compile(r"\(\s*資\s*\)"), "合資会社"),
)
_HALF_KANA_RE = re.compile(r"[\uff61-\uff9f]+")
_SPACES_RE = re.compile(r"\s+")


class _Unreadable(ValueError):
    """A cell the kind cannot read (the message is the reason shown to the user)."""


def normalize_text(value: str) -> str:
    """NFKC (full-width ASCII to half-width, half-width kana to full-width), spaces collapsed."""
    return _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", value)).strip()


def company_name(value: str) -> str:
    """``normalize_text`` with a legal form said short written out (「㈱ABC」「(株)ABC」 →
    「株式会社ABC」), and no space left beside it (「株式会社 ABC」 → 「株式会社ABC」)."""
    text = normalize_text(value)  # NFKC makes ㈱ (株)
    for short, long in _COMPANY_FORMS:
        text = short.sub(long, text)
    return re.sub(r"\s*(株式会社|有限会社|合同会社|合名会社|合資会社)\s*", r"\1", text).strip()


def full_width_kana(value: str) -> str:
    """Half-width katakana (with their voiced marks) to full-width; nothing else changes."""
    return _HALF_KANA_RE.sub(lambda match: unicodedata.normalize("NFKC", match.group(0)), value)


def _number(value: Any) -> int | float:
    if isinstance(value, bool):
        raise _Unreadable("真偽値は数値にできません")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, str):
        try:
            return parse_number(value)
        except ValueError as error:
            raise _Unreadable(str(error)) from None
    raise _Unreadable(f"{type(value).__name__} の値は数値にできません")


def _date(value: Any, date_format: str) -> str:
    if isinstance(value, dt.datetime):
        return value.date().strftime(date_format)
    if isinstance(value, dt.date):
        return value.strftime(date_format)
    if isinstance(value, str):
        try:
            return parse_date(value).strftime(date_format)
        except ValueError as error:
            raise _Unreadable(str(error)) from None
    raise _Unreadable(f"{type(value).__name__} の値は日付にできません")


def _text(value: Any, convert: Any) -> Any:
    if isinstance(value, str):
        return convert(value)
    return value  # numbers and dates are already clean


def _columns(inputs: Mapping[str, Any]) -> dict[str, str]:
    columns = inputs.get("columns")
    if not isinstance(columns, Mapping) or not columns:
        raise invalid(
            "columns には「列名 → 種類」を1つ以上指定してください",
            hint=f"例: {{金額: amount, 日付: date}}（種類: {', '.join(KINDS)}）",
            field="columns",
        )
    for column, kind in columns.items():
        if kind not in KINDS:
            raise invalid(
                f"列「{column}」の種類 {kind!r} は使えません",
                hint=f"種類は {', '.join(KINDS)} のどれかです",
                field=f"columns.{column}",
            )
    return {str(column): str(kind) for column, kind in columns.items()}


def _date_format(inputs: Mapping[str, Any]) -> str:
    date_format = inputs.get("date_format", "%Y-%m-%d")
    if not isinstance(date_format, str) or "%" not in date_format:
        raise invalid(
            "date_format は %Y・%m・%d などを含む書式にしてください",
            hint="例: %Y-%m-%d（2023-04-01）、%Y/%m/%d",
            field="date_format",
        )
    return date_format


class NormalizeBlock(ProcessingBlock):
    """``text.normalize``: per-column normalisation with the unreadable cells reported."""

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _columns(inputs)
        _date_format(inputs)

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        columns = _columns(inputs)
        date_format = _date_format(inputs)
        check_columns(columns, records, "columns")
        problems: list[dict[str, Any]] = []
        result: list[dict[str, Any]] = []
        for index, row in enumerate(records):
            if index % 10_000 == 0:
                ctx.check_cancelled()
            cleaned = dict(row)
            for column, kind in columns.items():
                value = row.get(column)
                if is_null(value) or (isinstance(value, str) and not value.strip()):
                    continue
                try:
                    cleaned[column] = _convert(value, kind, date_format)
                except _Unreadable as error:
                    problems.append(
                        {
                            "row": index + 1,
                            "column": column,
                            "value": _shown(value),
                            "reason": str(error),
                        }
                    )
            result.append(cleaned)
        return {"records": result, "problems": problems}


def _convert(value: Any, kind: str, date_format: str) -> Any:
    if kind == "text":
        return _text(value, normalize_text)
    if kind == "company":
        return _text(value, company_name)
    if kind == "kana":
        return _text(value, full_width_kana)
    if kind == "date":
        return _date(value, date_format)
    return _number(value)


def _shown(value: Any) -> Any:
    """The cell as JSON can carry it (dates as ISO text)."""
    if isinstance(value, dt.date):
        return value.isoformat()
    return value
