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
from typing import TYPE_CHECKING, Protocol

from keiri_agent.config import Settings
from keiri_agent.runs.executors import LocalExecutor
from keiri_agent.runs.service import RunKind, RunService, Timing
from keiri_agent.runs.store import RunStore

if TYPE_CHECKING:
    import sqlalchemy

    from keiri_agent.agents.analysis import AnalysisAgent
    from keiri_agent.agents.helpdesk.desk import HelpDesk
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.runs.queue import QueueDispatch, QueueWorker
    from keiri_agent.runs.schedules import Scheduler
    from keiri_agent.services.design import DesignService
    from keiri_agent.services.research import ResearchService


class Services(Protocol):
    """What the kinds of run use of a process's services (``services.container``)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def research(self) -> ResearchService: ...

    @property
    def plans(self) -> PlanEngine: ...

    @property
    def design(self) -> DesignService: ...

    @property
    def analysis(self) -> AnalysisAgent: ...

    @property
    def runs(self) -> RunService: ...

    def helpdesk(self, name: str = "helpdesk") -> HelpDesk: ...


def timing(settings: Settings) -> Timing:
    return Timing(
        lease_s=settings.runs.run_lease_s,
        heartbeat_s=settings.runs.run_heartbeat_s,
        poll_interval_s=settings.api.api_poll_interval_s,
    )


def run_kinds(services: Services) -> dict[str, RunKind]:
    """Every kind of run, executed with the process's ``services``."""
    from keiri_agent.people.notifications import Notifier
    from keiri_agent.runs import (
        analysis_kind,
        design_kind,
        helpdesk_kind,
        index_kind,
        plan_kind,
        research_kind,
    )

    return {
        research_kind.KIND: research_kind.ResearchKind(services.research),
        plan_kind.KIND: plan_kind.PlanKind(services.plans, Notifier(services.settings)),
        helpdesk_kind.KIND: helpdesk_kind.HelpDeskKind(services.helpdesk),
        index_kind.HELPDESK_INDEX: index_kind.HelpDeskIndexKind(
            services.settings, services.helpdesk
        ),
        index_kind.RESEARCH_INDEX: index_kind.ResearchIndexKind(services.research),
        analysis_kind.KIND: analysis_kind.AnalysisKind(services),
        design_kind.KIND: design_kind.DesignKind(services),
    }


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

    def __init__(self, services: Services) -> None:
        from keiri_agent.runs.queue import is_postgres

        settings, plans = services.settings, services.plans
        engine = services.research.store.engine  # the notes' migrated database
        store = RunStore(engine)
        kinds = run_kinds(services)
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
