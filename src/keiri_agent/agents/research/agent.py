"""``DeepResearchAgent``: a research question → notes → a cited Markdown report (seed 004).

The agent picks its reasoner when it is built — :class:`LLMResearchReasoner` over the
chat model of ``keiri_agent.llm.chat_model(settings)`` (or an injected one), or, with
provider ``offline`` and no injected model, :class:`OfflineResearchReasoner` — and runs
the graph of ``graph.py`` over its search sources and note store.

Three ways to run it:

* ``events(question, session_id=...)`` — the core's typed :class:`~keiri_agent.events.Event`
  values as they happen (``source="research"``), ending with ``done``;
* ``run(question)`` — the seed's signature: Japanese progress lines, then the report's
  Markdown in chunks;
* ``research(question, ...)`` (sync) / ``aresearch`` (async) — the :class:`ResearchResult`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel

from keiri_agent.agents.research.graph import (
    GraphLimits,
    ResearchRun,
    report_chunks,
)
from keiri_agent.agents.research.llm_reasoner import LLMResearchReasoner
from keiri_agent.agents.research.models import NoteStore, ResearchResult, SearchTool
from keiri_agent.agents.research.notes import checked_session_id
from keiri_agent.agents.research.offline_reasoner import OfflineResearchReasoner
from keiri_agent.agents.research.prompts import ResearchPrompts
from keiri_agent.agents.research.reasoner import ResearchReasoner
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, UserInputError
from keiri_agent.events import Event, EventCallback, EventEmitter
from keiri_agent.llm.factory import chat_model as make_chat_model
from keiri_agent.pii import describe_counts
from keiri_agent.search.similarity import meaning_check


def new_session_id() -> str:
    return f"research_{uuid.uuid4().hex[:12]}"


class DeepResearchAgent:
    """Plan → concurrent search/summarise/note steps → gap check → cited report.

    Args:
        settings: Provider and model, structured output, and the ``research_*`` bounds.
        tools: The search sources (internal knowledge bases, Azure AI Search, web).
        store: Where the notes are kept (``research_notes``).
        chat_model: A chat model to use instead of the configured one (tests).
        prompts: Prompt texts (default ``ResearchPrompts()``).

    Raises:
        ConfigurationError: No search source, or an incompletely configured provider.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        tools: Sequence[SearchTool],
        store: NoteStore,
        chat_model: BaseChatModel | None = None,
        prompts: ResearchPrompts | None = None,
    ) -> None:
        if not tools:
            raise ConfigurationError(
                "調査に使う検索元がありません",
                hint="ナレッジベースを指定する（--kb）か、Azure AI Search の設定を確認してください",
            )
        self.settings = settings
        self.tools = list(tools)
        self.store = store
        if chat_model is None and not settings.llm.is_offline:
            chat_model = make_chat_model(settings)
        self.reasoner: ResearchReasoner = (
            OfflineResearchReasoner(
                summary_chars=settings.research.research_summary_tokens,
                similarity=meaning_check(settings),
            )
            if chat_model is None
            else LLMResearchReasoner(settings, chat_model, prompts)
        )
        self.offline = self.reasoner.offline
        self.limits = GraphLimits(
            max_cycles=settings.research.research_max_cycles,
            search_timeout_s=settings.research.research_search_timeout_s,
            summary_timeout_s=settings.research.research_summary_timeout_s,
            concurrency=settings.research.research_concurrency,
        )

    async def aresearch(
        self,
        question: str,
        *,
        session_id: str | None = None,
        on_event: EventCallback | None = None,
        run_id: str | None = None,
    ) -> ResearchResult:
        """Research ``question``; ``on_event`` receives every event (in the event loop).

        ``run_id`` names the run in its events (default a new ``run_<hex>``): the API
        chooses it before the run starts so a client can follow it at once.

        Raises:
            UserInputError: The question is empty, or the session id cannot be one
                (``notes.checked_session_id``).
        """
        question = (question or "").strip()
        if not question:
            raise UserInputError("質問が空です", hint="調べたい内容を文章で入力してください")
        session_id = checked_session_id(session_id) or new_session_id()
        run_id = run_id or new_run_id()
        emitter = EventEmitter("research", run_id, on_event)
        run = ResearchRun(
            reasoner=self.reasoner,
            tools=self.tools,
            store=self.store,
            emitter=emitter,
            session_id=session_id,
            limits=self.limits,
        )
        state: dict[str, Any] = await run.build().ainvoke({"question": question})
        report = state.get("report_md") or ""
        for chunk in report_chunks(report):
            emitter.emit("report_chunk", {"text": chunk})
        result = ResearchResult(
            session_id=session_id,
            run_id=run_id,
            question=question,
            report_md=report,
            queries=list(state.get("queries") or []),
            notes=list(state.get("notes") or []),
            sources=list(state.get("sources") or []),
            limitations=list(state.get("limitations") or []),
            offline=self.offline,
            needs_research=bool(state.get("needs_research")),
        )
        emitter.emit(
            "done",
            {
                "session_id": session_id,
                "needs_research": result.needs_research,
                "queries": result.queries,
                "note_count": len(result.notes),
                "sources": [source.to_dict() for source in result.sources],
                "limitations": result.limitations,
                "offline": result.offline,
                "pii_redacted": dict(run.pii_redacted),
            },
        )
        return result

    async def events(self, question: str, *, session_id: str | None = None) -> AsyncIterator[Event]:
        """The run's events as they happen, ending with ``done`` (or raising the run's error)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.create_task(
            self.aresearch(question, session_id=session_id, on_event=queue.put_nowait)
        )
        task.add_done_callback(lambda _task: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task  # re-raises the run's error, if any
        finally:
            if not task.done():
                task.cancel()

    async def run(self, question: str) -> AsyncIterator[str]:
        """The seed's interface: progress lines (each ending in a newline), then the report."""
        async for event in self.events(question):
            if event.kind == "report_chunk":
                yield str(event.payload["text"])
            elif event.kind != "done" and (line := progress_line(event)) is not None:
                yield line + "\n"

    def research(
        self,
        question: str,
        *,
        session_id: str | None = None,
        on_event: EventCallback | None = None,
        run_id: str | None = None,
    ) -> ResearchResult:
        """``aresearch`` for synchronous callers (CLI, Streamlit, the API's worker
        threads): runs its own event loop."""
        return asyncio.run(
            self.aresearch(question, session_id=session_id, on_event=on_event, run_id=run_id)
        )


def new_run_id() -> str:
    """A new research run id: ``run_`` and 12 hex digits."""
    return f"run_{uuid.uuid4().hex[:12]}"


def progress_line(event: Event) -> str | None:
    """A Japanese progress line for an event (``None`` for ``report_chunk``); ``done``
    gives the total of the queries searched (the plan's and the gap checks' added ones)."""
    payload = event.payload
    step = f"[{payload.get('step_no')}] " if payload.get("step_no") is not None else ""
    if event.kind == "plan":
        if not payload.get("needs_research"):
            return "計画: 詳細調査は行いません"
        queries = " / ".join(payload.get("queries") or [])
        label = "（オフライン）" if payload.get("offline") else ""
        return f"計画{label}: クエリ {len(payload.get('queries') or [])} 件 — {queries}"
    if event.kind == "query_started":
        return f"{step}検索中: {payload['query']}"
    if event.kind == "hits":
        return f"{step}{payload['count']} 件見つかりました: {payload['query']}"
    if event.kind == "partial_summary":
        return f"{step}要約しました: {payload['query']}"
    if event.kind == "note_saved":
        return _saved_line(step, payload)
    if event.kind == "step_skipped":
        if payload.get("reason") == "no_hits":
            return f"{step}資料が見つからなかったため、省きました: {payload.get('query')}"
        return (
            f"{step}資料に質問に関係する記述がなかったため、要約せずに省きました: "
            f"{payload.get('query')}"
        )
    if event.kind == "gap_check":
        added = payload.get("queries") or []
        if added:
            return (
                f"不足の確認: {payload.get('missing') or ''} → "
                f"追加クエリ {len(added)} 件 — {' / '.join(added)}"
            )
        return "不足の確認: 追加の調査はありません"
    if event.kind == "done":
        if not payload.get("needs_research"):
            return None
        total = len(payload.get("queries") or [])
        return f"完了: 調べたクエリ 計 {total} 件、ノート {payload.get('note_count', 0)} 件"
    if event.kind == "error":
        return f"{step}エラー: {payload.get('message')}"
    return None


def _saved_line(step: str, payload: Mapping[str, Any]) -> str:
    """The progress line of ``note_saved``: reused, or saved (with the personal data the
    note store replaced, ``pii_redacted``)."""
    if payload.get("reused"):
        return f"{step}このセッションのノートを再利用しました: {payload.get('query')}"
    redacted = describe_counts(payload.get("pii_redacted") or {})
    if redacted:
        return f"{step}ノートを保存しました（個人情報を伏せ字にしました: {redacted}）"
    return f"{step}ノートを保存しました"
