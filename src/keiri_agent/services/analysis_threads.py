"""An analysis conversation (thread) read back turn by turn, for a page that reopens
it (after a reload, or from a link) wherever it was asked.

Each turn of a thread is a run of kind ``analysis`` (``runs.analysis_kind``) whose
``subject`` is the thread id and whose ``title`` is the question; its result is the
turn JSON (``analysis_turns.turn_result_json``: the reply, questions, tables as
people read them, figure URLs, the report's URLs) or its error. The thread's file is
the one it was last linked to (``saved_datasets.SavedDatasets.ref_of``).

``thread_json`` is what the API's ``GET /api/analysis/threads/{thread_id}`` answers::

    {"thread_id": str, "dataset_id": str | None,
     "turns": [{"run_id", "question", "status", "created_at", "updated_at",
                "result": {...} | None, "error": {...} | None}, ...]}   # oldest first

A turn still queued or running has neither ``result`` nor ``error``: its events are
followed at ``/api/runs/{run_id}/events``. A thread with no turn (never asked, or its
runs purged) is ``ANALYSIS_THREAD_NOT_FOUND`` (404).
"""

from __future__ import annotations

from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.runs.analysis_kind import KIND
from keiri_agent.runs.records import Run, iso
from keiri_agent.runs.service import RunService
from keiri_agent.services.saved_datasets import SavedDatasets

MAX_TURNS = 500
"""The most turns a thread is read back with (the oldest first)."""


def thread_not_found(thread_id: str) -> UserInputError:
    """404 for a thread id with no turn (never asked, mistyped, or past retention)."""
    return UserInputError(
        "この会話が見つかりません（保存期間を過ぎて削除されたか、アドレスが正しくありません）",
        code="ANALYSIS_THREAD_NOT_FOUND",
        hint="ファイルを読み込んで、新しい会話を始めてください",
        details={"thread_id": thread_id[:200]},
    )


def thread_runs(runs: RunService, thread_id: str) -> list[Run]:
    """The runs (turns) of the thread, oldest first."""
    return runs.store.find(kind=KIND, subjects=[thread_id], limit=MAX_TURNS, oldest_first=True)


def turn_json(run: Run) -> dict[str, Any]:
    """One turn of a thread: its question, state and (once settled) result or error."""
    return {
        "run_id": run.run_id,
        "question": run.title,
        "status": run.status,
        "created_at": iso(run.created_at),
        "updated_at": iso(run.updated_at),
        "result": run.result if run.status == "success" else None,
        "error": run.error if run.status in ("failed", "cancelled") else None,
    }


def thread_json(runs: RunService, saved: SavedDatasets, thread_id: str) -> dict[str, Any]:
    """The thread's file reference and its turns in order (see the module docstring);
    ``ANALYSIS_THREAD_NOT_FOUND`` when it has none."""
    found = thread_runs(runs, thread_id)
    if not found:
        raise thread_not_found(thread_id)
    ref = saved.ref_of(thread_id)
    if ref is None:  # not linked (the link failed to save): the last turn's file
        ref = next(
            (str(r.inputs["dataset"]) for r in reversed(found) if r.inputs.get("dataset")), None
        )
    return {"thread_id": thread_id, "dataset_id": ref, "turns": [turn_json(run) for run in found]}
