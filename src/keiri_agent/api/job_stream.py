"""A worker job (``services.jobs.Job``) answered as SSE: its events, then its result.

Used by every route that can stream a long operation — a HelpDesk ask, indexing a
knowledge base — so they end the same way: the job's events as they arrive (``None``
between them when nothing is new, so ``sse.stream`` sends a heartbeat), then one last
event numbered next: ``result`` holding the operation's JSON, or ``error`` holding the
error's JSON (a product error as is; anything else logged here and sent as the API's
generic ``INTERNAL_ERROR``, never a traceback).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from keiri_agent.api import sse
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event, EventCallback, EventEmitter, EventSource, utc_timestamp
from keiri_agent.services.jsonforms import json_value

if TYPE_CHECKING:
    from keiri_agent.search.knowledge_base import ProgressCallback
    from keiri_agent.services.jobs import Job

log = logging.getLogger(__name__)

T = TypeVar("T")

INTERNAL_ERROR = {
    "code": "INTERNAL_ERROR",
    "message": "サーバーで予期しないエラーが発生しました",
    "hint": "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください",
    "details": {},
}


INDEX_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The reports per collection (JSON), or with stream=true (or "
        "Accept: text/event-stream) SSE: index_started, index_progress per file (and per "
        "embedded batch of a long one), then `result` holding the reports (or `error`)",
        "content": {"application/json": {}, sse.MEDIA_TYPE: {}},
    }
}
"""The OpenAPI description of an indexing route's two answers."""


def wants_stream(asked: bool, accept: str) -> bool:
    """The client asked for SSE: ``stream`` true, or ``Accept: text/event-stream``."""
    return asked or sse.MEDIA_TYPE in accept


async def job_events(
    job: Job[T],
    first: list[Event],
    heartbeat_s: float,
    *,
    source: EventSource,
    result_json: Callable[[T], dict[str, Any]],
    run_id: Callable[[T], str] | None = None,
) -> AsyncIterator[Event | None]:
    """``first`` and the job's later events, then ``result`` (``result_json`` of the
    job's result) or ``error``, numbered after the last event (``source`` and the last
    event's run id, or ``run_id`` of the result)."""
    batch, position, last = first, 0, None
    while True:
        for event in batch:
            yield event
            last = event
        position += len(batch)
        if job.done and position >= len(job.events()):
            break
        batch = await asyncio.to_thread(job.next_events, position, heartbeat_s)
        if not batch:
            yield None  # nothing new: lets sse.stream send a heartbeat
    seq = last.seq + 1 if last is not None else 1
    run = last.run_id if last is not None else ""
    try:
        result = job.result()
    except KeiriAgentError as error:
        payload, kind = {"error": json_value(error.to_dict())}, "error"
    except Exception:  # logged here; the client gets the API's generic error
        log.exception("%s job failed", source)
        payload, kind = {"error": INTERNAL_ERROR}, "error"
    else:
        payload, kind = result_json(result), "result"
        run = run_id(result) if run_id is not None else run
    yield Event(source, kind, run, seq, utc_timestamp(), payload)


async def stream_job(
    job: Job[T],
    heartbeat_s: float,
    *,
    source: EventSource,
    result_json: Callable[[T], dict[str, Any]],
    run_id: Callable[[T], str] | None = None,
) -> Any:
    """The SSE response of a started ``job``. A failure before its first event (a bad
    request found at once) is raised instead, so it is answered with its own status."""
    first = await asyncio.to_thread(job.next_events, 0, None)
    if not first and job.error is not None:
        job.result()  # re-raises: rendered by api.errors
    events = job_events(
        job, first, heartbeat_s, source=source, result_json=result_json, run_id=run_id
    )
    return sse.stream(events, heartbeat_s)


def indexing_job(source: EventSource, index: Callable[[ProgressCallback], T]) -> Job[T]:
    """``index(on_progress)`` started in a worker: it emits ``index_started`` at once (so
    a streamed response starts before the first file is done), then ``index_progress``
    per call of ``on_progress`` (``done``, ``total``, ``document``: a file, or a file and
    how many of its chunks are embedded), one run id and numbering for all."""
    from keiri_agent.services.jobs import Job

    run_id = f"index_{uuid.uuid4().hex[:12]}"

    def task(emit: EventCallback) -> T:
        emitter = EventEmitter(source, run_id, emit)
        emitter.emit("index_started", {})

        def on_progress(done: int, total: int, document: str) -> None:
            emitter.emit("index_progress", {"done": done, "total": total, "document": document})

        return index(on_progress)

    return Job(task, name=f"{source}-index").start()


__all__ = ["INDEX_RESPONSES", "indexing_job", "job_events", "stream_job", "wants_stream"]
