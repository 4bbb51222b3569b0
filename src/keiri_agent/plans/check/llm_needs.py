"""Which nodes of a Plan call the LLM: the pre-flight check before a run.

A block whose spec says ``needs_llm: true`` (``ai.classify``, ``ai.process_llm``)
fails at run time when no LLM is configured. ``llm_needs(plan, catalog)`` lists
such nodes (loop bodies included) with the ``when`` conditions that guard them, so
a surface can say so *before* the user uploads files:

* ``PlanValidator`` (given ``llm_configured=False``) and the dry run report them as
  the *warning* ``LLM_NOT_CONFIGURED`` (``llm_used``: those that run, or may run,
  with the Plan's vars — the defaults, or the dry run's vars);
* the 実行 page calls ``llm_preflight(needs, vars)``: a node that will run with these
  vars (no condition, or conditions on ``vars`` only that hold) stops 実行 with a
  message; one whose condition depends on run data is only mentioned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from keiri_agent.errors import KeiriAgentError
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.conditions import parse_when
from keiri_agent.plans.dsl.models import BlockNode, Condition, LoopNode, Node, Plan
from keiri_agent.plans.dsl.references import Scope

__all__ = ["LLM_HINT", "LLMNeed", "llm_needs", "llm_preflight", "llm_used", "llm_warning_text"]

LLM_HINT = (
    "管理者に LLM の接続設定（OpenAI などの API キー）を依頼してください。"
    "設定が済むまでは、LLM を使う処理を外した Plan を使うか、"
    "条件付きの処理なら LLM を使わない設定（変数）で実行してください"
)


@dataclass(frozen=True)
class LLMNeed:
    """A node that calls the LLM: its path (``loop/node`` inside a loop body), what
    people call it, its block, and the ``when`` conditions on the way to it."""

    path: str
    title: str
    block: str
    conditions: tuple[Condition, ...] = ()


def llm_needs(plan: Plan, catalog: BlockCatalog) -> list[LLMNeed]:
    """Every node of ``plan`` whose block needs an LLM (unknown blocks are skipped:
    the validator reports them)."""
    return list(_walk(plan.graph, catalog, "", ()))


def _walk(
    graph: Sequence[Node], catalog: BlockCatalog, prefix: str, guards: tuple[Condition, ...]
) -> Any:
    for node in graph:
        conditions = (*guards, node.when) if node.when is not None else guards
        path = f"{prefix}{node.id}"
        if isinstance(node, BlockNode):
            try:
                spec = catalog.resolve(node.block)
            except KeiriAgentError:
                continue
            if spec.needs_llm:
                yield LLMNeed(path, node.title or node.id, spec.id, conditions)
        elif isinstance(node, LoopNode):
            yield from _walk(node.body.plan.graph, catalog, f"{path}/", conditions)


def _holds(condition: Condition, vars: Mapping[str, Any]) -> bool | None:
    """The condition's value from ``vars`` alone; None when it reads anything else."""
    known = {  # a var still holding ${env.X}/${config.x} is not known before the run
        name: value
        for name, value in vars.items()
        if not (isinstance(value, str) and "${" in value)
    }
    scope = Scope(nodes={}, vars=known, env={}, config={}, locals={})
    try:
        parsed = parse_when(condition)
        if any(reference.root != "vars" for reference in parsed.references):
            return None
        return parsed.evaluate(scope.lookup)
    except KeiriAgentError:
        return None


def llm_preflight(
    needs: Sequence[LLMNeed], vars: Mapping[str, Any]
) -> tuple[list[LLMNeed], list[LLMNeed]]:
    """(nodes that will call the LLM with these vars, nodes that may: their conditions
    depend on the run's data). Nodes whose conditions are false with ``vars`` are in
    neither."""
    certain: list[LLMNeed] = []
    possible: list[LLMNeed] = []
    for need in needs:
        values = [_holds(condition, vars) for condition in need.conditions]
        if False in values:
            continue
        (possible if None in values else certain).append(need)
    return certain, possible


def llm_used(needs: Sequence[LLMNeed], vars: Mapping[str, Any]) -> list[LLMNeed]:
    """The needs that will or may call the LLM with ``vars``, in the Plan's order."""
    certain, possible = llm_preflight(needs, vars)
    kept = {id(need) for need in (*certain, *possible)}
    return [need for need in needs if id(need) in kept]


def llm_warning_text(need: LLMNeed) -> str:
    """The warning for one node, in words a back-office user follows."""
    when = "（条件を満たしたときだけ実行）" if need.conditions else ""
    return (
        f"「{need.title}」（{need.block}）は LLM を使いますが、LLM が設定されていないため"
        f"実行すると失敗します{when}"
    )
