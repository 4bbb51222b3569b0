"""The runner's pre-run checks: the dependencies it schedules by."""

from __future__ import annotations

from typing import Any

import pytest
from runner_support import make_plan, node

from keiri_agent.plans.dsl import dependencies as dependencies_module
from keiri_agent.plans.dsl.dependencies import dependencies
from keiri_agent.plans.run.preflight import cached_dependencies


def test_plain_block_nodes_have_their_dependencies_read_off_their_templates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The general walk (``external_roots``) costs a 1,000-node chain ≈ 10 µs a node;
    # a block node whose inputs are scalars or text is read from its parsed templates.
    walked: list[str] = []
    original = dependencies_module.external_roots

    def counted(node: Any) -> set[str]:
        walked.append(node.id)
        return original(node)

    monkeypatch.setattr(dependencies_module, "external_roots", counted)
    plan = make_plan(
        node("a", value=1),
        node("b", value="${a.value}", label="text ${vars.x} and ${a.value}"),
        node("c", value="${b.value}-${a.value}", ratio=0.5, flag=None),
        node("d", value="$${b.value} is escaped"),
        node("e", value=[1, "${d.value}"]),  # a container: walked
    )

    found = cached_dependencies(plan.graph)

    assert found == {"a": set(), "b": {"a"}, "c": {"a", "b"}, "d": set(), "e": {"d"}}
    assert walked == ["e"]


def _loop(node_id: str, items: Any, body: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": node_id,
        "type": "loop",
        "foreach": {"input": items},
        "body": {"plan": {"graph": body, "exports": [{"from": "w.value", "as": "v"}]}},
        "out": {"collect": "v"},
    }


def test_dependencies_equal_the_general_walk_for_every_kind_of_node() -> None:
    plan = make_plan(
        node("a", value=1),
        node("b", value="${a.value}", when_={"expr": "${a.value} > 0"}),
        node("c", value={"nested": "${b.value}"}, n=3),
        node("d", value="${a.value", other="${b.value}"),  # bad syntax: skipped by the walk
        node("e", value="${vars.x}${env.HOME}${c.value}${missing.value}"),
        _loop("each", "${c.value}", [node("w", value="${item}${d.value}")]),
        {
            "id": "sub",
            "type": "subflow",
            "call": {"plan_id": "common/check", "inputs": {"x": "${each.v}"}},
            "out": {"exports": [{"from": "checked", "as": "ok"}]},
        },
        node("f", value="${sub.ok}", flag=True, ratio=1.5, none=None),
        node("g", value="plain text", other="${f.value}"),
    )

    assert cached_dependencies(plan.graph) == dependencies(plan.graph)
    assert cached_dependencies(plan.graph)["each"] == {"c", "d"}


def test_the_check_reads_each_plain_node_once_and_reports_cycles_as_before() -> None:
    # The pre-run check reads each plain node's templates once (its dependencies come
    # from that read) and finds a cycle without ordering an acyclic graph.
    from keiri_agent.plans.catalog.catalog import BlockCatalog
    from keiri_agent.plans.run import preflight

    catalog = BlockCatalog.discover([])
    read: list[str] = []
    original = preflight._plain_roots

    def counted(graph_node: Any) -> set[str] | None:
        read.append(graph_node.id)
        return original(graph_node)

    chain = make_plan(node("a", value=1), node("b", value="${a.value}"))
    cyclic = make_plan(
        node("a", value="${c.value}"),
        node("b", value="${a.value}"),
        node("c", value="${b.value}"),
        node("d", value="${d.value}"),
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(preflight, "_plain_roots", counted)
        chain_issues = preflight.check_graph(chain.graph, catalog)
    assert read == ["a", "b"]
    cycles = [i for i in preflight.check_graph(cyclic.graph, catalog) if i["code"] == "CYCLE"]
    assert cycles == [
        {"code": "CYCLE", "message": "ノードが循環しています: a → b → c → a", "node_id": ""}
    ]
    assert [issue["code"] for issue in chain_issues] == ["CATALOG_ERROR"] * 2


def test_the_cycle_check_agrees_with_the_topological_order() -> None:
    import random

    from keiri_agent.plans.dsl.dependencies import CycleError, is_acyclic, topological_order

    rng = random.Random(5)
    for _ in range(300):
        size = rng.randint(1, 8)
        ids = [f"n{i}" for i in range(size)]
        deps = {
            node_id: {rng.choice([*ids, "outside"]) for _ in range(rng.randint(0, 3))}
            for node_id in ids
        }
        try:
            topological_order(deps)
            expected = True
        except CycleError:
            expected = False
        assert is_acyclic(deps) is expected, deps
