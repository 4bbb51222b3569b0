"""Dry runs: declared samples flow through the graph; nothing runs; problems are explicit."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.dry_run import DryRunReport, dry_run, summarize
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.store import PlanStore

DATA = Path(__file__).parent / "data"
UI = "ui.interactive_input@0.0.1"


@pytest.fixture(scope="module")
def catalog() -> BlockCatalog:
    return BlockCatalog.discover([DATA / "blocks"])


@pytest.fixture(autouse=True)
def no_block_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dry run uses declarations only: loading a block at all is a test failure."""

    def refuse(self: BlockCatalog, spec: Any) -> Any:
        raise AssertionError(f"dry run loaded block {spec.reference}")

    monkeypatch.setattr(BlockCatalog, "load", refuse)


def make_plan(*nodes: dict[str, Any], **extra: Any) -> Plan:
    return Plan.model_validate(
        {"apiVersion": "v1", "id": "t", "version": "1.0.0", "graph": list(nodes), **extra}
    )


def run(catalog: BlockCatalog, plan: Plan, **options: Any) -> DryRunReport:
    report = dry_run(plan, catalog, env=options.pop("env", {}), **options)
    json.dumps(report.to_dict())  # always JSON-compatible
    return report


def problem_codes(report: DryRunReport, node_id: str) -> list[str]:
    return [problem.code for problem in report.node(node_id).problems]


def test_seed_example_flows_samples_through_every_node(catalog: BlockCatalog) -> None:
    store = PlanStore(DATA / "designs")
    report = run(catalog, store.load("invoice_reconciliation"), store=store)
    assert report.ok, report.to_dict()
    assert [n.node_id for n in report.nodes] == [
        "collect_inputs",
        "combine",
        "large_only",
        "by_department",
        "report",
    ]
    collect = report.node("collect_inputs")
    assert collect.block == UI and collect.inputs["requirements"] == "list[3]"
    # collected_data is built from this node's own requirements
    assert collect.outputs["collected"] == {
        "evidence_zip": "sample.zip",
        "workbook": "sample.xlsx",
        "proceed": True,
    }
    assert report.node("combine").condition is True
    assert report.node("large_only").inputs["conditions"] == "list[1]"
    assert report.node("report").inputs["values"] == {
        "instruction": "請求書・入金明細を照合し差異を出力",
        "count": 2,
    }


def test_loops_run_their_body_once_with_a_sample_item(catalog: BlockCatalog) -> None:
    store = PlanStore(DATA / "designs")
    report = run(catalog, store.load("loop_examples"), store=store)
    assert report.ok, report.to_dict()
    each = report.node("process_each_file")
    assert each.inputs == {"foreach.input": "list[2]", "file": "請求書A.pdf"}
    assert each.outputs == {"result": "list[1]"}
    body = report.node("process_each_file/analyze_file")
    assert body.inputs["values"] == {"n": 0, "file": "請求書A.pdf"}
    approval = report.node("retry_until_approved")
    assert approval.condition is False  # approved is true in the sample: the loop would stop
    assert approval.outputs == {"iterations": 1}


def test_subflows_are_dry_run_with_their_mapped_inputs(catalog: BlockCatalog) -> None:
    store = PlanStore(DATA / "designs")
    report = run(catalog, store.load("subflow_caller"), store=store)
    assert report.ok, report.to_dict()
    assert report.node("validate_and_process").inputs["note"] == "sample"
    inner = report.node("validate_and_process/explain")
    assert inner.inputs["values"] == {"count": 1, "note": "sample"}
    assert report.node("message").inputs["values"]["rows"] == "list[1]"


def test_subflow_without_a_store_fails_explicitly(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "sub", "type": "subflow", "call": {"plan_id": "x"}})
    assert problem_codes(run(catalog, plan), "sub") == ["SUBFLOW_NOT_FOUND"]


def test_an_output_without_samples_fails_whoever_needs_it(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "src", "block": "test.no_sample", "in": {"text": "x"}},
        {
            "id": "use",
            "block": "text.template",
            "in": {"template": "{r}", "values": "${src.result}"},
        },
    )
    report = run(catalog, plan)
    assert report.node("src").status == "ok"
    assert report.node("src").outputs == {"result": "<unavailable>"}
    use = report.node("use")
    assert use.status == "failed"
    assert [p.code for p in use.problems] == ["DRY_RUN_NO_SAMPLE"]
    assert "test.no_sample@1.0.0" in use.problems[0].message
    assert "'result'" in use.problems[0].message
    assert use.problems[0].path == "in.values"
    assert not report.ok


def test_unresolved_reference_into_sample_data(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "src", "block": "test.numbers"},
        {"id": "use", "block": "test.numbers", "in": {"label": "${src.summary.missing}"}},
    )
    report = run(catalog, plan)
    assert problem_codes(report, "use") == ["UNKNOWN_REFERENCE"]
    assert "missing" in report.node("use").problems[0].message


def test_sample_values_are_checked_against_the_input_ports(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "src", "block": "test.numbers"},
        {"id": "use", "block": "test.numbers", "in": {"count": "${src.label}", "label": "ok"}},
    )
    report = run(catalog, plan)
    assert problem_codes(report, "use") == ["INPUT_TYPE_MISMATCH"]
    assert report.node("use").problems[0].path == "in.count"


def test_missing_unknown_input_and_unknown_block(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "join", "block": "text.join", "in": {"itemz": []}},
        {"id": "ghost", "block": "no.such"},
        {"id": "after", "block": "text.template", "in": {"template": "${ghost.x}"}},
    )
    report = run(catalog, plan)
    assert problem_codes(report, "join") == ["UNKNOWN_INPUT", "MISSING_REQUIRED_INPUT"]
    assert problem_codes(report, "ghost") == ["UNKNOWN_BLOCK"]
    assert problem_codes(report, "after") == ["UPSTREAM_FAILED"]


def test_when_is_evaluated_and_both_branches_are_checked(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "src", "block": "test.numbers"},
        {
            "id": "big",
            "block": "text.template",
            "in": {"template": "big"},
            "when": {"expr": "${src.count} > 10"},
        },
        {
            "id": "small",
            "block": "text.template",
            "in": {"template": "small"},
            "when": {"left": "${src.count}", "op": "lte", "right": 10},
        },
        {
            "id": "broken",
            "block": "text.template",
            "in": {"template": "x"},
            "when": {"expr": "${src.label} > 1"},
        },
    )
    report = run(catalog, plan)
    assert (report.node("big").condition, report.node("big").status) == (False, "ok")
    assert report.node("big").outputs == {"text": "山田商事 様 ご請求額: 120,000 円"}
    assert report.node("small").condition is True
    assert problem_codes(report, "broken") == ["CONDITION_ERROR"]


def test_foreach_uses_items_examples_when_the_sample_list_is_empty(catalog: BlockCatalog) -> None:
    body = {
        "graph": [
            {
                "id": "name",
                "block": "text.template",
                "in": {"template": "{n}", "values": {"n": "${f.name}"}},
            }
        ]
    }
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${src.files}", "itemVar": "f"},
        "body": {"plan": body},
    }
    report = run(catalog, make_plan({"id": "src", "block": "test.numbers"}, loop))
    assert report.ok, report.to_dict()
    assert report.node("each").inputs["f"] == {"name": "sample.pdf", "size": 10}
    assert report.node("each/name").inputs["values"] == {"n": "sample.pdf"}


def test_foreach_without_any_sample_item_fails(catalog: BlockCatalog) -> None:
    body = {"graph": [{"id": "inner", "block": "text.template", "in": {"template": "x"}}]}
    loop = {"id": "each", "type": "loop", "foreach": {"input": []}, "body": {"plan": body}}
    report = run(catalog, make_plan(loop))
    assert problem_codes(report, "each") == ["DRY_RUN_NO_SAMPLE"]


def test_while_condition_is_checked_before_the_first_iteration(catalog: BlockCatalog) -> None:
    body = {
        "graph": [{"id": "step", "block": "test.numbers"}],
        "exports": [{"from": "step.count", "as": "count"}],
    }
    loop = {
        "id": "again",
        "type": "loop",
        "body": {"plan": body},
        "while": {"condition": {"expr": "${count} < 3"}, "max_iterations": 5},
    }
    report = run(catalog, make_plan(loop))
    problem = report.node("again").problems[0]
    assert problem.code == "CONDITION_ERROR"
    assert "1 回目の前" in (problem.path or "")


def test_side_effect_blocks_are_never_run(catalog: BlockCatalog) -> None:
    plan = make_plan({"id": "send", "block": "test.notify", "in": {"message": "x" * 200}})
    report = run(catalog, plan)  # BlockCatalog.load is patched to fail the test
    send = report.node("send")
    assert send.side_effects is True and send.status == "ok"
    assert send.inputs["message"].endswith("(200 chars)")


def test_vars_env_and_overrides(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {
            "id": "a",
            "block": "text.template",
            "in": {"template": "{t}", "values": {"t": "${vars.token}", "n": "${vars.name}"}},
        },
        vars={"token": "${env.API_TOKEN}", "name": "default"},
    )
    ok = run(catalog, plan, env={"API_TOKEN": "secret"}, vars={"name": "given"})
    assert ok.ok and ok.node("a").inputs["values"] == {"t": "secret", "n": "given"}
    missing = run(catalog, plan, vars={"nam": 1})
    assert [p.code for p in missing.problems] == ["UNKNOWN_VAR", "UNKNOWN_REFERENCE"]
    assert problem_codes(missing, "a") == ["UNKNOWN_REFERENCE"]


def test_a_cycle_skips_every_node(catalog: BlockCatalog) -> None:
    plan = make_plan(
        {"id": "a", "block": "text.template", "in": {"template": "${b.text}"}},
        {"id": "b", "block": "text.template", "in": {"template": "${a.text}"}},
    )
    report = run(catalog, plan)
    assert [p.code for p in report.problems] == ["CYCLE"]
    assert {n.status for n in report.nodes} == {"skipped"}
    assert not report.ok


def test_every_log_line_is_tagged_dry_run(
    catalog: BlockCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    plan = make_plan({"id": "a", "block": "text.template", "in": {"template": "x"}})
    with caplog.at_level(logging.INFO, logger="keiri_agent.plans.check.dry_run"):
        run(catalog, plan)
    records = [r for r in caplog.records if r.name == "keiri_agent.plans.check.dry_run"]
    assert len(records) >= 3
    assert all(getattr(record, "dry_run", False) is True for record in records)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("short", "short"),
        ("あ" * 100, "あ" * 79 + "… (100 chars)"),
        ([1, 2, 3], "list[3]"),
        (b"\x00" * 5, "bytes[5]"),
        ({"a": {"b": 1}, "n": None}, {"a": "dict[1]", "n": None}),
        (3.5, 3.5),
        (object(), "object"),
    ],
)
def test_summaries(value: Any, expected: Any) -> None:
    assert summarize(value) == expected
