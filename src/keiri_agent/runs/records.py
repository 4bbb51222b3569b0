"""What the run service stores about one run (``Run``) and the words for its states."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from keiri_agent.errors import UserInputError
from keiri_agent.events import utc_timestamp

RunStatus = Literal["queued", "running", "waiting", "success", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"success", "failed", "cancelled"})
"""Statuses in which a run is done; it leaves them only when asked to run again
(``RunService.run_again``: a Plan run rerun from a step)."""
SETTLED: frozenset[str] = FINISHED | {"waiting"}
"""Statuses in which nothing executes: finished, or waiting for a person's answers."""
STATUS_JA = {
    "queued": "順番待ち",
    "running": "実行中",
    "waiting": "入力待ち",
    "paused": "入力待ち",
    "success": "成功",
    "failed": "失敗",
    "cancelled": "中止",
}
"""How a status is said to a user."""


@dataclass(frozen=True)
class Run:
    """One run as stored (``storage.schema.runs``)."""

    run_id: str
    kind: str
    subject: str
    title: str
    owner: str
    status: RunStatus
    inputs: dict[str, Any]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    last_seq: int
    attempt: int
    cancel_requested: bool
    worker: str
    lease_until: float
    created_at: datetime
    updated_at: datetime

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def settled(self) -> bool:
        """Finished or waiting: no worker executes it now."""
        return self.status in SETTLED

    def summary(self) -> dict[str, Any]:
        """The fields every surface shows (no inputs: they may hold files)."""
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "subject": self.subject,
            "title": self.title,
            "owner": self.owner,
            "status": self.status,
            "attempt": self.attempt,
            "last_event_id": self.last_seq,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


def iso(moment: datetime) -> str:
    """UTC ISO text of a stored time (SQLite hands naive datetimes back: they are UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return utc_timestamp(moment)


def run_not_found(run_id: str) -> UserInputError:
    """RUN_NOT_FOUND for an id that names no run."""
    return UserInputError(
        f"実行 {run_id!r} が見つかりません",
        code="RUN_NOT_FOUND",
        hint="開始したときに返された実行 ID（run_1a2b3c4d5e6f のような形）を指定してください",
        details={"run_id": run_id},
    )


MAX_QUESTION_CHARS = 4000
"""The longest question an agent's run accepts."""


def checked_question(question: str, *, hint: str) -> str:
    """``question`` stripped; ``UserInputError`` when it is empty (``hint``: what to
    write) or longer than ``MAX_QUESTION_CHARS`` — a 400 for the caller before a run
    starts, not a failed run."""
    question = (question or "").strip()
    if not question:
        raise UserInputError("質問が空です", hint=hint)
    if len(question) > MAX_QUESTION_CHARS:
        raise UserInputError(
            f"質問が長すぎます（{len(question)} 文字）",
            hint=f"{MAX_QUESTION_CHARS} 文字以内にまとめてください",
        )
    return question
