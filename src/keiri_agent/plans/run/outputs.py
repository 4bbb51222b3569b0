"""What one invocation of a Plan run hands back: ``RunResult`` and how it is collected.

``result_of(state, plan, status, runs_dir)`` builds the result from the saved run
state; ``collect_errors`` and ``collect_waiting`` look inside loops and subflows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.run_state import FINISHED, GraphState, NodeState, RunState, state_path

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
    step_states: dict[str, str] = field(default_factory=dict, compare=False)
    """Every top-level node id → where it stands: ``pending``, ``running``, ``waiting``
    (a loop or subflow whose body waits too), ``success``, ``skipped``, ``failed`` or
    ``cancelled`` (what a diagram of the run shows)."""


def collect_errors(graph: GraphState) -> list[dict[str, Any]]:
    """The errors of failed nodes, looking inside loops and subflows that did not fail."""
    found: list[dict[str, Any]] = []
    for node in graph.nodes.values():
        if node.status == "failed" and node.error is not None:
            found.append(node.error)
        else:
            found += _inner_errors(node)
    return found


def collect_waiting(graph: GraphState, prefix: str = "") -> list[dict[str, Any]]:
    """The nodes waiting for answers, with their paths, inside loops and subflows too."""
    found: list[dict[str, Any]] = []
    for node_id, node in graph.nodes.items():
        path = f"{prefix}{node_id}"
        if node.status == "waiting":
            found.append({"node_id": path, "block": node.block, "request": node.request})
        elif node.status not in FINISHED:
            found += _inner_waiting(node, path)
    return found


_STEP_STATES = {"paused": "waiting", "queued": "pending"}
"""A loop or subflow whose body waits for input is ``paused``: to a person, it waits."""


def result_of(state: RunState, plan: Plan, status: str, runs_dir: Path) -> RunResult:
    """The result of ``state`` after an invocation that ended ``status``.

    A run whose graph ended ``success`` while a node failed under ``continue`` is
    ``failed``; ``outputs`` lists the top-level nodes that finished.

    One pass over the plan's nodes for ``outputs`` and ``unfinished``, and one over the
    state's nodes for ``errors`` and ``waiting`` (the same lists as ``collect_errors``
    and ``collect_waiting``; loops and subflows are looked into by those).
    """
    nodes = state.graph.nodes
    errors: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for node_id, node_state in nodes.items():
        node_status = node_state.status
        if (node_status == "success" or node_status == "skipped") and (
            node_state.loop is None and node_state.subflow is None
        ):
            continue  # the usual node: nothing inside to look into
        if node_status == "failed" and node_state.error is not None:
            errors.append(node_state.error)
        else:
            errors += _inner_errors(node_state)
        if node_status == "waiting":
            waiting.append(
                {"node_id": node_id, "block": node_state.block, "request": node_state.request}
            )
        elif node_status not in FINISHED:
            waiting += _inner_waiting(node_state, node_id)
    if status == "success" and errors:
        status = "failed"
    outputs: dict[str, dict[str, Any]] = {}
    unfinished: list[dict[str, Any]] = []
    step_states: dict[str, str] = {}
    for node in plan.graph:
        node_id = node.id
        found = nodes.get(node_id)
        step_states[node_id] = (
            _STEP_STATES.get(found.status, found.status) if found is not None else "pending"
        )
        if found is not None and found.status in FINISHED:
            if found.outputs is not None:
                outputs[node_id] = dict(found.outputs)
            continue
        loop = found.loop if found is not None else None
        done = None
        if loop is not None:
            done = sum(1 for value in loop.statuses.values() if value == "success")
        unfinished.append({"node_id": node_id, "iterations_done": done})
    return RunResult(
        run_id=state.run_id,
        plan_id=state.plan_id,
        status=status,  # type: ignore[arg-type]
        outputs=outputs,
        errors=errors,
        waiting=waiting,
        log_path=runs_dir / state.log_path,
        state_path=state_path(runs_dir, state.plan_id, state.run_id),
        unfinished=unfinished,
        step_states=step_states,
    )


def _inner_errors(node: NodeState) -> list[dict[str, Any]]:
    """``collect_errors``'s errors from inside one node that did not fail."""
    found: list[dict[str, Any]] = []
    if node.loop is not None:
        for index in sorted(node.loop.iterations):
            found += collect_errors(node.loop.iterations[index])
    if node.subflow is not None:
        found += collect_errors(node.subflow.graph)
    return found


def _inner_waiting(node: NodeState, path: str) -> list[dict[str, Any]]:
    """``collect_waiting``'s entries from inside one unfinished node at ``path``."""
    found: list[dict[str, Any]] = []
    if node.loop is not None:
        for index in sorted(node.loop.iterations):
            found += collect_waiting(node.loop.iterations[index], f"{path}[{index}]/")
    if node.subflow is not None:
        found += collect_waiting(node.subflow.graph, f"{path}/")
    return found
