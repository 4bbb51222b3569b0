"""The audit trail over HTTP (issue 33), for those who may read it (管理者): entries
filtered by person, kind, subject, Plan and day; the chain checked; a CSV export. The
same operations as ``keiri-agent audit list|verify|export`` (``people.audit``)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.security import permit
from keiri_agent.people.audit import KINDS, AuditEntry

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


def _json(entry: AuditEntry) -> dict[str, Any]:
    return {**entry.to_dict(), "kind_label": KINDS.get(entry.kind, entry.kind)}


@router.get("")
def audit_entries(
    context: Context,
    filters: Filters,
    limit: Annotated[int, Query(ge=1, le=MAX_ENTRIES)] = 200,
) -> dict[str, Any]:
    """The newest ``limit`` entries that match, newest first, and every kind with its
    Japanese name (``kinds``)."""
    found = context.audit.entries(**filters.values, limit=limit)
    return {"entries": [_json(entry) for entry in reversed(found)], "kinds": KINDS}


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
