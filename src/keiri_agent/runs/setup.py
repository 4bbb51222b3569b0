"""The run service of a process, wired from its settings: the application database's
run store, the kinds of run, and what executes them.

- SQLite (the embedded default): a pool of this process's threads executes the runs
  it starts and recovers the runs a dead process left (``LocalExecutor``).
- PostgreSQL: runs go through the job queue (``runs.queue``); ``keiri-agent worker``
  processes execute them, and so does ``serve`` unless
  ``KEIRI_AGENT_RUN_EXECUTE_IN_SERVE`` is false.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from keiri_agent.config import Settings
from keiri_agent.runs.executors import LocalExecutor
from keiri_agent.runs.service import RunKind, RunService, Timing
from keiri_agent.runs.store import RunStore

if TYPE_CHECKING:
    import sqlalchemy

    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.runs.queue import QueueDispatch, QueueWorker
    from keiri_agent.runs.schedules import Scheduler
    from keiri_agent.services.research import ResearchService


def timing(settings: Settings) -> Timing:
    return Timing(
        lease_s=settings.runs.run_lease_s,
        heartbeat_s=settings.runs.run_heartbeat_s,
        poll_interval_s=settings.api.api_poll_interval_s,
    )


def run_kinds(research: ResearchService, plans: PlanEngine) -> dict[str, RunKind]:
    from keiri_agent.runs.plan_kind import KIND as PLAN
    from keiri_agent.runs.plan_kind import PlanKind
    from keiri_agent.runs.research_kind import KIND as RESEARCH
    from keiri_agent.runs.research_kind import ResearchKind

    return {RESEARCH: ResearchKind(research), PLAN: PlanKind(plans)}


def scheduler(
    settings: Settings, engine: sqlalchemy.Engine, plans: PlanEngine, service: RunService
) -> Scheduler:
    """What starts the due schedules' Plan runs in a process that executes runs."""
    from keiri_agent.runs.schedules import Scheduler, Schedules, ScheduleStore
    from keiri_agent.services.plan_runs import PlanRuns

    return Scheduler(Schedules(ScheduleStore(engine), settings), PlanRuns(plans, service))


class ProcessRuns:
    """The run service of this process and what executes its runs here: ``start``
    begins executing (and recovering), ``close`` stops (the runs executing here go
    back to the queue)."""

    def __init__(self, settings: Settings, research: ResearchService, plans: PlanEngine) -> None:
        from keiri_agent.runs.queue import is_postgres

        engine = research.store.engine  # the notes' migrated database
        store = RunStore(engine)
        kinds = run_kinds(research, plans)
        self.local: LocalExecutor | None = None
        self.dispatch: QueueDispatch | None = None
        self.worker: QueueWorker | None = None
        if is_postgres(settings):
            from keiri_agent.runs.queue import QueueDispatch, QueueWorker, queue_conninfo

            conninfo = queue_conninfo(settings)
            self.dispatch = QueueDispatch(conninfo)
            self.service = RunService(store, kinds, dispatch=self.dispatch, timing=timing(settings))
            if settings.runs.run_execute_in_serve:
                tick = scheduler(settings, engine, plans, self.service).tick
                self.worker = QueueWorker(settings, self.service, conninfo, ticks=[tick])
        else:
            self.local = LocalExecutor(
                workers=settings.runs.run_concurrency,
                recover_interval_s=settings.runs.run_lease_s / 2,
            )
            self.service = RunService(
                store, kinds, dispatch=self.local.dispatch, timing=timing(settings)
            )
            self.local.bind(self.service)
            self.local.ticks.append(scheduler(settings, engine, plans, self.service).tick)

    def start(self) -> None:
        if self.local is not None:
            self.local.start_recovery()
        if self.worker is not None:
            self.worker.start()

    def close(self) -> None:
        if self.local is not None:
            self.local.close()
        if self.worker is not None:
            self.worker.stop()
        if self.dispatch is not None:
            with contextlib.suppress(Exception):
                self.dispatch.close()
