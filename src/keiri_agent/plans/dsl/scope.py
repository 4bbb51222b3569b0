"""What each place of a Plan can see: the scope rules, stated once (seed 002 §5).

The validator (names and schemas), the dry run (sample values) and the runner (real
values) all take their scopes from here, so they cannot drift apart:

* **vars** (``PlanVars``, ``build_vars``): a plan's declared ``vars`` resolved, in
  whatever order they use each other (``${env.*}``, ``${config.*}``, ``${vars.*}``),
  then the caller's values (``--var``, a subflow's ``call.inputs``) as they are.
* **a node** sees the nodes of its own graph and, inside a loop body, the nodes of
  every enclosing graph (``can_see``); never a node inside another loop's body, and
  never, from inside a loop, that loop's own output.
* **a foreach body** also sees its item and index variables (``foreach_variables``).
* **a while body and its condition** also see the previous iteration's exports by
  name, null before the first (``while_variables``); an export named like a body
  node or a reserved root (``vars``/``env``/``config``/``run``) is not visible — the
  node or root wins. The condition also sees the body's nodes (``body_node_ids``:
  the previous iteration's outputs, null before the first).
* **a subflow** sees only its own plan: its vars are ``PlanVars(called.vars,
  call.inputs)``, and no node, loop variable or var of the caller.

Loop variables of an inner loop shadow those of an enclosing one (the validator
reports the clash as LOOP_VAR_CONFLICT).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from keiri_agent.plans.dsl.models import RESERVED_ROOTS, LoopNode
from keiri_agent.plans.dsl.references import ReferenceError_, Scope, resolve_value

T = TypeVar("T")


def can_see(target_chain: tuple[str, ...], chain: tuple[str, ...]) -> bool:
    """Whether a node whose chain (enclosing loop ids, then its id) is ``target_chain``
    is visible from a place whose chain is ``chain`` (its own graph or an enclosing one)."""
    depth = len(target_chain) - 1
    return target_chain[:-1] == chain[:depth] and len(chain) > depth


def body_node_ids(node: LoopNode) -> list[str]:
    """The ids of a loop body's nodes (what a while condition sees besides the scope)."""
    return [child.id for child in node.body.plan.graph]


def foreach_variables(node: LoopNode, item: T, index: T) -> dict[str, T]:
    """A foreach body's own variables: ``{item_var: item, index_var: index}``."""
    assert node.foreach is not None
    found = {node.foreach.item_var: item}
    if node.foreach.index_var:
        found[node.foreach.index_var] = index
    return found


def while_variables(node: LoopNode, previous: Mapping[str, T]) -> dict[str, T]:
    """The previous iteration's exports that a while body and its condition see by name.

    Body node ids and the reserved roots win over an export of the same name.
    """
    taken = set(RESERVED_ROOTS).union(body_node_ids(node))
    return {name: value for name, value in previous.items() if name not in taken}


class PlanVars(Mapping[str, Any]):
    """A plan's ``vars``, each resolved on first use so one var may reference another.

    ``declared`` are the plan's vars (``${env.*}``, ``${config.*}`` and ``${vars.*}``
    resolved, in whatever order they reference each other); ``given`` are the caller's
    values (``--var``, a subflow's ``call.inputs``), used as they are and never
    resolved again. Vars that reference each other in a cycle raise ``ReferenceError_``.
    The runner, the dry run and the validator all use this, so they agree.
    """

    def __init__(
        self,
        declared: Mapping[str, Any],
        given: Mapping[str, Any],
        env: Mapping[str, str],
        config: Mapping[str, Any],
    ) -> None:
        self._declared = {name: value for name, value in declared.items() if name not in given}
        self._done: dict[str, Any] = dict(given)
        self._active: list[str] = []
        self._scope = Scope(nodes={}, vars=self, env=env, config=config, locals={})

    def __getitem__(self, name: str) -> Any:
        if name in self._done:
            return self._done[name]
        if name not in self._declared:
            raise KeyError(name)
        if name in self._active:
            cycle = " → ".join([*self._active[self._active.index(name) :], name])
            raise ReferenceError_(
                f"vars がお互いを参照して循環しています: {cycle}",
                hint="この中のどれか一つの vars を、参照を使わない値にしてください",
                details={"cycle": [*self._active[self._active.index(name) :], name]},
            )
        self._active.append(name)
        try:
            value = resolve_value(self._declared[name], self._scope.lookup)
        finally:
            self._active.pop()
        self._done[name] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._declared, *self._done]))

    def __len__(self) -> int:
        return len(set(self._declared) | set(self._done))

    def resolved(self) -> dict[str, Any]:
        """Every var resolved (raises on the first that cannot be)."""
        return {name: self[name] for name in self}


def build_vars(
    plan_vars: Mapping[str, Any],
    overrides: Mapping[str, Any],
    env: Mapping[str, str],
    config: Mapping[str, Any],
) -> dict[str, Any]:
    """The plan's vars resolved (``${env.*}``, ``${config.*}``, other ``${vars.*}``), then
    ``overrides``.

    Overrides are values (the caller's vars, a subflow's ``call.inputs``) and are
    not resolved again. A missing env/config entry or a cycle between vars raises
    ``ReferenceError_`` (see ``PlanVars``).
    """
    return PlanVars(plan_vars, overrides, env, config).resolved()
