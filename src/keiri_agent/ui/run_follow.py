"""Following a run of the run service from a page script.

    run = follow_run(services.runs, run_id, after=0, show=view.add, tick=waited)

The events are read from the run store (``RunService.next_events``), so a page needs
to keep nothing but the run's id: a rerun of the script (the user clicked something
meanwhile), a reload or a visit to another page follows the same run again from its
first event, whichever thread or process executes it. ``show`` is called from the
script thread only (it creates Streamlit elements). ``tick`` is called about once a
second while nothing arrives: a Streamlit call there lets a rerun stop the script at
once instead of at the run's next event.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from keiri_agent.events import Event
from keiri_agent.runs.records import Run

if TYPE_CHECKING:  # the run store's modules (SQLAlchemy) load with the run service
    from keiri_agent.runs.service import RunService

TICK_S = 1.0
"""How long to wait for an event before ``tick`` (seconds)."""
RUN_EVENT_LABELS = {
    "run_requeued": "実行が中断されたため、続きから実行し直します",
    "run_continued": "回答を受け付けました",
    "run_rerun": "再実行を受け付けました",
    "scheduled": "予定により開始しました",
}
"""The run service's own events in Japanese, for the progress lines."""
OUTCOME_KINDS = frozenset({"failed", "cancelled"})
"""The run service's last events of a run that did not succeed: a page says the
outcome itself (its status and error), not as a progress line."""
CANCELLED = {
    "code": "RUN_CANCELLED",
    "message": "実行は中止されました",
    "hint": "続けるには、もう一度実行してください",
}
FAILED = {
    "code": "RUN_FAILED",
    "message": "実行が失敗しました",
    "hint": "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください",
}


def follow_run(
    runs: RunService,
    run_id: str,
    *,
    after: int = 0,
    show: Callable[[Event], None],
    tick: Callable[[float], None] | None = None,
) -> Run:
    """Hand every event of the run numbered after ``after`` to ``show``, in order, until
    the run has settled (finished, or waiting for answers) and all were shown; the run
    as it settled. ``tick(seconds)`` gets the seconds waited so far.

    Raises ``UserInputError`` (RUN_NOT_FOUND) when the run is gone (deleted meanwhile).
    """
    started = time.monotonic()
    position = after
    while True:
        events = runs.next_events(run_id, position, TICK_S)
        if not events:
            run = runs.require(run_id)
            if not run.settled:
                if tick is not None:
                    tick(time.monotonic() - started)
                continue
            events = runs.next_events(run_id, position, 0)  # those written as it settled
            if not events:
                return run
        for event in events:
            show(event)
            position = event.seq


def run_problem(run: Run) -> dict[str, Any] | None:
    """What a page shows for a run that did not succeed: its stored error (``code``,
    ``message``, ``hint``, ``details``), or what a cancelled run means; None for a run
    that succeeded or waits for answers."""
    if run.status == "failed":
        return dict(run.error or FAILED)
    if run.status == "cancelled":
        return dict(run.error or CANCELLED)
    return None
