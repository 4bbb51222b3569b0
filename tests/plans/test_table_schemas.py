"""Table schemas in the dry run: columns and their types flow from what a Plan declares
(readers' ``types``, literal tables, table blocks) and the dry run finds, before anything
runs, an unknown column, a sum of a text column and a text/number comparison — and says
nothing where it does not know the table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.dry_run import DryRunReport, dry_run
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.issues import IssueCode

CATALOG = BlockCatalog.discover()
HEAD = "apiVersion: v1\nid: t\nversion: 1.0.0\nvars: {csv_file: 売上.csv, min: 50000}\ngraph:\n"
READ = "  - {id: read, title: 売上の読み込み, block: csv.read, in: {file: '${vars.csv_file}'%s}}\n"
BY_DEPT = (
    "  - id: by_dept\n    title: 部門別集計\n    block: table.aggregate\n"
    "    in: {records: '${read.records}', group_by: [部門], metrics: {金額: [sum]}}\n"
)


def check(graph: str, *, read_options: str = "") -> DryRunReport:
    plan = load_plan_text(HEAD + READ % read_options + graph)
    report = dry_run(plan, CATALOG, env={})
    json.dumps(report.to_dict())  # always JSON-compatible
    return report


def codes(report: DryRunReport, node_id: str) -> list[str]:
    return [str(problem.code) for problem in report.node(node_id).problems]


def only_issue(report: DryRunReport, code: IssueCode) -> dict[str, Any]:
    found = [issue.to_dict() for issue in report.issues() if issue.code == code]
    assert len(found) == 1, report.codes()
    return found[0]


# --- sum / mean of a text column -------------------------------------------------------


@pytest.mark.parametrize(
    "read_options", [", types: {金額: text}", ", infer_types: false"], ids=["types", "no_infer"]
)
def test_a_sum_of_a_text_column_fails_the_dry_run(read_options: str) -> None:
    report = check(BY_DEPT, read_options=read_options)
    assert codes(report, "by_dept") == ["METRIC_NOT_NUMERIC"]
    issue = only_issue(report, IssueCode.METRIC_NOT_NUMERIC)
    assert "部門別集計" in issue["message"] and "by_dept" in issue["message"]
    assert "'金額'" in issue["message"] and "sum" in issue["message"]
    assert issue["severity"] == "error" and issue["hint"]
    details = issue["details"]
    assert (details["node"], details["input"], details["path"]) == (
        "by_dept",
        "metrics",
        "in.metrics.金額",
    )
    assert (details["name"], details["actual"], details["expected"]) == ("金額", "text", "number")


def test_a_median_of_a_text_column_fails_and_its_distinct_count_does_not() -> None:
    median = check(BY_DEPT.replace("[sum]", "[median]"), read_options=", types: {金額: text}")
    assert codes(median, "by_dept") == ["METRIC_NOT_NUMERIC"]
    distinct = check(BY_DEPT.replace("[sum]", "[nunique]"), read_options=", types: {金額: text}")
    assert codes(distinct, "by_dept") == []


def test_a_sum_of_a_column_the_dry_run_cannot_know_is_not_an_error() -> None:
    assert check(BY_DEPT).ok  # inferred at run time: unknown now, so nothing is said
    assert check(BY_DEPT, read_options=", types: {金額: number}").ok
    # min/max of text are allowed (codes, ISO dates): the block orders text as text
    text_max = BY_DEPT.replace("[sum]", "[max, count]")
    assert check(text_max, read_options=", types: {金額: text}").ok


# --- unknown columns -------------------------------------------------------------------

AFTER_AGGREGATE = {
    "table.filter": "conditions: [{col: 金額, op: '>', value: 1}]",
    "table.sort": "by: [金額]",
    "table.select": "columns: [部門, 金額]",
    "table.dedupe": "keys: [金額]",
    "table.aggregate": "group_by: [部門], metrics: {金額: [sum]}",
    "table.compute": "columns: {税込: '金額 * 1.1'}",
}


@pytest.mark.parametrize(("block", "options"), list(AFTER_AGGREGATE.items()))
def test_an_unknown_column_after_an_aggregate_fails_the_dry_run(block: str, options: str) -> None:
    report = check(
        BY_DEPT + f"  - {{id: use, block: {block}, in: {{records: '${{by_dept.records}}', "
        f"{options}}}}}\n"
    )
    assert codes(report, "use") == ["UNKNOWN_COLUMN"]
    issue = only_issue(report, IssueCode.UNKNOWN_COLUMN)
    details = issue["details"]
    assert (details["node"], details["name"], details["closest"]) == ("use", "金額", "金額_sum")
    assert details["choices"] == ["部門", "金額_sum"]
    assert "'金額'" in issue["message"] and "use" in issue["message"]
    assert details["path"].startswith(f"in.{details['input']}")


@pytest.mark.parametrize("block", ["table.join", "table.reconcile"])
def test_unknown_keys_of_two_tables_fail_the_dry_run(block: str) -> None:
    keys = "'on'" if block == "table.join" else "keys"
    report = check(
        BY_DEPT + f"  - id: match\n    block: {block}\n    in:\n"
        "      left: '${by_dept.records}'\n"
        "      right: [{部門コード: S, 予算: 100}]\n"
        f"      {keys}: [{{left: 部門, right: 部門}}]\n"
    )
    assert codes(report, "match") == ["UNKNOWN_COLUMN"]
    details = only_issue(report, IssueCode.UNKNOWN_COLUMN)["details"]
    assert (details["name"], details["choices"]) == ("部門", ["部門コード", "予算"])
    assert details["path"] == f"in.{keys.strip(chr(39))}[0].right"


def test_columns_flow_through_select_compute_and_join() -> None:
    graph = BY_DEPT + (
        "  - {id: pick, block: table.select, "
        "in: {records: '${by_dept.records}', rename: {金額_sum: 売上}}}\n"
        "  - {id: tax, block: table.compute, "
        "in: {records: '${pick.records}', columns: {税込: '売上 * 1.1'}}}\n"
        "  - {id: budget, block: table.join, in: {left: '${tax.records}', "
        "right: [{部門: 営業, 予算: 100}], 'on': [部門]}}\n"
        "  - {id: over, block: table.filter, in: {records: '${budget.records}', "
        "conditions: [{col: 売上, op: '>', value: 1}, {col: 税込, op: '>', value: 1}, "
        "{col: 予算, op: '>', value: 1}]}}\n"
        "  - {id: old, block: table.sort, in: {records: '${budget.records}', by: [金額_sum]}}\n"
    )
    report = check(graph)
    assert [node.node_id for node in report.failed] == ["old"], report.codes()
    details = only_issue(report, IssueCode.UNKNOWN_COLUMN)["details"]
    assert details["choices"] == ["部門", "売上", "税込", "予算"]


def test_a_header_free_csv_with_named_columns_is_a_known_table() -> None:
    report = check(
        "  - {id: use, block: table.sort, in: {records: '${read.records}', by: [金額]}}\n",
        read_options=", header: false, columns: [取引先, 請求額]",
    )
    assert codes(report, "use") == ["UNKNOWN_COLUMN"]


# --- text compared with a number -------------------------------------------------------


def test_a_text_column_compared_with_a_number_fails_the_dry_run() -> None:
    graph = (
        "  - id: large\n    title: 高額の抽出\n    block: table.filter\n"
        "    in: {records: '${read.records}', conditions: [{col: 金額, op: '>', value: 50000}]}\n"
    )
    report = check(graph, read_options=", types: {金額: text}")
    assert codes(report, "large") == ["COMPARE_TYPE_MISMATCH"]
    issue = only_issue(report, IssueCode.COMPARE_TYPE_MISMATCH)
    assert "高額の抽出" in issue["message"] and "'金額'" in issue["message"]
    details = issue["details"]
    assert (details["node"], details["input"], details["path"]) == (
        "large",
        "conditions",
        "in.conditions[0]",
    )
    assert (details["name"], details["actual"], details["expected"]) == ("金額", "text", "number")


@pytest.mark.parametrize(
    ("value", "ok"),
    [("多い", False), ("'50,000'", True), ("'${vars.min}'", True), ("50000", True)],
)
def test_a_number_column_compared_with_text(value: str, ok: bool) -> None:
    graph = (
        "  - {id: large, block: table.filter, in: {records: '${read.records}', "
        f"conditions: [{{col: 金額, op: '>=', value: {value}}}]}}}}\n"
    )
    report = check(graph, read_options=", types: {金額: number}")
    assert report.ok is ok, report.codes()
    if not ok:
        details = only_issue(report, IssueCode.COMPARE_TYPE_MISMATCH)["details"]
        assert (details["actual"], details["expected"]) == ("number", "text")


# --- where nothing is known, nothing is said -------------------------------------------


def test_tables_from_vars_generic_samples_and_references_are_not_judged() -> None:
    plan = load_plan_text(
        "apiVersion: v1\nid: t\nversion: 1.0.0\n"
        "vars: {rows: [{金額: '1,000'}], col: 金額}\n"
        "graph:\n"
        "  - {id: a, block: table.aggregate, "
        "in: {records: '${vars.rows}', metrics: {金額: [sum]}}}\n"
        "  - {id: b, block: table.filter, "
        "in: {records: '${vars.rows}', conditions: [{col: 不明, op: '>', value: 1}]}}\n"
        "  - {id: c, block: table.sort, in: {records: '${a.records}', by: ['${vars.col}']}}\n"
    )
    report = dry_run(plan, CATALOG, env={})
    assert report.ok, report.codes()


def test_a_literal_table_in_the_plan_is_known() -> None:
    plan = load_plan_text(
        "apiVersion: v1\nid: t\nversion: 1.0.0\ngraph:\n"
        "  - {id: a, block: table.aggregate, "
        "in: {records: [{部門: 営業, 金額: '1,000'}], metrics: {金額: [sum]}}}\n"
    )
    report = dry_run(plan, CATALOG, env={})
    assert codes(report, "a") == ["METRIC_NOT_NUMERIC"]
