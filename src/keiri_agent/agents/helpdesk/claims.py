"""A model's cited claims checked against the passages they cite (issue 29: with an LLM).

A language model writes an answer with ``[n]`` markers; a marker says "passage n says
this". :func:`check_claims` splits the answer into sentences and judges every sentence
that cites passages with the offline agents' support check
(``offline.answers.support``: the sentence's content words and most specific noun must be
in the cited passages, and, with embeddings configured, a cited passage must be close
in meaning), and every value the sentence states — an amount, a count, a date or
deadline, a percentage, a version (:data:`VALUE`) — must be written in them as well: a
claim that changes 30日 into 14日 shares every other word with its passage. A sentence
its passages do not support keeps its text but loses its markers
and is marked :data:`UNSUPPORTED_MARK`, so the reader sees it was not confirmed and the
出典 does not list a passage for it. A marker whose number names no passage counts as
citing nothing. Sentences without markers (a lead-in, a heading) are left as written.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keiri_agent.agents.helpdesk.citations import CITATION_MARKER, cited_numbers
from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.agents.helpdesk.offline.answers import PASSAGE_SENTENCE as _PASSAGE_SENTENCE
from keiri_agent.agents.helpdesk.offline.answers import names, support
from keiri_agent.agents.helpdesk.offline.specificity import compounds, is_generic
from keiri_agent.agents.helpdesk.offline.terms import (
    DEFAULT_VOCABULARY,
    PreparedText,
    Vocabulary,
    atomic_terms,
    key_terms,
)
from keiri_agent.search.similarity import Similarity

logger = logging.getLogger(__name__)

UNSUPPORTED_MARK = "（※出典の記述では確認できませんでした）"
"""Appended to a sentence whose cited passages do not say it."""

VALUE = re.compile(
    r"[vV]?\d+(?:[.,]\d+)*"
    r"(?:営業日|日間|か月|ヶ月|カ月|週間|時間|万円|千円|億円|文字|世代|ページ"
    r"|[年月日週時分秒円件回桁社名人歳割倍枚部%]|MB|GB|KB)?"
)
"""A value a claim states: digits (``2,500``, ``10.21``, ``v3.2``) and their unit."""

_SENTENCE = re.compile(rf"[^。！？!?\n]*(?:[。！？!?]+(?:[ \t]*{CITATION_MARKER.pattern})*|\Z)")
"""One sentence of a line: up to its end marks and the citation markers right after them
(「…です。[1]」 cites like 「…です[1]。」), or to the end of the line."""


@dataclass(frozen=True)
class ClaimCheck:
    """The checked text and what was found."""

    text: str
    checked: int
    """Sentences that cite passages."""
    unsupported: list[str]
    """Those the cited passages do not support, as written (without markers)."""


def check_claims(
    text: str,
    passages: Mapping[int, Sequence[SearchOutput]],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    *,
    similarity: Similarity | None = None,
) -> ClaimCheck:
    """Mark the sentences of ``text`` its cited passages (``number → passages``) do not support."""
    checked = 0
    unsupported: list[str] = []
    lines = []
    for line in text.split("\n"):
        pieces = []
        for sentence in _sentences(line):
            numbers = cited_numbers(sentence)
            if not numbers:
                pieces.append(sentence)
                continue
            checked += 1
            claim = _MARKER_AND_SPACE.sub("", sentence)
            cited = [p for number in numbers for p in passages.get(number, ())]
            words = _claim_words(claim)
            terms = atomic_terms(key_terms(words, vocabulary)) if words else []
            sentences = [s for p in cited for s in _PASSAGE_SENTENCE.split(p.content) if s.strip()]
            if (
                words
                and cited
                and _values_written(words, cited)
                and _things_named(words, terms, sentences, vocabulary)
                and _same_polarity(words, terms, sentences, vocabulary)
                and support(words, cited, vocabulary, similarity=similarity, asked=False).answered
            ):
                pieces.append(sentence)
                continue
            unsupported.append(claim.strip())
            pieces.append(_marked(claim))
        lines.append("".join(pieces))
    if unsupported:
        logger.info("claims: %d of %d cited sentences not supported", len(unsupported), checked)
    return ClaimCheck("\n".join(lines), checked, unsupported)


def _values_written(claim: str, passages: Sequence[SearchOutput]) -> bool:
    """Every value of ``claim`` is written in one of ``passages`` (NFKC, with its unit;
    thousands separators and spaces ignored)."""
    written = "\n".join(_plain(p.content) for p in passages)
    return all(
        re.search(r"(?<![\d.,])" + re.escape(value), written)  # 「2文字」 is not in 「12文字」
        for value in VALUE.findall(_plain(claim))
    )


def _things_named(
    claim: str, terms: Sequence[str], sentences: Sequence[str], vocabulary: Vocabulary
) -> bool:
    """Every compound noun of ``claim`` (「居住者証明書」「海外出張」「経理部長」: two or more
    noun terms written together, not all generic) is named by one of the cited passages'
    ``sentences``. A claim that adds a thing to what its passage says names a thing the
    passage does not; a paraphrase changes the words around the things."""
    return all(
        any(names(sentence, unit, vocabulary) for sentence in sentences)
        for unit in compounds(claim, terms)
        if not all(map(is_generic, unit))
    )


_OBLIGATION = re.compile(
    r"(?:なければ|なくては|なくちゃ|ねば)(?:なら|なり|いけ)(?:ない|ず|ません)"
    r"|ざるを得(?:ない|ません)"
)
"""Must-do forms, which are written with a negation but say something is required."""
_NEGATION = re.compile(
    r"ない|ません|ず(?=[、。にとも]|$)|不要(?!な)|不可(?!欠|能な)|禁止(?!事項)|要しない|できず|なく"
)
"""A predicate said in the negative: 「〜しない」「〜できません」「不要です」「〜せず」 (not
「不要な権限」, a thing described)."""


def _same_polarity(
    claim: str, terms: Sequence[str], sentences: Sequence[str], vocabulary: Vocabulary
) -> bool:
    """The claim says yes or no as the cited sentence closest to it in words does: a
    claim that 「…は不要です」 where its passage says 「…を要する」 (or 「支給されます」 where
    it says 「支給しない」) shares all its words and contradicts it."""
    if not terms or not sentences:
        return True
    closest = max(
        sentences, key=lambda s: sum(PreparedText.of(s, vocabulary).has(t) for t in terms)
    )
    return _negative(claim) == _negative(closest)


def _negative(sentence: str) -> bool:
    """The sentence's main predicate — its last clause, where Japanese puts it — is said
    in the negative (a condition before it, 「…がないと、…提出してください」, is not)."""
    text = _OBLIGATION.sub("", unicodedata.normalize("NFKC", sentence)).strip().rstrip("。.")
    return bool(_NEGATION.search(re.split(r"[、,]", text)[-1]))


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<=\d),(?=\d{3})|\s+", "", text)


def _sentences(line: str) -> list[str]:
    """``line`` cut into sentences; joined again they give ``line`` back."""
    out: list[str] = []
    position = 0
    while position < len(line):
        match = _SENTENCE.match(line, position)
        if match is None or match.end() == position:  # an end mark alone: keep it
            out.append(line[position])
            position += 1
            continue
        out.append(match.group())
        position = match.end()
    return out


_MARKER_AND_SPACE = re.compile(rf"[ \t]*{CITATION_MARKER.pattern}")
_LIST_MARK = re.compile(r"^\s*(?:[-*・]|\d+[.)．]|#{1,6})\s*")


def _claim_words(claim: str) -> str:
    """The claim without list or heading marks and emphasis: what it says."""
    return _LIST_MARK.sub("", claim).replace("**", "").strip()


def _marked(claim: str) -> str:
    """The claim, its end marks kept after the mark: 「…です（※…）。」."""
    body = claim.rstrip()
    trailing = claim[len(body) :]
    ends = len(body) - len(body.rstrip("。！？!?"))
    head, end = (body[:-ends], body[-ends:]) if ends else (body, "")
    return f"{head.rstrip()}{UNSUPPORTED_MARK}{end}{trailing}"


__all__ = ["UNSUPPORTED_MARK", "VALUE", "ClaimCheck", "check_claims"]
