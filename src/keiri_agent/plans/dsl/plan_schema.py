"""The JSON Schema of Plan YAML files, generated from ``plans.dsl.models``.

Editors that speak the YAML language server (VS Code's YAML extension, JetBrains)
complete and check Plans when the file starts with::

    # yaml-language-server: $schema=../src/keiri_agent/plans/dsl/plan.schema.json

(the path is relative to the YAML file; an absolute ``file:///...`` or ``https://``
URL works too). The shipped ``plan.schema.json`` next to this module is
regenerated with ``write_plan_schema(PLAN_SCHEMA_PATH)``; a test fails when it is
out of date with the models. The schema checks structure only: blocks, ports
and references are the validator's job (``plans.check.validator``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from keiri_agent.plans.dsl.models import API_VERSIONS, Plan

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
PLAN_SCHEMA_PATH = Path(__file__).with_name("plan.schema.json")
"""The generated schema shipped with the package."""


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a Plan document, field names as in YAML."""
    schema = Plan.model_json_schema(by_alias=True, mode="validation")
    properties = schema.get("properties", {})
    if "apiVersion" in properties:
        properties["apiVersion"] = {**properties["apiVersion"], "enum": list(API_VERSIONS)}
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "keiri-agent Plan",
        "description": (
            "A business procedure for keiri-agent (seed 002 §5): vars, policy, UI hints and "
            "a graph of block, loop and subflow nodes."
        ),
        **{key: value for key, value in schema.items() if key not in {"title", "description"}},
    }


def plan_schema_text() -> str:
    """The schema as the JSON text written to files (stable key order, UTF-8)."""
    return json.dumps(plan_json_schema(), ensure_ascii=False, indent=2) + "\n"


def write_plan_schema(path: Path | str) -> Path:
    """Write the schema to ``path`` (folders created); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(plan_schema_text(), encoding="utf-8")
    return target
