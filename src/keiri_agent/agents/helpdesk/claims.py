"""A model's cited claims checked against the passages they cite (issue 29: with an LLM).

A language model writes an answer with ``[n]`` markers; a marker says "passage n says
this". :func:`check_claims` splits the answer into sentences and judges every sentence
that cites passages with the offline agents' support check
(``offline.answers.support``: the sentence's content words and most specific noun must be
in the cited passages, and, with embeddings configured, a cited passage must be close
in meaning). A sentence its passages do not support keeps its text but loses its markers
and is marked :data:`UNSUPPORTED_MARK`, so the reader sees it was not confirmed and the
出典 does not list a passage for it. A marker whose number names no passage counts as
citing nothing. Sentences without markers (a lead-in, a heading) are left as written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keiri_agent.agents.helpdesk.citations import CITATION_MARKER, cited_numbers
from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.agents.helpdesk.offline.answers import support
from keiri_agent.agents.helpdesk.offline.terms import DEFAULT_VOCABULARY, Vocabulary
from keiri_agent.search.similarity import Similarity

logger = logging.getLogger(__name__)

UNSUPPORTED_MARK = "（※出典の記述では確認できませんでした）"
"""Appended to a sentence whose cited passages do not say it."""

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
            if (
                words
                and cited
                and support(words, cited, vocabulary, similarity=similarity).answered
            ):
                pieces.append(sentence)
                continue
            unsupported.append(claim.strip())
            pieces.append(_marked(claim))
        lines.append("".join(pieces))
    if unsupported:
        logger.info("claims: %d of %d cited sentences not supported", len(unsupported), checked)
    return ClaimCheck("\n".join(lines), checked, unsupported)


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


__all__ = ["UNSUPPORTED_MARK", "ClaimCheck", "check_claims"]
