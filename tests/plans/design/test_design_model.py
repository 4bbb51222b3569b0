"""The dynamic LLMDesignModel: only the candidates and whitelisted keys in the schema the
model receives, the ai.process_llm rules, and the one mapping onto the DSL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ValidationError

from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.design.design_model import (
    build_design_model,
    build_skeleton_model,
    questions_of,
    to_plan_dict,
)

CATALOG = BlockCatalog.discover()
BLOCKS = ["excel.read_data", "table.filter", "ai.process_llm"]


def specs(*block_ids: str) -> list[Any]:
    return [CATALOG.resolve(block_id) for block_id in block_ids]


def walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def block_nodes(parameters: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every node schema with a fixed ``block`` (top-level graph and loop bodies)."""
    found = {}
    for schema in walk(parameters):
        block = (schema.get("properties") or {}).get("block")
        if isinstance(block, dict) and "const" in block:
            found.setdefault(block["const"], schema)
    return found


def test_the_function_schema_enumerates_only_the_candidates_and_their_ports() -> None:
    tool = convert_to_openai_tool(build_design_model(specs(*BLOCKS)))
    assert tool["function"]["name"] == "LLMDesignModel"
    nodes = block_nodes(tool["function"]["parameters"])
    assert set(nodes) == set(BLOCKS)
    for block_id, node in nodes.items():
        spec = CATALOG.resolve(block_id)
        in_schema = node["properties"]["in"]
        assert set(in_schema["properties"]) == set(spec.inputs)
        assert in_schema["additionalProperties"] is False
        out_schema = next(s for s in node["properties"]["out"]["anyOf"] if s.get("properties"))
        assert set(out_schema["properties"]) == set(spec.outputs)
        assert out_schema["additionalProperties"] is False
    assert nodes["ai.process_llm"]["properties"]["in"]["required"] == ["output_schema"]
    consts = {s["const"] for s in walk(tool) if "const" in s and isinstance(s["const"], str)}
    assert consts - {"loop", "subflow"} == set(BLOCKS)


def test_skeleton_blocks_are_an_enum_of_the_candidates() -> None:
    tool = convert_to_openai_tool(build_skeleton_model(["excel.read_data", "table.filter"]))
    enums = [s["enum"] for s in walk(tool) if "enum" in s and "purpose" not in s]
    assert ["excel.read_data", "table.filter"] in enums


def test_unknown_blocks_and_keys_do_not_validate() -> None:
    model = build_design_model(specs("excel.read_data", "table.filter"))
    node = {"id": "read", "block": "excel.read_data", "in": {"workbook": "${vars.wb}"}}
    model.model_validate({"id": "p", "graph": [node]})
    with pytest.raises(ValidationError):
        model.model_validate({"id": "p", "graph": [{**node, "block": "excel.read"}]})
    with pytest.raises(ValidationError):
        model.model_validate({"id": "p", "graph": [{**node, "in": {"file": "x"}}]})
    with pytest.raises(ValidationError):
        model.model_validate({"id": "p", "graph": [{**node, "out": {"rows": "x"}}]})


@pytest.mark.parametrize(
    ("inputs", "valid"),
    [
        ({"evidence_data": "${p.e}", "output_schema": {"金額": "integer"}, "prompt": "抽出"}, True),
        (
            {
                "evidence_data": "${p.e}",
                "output_schema": {"金額": "integer"},
                "instruction": "抽出",
            },
            True,
        ),
        ({"evidence_data": "${p.e}", "output_schema": {"金額": "integer"}}, False),
        ({"evidence_data": "${p.e}", "output_schema": {}, "prompt": "抽出"}, False),
        ({"evidence_data": "${p.e}", "prompt": "抽出"}, False),
    ],
)
def test_process_llm_needs_a_schema_and_a_prompt(inputs: dict[str, Any], valid: bool) -> None:
    model = build_design_model(specs("ai.process_llm"))
    design = {"id": "p", "graph": [{"id": "ai", "block": "ai.process_llm", "in": inputs}]}
    if valid:
        model.model_validate(design)
    else:
        with pytest.raises(ValidationError):
            model.model_validate(design)


def test_to_plan_dict_maps_foreach_policy_and_declares_vars() -> None:
    model = build_design_model(specs("excel.read_data", "table.filter"))
    design = model.model_validate(
        {
            "id": "売上 check",
            "policy": {"on_error": "stop"},
            "vars": {"limit": 1000},
            "graph": [
                {
                    "id": "read",
                    "block": "excel.read_data",
                    "in": {"workbook": "${vars.book}"},
                    "out": {"records": "rows"},
                },
                {
                    "id": "each",
                    "type": "loop",
                    "foreach": {"items": "${read.rows}", "var": "row"},
                    "body": {
                        "plan": {
                            "graph": [
                                {
                                    "id": "f",
                                    "block": "table.filter",
                                    "in": {"records": "${vars.rows}"},
                                }
                            ]
                        }
                    },
                },
            ],
            "questions": [
                {
                    "var": "sheet",
                    "question": "どのシートですか？",
                    "type": "select",
                    "options": ["売上", "入金"],
                }
            ],
        }
    )
    plan = to_plan_dict(design)
    assert plan["apiVersion"] == "v1" and plan["version"] == "0.1.0"
    assert plan["id"] == "check"  # non-ASCII dropped, must start with a letter
    assert plan["policy"] == {"on_error": "halt", "retries": 1, "timeout_ms": 300000}
    assert plan["vars"] == {"limit": 1000, "book": None, "rows": None, "sheet": None}
    loop = plan["graph"][1]
    assert loop["type"] == "loop"
    assert loop["foreach"] == {"input": "${read.rows}", "itemVar": "row"}
    assert loop["body"]["plan"]["graph"][0]["block"] == "table.filter"
    assert plan["graph"][0] == {
        "id": "read",
        "block": "excel.read_data",
        "in": {"workbook": "${vars.book}"},
        "out": {"records": "rows"},
    }
    assert questions_of(design) == [
        {
            "var": "sheet",
            "question": "どのシートですか？",
            "type": "select",
            "options": ["売上", "入金"],
        }
    ]


def test_to_plan_dict_maps_while_loops() -> None:
    plan = to_plan_dict(
        {
            "id": "w",
            "graph": [
                {
                    "id": "again",
                    "type": "loop",
                    "while": {"condition": {"expr": "${vars.n} < 3"}, "max_iterations": 3},
                    "body": {"plan": {"graph": [{"id": "t", "block": "text.join", "in": {}}]}},
                }
            ],
        }
    )
    node = plan["graph"][0]
    assert node["type"] == "loop" and "foreach" not in node
    assert node["while"] == {"condition": {"expr": "${vars.n} < 3"}, "max_iterations": 3}
    assert plan["vars"] == {"n": None}
