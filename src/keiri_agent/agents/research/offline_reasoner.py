"""``OfflineResearchReasoner``: the research decisions without a language model (seed §6).

* plan: queries from the question's key phrases (the search layer's tokenizer): all of
  them first, then each clause's own, at most ``MAX_QUERIES``;
* summarize: extractive — the sentences of the snippets that carry the query's terms,
  each with its snippet's ``[k]``, within the summary bound;
* check_gaps: the question's key phrases no summary mentions become one more query;
* write_report: the summaries assembled under 結論 and one section per query, labelled
  オフライン.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from keiri_agent.agents.research.models import DocSnippet
from keiri_agent.agents.research.reasoner import (
    MAX_QUERIES,
    GapCheck,
    ResearchPlan,
    StepSummary,
)
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

_CLAUSE = re.compile(r"[、。，．,.!?！？\n]+")
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


class OfflineResearchReasoner:
    """Research decisions by rules over the search layer's tokenizer.

    Args:
        summary_chars: Upper bound of one summary in characters (about one per token).
    """

    offline = True

    def __init__(self, *, summary_chars: int = 512) -> None:
        self.summary_chars = summary_chars

    async def plan(self, question: str) -> ResearchPlan:
        terms = key_phrases(question)
        if not terms:
            return ResearchPlan(
                False, "質問から調べる対象の語を取り出せなかったため、検索は行いません。"
            )
        queries = [" ".join(terms)]
        for clause in _CLAUSE.split(question):
            clause_terms = key_phrases(clause)
            query = " ".join(clause_terms)
            if clause_terms and query not in queries and clause_terms != terms:
                queries.append(query)
        return ResearchPlan(
            True, "質問の主な語句から検索クエリを作りました（オフライン）。", queries[:MAX_QUERIES]
        )

    async def summarize(self, question: str, query: str, snippets: Sequence[DocSnippet]) -> str:
        terms = set(key_phrases(query))
        picked: list[str] = []
        used = 0
        for number, snippet in enumerate(snippets, start=1):
            for sentence in sentences(snippet.text):
                if not terms & set(content_terms(sentence)):
                    continue
                line = cite_sentence(sentence, number)
                cost = len(line) + (1 if picked else 0)
                if used + cost > self.summary_chars:
                    return "\n".join(picked)
                picked.append(line)
                used += cost
        return "\n".join(picked)

    async def check_gaps(
        self, question: str, steps: Sequence[StepSummary], budget: int
    ) -> GapCheck:
        covered: set[str] = set()
        for step in steps:
            covered.update(content_terms(step.summary_md))
        missing = [term for term in key_phrases(question) if term not in covered]
        if not missing:
            return GapCheck("")
        described = "、".join(missing)
        query = " ".join(missing)
        asked = {step.query for step in steps}
        queries = [query] if budget > 0 and query not in asked else []
        return GapCheck(f"調査結果に「{described}」についての記述がありません。", queries)

    async def write_report(
        self,
        question: str,
        steps: Sequence[StepSummary],
        sources: Sequence[DocSnippet],
        missing: Sequence[str],
    ) -> str:
        sections: list[tuple[str, list[str]]] = []
        shown: set[str] = set()
        for step in steps:
            fresh = [line for line in sentences(step.summary_md) if line not in shown]
            shown.update(fresh)
            if fresh:
                sections.append((_CITATION.sub("", step.query).strip(), fresh))
        lead = [line for _query, lines in sections for line in lines][:3]
        conclusion = (
            "\n".join(f"- {line}" for line in lead) or "- 該当する記述は見つかりませんでした。"
        )
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
