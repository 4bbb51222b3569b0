"""The LangGraph graph of the data-analysis agent, exactly as seed 000 draws it.

    START → reason ─┬─ ask ──────────→ END
                    ├─ act ──────────→ act → reason
                    ├─ out_of_scope ─→ out_of_scope → reason
                    └─ finalize ─────→ report → END

One ``invoke`` per user turn. ``ask`` ends the turn with a question; the user's
answer comes in the next ``invoke`` on the same ``thread_id`` (the checkpointer
keeps the conversation). ``reason`` never runs code: ``act`` runs the spec.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph import END, START, StateGraph

from keiri_agent.agents.analysis.messages import (
    agent_message,
    is_japanese,
    latest_user_text,
    message_kind,
)
from keiri_agent.agents.analysis.reasoning.decision import (
    ActionRecord,
    Decision,
    Reasoner,
    ReasonInput,
)
from keiri_agent.agents.analysis.report import ReportWriter, out_of_scope_reply
from keiri_agent.agents.analysis.runtime.actions import AnalysisActions, as_action_error
from keiri_agent.agents.analysis.state import AgentState


def _previous_specs(state: AgentState) -> list[dict[str, Any]]:
    """The specs that ran without error for the latest earlier request (a follow-up edits them)."""
    turn = sum(isinstance(message, HumanMessage) for message in state.get("messages") or [])
    earlier = [
        action
        for action in state.get("action_history") or []
        if isinstance(action, dict) and action.get("ok") and (action.get("turn") or 0) < turn
    ]
    if not earlier:
        return []
    last = max(action.get("turn") or 0 for action in earlier)
    return [action["spec"] for action in earlier if (action.get("turn") or 0) == last]


def _turn_messages(messages: Any) -> list[BaseMessage]:
    """Messages since (and including) the latest human message."""
    items = list(messages or [])
    for index in range(len(items) - 1, -1, -1):
        if isinstance(items[index], HumanMessage):
            return items[index:]
    return items


def _records(state: AgentState) -> tuple[ActionRecord, ...]:
    return tuple(
        ActionRecord(
            spec=item["spec"],
            ok=item["ok"],
            artifact_ids=tuple(item.get("artifact_ids", ())),
            error=item.get("error"),
        )
        for item in state.get("turn_actions") or []
    )


def _ask_text(decision: Decision) -> str:
    lines = list(decision.clarifying_questions) or [decision.rationale]
    text = "\n".join(f"- {line}" for line in lines) if len(lines) > 1 else lines[0]
    if decision.assumptions:
        label = "仮定案: " if is_japanese(text) else "Assumptions: "
        text += "\n\n" + label + " / ".join(decision.assumptions)
    return text


@dataclass
class AnalysisGraphParts:
    """What the nodes need: a reasoner, the action runner, a report writer, a step cap."""

    reasoner: Reasoner
    actions: AnalysisActions
    report_writer: ReportWriter
    max_steps_per_turn: int = 12


def build_graph(parts: AnalysisGraphParts) -> StateGraph:
    """The uncompiled graph; compile it with a checkpointer (see ``AnalysisAgent``)."""

    def reason(state: AgentState) -> dict[str, Any]:
        steps = (state.get("step_count") or 0) + 1
        turn = _turn_messages(state.get("messages"))
        records = _records(state)
        if steps > parts.max_steps_per_turn:
            done = any(record.ok for record in records)
            note = (
                f"1回の依頼で実行できる上限（{parts.max_steps_per_turn} ステップ）に達したため、"
                "ここで停止しました。"
                + (
                    "ここまでの結果でレポートを作成します。"
                    if done
                    else "依頼を具体的にして再度お試しください。"
                )
            )
            return {
                "step_count": steps,
                "assumptions": [*(state.get("assumptions") or []), note] if done else [],
                "next_action": "finalize" if done else "ask",
                "rationale": note,
                "clarifying_questions": [],
                "messages": [agent_message(note, "ask" if not done else "note")],
                "logs": [f"reason: step cap {parts.max_steps_per_turn} reached"],
            }
        decision = parts.reasoner.decide(
            ReasonInput(
                messages=list(state.get("messages") or []),
                dataset_id=state.get("dataset_id"),
                dataset_summary=state.get("dataset_summary"),
                artifacts=list(state.get("artifacts") or []),
                last_error=state.get("last_error"),
                turn_actions=records,
                previous_specs=_previous_specs(state),
            )
        )
        already_declined = any(message_kind(m) == "out_of_scope" for m in turn)
        update: dict[str, Any] = {
            "step_count": steps,
            "next_action": decision.next_action,
            "rationale": decision.rationale,
            "clarifying_questions": decision.clarifying_questions,
            "assumptions": list(
                dict.fromkeys([*(state.get("assumptions") or []), *decision.assumptions])
            ),
            "analysis_spec": decision.analysis_spec,
            "plot_spec": decision.plot_spec,
            "request": decision.request,
            "logs": [f"reason: {decision.next_action} — {decision.rationale}"],
        }
        if decision.next_action == "out_of_scope" and already_declined:
            # The refusal and its alternatives were already given this turn: wait for the user.
            update["next_action"] = "ask"
        elif decision.next_action == "ask":
            update["messages"] = [agent_message(_ask_text(decision), "ask")]
        return update

    def act(state: AgentState) -> dict[str, Any]:
        dataset_id = state.get("dataset_id")
        specs = [s for s in (state.get("analysis_spec"), state.get("plot_spec")) if s]
        artifacts = list(state.get("artifacts") or [])
        turn_actions = list(state.get("turn_actions") or [])
        done_before = len(turn_actions)
        # the ordinal of this turn's request: a reopened conversation draws each turn's artifacts
        turn = sum(isinstance(message, HumanMessage) for message in state.get("messages") or [])
        logs: list[str] = []
        last_error: str | None = None
        if not specs:
            last_error = json.dumps(
                {
                    "code": "SPEC_ERROR",
                    "message": "実行する集計もグラフも指定されていませんでした",
                    "hint": "集計なら analysis_spec（op）を、グラフなら plot_spec（kind）を"
                    "指定してください",
                },
                ensure_ascii=False,
            )
            logs.append("act: nothing to run")
        for spec in specs:
            try:
                result = parts.actions.execute(spec, dataset_id)
            except Exception as raised:  # KeyboardInterrupt / SystemExit still propagate
                error = as_action_error(raised)
                payload = error.to_dict()
                last_error = json.dumps(payload, ensure_ascii=False, default=str)
                turn_actions.append({"spec": spec, "ok": False, "error": payload, "turn": turn})
                logs.append(f"act: error {error.code}: {error.message}")
                continue
            artifacts.extend(result.artifacts)
            turn_actions.append(
                {
                    "spec": spec,
                    "ok": True,
                    "artifact_ids": [a["artifact_id"] for a in result.artifacts],
                    "run_log": result.run_log,
                    "turn": turn,
                }
            )
            logs.append("act: " + json.dumps(result.run_log, ensure_ascii=False, default=str))
        return {
            "artifacts": artifacts,
            "turn_actions": turn_actions,
            "action_history": turn_actions[done_before:],
            "last_error": last_error,
            "logs": logs,
        }

    def out_of_scope(state: AgentState) -> dict[str, Any]:
        request = latest_user_text(list(state.get("messages") or []))
        text = out_of_scope_reply(
            state.get("rationale") or "",
            state.get("dataset_summary"),
            "ja" if not request or is_japanese(request) else "en",
        )
        return {
            "messages": [agent_message(text, "out_of_scope")],
            "logs": [f"out_of_scope: {state.get('rationale')}"],
        }

    def report(state: AgentState) -> dict[str, Any]:
        markdown = parts.report_writer.write(
            messages=list(state.get("messages") or []),
            artifacts=list(state.get("artifacts") or []),
            assumptions=list(state.get("assumptions") or []),
            turn_actions=list(state.get("turn_actions") or []),
            action_history=list(state.get("action_history") or []),
            request=state.get("request"),
        )
        return {
            "final_report_md": markdown,
            "messages": [agent_message(markdown, "report")],
            "logs": ["report: written"],
        }

    def route(state: AgentState) -> str:
        action = state.get("next_action")
        return {
            "ask": END,
            "act": "act",
            "out_of_scope": "out_of_scope",
            "finalize": "report",
        }.get(action or "ask", END)

    graph = StateGraph(AgentState)
    graph.add_node("reason", reason)
    graph.add_node("act", act)
    graph.add_node("out_of_scope", out_of_scope)
    graph.add_node("report", report)
    graph.add_edge(START, "reason")
    graph.add_conditional_edges(
        "reason",
        route,
        {END: END, "act": "act", "out_of_scope": "out_of_scope", "report": "report"},
    )
    graph.add_edge("act", "reason")
    graph.add_edge("out_of_scope", "reason")
    graph.add_edge("report", END)
    return graph
