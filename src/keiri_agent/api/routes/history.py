"""履歴: every Plan run, HelpDesk answer, data-analysis conversation and research run the
caller may see, filtered by words, kind, status, who started it and days, newest first,
a page at a time (``services.history``: the query and who sees what)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.concurrency import run_in_threadpool

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.security import caller
from keiri_agent.people.roles import Person
from keiri_agent.services.history import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_WORDS_CHARS,
    History,
    HistoryQuery,
)

router = APIRouter(prefix="/api/history", tags=["history"])

Context = Annotated[ApiContext, Depends(get_context)]
Caller = Annotated[Person, Depends(caller)]


@router.get("")
async def history(
    context: Context,
    person: Caller,
    q: Annotated[
        str | None,
        Query(max_length=MAX_WORDS_CHARS, description="Words of the title (all of them)"),
    ] = None,
    kind: Annotated[
        str | None, Query(max_length=32, description="plan, helpdesk, analysis or research")
    ] = None,
    status: Annotated[
        str | None,
        Query(
            max_length=32,
            description="queued, running, waiting, success, failed or cancelled",
        ),
    ] = None,
    started_by: Annotated[
        str | None, Query(max_length=128, description="The login of who started it")
    ] = None,
    since: Annotated[
        str | None, Query(max_length=32, description="From this day (YYYY-MM-DD, local time)")
    ] = None,
    until: Annotated[
        str | None, Query(max_length=32, description="To this day, included (YYYY-MM-DD)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="At most this many")] = (
        DEFAULT_LIMIT
    ),
    cursor: Annotated[
        str | None, Query(max_length=1000, description="next_cursor of the previous page")
    ] = None,
) -> dict[str, Any]:
    """The entries that match, newest first (by when they started): ``kind`` and
    ``kind_label``, ``title`` (the Plan's title, or the question), ``status`` and
    ``status_label``, ``started_by`` (login) and ``started_by_name``, ``started_at``,
    ``updated_at``, ``link`` (where the web UI opens it) and ``questions`` (an analysis
    conversation is one entry). ``next_cursor`` fetches the next page (null: none).
    A bad filter is 400 HISTORY_QUERY_INVALID naming it in ``details.field``."""
    query = HistoryQuery.parse(
        q=q,
        kind=kind,
        status=status,
        started_by=started_by,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )
    page = await run_in_threadpool(History.of(context).page, person, query)
    return page.to_json()
