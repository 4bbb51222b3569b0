"""Running a Plan: the runner, its scheduler and steps, run state, run log."""

from keiri_agent.plans.run.outputs import RunResult, RunStatus
from keiri_agent.plans.run.run_log import EVENT_NAMES, log_line, read_events
from keiri_agent.plans.run.runner import PlanRunner

__all__ = ["EVENT_NAMES", "PlanRunner", "RunResult", "RunStatus", "log_line", "read_events"]
