"""Approval steps come last (issue 33): an approval step (a ``ui.interactive_input``
node with ``approval``) waits until every node of its graph that it does not gate has
finished — the table it shows, the file it is about, the other inputs. Without this, a
step that references nothing (the 承認 template gates the outputs through their
``when``) would wait for an answer from the start, and an approver could approve
before there is anything to see.

``approvals_last(graph, deps)`` adds those edges to the dependencies the runner schedules
by (and that a re-run resets by). An added edge never closes a cycle: a node is made a
dependency of an approval only when it is not downstream of the approval in the graph
as it stands, approvals taken in declaration order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keiri_agent.plans.dsl.models import BlockNode, Node


def is_approval(node: Node) -> bool:
    return isinstance(node, BlockNode) and node.inputs.get("approval") is not None


def approvals_last(graph: Sequence[Node], deps: Mapping[str, set[str]]) -> Mapping[str, set[str]]:
    """``deps`` with every approval step depending on the nodes it does not gate;
    ``deps`` itself when the graph has no approval step."""
    approvals = [node.id for node in graph if is_approval(node)]
    if not approvals:
        return deps
    ordered = {node_id: set(needed) for node_id, needed in deps.items()}
    for approval in approvals:
        gated = _downstream(ordered, approval)
        ordered[approval] |= {node.id for node in graph if node.id not in gated}
    return ordered


def _downstream(deps: Mapping[str, set[str]], start: str) -> set[str]:
    """``start`` and every node that depends on it, directly or not."""
    dependants: dict[str, list[str]] = {}
    for node_id, needed in deps.items():
        for dep in needed:
            dependants.setdefault(dep, []).append(node_id)
    found, stack = {start}, [start]
    while stack:
        for dependant in dependants.get(stack.pop(), ()):
            if dependant not in found:
                found.add(dependant)
                stack.append(dependant)
    return found
