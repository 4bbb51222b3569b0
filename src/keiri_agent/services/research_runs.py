"""Research runs through the run service (``keiri_agent.runs``): what the API's
research routes and GraphQL call.

    runs = ResearchRuns(ResearchService(settings), service)
    record = runs.start("インボイス制度で…", session_id=None, kb_names=["research"])
    async for event in runs.follow(record.run_id, after=0):   # None = nothing new yet
        ...

A research run is a run of kind ``research`` (``runs.research_kind``): recorded
``queued``, executed by a worker (a thread of the server, or a ``keiri-agent
worker``), followed and cancelled from any process, and continued by another worker
when its own dies. ``RunRecord`` is its research-shaped view (question, session, the
knowledge bases searched).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from keiri_agent.events import Event
from keiri_agent.runs.records import FINISHED, MAX_QUESTION_CHARS, Run, iso
from keiri_agent.runs.research_kind import KIND, research_inputs
from keiri_agent.runs.service import RunService
from keiri_agent.services.research import ResearchService

__all__ = ["MAX_QUESTION_CHARS", "ResearchRuns", "RunRecord"]


@dataclass(frozen=True)
class RunRecord:
    """One research run as stored."""

    run_id: str
    session_id: str
    question: str
    kb_names: list[str]
    owner: str
    status: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    last_seq: int
    created_at: datetime
    updated_at: datetime

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @classmethod
    def of(cls, run: Run) -> RunRecord:
        return cls(
            run_id=run.run_id,
            session_id=run.subject,
            question=run.title,
            kb_names=list(run.inputs.get("kb_names") or []),
            owner=run.owner,
            status=run.status,
            result=run.result,
            error=run.error,
            last_seq=run.last_seq,
            created_at=run.created_at,
            updated_at=run.updated_at,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "question": self.question,
            "kb_names": list(self.kb_names),
            "owner": self.owner,
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "last_event_id": self.last_seq,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


class ResearchRuns:
    """Research runs of one ``ResearchService`` over the run service."""

    def __init__(self, research: ResearchService, service: RunService) -> None:
        self.research = research
        self.service = service

    def start(
        self,
        question: str,
        *,
        session_id: str | None = None,
        kb_names: Sequence[str] = (),
        owner: str = "",
    ) -> RunRecord:
        """Record a run of ``owner`` (a login; empty: nobody in particular) and queue
        it; returns its record (status ``queued``).

        Raises:
            UserInputError: empty or too long question, bad session id, unknown
                knowledge base.
        """
        inputs = research_inputs(question, session_id, list(kb_names))
        self.check_sources(inputs["kb_names"])
        run = self.service.start(
            KIND, subject=inputs["session_id"], title=inputs["question"], inputs=inputs, owner=owner
        )
        return RunRecord.of(run)

    def session_owner(self, session_id: str) -> str | None:
        """Who made the session (None: no run has it yet)."""
        return self.service.subject_owner(KIND, session_id)

    def check_sources(self, kb_names: list[str]) -> None:
        """Fail now (400), not in the worker, when the sources cannot be built."""
        from keiri_agent.agents.research.sources.registry import search_tools

        search_tools(self.research.settings, kb_names=kb_names or None)

    def get(self, run_id: str) -> RunRecord | None:
        run = self.service.get(run_id)
        return None if run is None or run.kind != KIND else RunRecord.of(run)

    def cancel(self, run_id: str) -> RunRecord | None:
        """Ask the run to stop (any process); its owner ends it within a heartbeat."""
        run = self.service.cancel(run_id)
        return None if run is None else RunRecord.of(run)

    def follow(self, run_id: str, after: int = 0) -> AsyncIterator[Event | None]:
        """The run's events after ``after`` (see ``RunService.follow``)."""
        return self.service.follow(run_id, after)
