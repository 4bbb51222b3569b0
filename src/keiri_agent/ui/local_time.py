"""Times shown on the Streamlit pages: in the one time zone of every surface
(``plans.time_zone``, ``keiri_agent.shown_time``), as ``2025/01/05 09:30``."""

from __future__ import annotations

from datetime import datetime

from keiri_agent.shown_time import shown_time
from keiri_agent.ui.session import session_settings


def local_time(moment: datetime | str | None) -> str:
    """``moment`` (timezone-aware, or ISO text; naive means UTC) as ``2025/01/05 09:30``
    in the configured time zone; ``""`` for None and the text itself when it is not a
    time."""
    return shown_time(moment, session_settings().plans.time_zone)
