"""Runs of every kind (``runs.service``): a run's state, its events as SSE (resumable
with ``Last-Event-ID`` through any server process), and cancelling it.

Research and Plan runs also have their own routes with their kind's fields
(``/api/research/{run_id}``, ``/api/plans/runs/{run_id}``); these serve every kind the
same way, including HelpDesk asks and indexing started with ``stream``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.owned import acted_run, seen_run
from keiri_agent.api.security import caller, permit
from keiri_agent.people.roles import Person
from keiri_agent.runs.records import Run

router = APIRouter(prefix="/api/runs", tags=["runs"])

Context = Annotated[ApiContext, Depends(get_context)]
Caller = Annotated[Person, Depends(caller)]


def run_json(run: Run) -> dict[str, Any]:
    """A run's summary, its result and error, and where its events are."""
    return {
        **run.summary(),
        "result": run.result,
        "error": run.error,
        "events_url": f"/api/runs/{run.run_id}/events",
    }


@router.get("/{run_id}")
def run_state(run_id: str, context: Context, person: Caller) -> dict[str, Any]:
    """The run: kind, title, owner, status, attempt, last event id, result or error
    (403 for another person's run the caller's roles do not show)."""
    seen_run(context, person, run_id)
    return run_json(context.runs.require(run_id))


@router.post("/{run_id}/cancel", dependencies=[Depends(permit("run"))])
def cancel_run(run_id: str, context: Context, person: Caller) -> dict[str, Any]:
    """Ask the run to stop: a queued or waiting one at once, a running one within a
    heartbeat (it ends with a ``cancelled`` event). A finished run stays as it is.
    Only its owner or 管理者 may."""
    acted_run(context, person, run_id)
    context.runs.require(run_id)
    context.runs.cancel(run_id)
    return run_json(context.runs.require(run_id))


@router.get("/{run_id}/events", response_class=StreamingResponse, responses=sse.RESPONSES)
async def run_events(
    run_id: str,
    request: Request,
    context: Context,
    person: Caller,
    last_event_id: sse.LastEventIdQuery = None,
) -> StreamingResponse:
    """The run's events as SSE, from the start or after ``Last-Event-ID`` (header or
    the ``lastEventId`` query); ends once the run has settled."""
    await run_in_threadpool(seen_run, context, person, run_id)
    await run_in_threadpool(context.runs.require, run_id)
    after = sse.last_event_id(request, last_event_id)
    return sse.stream(context.runs.follow(run_id, after), context.settings.api.api_heartbeat_s)
