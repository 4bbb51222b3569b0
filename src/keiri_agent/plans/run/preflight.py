"""What the runner checks and computes about a graph before running it.

Dependencies and cycles come from ``plans.dsl.dependencies`` (the same edges the validator
and the dry run use): a node depends on the sibling nodes it references through
``in``, ``when``, ``foreach.input``, ``call.inputs``, and for a loop through its
body and ``while`` condition.

* ``check_graph(graph, catalog)``: blocks resolvable, conditions parse, no cycles.
* ``check_plan(plan, catalog)``: the same, raised as one PlanValidationError.
* ``cached_dependencies(graph)``: ``dependencies(graph)`` computed once per graph (a
  block node whose inputs are scalars or parsing text, the usual node, has its roots
  read off its templates without the general walk).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from keiri_agent.errors import KeiriAgentError, PlanValidationError
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl import dependencies as dependencies_module
from keiri_agent.plans.dsl.conditions import parse_when
from keiri_agent.plans.dsl.dependencies import (
    CycleError,
    is_acyclic,
    node_references,
    topological_order,
)
from keiri_agent.plans.dsl.models import BlockNode, LoopNode, Node, Plan
from keiri_agent.plans.dsl.references import Reference
from keiri_agent.plans.dsl.references import _template_parts as template_parts

__all__ = ["cached_dependencies", "check_graph", "check_plan"]

_CACHE_SIZE = 256
_cache: OrderedDict[int, tuple[Sequence[Node], dict[str, set[str]]]] = OrderedDict()
_cache_lock = threading.Lock()


def cached_dependencies(
    graph: Sequence[Node], plain: Sequence[set[str] | None] | None = None
) -> dict[str, set[str]]:
    """``dependencies(graph)``, remembered for the same graph object (plans are frozen).

    The cache holds the graph itself, so an id is never confused with a new object's.
    ``plain``: ``_plain_roots`` of each node, in graph order, when the caller has them.
    """
    key = id(graph)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is graph:
            _cache.move_to_end(key)
            return hit[1]
    found = _dependencies(graph, plain)
    with _cache_lock:
        _cache[key] = (graph, found)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def _dependencies(
    graph: Sequence[Node], plain: Sequence[set[str] | None] | None = None
) -> dict[str, set[str]]:
    """``dependencies(graph)``: plain nodes' roots from their templates, the rest by
    ``external_roots``."""
    ids = {node.id for node in graph}
    found: dict[str, set[str]] = {}
    for index, node in enumerate(graph):
        roots = _plain_roots(node) if plain is None else plain[index]
        if roots is None:
            roots = dependencies_module.external_roots(node)
        found[node.id] = roots & ids
    return found


def _issue(code: str, message: str, path: str | None) -> dict[str, Any]:
    return {"code": code, "message": message, "node_id": path}


def check_graph(
    graph: Sequence[Node], catalog: BlockCatalog, prefix: str = ""
) -> list[dict[str, Any]]:
    """Problems that make a graph unrunnable: unknown blocks, bad references, cycles."""
    issues: list[dict[str, Any]] = []
    resolved: dict[str, KeiriAgentError | None] = {}
    """Each block reference's resolution (a plan uses a few blocks on many nodes)."""
    plain: list[set[str] | None] = []
    """Each node's ``_plain_roots`` (its dependencies are read off them below)."""
    for node in graph:
        path = f"{prefix}{node.id}"
        roots = _plain_roots(node)
        plain.append(roots)
        try:
            if roots is None:
                list(node_references(node))  # raises the syntax error naming the field
            if isinstance(node, LoopNode) and node.while_ is not None:
                parse_when(node.while_.condition)
        except KeiriAgentError as exc:
            issues.append(_issue(exc.code, f"{path}: {exc.message}", path))
        if isinstance(node, BlockNode):
            if node.block in resolved:
                failure = resolved[node.block]
            else:
                try:
                    catalog.resolve(node.block)
                    failure = None
                except KeiriAgentError as exc:
                    failure = exc
                resolved[node.block] = failure
            if failure is not None:
                issues.append(_issue(failure.code, f"{path}: {failure.message}", path))
        elif isinstance(node, LoopNode):
            issues += check_graph(node.body.plan.graph, catalog, f"{path}/")
    deps = cached_dependencies(graph, plain)
    try:
        if not is_acyclic(deps):
            topological_order(deps, [node.id for node in graph])  # raises the cycle's error
    except CycleError as exc:
        where = prefix.rstrip("/")
        issues.append(_issue(exc.code, f"{where + ': ' if where else ''}{exc.message}", where))
    return issues


_SCALARS = frozenset({int, float, bool, type(None)})


def _plain_roots(node: Node) -> set[str] | None:
    """``external_roots(node)`` of a block node without ``when`` whose inputs are
    scalars or text that parses (most nodes); None for any other node (walked in full).

    Such a node's ``node_references`` cannot raise either."""
    if type(node) is not BlockNode or node.when is not None:
        return None
    roots: set[str] = set()
    for value in node.inputs.values():
        kind = type(value)
        if kind is str:
            if "${" in value:
                try:
                    parts = template_parts(value)  # cached per text
                except Exception:  # the walk reports (or skips) it with the field's path
                    return None
                for part in parts:
                    if isinstance(part, Reference):
                        roots.add(part.root)
        elif kind not in _SCALARS:
            return None
    return roots


def check_plan(plan: Plan, catalog: BlockCatalog) -> None:
    """Raise PlanValidationError (with every issue) when ``plan`` cannot be run."""
    issues = check_graph(plan.graph, catalog)
    if issues:
        raise PlanValidationError(
            f"Plan {plan.id!r} を実行できません: "
            + "; ".join(issue["message"] for issue in issues),
            issues=issues,
            hint="Plan を検証 (plan validate) して、名前の出ているノードを直してください",
        )
