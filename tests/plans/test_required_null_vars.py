"""REQUIRED_INPUT_NULL_VAR: a required block input fed by a var without a value.

``plan validate`` and the dry run agree on it; a run checks the vars it is given
(``plan run --var``), so a null var given a value at run time runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import PlanValidationError
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.issues import ValidationIssue, ValidationReport

HEAD = "apiVersion: v1\nid: t\nversion: 1.0.0\n"
CODE = "REQUIRED_INPUT_NULL_VAR"  # an IssueCode (a StrEnum) equals its string

GREETING = HEAD + (
    "vars: {label: null}\n"
    "graph:\n"
    "  - id: greet\n"
    "    title: あいさつ文\n"
    "    block: text.template\n"
    '    in: {template: "${vars.label}"}\n'
    "exports: [{from: greet.text, as: text}]\n"
)


@pytest.fixture
def engine(keiri_home: Path) -> PlanEngine:
    return PlanEngine(Settings(), env={})


def null_var_issues(report: ValidationReport) -> list[ValidationIssue]:
    return [issue for issue in report.issues if issue.code == CODE]


def test_a_null_var_feeding_a_required_input_is_an_error_the_dry_run_agrees_with(
    engine: PlanEngine,
) -> None:
    report = engine.check(GREETING)
    [issue] = null_var_issues(report)
    assert not report.ok and issue.severity == "error"
    details = issue.details
    assert (details.node, details.input, details.var) == ("greet", "template", "label")
    assert (details.path, details.name) == ("graph[0].in.template", "label")
    assert details.line == 9  # located in the text like every validator issue
    for word in ("あいさつ文", "greet", "template", "label"):
        assert word in issue.message
    assert issue.hint is not None and "--var label=" in issue.hint and "設計" in issue.hint
    assert not engine.dry_run(load_plan_text(GREETING)).ok


@pytest.mark.parametrize(
    ("vars_text", "var"),
    [
        ("{first: null, label: '${vars.first}'}", "label"),  # resolves to null
        ("{label: ~}", "label"),
    ],
)
def test_a_var_that_resolves_to_null_is_reported(
    engine: PlanEngine, vars_text: str, var: str
) -> None:
    text = GREETING.replace("vars: {label: null}", f"vars: {vars_text}")
    [issue] = null_var_issues(engine.check(text))
    assert issue.details.var == var


def test_only_inputs_whose_port_refuses_null_are_reported(engine: PlanEngine) -> None:
    text = HEAD + (
        "vars: {csv_file: null, columns: null, records: null}\n"
        "graph:\n"
        "  - id: read\n"
        "    block: csv.read\n"
        '    in: {file: "${vars.csv_file}", columns: "${vars.columns}"}\n'
        "  - id: write\n"
        "    block: csv.write\n"
        '    in: {records: "${vars.records}"}\n'
        "exports: [{from: read.records, as: records}, {from: write.csv, as: csv}]\n"
    )
    issues = null_var_issues(engine.check(text))
    # columns is optional (and nullable); file has no JSON type (bytes), so the dry run
    # passes it and the block says what it needs at run time: only records is at fault
    assert [(i.details.node, i.details.input, i.details.var) for i in issues] == [
        ("write", "records", "records")
    ]


def test_inputs_from_an_interactive_input_and_vars_with_values_are_not_reported(
    engine: PlanEngine,
) -> None:
    text = HEAD + (
        "vars: {label: こんにちは, unused: null}\n"
        "graph:\n"
        "  - id: ask\n"
        "    block: ui.interactive_input\n"
        "    in:\n"
        "      mode: collect\n"
        "      message: CSV を選んでください\n"
        "      requirements: [{id: csv_file, type: file, label: CSV}]\n"
        "    out: {collected_data: collected}\n"
        "  - id: read\n"
        "    block: csv.read\n"
        '    in: {file: "${ask.collected.csv_file}"}\n'
        "  - id: greet\n"
        "    block: text.template\n"
        '    in: {template: "${vars.label}"}\n'
        "exports: [{from: read.records, as: records}, {from: greet.text, as: text}]\n"
    )
    report = engine.check(text)
    assert report.ok, [str(issue) for issue in report.issues]


def test_a_null_var_inside_a_loop_body_is_reported_with_the_body_path(
    engine: PlanEngine,
) -> None:
    text = HEAD + (
        "vars: {items: [a, b], label: null}\n"
        "graph:\n"
        "  - id: each\n"
        "    type: loop\n"
        '    foreach: {input: "${vars.items}", itemVar: item}\n'
        "    body:\n"
        "      plan:\n"
        "        graph:\n"
        "          - id: greet\n"
        "            block: text.template\n"
        '            in: {template: "${vars.label}"}\n'
        "        exports: [{from: greet.text, as: text}]\n"
        "    out: {collect: text}\n"
        "exports: [{from: each.text, as: texts}]\n"
    )
    [issue] = null_var_issues(engine.check(text))
    assert issue.details.node == "greet"
    assert issue.details.path == "graph[0].body.plan.graph[0].in.template"


def test_a_called_plan_given_the_var_by_its_caller_is_not_reported(
    engine: PlanEngine, keiri_home: Path
) -> None:
    designs = keiri_home / "designs"
    designs.mkdir(exist_ok=True)
    (designs / "greeting.yaml").write_text(GREETING.replace("id: t", "id: greeting"), "utf-8")
    text = HEAD + (
        "graph:\n"
        "  - id: call\n"
        "    type: subflow\n"
        "    call: {plan_id: greeting, inputs: {label: こんにちは}}\n"
    )
    report = engine.check(text)
    assert report.ok, [str(issue) for issue in report.issues]


def test_a_run_checks_the_vars_it_is_given(engine: PlanEngine) -> None:
    plan = load_plan_text(GREETING)
    with pytest.raises(PlanValidationError) as raised:
        engine.run(plan)
    assert CODE in [issue.code for issue in raised.value.issues]
    with pytest.raises(PlanValidationError):
        engine.run(plan, vars={"label": None})
    result = engine.run(plan, vars={"label": "こんにちは"})
    assert result.status == "success", result.errors
    assert result.outputs["greet"]["text"] == "こんにちは"
    assert engine.validate(plan, vars={"label": "こんにちは"}).ok
