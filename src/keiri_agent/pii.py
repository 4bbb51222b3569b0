"""Personal data in free text: find it and replace it with a typed placeholder.

Five kinds, each recognised by its structure rather than by any run of digits, so that
accounting text (amounts, dates, invoice numbers) is left alone:

``my_number``     マイナンバー (個人番号): 12 digits, alone or 4-4-4, whose last digit is
                  the check digit of the official formula (``my_number_check_digit``).
``phone``         Japanese telephone numbers: 0X-XXXX-XXXX, 0XX-XXX-XXXX, …, mobile and
                  IP 0X0-XXXX-XXXX, 0120/0570/0800 numbers, ``(03)1234-5678``,
                  ``03(1234)5678``, ``+81 3-1234-5678``, ``+81(0)90…``, or without
                  separators; the digit count and the grouping must be a Japanese
                  number's (area code and local exchange make six digits).
``email``         e-mail addresses (ASCII, a dotted domain).
``bank_account``  seven digits introduced by 口座番号 / 口座 / 普通 / 当座 (with 預金,
                  番号, ``No.``, a colon, brackets or spaces between; an optional
                  three-digit branch code and hyphen before); only the seven digits
                  are replaced.
``card``          payment card numbers: 13–19 digits, alone or in groups (4-4-4-4,
                  4-6-5, …), passing the Luhn check, with an issuer's prefix and
                  length (Visa, Mastercard, JCB, American Express, Diners, Discover,
                  UnionPay).

Text is matched after NFKC, character by character (full-width digits, ``－``, ``＠``
and the ideographic space count as their ASCII forms), and replaced in the original
text, so everything else of it is kept as written.

Left alone, by decision:

* 法人番号 (13 digits, its own check digit ``corporate_number_check_digit``) is public
  (published by the National Tax Agency) and names a company, not a person; with a
  leading ``T`` it is the 適格請求書発行事業者登録番号 printed on every invoice. A
  13-digit number that is a valid 法人番号 or JAN code, or follows a letter, is never
  taken for a card number either.
* Amounts (``1,234,567,890,123``, ``¥123456789018``, ``123456789018円``), decimals and
  numbers glued to letters or other numbers by ``-``, ``.``, ``/`` or ``#``
  (``INV-123456789018``, ``1-123456789018``) are not マイナンバー; a card number
  (Luhn and an issuer's prefix make a chance match rare) may follow ``No.``.

Pure functions, no I/O. ``redact`` is what notes and log lines use.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

PiiKind = Literal["my_number", "phone", "email", "bank_account", "card"]
KINDS: Final[tuple[PiiKind, ...]] = get_args(PiiKind)
"""Every kind, in the order they are looked for (an earlier kind wins an overlap)."""

PLACEHOLDERS: Final[Mapping[PiiKind, str]] = {
    "my_number": "［マイナンバー］",
    "phone": "［電話番号］",
    "email": "［メール］",
    "bank_account": "［口座番号］",
    "card": "［カード番号］",
}
"""What replaces each kind."""

LABELS: Final[Mapping[PiiKind, str]] = {
    "my_number": "マイナンバー",
    "phone": "電話番号",
    "email": "メール",
    "bank_account": "口座番号",
    "card": "カード番号",
}
"""Each kind's Japanese name (progress lines)."""


@dataclass(frozen=True)
class Found:
    """One item of personal data: its kind and where it is (``text[start:end]``)."""

    kind: PiiKind
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """Text with its personal data replaced, and how many of each kind were."""

    text: str
    counts: Mapping[PiiKind, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def checked_kinds(kinds: Iterable[str]) -> tuple[PiiKind, ...]:
    """``kinds`` as known kinds, in ``KINDS`` order; ``ValueError`` naming an unknown one."""
    wanted = set(kinds)
    unknown = sorted(wanted - set(KINDS))
    if unknown:
        raise ValueError(f"unknown PII kind(s) {unknown}: use {', '.join(KINDS)}")
    return tuple(kind for kind in KINDS if kind in wanted)


# ------------------------------------------------------------------ check digits
def my_number_check_digit(first11: str) -> int:
    """The check digit of a 個人番号 from its first 11 digits.

    The formula of the 行政手続における特定の個人を識別するための番号の利用等に関する法律
    施行令 and its ordinance: with ``P(n)`` the n-th digit counted from the right of the
    11 digits and ``Q(n)`` = n + 1 for n ≤ 6, n − 5 for 7 ≤ n ≤ 11 (weights 2…7, 2…6
    from the right), the check digit is 11 − (Σ P(n)·Q(n) mod 11), and 0 when that
    remainder is 0 or 1.
    """
    if len(first11) != 11 or not first11.isascii() or not first11.isdigit():
        raise ValueError("a 個人番号 has 11 digits before its check digit")
    total = sum(
        int(digit) * (n + 1 if n <= 6 else n - 5)
        for n, digit in enumerate(reversed(first11), start=1)
    )
    remainder = total % 11
    return 0 if remainder <= 1 else 11 - remainder


def is_my_number(digits: str) -> bool:
    """Whether ``digits`` (12 ASCII digits) is a 個人番号 with a valid check digit."""
    if len(digits) != 12 or not digits.isascii() or not digits.isdigit():
        return False
    return my_number_check_digit(digits[:11]) == int(digits[11])


def corporate_number_check_digit(base12: str) -> int:
    """The check digit (the first digit) of a 法人番号 from its other 12 digits.

    With ``P(n)`` the n-th digit from the right of the 12 and ``Q(n)`` 1 for odd n, 2
    for even n, the check digit is 9 − (Σ P(n)·Q(n) mod 9).
    """
    if len(base12) != 12 or not base12.isascii() or not base12.isdigit():
        raise ValueError("a 法人番号 has 12 digits after its check digit")
    total = sum(
        int(digit) * (1 if n % 2 else 2) for n, digit in enumerate(reversed(base12), start=1)
    )
    return 9 - total % 9


def is_corporate_number(digits: str) -> bool:
    """Whether ``digits`` (13 ASCII digits) is a 法人番号 with a valid check digit."""
    if len(digits) != 13 or not digits.isascii() or not digits.isdigit():
        return False
    return corporate_number_check_digit(digits[1:]) == int(digits[0])


def luhn_valid(digits: str) -> bool:
    """Whether ``digits`` (ASCII digits) pass the Luhn (mod 10) check."""
    if not digits or not digits.isascii() or not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


_CARD_ISSUERS: Final[tuple[tuple[int, int, frozenset[int]], ...]] = (
    # (first prefix, last prefix, lengths): prefixes of equal length
    (4, 4, frozenset({13, 16, 19})),  # Visa
    (51, 55, frozenset({16})),  # Mastercard
    (2221, 2720, frozenset({16})),  # Mastercard 2-series
    (34, 34, frozenset({15})),  # American Express
    (37, 37, frozenset({15})),
    (3528, 3589, frozenset(range(16, 20))),  # JCB
    (300, 305, frozenset(range(14, 20))),  # Diners Club
    (3095, 3095, frozenset(range(14, 20))),
    (36, 36, frozenset(range(14, 20))),
    (38, 39, frozenset(range(16, 20))),
    (6011, 6011, frozenset(range(16, 20))),  # Discover
    (644, 649, frozenset(range(16, 20))),
    (65, 65, frozenset(range(16, 20))),
    (62, 62, frozenset(range(16, 20))),  # UnionPay
)


def is_gtin13(digits: str) -> bool:
    """Whether ``digits`` (13 ASCII digits) are a JAN / EAN-13 code with a valid check
    digit (weights 1, 3, 1, … from the left; the total a multiple of 10)."""
    if len(digits) != 13 or not digits.isascii() or not digits.isdigit():
        return False
    return sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0


def is_card_number(digits: str) -> bool:
    """Whether ``digits`` look like a payment card number: 13–19 digits, an issuer's
    prefix and length (``_CARD_ISSUERS``), the Luhn check; 13 digits that are a
    法人番号 or a JAN code (Japan's start with 45 / 49, Visa's prefix) are not: no
    13-digit card has been issued for years, while both fill accounting text."""
    if not 13 <= len(digits) <= 19 or not luhn_valid(digits):
        return False
    if len(digits) == 13 and (is_corporate_number(digits) or is_gtin13(digits)):
        return False
    return any(
        low <= int(digits[: len(str(low))]) <= high and len(digits) in lengths
        for low, high, lengths in _CARD_ISSUERS
    )


# ------------------------------------------------------------------ normalising
class _Fold(dict[int, str]):
    """``str.translate`` table: each character to its NFKC form when that is one
    character (full-width digits, letters and punctuation, the ideographic space,
    half-width kana), so the folded text keeps every offset of the original.
    Circled and other ``No`` numbers (①, ²) stay: they are not digits of a number."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        folded = unicodedata.normalize("NFKC", char)
        value = folded if len(folded) == 1 and unicodedata.category(char) != "No" else char
        self[code] = value
        return value


_FOLD = _Fold()


def fold(text: str) -> str:
    """``text`` NFKC-normalised character by character (same length, same offsets)."""
    return text if text.isascii() else text.translate(_FOLD)


# ------------------------------------------------------------------ patterns
_DASH = "\\-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u30fc"
"""Hyphens as typed in Japanese text (after NFKC ``－`` is ``-``; ``ー`` too)."""
_SEP = f"[ {_DASH}]"
_GLUE = f"[{_DASH}./#,]"
_NUMBER_END = (
    rf"(?![0-9A-Za-z_])(?![{_DASH}.,/][0-9])(?!\s?円)"  # not more digits, a decimal, an amount
)
_ID_START = (
    rf"(?<![0-9A-Za-z_+¥$])(?<![0-9A-Za-z_]{_GLUE})"  # not glued to a code, number or currency
)

_MY_NUMBER = re.compile(
    _ID_START
    + rf"(?:[0-9]{{12}}|[0-9]{{4}}(?P<s>{_SEP})[0-9]{{4}}(?P=s)[0-9]{{4}})"
    + r"(?(s)(?!(?P=s)[0-9]))"  # not the first three groups of a longer number
    + _NUMBER_END
)
_CARD = re.compile(
    rf"(?<![0-9A-Za-z_+¥$])(?<![0-9]{_GLUE})"  # a card may follow ``No.``: Luhn guards it
    + rf"(?:[0-9]{{13,19}}|[0-9]{{4}}(?P<s>{_SEP})[0-9]{{3,6}}(?:(?P=s)[0-9]{{3,5}}){{1,3}})"
    + r"(?(s)(?!(?P=s)[0-9]{3}))"  # a group more (an expiry date ``12/28`` may follow)
    + _NUMBER_END
)
_PHONE_START = r"(?<![0-9A-Za-z_+])(?<![0-9]" + _GLUE + ")"
_PHONE = re.compile(
    _PHONE_START
    + r"(?:"
    # +81 3-1234-5678, +81 (0)90 1234 5678, +81312345678
    + rf"(?P<intl>\+81{_SEP}?(?:\(0\){_SEP}?)?)"
    + rf"(?:(?P<ia>[1-9][0-9]{{0,3}}){_SEP}(?P<ib>[0-9]{{1,4}}){_SEP}(?P<ic>[0-9]{{3,4}})"
    + r"|(?P<iall>[1-9][0-9]{8,9}))"
    # (03)1234-5678, (03) 1234 5678
    + rf"|\((?P<pa>0[0-9]{{1,4}})\) ?(?P<pb>[0-9]{{1,4}}){_SEP}?(?P<pc>[0-9]{{3,4}})"
    # 03(1234)5678
    + r"|(?P<qa>0[0-9]{1,4})\((?P<qb>[0-9]{1,4})\)(?P<qc>[0-9]{3,4})"
    # 03-1234-5678, 090 1234 5678
    + rf"|(?P<a>0[0-9]{{1,4}}){_SEP}(?P<b>[0-9]{{1,4}}){_SEP}(?P<c>[0-9]{{3,4}})"
    # 0312345678, 09012345678
    + r"|(?P<all>0[0-9]{9,10})"
    + r")"
    + _NUMBER_END
)
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])"
    r"[A-Za-z0-9](?:[A-Za-z0-9._%+\-]{0,63})"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}"
    r"(?![A-Za-z0-9\-])"
)
_BANK_FILLER = r"(?:[ \t:=#.()\[\]「」『』【】]|預金|番号|口座|普通|当座|No|NO|no|は)"
_BANK = re.compile(
    r"(?:口座番号|口座|普通|当座)"
    + _BANK_FILLER
    + r"{0,8}?"
    + rf"(?:[0-9]{{3}}[{_DASH}])?"  # a branch code before the account number
    + r"(?P<account>[0-9]{7})"
    + _NUMBER_END
)

_MOBILE_LIKE = ("020", "050", "060", "070", "080", "090")
_SERVICE = ("0120", "0570", "0800", "0990")


def _phone_groups(a: str, b: str, c: str) -> bool:
    """Whether area ``a`` (with its 0), ``b`` and ``c`` group like a Japanese number."""
    if a in _MOBILE_LIKE:
        return len(b) == 4 and len(c) == 4
    if a in _SERVICE:
        return len(b) == 3 and len(c) == (4 if a == "0800" else 3)
    return a[1] != "0" and len(a) + len(b) == 6 and len(c) == 4


def _phone_digits(national: str) -> bool:
    """Whether ``national`` (digits, leading 0) has a Japanese number's length."""
    if len(national) == 11:
        return national[:3] in _MOBILE_LIKE or national.startswith("0800")
    if len(national) == 10:
        return national[1] != "0" and national[:3] not in _MOBILE_LIKE and national[:4] != "0800"
    return False


def _is_phone(match: re.Match[str]) -> bool:
    groups = match.groupdict()
    if groups["intl"] is not None:
        if groups["iall"] is not None:
            return _phone_digits("0" + groups["iall"])
        area = "0" + groups["ia"]
        national = area + groups["ib"] + groups["ic"]
        return _phone_digits(national) and _phone_groups(area, groups["ib"], groups["ic"])
    if groups["all"] is not None:
        return _phone_digits(groups["all"])
    for a, b, c in (("pa", "pb", "pc"), ("qa", "qb", "qc"), ("a", "b", "c")):
        if groups[a] is not None:
            national = groups[a] + groups[b] + groups[c]
            return _phone_digits(national) and _phone_groups(groups[a], groups[b], groups[c])
    return False


def _digits(match: re.Match[str]) -> str:
    return re.sub(r"[^0-9]", "", match.group(0))


_Finder = Callable[[str], Iterable[tuple[int, int]]]


def _find_my_numbers(folded: str) -> Iterable[tuple[int, int]]:
    for match in _MY_NUMBER.finditer(folded):
        if is_my_number(_digits(match)):
            yield match.span()


def _find_cards(folded: str) -> Iterable[tuple[int, int]]:
    for match in _CARD.finditer(folded):
        if is_card_number(_digits(match)):
            yield match.span()


def _find_phones(folded: str) -> Iterable[tuple[int, int]]:
    for match in _PHONE.finditer(folded):
        if _is_phone(match):
            yield match.span()


def _find_emails(folded: str) -> Iterable[tuple[int, int]]:
    for match in _EMAIL.finditer(folded):
        yield match.span()


def _find_bank_accounts(folded: str) -> Iterable[tuple[int, int]]:
    for match in _BANK.finditer(folded):
        yield match.span("account")


_FINDERS: Final[Mapping[PiiKind, _Finder]] = {
    "email": _find_emails,
    "card": _find_cards,
    "my_number": _find_my_numbers,
    "phone": _find_phones,
    "bank_account": _find_bank_accounts,
}
_PRIORITY: Final[tuple[PiiKind, ...]] = ("email", "card", "my_number", "phone", "bank_account")
"""An e-mail address holding digits stays one address; a card's 16 digits never a phone."""
_MAYBE = re.compile(r"[0-9０-９@＠]")
"""Text without a digit or an at sign holds none of the kinds."""


def find(text: str, kinds: Iterable[str] = KINDS) -> list[Found]:
    """The personal data of ``kinds`` in ``text``, in order, never overlapping."""
    wanted = checked_kinds(kinds)
    if not wanted or not text or not _MAYBE.search(text):
        return []
    folded = fold(text)
    taken: list[Found] = []
    for kind in _PRIORITY:
        if kind not in wanted:
            continue
        for start, end in _FINDERS[kind](folded):
            if all(end <= other.start or start >= other.end for other in taken):
                taken.append(Found(kind, start, end))
    return sorted(taken, key=lambda found: found.start)


def redact(text: str, kinds: Iterable[str] = KINDS) -> Redaction:
    """``text`` with each item of ``kinds`` replaced by its placeholder (``PLACEHOLDERS``)."""
    found = find(text, kinds)
    if not found:
        return Redaction(text)
    parts: list[str] = []
    position = 0
    for item in found:
        parts += [text[position : item.start], PLACEHOLDERS[item.kind]]
        position = item.end
    parts.append(text[position:])
    counts = Counter(item.kind for item in found)
    return Redaction("".join(parts), {kind: counts[kind] for kind in KINDS if counts[kind]})


def add_counts(*counts: Mapping[PiiKind, int]) -> dict[PiiKind, int]:
    """The sum of several ``Redaction.counts`` (kinds in ``KINDS`` order, none zero)."""
    total: Counter[PiiKind] = Counter()
    for one in counts:
        total.update(one)
    return {kind: total[kind] for kind in KINDS if total[kind]}


def describe_counts(counts: Mapping[PiiKind, int]) -> str:
    """Japanese: ``電話番号 1 件・メール 1 件`` (empty when nothing was replaced)."""
    return "・".join(f"{LABELS[kind]} {counts[kind]} 件" for kind in KINDS if counts.get(kind))


__all__ = [
    "KINDS",
    "LABELS",
    "PLACEHOLDERS",
    "Found",
    "PiiKind",
    "Redaction",
    "add_counts",
    "checked_kinds",
    "corporate_number_check_digit",
    "describe_counts",
    "find",
    "fold",
    "is_card_number",
    "is_corporate_number",
    "is_gtin13",
    "is_my_number",
    "luhn_valid",
    "my_number_check_digit",
    "redact",
]
