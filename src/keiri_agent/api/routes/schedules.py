"""Schedules: registered Plans that run by themselves (``runs.schedules``) — list, add,
pause, resume, delete. The runs start in the processes that execute runs; each one's
first event, ``scheduled``, says when it was due and whether it started late.

A webhook that starts a Plan with inputs is ``POST /api/plans/{plan_id}/runs`` with
the API token (``Authorization: Bearer …``) and ``{"vars": {…}}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, status
from pydantic import BaseModel, Field

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.security import permit
from keiri_agent.people.roles import Person
from keiri_agent.runs.schedules import check_plan
from keiri_agent.services.plan_inputs import locate_plan_id

router = APIRouter(prefix="/api/schedules", tags=["schedules"])

Context = Annotated[ApiContext, Depends(get_context)]


class ScheduleRequest(BaseModel):
    plan_id: str = Field(min_length=1, max_length=128)
    """A registered Plan (``GET /api/plans``)."""
    rule: str = Field(min_length=1, max_length=200)
    """「毎月第5営業日」, 「毎月末営業日」, 「毎週月曜（祝日なら翌営業日）」 … or a cron
    expression of five fields (``0 9 * * 1-5``)."""
    at: str = Field(default="09:00", max_length=5)
    """The time of day (``HH:MM``, ``time_zone``); unused by cron."""
    vars: dict[str, Any] = Field(default_factory=dict)
    """The vars of every run it starts."""


@router.get("")
def list_schedules(
    context: Context,
    plan_id: Annotated[str | None, Query(max_length=128, description="Only this Plan's")] = None,
) -> dict[str, Any]:
    """Every schedule, the next due first: rule, time, next and last run (times in
    ``time_zone``, ISO 8601 with their offset)."""
    schedules = context.schedules
    return {"schedules": [schedules.to_dict(item) for item in schedules.list(plan_id)]}


@router.post("", status_code=status.HTTP_201_CREATED)
def add_schedule(
    body: ScheduleRequest, context: Context, person: Annotated[Person, Depends(permit("run"))]
) -> dict[str, Any]:
    """Add a schedule of a registered Plan, owned by the caller: its runs are theirs
    (400 SCHEDULE_RULE_INVALID / SCHEDULE_TIME_INVALID naming the forms, or the Plan's
    validation errors with these vars; 404 for an unknown Plan)."""
    locate_plan_id(context.plans.store, body.plan_id)
    check_plan(context.plans, body.plan_id, body.vars)
    schedules = context.schedules
    added = schedules.add(body.plan_id, body.rule, at=body.at, vars=body.vars, owner=person.login)
    return schedules.to_dict(added)


@router.post("/{schedule_id}/pause", dependencies=[Depends(permit("run"))])
def pause_schedule(schedule_id: str, context: Context) -> dict[str, Any]:
    """Stop a schedule from starting runs until it is resumed."""
    schedules = context.schedules
    return schedules.to_dict(schedules.pause(schedule_id))


@router.post("/{schedule_id}/resume", dependencies=[Depends(permit("run"))])
def resume_schedule(schedule_id: str, context: Context) -> dict[str, Any]:
    """Resume a paused schedule; its next date is counted from now."""
    schedules = context.schedules
    return schedules.to_dict(schedules.resume(schedule_id))


@router.delete("/{schedule_id}", dependencies=[Depends(permit("run"))])
def delete_schedule(schedule_id: str, context: Context) -> dict[str, Any]:
    """Delete a schedule (the runs it started stay)."""
    context.schedules.delete(schedule_id)
    return {"schedule_id": schedule_id, "deleted": True}
