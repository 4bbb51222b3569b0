"""The Plan platform (seed 002): YAML business procedures checked and run over blocks.

Subpackages by concern, each with a small public ``__init__``:

* ``plans.dsl``      the language: models, references, conditions, scopes, loading
* ``plans.catalog``  blocks as contracts: spec files, versions, ports, entrypoints
* ``plans.check``    the validator and the dry run
* ``plans.run``      the runner: scheduler, steps, state, log, masking
* ``plans.issues``   the issue vocabulary shared by the loader, validator and dry run
* ``plans.store``    Plans saved under ``designs/``; ``plans.engine`` the facade

The names below are imported on first use (module ``__getattr__``), so
``import keiri_agent.plans`` stays cheap and loads no block implementation.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

_EXPORTS = {
    "BlockCatalog": "keiri_agent.plans.catalog",
    "BlockSpec": "keiri_agent.plans.catalog",
    "DryRunReport": "keiri_agent.plans.check",
    "PlanValidator": "keiri_agent.plans.check",
    "Plan": "keiri_agent.plans.dsl",
    "load_plan_file": "keiri_agent.plans.dsl",
    "load_plan_text": "keiri_agent.plans.dsl",
    "PlanEngine": "keiri_agent.plans.engine",
    "IssueCode": "keiri_agent.plans.issues",
    "IssueDetails": "keiri_agent.plans.issues",
    "ValidationIssue": "keiri_agent.plans.issues",
    "ValidationReport": "keiri_agent.plans.issues",
    "PlanRunner": "keiri_agent.plans.run",
    "RunResult": "keiri_agent.plans.run",
    "RunStatus": "keiri_agent.plans.run",
    "PlanStore": "keiri_agent.plans.store",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
