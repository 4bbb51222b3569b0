"""What the research-agent tests share: an in-memory note store, sources over fixed
snippets, and a scripted model that answers each research step by its prompt."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from keiri_agent.agents.research.llm_reasoner import GapOutput, PlanOutput
from keiri_agent.agents.research.models import DocSnippet, ResearchNote, SourceKind
from keiri_agent.agents.research.offline_reasoner import key_phrases
from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError
from keiri_agent.llm.testing import ScriptedChatModel, ScriptedReply

SNIPPETS = [
    DocSnippet(
        ref="invoice.pdf#1",
        text="適格請求書には登録番号を記載する必要があります。税率ごとの消費税額も記載します。",
        title="インボイス制度の手引き",
        document="invoice.pdf",
        page=2,
        heading="1 記載事項",
    ),
    DocSnippet(
        ref="notice.pdf#3",
        text="2023年10月から請求書フォーマットを変更しました。端数処理は税率ごとに一回です。",
        title="経理部通知",
        document="notice.pdf",
        page=1,
    ),
    DocSnippet(
        ref="travel.pdf#1",
        text="出張旅費は翌月5日までに精算します。",
        title="旅費規程",
        document="travel.pdf",
        page=4,
    ),
]


class MemoryNoteStore:
    """``NoteStore`` in a list (the real one is ``research_notes``)."""

    def __init__(self) -> None:
        self.items: list[ResearchNote] = []

    def add(self, note: ResearchNote) -> ResearchNote:
        saved = ResearchNote(
            session_id=note.session_id,
            step_no=note.step_no,
            query=note.query,
            summary_md=note.summary_md,
            sources=tuple(note.sources),
            created_at=datetime.now(UTC),
            id=len(self.items) + 1,
        )
        self.items.append(saved)
        return saved

    def notes(self, session_id: str) -> list[ResearchNote]:
        found = [note for note in self.items if note.session_id == session_id]
        return sorted(found, key=lambda note: note.step_no)

    def sessions(self) -> list[tuple[str, int, datetime]]:
        by_session: dict[str, list[ResearchNote]] = {}
        for note in self.items:
            by_session.setdefault(note.session_id, []).append(note)
        rows = [
            (sid, len(notes), max(n.created_at or datetime.now(UTC) for n in notes))
            for sid, notes in by_session.items()
        ]
        return sorted(rows, key=lambda row: row[2], reverse=True)

    def delete_session(self, session_id: str) -> int:
        before = len(self.items)
        self.items = [note for note in self.items if note.session_id != session_id]
        return before - len(self.items)


class FixedSource:
    """A snippet matches when its text contains a word of the query."""

    def __init__(
        self,
        snippets: list[DocSnippet],
        name: str = "社内ナレッジ（テスト）",
        sources: SourceKind = "internal",
        delay_s: float = 0.0,
    ) -> None:
        self.snippets = snippets
        self.name = name
        self.sources: SourceKind = sources
        self.delay_s = delay_s
        self.queries: list[str] = []

    def search(self, query: str, *, top: int = 5) -> list[DocSnippet]:
        self.queries.append(query)
        if self.delay_s:
            time.sleep(self.delay_s)
        # a query in words (the offline planner's sub-questions) matches by its key phrases
        words = [*query.split(), *key_phrases(query)]
        return [s for s in self.snippets if any(word in s.text for word in words)][:top]


class FailingSource:
    name = "Azure AI Search（docs）"
    sources: SourceKind = "internal"

    def search(self, query: str, *, top: int = 5) -> list[DocSnippet]:
        raise KeiriAgentError(
            "Azure AI Search に接続できませんでした（HTTP 503）",
            hint="エンドポイントとキーを確認してください",
        )


def offline_settings(home: Path, **overrides: Any) -> Settings:
    return Settings(provider="offline", home=home, **overrides)


def llm_settings(home: Path, **overrides: Any) -> Settings:
    return Settings(
        provider="openai-compatible",
        openai_api_base="http://127.0.0.1:9/v1",
        model="scripted",
        home=home,
        **overrides,
    )


def system_text(messages: list[BaseMessage]) -> str:
    return str(messages[0].content) if messages else ""


def last_text(messages: list[BaseMessage]) -> str:
    return str(messages[-1].content) if messages else ""


def scripted(
    plan: PlanOutput | dict[str, Any],
    summarize: Callable[[str], ScriptedReply],
    report: str | Callable[[str], str],
    gaps: list[GapOutput | dict[str, Any]] | None = None,
    **kwargs: Any,
) -> ScriptedChatModel:
    """A model that answers by step: the plan, a summary per query, gap checks in order,
    the report. ``summarize`` gets the summariser's user prompt, a callable ``report``
    the writer's."""
    pending_gaps = list(gaps or [])

    def respond(messages: list[BaseMessage], tools: list[str]) -> ScriptedReply:
        system = system_text(messages)
        if "検索クエリを計画" in system:
            return plan
        if "要約" in system:
            return summarize(last_text(messages))
        if "足りない情報" in system:
            return pending_gaps.pop(0) if pending_gaps else GapOutput()
        return report if isinstance(report, str) else report(last_text(messages))

    return ScriptedChatModel(respond=respond, **kwargs)


def query_of(prompt: str) -> str:
    """The query line of a summariser prompt."""
    for line in prompt.splitlines():
        if line.startswith("調査の観点（クエリ）: "):
            return line.split(": ", 1)[1]
    raise AssertionError(f"no query in {prompt!r}")


def first_passage_sentence(prompt: str) -> str:
    """The first sentence of passage ``[1]`` of a summariser prompt, cited: what a model
    that summarises faithfully writes (the claim check keeps it)."""
    listing = prompt.split("\n[1] ", 1)[1].split("\n", 1)[1]
    sentence = re.split(r"(?<=[。．！？])", listing.strip(), maxsplit=1)[0].strip()
    return f"{sentence.rstrip('。')} [1]。"


def cited_summaries(prompt: str, most: int = 2) -> list[str]:
    """The first ``most`` cited summary lines of a writer prompt (its 調査結果 section)."""
    found = prompt.split("調査結果", 1)[1].split("資料一覧", 1)[0]
    return [line.strip() for line in found.splitlines() if re.search(r"\[\d+\]", line)][:most]
