"""Run-time errors a back-office user reads (RunResult.errors, form answer errors) are Japanese."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.runner import PlanRunner

CATALOG = BlockCatalog.discover()
KANA = re.compile(r"[\u3040-\u30ff]")
"""Hiragana or katakana: a Japanese sentence has some (the test data below has none)."""


def no_subflows(plan_id: str) -> Plan:
    raise AssertionError(f"no subflow expected (asked for {plan_id!r})")


def one_node(block: str, inputs: str) -> Plan:
    return load_plan_text(
        f"""
apiVersion: v1
id: ja_messages
version: 0.1.0
graph:
  - id: step
    block: {block}
    in: {inputs}
"""
    )


def run(tmp_path: Path, plan: Plan, answers: dict[str, Any] | None = None) -> Any:
    runner = PlanRunner(
        CATALOG, Settings(), runs_dir=tmp_path / "runs", plan_loader=no_subflows, env={}
    )
    return runner.start(plan, answers=answers)


@pytest.mark.parametrize(
    ("block", "inputs", "code"),
    [
        pytest.param(
            "table.filter",
            "{records: [{金額: 1}], conditions: [{col: 金額, op: '~', value: 1}]}",
            "INPUT_VALIDATION_FAILED",
            id="bad-filter-op",
        ),
        pytest.param(
            "text.join", "{items: [a, b], separator: 3}", "INPUT_VALIDATION_FAILED", id="wrong-type"
        ),
        pytest.param(
            "table.sort",
            "{records: [{金額: 1, 部門: A}], by: [金]}",
            "INPUT_VALIDATION_FAILED",
            id="missing-column",
        ),
        pytest.param(
            "table.aggregate",
            "{records: [{金額: 1, 部門: A}], metrics: {部門: [sum]}}",
            "INPUT_VALIDATION_FAILED",
            id="sum-of-text",
        ),
    ],
)
def test_failed_node_message_and_hint_are_japanese(
    tmp_path: Path, block: str, inputs: str, code: str
) -> None:
    result = run(tmp_path, one_node(block, inputs))
    assert result.status == "failed"
    [error] = result.errors
    assert error["code"] == code
    assert KANA.search(error["message"]), error["message"]
    assert error["hint"] and KANA.search(error["hint"]), error["hint"]


def test_bad_answer_in_a_form_is_explained_in_japanese(tmp_path: Path) -> None:
    plan = one_node(
        "ui.interactive_input",
        "{mode: collect, requirements: [{id: amount, type: number, label: 金額},"
        " {id: kind, type: select, label: 区分, options: [A, B]}]}",
    )
    result = run(tmp_path, plan, answers={"step": {"amount": "many", "kind": "C", "x": 1}})
    assert result.status == "paused"
    [waiting] = result.waiting
    errors = waiting["request"]["errors"]
    assert set(errors) == {"amount", "kind", "x"}
    for field, text in errors.items():
        assert KANA.search(text), (field, text)
