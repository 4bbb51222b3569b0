"""The Plan JSON Schema: generated from the models, shipped up to date, checks plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from keiri_agent.plans.dsl.plan_schema import (
    JSON_SCHEMA_DIALECT,
    PLAN_SCHEMA_PATH,
    plan_json_schema,
    plan_schema_text,
    write_plan_schema,
)

DESIGNS = Path(__file__).parent / "data" / "designs"


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = plan_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_schema_is_titled_and_names_its_dialect() -> None:
    schema = plan_json_schema()
    assert schema["$schema"] == JSON_SCHEMA_DIALECT
    assert schema["title"] == "keiri-agent Plan"
    assert schema["properties"]["apiVersion"]["enum"] == ["v1"]
    assert {"graph", "vars", "policy", "ui", "exports"} <= set(schema["properties"])


def test_shipped_schema_is_up_to_date() -> None:
    shipped = PLAN_SCHEMA_PATH.read_text(encoding="utf-8")
    assert shipped == plan_schema_text(), (
        "plan.schema.json is stale: run "
        "`uv run python -c 'from keiri_agent.plans.dsl.plan_schema import *; "
        "write_plan_schema(PLAN_SCHEMA_PATH)'`"
    )


def test_write_plan_schema(tmp_path: Path) -> None:
    path = write_plan_schema(tmp_path / "schemas" / "plan.schema.json")
    assert json.loads(path.read_text(encoding="utf-8")) == plan_json_schema()


@pytest.mark.parametrize("path", sorted(DESIGNS.rglob("*.yaml")), ids=lambda p: p.stem)
def test_example_plans_match_the_schema(validator: Draft202012Validator, path: Path) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert list(validator.iter_errors(document)) == []


@pytest.mark.parametrize(
    "change",
    [
        {"graph": [{"id": "a", "blok": "x"}]},
        {"graph": [{"id": "a", "type": "loop", "body": {"plan": {"graph": []}}}]},
        {"apiVersion": "v9"},
        {"policy": {"on_error": "ignore"}},
    ],
)
def test_invalid_plans_do_not_match(
    validator: Draft202012Validator, change: dict[str, object]
) -> None:
    document = {
        "apiVersion": "v1",
        "id": "x",
        "version": "1.0.0",
        "graph": [{"id": "a", "block": "text.template"}],
        **change,
    }
    assert list(validator.iter_errors(document)) != []


def test_var_titles_are_in_the_schema(validator: Draft202012Validator) -> None:
    document = {
        "apiVersion": "v1",
        "id": "x",
        "version": "1.0.0",
        "vars": {"limit": 1000},
        "ui": {"vars": {"limit": {"title": "上限金額", "description": "超えると一覧に出ます"}}},
        "graph": [{"id": "a", "block": "text.template"}],
    }
    assert list(validator.iter_errors(document)) == []
    document["ui"] = {"vars": {"limit": {"title": ""}}}
    assert list(validator.iter_errors(document)) != []
    document["ui"] = {"vars": {"limit": {"titel": "上限金額"}}}
    assert list(validator.iter_errors(document)) != []
