"""PlanValidator: one test per rule (code, node and path), the seed examples, 1,000 nodes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from keiri_agent.errors import PlanValidationError
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.validator import PlanValidator, ValidationIssue, ValidationReport
from keiri_agent.plans.dsl.dependencies import (
    CycleError,
    dependencies,
    find_cycles,
    topological_order,
)
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.store import PlanStore

DATA = Path(__file__).parent / "data"
UI = "ui.interactive_input@0.0.1"


@pytest.fixture(scope="module")
def catalog() -> BlockCatalog:
    return BlockCatalog.discover([DATA / "blocks"])


def make_plan(*nodes: dict[str, Any], **extra: Any) -> Plan:
    return Plan.model_validate(
        {"apiVersion": "v1", "id": "t", "version": "1.0.0", "graph": list(nodes), **extra}
    )


def template(node_id: str, text: str = "hi", **fields: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"id": node_id, "block": "text.template", "in": {"template": text}}
    node.update(fields)
    return node


def validate(
    catalog: BlockCatalog,
    plan: Plan,
    store: PlanStore | None = None,
    env: dict[str, str] | None = None,
) -> ValidationReport:
    return PlanValidator(catalog, store, env=env or {}).validate(plan)


def only(report: ValidationReport, code: str) -> ValidationIssue:
    found = [issue for issue in report.issues if issue.code == code]
    assert len(found) == 1, f"expected one {code}, got {[str(i) for i in report.issues]}"
    return found[0]


def codes(report: ValidationReport) -> set[str]:
    return {issue.code for issue in report.issues}


# --- blocks and ports ---------------------------------------------------------------


def test_unknown_block_names_close_matches(catalog: BlockCatalog) -> None:
    report = validate(catalog, make_plan({"id": "a", "block": "text.templte", "in": {}}))
    issue = only(report, "UNKNOWN_BLOCK")
    assert (issue.node_id, issue.path, issue.severity) == ("a", "graph[0].block", "error")
    assert "'text.template'" in issue.message


def test_block_version_out_of_range(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "a", "block": "text.template@^2", "in": {"template": "x"}})
    issue = only(validate(catalog, plan), "BLOCK_VERSION")
    assert (issue.node_id, issue.path) == ("a", "graph[0].block")
    assert "1.0.0" in issue.message


def test_unknown_input_suggests_the_port(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "a", "block": "text.template", "in": {"templat": "x"}})
    report = validate(catalog, plan)
    issue = only(report, "UNKNOWN_INPUT")
    assert (issue.node_id, issue.path) == ("a", "graph[0].in.templat")
    assert "'template' のことですか" in issue.message
    assert only(report, "MISSING_REQUIRED_INPUT").path == "graph[0].in"


def test_missing_required_input(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "a", "block": "text.join", "in": {"separator": ","}})
    issue = only(validate(catalog, plan), "MISSING_REQUIRED_INPUT")
    assert (issue.node_id, issue.path) == ("a", "graph[0].in")
    assert "'items'" in issue.message


def test_literal_that_does_not_fit_its_port(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "a", "block": "text.template", "in": {"template": 3}})
    issue = only(validate(catalog, plan), "INPUT_TYPE_MISMATCH")
    assert (issue.node_id, issue.path) == ("a", "graph[0].in.template")


def test_output_not_declared(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a", out={"txt": "t"}), exports=[{"from": "a.t", "as": "t"}])
    issue = only(validate(catalog, plan), "OUTPUT_NOT_DECLARED")
    assert (issue.node_id, issue.path) == ("a", "graph[0].out.txt")
    assert "'text' のことですか" in issue.message


def test_duplicate_alias(catalog: BlockCatalog) -> None:
    node = {"id": "a", "block": "test.numbers", "out": {"count": "x", "label": "x"}}
    issue = only(validate(catalog, make_plan(node)), "DUPLICATE_ALIAS")
    assert (issue.node_id, issue.path) == ("a", "graph[0].out.label")


def test_spec_ref_that_does_not_resolve(catalog: BlockCatalog) -> None:
    node = {"id": "a", "block": "test.bad_ref", "in": {"data": {"x": 1}}}
    issue = only(validate(catalog, make_plan(node)), "REF_UNRESOLVED")
    assert (issue.node_id, issue.path) == ("a", "graph[0].in.data")
    assert "missing.json" in issue.message


# --- ids and references -------------------------------------------------------------------


def test_api_version(catalog: BlockCatalog) -> None:
    plan = Plan.model_validate(
        {"apiVersion": "v9", "id": "t", "version": "1.0.0", "graph": [template("a")]}
    )
    issue = only(validate(catalog, plan), "API_VERSION")
    assert issue.path == "apiVersion" and "v1" in issue.message


def test_duplicate_node_id_at_top_level(catalog: BlockCatalog) -> None:
    issue = only(validate(catalog, make_plan(template("a"), template("a"))), "DUPLICATE_NODE_ID")
    assert (issue.node_id, issue.path) == ("a", "graph[1].id")


def test_loop_body_ids_must_not_clash_with_the_parent(catalog: BlockCatalog) -> None:
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [1, 2]},
        "body": {"plan": {"graph": [template("a")]}},
    }
    issue = only(validate(catalog, make_plan(template("a"), loop)), "DUPLICATE_NODE_ID")
    assert (issue.node_id, issue.path) == ("a", "graph[1].body.plan.graph[0].id")
    assert "graph[0]" in issue.message


def test_reference_syntax(catalog: BlockCatalog) -> None:
    issue = only(validate(catalog, make_plan(template("a", "x ${a..b}"))), "REFERENCE_SYNTAX")
    assert (issue.node_id, issue.path) == ("a", "graph[0].in.template")


BODY = {"graph": [template("inner", "${file}", out={"text": "t"})], "exports": []}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${missing.text}", "ノードまたは変数 'missing' は見つかりません"),
        ("${a.txt}", "ノード 'a' の出力 'txt' は見つかりません"),
        ("${vars.nme}", "'name' のことですか"),
        ("${file}", "ループ変数 'file' はループ 'each' の中"),
        ("${inner.t}", "ループ 'each' の中身 (body) にある"),
        ("${run.id}", "ノードまたは変数 'run' は見つかりません"),
        ("${env}", "環境変数を一つだけ指定"),
    ],
)
def test_unknown_reference(catalog: BlockCatalog, text: str, expected: str) -> None:
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [1], "itemVar": "file"},
        "body": {"plan": BODY},
    }
    plan = make_plan(template("a"), loop, template("b", text), vars={"name": "x"})
    issue = only(validate(catalog, plan), "UNKNOWN_REFERENCE")
    assert (issue.node_id, issue.path) == ("b", "graph[2].in.template")
    assert expected in issue.message


def test_reference_to_a_renamed_output_says_which_alias_to_use(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a", out={"text": "greeting"}), template("b", "${a.text}"))
    issue = only(validate(catalog, plan), "UNKNOWN_REFERENCE")
    assert "別名 'greeting' で出ています" in (issue.hint or "")


def test_body_may_use_enclosing_nodes_but_not_its_own_loop(catalog: BlockCatalog) -> None:
    body = {
        "graph": [template("inner", "${a.text} ${each.result}", out={"text": "t"})],
        "exports": [{"from": "inner.t", "as": "result"}],
    }
    loop = {"id": "each", "type": "loop", "foreach": {"input": [1]}, "body": {"plan": body}}
    issue = only(validate(catalog, make_plan(template("a"), loop)), "UNKNOWN_REFERENCE")
    assert (issue.node_id, issue.path) == ("inner", "graph[1].body.plan.graph[0].in.template")
    assert "そのループ自身の出力" in issue.message


def test_env_reference_warns_when_the_variable_is_not_set(catalog: BlockCatalog) -> None:
    plan = make_plan(
        template("a", "${env.KEIRI_TEST_TOKEN}"), exports=[{"from": "a.text", "as": "x"}]
    )
    issue = only(validate(catalog, plan), "ENV_NOT_SET")
    assert (issue.severity, issue.node_id, issue.path) == ("warning", "a", "graph[0].in.template")
    assert validate(catalog, plan, env={"KEIRI_TEST_TOKEN": "x"}).issues == ()


def test_vars_may_only_reference_env_config_and_vars(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a", "${vars.x}"), vars={"x": "${a.text}", "y": "${config.k}"})
    issue = only(validate(catalog, plan), "UNKNOWN_REFERENCE")
    assert issue.path == "vars.x"


# --- types ------------------------------------------------------------------------------


def numbers(node_id: str, **inputs: Any) -> dict[str, Any]:
    return {"id": node_id, "block": "test.numbers", "in": inputs}


@pytest.mark.parametrize(
    ("port", "reference"),
    [
        ("count", "${src.label}"),  # string -> integer
        ("label", "${src.count}"),  # integer -> string
        ("label", "${src.summary.total}"),  # a known property's type
        ("label", "${src.files.length}"),  # .length is an integer
        ("flags", "${src.summary}"),  # object -> array
        ("count", "n=${src.count}"),  # text with a reference is text
    ],
)
def test_type_incompatible(catalog: BlockCatalog, port: str, reference: str) -> None:
    plan = make_plan(numbers("src"), numbers("dst", **{port: reference}))
    issue = only(validate(catalog, plan), "TYPE_INCOMPATIBLE")
    assert (issue.node_id, issue.path) == ("dst", f"graph[1].in.{port}")


@pytest.mark.parametrize(
    ("port", "reference"),
    [
        ("ratio", "${src.count}"),  # integer -> number
        ("count", "${src.summary.unknown_key}"),  # not knowable: no error
        ("label", "${src.summary.files[0]}"),  # array items: string
        ("maybe", "${src.count}"),  # nullable integer port
        ("label", "${src.files[0].name}"),
    ],
)
def test_compatible_or_unknowable_types_pass(
    catalog: BlockCatalog, port: str, reference: str
) -> None:
    plan = make_plan(numbers("src"), numbers("dst", **{port: reference}))
    assert "TYPE_INCOMPATIBLE" not in codes(validate(catalog, plan))


def test_foreach_input_must_be_a_list(catalog: BlockCatalog) -> None:
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${src.count}"},
        "body": {"plan": {"graph": [{"id": "n", "block": "test.notify", "in": {"message": "x"}}]}},
    }
    issue = only(validate(catalog, make_plan(numbers("src"), loop)), "TYPE_INCOMPATIBLE")
    assert (issue.node_id, issue.path) == ("each", "graph[1].foreach.input")


# --- graph ------------------------------------------------------------------------------


def test_cycle_names_the_nodes_in_order(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a", "${b.text}"), template("b", "${a.text}"), template("c"))
    issue = only(validate(catalog, plan), "CYCLE")
    assert (issue.node_id, issue.path) == ("a", "graph[0]")
    assert "a → b → a" in issue.message


def test_self_reference_is_a_cycle(catalog: BlockCatalog) -> None:
    issue = only(validate(catalog, make_plan(template("a", "${a.text}"))), "CYCLE")
    assert "a → a" in issue.message


def test_cycle_through_a_loop_body(catalog: BlockCatalog) -> None:
    body = {
        "graph": [template("inner", "${after.text}", out={"text": "t"})],
        "exports": [{"from": "inner.t", "as": "r"}],
    }
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [1]},
        "body": {"plan": body},
        "out": {"collect": "r"},
    }
    plan = make_plan(loop, template("after", "${each.r}"))
    assert "each → after → each" in only(validate(catalog, plan), "CYCLE").message


def test_unused_node_is_a_warning_unless_it_is_a_sink(catalog: BlockCatalog) -> None:
    plan = make_plan(
        template("lonely"),
        {"id": "notify", "block": "test.notify", "in": {"message": "x"}},
        {"id": "ask", "block": UI, "in": {"mode": "confirm"}},
    )
    report = validate(catalog, plan)
    issue = only(report, "UNUSED_NODE")
    assert (issue.severity, issue.node_id, issue.path) == ("warning", "lonely", "graph[0]")
    assert report.ok


def test_unused_output_alias(catalog: BlockCatalog) -> None:
    node = {"id": "src", "block": "test.numbers", "out": {"count": "n", "label": "l"}}
    plan = make_plan(node, template("b", "${src.n}"), exports=[{"from": "b.text", "as": "x"}])
    issue = only(validate(catalog, plan), "UNUSED_OUTPUT")
    assert (issue.severity, issue.node_id, issue.path) == ("warning", "src", "graph[0].out.label")
    assert issue.message == "ノード 'src' の出力 'l' はどこからも使われていません"
    assert issue.hint == "使わないなら out から消してください"


def test_every_issue_a_user_reads_is_japanese(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "a", "block": "text.templte", "in": {"template": "x"}},
        template("b", "${missing.text}"),
        template("b"),
        {"id": "src", "block": "test.numbers", "out": {"count": "n", "label": "l"}},
        template("c", "${src.n}"),
        exports=[{"from": "c.text", "as": "x"}],
    )
    report = validate(catalog, plan)
    assert {"UNKNOWN_BLOCK", "UNKNOWN_REFERENCE", "DUPLICATE_NODE_ID", "UNUSED_OUTPUT"} <= set(
        report.codes()
    )
    japanese = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    for issue in report.issues:
        assert japanese.search(issue.message), issue
        assert issue.hint is None or japanese.search(issue.hint), issue


# --- UI and policy -------------------------------------------------------------------------


def test_layout_unknown_missing_and_duplicate_nodes(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "ask", "block": UI, "in": {"mode": "confirm"}},
        {"id": "ask2", "block": UI, "in": {"mode": "confirm"}},
        ui={"layout": ["ask", "ghost", "ask"]},
    )
    report = validate(catalog, plan)
    unknown = only(report, "LAYOUT_UNKNOWN_NODE")
    assert (unknown.path, unknown.severity) == ("ui.layout[1]", "error")
    missing = only(report, "LAYOUT_MISSING_NODE")
    assert (missing.node_id, missing.severity) == ("ask2", "warning")
    assert only(report, "LAYOUT_DUPLICATE_NODE").path == "ui.layout[2]"


def test_empty_layout_does_not_warn(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "ask", "block": UI, "in": {"mode": "confirm"}})
    assert validate(catalog, plan).issues == ()


def requirement(field_id: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"id": field_id, "type": kind, "label": field_id, **extra}


def test_requirements_duplicate_id(catalog: BlockCatalog) -> None:
    node = {
        "id": "ask",
        "block": UI,
        "in": {"requirements": [requirement("f", "file"), requirement("f", "file")]},
    }
    issue = only(validate(catalog, make_plan(node)), "REQUIREMENTS_DUPLICATE_ID")
    assert (issue.node_id, issue.path) == ("ask", "graph[0].in.requirements[1].id")


def test_requirements_type_conflict_across_nodes(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "one", "block": UI, "in": {"requirements": [requirement("amount", "number")]}},
        {"id": "two", "block": UI, "in": {"requirements": [requirement("amount", "text")]}},
    )
    issue = only(validate(catalog, plan), "REQUIREMENTS_TYPE_CONFLICT")
    assert (issue.node_id, issue.path) == ("two", "graph[1].in.requirements[0].type")
    assert "'one'" in issue.message


def test_requirements_unknown_type_and_select_without_options(catalog: BlockCatalog) -> None:
    node = {
        "id": "ask",
        "block": UI,
        "in": {"requirements": [requirement("a", "fil"), requirement("b", "select")]},
    }
    report = validate(catalog, make_plan(node))
    unknown = only(report, "REQUIREMENTS_UNKNOWN_TYPE")
    assert unknown.path == "graph[0].in.requirements[0].type"
    assert "'file' のことですか" in unknown.message
    assert only(report, "REQUIREMENTS_MISSING_OPTIONS").path == (
        "graph[0].in.requirements[1].options"
    )


def test_concurrency_per_node(catalog: BlockCatalog) -> None:
    plan = make_plan(
        template("a"),
        exports=[{"from": "a.text", "as": "x"}],
        policy={"concurrency": {"per_node": {"ghost": 2, "a": 1}}},
    )
    report = validate(catalog, plan)
    assert only(report, "CONCURRENCY_UNKNOWN_NODE").path == "policy.concurrency.per_node.ghost"


# --- conditions and loops -------------------------------------------------------------------


def test_when_condition_syntax(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a", when={"expr": "${vars.x} >"}), vars={"x": 1})
    issue = only(validate(catalog, plan), "CONDITION_SYNTAX")
    assert (issue.node_id, issue.path) == ("a", "graph[0].when.expr")


def test_when_references_are_checked_and_create_edges(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a", when={"expr": "${b.text} != ''"}), template("b", "${a.text}"))
    assert "CYCLE" in codes(validate(catalog, plan))


def test_while_condition_syntax_and_scope(catalog: BlockCatalog) -> None:
    body = {
        "graph": [{"id": "ask", "block": UI, "in": {"mode": "confirm"}, "out": {"approved": "ok"}}],
        "exports": [{"from": "ask.ok", "as": "approved"}],
    }
    good = {
        "id": "loop",
        "type": "loop",
        "body": {"plan": body},
        "while": {
            "condition": {"expr": "${ask.ok} != true and ${approved} != true"},
            "max_iterations": 3,
        },
    }
    assert validate(catalog, make_plan(good)).issues == ()
    bad = {**good, "while": {"condition": {"expr": "${ask.ok} !="}, "max_iterations": 3}}
    issue = only(validate(catalog, make_plan(bad)), "CONDITION_SYNTAX")
    assert (issue.node_id, issue.path) == ("loop", "graph[0].while.condition.expr")


def test_while_missing_max_iterations_from_yaml() -> None:
    text = """
apiVersion: v1
id: t
version: 1.0.0
graph:
  - id: again
    type: loop
    while:
      condition: {expr: "true"}
    body: {plan: {graph: [{id: a, block: text.template, in: {template: x}}]}}
"""
    with pytest.raises(PlanValidationError) as caught:
        load_plan_text(text)
    issue = caught.value.issues[0]
    assert (issue.code, issue.node_id, issue.path) == (
        "WHILE_MISSING_MAX",
        "again",
        "graph[0].while.max_iterations",
    )
    assert issue.line == 9  # the "while:" line (the text starts with a newline)


def loop_node(body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [1, 2]},
        "body": {"plan": body},
        **extra,
    }


def test_loop_export_unknown(catalog: BlockCatalog) -> None:
    body = {
        "graph": [template("inner", out={"text": "t"})],
        "exports": [
            {"from": "ghost.t", "as": "a"},
            {"from": "inner.x", "as": "b"},
            {"from": "inner.t", "as": "c"},
        ],
    }
    plan = make_plan(loop_node(body, out={"collect": "d"}))
    found = [i for i in validate(catalog, plan).issues if i.code == "LOOP_EXPORT_UNKNOWN"]
    assert [(i.node_id, i.path) for i in found] == [
        ("each", "graph[0].out.collect"),
        ("each", "graph[0].body.plan.exports[0].from"),
        ("each", "graph[0].body.plan.exports[1].from"),
    ]


def test_collect_on_a_while_loop_is_ignored(catalog: BlockCatalog) -> None:
    body = {"graph": [{"id": "ask", "block": UI, "in": {"mode": "confirm"}}]}
    node = {
        "id": "again",
        "type": "loop",
        "body": {"plan": body},
        "out": {"collect": "x"},
        "while": {"condition": {"expr": "${ask.approved} != true"}, "max_iterations": 2},
    }
    issue = only(validate(catalog, make_plan(node)), "LOOP_COLLECT_IGNORED")
    assert issue.severity == "warning"


def test_loop_variable_that_hides_a_node(catalog: BlockCatalog) -> None:
    body = {
        "graph": [template("inner", "${a}", out={"text": "t"})],
        "exports": [{"from": "inner.t", "as": "r"}],
    }
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [1], "itemVar": "a"},
        "body": {"plan": body},
        "out": {"collect": "r"},
    }
    plan = make_plan(template("a"), loop, exports=[{"from": "each.r", "as": "r"}])
    issue = only(validate(catalog, plan), "LOOP_VAR_CONFLICT")
    assert (issue.node_id, issue.path) == ("each", "graph[1].foreach.itemVar")


def test_plan_export_unknown(catalog: BlockCatalog) -> None:
    plan = make_plan(template("a"), exports=[{"from": "a.txt", "as": "x"}])
    issue = only(validate(catalog, plan), "PLAN_EXPORT_UNKNOWN")
    assert issue.path == "exports[0].from"


# --- subflows --------------------------------------------------------------------------


CALLED = """
apiVersion: v1
id: called
version: 1.0.0
vars: {name: world}
graph:
  - {id: greet, block: text.template, in: {template: "hello {n}", values: {n: "${vars.name}"}}}
exports:
  - {from: greet.text, as: greeting}
"""


@pytest.fixture()
def store(tmp_path: Path) -> PlanStore:
    designs = tmp_path / "designs"
    (designs / "common").mkdir(parents=True)
    (designs / "common" / "called.yaml").write_text(CALLED, encoding="utf-8")
    return PlanStore(designs)


def subflow(plan_id: str = "common/called", **fields: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"id": "sub", "type": "subflow", "call": {"plan_id": plan_id}}
    node.update(fields)
    return node


def test_subflow_checks_pass_for_a_good_call(catalog: BlockCatalog, store: PlanStore) -> None:
    node = subflow(
        call={"plan_id": "common/called", "inputs": {"name": "you"}},
        out={"exports": [{"from": "greeting", "as": "hello"}]},
    )
    plan = make_plan(
        node, template("use", "${sub.hello}"), exports=[{"from": "use.text", "as": "x"}]
    )
    assert validate(catalog, plan, store).issues == ()


def test_subflow_not_found(catalog: BlockCatalog, store: PlanStore) -> None:
    issue = only(validate(catalog, make_plan(subflow("common/caled")), store), "SUBFLOW_NOT_FOUND")
    assert (issue.node_id, issue.path) == ("sub", "graph[0].call.plan_id")
    assert "common/called" in issue.message
    assert "SUBFLOW_NOT_FOUND" in codes(validate(catalog, make_plan(subflow())))  # no store


def test_subflow_path_leaving_designs(catalog: BlockCatalog, store: PlanStore) -> None:
    issue = only(validate(catalog, make_plan(subflow("../secrets")), store), "SUBFLOW_PATH")
    assert issue.node_id == "sub"


def test_subflow_invalid_reports_the_called_plans_errors(
    catalog: BlockCatalog, store: PlanStore
) -> None:
    bad = CALLED.replace("text.template", "text.templte")
    (store.designs_dir / "broken.yaml").write_text(bad, encoding="utf-8")
    issue = only(validate(catalog, make_plan(subflow("broken")), store), "SUBFLOW_INVALID")
    assert issue.node_id == "sub"
    assert issue.message.startswith("sub → Plan 'broken': [UNKNOWN_BLOCK] greet")


def test_subflow_cycle(catalog: BlockCatalog, store: PlanStore) -> None:
    (store.designs_dir / "a.yaml").write_text(
        "apiVersion: v1\nid: a\nversion: 1.0.0\n"
        "graph: [{id: call_b, type: subflow, call: {plan_id: b}}]\n",
        encoding="utf-8",
    )
    (store.designs_dir / "b.yaml").write_text(
        "apiVersion: v1\nid: b\nversion: 1.0.0\n"
        "graph: [{id: call_a, type: subflow, call: {plan_id: a}}]\n",
        encoding="utf-8",
    )
    report = validate(catalog, store.load("a"), store)
    assert "SUBFLOW_INVALID" in codes(report)
    assert "[SUBFLOW_CYCLE]" in report.errors[0].message
    assert "a → b → a" in report.errors[0].message
    itself = make_plan(subflow("self_call")).model_copy(update={"id": "self_call"})
    assert "SUBFLOW_CYCLE" in codes(validate(catalog, itself, store))


def test_subflow_input_and_export_unknown(catalog: BlockCatalog, store: PlanStore) -> None:
    node = subflow(
        call={"plan_id": "common/called", "inputs": {"nmae": "x"}},
        out={"exports": [{"from": "greting", "as": "g"}]},
    )
    report = validate(catalog, make_plan(node), store)
    unknown_input = only(report, "SUBFLOW_INPUT_UNKNOWN")
    assert unknown_input.path == "graph[0].call.inputs.nmae"
    assert "'name' のことですか" in unknown_input.message
    unknown_export = only(report, "SUBFLOW_EXPORT_UNKNOWN")
    assert unknown_export.path == "graph[0].out.exports[0].from"
    assert "'greeting' のことですか" in unknown_export.message


# --- the report ---------------------------------------------------------------------------


def test_every_issue_is_collected_and_reported(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "a", "block": "text.templte"},
        template("b", "${ghost.x}", when={"expr": "1 +"}),
        {"id": "c", "block": "text.join", "in": {"itemz": []}},
        ui={"layout": ["nowhere"]},
    )
    report = validate(catalog, plan)
    assert {
        "UNKNOWN_BLOCK",
        "UNKNOWN_REFERENCE",
        "CONDITION_SYNTAX",
        "UNKNOWN_INPUT",
        "MISSING_REQUIRED_INPUT",
        "LAYOUT_UNKNOWN_NODE",
    } <= codes(report)
    assert not report.ok
    json.dumps(report.to_dict())
    with pytest.raises(PlanValidationError) as caught:
        report.raise_for_errors()
    assert caught.value.issues == list(report.issues)
    assert caught.value.details["issues"][0]["code"] == "UNKNOWN_BLOCK"
    json.dumps(caught.value.to_dict())


def test_warnings_do_not_fail_the_report(catalog: BlockCatalog) -> None:
    report = validate(catalog, make_plan(template("a")))
    assert (
        report.ok and report.errors == [] and [w.code for w in report.warnings] == ["UNUSED_NODE"]
    )
    report.raise_for_errors()


@pytest.mark.parametrize(
    "plan_id",
    ["invoice_reconciliation", "loop_examples", "subflow_caller", "common/validation_flow"],
)
def test_seed_examples_validate_cleanly(catalog: BlockCatalog, plan_id: str) -> None:
    store = PlanStore(DATA / "designs")
    report = validate(catalog, store.load(plan_id), store)
    assert report.issues == (), [str(issue) for issue in report.issues]


# --- graph helpers and performance ------------------------------------------------------------


def test_dependencies_and_topological_order() -> None:
    body = {
        "graph": [template("inner", "${first.text} ${file}", out={"text": "t"})],
        "exports": [{"from": "inner.t", "as": "r"}],
    }
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${vars.items}", "itemVar": "file"},
        "body": {"plan": body},
        "out": {"collect": "r"},
    }
    plan = make_plan(template("last", "${each.r}"), loop, template("first"), vars={"items": [1]})
    deps = dependencies(plan)
    assert deps == {"last": {"each"}, "each": {"first"}, "first": set()}
    assert topological_order(deps) == ["first", "each", "last"]
    assert dependencies(plan.graph[1].body.plan) == {"inner": set()}  # type: ignore[union-attr]


def test_topological_order_raises_with_the_cycle() -> None:
    deps = {"a": {"c"}, "b": {"a"}, "c": {"b"}, "d": set()}
    with pytest.raises(CycleError) as caught:
        topological_order(deps)
    assert caught.value.cycle == ["a", "b", "c", "a"]
    assert find_cycles({"x": {"x"}, "y": set()}) == [["x", "x"]]


def big_plan(size: int) -> Plan:
    graph = [template("n0", "start {x}", when={"expr": "${vars.on} == true"})]
    for i in range(1, size):
        graph.append(
            {
                "id": f"n{i}",
                "block": "text.template",
                "when": {"expr": f"${{n{i - 1}.text.length}} > 0"},
                "in": {
                    "template": "{a} {b}",
                    "values": {"a": f"${{n{i - 1}.text}}", "b": f"${{n{max(0, i - 7)}.text}}"},
                },
            }
        )
    return make_plan(*graph, vars={"on": True}, exports=[{"from": f"n{size - 1}.text", "as": "x"}])


def test_a_thousand_node_plan_validates_cleanly(catalog: BlockCatalog) -> None:
    # Its speed is measured by benchmarks/plan_validation.py, not asserted here.
    plan = big_plan(1000)
    validator = PlanValidator(catalog, env={})
    assert validator.validate(plan).issues == ()


# --- var titles (ui.vars) -----------------------------------------------------------


def test_var_titles_load_and_validate(catalog: BlockCatalog) -> None:
    plan = make_plan(
        template("a", "${vars.limit}"),
        vars={"limit": "1000"},
        ui={"vars": {"limit": {"title": "上限金額", "description": "これを超えると一覧に出ます"}}},
    )
    assert plan.ui.vars["limit"].title == "上限金額"
    assert plan.ui.vars["limit"].description == "これを超えると一覧に出ます"
    assert [i for i in validate(catalog, plan).issues if i.severity == "error"] == []


def test_var_title_of_an_unknown_var_is_reported(catalog: BlockCatalog) -> None:
    plan = make_plan(
        template("a", "${vars.limit}"),
        vars={"limit": "1000"},
        ui={"vars": {"limt": {"title": "上限金額"}}},
    )
    issue = only(validate(catalog, plan), "UNKNOWN_REFERENCE")
    assert (issue.path, issue.severity) == ("ui.vars.limt", "error")
    assert issue.details.closest == "limit"
    assert "limt" in issue.message


@pytest.mark.parametrize(
    "info", [{"title": ""}, {"title": "x" * 201}, {"label": "上限"}, "上限金額"]
)
def test_var_titles_are_checked(info: Any) -> None:
    with pytest.raises(ValidationError):
        make_plan(template("a"), vars={"limit": 1}, ui={"vars": {"limit": info}})
