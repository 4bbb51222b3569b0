"""The LLM pre-flight: nodes whose block needs an LLM, said before a run (issue 16 item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import PlanValidationError
from keiri_agent.plans.check.llm_needs import llm_needs, llm_preflight
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.issues import IssueCode

PLAN = """\
apiVersion: v1
id: llm_demo
title: 分類のデモ
version: 0.1.0
vars: {classify: false}
graph:
  - id: rows
    block: text.template
    in: {template: "x", values: {}}
    out: {text: text}
  - id: always
    title: 常に分類
    block: ai.classify
    in: {records: [{摘要: "${rows.text}"}], labels: [会議費]}
    out: {records: rows}
  - id: by_var
    block: ai.process_llm
    when: {expr: "${vars.classify} == true"}
    in: {evidence_data: {files: []}, instruction: 抜き出す, output_schema: {type: object}}
  - id: by_data
    block: ai.classify
    when: {expr: "${rows.text} == 'y'"}
    in: {records: [{摘要: a}], labels: [会議費]}
    out: {records: rows}
"""


@pytest.fixture
def engine(keiri_home: Path) -> PlanEngine:
    return PlanEngine(Settings())  # no LLM configured in the test environment


def test_the_catalog_knows_which_blocks_need_an_llm(engine: PlanEngine) -> None:
    assert engine.catalog.resolve("ai.classify").needs_llm
    assert engine.catalog.resolve("ai.process_llm").needs_llm
    assert not engine.catalog.resolve("text.template").needs_llm
    assert engine.catalog.resolve("ai.classify").to_summary()["needs_llm"] is True


def test_preflight_separates_what_will_and_what_may_call_the_llm(engine: PlanEngine) -> None:
    needs = llm_needs(load_plan_text(PLAN), engine.catalog)
    assert [need.path for need in needs] == ["always", "by_var", "by_data"]
    assert needs[0].title == "常に分類"

    certain, possible = llm_preflight(needs, {"classify": False})
    assert [n.path for n in certain] == ["always"]
    assert [n.path for n in possible] == ["by_data"]
    certain, _ = llm_preflight(needs, {"classify": True})
    assert [n.path for n in certain] == ["always", "by_var"]


def test_validate_and_dry_run_warn_with_a_code_when_no_llm_is_configured(
    engine: PlanEngine,
) -> None:
    plan = load_plan_text(PLAN)
    report = engine.validate(plan)
    warned = [i for i in report.warnings if i.code == IssueCode.LLM_NOT_CONFIGURED]
    assert [i.node_id for i in warned] == ["always", "by_data"]  # by_var: off by default
    assert "常に分類" in warned[0].message and "LLM" in warned[0].message
    assert warned[0].hint and report.ok  # a warning: the plan itself is fine
    dry = engine.dry_run(plan, vars={"classify": True})
    assert [w.path for w in dry.warnings] == ["always", "by_var", "by_data"]
    assert dry.to_dict()["warnings"][0]["code"] == "LLM_NOT_CONFIGURED"


def test_no_warning_when_an_llm_is_configured(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    engine = PlanEngine(Settings())
    assert not engine.settings.llm.is_offline
    plan = load_plan_text(PLAN)
    assert IssueCode.LLM_NOT_CONFIGURED not in engine.validate(plan).codes()
    assert engine.dry_run(plan).warnings == []


def test_titles_are_validated() -> None:
    with pytest.raises(PlanValidationError):
        load_plan_text(PLAN.replace("title: 常に分類", 'title: ""'))
    plan = load_plan_text(
        PLAN + "exports: [{from: always.rows, as: rows, title: 分類結果, description: 説明}]\n"
    )
    assert plan.title == "分類のデモ"
    assert plan.exports[0].title == "分類結果"
