"""How Japanese office files write numbers and dates in cells (text patterns).

Shared by header detection (``files.header``: a header names columns, it holds no
numbers or dates) and the analysis loader's conversion of text columns.

Numbers are matched after :func:`nfkc` (full-width digits, ``￥``, ``－``, ``（`` fold
to ASCII, every minus sign to ``-``): ``1,234`` ``¥1,234`` ``1,234円`` ``-500``
``¥-500`` ``△500`` ``▲500`` ``(500)`` ``¥(500)``. Dates: ``2025-01-31``,
``2025/01/31``, ``2025.01.31`` (optionally with a time) and ``2025年1月31日``.

:func:`parse_number` and :func:`parse_date` read one cell's text into a value (the
``text.normalize`` block); dates may also be in 和暦 (令和/平成/昭和, ``R5.4.1``).
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


# --------------------------------------------------------------------------- values

_MARKS_RE = re.compile(r"[\s,¥$\\円()+△▲-]")
_NEGATIVE_RE = re.compile(r"[-△▲(]")
_YEN_DASH_RE = re.compile(rf"{_YEN}\s*({_AMOUNT})\s*-")
"""``¥1,234-``: a receipt's closing dash after a yen amount (not a minus)."""
_WAREKI_RE = re.compile(
    r"(令和|平成|昭和|[RHS])\s*(元|\d{1,2})\s*(?:年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日"
    r"|([-/.])\s*(\d{1,2})\s*\5\s*(\d{1,2}))",
    re.IGNORECASE,
)
ERAS: dict[str, tuple[dt.date, dt.date]] = {
    "令和": (dt.date(2019, 5, 1), dt.date.max),
    "平成": (dt.date(1989, 1, 8), dt.date(2019, 4, 30)),
    "昭和": (dt.date(1926, 12, 25), dt.date(1989, 1, 7)),
}
"""The eras a date may be written in: first and last day."""
_ERA_LETTERS = {"R": "令和", "H": "平成", "S": "昭和"}


def parse_number(value: str) -> int | float:
    """An office number as text (``¥1,234-`` ``△500`` ``(500)`` ``1,234円`` ``１２３``).

    Whole numbers come back as ``int``. Raises:
        ValueError: with a Japanese reason when the text is no number.
    """
    number = parse_decimal(value)
    return float(number) if number.as_tuple().exponent != 0 else int(number)


def parse_decimal(value: str) -> Decimal:
    """:func:`parse_number` as an exact ``Decimal`` (money arithmetic)."""
    text = nfkc(value)
    yen_dash = _YEN_DASH_RE.fullmatch(text)
    if yen_dash:
        text = yen_dash.group(1)
    elif not re.fullmatch(NUMBER_RE, text):
        raise ValueError(
            "数値として読めません（使える形: 1,234 / ¥1,234 / 1,234円 / △500 / (500)）"
        )
    digits = _MARKS_RE.sub("", text)
    try:
        number = Decimal(digits)
    except InvalidOperation:
        raise ValueError("数値として読めません") from None
    return -number if _NEGATIVE_RE.search(text) else number


def decimal_value(value: Any) -> Decimal | None:
    """A cell as a ``Decimal`` (a number, or office number text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Number):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    try:
        return parse_decimal(value)
    except ValueError:
        return None


def date_value(value: Any) -> dt.date | None:
    """A cell as a date (``date``/``datetime``, or date text :func:`parse_date` reads),
    else None."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    try:
        return parse_date(value)
    except ValueError:
        return None


def parse_date(value: str) -> dt.date:
    """A date as offices write it: ``2023-04-01`` ``2023/4/1`` ``2023年4月1日`` (a time
    after it is ignored), or in 和暦: ``令和5年4月1日`` ``令和元年5月1日`` ``R5.4.1`` ``H31/4/30``.

    Raises:
        ValueError: with a Japanese reason (no date, no such day, outside the era).
    """
    text = nfkc(value)
    wareki = _WAREKI_RE.fullmatch(text)
    if wareki:
        return _wareki_date(wareki)
    match = DATE_RE.fullmatch(text)
    if match:
        year, month, day = re.split(r"[-/.]", re.split(r"[ T]", text)[0])
        return _date(int(year), int(month), int(day), text)
    ja = re.fullmatch(r"(\d{4})年(\d{1,2})月(\d{1,2})日", text)
    if ja:
        return _date(int(ja.group(1)), int(ja.group(2)), int(ja.group(3)), text)
    raise ValueError(
        "日付として読めません"
        "（使える形: 2023-04-01 / 2023/4/1 / 2023年4月1日 / 令和5年4月1日 / R5.4.1）"
    )


def _wareki_date(match: re.Match[str]) -> dt.date:
    era = _ERA_LETTERS.get(match.group(1).upper(), match.group(1))
    year_text = match.group(2)
    era_year = 1 if year_text == "元" else int(year_text)
    month = match.group(3) or match.group(6)
    day = match.group(4) or match.group(7)
    first, last = ERAS[era]
    if era_year < 1:
        raise ValueError(f"{era}0年という年はありません")
    date = _date(first.year + era_year - 1, int(month), int(day), match.group(0))
    if not first <= date <= last:
        shown = f"{first:%Y-%m-%d}〜" + ("" if last == dt.date.max else f"{last:%Y-%m-%d}")
        raise ValueError(f"{era}{year_text}年{month}月{day}日は{era}の期間（{shown}）の外です")
    return date


def _date(year: int, month: int, day: int, text: str) -> dt.date:
    try:
        return dt.date(year, month, day)
    except ValueError:
        raise ValueError(f"「{text}」という日付はありません（月・日を確認してください）") from None
