"""``AnalysisAgent``: the Python API of the data-analysis agent, used by every surface.

    from keiri_agent.agents.analysis import AnalysisAgent
    from keiri_agent.config import load_settings

    with AnalysisAgent(load_settings()) as agent:      # settings from env / .env
        dataset_id = agent.load_file("sales.csv")
        turn = agent.ask("地域別の売上の合計と平均を見せて", dataset_id=dataset_id)
        print(turn.report_md or turn.reply)

Each ``ask`` is one ``graph.invoke`` (one user turn). Pass the same ``thread_id``
to continue a conversation, also from a new process: the checkpointer (SQLite
under the workspace, or PostgreSQL) keeps it.

A thread may change files between turns. Every action records the file it ran on
(``run_log["dataset"]``, the file name); the turn where the file changes starts with
a note (「データが A から B に変わりました」, also in ``TurnResult.notice``) and the
report groups its evidence and 再現要約 by file.

``past_turns(thread_id)`` reads a thread back turn by turn (a page restoring a
conversation after a reload): each request, the agent's messages and the artifacts
(tables, charts) the turn made, from the checkpointer; an artifact the checkpoint no
longer holds is counted in ``PastTurn.missing``. ``recent_threads()`` lists the threads
the checkpointer holds, the most recently used first (title: the first request).
"""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
from keiri_agent.agents.analysis.datasets.registry import DatasetRegistry
from keiri_agent.agents.analysis.graph import AnalysisGraphParts, build_graph
from keiri_agent.agents.analysis.messages import agent_message, message_kind
from keiri_agent.agents.analysis.progress import step_payload
from keiri_agent.agents.analysis.reasoning.llm_reasoner import LLMReasoner
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner
from keiri_agent.agents.analysis.report import (
    ReportWriter,
    evidence_actions,
    evidence_artifacts,
)
from keiri_agent.agents.analysis.runtime.actions import AnalysisActions
from keiri_agent.config import Settings
from keiri_agent.events import EventCallback, EventEmitter
from keiri_agent.llm.factory import chat_model as make_chat_model
from keiri_agent.storage.checkpointer import open_checkpointer

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


@dataclass(frozen=True)
class TurnResult:
    """What one user turn produced."""

    thread_id: str
    turn_id: str
    """This turn's id: the ``run_id`` of the events ``ask`` emitted for it."""
    next_action: str
    reply: str
    """The agent's last message of the turn (question, refusal or report)."""
    artifacts: list[Artifact] = field(default_factory=list)
    """Artifacts made in this turn, in order."""
    report_md: str | None = None
    report_artifacts: list[Artifact] = field(default_factory=list)
    """The artifacts the report cites (figures to write next to ``report.md``)."""
    questions: list[str] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    """The specs run in this turn: ``{"spec", "ok", "error"?, "run_log"?}``."""
    last_error: str | None = None
    offline: bool = False
    notice: str | None = None
    """Set when this turn's file differs from the thread's previous one (also in ``reply``)."""


def dataset_switch_notice(previous: str | None, current: str | None) -> str | None:
    """The note for a thread whose file changed (by name), or None."""
    if not previous or not current or previous == current:
        return None
    return (
        f"データが {previous} から {current} に変わりました。"
        f"会話は続けますが、これからの分析は {current} に対して行います"
        "（レポートではファイルごとに分けて示します）。"
    )


@dataclass(frozen=True)
class ThreadSummary:
    """One conversation in the checkpointer."""

    thread_id: str
    title: str
    """The first request of the conversation."""
    dataset_name: str | None
    updated_at: datetime
    """When the conversation last changed (timezone-aware)."""


@dataclass(frozen=True)
class PastTurn:
    """One turn of a conversation read back from the checkpointer."""

    question: str
    replies: list[tuple[str | None, str]]
    """The agent's messages of the turn: (kind from ``message_kind``, text)."""
    artifacts: list[Artifact] = field(default_factory=list)
    """The tables, charts and texts the turn made, in order."""
    missing: int = 0
    """Artifacts the turn made that the checkpoint no longer holds (damaged, deleted)."""
    report_artifacts: list[Artifact] = field(default_factory=list)
    """For a turn that wrote a report: the artifacts it cites (as ``TurnResult``)."""


def past_turns(values: dict[str, Any]) -> list[PastTurn]:
    """A thread's state (checkpoint values) as turns: each request, its replies, its artifacts.

    An action belongs to the turn its ``turn`` ordinal names (actions recorded before
    the ordinal existed belong to no turn and are not drawn).
    """
    artifacts: list[Artifact] = list(values.get("artifacts") or [])
    by_id = {a["artifact_id"]: a for a in artifacts}
    history = [a for a in values.get("action_history") or [] if isinstance(a, dict)]
    turns: list[PastTurn] = []
    for message in values.get("messages") or []:
        if isinstance(message, HumanMessage):
            ordinal = len(turns) + 1
            ids = [
                i for a in history if a.get("turn") == ordinal for i in a.get("artifact_ids") or []
            ]
            found = [by_id[i] for i in ids if i in by_id]
            turns.append(PastTurn(_text(message), [], found, len(ids) - len(found)))
        elif turns:
            turns[-1].replies.append((message_kind(message), _text(message)))
            if message_kind(message) == "report":
                ordinal = len(turns)
                own = [a for a in history if a.get("turn") == ordinal]
                before = [a for a in history if (a.get("turn") or 0) <= ordinal]
                cited = evidence_artifacts(artifacts, evidence_actions(own, before))
                turns[-1].report_artifacts[:] = cited
    return turns


RECENT_THREADS_SCAN = 500
"""Checkpoints read at most to find the recent threads (a backend without SQL)."""


def _recent_thread_ids(saver: BaseCheckpointSaver[Any], limit: int) -> list[str]:
    """The ``limit`` threads with the newest checkpoints, newest first (checkpoint ids
    are time-ordered)."""
    if isinstance(saver, SqliteSaver):
        with saver.cursor(transaction=False) as cur:
            rows = cur.execute(
                "SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
                "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY last DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [str(row[0]) for row in rows]
    found: list[str] = []
    for item in saver.list(None, limit=RECENT_THREADS_SCAN):
        thread_id = str(item.config["configurable"]["thread_id"])
        if thread_id not in found:
            found.append(thread_id)
        if len(found) >= limit:
            break
    return found


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


class _DatasetActions(AnalysisActions):
    """``AnalysisActions`` that record the file each action ran on in its ``run_log``."""

    def execute(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        result = super().execute(spec, dataset_id)
        chosen = dataset_id or spec.get("dataset_id")
        if not chosen or chosen not in self.registry:
            return result
        name = self.registry.summary(str(chosen))["name"]
        return ActionResult(result.artifacts, {**result.run_log, "dataset": name})


class AnalysisAgent:
    """The data-analysis agent: a dataset registry, a reasoner and a checkpointed graph."""

    def __init__(
        self,
        settings: Settings,
        *,
        registry: DatasetRegistry | None = None,
        chat_model: BaseChatModel | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry or DatasetRegistry(max_bytes=settings.inputs.max_upload_mb * 2**20)
        if chat_model is None and not self.settings.llm.is_offline:
            chat_model = make_chat_model(self.settings)
        self.chat_model = chat_model
        self.offline = chat_model is None
        method = self.settings.llm.structured_output_method
        reasks = self.settings.llm.structured_output_reasks
        self.actions: AnalysisActions = _DatasetActions(self.registry, self.settings)
        parts = AnalysisGraphParts(
            reasoner=OfflineReasoner()
            if chat_model is None
            else LLMReasoner(chat_model, method=method, reasks=reasks),
            actions=self.actions,
            report_writer=ReportWriter(chat_model, method=method, reasks=reasks),
            max_steps_per_turn=self.settings.analysis.max_steps_per_turn,
        )
        self._resources = ExitStack()
        self._resources.callback(self.actions.close)
        if checkpointer is None:
            checkpointer = self._resources.enter_context(open_checkpointer(self.settings))
        self.graph = build_graph(parts).compile(checkpointer=checkpointer)

    # --- datasets -----------------------------------------------------------
    def load_file(
        self, path: str | Path, *, sheet: str | int | None = None, keep_total_rows: bool = False
    ) -> str:
        """Register a CSV/TSV/XLSX file; returns its ``dataset_id``."""
        return self.registry.load_path(path, sheet=sheet, keep_total_rows=keep_total_rows)

    def load_bytes(
        self,
        data: bytes,
        name: str,
        *,
        sheet: str | int | None = None,
        keep_total_rows: bool = False,
    ) -> str:
        """Register uploaded bytes (the file name tells the format)."""
        return self.registry.load_bytes(data, name, sheet=sheet, keep_total_rows=keep_total_rows)

    # --- conversation -------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        dataset_id: str | None,
        thread_id: str | None = None,
        on_event: EventCallback | None = None,
    ) -> TurnResult:
        """Run one user turn.

        ``on_event`` receives an ``Event`` after each graph step (``kind`` the node,
        ``run_id`` this turn's ``turn_id``, payload in ``agents.analysis.progress``).
        """
        thread_id = thread_id or uuid.uuid4().hex
        turn_id = "turn_" + uuid.uuid4().hex[:12]
        emitter = EventEmitter("analysis", turn_id, on_event)
        config: Any = {
            "configurable": {"thread_id": thread_id},
            "recursion_limit": self.settings.analysis.max_steps_per_turn * 3 + 10,
        }
        summary = self.registry.summary(dataset_id) if dataset_id else None
        before = self.graph.get_state(config).values.get("dataset_summary") or {}
        notice = dataset_switch_notice(before.get("name"), (summary or {}).get("name"))
        turn_input: dict[str, Any] = {
            "messages": [
                *([agent_message(notice, "note")] if notice else []),
                HumanMessage(question),
            ],
            "dataset_id": dataset_id,
            "dataset_summary": summary,
            "turn_actions": [],
            "step_count": 0,
            "last_error": None,
            "final_report_md": None,
            "assumptions": [],
            "clarifying_questions": [],
            "analysis_spec": None,
            "plot_spec": None,
        }
        for chunk in self.graph.stream(turn_input, config, stream_mode="updates"):
            if on_event is not None:
                for node, update in chunk.items():
                    emitter.emit(node, step_payload(node, update or {}, thread_id))
        values = self.graph.get_state(config).values
        return self._turn_result(thread_id, turn_id, values, notice)

    def _turn_result(
        self, thread_id: str, turn_id: str, values: dict[str, Any], notice: str | None = None
    ) -> TurnResult:
        actions = list(values.get("turn_actions") or [])
        made = {i for action in actions for i in action.get("artifact_ids", [])}
        artifacts = [a for a in values.get("artifacts") or [] if a["artifact_id"] in made]
        messages = list(values.get("messages") or [])
        last = messages[-1] if messages else None
        reply = str(last.content) if isinstance(last, AIMessage) else ""
        if notice and reply != notice:
            reply = f"{notice}\n\n{reply}" if reply else notice
        next_action = values.get("next_action") or "ask"
        is_report = last is not None and message_kind(last) == "report"
        cited = (
            evidence_artifacts(
                values.get("artifacts") or [],
                evidence_actions(actions, values.get("action_history") or []),
            )
            if is_report
            else []
        )
        return TurnResult(
            thread_id=thread_id,
            turn_id=turn_id,
            next_action=next_action,
            reply=reply,
            artifacts=artifacts,
            report_md=values.get("final_report_md") if is_report else None,
            report_artifacts=cited,
            questions=list(values.get("clarifying_questions") or []),
            actions=actions,
            last_error=values.get("last_error"),
            offline=self.offline,
            notice=notice,
        )

    def run_specs(self, specs: list[dict[str, Any]], dataset_id: str) -> list[ActionResult]:
        """Run specs directly, without the reasoner (reproducing a report's 再現要約)."""
        return [self.actions.execute(spec, dataset_id) for spec in specs]

    # --- history ------------------------------------------------------------
    def past_turns(self, thread_id: str) -> list[PastTurn]:
        """The turns of the thread ``thread_id`` so far ([] for an unknown thread)."""
        config: Any = {"configurable": {"thread_id": thread_id}}
        return past_turns(self.graph.get_state(config).values)

    def recent_threads(self, limit: int = 20) -> list[ThreadSummary]:
        """The conversations in the checkpointer, the most recently used first."""
        saver = self.graph.checkpointer
        if not isinstance(saver, BaseCheckpointSaver):
            return []
        found: list[ThreadSummary] = []
        for thread_id in _recent_thread_ids(saver, limit):
            item = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            if item is None:
                continue
            values = item.checkpoint.get("channel_values") or {}
            messages = values.get("messages") or []
            first = next((m for m in messages if isinstance(m, HumanMessage)), None)
            if first is None:
                continue
            summary = values.get("dataset_summary") or {}
            found.append(
                ThreadSummary(
                    thread_id=thread_id,
                    title=_text(first),
                    dataset_name=summary.get("name"),
                    updated_at=datetime.fromisoformat(item.checkpoint["ts"]),
                )
            )
        return found

    # --- lifecycle ----------------------------------------------------------
    def close(self) -> None:
        """End the action workers and close the checkpointer (if this agent opened it)."""
        self._resources.close()

    def __enter__(self) -> AnalysisAgent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
