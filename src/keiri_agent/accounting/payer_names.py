"""Payer names on bank statements matched to a customer master (入金消込).

A bank prints the remitter of a transfer (振込依頼人名) in half-width katakana, in large
kana only (ショウジ arrives as ｼﾖｳｼﾞ), with the legal form abbreviated in the 全銀 style
before, after or inside the name (「ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ」, 「ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ」, 「ﾔﾏﾀﾞ(ｶ)ｼﾖｳｼﾞ」),
sometimes followed by a branch or a person's name, sometimes cut at the field's
length. A customer master holds the company's name in kanji, its reading in kana
(with small kana and long vowels, usually without the legal form) and the transfer
names already seen (aliases).

Both sides are brought to one *key*: NFKC (half- to full-width, voiced marks
composed), hiragana to katakana, small kana to large, long vowels, spaces and
punctuation removed, and the legal form taken out and kept aside
(``payer_key``). A payer is then compared with each customer's reading and aliases
(``PayerMatcher.match``), by rules that each say what they saw:

- ``exact``: the keys are equal;
- ``first_word``: the payer's first word is the customer (the rest: a branch, a
  department, a person);
- ``prefix``: the payer starts with the customer's whole name;
- ``truncated``: the payer is the start of a longer customer name and fills the
  bank's field (``TRUNCATION_LENGTHS``);
- ``owner``: a person's full name (family and given, no legal form) that is the last
  word of a sole trader's name in the master (屋号 and owner: 「太田塗装 太田勝」);
- ``similar``: otherwise, a similarity of the keys (never enough alone to match).

A legal form on both sides that differs lowers the score (株式会社ミドリ is not
有限会社ミドリ). A payer is matched only when its best score reaches the threshold and
no other customer comes close (``MARGIN``); otherwise it is left for a person to
decide, with the candidates and why — never a silent guess.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

LEGAL_FORMS: dict[str, tuple[str, ...]] = {
    # the form's name: its 全銀 abbreviations (in key form), then its readings
    "株式会社": ("カ", "カブシキガイシヤ", "カブシキカイシヤ"),
    "有限会社": ("ユ", "ユウゲンガイシヤ", "ユウゲンカイシヤ"),
    "合名会社": ("メ", "ゴウメイガイシヤ", "ゴウメイカイシヤ"),
    "合資会社": ("シ", "ゴウシガイシヤ", "ゴウシカイシヤ"),
    "合同会社": ("ド", "ゴウドウガイシヤ", "ゴウドウカイシヤ"),
    "医療法人": (
        "イ",
        "シヤカイイリヨウホウジン",
        "イリヨウホウジンシヤダン",
        "イリヨウホウジンザイダン",
        "イリヨウホウジン",
    ),
    "財団法人": ("ザイ", "ザイダンホウジン"),
    "社団法人": ("シヤ", "シヤダンホウジン"),
    "宗教法人": ("シユウ", "シユウキヨウホウジン"),
    "学校法人": ("ガク", "ガツコウホウジン"),
    "社会福祉法人": ("フク", "シヤカイフクシホウジン"),
    "特定非営利活動法人": (
        "トクヒ",
        "トクテイヒエイリカツドウホウジン",
        "NPOホウジン",
        "エヌピオホウジン",
    ),
    "独立行政法人": ("ドク", "ドクリツギヨウセイホウジン"),
    "弁護士法人": ("ベン", "ベンゴシホウジン"),
    "税理士法人": ("ゼイ", "ゼイリシホウジン"),
    "司法書士法人": ("シホウ", "シホウシヨシホウジン"),
    "監査法人": ("カンサ", "カンサホウジン"),
    "有限責任事業組合": ("ユウクミ", "ユウゲンセキニンジギヨウクミアイ"),
    "協同組合": ("キヨウクミ", "キヨウドウクミアイ"),
    "農業協同組合": ("ノウキヨウ", "ノウギヨウキヨウドウクミアイ", "ノウキヨウ"),
    "生活協同組合": ("セイキヨウ", "セイカツキヨウドウクミアイ", "セイキヨウ"),
    "相互会社": ("ソ", "ソウゴガイシヤ"),
}
"""Legal forms, with how a bank abbreviates them and how they are read. 一般・公益
社団/財団法人 read as 社団/財団法人 with a prefix word, which ``_PREFIX_WORDS`` drops."""

_PREFIX_WORDS = ("イツパン", "コウエキ")
"""一般 and 公益, read before 社団法人 / 財団法人."""

OTHER_ABBREVIATIONS: dict[str, str] = {
    "イリヨウ": "医療法人",
    "ゴウ": "合同会社",
    "シヤフク": "社会福祉法人",
    "ザイダン": "財団法人",
    "シヤダン": "社団法人",
    "NPO": "特定非営利活動法人",
}
"""Abbreviations some banks print instead of the 全銀 one (ｲﾘﾖｳ) for ｲ), ｺﾞｳ) for ﾄﾞ))."""

_ABBREVIATION = {
    **{abbreviation: form for form, (abbreviation, *_) in LEGAL_FORMS.items()},
    **OTHER_ABBREVIATIONS,
}
_SPELLED = sorted(
    (
        (prefix + reading, form)
        for form, (_, *readings) in LEGAL_FORMS.items()
        for reading in readings
        for prefix in ("", *_PREFIX_WORDS)
    ),
    key=lambda pair: -len(pair[0]),
)
_ABBREVIATIONS = "|".join(sorted(map(re.escape, _ABBREVIATION), key=len, reverse=True))
_PREFIX = re.compile(rf"^\(?({_ABBREVIATIONS})\)")
_SUFFIX = re.compile(rf"\(({_ABBREVIATIONS})\)?$")
_MIDDLE = re.compile(rf"\(({_ABBREVIATIONS})\)")
_KANJI_FORMS = sorted(LEGAL_FORMS, key=len, reverse=True)
_REFERENCE = re.compile(r"^(?:[0-9A-Z#./-]*[0-9][0-9A-Z#./-]*\s+|[0-9]+\s*|\S*[0-9]\S*\s+)(?=\S)")
"""A customer or reference number a payer put before the name: a number such as an
invoice number (「2505-048 ｶ)ｹｱ…」), digits with or without a space (「0012345 ｶ)ﾔﾏﾀﾞ…」,
「0000120034ｶ)…」), or a first word holding digits (「ｺｷﾔｸNO.1042 ｶ)…」)."""
_KANA_NAME = re.compile(r"^[\u30a0-\u30ff\u3040-\u309f\sー・]+$")

_SMALL_TO_LARGE = str.maketrans("ァィゥェォャュョッヮヵヶ", "アイウエオヤユヨツワカケ")
_SAME_SOUND = str.maketrans("ヂヅヲ", "ジズオ")
_VU = (("ヴア", "バ"), ("ヴイ", "ビ"), ("ヴエ", "ベ"), ("ヴオ", "ボ"), ("ヴ", "ブ"))
"""ヴ as banks without it print it (ルヴァン → ﾙﾊﾞﾝ), after small kana became large."""
_DROPPED = re.compile(r"[\sー\-‐‑‒–—―−－・･.,，、。'\"’”/]")

TRUNCATION_LENGTHS = (30, 48)
"""Field lengths (characters) at which banks cut a payer name (the 全銀 振込依頼人名 is
48 half-width characters; many internet banks show 30)."""

SHORT_NAME = 5
LONG_PREFIX = 10
"""A payer of this many key characters that starts a longer customer name (and is
most of it) is taken as cut off by the bank, whatever the field length."""
"""A customer key shorter than this (マルヤマ, ミドリ) is also a surname or a common word
or the start of a longer name: a payer that only starts with it is not matched without
a person, unless the name stands as its own word and the payer shows the customer's
legal form."""

GUESSED_READING = 0.9
"""How much a reading guessed from a kanji name counts against a reading the master
holds (a proper noun has readings a dictionary does not know: 緑野 リョクヤ or ミドリノ)."""

MAX_PAYER_CHARS = 200
"""Longer than any bank prints (48): a wrong column, not a name; not compared."""

THRESHOLD = 0.85
"""The score a payer needs to be matched without a person."""
MARGIN = 0.08
POSITION_MISMATCH = 0.9
"""A payer whose legal form stands on the other side of the name than in the master
(ｶ)… for 山田商事株式会社): banks print the form where the company's name has it, so
this is likely another company with the same name."""
"""How far ahead of the next customer the best one must be."""


def _kana(text: str) -> str:
    """NFKC, hiragana → katakana, small kana → large, upper-case letters."""
    text = unicodedata.normalize("NFKC", text or "").upper()
    text = "".join(chr(ord(ch) + 0x60) if "ぁ" <= ch <= "ゖ" else ch for ch in text)
    text = text.translate(_SMALL_TO_LARGE).translate(_SAME_SOUND)
    for written, said in _VU:
        text = text.replace(written, said)
    return text


def _squeeze(text: str) -> str:
    return _DROPPED.sub("", text)


_O_ROW = set("オコソトノホモヨロゴゾドボポ")
_U_ROW = set("ウクスツヌフムユルグズヅブプ")
_E_ROW = set("エケセテネヘメレゲゼデベペ")


def _long_vowels(word: str) -> str:
    """One spelling of long vowels: キョウ, キョー and キヨウ alike (ー is already gone),
    エイ as エ: a master typed キョーエー and a bank's ｷﾖｳｴｲ are one name."""
    out: list[str] = []
    for char in word:
        last = out[-1] if out else ""
        if (
            (char == "ウ" and (last in _O_ROW or last in _U_ROW))
            or (char == "イ" and last in _E_ROW)
            or (char == "オ" and last in _O_ROW)
        ):
            continue
        out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class PayerKey:
    """A name brought to key form: ``core`` (the name without its legal form),
    ``words`` (its space-separated words, keyed) and the ``legal_forms`` found."""

    core: str
    words: tuple[str, ...]
    legal_forms: frozenset[str]
    form_position: str | None = None
    """Where the legal form stood: ``before`` the name (ｶ)…: 前株), ``after`` it
    (…(ｶ: 後株), or None (in the middle, spelled out, or none)."""


def payer_key(text: str) -> PayerKey:
    """The key of a payer name or a master's reading (see the module docstring)."""
    kana = _kana(text).replace("（", "(").replace("）", ")").strip()
    kana = _REFERENCE.sub("", kana)
    forms: set[str] = set()
    positions: list[str] = []
    for pattern, where in ((_PREFIX, "before"), (_SUFFIX, "after")):
        found = pattern.search(kana)
        if found:
            forms.add(_ABBREVIATION[found.group(1)])
            positions.append(where)
            kana = (kana[: found.start()] + " " + kana[found.end() :]).strip()
    for found in list(_MIDDLE.finditer(kana)):
        forms.add(_ABBREVIATION[found.group(1)])
    kana = _MIDDLE.sub(" ", kana).replace("(", " ").replace(")", " ")
    words = [_squeeze(word) for word in kana.split()]
    words = [_strip_readings(word, forms) for word in words]
    words = [_long_vowels(word) for word in words if word]
    position = positions[0] if len(positions) == 1 else None
    return PayerKey("".join(words), tuple(words), frozenset(forms), position)


def _strip_readings(word: str, forms: set[str]) -> str:
    """``word`` without a legal form read out in full (カブシキガイシヤ…), at either end;
    the longest spelling first (コウエキザイダンホウジン before ザイダンホウジン)."""
    for spelled, form in _SPELLED:
        if word == spelled:
            forms.add(form)
            return ""
        if word.startswith(spelled):
            forms.add(form)
            return word[len(spelled) :]
        if word.endswith(spelled):
            forms.add(form)
            return word[: -len(spelled)]
    return word


@functools.lru_cache(maxsize=1)
def _dictionary() -> Any:
    from sudachipy import Dictionary

    return Dictionary(dict="core")


_READERS = threading.local()


def _reader() -> Any:
    """This thread's SudachiPy tokenizer (a tokenizer is not shared between threads)."""
    reader = getattr(_READERS, "reader", None)
    if reader is None:
        from sudachipy import SplitMode

        reader = _READERS.reader = _dictionary().tokenizer(mode=SplitMode.C)
    return reader


def guessed_reading(name: str) -> str:
    """The reading of a kanji name as the dictionary reads it (SudachiPy, the
    product's morphological analyser), its legal form taken out; empty when none."""
    rest, _ = split_legal_form(name)
    if not rest:
        return ""
    words = [m.reading_form() for m in _reader().tokenize(rest)]
    return " ".join(word for word in words if word.strip())


def _kana_name(name: str) -> str:
    """A name written in kana once its legal form is taken out is its own reading
    (株式会社ニッポンパッケージ → ニッポンパッケージ); otherwise empty."""
    rest, _ = split_legal_form(name)
    return rest if rest and _KANA_NAME.match(rest) else ""


_LETTERS_AND_KANA = re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9&.\-\u30a0-\u30ff\sー・]+$")


def _printed_name(name: str) -> str:
    """A name in Latin letters (and kana) once its legal form is taken out, as a bank
    prints it (株式会社KTCホールディングス → KTCホールディングス); otherwise empty."""
    rest, _ = split_legal_form(name)
    rest = unicodedata.normalize("NFKC", rest).strip()
    return rest if rest and _LETTERS_AND_KANA.match(rest) else ""


_WRITTEN_FORMS = {
    "(株)": "株式会社",  # NFKC turns ㈱ and ㈲ into these
    "(有)": "有限会社",
    "医療法人社団": "医療法人",
    "医療法人財団": "医療法人",
    "社会医療法人": "医療法人",
    "一般社団法人": "社団法人",
    "公益社団法人": "社団法人",
    "一般財団法人": "財団法人",
    "公益財団法人": "財団法人",
    "NPO法人": "特定非営利活動法人",
}
"""Other ways a kanji name writes a legal form, and the form they are."""


def legal_form_position(name: str) -> str | None:
    """``before`` for 株式会社山田商事 (前株), ``after`` for 山田商事株式会社 (後株), else None."""
    text = unicodedata.normalize("NFKC", name or "").strip()
    written = [*_WRITTEN_FORMS, *_KANJI_FORMS]
    if any(text.startswith(form) for form in written):
        return "before"
    if any(text.endswith(form) for form in written):
        return "after"
    return None


def split_legal_form(name: str) -> tuple[str, frozenset[str]]:
    """A kanji name without its legal forms, and the forms (株式会社山田商事 → 山田商事,
    {株式会社})."""
    rest = unicodedata.normalize("NFKC", name or "")
    found: set[str] = set()
    for written, form in [*_WRITTEN_FORMS.items(), *((form, form) for form in _KANJI_FORMS)]:
        if written in rest:
            found.add(form)
            rest = rest.replace(written, " ")
    return " ".join(rest.split()), frozenset(found)


@dataclass(frozen=True)
class Customer:
    """One customer of the master: id, name (kanji), reading (kana), transfer names."""

    id: str
    name: str
    kana: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """A customer a payer may be, with the score and the rule that gave it."""

    customer: Customer
    score: float
    rule: str
    reason: str
    key: str = ""
    """The customer's key (reading or alias) the rule compared with."""
    forms_agree: bool = False
    """The payer shows the legal forms the customer has (none for none)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "customer_id": self.customer.id,
            "name": self.customer.name,
            "score": round(self.score, 3),
            "rule": self.rule,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class PayerMatch:
    """How a payer was matched: ``customer`` (None: for a person to decide), the
    best ``candidates`` (at most three) and why."""

    payer: str
    customer: Customer | None
    candidates: tuple[Candidate, ...] = field(default=())
    reason: str = ""


RULE_REASONS = {
    "exact": "名義が読みと一致",
    "alias": "登録済みの振込名義と一致",
    "first_word": "名義の先頭の語が一致（後ろは支店名・部署名・担当者名など）",
    "prefix": "名義が取引先名で始まる（後ろに支店名などが続く）",
    "truncated": "銀行の文字数制限で途中までの名義が、取引先名の先頭と一致",
    "owner": "名義（姓と名）が取引先名の後ろの個人名と一致（個人事業主の本人名義）",
    "similar": "名義が似ている",
}
"""Why a rule matched, in the words a person reads in 要確認."""


@dataclass(frozen=True)
class _Entry:
    """One key a customer is known by: its reading, a reading guessed from its kanji
    name, its name as printed when written in Latin letters, or a registered transfer
    name."""

    customer: Customer
    key: PayerKey
    forms: frozenset[str]
    source: str  # "kana", "guessed", "name" or "alias"
    position: str | None = None
    """Where the master's name writes its legal form (``legal_form_position``)."""


class PayerMatcher:
    """Matches payer names against a customer master (see the module docstring)."""

    def __init__(
        self, customers: Iterable[Customer], *, threshold: float = THRESHOLD, margin: float = MARGIN
    ) -> None:
        self.threshold = threshold
        self.margin = margin
        self._entries: list[_Entry] = []
        for customer in customers:
            _, forms = split_legal_form(customer.name)
            reading, source = customer.kana.strip() or _kana_name(customer.name), "kana"
            if not reading:
                reading, source = guessed_reading(customer.name), "guessed"
            if reading:
                key = payer_key(reading)
                position = legal_form_position(customer.name)
                self._entries.append(
                    _Entry(customer, key, forms | key.legal_forms, source, position)
                )
            printed = _printed_name(customer.name)
            if printed:  # 株式会社KTCホールディングス: banks print the letters as they are
                key = payer_key(printed)
                position = legal_form_position(customer.name)
                self._entries.append(_Entry(customer, key, forms, "name", position))
            for alias in customer.aliases:
                key = payer_key(alias)
                if key.core:
                    self._entries.append(_Entry(customer, key, forms | key.legal_forms, "alias"))

    def match(self, payer: str) -> PayerMatch:
        """The customer ``payer`` is, or None with the candidates for a person."""
        if len(payer) > MAX_PAYER_CHARS:
            reason = f"振込名義が長すぎます（{len(payer)} 文字）。銀行の明細の列を確かめてください"
            return PayerMatch(payer[:MAX_PAYER_CHARS], None, (), reason)
        key = payer_key(payer)
        if not key.core:
            return PayerMatch(payer, None, (), "振込名義が空です")
        best: dict[str, Candidate] = {}
        for entry in self._entries:
            candidate = self._score(payer, key, entry)
            if candidate is None:
                continue
            held = best.get(entry.customer.id)
            if held is None or candidate.score > held.score:
                best[entry.customer.id] = candidate
        ranked = sorted(best.values(), key=lambda c: (-c.score, c.customer.id))[:3]
        if not ranked or ranked[0].score < self.threshold:
            reason = "取引先マスタに十分一致する名義がありません"
            return PayerMatch(payer, None, tuple(ranked), reason)
        top = ranked[0]
        rivals = [c for c in ranked[1:] if not _extends(top, c)]
        close = [c for c in rivals if top.score - c.score < self.margin]
        if close:
            # 株式会社松井工務店 or 松井工務店 (a sole trader)? banks print a company's legal
            # form: the one candidate whose legal forms the payer shows is the one
            agreeing = [c for c in (top, *close) if c.forms_agree]
            if len(agreeing) != 1:
                names = f"{top.customer.name}・{close[0].customer.name}"
                reason = f"候補が複数あり区別できません（{names}）"
                return PayerMatch(payer, None, tuple(ranked), reason)
            top = agreeing[0]
            top = Candidate(
                top.customer,
                top.score,
                top.rule,
                top.reason + "（同じ名前の取引先のうち、法人格の有無・種類が名義と合う方）",
                top.key,
                top.forms_agree,
            )
        longer = self._longer_name(key, top)
        if longer is not None:
            return PayerMatch(payer, None, tuple(ranked), longer)
        return PayerMatch(payer, top.customer, tuple(ranked), top.reason)

    def _longer_name(self, key: PayerKey, top: Candidate) -> str | None:
        """Why ``top`` is not sure when another customer's name goes on from what the
        payer shows: a bare name (no legal form) that starts another customer's name
        (タカハシ: 株式会社タカハシ or 高橋誠?), or a name glued to more text when another
        customer's name extends the same stem (ミナトフーズヒガシニホン, with
        ミナトフーズニシニホン on file: a group company not in the master)."""
        for entry in self._entries:
            other = entry.key.core
            if entry.customer.id == top.customer.id or len(other) <= len(top.key):
                continue
            if not key.legal_forms and other.startswith(key.core):
                return (
                    f"名義に法人格がなく、{top.customer.name}とも{entry.customer.name}の"
                    "略ともとれます"
                )
            if top.rule == "prefix" and other.startswith(top.key) and other != key.core:
                return (
                    f"名義は{top.customer.name}で始まりますが、同じ名前で始まる取引先"
                    f"（{entry.customer.name}）があり、別の関連会社かもしれません"
                )
        return None

    def _score(self, payer: str, key: PayerKey, entry: _Entry) -> Candidate | None:
        corroborated = bool(key.legal_forms & entry.forms)
        rule, score = _rule(payer, key, entry.key, corroborated=corroborated)
        if rule is None:
            return None
        if entry.source == "alias" and rule == "exact":
            rule = "alias"
        reason = RULE_REASONS[rule]
        if entry.source == "guessed":
            score *= GUESSED_READING
            reason += "（マスタにカナがないため、読みは漢字の名前から推定）"
        if key.form_position and entry.position and key.form_position != entry.position:
            score *= POSITION_MISMATCH
            reason += "。ただし法人格の位置（前株・後株）が名義と違います"
        if key.legal_forms and entry.forms and not key.legal_forms & entry.forms:
            score *= 0.5
            reason += f"。ただし法人格が違います（名義: {'・'.join(sorted(key.legal_forms))}、"
            reason += f"マスタ: {'・'.join(sorted(entry.forms))}）"
        agree = key.legal_forms == entry.forms
        return Candidate(entry.customer, score, rule, reason, entry.key.core, agree)


def _rule(
    payer: str, key: PayerKey, known: PayerKey, *, corroborated: bool
) -> tuple[str | None, float]:
    """The strongest rule that relates ``key`` to ``known`` and its score;
    ``corroborated``: the payer shows the customer's legal form."""
    core, name = key.core, known.core
    if not name:
        return None, 0.0
    if core == name:
        return "exact", 1.0
    # a short name may be a surname or a common word: a separate first word is the
    # customer when the legal form agrees; glued to more text it is likely the start of
    # another, longer name (ミドリケンセツ is not ミドリ)
    short = len(name) < SHORT_NAME
    if len(key.words) > 1 and key.words[0] == name:
        return "first_word", 0.95 * (0.85 if short and not corroborated else 1.0)
    if core.startswith(name):
        return "prefix", 0.9 * (0.85 if short else 1.0)
    if len(key.words) > 1 and not key.legal_forms and known.words[1:] and core == known.words[-1]:
        return "owner", 0.9  # 「太田塗装 太田勝」 paid by ｵｵﾀ ﾏｻﾙ: the owner, in full
    shown = len(payer.strip())  # as the bank counts: half-width characters, marks included
    # cut at a known field length, or long enough and most of the name: banks' and
    # accounting packages' fields vary (20, 30, 48 characters)
    cut = shown >= min(TRUNCATION_LENGTHS) - 2 or (
        len(core) >= LONG_PREFIX and len(core) >= 0.6 * len(name)
    )
    if len(core) >= 6 and name.startswith(core) and cut:
        return "truncated", 0.88
    ratio = SequenceMatcher(None, core, name, autojunk=False).ratio()
    if ratio < 0.6:
        return None, 0.0
    return "similar", ratio * 0.8


def _extends(best: Candidate, other: Candidate) -> bool:
    """``best`` matched a longer name that starts with ``other``'s (サクラブツサンロジ…
    over サクラブツサン): it explains more of the payer, so ``other`` is no rival."""
    return len(best.key) > len(other.key) and best.key.startswith(other.key)
