"""Topic terms: which of a part's key terms say what it is about.

Every manual uses generic words (「設定」「画面」「データ」「確認」, "settings", "data"): a
passage that shares only those with a question is not about it. The offline rules
therefore judge passages on a part's *topic terms* and rank them by a weight:

* a term in ``GENERIC_TERMS`` (compared after normalisation, with its tokenizer forms)
  is generic, weight ``GENERIC_WEIGHT``;
* any other term — a kanji compound, a katakana word, a Latin word, a code such as
  ``E1023``, also a single kanji such as 「円」「税」 — is specific, weight 1. (How a
  one-character term matches is ``terms.PreparedText``'s concern, not its weight's.)

:func:`topic_terms` is the non-generic terms; when every term is generic (「設定画面の
確認方法」) the question is about those words themselves and all of them are topic terms.
The weights use no document frequency: the rules run on the passages a search returned,
not on the index, so the list and the term's form are what is known.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from keiri_agent.search.tokenize import (
    content_terms,
    is_adverbial,
    is_verbal_noun,
    normalize_for_search,
)

GENERIC_WEIGHT = 0.25

_GENERIC_JA = (
    "サポート データ 設定 画面 機能 方法 情報 確認 利用 使用 使う 操作 管理 内容 項目"
    " 対応 表示 入力 処理 状態 一覧 詳細 ボタン メニュー ページ 問題 必要 可能 注意 ツール"
    " サービス 製品 ユーザー ユーザ 利用者 場所 手続き 対象 種類 有無 全般 基本"
    " ルール 決まり 仕組み 流れ"
)
_GENERIC_EN = (
    "system systems data setting settings screen screens function functions feature features"
    " method information info check use using used usage support page pages button buttons"
    " menu menus user users item items manage management display option options tool tools"
    " service product problem issue issues"
)
GENERIC_TERMS: frozenset[str] = frozenset(_GENERIC_JA.split()) | frozenset(_GENERIC_EN.split())
"""Words any manual uses about anything: sharing only these does not make a passage relevant."""


@lru_cache(maxsize=1)
def _generic() -> frozenset[str]:
    """``GENERIC_TERMS`` normalised, plus the tokenizer's terms of each entry."""
    out = {normalize_for_search(word) for word in GENERIC_TERMS}
    for word in GENERIC_TERMS:
        out.update(content_terms(word))
    return frozenset(out)


def is_generic(term: str) -> bool:
    """True for a generic term (``GENERIC_TERMS``), compared after normalisation."""
    return normalize_for_search(term).strip() in _generic()


def weight(term: str) -> float:
    """How much sharing ``term`` says about a passage: 1 when specific, less when generic."""
    return GENERIC_WEIGHT if is_generic(term) else 1.0


def topic_terms(terms: Sequence[str]) -> list[str]:
    """The terms that are not generic, in order; all of ``terms`` when every one is generic.

    >>> topic_terms(["監査", "ログ", "設定"])
    ['監査', 'ログ']
    >>> topic_terms(["設定", "画面"])
    ['設定', '画面']
    """
    specific = [t for t in terms if not is_generic(t)]
    return specific or list(terms)


_HIRAGANA = re.compile(r"[\u3040-\u309f]")


_RELATIONAL = frozenset(
    {"以外", "以上", "以下", "以内", "以前", "以降", "未満", "前後", "毎", "等", "用", "中", "間"}
)
"""Nouns that relate a noun to something else (「パスワード以外」): not part of a compound."""


_ENGLISH_NOT_NOUN = re.compile(r"^[a-z]{3,}(?:ly|ed|ing)$")
"""An English adverb, past participle or gerund (「automatically」「imported」「using」)."""
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


_VALUE = re.compile(r"(\d[\d,.]*)([a-z%]*)")
_PHRASE_END_EN = (
    # prepositions, conjunctions, adverbs and pronouns
    "of|for|in|on|at|to|from|with|by|per|about|before|after|during|while|until|through|via"
    "|into|over|under|without|within|across|since|and|or|but|than|so|because|if|as|when"
    "|where|still|just|also|only|even|already|yet|ever|never|always|often|now|then"
    "|we|you|i|they|it|he|she"
    # auxiliaries and the verbs a question ends on most often (「can the hierarchy go」)
    "|do|does|did|is|are|was|were|be|been|can|could|should|will|would|has|have|had"
    "|go|work|run|happen|apply|take|get|make|use|need|show|change|stop|start|come|expire"
    "|last|cost|mean|look|send|keep|see|let|put|set|stay|remain|appear"
)
_NOUN_PHRASE_EN = re.compile(
    r"\b(?:a|an|the|my|our|your|its|their|this|that|these|those|each|every|any|some)\s+"
    rf"((?:(?!(?:{_PHRASE_END_EN})(?:\s|[?.,!;:]|$))[a-z0-9][\w'-]*(?:\s+|$|(?=[?.,!;:])))+)"
)
"""An English noun phrase after its article or determiner, up to a preposition, a verb
or a pronoun (「a weekly email」「the rate limit」): English writes a compound noun as words
apart, which name one thing as 「週次メール」 does."""


def is_value(term: str) -> bool:
    """A number, with or without a Latin unit (「400000」「15mb」「10%」): a value the
    question gives or asks about, not a thing it names."""
    return _VALUE.fullmatch(term) is not None


def states_like(term: str, text: str) -> bool:
    """``text`` states a value like the value term: a number with the same unit (「10MB」
    for 「15mb」), any number for a bare one. The user's own figure (「15MBあるんですが」)
    is seldom the passage's (「上限は10MB」), but a passage with no such value does not
    answer about it."""
    found = _VALUE.fullmatch(term)
    if found is None:
        return False
    unit = found.group(2)
    norm = normalize_for_search(text)
    return re.search(r"\d\s*" + re.escape(unit) if unit else r"\d", norm) is not None


def is_nominal(term: str) -> bool:
    """A noun-like term: no hiragana (not a Japanese verb or adjective form), no English
    adverb or participle, not relational."""
    return (
        bool(term)
        and not _HIRAGANA.search(term)
        and not _ENGLISH_NOT_NOUN.match(term)
        and term not in _RELATIONAL
    )


def is_name(term: str, text: str) -> bool:
    """True when ``term`` is written in ``text`` as a name: a Latin word inside Japanese
    text (「Suica」「Teams」), or in English text a word with a capital past its first
    letter (PayPay, iPhone, VPN), with a digit (E1050), or capitalised mid-sentence."""
    if not term.isascii() or not term[:1].isalpha():
        return False
    japanese = bool(_CJK.search(text))
    for match in _LATIN_WORD.finditer(text):
        word = match.group()
        if word.lower() != term:
            continue
        if japanese or any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word):
            return True
        before = text[: match.start()].rstrip()
        if word[0].isupper() and before and before[-1] not in ".?!":
            return True
    return False


def units(text: str, terms: Sequence[str]) -> list[tuple[str, ...]]:
    """The question's noun units: runs of topic terms written next to each other in ``text``.

    The tokenizer splits a compound noun (「有給休暇」 → 「有給」「休暇」); written side by
    side in the question, its parts name one thing, which a passage must mention as a whole.
    Only noun-like topic terms (:func:`is_nominal`) join; any other topic term is a unit alone.
    English writes a compound apart: words one space apart in a noun phrase after an article
    or possessive join too (「a weekly email」, adjectives included, participles not).
    Numbers (the value asked about or given) and relational nouns (「以外」「以内」) are no
    units.

    >>> units("有給休暇の申請", ["有給", "休暇", "申請"])
    [('有給', '休暇'), ('申請',)]
    >>> units("Can it send me a weekly email?", ["send", "weekly", "email"])
    [('send',), ('weekly', 'email')]
    """
    return [unit for unit, _, _ in _placed_units(text, terms)]


def _placed_units(text: str, terms: Sequence[str]) -> list[tuple[tuple[str, ...], int, int]]:
    """:func:`units` with where each is written in the normalised ``text`` (start, end);
    (-1, -1) for a unit whose term is not written as such (a tokenizer's normal form)."""
    norm = normalize_for_search(text)
    placed = sorted(
        (norm.find(term), term)
        for term in topic_terms(terms)
        if not is_value(term) and term not in _RELATIONAL
    )
    phrases = [found.span(1) for found in _NOUN_PHRASE_EN.finditer(norm)]
    out: list[tuple[tuple[str, ...], int, int]] = []
    end = -2
    for position, term in placed:
        last = out[-1][0] if out else ()
        joins = (
            (
                position == end
                and is_nominal(term)
                and is_nominal(last[-1] if last else "")
                and not is_adverbial(term)  # 「今月残業」: this month's overtime, not a compound
                and not is_adverbial(last[-1] if last else "")
            )
            or (
                norm[end:position] == " "
                and _modifies(last[-1] if last else "")
                and _modifies(term)
                and any(
                    start <= out[-1][1] and position + len(term) <= stop for start, stop in phrases
                )
            )
        )
        if last and joins and position >= 0:
            out[-1] = ((*last, term), out[-1][1], position + len(term))
        else:
            span = (position, position + len(term)) if position >= 0 else (-1, -1)
            out.append(((term,), *span))
        end = position + len(term) if position >= 0 else -2
    return out


def spelled(unit: Sequence[str]) -> str:
    """A noun unit as a question writes it: English words apart, Japanese ones together."""
    return " ".join(unit) if all(part.isascii() for part in unit) else "".join(unit)


def _modifies(term: str) -> bool:
    """An English word of a noun phrase: a noun or an adjective (「weekly」「monthly」), not a
    participle (「uploaded」) — it is said in many ways."""
    return bool(term) and term.isascii() and not re.match(r"^[a-z]{3,}(?:ed|ing)$", term)


def compounds(text: str, terms: Sequence[str]) -> list[tuple[str, ...]]:
    """Every compound noun written in ``text``: runs of two or more noun-like topic terms
    side by side, at every place they are written (:func:`units` looks at each term's
    first place only, which is enough for a question but not for a sentence that names a
    term twice: 「国内出張の日当…海外出張の日当」).

    >>> compounds("国内出張と海外出張", ["国内", "出張", "海外"])
    [('国内', '出張'), ('海外', '出張')]
    """
    norm = normalize_for_search(text)
    nominal = [
        t for t in topic_terms(terms) if not is_value(t) and t not in _RELATIONAL and is_nominal(t)
    ]
    places = sorted(
        (match.start(), -len(term), term)
        for term in nominal
        for match in re.finditer(re.escape(term), norm)
    )
    found: list[tuple[str, ...]] = []
    run: list[str] = []
    end = -1
    for start, _, term in places:
        if start < end:
            continue  # inside a longer term written at the same place
        if not (run and start == end):
            if len(run) >= 2:
                found.append(tuple(run))
            run = []
        run.append(term)
        end = start + len(term)
    if len(run) >= 2:
        found.append(tuple(run))
    return list(dict.fromkeys(found))


def is_action(unit: Sequence[str]) -> bool:
    """True when every part of the unit is a noun naming an action (「修正」「登録申請」:
    ``tokenize.is_verbal_noun``): what is done, not what it is done to."""
    return all(is_verbal_noun(part) for part in unit)


def _specificity(unit: Sequence[str], text: str) -> tuple[bool, bool, bool, int]:
    """A name (:func:`is_name`) beats a thing, a thing beats an action (:func:`is_action`:
    in 「勤怠の打刻を修正」 the question is about 「勤怠」, whatever is done to it), a
    compound beats a single term; then the longer (in characters) is more specific."""
    return (
        any(is_name(part, text) for part in unit),
        not is_action(unit),
        len(unit) >= 2,
        sum(len(part) for part in unit),
    )


def most_specific(text: str, terms: Sequence[str]) -> list[tuple[str, ...]]:
    """The most specific noun units of ``text`` (ties kept): what the question is about.

    Only noun units count (a verb or adverb — 「任せる」「ずっと」, "imported" — is said in
    many ways); a name (「Suica」, PayPay, VPN) is the most specific of all.
    None when every topic term is generic (the question is about those words) or when the
    best unit is a single character (too short to say what the question is about).
    """
    if all(is_generic(t) for t in terms):
        return []
    found = [
        u
        for u in units(text, terms)
        if (all(map(is_nominal, u)) or (len(u) > 1 and all(map(_modifies, u))))
        and not all(map(is_generic, u))
        and not is_adverbial("".join(u))  # 「全員」「半年分」「途中」: how many, when — not what
    ]
    if not found:
        return []
    best = max(_specificity(u, text) for u in found)
    if best[-1] < 2:
        return []
    return [u for u in found if _specificity(u, text) == best]


_LINK = re.compile(
    r"(?:の|を|が|は|に|で|へ|と|も|には|では|への|での|との|にも|から|まで|について|に関する)再?"
)
"""A particle that ties two nouns of a question (「法人カードの限度額」「APIキーを再発行」)."""
_LINK_EN = re.compile(
    r"(?:of|on|for|in|at|to|from|with|about|per|'s)"
    r"(?:the|a|an|our|your|my|its|their|this|that|each)?"
)
"""The same tie in English, spaces removed (「the rate limit on the API」「the guest's photo」)."""
_REDO = "再"


@dataclass(frozen=True)
class Aspect:
    """What a question asks about its topic: a noun unit tied to the topic by a particle
    (「限度額」 in 「法人カードの限度額」), or an action asked again (「再発行」).

    ``form`` is how a passage must name it when it is not the unit's parts: a redo
    (「再」 + a verbal noun) is named only as such — 「発行」 does not say 「再発行」.
    """

    unit: tuple[str, ...]
    linked: bool
    """Tied to the topic: a passage must name it next to the topic (same sentence or its
    heading), not anywhere."""
    form: str = ""


def aspects(text: str, terms: Sequence[str], topic: Sequence[str]) -> list[Aspect]:
    """The aspects of ``topic`` (one of :func:`most_specific`) asked in ``text``.

    * every noun unit written right before or after the topic with only a particle
      between (``_LINK``): 「法人カードの利用限度額」 → 「限度額」 (a generic word such as
      「利用」 is no unit, so it does not break the tie); in English a preposition, with or
      without an article (``_LINK_EN``: 「support by phone on the Standard plan」 → 「phone」);
    * every action written with 「再」 before it (「再発行」「再申請」): whether tied or not,
      a passage must say the redo, not just the action.

    Verbs and adjectives (hiragana forms) are said in many ways and are no aspects.

    >>> terms = ["法人", "カード", "限度", "額"]
    >>> [a.unit for a in aspects("法人カードの限度額", terms, ("法人", "カード"))]
    [('限度', '額')]
    """
    norm = normalize_for_search(text)
    generic = sorted({t for t in terms if is_generic(t)}, key=len, reverse=True)
    placed = [p for p in _placed_units(text, terms) if all(map(is_nominal, p[0]))]
    spans = [(start, end) for unit, start, end in placed if unit == tuple(topic) and start >= 0]
    out: list[Aspect] = []
    for unit, start, end in placed:
        if unit == tuple(topic) or start < 0 or all(map(is_generic, unit)):
            continue
        if sum(map(len, unit)) < 2:
            continue  # one character (「紙」「家」) is too short to say what is asked
        linked = any(
            _ties(norm[t_end:start], generic) or _ties(norm[end:t_start], generic)
            for t_start, t_end in spans
        )
        redo = start > 0 and norm[start - 1] == _REDO and is_action(unit)
        if linked or redo:
            out.append(Aspect(unit, linked, _REDO + "".join(unit) if redo else ""))
    return out


def _ties(gap: str, generic: Sequence[str]) -> bool:
    """``gap`` (the text between two nouns) is a particle, generic words and spaces aside
    (「の利用」 in 「法人カードの利用限度額」, 「 の」 in 「Procura の導入費用」)."""
    for word in generic:
        gap = gap.replace(word, "")
    joined = "".join(gap.split())
    return bool(_LINK.fullmatch(joined) or (gap.isascii() and _LINK_EN.fullmatch(joined)))
