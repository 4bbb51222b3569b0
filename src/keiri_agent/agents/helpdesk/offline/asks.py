"""What kind of value a part asks for, and whether a passage states one.

「何回間違えるとロックされますか」 asks for a count, 「何MBまで」 for a size, 「何日以内」 for a
number of days: a passage that shares the part's words but states no such value does not
answer it (a section on two-factor authentication shares 「ログイン」 with the lockout
question, but has no 「…回」). :func:`asked_value` reads the kind from the question's
interrogative (「何」 + a counter, 「いくら」, "how many"); :meth:`AskedValue.stated_in`
says whether a text states a value of that kind — digits with a counter of the kind
(「5回」「10MB」「3営業日」), never the counter alone.

Only interrogatives with a counter count: 「いつ」「どこ」「誰」 are answered in too many
forms (「翌月10日」「月末」「次の営業日の朝」) to check by pattern.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

_NUMBER = r"(?:\d[\d,]*(?:\.\d+)?|[一二三四五六七八九十百千]+)"


@dataclass(frozen=True)
class AskedValue:
    """A kind of value: its name in an answer (Japanese) and the counters that state it."""

    name: str
    counters: tuple[str, ...]

    @cached_property
    def _stated(self) -> re.Pattern[str]:
        units = "|".join(re.escape(counter) for counter in sorted(self.counters, key=len)[::-1])
        return re.compile(rf"{_NUMBER}\s*(?:{units})", re.IGNORECASE)

    def stated_in(self, text: str) -> bool:
        """``text`` states a value of this kind: a number followed by one of its counters."""
        return self._stated.search(unicodedata.normalize("NFKC", text)) is not None


COUNT = AskedValue("回数", ("回", "度"))
DURATION = AskedValue("時間", ("分", "秒", "時間"))
DAYS = AskedValue(
    "日数・期間", ("日", "営業日", "日間", "週", "週間", "か月", "ヶ月", "カ月", "年")
)
SIZE = AskedValue("容量", ("MB", "GB", "KB", "メガ", "ギガ"))
LENGTH = AskedValue("文字数", ("文字", "桁"))
MONEY = AskedValue("金額", ("円", "万円", "千円"))
ITEMS = AskedValue(
    "数",
    ("件", "人", "名", "社", "枚", "個", "通", "段", "行", "列", "台", "本", "冊", "点", "ページ"),
)
SHARE = AskedValue("割合", ("%", "パーセント", "割"))

_KINDS: tuple[tuple[re.Pattern[str], AskedValue], ...] = (
    (re.compile(r"何\s*(?:回|度)|how\s+many\s+(?:\w+\s+)?times|how\s+often", re.IGNORECASE), COUNT),
    (re.compile(r"何\s*(?:分|秒|時間)|how\s+many\s+(?:\w+\s+)?(?:minutes|hours)", re.I), DURATION),
    (
        re.compile(
            r"何\s*(?:営業日|日間|日|週間|週|か月|ヶ月|カ月|年間|年)"
            r"|how\s+many\s+(?:\w+\s+)?(?:days|weeks|months|years)",
            re.IGNORECASE,
        ),
        DAYS,
    ),
    (re.compile(r"何\s*(?:MB|GB|KB|メガ|ギガ)", re.IGNORECASE), SIZE),
    (re.compile(r"何\s*(?:文字|桁)|how\s+many\s+(?:\w+\s+)?characters", re.IGNORECASE), LENGTH),
    # 「税率はいくら」 asks for a rate, not an amount
    (
        re.compile(r"(?:(?<=率)|(?<=割合)|(?<=レート))\s*(?:は|って|が)?\s*いくら", re.I),
        SHARE,
    ),
    (re.compile(r"いくら|何\s*(?:円|万円)|how\s+much", re.IGNORECASE), MONEY),
    (re.compile(rf"何\s*(?:{'|'.join(ITEMS.counters)})", re.IGNORECASE), ITEMS),
    (re.compile(r"何\s*(?:%|％|パーセント|割)", re.IGNORECASE), SHARE),
)


_ANY_ITEM = ("個", "件", "つ", "種類")
"""Counters of things in general (not people, companies or pages)."""


def asked_value(question: str) -> AskedValue | None:
    """The kind of value ``question`` asks for, or None (it asks for none we can check)."""
    text = unicodedata.normalize("NFKC", question)
    for pattern, kind in _KINDS:
        found = pattern.search(text)
        if found and kind is ITEMS:  # 「何社」 is answered by 「2社」, not by 「30件」
            counter = found.group().lstrip("何").strip()
            if counter in _ANY_ITEM:  # 「何個」 is the generic count: 「20件」「3つ」 answer it
                return AskedValue(kind.name, _ANY_ITEM)
            return AskedValue(kind.name, (counter,))
        if found:
            return kind
    return None


def without_interrogatives(text: str) -> str:
    """``text`` (NFKC) with each interrogative and its counter replaced by a space: 「何MB」
    「何回」 "how many times" are question words, not words a passage must contain (the
    value they ask for is checked by :meth:`AskedValue.stated_in`)."""
    text = _WORTH.sub(r"\1", unicodedata.normalize("NFKC", text))  # 「何社分」: 「何社」
    for pattern, _ in _KINDS:
        text = pattern.sub(" ", text)
    return text


_WORTH_COUNTERS = sorted({*ITEMS.counters, *COUNT.counters, *DAYS.counters}, key=len)[::-1]
_WORTH = re.compile(rf"(何\s*(?:{'|'.join(_WORTH_COUNTERS)}))分")
"""「何社分」「何日分」: 「分」 after a counter means "worth of", not minutes."""


def asked_counters(question: str) -> list[str]:
    """The counters the question asks with (「何回」 → 「回」, 「何MB」 → 「mb」), lowercased:
    not words a passage must contain, but words that find the passages stating a count."""
    text = unicodedata.normalize("NFKC", question)
    counters = {c for _, kind in _KINDS for c in kind.counters}
    pattern = "|".join(re.escape(c) for c in sorted(counters, key=len, reverse=True))
    return list(dict.fromkeys(m.lower() for m in re.findall(rf"何\s*({pattern})", text, re.I)))


_ASKED_NOUN_EN = re.compile(
    r"\b(?:which|what(?:'s|\s+is|\s+are|\s+was|\s+were)?|how\s+(?:many|much))\s+"
    r"(?P<phrase>(?:(?!(?:do|does|did|is|are|was|were|can|could|should|will|would|has|have"
    r"|of|for|in|on|at|to|from|with|by|per|about|we|you|i|they|it)(?:\s|[?.,!]|$))"
    r"[a-z0-9][\w'.-]*\s*){1,4})",
    re.IGNORECASE,
)
"""An English interrogative and the noun phrase it asks about, up to its verb or preposition
(「Which label printer model do we need」 → "label printer model")."""
_ARTICLES = frozenset({"the", "a", "an", "our", "your", "my", "its", "their", "this", "that"})


def asked_noun_en(question: str) -> str:
    """The noun an English question asks for: the last word of the phrase after its
    interrogative (「Which label printer model do we need?」 → "model", 「What hours can we
    call?」 → "hours"), lowercased; "" when the question has none (a yes / no question).

    A passage that does not name it does not answer the question, whatever else it shares
    with it: 「the guest card prints the visitor's name」 is no answer to which printer model.

    >>> asked_noun_en("What's the monthly per-user price of the Standard plan?")
    'price'
    >>> asked_noun_en("Can we log in with single sign-on?")
    ''
    """
    found = _ASKED_NOUN_EN.search(unicodedata.normalize("NFKC", question))
    if found is None:
        return ""
    words = [w for w in found.group("phrase").lower().split() if w not in _ARTICLES]
    return words[-1].strip("'.") if words else ""


__all__ = [
    "AskedValue",
    "asked_counters",
    "asked_noun_en",
    "asked_value",
    "without_interrogatives",
]
