"""A Plan as a diagram: its top-level steps in words and the connections between them.

What the web UI draws (設計 and 実行): one box per top-level node — named by its title,
else 「ステップ N」, never by its id — and one arrow per dependency (a node that reads
another node's outputs, or waits for it in ``when``, comes after it; see
``plans.dsl.dependencies``). A loop or a subflow is one box: its body runs inside it.

During a run, ``step_states`` says where each step stands, from the run's saved state.
"""

from __future__ import annotations

from typing import Any, Literal

from keiri_agent.plans.dsl.dependencies import dependencies
from keiri_agent.plans.dsl.models import BlockNode, LoopNode, Plan, SubflowNode
from keiri_agent.services.plan_runs import approval_steps

StepKind = Literal["input", "approval", "loop", "subflow", "step"]

INPUT_BLOCK_PREFIX = "ui."
"""The blocks that ask a person (``kind: ui`` in ``block_specs/ui``): a run pauses at them."""


def plan_diagram(plan: Plan) -> dict[str, Any]:
    """``{"steps": [{"id", "title", "kind"}], "edges": [{"source", "target"}]}``: the
    top-level nodes in declaration order and their dependencies (each edge once, the
    source before the target). ``id`` is for the program (matching a run's step states),
    ``title`` for people."""
    approvals = approval_steps(plan)
    deps = dependencies(plan)
    steps = [
        {
            "id": node.id,
            "title": node.title or f"ステップ {number}",
            "kind": _kind(node, approvals),
        }
        for number, node in enumerate(plan.graph, start=1)
    ]
    edges = [
        {"source": source, "target": node.id}
        for node in plan.graph
        for source in sorted(deps.get(node.id, ()))
    ]
    return {"steps": steps, "edges": edges}


def _kind(node: Any, approvals: set[str]) -> StepKind:
    if isinstance(node, LoopNode):
        return "loop"
    if isinstance(node, SubflowNode):
        return "subflow"
    if node.id in approvals:
        return "approval"
    if isinstance(node, BlockNode) and node.block.startswith(INPUT_BLOCK_PREFIX):
        return "input"
    return "step"
