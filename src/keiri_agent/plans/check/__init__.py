"""Checking a Plan without running it: the validator and the dry run."""

from keiri_agent.plans.check.dry_run import dry_run
from keiri_agent.plans.check.dry_run_report import DryRunProblem, DryRunReport, NodeDryRun
from keiri_agent.plans.check.validator import PlanValidator

__all__ = ["DryRunProblem", "DryRunReport", "NodeDryRun", "PlanValidator", "dry_run"]
