"""Deep research for every surface (seed 004): run a question, list and delete notes.

``ResearchService`` wires the agent from the settings once per surface (a CLI command,
a browser session, the coming API): the search sources (``search_tools``: the
workspace's knowledge bases, Azure AI Search and web search when configured), the
note store (``research_notes`` in the application database, migrated on first use)
and the chat model (none offline). ``index_sample`` indexes the bundled research
corpus (a fictional company's 経理規程, 経理部通知 and 請求書様式ガイド) into the
knowledge base ``SAMPLE_KB``; a question searches it only when it names it (``kb_names``
``[SAMPLE_KB]``, what ``--sample`` and the pages' sample choice pass), and then nothing
else (``search_tools``). ``knowledge_bases`` lists what a surface offers to choose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from keiri_agent.agents.research.sources.registry import (
    SAMPLE_KB,
    SAMPLE_NOTICE,
    SAMPLE_SOURCE_NAME,
)
from keiri_agent.config import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from keiri_agent.agents.research.agent import DeepResearchAgent
    from keiri_agent.agents.research.models import ResearchNote, ResearchResult
    from keiri_agent.agents.research.notes import SqlNoteStore
    from keiri_agent.events import EventCallback
    from keiri_agent.search.knowledge_base import IndexReport, ProgressCallback

EXAMPLE_QUESTION = (
    "インボイス制度で当社の請求書フォーマットに必要な変更点を、社内規程と過去の通知から調べて"
)
ModelFactory = Callable[[Settings], "BaseChatModel"]

__all__ = [
    "EXAMPLE_QUESTION",
    "SAMPLE_KB",
    "SAMPLE_NOTICE",
    "SAMPLE_SOURCE_NAME",
    "KnowledgeBaseChoice",
    "ResearchService",
    "sample_corpus",
]


@dataclass(frozen=True)
class KnowledgeBaseChoice:
    """One knowledge base a surface offers to search: its name (what ``kb_names``
    takes), how it is shown, and whether it is the bundled sample."""

    name: str
    label: str
    sample: bool


def sample_corpus() -> Path:
    """The bundled research corpus folder."""
    return Path(str(files("keiri_agent.samples") / "research" / "docs"))


class ResearchService:
    """The deep-research agent, its sources and its notes, from one ``Settings``."""

    def __init__(self, settings: Settings, *, model_factory: ModelFactory | None = None) -> None:
        self.settings = settings
        self._model_factory = model_factory
        self._store: SqlNoteStore | None = None

    @property
    def store(self) -> SqlNoteStore:
        if self._store is None:
            from keiri_agent.agents.research.notes import SqlNoteStore

            self._store = SqlNoteStore.from_settings(self.settings)
        return self._store

    def agent(self, kb_names: Sequence[str] | None = None) -> DeepResearchAgent:
        """The agent over the configured sources (``kb_names``: the knowledge bases to
        search; default every indexed one but the sample; ``[SAMPLE_KB]``: the sample
        alone)."""
        from keiri_agent.agents.research.agent import DeepResearchAgent
        from keiri_agent.agents.research.sources.registry import search_tools

        tools = search_tools(self.settings, kb_names=list(kb_names) if kb_names else None)
        model = self._model_factory(self.settings) if self._model_factory else None
        return DeepResearchAgent(self.settings, tools=tools, store=self.store, chat_model=model)

    def research(
        self,
        question: str,
        *,
        kb_names: Sequence[str] | None = None,
        session_id: str | None = None,
        on_event: EventCallback | None = None,
        run_id: str | None = None,
    ) -> ResearchResult:
        return self.agent(kb_names).research(
            question, session_id=session_id, on_event=on_event, run_id=run_id
        )

    def knowledge_bases(self) -> list[KnowledgeBaseChoice]:
        """The indexed knowledge bases (sorted by name), the sample labelled as such."""
        from keiri_agent.agents.research.sources.internal import knowledge_base_names

        return [
            KnowledgeBaseChoice(
                name=name,
                label=SAMPLE_SOURCE_NAME if name == SAMPLE_KB else name,
                sample=name == SAMPLE_KB,
            )
            for name in knowledge_base_names(self.settings)
        ]

    def index_sample(self, on_progress: ProgressCallback | None = None) -> IndexReport:
        """Index the bundled research corpus into ``SAMPLE_KB`` (changed files only);
        ``on_progress`` as ``KnowledgeBase.index_files`` calls it."""
        from keiri_agent.search.knowledge_base import KnowledgeBase

        knowledge = KnowledgeBase.for_workspace(self.settings, SAMPLE_KB)
        return knowledge.index_files([sample_corpus()], "manual", on_progress=on_progress)

    def sessions(self) -> list[tuple[str, int, datetime]]:
        """(session id, note count, last note time), newest first."""
        return list(self.store.sessions())

    def notes(self, session_id: str) -> list[ResearchNote]:
        return self.store.notes(session_id)

    def delete_session(self, session_id: str) -> int:
        return self.store.delete_session(session_id)
