"""How Japanese office files write numbers and dates in cells (text patterns).

Shared by header detection (``files.header``: a header names columns, it holds no
numbers or dates) and the analysis loader's conversion of text columns.

Numbers are matched after :func:`nfkc` (full-width digits, ``￥``, ``－``, ``（`` fold
to ASCII, every minus sign to ``-``): ``1,234`` ``¥1,234`` ``1,234円`` ``-500``
``¥-500`` ``△500`` ``▲500`` ``(500)`` ``¥(500)``. Dates: ``2025-01-31``,
``2025/01/31``, ``2025.01.31`` (optionally with a time) and ``2025年1月31日``.
"""

from __future__ import annotations

import datetime as dt
import numbers
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

_AMOUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_YEN = r"[¥$\\]"  # a CP932 file's half-width yen (0x5C) decodes as a backslash
_SIGN = rf"(?:[-+△▲]\s*(?:{_YEN}\s*)?|{_YEN}\s*(?:[-+△▲]\s*)?)?"
NUMBER_RE = (
    rf"{_SIGN}{_AMOUNT}(?:\s*円)?"
    rf"|\(\s*(?:{_YEN}\s*)?{_AMOUNT}(?:\s*円)?\s*\)"
    rf"|{_YEN}\s*\(\s*{_AMOUNT}\s*\)"
)
"""A number as offices write it (a regular expression for ``fullmatch``, after NFKC)."""
MINUS_RE = "[\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d]"
"""Every dash that means minus (folded to ``-`` by :func:`nfkc`)."""
_MINUS_SIGNS = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d", "-"))
DATE_RE = re.compile(r"(\d{4})([-/.])\d{1,2}\2\d{1,2}(?:([ T])\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?")
"""``2025-01-31`` / ``2025/1/31`` / ``2025.01.31``, optionally with a time (groups:
year, separator, time separator, seconds, fraction)."""
JA_DATE_RE = re.compile(r"\d{4}年\d{1,2}月\d{1,2}日")


def nfkc(value: str) -> str:
    """Full-width digits, signs and marks folded to ASCII (and minus signs to ``-``), stripped."""
    if value.isascii():
        return value.strip()
    return unicodedata.normalize("NFKC", value).translate(_MINUS_SIGNS).strip()


def looks_like_value(cell: Any) -> bool:
    """True for a number or a date (a typed cell, or text that reads as one), not a name."""
    if isinstance(cell, str):
        text = nfkc(cell)
        return bool(
            re.fullmatch(NUMBER_RE, text) or DATE_RE.fullmatch(text) or JA_DATE_RE.fullmatch(text)
        )
    return isinstance(cell, numbers.Number | dt.date | dt.time)


def parse_number(text: str) -> Decimal | None:
    """Office number text as a Decimal (``△500`` → -500, ``(500)`` → -500), else None."""
    folded = nfkc(text)
    if not folded or not re.fullmatch(NUMBER_RE, folded):
        return None
    negative = folded.startswith(("-", "△", "▲", "(")) or bool(
        re.search(r"[¥$\\]\s*[-△▲(]", folded)
    )
    try:
        number = Decimal(re.sub(r"[^\d.]", "", folded))
    except InvalidOperation:
        return None
    return -number if negative else number


def parse_date(value: Any) -> dt.date | None:
    """A date cell (``date``/``datetime``, or text as in :data:`DATE_RE` / ``2025年1月31日``)."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    text = nfkc(value)
    match = re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T].*)?", text) or re.fullmatch(
        r"(\d{4})年(\d{1,2})月(\d{1,2})日", text
    )
    if match is None:
        return None
    try:
        return dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
