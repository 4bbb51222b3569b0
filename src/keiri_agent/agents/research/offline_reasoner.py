"""``OfflineResearchReasoner``: the research decisions without a language model (seed §6).

* plan: the question's parts as sub-questions in words (the HelpDesk's splitter, which
  keeps brackets, lists and follow-ups whole), without the request and where to look
  (「…を社内資料から調べて」 → 「インボイス制度で請求書に必要な記載事項」); each is one
  query, at most ``MAX_QUERIES``;
* summarize: the support check shared with the HelpDesk (``helpdesk.offline.support``):
  only when the snippets answer the sub-question, the sentences of the supporting snippets
  that carry its terms, best first, each with its snippet's ``[k]``; else nothing (the
  step is left out and said so);
* check_gaps: the sub-questions no step answered are named as missing (offline, a reworded
  query would search the same terms again, so none is added);
* write_report: 結論 answers each sub-question from its best supported sentence, or says
  「資料には記載がありません」 for it; one section per answered sub-question; labelled
  オフライン.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.agents.helpdesk.offline.answers import support
from keiri_agent.agents.helpdesk.offline.split import split_question
from keiri_agent.agents.research.models import DocSnippet
from keiri_agent.agents.research.reasoner import (
    MAX_QUERIES,
    GapCheck,
    ResearchPlan,
    StepSummary,
)
from keiri_agent.search.similarity import Similarity
from keiri_agent.search.tokenize import content_terms

OFFLINE_LABEL = "オフライン"

REQUEST_WORDS = frozenset(
    {
        "調べる",
        "教える",
        "知る",
        "ください",
        "下さい",
        "する",
        "いる",
        "ある",
        "なる",
        "できる",
        "思う",
        "お願い",
        "願う",
        "確認",
        "まとめる",
        "いう",
    }
)
"""Terms that ask for research rather than name its subject."""

_REQUEST = re.compile(
    r"(?:について|に関して|に関する|って)?(?:を|は|が|も)?[、,\s]*"
    r"(?:(?:[^、。？?をはがも]{0,30}?(?:資料|規程|規定|通知|マニュアル|文書|記録|ファイル|FAQ|ドキュメント)"
    r"(?:など|等)?)から)?"
    r"(?:調べ|しらべ|教え|まとめ|確認し|整理し|洗い出し|知りた|説明し|探し|お願い)"
    r"[^、。？?]*[。？?！!]*$"
)
"""The request that ends a research question, with where to look (「…を社内資料から調べて」)."""
_EN_REQUEST = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:find\s+out|research|look\s+up|"
    r"check|tell\s+me|explain|summari[sz]e)\s+",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[。！？!?])|\n+")
_CITATION = re.compile(r"\[\d+\]")


def key_phrases(text: str) -> list[str]:
    """The content terms of ``text`` that name a subject (two characters or more)."""
    return [term for term in content_terms(text) if len(term) > 1 and term not in REQUEST_WORDS]


_MARKUP = re.compile(r"^(?:#{1,6}\s+|[-*+・]\s+|\d{1,3}[.)．]\s+|>\s*)+")
"""Markdown headings, list markers and quote marks at the start of a line."""


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (after 。！？ and at line breaks), stripped of Markdown
    list/heading/quote markers. Headings (a line that was ``# …``) and lines without a
    sentence end are kept out: they label passages, they do not state findings."""
    found = []
    for part in _SENTENCE.split(text):
        line = (part or "").strip()
        if not line:
            continue
        heading = line.startswith("#")
        line = _MARKUP.sub("", line).strip()
        if line and not heading and line[-1] in "。！？!?":
            found.append(line)
    return found


def cite_sentence(sentence: str, number: int) -> str:
    """``sentence`` with ``[number]`` before its closing 。！？ (``…です [1]。``)."""
    if sentence[-1] in "。！？!?":
        return f"{sentence[:-1]} [{number}]{sentence[-1]}"
    return f"{sentence} [{number}]"


def sub_questions(question: str) -> list[str]:
    """The question's parts in words, without the request (at most ``MAX_QUERIES``).

    >>> sub_questions("インボイス制度で請求書に必要な記載事項を社内資料から調べて")
    ['インボイス制度で請求書に必要な記載事項']
    """
    parts = []
    asked = _EN_REQUEST.sub("", _REQUEST.sub("", question.strip())).strip() or question
    for part in split_question(asked):
        bare = _EN_REQUEST.sub("", _REQUEST.sub("", part.strip())).strip(" 、。,.?？")
        parts.append(re.sub(r"\s+", " ", bare) or part.strip())
    parts = list(dict.fromkeys(parts))
    if len(parts) > MAX_QUERIES:
        parts = [*parts[: MAX_QUERIES - 1], "、".join(parts[MAX_QUERIES - 1 :])]
    return parts


def as_passage(snippet: DocSnippet) -> SearchOutput:
    """The snippet as a passage of the support check."""
    return SearchOutput(
        file_name=snippet.document or snippet.title or snippet.ref,
        content=snippet.text,
        page=snippet.page,
        heading=snippet.heading,
        row=snippet.row,
        score=snippet.score,
    )


class OfflineResearchReasoner:
    """Research decisions by rules over the search layer's tokenizer.

    Args:
        summary_chars: Upper bound of one summary in characters (about one per token).
        similarity: With embeddings configured, how close passages are in meaning to a
            query (``search.similarity``): the support check's second condition.
    """

    offline = True

    def __init__(self, *, summary_chars: int = 512, similarity: Similarity | None = None) -> None:
        self.summary_chars = summary_chars
        self.similarity = similarity

    async def plan(self, question: str) -> ResearchPlan:
        if not key_phrases(question):
            return ResearchPlan(
                False, "質問から調べる対象の語を取り出せなかったため、検索は行いません。"
            )
        asked = sub_questions(question)
        return ResearchPlan(
            True,
            f"質問を {len(asked)} つの問いに分けて調べます（オフライン）。",
            asked,
        )

    async def summarize(self, question: str, query: str, snippets: Sequence[DocSnippet]) -> str:
        passages = [as_passage(snippet) for snippet in snippets]
        # the meaning check calls the embeddings service: off the event loop
        judged = await asyncio.to_thread(support, query, passages, similarity=self.similarity)
        if not judged.answered:
            return ""
        supporting = {p.content for p in judged.passages}
        ranked: list[tuple[float, int, str]] = []
        for number, snippet in enumerate(snippets, start=1):
            if snippet.text not in supporting:
                continue
            for order, sentence in enumerate(sentences(snippet.text)):
                found = set(content_terms(sentence)) & set(judged.terms)
                if found:
                    ranked.append(
                        (-len(found), number * 1000 + order, cite_sentence(sentence, number))
                    )
        picked: list[str] = []
        used = 0
        for _score, _order, line in sorted(ranked):
            cost = len(line) + (1 if picked else 0)
            if used + cost > self.summary_chars:
                break
            picked.append(line)
            used += cost
        return "\n".join(picked)

    async def check_gaps(
        self, question: str, steps: Sequence[StepSummary], budget: int
    ) -> GapCheck:
        answered = {step.query for step in steps if step.summary_md.strip()}
        missing = [asked for asked in sub_questions(question) if asked not in answered]
        if not missing:
            return GapCheck("")
        listed = "」「".join(missing)
        return GapCheck(f"資料には「{listed}」についての記載がありません。")

    async def write_report(
        self,
        question: str,
        steps: Sequence[StepSummary],
        sources: Sequence[DocSnippet],
        missing: Sequence[str],
    ) -> str:
        sections: list[tuple[str, list[str]]] = []
        shown: set[str] = set()
        found: dict[str, list[str]] = {}
        for step in steps:
            fresh = [line for line in sentences(step.summary_md) if line not in shown]
            shown.update(fresh)
            if fresh:
                query = _CITATION.sub("", step.query).strip()
                sections.append((query, fresh))
                found[query] = fresh
        asked = sub_questions(question)
        lines = []
        for part in [*asked, *(q for q in found if q not in asked)]:
            if part in found:
                lead = found[part][0]
                lines.append(f"- {part}: {lead}" if len(asked) > 1 else f"- {lead}")
            else:
                lines.append(f"- {part}: 資料には記載がありません。")
        conclusion = "\n".join(lines) or "- 資料には記載がありません。"
        parts = [
            f"# 調査レポート（{OFFLINE_LABEL}）",
            f"質問: {question}",
            "> オフラインモード: 言語モデルを使わず、"
            "見つかった資料の該当文を抜き出してまとめています。",
            f"## 結論\n\n{conclusion}",
        ]
        for query, lines in sections:
            parts.append(f"## {query}\n\n" + "\n".join(f"- {line}" for line in lines))
        return "\n\n".join(parts)
