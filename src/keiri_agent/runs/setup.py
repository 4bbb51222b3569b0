"""The run service of a process, wired from its settings: the application database's
run store, the kinds of run, and what executes them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent.config import Settings
from keiri_agent.runs.executors import LocalExecutor
from keiri_agent.runs.service import RunService, Timing
from keiri_agent.runs.store import RunStore

if TYPE_CHECKING:
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.services.research import ResearchService


def timing(settings: Settings) -> Timing:
    return Timing(
        lease_s=settings.run_lease_s,
        heartbeat_s=settings.run_heartbeat_s,
        poll_interval_s=settings.api_poll_interval_s,
    )


def local_run_service(
    settings: Settings, research: ResearchService, plans: PlanEngine
) -> tuple[RunService, LocalExecutor]:
    """The run service over the application database (the research notes' engine,
    migrated), executing runs on ``run_concurrency`` threads of this process."""
    from keiri_agent.runs.plan_kind import KIND as PLAN
    from keiri_agent.runs.plan_kind import PlanKind
    from keiri_agent.runs.research_kind import KIND as RESEARCH
    from keiri_agent.runs.research_kind import ResearchKind

    executor = LocalExecutor(
        workers=settings.run_concurrency, recover_interval_s=settings.run_lease_s / 2
    )
    service = RunService(
        RunStore(research.store.engine),
        {RESEARCH: ResearchKind(research), PLAN: PlanKind(plans)},
        dispatch=executor.dispatch,
        timing=timing(settings),
    )
    executor.bind(service)
    return service, executor
