"""What one invocation of a Plan run hands back: ``RunResult`` and how it is collected.

``result_of(state, plan, status, runs_dir)`` builds the result from the saved run
state; ``collect_errors`` and ``collect_waiting`` look inside loops and subflows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.run_state import FINISHED, GraphState, RunState, state_path

__all__ = ["RunResult", "RunStatus", "collect_errors", "collect_waiting", "result_of"]

RunStatus = Literal["success", "failed", "paused", "cancelled"]


@dataclass(frozen=True)
class RunResult:
    """The outcome of one invocation (start, resume or rerun) of a run.

    ``outputs``: top-level node id → {alias: value} for nodes that finished (None
    values for skipped nodes and nodes failed under ``continue``). ``errors``:
    ``BlockError.to_dict()`` of every failed node; ``details.node_id`` is the
    top-level node to re-run, ``details.path`` the exact node. ``waiting``: the
    nodes paused for input, ``{"node_id": path, "block": id, "request": {...}}``.
    """

    run_id: str
    plan_id: str
    status: RunStatus
    outputs: dict[str, dict[str, Any]]
    errors: list[dict[str, Any]]
    waiting: list[dict[str, Any]]
    log_path: Path
    state_path: Path | None = field(default=None, compare=False)
    unfinished: list[dict[str, Any]] = field(default_factory=list, compare=False)
    """Top-level nodes that have not finished, in plan order: ``{"node_id",
    "iterations_done"}`` (a loop's finished iterations, else None) — where a
    cancelled or interrupted run stopped."""


def collect_errors(graph: GraphState) -> list[dict[str, Any]]:
    """The errors of failed nodes, looking inside loops and subflows that did not fail."""
    found: list[dict[str, Any]] = []
    for node in graph.nodes.values():
        if node.status == "failed" and node.error is not None:
            found.append(node.error)
            continue
        if node.loop is not None:
            for index in sorted(node.loop.iterations):
                found += collect_errors(node.loop.iterations[index])
        if node.subflow is not None:
            found += collect_errors(node.subflow.graph)
    return found


def collect_waiting(graph: GraphState, prefix: str = "") -> list[dict[str, Any]]:
    """The nodes waiting for answers, with their paths, inside loops and subflows too."""
    found: list[dict[str, Any]] = []
    for node_id, node in graph.nodes.items():
        path = f"{prefix}{node_id}"
        if node.status == "waiting":
            found.append({"node_id": path, "block": node.block, "request": node.request})
        elif node.status not in FINISHED:
            if node.loop is not None:
                for index in sorted(node.loop.iterations):
                    found += collect_waiting(node.loop.iterations[index], f"{path}[{index}]/")
            if node.subflow is not None:
                found += collect_waiting(node.subflow.graph, f"{path}/")
    return found


def result_of(state: RunState, plan: Plan, status: str, runs_dir: Path) -> RunResult:
    """The result of ``state`` after an invocation that ended ``status``.

    A run whose graph ended ``success`` while a node failed under ``continue`` is
    ``failed``; ``outputs`` lists the top-level nodes that finished.
    """
    errors = collect_errors(state.graph)
    if status == "success" and errors:
        status = "failed"
    outputs: dict[str, dict[str, Any]] = {}
    for node in plan.graph:
        node_state = state.graph.nodes.get(node.id)
        finished = node_state is not None and node_state.status in FINISHED
        if finished and node_state is not None and node_state.outputs is not None:
            outputs[node.id] = dict(node_state.outputs)
    return RunResult(
        run_id=state.run_id,
        plan_id=state.plan_id,
        status=status,  # type: ignore[arg-type]
        outputs=outputs,
        errors=errors,
        waiting=collect_waiting(state.graph),
        log_path=runs_dir / state.log_path,
        state_path=state_path(runs_dir, state.plan_id, state.run_id),
        unfinished=_unfinished(state, plan),
    )


def _unfinished(state: RunState, plan: Plan) -> list[dict[str, Any]]:
    found = []
    for node in plan.graph:
        node_state = state.graph.nodes.get(node.id)
        if node_state is not None and node_state.status in FINISHED:
            continue
        loop = node_state.loop if node_state is not None else None
        done = None
        if loop is not None:
            done = sum(1 for status in loop.statuses.values() if status == "success")
        found.append({"node_id": node.id, "iterations_done": done})
    return found
