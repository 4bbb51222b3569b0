"""One issue vocabulary: ``IssueCode`` everywhere, structured ``details`` for programs,
loader and validator problems in one report (``PlanEngine.check``), every code in the docs."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import keiri_agent.plans as plans
from keiri_agent.config import Settings
from keiri_agent.errors import BlockErrorCode, UserInputError
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.issues import IssueCode, IssueDetails, ValidationIssue, ValidationReport

ROOT = Path(__file__).resolve().parents[2]
PLANS_SRC = ROOT / "src" / "keiri_agent" / "plans"
DOCS = ROOT / "docs" / "plans.md"

HEAD = "apiVersion: v1\nid: t\nversion: 1.0.0\n"


@pytest.fixture
def engine(keiri_home: Path) -> PlanEngine:
    """An engine of the test's throwaway workspace (its designs/ is the test's own)."""
    return PlanEngine(Settings(), env={})


def only(report: ValidationReport, code: IssueCode) -> ValidationIssue:
    found = [issue for issue in report.issues if issue.code == code]
    assert len(found) == 1, report.codes()
    return found[0]


# --- PlanEngine.check: one report from text ------------------------------------------


def test_a_yaml_syntax_error_is_an_issue_with_line_and_column(engine: PlanEngine) -> None:
    report = engine.check(HEAD + "graph:\n  - id: a\n    block: [text.template\n")
    issue = only(report, IssueCode.YAML_SYNTAX)
    assert not report.ok and report.plan_id is None
    assert issue.details.line is not None and issue.details.line >= 5
    assert issue.details.column is not None and issue.details.column >= 1
    assert issue.line == issue.details.line


def test_an_unknown_block_lists_the_blocks_and_the_closest(engine: PlanEngine) -> None:
    report = engine.check(HEAD + "graph:\n  - {id: a, block: text.templat, in: {template: x}}\n")
    issue = only(report, IssueCode.UNKNOWN_BLOCK)
    details = issue.details
    assert (details.node, details.path) == ("a", "graph[0].block")
    assert (details.name, details.closest) == ("text.templat", "text.template")
    assert (details.line, details.column) == (5, 20)  # a validator issue, located in the text
    assert details.choices is not None and "table.sort" in details.choices
    assert report.plan_id == "t"


def test_an_unknown_reference_names_the_visible_nodes_and_the_closest(engine: PlanEngine) -> None:
    text = HEAD + (
        "graph:\n"
        "  - {id: greeting, block: text.template, in: {template: hi}}\n"
        "  - {id: b, block: text.template, in: {template: '${greetng.text}'}}\n"
    )
    issue = only(engine.check(text), IssueCode.UNKNOWN_REFERENCE)
    details = issue.details
    assert (details.node, details.path) == ("b", "graph[1].in.template")
    assert (details.name, details.closest) == ("greetng", "greeting")
    assert details.choices is not None and {"greeting", "vars"} <= set(details.choices)


def test_type_mismatches_carry_expected_and_actual(engine: PlanEngine) -> None:
    text = HEAD + (
        "graph:\n"
        "  - {id: a, block: text.template, in: {template: 5}}\n"
        "  - {id: s, block: table.sort, in: {records: '${a.text}', by: [x]}}\n"
    )
    report = engine.check(text)
    literal = only(report, IssueCode.INPUT_TYPE_MISMATCH).details
    assert (literal.node, literal.path) == ("a", "graph[0].in.template")
    assert (literal.expected, literal.actual) == ("string", "integer")
    wired = only(report, IssueCode.TYPE_INCOMPATIBLE).details
    assert (wired.node, wired.path) == ("s", "graph[1].in.records")
    assert (wired.expected, wired.actual) == ("array", "string")


def test_a_missing_input_names_the_input_and_its_type(engine: PlanEngine) -> None:
    text = HEAD + "graph:\n  - {id: a, block: text.template, in: {values: {}}}\n"
    details = only(engine.check(text), IssueCode.MISSING_REQUIRED_INPUT).details
    assert (details.node, details.path) == ("a", "graph[0].in")
    assert (details.name, details.expected) == ("template", "string")


def test_loader_and_validator_problems_come_in_one_report(engine: PlanEngine) -> None:
    text = HEAD + "apiVersion: v9\ngraph:\n  - {id: a, block: nope.block}\n"
    report = engine.check(text)
    assert report.codes().count("API_VERSION") == 1  # the loader's, not repeated
    assert {"YAML_DUPLICATE_KEY", "API_VERSION", "UNKNOWN_BLOCK"} <= set(report.codes())
    assert only(report, IssueCode.API_VERSION).details.choices == ("v1",)


def test_schema_problems_name_the_valid_fields_and_values(engine: PlanEngine) -> None:
    text = HEAD + (
        "policy: {on_error: hallt}\n"
        "graph:\n"
        "  - {id: a, blok: text.template}\n"
        "  - {id: b, type: looop}\n"
    )
    report = engine.check(text)
    issues = {issue.path: issue.details for issue in report.issues}
    assert set(report.codes()) == {"SCHEMA"}
    field = issues["graph[0].blok"]
    assert (field.node, field.closest, field.line) == ("a", "block", 6)
    assert field.choices is not None and "in" in field.choices
    value = issues["policy.on_error"]
    assert value.choices == ("halt", "continue", "retry") and value.closest == "halt"
    node_type = issues["graph[1]"]
    assert node_type.choices == ("block", "loop", "subflow") and node_type.closest == "loop"


def test_a_wrong_yaml_type_says_what_was_expected(engine: PlanEngine) -> None:
    issue = only(engine.check(HEAD + "graph: {a: 1}\n"), IssueCode.SCHEMA)
    assert (issue.path, issue.details.expected, issue.details.actual) == (
        "graph",
        "array",
        "object",
    )


def test_check_reads_a_file_and_reports_what_load_would_raise(
    engine: PlanEngine, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(HEAD.encode() + b"graph: []\nnote: \xff\xfe\n")
    assert engine.check(broken).codes() == ["YAML_SYNTAX"]
    with pytest.raises(UserInputError) as missing:
        engine.check(tmp_path / "missing.yaml")
    assert missing.value.code == "PLAN_NOT_FOUND"


def test_a_valid_plan_checks_like_it_validates(engine: PlanEngine) -> None:
    text = HEAD + "graph:\n  - {id: a, block: text.template, in: {template: hi}}\n"
    report = engine.check(text)
    assert report.ok and report.plan_id == "t"
    validated = engine.validate(plans.load_plan_text(text))
    assert [(i.code, i.message, i.path) for i in report.issues] == [
        (i.code, i.message, i.path) for i in validated.issues
    ]
    assert [i.line for i in report.issues] == [5]  # UNUSED_NODE, located in the text


def test_a_subflow_issue_carries_the_called_plans_issue(engine: PlanEngine) -> None:
    designs = engine.workspace.designs
    designs.mkdir(parents=True, exist_ok=True)
    (designs / "inner.yaml").write_text(
        "apiVersion: v1\nid: inner\nversion: 1.0.0\ngraph:\n  - {id: x, block: nope}\n",
        encoding="utf-8",
    )
    text = HEAD + "graph:\n  - {id: call, type: subflow, call: {plan_id: inner}}\n"
    issue = only(engine.check(text), IssueCode.SUBFLOW_INVALID)
    cause = issue.details.cause
    assert cause is not None and cause.code == IssueCode.UNKNOWN_BLOCK
    assert (cause.node_id, cause.path) == ("x", "graph[0].block")


# --- JSON form --------------------------------------------------------------------------


def test_the_json_form_has_plain_codes_and_every_details_key(engine: PlanEngine) -> None:
    report = engine.check(HEAD + "graph:\n  - {id: a, block: text.templat}\n")
    data = json.loads(json.dumps(report.to_dict()))
    issue = next(item for item in data["issues"] if item["code"] == "UNKNOWN_BLOCK")
    assert type(report.issues[0].code) is IssueCode
    assert set(issue["details"]) == {
        "node",
        "path",
        "line",
        "column",
        "name",
        "choices",
        "closest",
        "expected",
        "actual",
        "input",
        "var",
        "cause",
    }
    assert issue["details"]["closest"] == "text.template"
    assert (issue["node_id"], issue["path"]) == ("a", "graph[0].block")


def test_issue_code_is_exported_from_plans() -> None:
    assert plans.IssueCode is IssueCode
    assert "IssueCode" in plans.__all__


# --- one vocabulary: no bare code strings, every code documented ------------------------


def _exception_code(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """``code = "..."`` in a class body: an exception class's own code, not an issue."""
    parent = parents.get(node)
    return (
        isinstance(parent, ast.Assign)
        and [getattr(t, "id", None) for t in parent.targets] == ["code"]
        and isinstance(parents.get(parent), ast.ClassDef)
    )


def test_no_module_under_plans_writes_an_issue_code_as_a_bare_string() -> None:
    codes = {code.value for code in IssueCode}
    found: list[str] = []
    for path in sorted(PLANS_SRC.rglob("*.py")):
        if path.name == "issues.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or node.value not in codes:
                continue
            if not _exception_code(node, parents):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert not found, "use IssueCode members: " + ", ".join(found)


def _documented_codes() -> set[str]:
    """Codes in the first column of docs/plans.md's tables."""
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)`", DOCS.read_text(encoding="utf-8"), re.M))


@pytest.mark.parametrize("code", list(IssueCode), ids=str)
def test_every_issue_code_is_documented(code: IssueCode) -> None:
    assert code.value in _documented_codes(), f"add a row for {code} to docs/plans.md"


def _block_error_codes() -> list[str]:
    return [value for name, value in vars(BlockErrorCode).items() if name.isupper()]


@pytest.mark.parametrize("code", _block_error_codes())
def test_every_runtime_block_error_code_is_documented(code: str) -> None:
    assert code in _documented_codes(), f"add a row for {code} to docs/plans.md"


def test_the_documented_details_keys_exist() -> None:
    keys = set(IssueDetails().to_dict())
    text = DOCS.read_text(encoding="utf-8")
    for key in keys:
        assert f"`{key}`" in text
