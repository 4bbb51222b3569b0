"""Times shown to a user: in this computer's time zone, as a Japanese office writes them."""

from __future__ import annotations

from datetime import UTC, datetime


def local_time(moment: datetime | str | None) -> str:
    """``moment`` (timezone-aware, or ISO text; naive means UTC) as ``2025/01/05 09:30``
    in local time; ``""`` for None and the text itself when it is not a time."""
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
    return when.astimezone().strftime("%Y/%m/%d %H:%M")
