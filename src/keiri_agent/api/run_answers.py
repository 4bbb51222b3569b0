"""A request answered by a run of the run service: the run's events as SSE, or its
result as JSON once it has settled.

Used by every route whose work is a run started for the request — a HelpDesk ask,
indexing a knowledge base — so they answer the same way whatever process or worker
executes the run. The stream is the run's own (``RunService.follow``): every event
numbered by the store, ending with the kind's ``result`` event (or ``failed`` /
``cancelled`` with the error); a client that loses it reconnects at
``/api/runs/{run_id}/events`` with ``Last-Event-ID``, through any server process.
"""

from __future__ import annotations

from typing import Any

from fastapi.concurrency import run_in_threadpool

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext
from keiri_agent.api.errors import run_error_response
from keiri_agent.runs.records import Run

INDEX_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The reports per collection (JSON), or with stream=true (or "
        "Accept: text/event-stream) SSE: index_started, index_progress per file (and per "
        "embedded batch of a long one), then `result` holding the reports (or `failed` "
        "holding the error)",
        "content": {"application/json": {}, sse.MEDIA_TYPE: {}},
    }
}
"""The OpenAPI description of an indexing route's two answers."""


def wants_stream(asked: bool, accept: str) -> bool:
    """The client asked for SSE: ``stream`` true, or ``Accept: text/event-stream``."""
    return asked or sse.MEDIA_TYPE in accept


async def answer_run(context: ApiContext, run: Run, streaming: bool) -> Any:
    """The run's events as SSE when ``streaming``; else, once it has settled, its
    result (or its error with the status of the error's category)."""
    if streaming:
        return sse.stream(context.runs.follow(run.run_id), context.settings.api.api_heartbeat_s)
    settled = await context.runs.settled(run.run_id)
    if settled.status == "success" and settled.result is not None:
        return settled.result
    return run_error_response(settled)


async def start_and_answer(
    context: ApiContext,
    kind: str,
    *,
    subject: str,
    title: str,
    inputs: dict[str, Any],
    streaming: bool,
    owner: str,
    run_id: str | None = None,
) -> Any:
    """Start a run of ``kind`` for the request (inputs checked by the caller), owned by
    ``owner`` (the caller's login), and answer it (``answer_run``)."""
    run = await run_in_threadpool(
        lambda: context.runs.start(
            kind, subject=subject, title=title, inputs=inputs, owner=owner, run_id=run_id
        )
    )
    return await answer_run(context, run, streaming)
