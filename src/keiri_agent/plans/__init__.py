"""The Plan platform (seed 002): YAML business procedures checked and run over blocks.

Subpackages by concern, each with a small public ``__init__``:

* ``plans.dsl``      the language: models, references, conditions, scopes, loading
* ``plans.catalog``  blocks as contracts: spec files, versions, ports, entrypoints
* ``plans.check``    the validator and the dry run
* ``plans.run``      the runner: scheduler, steps, state, log
* ``plans.issues``   the issue vocabulary shared by the loader, validator and dry run
* ``plans.store``    Plans saved under ``designs/``; ``plans.engine`` the facade

The names below are imported on first use (module ``__getattr__``), so
``import keiri_agent.plans`` stays cheap and loads no block implementation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.plans.catalog import BlockCatalog, BlockSpec
    from keiri_agent.plans.check import DryRunReport, PlanValidator
    from keiri_agent.plans.dsl import Plan, load_plan_file, load_plan_text
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.plans.issues import (
        IssueCode,
        IssueDetails,
        ValidationIssue,
        ValidationReport,
    )
    from keiri_agent.plans.run import PlanRunner, RunResult, RunStatus
    from keiri_agent.plans.store import PlanStore

__all__ = [
    "BlockCatalog",
    "BlockSpec",
    "DryRunReport",
    "IssueCode",
    "IssueDetails",
    "Plan",
    "PlanEngine",
    "PlanRunner",
    "PlanStore",
    "PlanValidator",
    "RunResult",
    "RunStatus",
    "ValidationIssue",
    "ValidationReport",
    "load_plan_file",
    "load_plan_text",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BlockCatalog": ".catalog",
        "BlockSpec": ".catalog",
        "DryRunReport": ".check",
        "PlanValidator": ".check",
        "Plan": ".dsl",
        "load_plan_file": ".dsl",
        "load_plan_text": ".dsl",
        "PlanEngine": ".engine",
        "IssueCode": ".issues",
        "IssueDetails": ".issues",
        "ValidationIssue": ".issues",
        "ValidationReport": ".issues",
        "PlanRunner": ".run",
        "RunResult": ".run",
        "RunStatus": ".run",
        "PlanStore": ".store",
    },
)
