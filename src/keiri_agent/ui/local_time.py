"""Times shown to a user: in this computer's time zone, as a Japanese office writes them."""

from __future__ import annotations

from datetime import UTC, datetime


def local_time(moment: datetime | str | None) -> str:
    """``moment`` (timezone-aware, or ISO text; naive means UTC) as ``2025/01/05 09:30``
    in local time; ``""`` for None and the text itself when it is not a time."""
    if moment is None:
        return ""
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment)
        except ValueError:
            return moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y/%m/%d %H:%M")
