"""Shared helpers of the plan runner tests: the test block catalog, plans, the recorder."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.run_log import read_events
from keiri_agent.plans.run.runner import PlanLoader, PlanRunner, RunResult

BLOCKS_DIR = Path(__file__).parent / "data" / "runner_blocks"


@functools.cache
def catalog() -> BlockCatalog:
    """Built-in blocks plus rt.work / rt.strict / rt.ask."""
    return BlockCatalog.discover([BLOCKS_DIR])


def recorder() -> Any:
    """The RECORDER of the test blocks' module, as the catalog loaded it."""
    block = catalog().load(catalog().resolve("rt.work"))
    return sys.modules[type(block).__module__].RECORDER


def node(node_id: str, block: str = "rt.work", **inputs: Any) -> dict[str, Any]:
    """A block node; ``out``/``when`` may be passed as ``out_=``/``when_=``."""
    data: dict[str, Any] = {"id": node_id, "block": block}
    for key in ("out", "when"):
        if f"{key}_" in inputs:
            data[key] = inputs.pop(f"{key}_")
    data["in"] = inputs
    return data


def make_plan(
    *nodes: dict[str, Any],
    plan_id: str = "test_plan",
    vars: dict[str, Any] | None = None,
    exports: list[dict[str, str]] | None = None,
    **policy: Any,
) -> Plan:
    """A Plan of ``nodes``; keyword arguments become ``policy`` (``workers`` → concurrency)."""
    concurrency: dict[str, Any] = {}
    if "workers" in policy:
        concurrency["default_max_workers"] = policy.pop("workers")
    if "per_node" in policy:
        concurrency["per_node"] = policy.pop("per_node")
    if concurrency:
        policy["concurrency"] = concurrency
    return Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": plan_id,
            "version": "1.0.0",
            "vars": vars or {},
            "policy": policy,
            "graph": list(nodes),
            "exports": exports or [],
        }
    )


def make_runner(runs_dir: Path, plan_loader: PlanLoader | None = None, **kwargs: Any) -> PlanRunner:
    """A runner over the test catalog, no env unless given."""
    kwargs.setdefault("env", {})
    return PlanRunner(
        catalog(),
        Settings(),
        runs_dir=runs_dir,
        plan_loader=plan_loader or _no_plans,
        **kwargs,
    )


def _no_plans(plan_id: str) -> Plan:
    raise AssertionError(f"no subflow plans in this test (asked for {plan_id!r})")


def events(result: RunResult, name: str | None = None) -> list[dict[str, Any]]:
    """The run log's events (only those called ``name`` when given)."""
    found = read_events(result.log_path)
    return [event for event in found if name is None or event["event"] == name]


def starts(result: RunResult) -> list[str]:
    """Node ids in node_start order."""
    return [event["node_id"] for event in events(result, "node_start")]
