"""``keiri-agent worker``: a process that executes queued runs (PostgreSQL only).

Start as many as the work needs, on any machine that reaches the application
database and the workspace (``KEIRI_AGENT_HOME`` on a shared file system). Ctrl-C or
SIGTERM stops taking runs; the runs executing here go back to the queue at once and
another worker (or this one, started again) continues them.
"""

from __future__ import annotations

import signal
from types import FrameType

from keiri_agent.config import Settings
from keiri_agent.runs.queue import QueueDispatch, QueueWorker, queue_conninfo
from keiri_agent.runs.service import RunService
from keiri_agent.runs.setup import run_kinds, scheduler, timing
from keiri_agent.runs.store import RunStore


def run_worker(settings: Settings) -> None:
    """Execute queued runs until SIGINT/SIGTERM (``ConfigurationError`` on SQLite)."""
    from keiri_agent.services.container import Services

    conninfo = queue_conninfo(settings)
    services = Services(settings)
    engine = services.research.store.engine
    dispatch = QueueDispatch(conninfo)
    service = RunService(
        RunStore(engine), run_kinds(services), dispatch=dispatch, timing=timing(settings)
    )
    tick = scheduler(settings, engine, services.plans, service).tick
    worker = QueueWorker(settings, service, conninfo, ticks=[tick])

    def stop(_signum: int, _frame: FrameType | None) -> None:
        worker.request_stop()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        worker.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        dispatch.close()
        services.close()
