"""What a validator can know statically about the JSON Schema type of a value.

Used to check that an output port feeds an input port of a compatible type
(seed 002 §6 "型互換") without data: the JSON Schema ``type`` of each side, with
``integer`` and ``number`` compatible both ways, ``anyOf``/``oneOf`` branches
(``nullable`` ports become ``anyOf: [{type: null}, ...]``) unioned, and paths
into objects (``properties``), arrays (``items``) and ``.length`` followed when
the schema says what is there. Anything unknown is ``None`` ("don't know"), and
an unknown never produces an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from jsonschema import Draft202012Validator

from keiri_agent.plans.catalog.catalog import BlockSpec, CatalogError, schema_problems

JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})
_NUMERIC = frozenset({"integer", "number"})
_MAX_REF_HOPS = 20
INTEGER: Mapping[str, Any] = MappingProxyType({"type": "integer"})


def schema_types(
    schema: Mapping[str, Any] | None, root: Mapping[str, Any] | None = None
) -> frozenset[str] | None:
    """The JSON types a value of ``schema`` may have, without ``null``; None when unknown."""
    schema = deref(schema, root or schema)
    if not isinstance(schema, Mapping):
        return None
    declared = schema.get("type")
    if isinstance(declared, str):
        types = frozenset({declared})
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        types = frozenset(declared)
    else:
        branches = schema.get("anyOf") or schema.get("oneOf")
        if not isinstance(branches, list) or not branches:
            return None
        union: set[str] = set()
        for branch in branches:
            if isinstance(branch, Mapping) and branch.get("type") == "null":
                continue
            found = schema_types(branch, root or schema)
            if found is None:
                return None
            union |= found
        types = frozenset(union)
    types = types - {"null"}
    return types if types and types <= JSON_TYPES else None


def compatible(source: frozenset[str] | None, target: frozenset[str] | None) -> bool:
    """False only when both are known and no value can be of both (integer~number)."""
    if source is None or target is None:
        return True
    if source & target:
        return True
    return bool(source & _NUMERIC and target & _NUMERIC)


def deref(schema: Any, root: Any, hops: int = 0) -> Any:
    """Follow a local ``$ref`` (``#/$defs/X``) within ``root``; other refs stay unknown."""
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if not ref.startswith("#/") or hops >= _MAX_REF_HOPS or not isinstance(root, Mapping):
            return None
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema, hops = target, hops + 1
    return schema


def sub_schema(
    schema: Mapping[str, Any] | None, path: tuple[str | int, ...], root: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """The schema of ``value<path>`` given the schema of ``value``; None when unknown."""
    current: Any = schema
    root = root or schema
    for number, segment in enumerate(path):
        current = _single_branch(deref(current, root), root)
        if not isinstance(current, Mapping):
            return None
        properties = current.get("properties")
        is_last = number == len(path) - 1
        if (
            is_last
            and segment == "length"
            and not (isinstance(properties, Mapping) and "length" in properties)
        ):
            types = schema_types(current, root)
            if types is None or types & {"array", "string", "object"}:
                return INTEGER
            return None
        if isinstance(segment, int):
            items = current.get("items")
            current = items if isinstance(items, Mapping) else None
        elif isinstance(properties, Mapping) and segment in properties:
            current = properties[segment]
        else:
            extra = current.get("additionalProperties")
            current = extra if isinstance(extra, Mapping) else None
    return deref(current, root) if isinstance(current, Mapping) else None


def literal_schema(value: Any) -> dict[str, Any] | None:
    """The schema type of a plain literal (``vars`` values); None for null or unknown."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return None if "${" in value else {"type": "string"}
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}
    return None


def describe_types(types: frozenset[str] | None) -> str:
    """``integer`` or ``array | object``."""
    return " | ".join(sorted(types)) if types else "any"


def _single_branch(schema: Any, root: Any) -> Any:
    """For ``anyOf: [null, X]`` (nullable ports) the X branch; otherwise the schema."""
    if not isinstance(schema, Mapping) or "type" in schema:
        return schema
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        real = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
        if len(real) == 1:
            return deref(real[0], root)
    return schema


class PortSchemas:
    """Resolved port schemas and compiled JSON Schema validators, cached per
    (block, version, section, port): checking many nodes costs one compile per port."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str, str, str], dict[str, Any] | CatalogError] = {}
        self._validators: dict[tuple[str, str, str, str], Draft202012Validator | None] = {}

    def schema(self, spec: BlockSpec, section: str, port: str) -> dict[str, Any] | CatalogError:
        """The resolved schema, or the CatalogError resolving it raised (not raised here)."""
        key = (spec.id, spec.version, section, port)
        if key not in self._schemas:
            try:
                getter = spec.input_schema if section == "inputs" else spec.output_schema
                self._schemas[key] = getter(port)
            except CatalogError as error:
                self._schemas[key] = error
        return self._schemas[key]

    def problems(self, spec: BlockSpec, section: str, port: str, value: Any) -> list[str]:
        """Why ``value`` does not fit the port ([] when it fits); CatalogError when the
        port's schema cannot be resolved."""
        schema = self.schema(spec, section, port)
        if isinstance(schema, CatalogError):
            raise schema
        key = (spec.id, spec.version, section, port)
        if key not in self._validators:
            try:
                checker = Draft202012Validator.FORMAT_CHECKER
                self._validators[key] = Draft202012Validator(schema, format_checker=checker)
            except Exception:  # an invalid schema: schema_problems explains it
                self._validators[key] = None
        validator = self._validators[key]
        try:
            if validator is not None and validator.is_valid(value):
                return []
        except Exception:  # fall through to the explaining check
            pass
        return schema_problems(value, schema)
