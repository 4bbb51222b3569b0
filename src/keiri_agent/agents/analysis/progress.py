"""What one graph step of a turn tells a watcher: a small JSON-safe ``Event`` payload.

``AnalysisAgent.ask(..., on_event=...)`` emits one ``keiri_agent.events.Event`` per
graph step: ``source="analysis"``, ``kind`` the node (``reason``, ``act``,
``out_of_scope``, ``report``), ``run_id`` the turn (``TurnResult.turn_id``: a thread
has many turns and each numbers its events from 1, so the thread id could repeat a
number). Payloads (never DataFrames, messages or figures)::

    every step:   {"thread_id": str, "logs": [str, ...]}
    reason:       + {"step": int, "next_action": "ask" | "act" | "out_of_scope" | "finalize",
                     "rationale": str, "questions": [str, ...]}
    act:          + {"actions": [{"spec_type": "analysis" | "plot" | None,
                                  "name": op or kind, "ok": bool, "artifact_ids": [str, ...],
                                  "titles": [str, ...],  # each artifact's title, same order
                                  "error": {"code": str, "message": str}}]}  # error if failed
    report:       + {"report_chars": int}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def step_payload(node: str, update: Mapping[str, Any], thread_id: str) -> dict[str, Any]:
    """The payload of the event for ``node``'s state ``update`` (see the module docstring)."""
    payload: dict[str, Any] = {
        "thread_id": thread_id,
        "logs": [str(line) for line in update.get("logs") or []],
    }
    if node == "reason":
        payload["step"] = int(update.get("step_count") or 0)
        payload["next_action"] = str(update.get("next_action") or "")
        payload["rationale"] = str(update.get("rationale") or "")
        payload["questions"] = [str(q) for q in update.get("clarifying_questions") or []]
    elif node == "act":
        titles = {a.get("artifact_id"): a.get("title") for a in update.get("artifacts") or []}
        payload["actions"] = [_action(item, titles) for item in update.get("action_history") or []]
    elif node == "report":
        payload["report_chars"] = len(update.get("final_report_md") or "")
    return payload


def _action(item: Mapping[str, Any], titles: Mapping[Any, Any]) -> dict[str, Any]:
    spec = item.get("spec") or {}
    name = spec.get("op") or spec.get("kind")
    summary: dict[str, Any] = {
        "spec_type": str(spec["type"]) if spec.get("type") else None,
        "name": str(name) if name else None,
        "ok": bool(item.get("ok")),
        "artifact_ids": [str(i) for i in item.get("artifact_ids") or []],
        "titles": [str(titles.get(i) or i) for i in item.get("artifact_ids") or []],
    }
    error = item.get("error")
    if error:
        summary["error"] = {
            "code": str(error.get("code") or ""),
            "message": str(error.get("message") or ""),
        }
    return summary
