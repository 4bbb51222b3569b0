"""The dependency graph of a Plan: edges from references, order, cycles.

A node depends on every node **of the same graph** that it references: in
``in`` (block nodes), ``when``, ``foreach.input`` and ``call.inputs``; a loop
node also depends on the nodes of its graph that its body (at any depth) or its
``while`` condition references. References to reserved roots (``vars``,
``env``, ``config``, ``run``), to loop variables and to nodes of other graphs do
not create edges (the validator reports the ones that are not allowed).

Visibility (checked by the validator): a node may reference the nodes of its own
graph and, inside a loop body, the nodes of every enclosing graph (they finish
before the loop starts, because the loop node depends on them). A loop body's
nodes are not visible outside the body; the loop hands values out through its
exports.

``topological_order`` is deterministic: among ready nodes the one declared
first runs first, so the runner and the dry run see the same order.
"""

from __future__ import annotations

import contextlib
import heapq
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.conditions import parse_when
from keiri_agent.plans.dsl.models import BlockNode, BodyPlan, LoopNode, Node, Plan, SubflowNode
from keiri_agent.plans.dsl.references import Reference, find_references


class CycleError(UserInputError):
    """The nodes' references form a cycle; ``cycle`` lists it (first node repeated last)."""

    code = "CYCLE"

    def __init__(self, cycle: list[str]) -> None:
        super().__init__(
            f"ノードが循環しています: {format_cycle(cycle)}",
            hint="それぞれが一つ前のノードの出力を使っています。この中の参照を一つ消してください",
            details={"cycle": cycle},
        )
        self.cycle = cycle


def node_fields(node: Node, prefix: str = "") -> list[tuple[str, Any]]:
    """The literal fields of a node that may hold references, with their paths:
    ``in.<key>`` (block), ``foreach.input`` (loop), ``call.inputs.<key>`` (subflow)."""
    base = f"{prefix}." if prefix else ""
    if isinstance(node, BlockNode):
        return [(f"{base}in.{key}", value) for key, value in node.inputs.items()]
    if isinstance(node, LoopNode) and node.foreach is not None:
        return [(f"{base}foreach.input", node.foreach.input)]
    if isinstance(node, SubflowNode):
        return [(f"{base}call.inputs.{key}", value) for key, value in node.call.inputs.items()]
    return []


def node_references(node: Node, prefix: str = "") -> Iterator[tuple[str, Reference]]:
    """The references a node makes in its own scope, with their paths.

    ``in``, ``when``, ``foreach.input`` and ``call.inputs``; not the loop body or
    the ``while`` condition (they are evaluated in the body's scope). Raises
    ``ReferenceError_`` / ``ConditionSyntaxError`` on bad syntax.
    """
    for path, value in node_fields(node, prefix):
        yield from find_references(value, path)
    if node.when is not None:
        when_path = f"{prefix}.when" if prefix else "when"
        for reference in parse_when(node.when).references:
            yield when_path, reference


def external_roots(node: Node) -> set[str]:
    """Every reference root used by the node, its body and its while condition,
    minus the names the body defines (body node ids, loop variables and, for while
    loops, the body's export names).

    References that do not parse are skipped (the validator reports them).
    """
    roots: set[str] = set()
    for path, value in node_fields(node):
        with contextlib.suppress(UserInputError):
            roots.update(reference.root for _, reference in find_references(value, path))
    conditions = [node.when] if node.when is not None else []
    if isinstance(node, LoopNode) and node.while_ is not None:
        conditions.append(node.while_.condition)
    inner: set[str] = set()
    for index, condition in enumerate(conditions):
        with contextlib.suppress(UserInputError):
            found = {reference.root for reference in parse_when(condition).references}
            (roots if index == 0 and node.when is not None else inner).update(found)
    if isinstance(node, LoopNode):
        for child in node.body.plan.graph:
            inner |= external_roots(child)
        local = {child.id for child in node.body.plan.graph}
        if node.foreach is not None:
            local.add(node.foreach.item_var)
            if node.foreach.index_var:
                local.add(node.foreach.index_var)
        else:  # a while condition and body see the previous iteration's exports by name
            local.update(export.name for export in node.body.plan.exports)
        roots |= inner - local
    return roots


def dependencies(graph: Plan | BodyPlan | Sequence[Node]) -> dict[str, set[str]]:
    """node id -> ids of the nodes of the same graph it depends on (declaration order).

    References that do not parse are skipped here (the validator reports them).
    """
    nodes = graph.graph if isinstance(graph, Plan | BodyPlan) else graph
    ids = {node.id for node in nodes}
    return {node.id: external_roots(node) & ids for node in nodes}


def topological_order(
    deps: Mapping[str, set[str]], order: Sequence[str] | None = None
) -> list[str]:
    """Node ids so that each comes after its dependencies; ``CycleError`` on a cycle.

    Ties are broken by ``order`` (default: the mapping's order, i.e. declaration).
    Dependencies that are not keys of ``deps`` are ignored.
    """
    position = {node_id: i for i, node_id in enumerate(order or deps)}
    remaining, users = _in_degrees(deps)
    ready = [(position.get(n, len(position)), n) for n, count in remaining.items() if count == 0]
    heapq.heapify(ready)
    result: list[str] = []
    while ready:
        _, node_id = heapq.heappop(ready)
        result.append(node_id)
        for user in users[node_id]:
            remaining[user] -= 1
            if remaining[user] == 0:
                heapq.heappush(ready, (position.get(user, len(position)), user))
    if len(result) < len(deps):
        cycles = find_cycles(deps, order)
        raise CycleError(cycles[0] if cycles else sorted(set(deps) - set(result)))
    return result


def is_acyclic(deps: Mapping[str, set[str]]) -> bool:
    """True when ``topological_order(deps)`` would not raise, found without ordering
    the nodes (no heap: a plan run checks this every time, the order is not needed)."""
    remaining, users = _in_degrees(deps)
    ready = [node_id for node_id, count in remaining.items() if count == 0]
    done = 0
    while ready:
        done += 1
        for user in users[ready.pop()]:
            remaining[user] -= 1
            if remaining[user] == 0:
                ready.append(user)
    return done == len(deps)


def _in_degrees(deps: Mapping[str, set[str]]) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Each node's count of dependencies inside ``deps``, and each node's users."""
    remaining: dict[str, int] = {}
    users: dict[str, list[str]] = {node_id: [] for node_id in deps}
    for node_id, ids in deps.items():
        count = 0
        for dep in ids:
            if dep in users:
                count += 1
                users[dep].append(node_id)
        remaining[node_id] = count
    return remaining, users


def find_cycles(
    deps: Mapping[str, set[str]], order: Sequence[str] | None = None
) -> list[list[str]]:
    """One cycle per strongly connected component that has one, in data-flow order.

    ``["a", "b", "a"]`` means b uses a's output and a uses b's. Each cycle starts
    at its node declared first; cycles are listed in declaration order.
    """
    position = {node_id: i for i, node_id in enumerate(order or deps)}
    cycles = []
    for component in _strongly_connected(deps):
        members = set(component)
        start = min(members, key=lambda n: position.get(n, len(position)))
        if len(members) == 1 and start not in deps.get(start, set()):
            continue
        cycles.append(_cycle_through(start, members, deps))
    cycles.sort(key=lambda cycle: position.get(cycle[0], len(position)))
    return cycles


def format_cycle(cycle: Sequence[str]) -> str:
    """``a → b → a``."""
    return " → ".join(cycle)


def _cycle_through(start: str, members: set[str], deps: Mapping[str, set[str]]) -> list[str]:
    # Shortest path along "is used by" edges from start back to start (BFS).
    users: dict[str, list[str]] = {node_id: [] for node_id in members}
    for node_id in members:
        for dep in deps.get(node_id, set()):
            if dep in members:
                users[dep].append(node_id)
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for user in sorted(users[current]):
            if user == start:
                path = [start]
                node = current
                while node != start:
                    path.append(node)
                    node = previous[node]
                return [start, *reversed(path[1:]), start]
            if user not in previous:
                previous[user] = current
                queue.append(user)
    return [start, start]


def _strongly_connected(deps: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (plans can be deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in deps:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(deps[root] & deps.keys())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(deps[child] & deps.keys()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components
