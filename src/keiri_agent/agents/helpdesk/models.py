"""The HelpDesk agent's data models, as seed 001 §3.2 names them (plus sources).

``SubtaskPlan`` is the seed's ``Plan`` (renamed: ``plans.Plan`` is the workflow).
``SearchOutput`` is one search result as a tool returns it; it keeps the source
(document, page, heading, row) so every answer can cite where a fact came from.
``Subtask.sources`` and ``AgentResult.sources`` are additions to the seed: the
distinct sources the answers were built from, in first-use order.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from keiri_agent.search.models import Hit, Source, page_at

_SPACE = re.compile(r"\s+")


class SearchOutput(BaseModel):
    """One passage a search tool found."""

    file_name: str = Field(description="The document the passage comes from")
    content: str = Field(description="The passage text")
    page: int | None = Field(default=None, description="1-based page (PDF)")
    heading: str | None = Field(default=None, description="Nearest heading path")
    row: int | None = Field(default=None, description="1-based row (FAQ CSV)")
    page_starts: list[tuple[int, int]] = Field(
        default_factory=list,
        description="(offset in content, page) where each page starts; first is (0, page)",
    )
    score: float = 0.0
    retriever: str = "keyword"

    @classmethod
    def from_hit(cls, hit: Hit) -> SearchOutput:
        source = hit.source
        return cls(
            file_name=source.document,
            content=hit.text,
            page=source.page,
            heading=source.heading,
            row=source.row,
            page_starts=list(hit.chunk.page_starts),
            score=hit.score,
            retriever=hit.retriever,
        )

    def page_of(self, offset: int) -> int | None:
        """The page the character at ``offset`` of ``content`` is on."""
        return page_at(self.page_starts, offset) if self.page_starts else self.page

    def quote_pages(self, quote: str) -> tuple[int, int] | None:
        """(first, last) page of ``quote``, text taken from ``content`` (spaces may differ,
        「…」 marks left-out text); None when no part of it is found in ``content``."""
        compact, offsets = _without_spaces(self.content)
        pages: list[int] = []
        for part in (_SPACE.sub("", piece) for piece in quote.split("…")):
            found = compact.find(part) if part else -1
            if found < 0:
                continue
            for index in (found, found + len(part) - 1):
                page = self.page_of(offsets[index])
                if page is not None:
                    pages.append(page)
        return (min(pages), max(pages)) if pages else None

    def citation(self, quote: str | None = None) -> str:
        """``xyz_manual.pdf p.3 「2.1 パスワード」`` — what answers cite (``Source.label``).

        A passage that runs onto the next page is cited ``p.3–4``; given the ``quote``
        taken from it, the citation names the page(s) the quoted text is on.
        """
        first, last = self.page, self.page_of(len(self.content) - 1)
        if quote is not None and (found := self.quote_pages(quote)) is not None:
            first, last = found
        return Source(self.file_name, first, self.heading, self.row).label(last)


def _without_spaces(text: str) -> tuple[str, list[int]]:
    """``text`` without whitespace, and the offset in ``text`` of each character kept."""
    offsets = [index for index, char in enumerate(text) if not char.isspace()]
    return "".join(text[index] for index in offsets), offsets


class SubtaskPlan(BaseModel):
    """The plan of one question: the subtasks to search and answer (seed 001 ``Plan``;
    renamed so it is not mistaken for the ``plans.Plan`` workflow)."""

    subtasks: list[str] = Field(..., description="問題を解決するためのサブタスクリスト")


class ToolResult(BaseModel):
    tool_name: str
    args: str
    results: list[SearchOutput]


class ReflectionResult(BaseModel):
    advice: str = Field(
        ...,
        description="評価がNGの場合は、別のツールや別の検索語を試すなど改善のアドバイス。"
        "OKの場合は空でよい。",
    )
    is_completed: bool = Field(..., description="サブタスクの回答が十分で完了と言えるか")


class Subtask(BaseModel):
    task_name: str
    tool_results: list[list[ToolResult]]
    reflection_results: list[ReflectionResult]
    is_completed: bool
    subtask_answer: str
    challenge_count: int
    sources: list[str] = Field(default_factory=list, description="Citations used, in order")


class AgentResult(BaseModel):
    run_id: str = Field(description="The run's id, as in its progress events")
    question: str
    plan: SubtaskPlan
    subtasks: list[Subtask]
    answer: str
    sources: list[str] = Field(default_factory=list, description="Citations used, in order")
    unanswered: list[str] = Field(
        default_factory=list, description="Subtasks that ended without a complete answer"
    )
    offline: bool = Field(default=False, description="Produced by the offline rules, no LLM")
    warnings: list[str] = Field(
        default_factory=list,
        description="What the user should know about how it was searched (Japanese): a "
        "collection searched by keywords alone although embeddings are configured",
    )
