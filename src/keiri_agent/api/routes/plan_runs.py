"""Plan runs: a plan's recent runs, start, state, resume with answers, cancel, events
(SSE, resumable), binary outputs. Runs execute in worker threads
(``services.plan_runs`` over the run service), never inside a request; a run paused at
a ``ui.interactive_input`` node waits until ``resume`` brings its answers, from any
server process.

Binary outputs: the run's JSON form (``GET /api/plans/runs/{run_id}``) carries them in
the bytes convention of ``services.jsonforms`` (``{"bytes", "base64"}``; a file
``{"name", "bytes", "base64"}``); ``GET …/outputs/{node}/{alias}`` downloads one as
a file. File answers are sent the same way: ``{"name": "経費.xlsx", "base64": "…"}``.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import ApiError, not_found
from keiri_agent.api.owned import acted_plan_run, seen_plan_run
from keiri_agent.api.run_starts import count_run_start
from keiri_agent.api.security import caller, permit
from keiri_agent.errors import UserInputError
from keiri_agent.people.roles import Person
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.runs.records import STATUS_JA, iso
from keiri_agent.services.jsonforms import is_file_value, run_result_json
from keiri_agent.services.plan_diagram import plan_diagram
from keiri_agent.services.plan_inputs import locate_plan_id
from keiri_agent.services.plan_outputs import (
    download_name,
    node_title,
    node_titles,
    shown_outputs,
)
from keiri_agent.services.plan_runs import RECENT_RUNS_LIMIT, answered_files, approval_steps

router = APIRouter(prefix="/api/plans", tags=["plan runs"])

Context = Annotated[ApiContext, Depends(get_context)]
Caller = Annotated[Person, Depends(caller)]
Runner = Annotated[Person, Depends(permit("run"))]


class RunRequest(BaseModel):
    vars: dict[str, Any] = Field(default_factory=dict)
    """Values for the plan's vars (JSON values)."""
    answers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Answers given up front: ``{node_id: {requirement id: value}}``."""


class ResumeRequest(BaseModel):
    answers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``{node_id: {requirement id: value}}`` for the nodes listed in ``waiting``."""


class RunStarted(BaseModel):
    run_id: str
    status: str
    """``queued`` (a worker takes it up), or where it already stands (``running``,
    ``paused``, ``success``, …)."""
    events_url: str
    run_url: str


def _started(context: ApiContext, run_id: str) -> RunStarted:
    return RunStarted(
        run_id=run_id,
        status=context.plan_runs.status(run_id),
        events_url=f"/api/plans/runs/{run_id}/events",
        run_url=f"/api/plans/runs/{run_id}",
    )


@router.get("/approvals")
def waiting_approvals(context: Context, person: Caller) -> dict[str, Any]:
    """承認待ち: the runs paused at an approval step that the caller may see or answer
    (a person an approval rule names sees what they approve), newest first — run, Plan,
    who started it, the step, its message and what it shows (``context``), and
    ``can_answer``: whether the caller may answer it (a 承認者 who did not start it)."""
    waiting = context.plan_runs.waiting_approvals(person)
    ownership = context.ownership
    return {
        "approvals": [
            item
            for item in waiting
            if item["can_answer"] or ownership.may_see(person, item["started_by"], "plan")
        ]
    }


@router.get("/runs/{run_id}")
def plan_run(run_id: str, context: Context, person: Caller) -> dict[str, Any]:
    """The run as last saved: status (queued, running, paused, success, failed, cancelled),
    outputs (bytes inline as base64), errors, and ``waiting``: the nodes paused for
    input with what they ask, their ``title`` and ``approval`` (an approval step: answered
    from 承認待ち by someone its rule allows). ``title`` is the Plan's title,
    ``node_titles`` every node id → its title (its id when it has none), ``started_at``
    and ``started_by`` when and by whom it was started, ``shown`` the outputs in the
    order a person reads them (final ones first, titled; a file without a name is
    given one from its title and content), ``diagram`` the Plan's steps and their
    connections, and ``step_states`` where each step stands."""
    try:
        result = context.plan_runs.result(run_id)
    except UserInputError as error:
        unstarted = context.plan_runs.without_state(run_id)
        if error.code != "RUN_NOT_FOUND" or unstarted is None:
            raise
        recorded = context.runs.require(run_id)
        context.ownership.check_see(person, recorded.owner, "plan", run_id)
        return {**unstarted, "events_url": f"/api/plans/runs/{run_id}/events"}
    starter = seen_plan_run(context, person, run_id)
    plan = context.plan_runs.plan(run_id)
    titles = node_titles(plan)
    payload = run_result_json(result)
    payload["status"] = context.plan_runs.status(run_id)  # queued and cancelled-while-queued
    approvals = approval_steps(plan)
    payload["waiting"] = [
        {
            **item,
            "title": node_title(titles, str(item.get("node_id", ""))),
            "approval": str(item.get("node_id", "")) in approvals,
        }
        for item in payload["waiting"]
    ]
    shown = shown_outputs(plan, result.outputs)
    for item in shown:  # a file without a name is named by its title and its content
        value = (payload["outputs"].get(item.node_id) or {}).get(item.alias)
        raw = (result.outputs.get(item.node_id) or {}).get(item.alias)
        if isinstance(value, dict) and "name" not in value and isinstance(raw, bytes | bytearray):
            value["name"] = download_name(item.title, bytes(raw))[0]
    known = context.runs.get(run_id)
    return {
        **payload,
        "shown": [
            {
                "node_id": item.node_id,
                "alias": item.alias,
                "title": item.title,
                "description": item.description,
                "final": item.final,
            }
            for item in shown
        ],
        "title": plan.title or plan.id,
        "started_at": iso(known.created_at) if known is not None else None,
        "started_by": starter,
        "node_titles": titles,
        "diagram": plan_diagram(plan),
        "events_url": f"/api/plans/runs/{run_id}/events",
    }


@router.post(
    "/runs/{run_id}/resume",
    response_model=RunStarted,
    status_code=202,
    dependencies=[Depends(count_run_start)],
)
def resume_plan_run(
    run_id: str, body: ResumeRequest, context: Context, person: Caller
) -> RunStarted:
    """Keep the answers with a paused run and queue it again for a worker; follow it
    at ``events_url`` with the last event id you received. An approval step answers
    only from someone its rule allows (403 PERMISSION_DENIED: e.g. the person who
    started the run, under 職務分掌); every approval is written to the audit trail."""
    runs = context.plan_runs
    answerer = person if _team_controls(context) else None
    runs.resume(run_id, body.answers, by=answerer)
    for node_id, approved in runs.approvals(run_id, body.answers):
        answer = body.answers.get(node_id) or {}
        context.audit.append(
            person.login,
            "approval_given" if approved else "approval_refused",
            run_id,
            {
                "plan": runs.plan(run_id).id,
                "node": node_id,
                "comment": str(answer.get("comment") or ""),
            },
        )
    return _started(context, run_id)


def _team_controls(context: ApiContext) -> bool:
    """Whether who answers matters: people are registered, or the server is shared with
    a token. A loopback server of one person before anyone is registered checks nothing."""
    return context.settings.api.api_token is not None or context.accounts.any()


class RerunRequest(BaseModel):
    from_node: str = Field(min_length=1, max_length=200)
    """The top-level step to run again, with everything after it."""
    answers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """New answers for input steps (an approval step is asked again, never answered here
    by its starter)."""


@router.post(
    "/runs/{run_id}/rerun",
    response_model=RunStarted,
    status_code=202,
    dependencies=[Depends(count_run_start)],
)
def rerun_plan_run(run_id: str, body: RerunRequest, context: Context, person: Runner) -> RunStarted:
    """Run a finished or paused run again from ``from_node`` (the steps before keep
    their results; every approval step is asked again), as the same run; its starter
    or 管理者."""
    acted_plan_run(context, person, run_id)
    answerer = person if _team_controls(context) else None
    context.plan_runs.rerun(run_id, body.from_node, body.answers, by=answerer)
    return _started(context, run_id)


@router.post("/runs/{run_id}/cancel")
def cancel_plan_run(run_id: str, context: Context, person: Runner) -> dict[str, Any]:
    """Stop a queued, running or paused run, whichever process executes it (it ends
    ``cancelled``); its starter or 管理者."""
    acted_plan_run(context, person, run_id)
    runs = context.plan_runs
    if not runs.cancel(run_id):
        raise ApiError(
            409,
            "RUN_ALREADY_FINISHED",
            f"実行 {run_id} はすでに終わっています"
            f"（状態: {STATUS_JA.get(runs.status(run_id), runs.status(run_id))}）",
            f"Run {run_id} has already finished",
            "終わった実行は取り消す必要はありません",
            "A finished run needs no cancel",
            {"run_id": run_id},
        )
    return {"run_id": run_id, "cancel_requested": True}


@router.get(
    "/runs/{run_id}/events",
    response_class=StreamingResponse,
    responses=sse.RESPONSES,
)
def plan_run_events(
    run_id: str,
    request: Request,
    context: Context,
    person: Caller,
    last_event_id: sse.LastEventIdQuery = None,
) -> StreamingResponse:
    """The run's events (source ``plan``) as SSE; ``Last-Event-ID`` (header or query)
    resumes after it. Ends when the run is paused or finished."""
    seen_plan_run(context, person, run_id)
    after = sse.last_event_id(request, last_event_id)
    events = context.plan_runs.follow(run_id, after)
    return sse.stream(events, context.settings.api.api_heartbeat_s)


@router.get(
    "/runs/{run_id}/outputs/{node_id}/{alias}",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}, "description": "The bytes"}},
)
def plan_run_output(
    run_id: str, node_id: str, alias: str, context: Context, person: Caller
) -> Response:
    """One binary output (a workbook, a document) of a finished node, as a download
    (written to the audit trail: who downloaded which file)."""
    seen_plan_run(context, person, run_id)
    outputs = context.plan_runs.result(run_id).outputs
    value: Any = (outputs.get(node_id) or {}).get(alias)
    name = f"{node_id}.{alias}"
    if is_file_value(value):
        name, data = str(value["name"]), bytes(value["data"])
    elif isinstance(value, bytes | bytearray):
        data = bytes(value)
        plan = context.plan_runs.plan(run_id)
        title = next(
            (
                item.title
                for item in shown_outputs(plan, outputs)
                if (item.node_id, item.alias) == (node_id, alias)
            ),
            node_title(node_titles(plan), node_id),
        )
        name = download_name(title, data)[0]
    else:
        raise not_found("ファイルの出力", "Binary output", f"{node_id}.{alias}")
    context.audit.append(
        person.login,
        "output_downloaded",
        run_id,
        {
            "plan": context.plan_runs.plan(run_id).id,
            "node": node_id,
            "alias": alias,
            "name": name,
            "bytes": len(data),
        },
    )
    return Response(
        data,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"},
    )


@router.get("/{plan_id:path}/runs")
def list_plan_runs(
    plan_id: str,
    context: Context,
    person: Caller,
    limit: Annotated[int, Query(ge=1, le=100, description="How many runs at most")] = (
        RECENT_RUNS_LIMIT
    ),
) -> dict[str, Any]:
    """The plan's recent runs the caller may see, most recently updated first: run id,
    status (running, paused, success, failed, cancelled), who started it, started and
    updated time. 404 for an unknown plan."""
    path = locate_plan_id(context.plans.store, plan_id)
    ids = {plan_id}
    # Runs are saved under the id the YAML declares; a file that no longer loads
    # still lists its runs saved under the store's id.
    with contextlib.suppress(UserInputError):
        ids.add(load_plan_file(path).id)
    ownership = context.ownership
    runs = context.plan_runs.recent(
        ids, limit, keep=lambda run: ownership.may_see(person, run.started_by, "plan")
    )
    return {
        "plan_id": plan_id,
        "runs": [
            {
                "run_id": run.run_id,
                "status": run.status,
                "started_by": run.started_by,
                "started_at": run.started_at,
                "updated_at": run.updated_at,
                "run_url": f"/api/plans/runs/{run.run_id}",
            }
            for run in runs
        ],
    }


@router.post(
    "/{plan_id:path}/runs",
    response_model=RunStarted,
    status_code=202,
    dependencies=[Depends(count_run_start)],
)
def start_plan_run(plan_id: str, body: RunRequest, context: Context, person: Runner) -> RunStarted:
    """Validate and start a run of a registered plan in a worker; follow it at
    ``events_url``. A ``ui.interactive_input`` node without answers pauses it. The
    caller is the run's starter (who may not approve it where an approval says so);
    the start, with its files' names and SHA-256, is written to the audit trail."""
    plan = load_plan_file(locate_plan_id(context.plans.store, plan_id))
    run_id = context.plan_runs.start(
        plan,
        vars=body.vars,
        answers=body.answers,
        started_by=person.login,
        by=person if _team_controls(context) else None,
    )
    context.audit.append(
        person.login,
        "run_started",
        run_id,
        {
            "plan": plan.id,
            "vars": sorted(body.vars),
            "files": answered_files(body.answers),
        },
    )
    return _started(context, run_id)
