"""The research graph (seed 004 §2–3, §6, §8): plan → rounds of queries → gap check → report.

::

    START → plan ─(no research needed)→ decline → END
              └──→ research_round → gap_check ─(new queries, cycles left)→ research_round
                                                └─(done)→ write_report → END

* ``research_round`` runs the round's queries concurrently (``asyncio.gather(...,
  return_exceptions=True)``, at most ``research_concurrency`` at once); one step is
  search (every source, each under ``asyncio.wait_for``) → summarise (under
  ``asyncio.wait_for``) → save the note. A step that finds nothing, times out or whose
  model call fails is skipped and said in the report's limitations; a failing source
  is reported and the others continue.
* ``gap_check`` asks the reasoner what is missing and adds its queries, bounded by
  ``max_cycles`` rounds and never beyond the planner's budget of ``MAX_QUERIES``.
* ``write_report``: when no step found anything the writer declines instead of inventing;
  otherwise the reasoner writes, every ``[n]`` is checked against the notes' sources
  (unknown ones are removed and reported), and 調査の限界 / 出典 are appended.

Events (``source="research"``): ``plan``, ``query_started``, ``hits``,
``partial_summary``, ``note_saved``, ``gap_check``, ``report_chunk``, ``done``, ``error``
(``docs/research.md`` lists their payloads). A step's summary is emitted as the note
store kept it (``partial_summary`` after the save, personal data replaced), and
``note_saved`` / ``done`` carry ``pii_redacted``: how many of each kind of personal
data (``pii.KINDS``) the store replaced in the note / the run.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from keiri_agent.agents.helpdesk.claims import UNSUPPORTED_MARK, check_claims
from keiri_agent.agents.research.citations import (
    keep_cited,
    limitations_section,
    number_sources,
    numbered_summaries,
    sources_section,
    verify_citations,
)
from keiri_agent.agents.research.models import (
    DocSnippet,
    NoteStore,
    ResearchNote,
    SearchTool,
)
from keiri_agent.agents.research.offline_reasoner import as_passage
from keiri_agent.agents.research.reasoner import MAX_QUERIES, ResearchReasoner
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import EventEmitter
from keiri_agent.pii import PiiKind, add_counts
from keiri_agent.storage.errors import STORE_ERRORS

logger = logging.getLogger("keiri_agent.research")

NO_RESEARCH_NEEDED = "詳細調査は不要です"
DECLINED_REPORT = (
    "## 結論\n\n調べた範囲では、この質問の根拠になる資料が見つかりませんでした。"
    "資料に基づかない内容を書かないため、レポートは作成していません。\n\n"
    "質問の言い回しを変える（制度名や文書名など具体的な語を入れる）か、"
    "検索対象のナレッジベースを確認してから、もう一度お試しください。"
)
PLAN_FAILED = (
    "## 結論\n\n言語モデルでエラーが起きたため、調査を計画できませんでした。"
    "時間をおいて再実行するか、LLM の接続設定（API キー・接続先・モデル名）を確認してください。"
)
REPORT_FAILED = (
    "## 結論\n\nレポートの作成中に言語モデルでエラーが起きたため、各調査の要約をそのまま示します。"
)


@dataclass(frozen=True)
class GraphLimits:
    """The bounds of one run (from the ``research_*`` settings)."""

    max_cycles: int = 3
    search_timeout_s: float = 30.0
    summary_timeout_s: float = 120.0
    concurrency: int = 3
    top: int = 5


class ResearchState(TypedDict, total=False):
    question: str
    needs_research: bool
    reason: str
    plan_failed: bool
    queries: list[str]
    """Every query planned so far (the plan's, then the gap checks'), in order."""
    pending: list[str]
    """The queries of the next round."""
    cycle: int
    notes: list[ResearchNote]
    limitations: list[str]
    missing: list[str]
    report_md: str
    sources: list[DocSnippet]


@dataclass
class _Step:
    query: str
    step_no: int
    hits: list[DocSnippet] = field(default_factory=list)
    note: ResearchNote | None = None


def describe_failure(exc: BaseException) -> str:
    """A Japanese clause for a failed step (the technical text goes to the log)."""
    if isinstance(exc, TimeoutError):
        return "制限時間内に終わりませんでした"
    if isinstance(exc, KeiriAgentError):
        return f"エラーになりました（{exc.code}）"
    return f"予期しないエラーになりました（{type(exc).__name__}）"


def source_failure(name: str, query: str, exc: BaseException) -> str:
    """The limitation for a source that failed: its own Japanese message and hint when it
    raised a ``KeiriAgentError`` (the ``SearchTool`` contract)."""
    if isinstance(exc, KeiriAgentError) and not isinstance(exc, TimeoutError):
        hint = f"（{exc.hint}）" if exc.hint else ""
        return f"検索元「{name}」で「{query}」を検索できませんでした: {exc.message}{hint}"
    return f"検索元「{name}」での「{query}」の検索が{describe_failure(exc)}。"


def report_chunks(report_md: str) -> list[str]:
    """The report in chunks of whole paragraphs (each ends with its blank line)."""
    parts = re.split(r"(?<=\n\n)", report_md)
    return [part for part in parts if part]


class ResearchRun:
    """One research run: the graph's nodes over one reasoner, sources, store and emitter."""

    def __init__(
        self,
        *,
        reasoner: ResearchReasoner,
        tools: Sequence[SearchTool],
        store: NoteStore,
        emitter: EventEmitter,
        session_id: str,
        limits: GraphLimits,
    ) -> None:
        self.reasoner = reasoner
        self.tools = list(tools)
        self.store = store
        self.emitter = emitter
        self.session_id = session_id
        self.limits = limits
        self._semaphore = asyncio.Semaphore(limits.concurrency)
        earlier = store.notes(session_id)
        self._next_step = max((note.step_no for note in earlier), default=0) + 1
        self._earlier = {_query_key(note.query): note for note in earlier if note.summary_md}
        """The session's notes by query: a query asked again in the session reuses its note
        (no new search or summary) — seed §7, notes kept for reuse."""
        self.pii_redacted: dict[PiiKind, int] = {}
        """Personal data the note store replaced in this run's new notes (kind → count)."""

    def build(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        graph = StateGraph(ResearchState)
        graph.add_node("plan", self.plan)
        graph.add_node("decline", self.decline)
        graph.add_node("research_round", self.research_round)
        graph.add_node("gap_check", self.gap_check)
        graph.add_node("write_report", self.write_report)
        graph.add_edge(START, "plan")
        graph.add_conditional_edges(
            "plan",
            lambda state: "research_round" if state.get("pending") else "decline",
            ["research_round", "decline"],
        )
        graph.add_edge("decline", END)
        graph.add_edge("research_round", "gap_check")
        graph.add_conditional_edges(
            "gap_check",
            lambda state: "research_round" if state.get("pending") else "write_report",
            ["research_round", "write_report"],
        )
        graph.add_edge("write_report", END)
        return graph.compile()

    # ------------------------------------------------------------------ nodes
    async def plan(self, state: ResearchState) -> dict[str, Any]:
        question = state["question"]
        try:
            plan = await self.reasoner.plan(question)
        except Exception as exc:  # a model fault fails the run's answer, not the process
            logger.warning("plan failed: %r", exc)
            self.emitter.emit("error", {"step": "plan", **_error(exc)})
            return {
                "needs_research": False,
                "reason": "",
                "plan_failed": True,
                "queries": [],
                "pending": [],
                "limitations": [f"調査の計画が{describe_failure(exc)}。"],
            }
        queries = list(dict.fromkeys(q.strip() for q in plan.queries if q.strip()))
        queries = queries[:MAX_QUERIES] if plan.needs_research else []
        self.emitter.emit(
            "plan",
            {
                "needs_research": bool(queries),
                "reason": plan.reason,
                "queries": queries,
                "offline": self.reasoner.offline,
            },
        )
        return {
            "needs_research": bool(queries),
            "reason": plan.reason,
            "queries": queries,
            "pending": queries,
            "cycle": 0,
            "notes": [],
            "limitations": [],
            "missing": [],
        }

    async def decline(self, state: ResearchState) -> dict[str, Any]:
        if state.get("plan_failed"):
            report = PLAN_FAILED + "\n\n" + limitations_section(state.get("limitations") or [])
            return {"report_md": report + "\n", "sources": []}
        reason = state.get("reason") or "質問文だけで答えられると判断しました。"
        return {"report_md": f"## 結論\n\n{NO_RESEARCH_NEEDED}。{reason}", "sources": []}

    async def research_round(self, state: ResearchState) -> dict[str, Any]:
        steps = []
        reused: list[ResearchNote] = []
        for query in state.get("pending") or []:
            earlier = self._earlier.get(_query_key(query))
            if earlier is not None:
                reused.append(earlier)
                self.emitter.emit(
                    "note_saved",
                    {"step_no": earlier.step_no, "query": query, "note_id": earlier.id,
                     "reused": True, "pii_redacted": {}},
                )  # fmt: skip
                continue
            steps.append(_Step(query, self._next_step))
            self._next_step += 1
        limitations: list[str] = []
        outcomes = await asyncio.gather(
            *(self._run_step(state["question"], step, limitations) for step in steps),
            return_exceptions=True,
        )
        notes = [*(state.get("notes") or []), *reused]
        for step, outcome in zip(steps, outcomes, strict=True):
            if isinstance(outcome, STORE_ERRORS):
                raise outcome  # its note could not be saved, nor could any other
            if isinstance(outcome, BaseException):
                logger.warning("research step %r failed: %r", step.query, outcome)
                limitations.append(f"「{step.query}」の調査が{describe_failure(outcome)}。")
                self.emitter.emit(
                    "error", {"step_no": step.step_no, "query": step.query, **_error(outcome)}
                )
            elif step.note is not None:
                notes.append(step.note)
        return {
            "notes": notes,
            "pending": [],
            "cycle": (state.get("cycle") or 0) + 1,
            "limitations": [*(state.get("limitations") or []), *limitations],
        }

    async def gap_check(self, state: ResearchState) -> dict[str, Any]:
        queries = list(state.get("queries") or [])
        cycle = state.get("cycle") or 0
        budget = MAX_QUERIES - len(queries)
        notes = state.get("notes") or []
        if cycle >= self.limits.max_cycles or budget <= 0 or not notes:
            self.emitter.emit(
                "gap_check", {"cycle": cycle, "missing": "", "queries": [], "checked": False}
            )
            return {"pending": []}
        steps = numbered_summaries(notes, number_sources(notes))
        try:
            gaps = await self.reasoner.check_gaps(state["question"], steps, budget)
        except Exception as exc:  # a model fault ends the loop, not the run
            logger.warning("gap check failed: %r", exc)
            self.emitter.emit("error", {"step": "gap_check", **_error(exc)})
            return {
                "pending": [],
                "limitations": [
                    *(state.get("limitations") or []),
                    f"不足している情報の確認が{describe_failure(exc)}。",
                ],
            }
        new = [q for q in dict.fromkeys(q.strip() for q in gaps.queries) if q and q not in queries]
        new = new[:budget]
        self.emitter.emit(
            "gap_check",
            {"cycle": cycle, "missing": gaps.missing, "queries": new, "checked": True},
        )
        missing = list(state.get("missing") or [])
        if gaps.missing and not new:
            missing.append(gaps.missing)
        return {"pending": new, "queries": [*queries, *new], "missing": missing}

    async def write_report(self, state: ResearchState) -> dict[str, Any]:
        notes = state.get("notes") or []
        limitations = list(state.get("limitations") or [])
        sources = number_sources(notes)
        if not notes:
            body = DECLINED_REPORT
        else:
            steps = numbered_summaries(notes, sources)
            missing = [*(state.get("missing") or []), *limitations]
            try:
                body = await self.reasoner.write_report(state["question"], steps, sources, missing)
            except Exception as exc:  # a model fault: the summaries stand in for the report
                logger.warning("write_report failed: %r", exc)
                self.emitter.emit("error", {"step": "write_report", **_error(exc)})
                limitations.append(f"レポートの作成が{describe_failure(exc)}。")
                body = REPORT_FAILED + "".join(
                    f"\n\n## {step.query}\n\n{step.summary_md}" for step in steps
                )
            body, unknown = verify_citations(body, len(sources))
            if unknown:
                listed = "、".join(str(n) for n in unknown)
                limitations.append(
                    f"本文の引用番号 {listed} は調査で見つかった資料にないため削除しました。"
                )
            if not self.reasoner.offline:  # the offline report quotes supported passages
                body = self._check_claims(body, sources, limitations)
            body, sources = keep_cited(body, sources)
        for gap in state.get("missing") or []:
            limitations.append(f"調べきれなかった点: {gap}")
        for tool in self.tools:  # a source searched by keywords although vectors are on
            limitations += getattr(tool, "retrieval_warnings", list)()
        sections = [body.strip(), limitations_section(limitations)]
        if sources:
            sections.append(sources_section(sources))
        report = "\n\n".join(part for part in sections if part) + "\n"
        return {"report_md": report, "sources": sources, "limitations": limitations}

    @staticmethod
    def _check_claims(body: str, sources: Sequence[DocSnippet], limitations: list[str]) -> str:
        """The model's report with every cited sentence checked against its sources (the
        HelpDesk's ``claims.check_claims``): one they do not say is marked and cites
        nothing, and the limitations say how many were."""
        checked = check_claims(
            body, {number: [as_passage(s)] for number, s in enumerate(sources, start=1)}
        )
        if checked.unsupported:
            limitations.append(
                f"引用した資料で確認できなかった記述 {len(checked.unsupported)} 件には"
                f"「{UNSUPPORTED_MARK}」と記し、引用番号を外しました。"
            )
        return checked.text

    # ------------------------------------------------------------------ one step
    async def _run_step(self, question: str, step: _Step, limitations: list[str]) -> None:
        async with self._semaphore:
            self.emitter.emit("query_started", {"step_no": step.step_no, "query": step.query})
            step.hits = await self._search(step, limitations)
            self.emitter.emit(
                "hits",
                {
                    "step_no": step.step_no,
                    "query": step.query,
                    "count": len(step.hits),
                    "sources": [hit.label() for hit in step.hits],
                },
            )
            if not step.hits:
                limitations.append(
                    f"「{step.query}」では該当する資料が見つからなかったため、省きました。"
                )
                self._skipped(step, "no_hits")
                return
            summary = await asyncio.wait_for(
                self.reasoner.summarize(question, step.query, step.hits),
                timeout=self.limits.summary_timeout_s,
            )
            if not summary.strip():
                limitations.append(
                    f"「{step.query}」の資料には質問に関係する記述がなかったため、省きました。"
                )
                self._skipped(step, "no_summary")
                return
            note = self.store.add(
                ResearchNote(
                    session_id=self.session_id,
                    step_no=step.step_no,
                    query=step.query,
                    summary_md=summary,
                    sources=tuple(step.hits),
                )
            )
            step.note = note
            self.pii_redacted = add_counts(self.pii_redacted, note.pii_redacted)
            # the summary as stored: personal data replaced (events are kept too)
            self.emitter.emit(
                "partial_summary",
                {"step_no": step.step_no, "query": step.query, "summary_md": note.summary_md},
            )
            self.emitter.emit(
                "note_saved",
                {"step_no": step.step_no, "query": step.query, "note_id": note.id,
                 "pii_redacted": dict(note.pii_redacted)},
            )  # fmt: skip

    def _skipped(self, step: _Step, reason: str) -> None:
        """Close a step that ends without a note, so every progress view can close it.

        ``reason``: ``no_hits`` (nothing found) or ``no_summary`` (hits, but nothing
        in them relevant to the question).
        """
        self.emitter.emit(
            "step_skipped",
            {"step_no": step.step_no, "query": step.query, "count": len(step.hits),
             "reason": reason},
        )  # fmt: skip

    async def _search(self, step: _Step, limitations: list[str]) -> list[DocSnippet]:
        """Every source's hits for the step's query (a failing source is reported and skipped)."""
        results = await asyncio.gather(
            *(
                asyncio.wait_for(
                    asyncio.to_thread(tool.search, step.query, top=self.limits.top),
                    timeout=self.limits.search_timeout_s,
                )
                for tool in self.tools
            ),
            return_exceptions=True,
        )
        hits: dict[str, DocSnippet] = {}
        for tool, result in zip(self.tools, results, strict=True):
            if isinstance(result, BaseException):
                logger.warning("source %s failed for %r: %r", tool.name, step.query, result)
                limitations.append(source_failure(tool.name, step.query, result))
                self.emitter.emit(
                    "error",
                    {
                        "step_no": step.step_no,
                        "query": step.query,
                        "source": tool.name,
                        **_error(result),
                    },
                )
                continue
            for hit in result:
                hits.setdefault(hit.ref, hit)
        return list(hits.values())


def _query_key(query: str) -> str:
    """Queries compare after NFKC, case folding and whitespace collapsing."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def _error(exc: BaseException) -> dict[str, Any]:
    """An error event's payload: a Japanese message, the error's code and type."""
    return {
        "message": describe_failure(exc),
        "code": exc.code if isinstance(exc, KeiriAgentError) else None,
        "error_type": type(exc).__name__,
    }
