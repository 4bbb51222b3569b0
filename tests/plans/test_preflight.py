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
