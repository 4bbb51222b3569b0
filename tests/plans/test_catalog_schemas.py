"""Block spec port schemas: $ref (Pydantic and JSON files), schema_problems, entrypoint errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, CatalogError, schema_problems

MODELS = """
from pydantic import BaseModel

class Line(BaseModel):
    item: str
    amount: int

class Invoice(BaseModel):
    number: str
    lines: list[Line]
    note: str | None = None
"""

BLOCK = """
from keiri_agent.blocks.base import ProcessingBlock, UIBlock

class Good(ProcessingBlock):
    def run(self, inputs, ctx):
        return {}

class Asking(UIBlock):
    def request(self, inputs, ctx):
        return {}
    def run(self, inputs, ctx):
        return {}

class Abstract(ProcessingBlock):
    pass

class NotABlock:
    pass
"""


@pytest.fixture
def models_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "pkgs").mkdir()
    (tmp_path / "pkgs" / "invoice_models_for_tests.py").write_text(MODELS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    yield "invoice_models_for_tests"
    sys.modules.pop("invoice_models_for_tests", None)


def make_catalog(folder: Path, **fields: Any) -> BlockCatalog:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "block.py").write_text(BLOCK, encoding="utf-8")
    data = {"id": "user.x", "version": "1.0.0", "entrypoint": "block.py:Good", **fields}
    (folder / "x.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return BlockCatalog.discover([folder])


GOOD_INVOICE = {"number": "A-1", "lines": [{"item": "pen", "amount": 100}]}


def test_module_ref_is_resolved_to_the_pydantic_schema(tmp_path: Path, models_module: str) -> None:
    port = {"$ref": f"{models_module}:Invoice", "required": True, "description": "請求書"}
    catalog = make_catalog(tmp_path / "blocks", inputs={"invoice": port})
    spec = catalog.resolve("user.x")
    assert models_module not in sys.modules  # resolved lazily, not at discovery
    schema = spec.input_schema("invoice")
    assert schema["description"] == "請求書" and "required" in schema  # JSON Schema's list
    assert set(schema["required"]) == {"number", "lines"}
    assert "Line" in schema["$defs"]
    assert schema_problems(GOOD_INVOICE, schema) == []
    bad = {"number": "A-1", "lines": [{"item": "pen", "amount": "many"}]}
    assert schema_problems(bad, schema) == ["$.lines[0].amount: 'many' は整数ではありません"]
    assert spec.required_inputs() == ["invoice"]


def test_nested_module_ref_hoists_definitions(tmp_path: Path, models_module: str) -> None:
    port = {"type": "array", "items": {"$ref": f"{models_module}:Invoice"}, "nullable": True}
    spec = make_catalog(tmp_path / "b", outputs={"invoices": port}).resolve("user.x")
    schema = spec.output_schema("invoices")
    assert "Line" in schema["$defs"]
    assert schema_problems([GOOD_INVOICE], schema) == []
    assert schema_problems(None, schema) == []
    assert schema_problems([{"number": 1, "lines": []}], schema) == [
        "$[0].number: 1 は文字列ではありません"
    ]


def test_jsonschema_file_ref_relative_to_the_spec(tmp_path: Path) -> None:
    folder = tmp_path / "blocks"
    (folder / "schemas").mkdir(parents=True)
    money = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"yen": {"type": "integer", "minimum": 0}},
        "type": "object",
        "required": ["amount"],
        "properties": {"amount": {"$ref": "#/$defs/yen"}, "memo": {"type": "string"}},
    }
    (folder / "schemas" / "money.json").write_text(json.dumps(money), encoding="utf-8")
    inputs = {
        "payment": {"$ref": "jsonschema://schemas/money.json"},
        "fee": {"$ref": "jsonschema://schemas/money.json#/$defs/yen"},
    }
    spec = make_catalog(folder, inputs=inputs).resolve("user.x")
    schema = spec.input_schema("payment")
    assert schema["$defs"] == money["$defs"]
    assert schema_problems({"amount": 5}, schema) == []
    assert schema_problems({"amount": -5}, schema) == ["$.amount: -5 は 0 以上にしてください"]
    assert schema_problems({}, schema) == ["$: 必須の項目 'amount' がありません"]
    fee = spec.input_schema("fee")
    assert schema_problems(3, fee) == [] and schema_problems("3", fee) != []


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("jsonschema://missing.json", "no file"),
        ("no_such_module_for_tests:Model", "cannot import"),
        ("json:JSONDecoder", "not a Pydantic model"),
        ("json:Nothing", "has no 'Nothing'"),
        ("https://example.com/schema.json", "unsupported $ref"),
        ("jsonschema://self.json", "$ref cycle"),
        ("jsonschema://list.json", "does not hold a JSON Schema object"),
        ("jsonschema://self.json#/nowhere", "nothing at #/nowhere"),
    ],
)
def test_unresolvable_refs(tmp_path: Path, ref: str, message: str) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir()
    (folder / "self.json").write_text(json.dumps({"$ref": "jsonschema://self.json"}), "utf-8")
    (folder / "list.json").write_text("[]", encoding="utf-8")
    spec = make_catalog(folder, inputs={"value": {"$ref": ref}}).resolve("user.x")
    with pytest.raises(CatalogError) as caught:
        spec.input_schema("value")
    assert message in caught.value.message
    assert "inputs.value" in caught.value.message and str(folder / "x.yaml") in caught.value.message
    with pytest.raises(CatalogError):
        spec.sample_problems()


def test_defaults_with_refs_are_checked_by_sample_problems(
    tmp_path: Path, models_module: str
) -> None:
    port = {"$ref": f"{models_module}:Line", "default": {"item": "x"}}
    spec = make_catalog(tmp_path / "b", inputs={"line": port}).resolve("user.x")
    assert spec.sample_problems() == ["inputs.line default: $: 必須の項目 'amount' がありません"]


@pytest.mark.parametrize(
    ("value", "schema", "problems"),
    [
        (None, {"type": "string", "nullable": True}, []),
        (None, {"type": "string"}, ["$: None は文字列ではありません"]),
        (3, {"type": "string", "nullable": True}, ["$: 3 は文字列ではありません"]),
        ("x", {"type": "string", "required": True, "default": "a", "examples": ["b"]}, []),
        (
            {"rows": [{"v": None}, {"v": "x"}]},
            {
                "type": "object",
                "properties": {
                    "rows": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"v": {"type": "number", "nullable": True}},
                        },
                    }
                },
            },
            ["$.rows[1].v: 'x' は数値ではありません"],
        ),
        (
            {"a b": 1, "ok": "x"},
            {"type": "object", "additionalProperties": {"type": "string"}},
            ["$['a b']: 1 は文字列ではありません"],
        ),
        (
            "2025-13-40",
            {"type": "string", "format": "date"},
            ["$: '2025-13-40' は日付（例: 2024-01-31）の形式ではありません"],
        ),
        (
            [1, 2],
            {"type": "array", "maxItems": 1},
            ["$: 要素は 1 個以下にしてください（今は 2 個）"],
        ),
        ({"x": 1}, {}, []),
    ],
)
def test_schema_problems(value: Any, schema: dict[str, Any], problems: list[str]) -> None:
    assert schema_problems(value, schema) == problems


def test_schema_problems_refuses_unresolved_external_refs() -> None:
    with pytest.raises(CatalogError, match="unresolved"):
        schema_problems(1, {"$ref": "jsonschema://x.json"})


def test_object_port_keeps_json_schema_required_list() -> None:
    port = {"type": "object", "required": ["a"], "default": {"a": 1}}
    spec = BlockSpec(id="x.y", version="1.0.0", entrypoint="m:C", inputs={"p": port})
    assert spec.required_inputs() == []
    assert spec.input_schema("p") == {"type": "object", "required": ["a"]}
    assert schema_problems({}, port) == ["$: 必須の項目 'a' がありません"]


@pytest.mark.parametrize(
    ("entrypoint", "kind", "message"),
    [
        ("block.py:Missing", "processing", "has no 'Missing'"),
        ("block.py:NotABlock", "processing", "not a Block subclass"),
        ("block.py:Asking", "processing", "kind 'processing' but Asking is a 'ui' block"),
        ("block.py:Abstract", "processing", "を作れません"),
        ("no_such_package_for_tests.mod:Block", "processing", "cannot be imported"),
        ("broken.py:Good", "processing", "ZeroDivisionError"),
    ],
)
def test_load_errors_name_the_entrypoint(
    tmp_path: Path, entrypoint: str, kind: str, message: str
) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir()
    (folder / "broken.py").write_text("1 / 0\n", encoding="utf-8")
    catalog = make_catalog(folder, entrypoint=entrypoint, kind=kind)
    with pytest.raises(CatalogError) as caught:
        catalog.load(catalog.resolve("user.x"))
    assert message in caught.value.message
    assert entrypoint in caught.value.message


def test_ui_block_loads_when_the_kind_matches(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "b", entrypoint="block.py:Asking", kind="ui")
    assert catalog.load(catalog.resolve("user.x")).kind == "ui"


def test_file_entrypoint_needs_a_spec_folder() -> None:
    spec = BlockSpec(id="x.y", version="1.0.0", entrypoint="block.py:Good")
    with pytest.raises(CatalogError, match="no folder"):
        BlockCatalog([spec]).load(spec)


def test_from_mapping_without_a_file() -> None:
    spec = BlockSpec.from_mapping(
        {"id": "x.y", "version": "2.0.0", "entrypoint": "keiri_agent.blocks.text:JoinBlock"}
    )
    assert spec.reference == "x.y@2.0.0" and spec.source is None
    with pytest.raises(CatalogError, match=r"<spec>: version: '2' is not SemVer"):
        BlockSpec.from_mapping({"id": "x.y", "version": "2", "entrypoint": "m:C"})


def test_catalog_refuses_a_spec_object_with_a_bad_version() -> None:
    with pytest.raises(CatalogError, match="バージョンの形"):
        BlockCatalog([BlockSpec(id="x.y", version="1.0", entrypoint="m:C")])
