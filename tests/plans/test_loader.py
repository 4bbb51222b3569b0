"""Loading Plan YAML: every problem as an issue with a code, a path, a line and a hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.errors import PlanValidationError, UserInputError
from keiri_agent.plans.dsl.loader import MAX_PLAN_BYTES, load_plan_file, load_plan_text
from keiri_agent.plans.dsl.models import BlockNode, LoopNode
from keiri_agent.plans.issues import ValidationIssue

GOOD = """\
apiVersion: v1
id: greet
version: 0.1.0
vars:
  name: 山田
graph:
  - id: hello
    block: text.template
    in:
      template: "こんにちは {name}"
      values: {name: "${vars.name}"}
    out:
      text: greeting
"""


def load_issues(text: str) -> list[ValidationIssue]:
    with pytest.raises(PlanValidationError) as caught:
        load_plan_text(text, source="plan.yaml")
    assert "plan.yaml" in caught.value.message
    json.dumps(caught.value.to_dict())  # details are JSON-compatible
    return list(caught.value.issues)


def only(issues: list[ValidationIssue], code: str) -> ValidationIssue:
    found = [issue for issue in issues if issue.code == code]
    assert len(found) == 1, [str(issue) for issue in issues]
    return found[0]


def test_a_good_plan_loads() -> None:
    plan = load_plan_text(GOOD)
    assert (plan.id, plan.version, plan.vars) == ("greet", "0.1.0", {"name": "山田"})
    node = plan.graph[0]
    assert isinstance(node, BlockNode)
    assert node.outputs == {"text": "greeting"}


def test_yaml_syntax_error_has_the_line() -> None:
    issue = only(load_issues("apiVersion: v1\nid: x\ngraph: [\n  {id: a\n"), "YAML_SYNTAX")
    assert issue.line is not None and issue.line >= 3
    assert issue.hint


def test_more_than_one_document_is_a_syntax_error() -> None:
    only(load_issues(GOOD + "---\n" + GOOD), "YAML_SYNTAX")


@pytest.mark.parametrize(("text", "kind"), [("", "空"), ("- 1\n", "list"), ("hello\n", "str")])
def test_the_root_must_be_a_mapping(text: str, kind: str) -> None:
    issue = only(load_issues(text), "SCHEMA")
    assert kind in issue.message and issue.line == 1


def test_text_over_the_size_limit() -> None:
    text = GOOD + "#" * (MAX_PLAN_BYTES + 1)
    only(load_issues(text), "YAML_TOO_LARGE")


def test_alias_bomb_is_refused_before_it_expands() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for i, name in enumerate("bcdefghij"):
        previous = "abcdefghij"[i]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 10) + "]")
    issue = only(load_issues("\n".join(lines) + "\n"), "YAML_TOO_LARGE")
    assert "エイリアスを展開した数" in issue.message


def test_recursive_alias_is_refused() -> None:
    only(load_issues("a: &a [*a]\n"), "YAML_TOO_LARGE")


def test_small_anchors_are_fine() -> None:
    text = GOOD.replace("vars:\n  name: 山田", "vars:\n  base: &base {x: 1}\n  copy: *base")
    assert load_plan_text(text).vars == {"base": {"x": 1}, "copy": {"x": 1}}


def test_duplicate_keys_are_errors() -> None:
    text = GOOD.replace("    out:\n", "    block: text.join\n    out:\n")
    issue = only(load_issues(text), "YAML_DUPLICATE_KEY")
    assert (issue.path, issue.line) == ("graph[0]", 12)
    assert "'block'" in issue.message


def test_unknown_field_with_path_node_line_and_suggestion() -> None:
    text = GOOD.replace("    block: text.template", "    blok: text.template")
    issues = load_issues(text)
    unknown = only([i for i in issues if "blok" in i.message], "SCHEMA")
    assert (unknown.node_id, unknown.path, unknown.line) == ("hello", "graph[0].blok", 8)
    assert "'block' のことですか" in unknown.message
    assert unknown.hint and "in, out" in unknown.hint
    missing = [i for i in issues if i.path == "graph[0].block"]
    assert missing and "必須の項目" in missing[0].message


def test_wrong_type_deep_in_a_node() -> None:
    issue = only(load_issues(GOOD.replace("text: greeting", "text: 3")), "SCHEMA")
    assert (issue.node_id, issue.path, issue.line) == ("hello", "graph[0].out.text", 13)


def test_unquoted_version_gets_a_hint() -> None:
    issue = only(load_issues(GOOD.replace("version: 0.1.0", "version: 1.0")), "SCHEMA")
    assert issue.path == "version" and issue.hint and "引用符" in issue.hint


def test_unsupported_api_version_lists_the_supported_ones() -> None:
    issue = only(load_issues(GOOD.replace("apiVersion: v1", "apiVersion: v2")), "API_VERSION")
    assert (issue.path, issue.line) == ("apiVersion", 1)
    assert "対応しているのは v1" in issue.message


def test_unknown_node_type_and_bad_condition() -> None:
    text = GOOD + "  - {id: odd, type: weird}\n  - {id: w, block: text.join, when: 3}\n"
    issues = load_issues(text)
    assert "type は block" in (only([i for i in issues if i.node_id == "odd"], "SCHEMA").hint or "")
    condition = only([i for i in issues if i.node_id == "w"], "SCHEMA")
    assert condition.path == "graph[2].when" and "{expr: ...}" in condition.message


def test_errors_inside_loop_bodies_name_the_body_node() -> None:
    text = """\
apiVersion: v1
id: t
version: 1.0.0
graph:
  - id: each
    type: loop
    foreach: {input: [1, 2]}
    body:
      plan:
        graph:
          - id: inner
            block: text.template
            inn: {}
"""
    issue = only(load_issues(text), "SCHEMA")
    assert (issue.node_id, issue.path, issue.line) == (
        "inner",
        "graph[0].body.plan.graph[0].inn",
        13,
    )


def test_while_without_max_iterations() -> None:
    text = GOOD + (
        "  - id: again\n    type: loop\n    while: {condition: {expr: 'true'}}\n"
        "    body: {plan: {graph: [{id: b, block: text.join}]}}\n"
    )
    issue = only(load_issues(text), "WHILE_MISSING_MAX")
    assert (issue.node_id, issue.path, issue.line) == ("again", "graph[1].while.max_iterations", 16)


def test_every_problem_is_reported_at_once() -> None:
    text = GOOD.replace("apiVersion: v1", "apiVersion: v0").replace("text: greeting", "text: 3")
    text = text.replace("id: greet\n", "")
    found = {issue.code for issue in load_issues(text)}
    assert found == {"API_VERSION", "SCHEMA"}
    assert len(load_issues(text)) == 3


def test_a_loaded_loop_keeps_its_aliases() -> None:
    text = """\
apiVersion: v1
id: t
version: 1.0.0
graph:
  - id: each
    type: loop
    foreach: {input: "${vars.files}", itemVar: file, indexVar: idx}
    body: {plan: {graph: [{id: a, block: text.join}], exports: [{from: a.text, as: r}]}}
    out: {collect: r}
"""
    loop = load_plan_text(text).graph[0]
    assert isinstance(loop, LoopNode) and loop.foreach is not None
    assert (loop.foreach.item_var, loop.foreach.index_var, loop.out.collect) == ("file", "idx", "r")


def test_load_plan_file(tmp_path: Path) -> None:
    path = tmp_path / "greet.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())  # a BOM is fine
    assert load_plan_file(path).id == "greet"
    with pytest.raises(UserInputError) as missing:
        load_plan_file(tmp_path / "nope.yaml")
    assert missing.value.code == "PLAN_NOT_FOUND"
    path.write_bytes(b"id: \xff\xfe\n")
    with pytest.raises(PlanValidationError) as binary:
        load_plan_file(path)
    assert binary.value.issues[0].code == "YAML_SYNTAX"
    assert str(path) in binary.value.message


def test_python_tags_are_not_constructed() -> None:
    text = GOOD.replace("name: 山田", 'name: !!python/object/apply:os.system ["echo hacked"]')
    issue = only(load_issues(text), "YAML_SYNTAX")
    assert issue.line == 5


def test_per_node_concurrency_must_be_between_1_and_64() -> None:
    text = """
apiVersion: v1
id: p
version: 0.1.0
policy: {concurrency: {per_node: {a: 0}}}
graph:
  - {id: a, block: text.join, in: {items: [x]}}
"""
    with pytest.raises(PlanValidationError) as caught:
        load_plan_text(text)
    assert "per_node" in str(caught.value.details["issues"])
