"""compose_templates: prefixed ids, binding by name/type/explicit, conflicts, a valid Plan."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog import BlockCatalog
from keiri_agent.plans.design.compose import COMPOSE_POLICY, compose_templates
from keiri_agent.plans.design.models import ComposeResult, TemplateSpec
from keiri_agent.plans.design.templates import TemplateLibrary
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.engine import PlanEngine

CATALOG = BlockCatalog.discover()
LIBRARY = TemplateLibrary.load()
ENGINE = PlanEngine(Settings(), env={})


def template(
    template_id: str,
    *,
    imports: dict[str, str] | None = None,
    exports: dict[str, str] | None = None,
    vars_defaults: dict[str, Any] | None = None,
    source: str = "${vars.records}",
    export_types: dict[str, str] | None = None,
) -> TemplateSpec:
    """A one-node template: table.filter over ``source``; exports name ``pick.<alias>``."""
    types = export_types or {}
    return TemplateSpec.model_validate(
        {
            "id": template_id,
            "title": template_id,
            "imports": {name: {"type": kind} for name, kind in (imports or {}).items()},
            "exports": {
                alias: {"type": types.get(alias, "table"), "from": f"pick.{alias}"}
                for alias in (exports or {})
            },
            "vars_defaults": vars_defaults or {},
            "graph_snippet": [
                {
                    "id": "pick",
                    "block": "table.filter",
                    "in": {"records": source, "conditions": []},
                    "out": {"records": next(iter(exports or {"rows": ""}))},
                }
            ],
        }
    )


def dump(result: ComposeResult) -> str:
    return yaml.safe_dump(result.plan, allow_unicode=True, sort_keys=False)


def assert_checks(result: ComposeResult) -> None:
    report = ENGINE.check(dump(result))
    assert report.errors == [], [str(issue) for issue in report.errors]


def test_two_bundled_templates_compose_into_a_plan_that_checks_and_dry_runs() -> None:
    chosen = [LIBRARY.get("department_summary"), LIBRARY.get("payments_read")]
    result = compose_templates(chosen, CATALOG, plan_id="payments_by_department")
    assert result.conflicts == []
    assert result.unbound == ["payments_read.payments_workbook"]
    assert result.bindings == {
        "department_summary.records": "${payments_read__read_payments.payments}"
    }
    plan = result.plan
    assert [node["id"] for node in plan["graph"]] == [
        "payments_read__read_payments",
        "department_summary__aggregate_rows",
    ]
    assert plan["graph"][1]["in"]["records"] == "${payments_read__read_payments.payments}"
    assert plan["graph"][0]["in"]["workbook"] == "${vars.payments_workbook}"
    assert plan["vars"]["payments_workbook"] is None
    assert plan["ui"]["layout"] == [
        "payments_read__read_payments",
        "department_summary__aggregate_rows",
    ]
    assert plan["policy"] == COMPOSE_POLICY
    assert plan["exports"] == [
        {"from": "payments_read__read_payments.payments", "as": "payments"},
        {"from": "payments_read__read_payments.payments", "as": "records"},
        {"from": "department_summary__aggregate_rows.summary", "as": "summary"},
    ]
    text = dump(result)
    loaded = load_plan_text(text)
    assert ENGINE.check(text).errors == []
    report = ENGINE.dry_run(loaded, vars={"payments_workbook": b"PK"})
    assert report.ok, report.problems


def test_upload_read_and_filter_chain_dry_runs_without_any_var() -> None:
    chosen = [LIBRARY.get(i) for i in ("filter_rows", "payments_read", "upload_payments_workbook")]
    result = compose_templates(chosen, CATALOG, plan_id="big_payments")
    assert result.unbound == [] and result.conflicts == []
    assert [n["id"] for n in result.plan["graph"]] == [
        "upload_payments_workbook__upload_workbook",
        "payments_read__read_payments",
        "filter_rows__filter_records",
    ]
    assert_checks(result)
    assert ENGINE.dry_run(load_plan_text(dump(result))).ok


def test_exporters_are_ordered_before_importers() -> None:
    consumer = template("consumer", imports={"rows": "table"}, exports={"out": ""})
    producer = template("producer", exports={"rows": ""}, vars_defaults={"records": []})
    result = compose_templates([consumer, producer], CATALOG, plan_id="p")
    assert [n["id"] for n in result.plan["graph"]] == ["producer__pick", "consumer__pick"]
    assert result.bindings == {"consumer.rows": "${producer__pick.rows}"}
    assert result.plan["graph"][1]["in"]["records"] == "${vars.records}"


def test_a_type_mismatch_is_a_conflict_and_stays_unbound() -> None:
    producer = template(
        "producer",
        exports={"rows": ""},
        export_types={"rows": "list"},
        vars_defaults={"records": []},
    )
    consumer = template(
        "consumer", imports={"rows": "table"}, exports={"out": ""}, source="${vars.rows}"
    )
    result = compose_templates([producer, consumer], CATALOG, plan_id="p")
    assert [(c.code, c.name, c.templates) for c in result.conflicts] == [
        ("TYPE_MISMATCH", "rows", ("producer", "consumer"))
    ]
    assert result.unbound == ["consumer.rows"]
    assert result.plan["graph"][1]["in"]["records"] == "${vars.rows}"
    assert "rows" in result.plan["vars"]


def test_an_export_alias_clash_keeps_both_under_prefixed_names() -> None:
    first = template("first", exports={"rows": ""}, vars_defaults={"records": []})
    second = template("second", exports={"rows": ""}, vars_defaults={"records": []})
    result = compose_templates([first, second], CATALOG, plan_id="p")
    assert [(c.code, c.name) for c in result.conflicts] == [("EXPORT_CLASH", "rows")]
    assert result.plan["exports"] == [
        {"from": "first__pick.rows", "as": "first__rows"},
        {"from": "second__pick.rows", "as": "second__rows"},
    ]
    assert_checks(result)


def test_two_earlier_exporters_make_the_import_ambiguous() -> None:
    first = template("first", exports={"rows": ""}, vars_defaults={"records": []})
    second = template("second", exports={"rows": ""}, vars_defaults={"records": []})
    consumer = template("consumer", imports={"rows": "table"}, exports={"out": ""})
    result = compose_templates([first, second, consumer], CATALOG, plan_id="p")
    assert sorted(c.code for c in result.conflicts) == ["AMBIGUOUS_IMPORT", "EXPORT_CLASH"]
    assert result.unbound == ["consumer.rows"]
    bound = compose_templates(
        [first, second, consumer],
        CATALOG,
        plan_id="p",
        bindings={"consumer.rows": "${second.rows}"},
    )
    assert bound.bindings["consumer.rows"] == "${second__pick.rows}"
    assert [c.code for c in bound.conflicts] == ["EXPORT_CLASH"]


def test_explicit_bindings_to_vars_and_bad_bindings() -> None:
    consumer = template(
        "consumer", imports={"rows": "table"}, exports={"out": ""}, source="${vars.rows}"
    )
    result = compose_templates(
        [consumer], CATALOG, plan_id="p", bindings={"consumer.rows": "${vars.my_rows}"}
    )
    assert result.plan["graph"][0]["in"]["records"] == "${vars.my_rows}"
    assert "my_rows" in result.plan["vars"] and result.unbound == []
    # the declared var has no value until someone gives it one (the Design chat asks)
    report = ENGINE.check(dump(result))
    assert [(i.code, i.details.var) for i in report.errors] == [
        ("REQUIRED_INPUT_NULL_VAR", "my_rows")
    ]
    assert ENGINE.validate(load_plan_text(dump(result)), vars={"my_rows": []}).errors == []
    bad = compose_templates(
        [consumer],
        CATALOG,
        plan_id="p",
        bindings={"consumer.rows": "rows please", "consumer.nothing": "${vars.x}"},
    )
    assert sorted(c.code for c in bad.conflicts) == ["BINDING_SYNTAX", "BINDING_UNKNOWN"]
    assert bad.unbound == ["consumer.rows"]


def test_a_cycle_is_a_conflict_and_keeps_the_given_order() -> None:
    left = template("left", imports={"b": "table"}, exports={"a": ""}, source="${vars.b}")
    right = template("right", imports={"a": "table"}, exports={"b": ""}, source="${vars.a}")
    result = compose_templates([left, right], CATALOG, plan_id="p")
    assert [c.code for c in result.conflicts] == ["CYCLE"]
    assert [n["id"] for n in result.plan["graph"]] == ["left__pick", "right__pick"]
    assert result.unbound == ["left.b"]
    assert result.bindings == {"right.a": "${left__pick.a}"}


def test_vars_with_different_defaults_clash_and_are_renamed() -> None:
    one = template("one", exports={"x": ""}, vars_defaults={"records": [], "limit": 1})
    two = template("two", exports={"y": ""}, vars_defaults={"records": [], "limit": 2})
    for spec in (one, two):
        spec.graph_snippet[0]["in"]["conditions"] = [
            {"col": "金額", "op": ">=", "value": "${vars.limit}"}
        ]
    result = compose_templates([one, two], CATALOG, plan_id="p")
    assert [(c.code, c.name, c.templates) for c in result.conflicts] == [
        ("VAR_CLASH", "limit", ("one", "two"))
    ]
    assert result.plan["vars"] == {"records": [], "limit": 1, "two__limit": 2}
    assert result.plan["graph"][1]["in"]["conditions"][0]["value"] == "${vars.two__limit}"
    assert_checks(result)


def test_references_inside_text_and_loop_bodies_are_rewritten() -> None:
    spec = TemplateSpec.model_validate(
        {
            "id": "groups",
            "title": "グループごと",
            "imports": {"groups": {"type": "list"}},
            "exports": {"rows": {"type": "list", "from": "each.rows"}},
            "graph_snippet": [
                {
                    "id": "each",
                    "type": "loop",
                    "foreach": {"input": "${vars.groups}", "itemVar": "group"},
                    "body": {
                        "plan": {
                            "graph": [
                                {
                                    "id": "pick",
                                    "block": "table.filter",
                                    "in": {"records": "${group.rows}", "conditions": []},
                                    "out": {"records": "rows"},
                                },
                                {
                                    "id": "label",
                                    "block": "text.template",
                                    "in": {
                                        "template": "件数 {n}",
                                        "values": {"n": "${pick.rows.length}"},
                                    },
                                },
                            ],
                            "exports": [{"from": "pick.rows", "as": "rows"}],
                        }
                    },
                    "out": {"collect": "rows"},
                }
            ],
        }
    )
    producer = template(
        "producer",
        exports={"groups": ""},
        export_types={"groups": "list"},
        vars_defaults={"records": []},
    )
    result = compose_templates([spec, producer], CATALOG, plan_id="p")
    loop = result.plan["graph"][1]
    assert loop["id"] == "groups__each"
    assert loop["foreach"]["input"] == "${producer__pick.groups}"
    body = loop["body"]["plan"]
    assert [n["id"] for n in body["graph"]] == ["groups__pick", "groups__label"]
    assert body["graph"][0]["in"]["records"] == "${group.rows}"
    assert body["graph"][1]["in"]["values"]["n"] == "${groups__pick.rows.length}"
    assert body["exports"] == [{"from": "groups__pick.rows", "as": "rows"}]
    assert copy.deepcopy(spec.graph_snippet)[0]["id"] == "each"  # the template is untouched
    assert_checks(result)


def test_a_template_whose_block_is_missing_is_reported() -> None:
    spec = template("odd", exports={"rows": ""}, vars_defaults={"records": []})
    spec.graph_snippet[0]["block"] = "table.nothing"
    result = compose_templates([spec, spec], CATALOG, plan_id="p")
    assert [c.code for c in result.conflicts] == ["UNKNOWN_BLOCK", "DUPLICATE_TEMPLATE"]
    assert len(result.plan["graph"]) == 1


def test_no_template_is_a_user_error() -> None:
    with pytest.raises(UserInputError) as caught:
        compose_templates([], CATALOG, plan_id="p")
    assert "テンプレート" in caught.value.message


def test_the_payment_matching_template_composes_into_a_plan_that_checks_and_dry_runs() -> None:
    result = compose_templates([LIBRARY.get("payment_matching")], CATALOG, plan_id="shokomi")
    assert result.unbound == [] and result.conflicts == []
    assert_checks(result)
    loaded = load_plan_text(dump(result))
    assert ENGINE.dry_run(loaded).ok
    blocks = [node["block"] for node in result.plan["graph"]]
    assert blocks.count("accounting.match_payments") == 1
    assert {export["as"] for export in result.plan["exports"]} >= {"workbook", "journal"}
