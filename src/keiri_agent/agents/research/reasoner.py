"""What the deep-research agent decides at each step, and what it decides on.

Both reasoners implement :class:`ResearchReasoner`: :class:`LLMResearchReasoner`
(``llm_reasoner.py``: the planner, summariser, gap check and writer of a chat model with
the prompts of ``prompts.py``) and :class:`OfflineResearchReasoner`
(``offline_reasoner.py``: key phrases, extractive summaries, an assembled report). The
agent picks one when it is built; the graph (``graph.py``) calls the protocol and is the
same whichever runs.

Citations: a summary cites its own snippets as ``[k]`` (``snippets[k - 1]``); the writer
receives the summaries renumbered over all notes (``citations.numbered_summaries``) and
cites ``[n]`` = ``sources[n - 1]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from keiri_agent.agents.research.models import DocSnippet

MAX_QUERIES = 3
"""The planner's query budget (seed §2): a run never searches more queries than this."""


@dataclass(frozen=True)
class ResearchPlan:
    """The planner's answer: whether to research, why, and at most ``MAX_QUERIES`` queries."""

    needs_research: bool
    reason: str
    queries: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GapCheck:
    """What is still missing after a round, and the queries that would fill it."""

    missing: str
    queries: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StepSummary:
    """One finished step as the gap check and the writer see it (global ``[n]`` citations)."""

    query: str
    summary_md: str


class ResearchReasoner(Protocol):
    """Makes the deep-research agent's decisions (seed 004 §2–3)."""

    @property
    def offline(self) -> bool:
        """True when the decisions are rules, not a language model (labelled オフライン)."""
        ...

    async def plan(self, question: str) -> ResearchPlan:
        """Whether ``question`` needs research, and its search queries."""
        ...

    async def summarize(self, question: str, query: str, snippets: Sequence[DocSnippet]) -> str:
        """Summarise what ``snippets`` say about ``query``, citing ``[k]`` = ``snippets[k-1]``."""
        ...

    async def check_gaps(
        self, question: str, steps: Sequence[StepSummary], budget: int
    ) -> GapCheck:
        """What the steps leave unanswered, with at most ``budget`` new queries."""
        ...

    async def write_report(
        self,
        question: str,
        steps: Sequence[StepSummary],
        sources: Sequence[DocSnippet],
        missing: Sequence[str],
    ) -> str:
        """The report's Markdown (結論 and sections), citing ``[n]`` = ``sources[n-1]``.

        The graph adds the 調査の限界 and 出典 sections and checks every ``[n]``.
        """
        ...
