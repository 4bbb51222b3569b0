"""Times as people read them: one time zone for every surface (``plans.time_zone``,
Asia/Tokyo by default), written as a Japanese office writes them — ``2026/11/28 13:02``.

The web UI formats with the same zone, which ``GET /api/health`` tells it."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime

DEFAULT_TIME_ZONE = "Asia/Tokyo"


def shown_time(moment: datetime | str | None, time_zone: str = DEFAULT_TIME_ZONE) -> str:
    """``moment`` (timezone-aware, or ISO text; naive means UTC) as ``2026/11/28 13:02``
    in ``time_zone``; ``""`` for None and the text itself when it is not a time."""
    if moment is None:
        return ""
    if isinstance(moment, datetime):
        when = moment
    else:
        try:
            when = datetime.fromisoformat(moment)
        except ValueError:
            return moment
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(zoneinfo.ZoneInfo(time_zone)).strftime("%Y/%m/%d %H:%M")


def shown_day(moment: datetime, time_zone: str = DEFAULT_TIME_ZONE) -> str:
    """``moment``'s day as ``2026/11/28`` in ``time_zone``."""
    when = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return when.astimezone(zoneinfo.ZoneInfo(time_zone)).strftime("%Y/%m/%d")
