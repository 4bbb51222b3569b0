"""Bank and branch codes (統一金融機関コード・店番) checked against a maintained list.

The list is the ``zengin-code`` package (the zengin-code project's data of every
Japanese bank and branch, released as a wheel with a date in its version). It is loaded
once, on first use (about 1,100 banks and 30,000 branches). A code is looked up as
given; a name is looked up only when it names exactly one bank (or one branch of the
bank), after removing the words a name is written with (銀行, 支店) and shortening
信用金庫 to 信金 as the list does.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

_BANK_WORDS = re.compile(r"(銀行|ギンコウ|ぎんこう)$")
_SHORT_FORMS = (
    ("信用金庫", "信金"),
    ("信用組合", "信組"),
    ("農業協同組合", "農協"),
    ("シンヨウキンコ", "シンキン"),
    ("シンヨウクミアイ", "シンクミ"),
)
"""How the list shortens the kinds of banks (城南信用金庫 is 城南信金)."""
_BRANCH_WORDS = re.compile(r"(支店|支所|出張所|店|シテン|してん)$")


@dataclass(frozen=True)
class Place:
    """A bank or a branch in the list: its code, name and kana name."""

    code: str
    name: str
    kana: str


def _key(name: str, words: re.Pattern[str]) -> str:
    text = re.sub(r"\s", "", unicodedata.normalize("NFKC", name))
    for long, short in _SHORT_FORMS:
        text = text.replace(long, short)
    return words.sub("", text)


@functools.cache
def _banks() -> dict[str, Any]:
    import zengin_code

    return dict(zengin_code.Bank.all)


def list_version() -> str:
    """The list's version (its date): shown to users beside a code it does not know."""
    import zengin_code

    return str(zengin_code.__version__)


def bank(code: str) -> Place | None:
    """The bank of a 4-digit code, or None."""
    found = _banks().get(code)
    return Place(found.code, found.name, found.kana) if found else None


def branch(bank_code: str, code: str) -> Place | None:
    """The branch of a bank by its 3-digit code, or None."""
    found_bank = _banks().get(bank_code)
    found = found_bank.branches.get(code) if found_bank else None
    return Place(found.code, found.name, found.kana) if found else None


def banks_named(name: str) -> list[Place]:
    """Banks whose name or kana name is ``name`` (銀行 and the like ignored)."""
    wanted = _key(name, _BANK_WORDS)
    return [
        Place(b.code, b.name, b.kana)
        for b in _banks().values()
        if wanted and wanted in (_key(b.name, _BANK_WORDS), _key(b.kana, _BANK_WORDS))
    ]


def branches_named(bank_code: str, name: str) -> list[Place]:
    """Branches of a bank whose name or kana name is ``name`` (支店 ignored)."""
    found_bank = _banks().get(bank_code)
    if found_bank is None:
        return []
    wanted = _key(name, _BRANCH_WORDS)
    return [
        Place(b.code, b.name, b.kana)
        for b in found_bank.branches.values()
        if wanted and wanted in (_key(b.name, _BRANCH_WORDS), _key(b.kana, _BRANCH_WORDS))
    ]


def same_name(given: str, place: Place, words: re.Pattern[str]) -> bool:
    """Whether a name written in a table names ``place`` (kanji or kana, with or
    without 銀行/支店)."""
    wanted = _key(given, words)
    return bool(wanted) and wanted in (_key(place.name, words), _key(place.kana, words))


def same_bank(given: str, place: Place) -> bool:
    return same_name(given, place, _BANK_WORDS)


def same_branch(given: str, place: Place) -> bool:
    return same_name(given, place, _BRANCH_WORDS)
