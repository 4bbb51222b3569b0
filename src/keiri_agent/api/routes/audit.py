"""The audit trail over HTTP (issue 33), for those who may read it (管理者): entries
filtered by person, kind, subject, Plan and day; the chain checked; a CSV export. The
same operations as ``keiri-agent audit list|verify|export`` (``people.audit``)."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.security import permit
from keiri_agent.errors import UserInputError
from keiri_agent.people.audit import KINDS, AuditEntry
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.services.plan_inputs import locate_plan_id

router = APIRouter(
    prefix="/api/audit", tags=["audit"], dependencies=[Depends(permit("view_audit"))]
)

Context = Annotated[ApiContext, Depends(get_context)]
MAX_ENTRIES = 1000
FIRST_DAY, LAST_DAY = dt.date(2000, 1, 1), dt.date(9998, 12, 31)
"""The days a search may name (beyond, 422: the day after LAST_DAY still exists)."""


class _Filters:
    """The query parameters every audit route reads."""

    def __init__(
        self,
        actor: Annotated[str | None, Query(max_length=128, description="Who did it")] = None,
        kind: Annotated[str | None, Query(max_length=64, description="run_started, …")] = None,
        subject: Annotated[
            str | None, Query(max_length=256, description="A run id, Plan id or login")
        ] = None,
        plan: Annotated[
            str | None, Query(max_length=256, description="A Plan and its runs")
        ] = None,
        since: Annotated[
            dt.date | None, Query(ge=FIRST_DAY, le=LAST_DAY, description="From this day (UTC)")
        ] = None,
        until: Annotated[
            dt.date | None, Query(ge=FIRST_DAY, le=LAST_DAY, description="To this day (UTC)")
        ] = None,
    ) -> None:
        self.values: dict[str, Any] = {
            "actor": actor or None,
            "kind": kind or None,
            "subject": subject or None,
            "plan": plan or None,
            "since": _start_of(since),
            "until": _start_of(until + dt.timedelta(days=1)) if until else None,
        }


Filters = Annotated[_Filters, Depends()]


def _start_of(day: dt.date | None) -> dt.datetime | None:
    return dt.datetime.combine(day, dt.time(), dt.UTC) if day else None


def _json(entry: AuditEntry, names: _Names) -> dict[str, Any]:
    plan = entry.details.get("plan")
    return {
        **entry.to_dict(),
        "kind_label": KINDS.get(entry.kind, entry.kind),
        "subject_title": names.run(entry.subject) or names.plan(entry.subject),
        "plan_title": names.plan(plan) if isinstance(plan, str) else None,
    }


class _Names:
    """What people call an entry's subject and Plan: a run by its title (the Plan's
    title, the question), a Plan by its title; None for what is not known (removed, or
    not a run or Plan). Each looked up once per request."""

    def __init__(self, context: ApiContext) -> None:
        self.context = context
        self.runs: dict[str, str | None] = {}
        self.plans: dict[str, str | None] = {}

    def run(self, subject: str) -> str | None:
        if subject not in self.runs:
            found = self.context.runs.get(subject) if subject.startswith("run_") else None
            self.runs[subject] = found.title if found is not None and found.title else None
        return self.runs[subject]

    def plan(self, plan_id: str) -> str | None:
        if plan_id not in self.plans:
            title = None
            if plan_id and not plan_id.startswith("run_"):
                with contextlib.suppress(UserInputError):
                    store = self.context.plans.store
                    title = load_plan_file(locate_plan_id(store, plan_id)).title
            self.plans[plan_id] = title
        return self.plans[plan_id]


@router.get("")
def audit_entries(
    context: Context,
    filters: Filters,
    limit: Annotated[int, Query(ge=1, le=MAX_ENTRIES)] = 200,
) -> dict[str, Any]:
    """The newest ``limit`` entries that match, newest first, and every kind with its
    Japanese name (``kinds``); each entry with what people call its subject
    (``subject_title``: a run's or Plan's title) and its Plan (``plan_title``), when known."""
    found = context.audit.entries(**filters.values, limit=limit)
    names = _Names(context)
    return {"entries": [_json(entry, names) for entry in reversed(found)], "kinds": KINDS}


@router.get("/verify")
def verify_audit(context: Context) -> dict[str, Any]:
    """Whether no entry was edited, removed or inserted out of order (``ok``, with the
    newest entry's number and hash to note down); otherwise the first broken entry's
    number and why."""
    return context.audit.verify().to_dict()


@router.get(
    "/export",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}, "description": "UTF-8 CSV with BOM"}},
)
def export_audit(context: Context, filters: Filters) -> Response:
    """The matching entries, oldest first, as CSV (opens in Excel)."""
    data = context.audit.export_csv(context.audit.entries(**filters.values))
    return Response(
        data,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="audit.csv"'},
    )
