"""The research agent offline on real components: the bundled research corpus indexed into
a workspace knowledge base (the search layer the HelpDesk uses), notes in the SQLite
application database, the README's question; notes survive and are deleted per session."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.agents.research.notes import SqlNoteStore
from keiri_agent.agents.research.sources.internal import open_internal
from keiri_agent.config import Settings
from keiri_agent.search.knowledge_base import KnowledgeBase

README_QUESTION = (
    "インボイス制度で当社の請求書フォーマットに必要な変更点を、社内規程と過去の通知から調べて"
)
CORPUS = Path(str(files("keiri_agent.samples") / "research" / "docs"))


def test_readme_question_offline_on_the_bundled_corpus(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, provider="offline")
    knowledge = KnowledgeBase.for_workspace(settings, "research")
    knowledge.index_files([CORPUS], "manual")
    store = SqlNoteStore.from_settings(settings)
    agent = DeepResearchAgent(settings, tools=[open_internal(settings)], store=store)

    result = agent.research(README_QUESTION)

    assert result.offline and result.needs_research and result.notes
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", result.report_md)}
    assert cited and cited <= set(range(1, len(result.sources) + 1))
    documents = {result.sources[n - 1].document for n in cited}
    assert "accounting_regulations.md" in documents or any(
        d and d.startswith("notice_") for d in documents
    )
    # the notes are in the database: another store over the same workspace sees them
    again = SqlNoteStore.from_settings(settings)
    kept = again.notes(result.session_id)
    assert [note.query for note in kept] == [note.query for note in result.notes]
    assert all(note.sources for note in kept if note.summary_md)
    assert again.delete_session(result.session_id) == len(kept)
    assert again.notes(result.session_id) == []
