"""Port schemas of block specs: port-level keys, ``nullable``, ``$ref`` and validation.

A port is a JSON Schema (Draft 2020-12) plus port-level keys: ``required: true``
(a boolean; a *list* is JSON Schema's own ``required``), ``default``,
``nullable: true`` (None accepted, anywhere in the schema), ``examples`` and
``description``. ``$ref`` may name ``package.module:PydanticModel`` or
``jsonschema://relative/path.json[#/json/pointer]`` (relative to the spec file).

Problems are raised as ``ValueError``; ``plans.catalog`` adds the file and port.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

PORT_KEYS = frozenset({"required", "default", "nullable", "examples", "description"})
"""Keys a port may carry besides JSON Schema (``required`` only as a boolean)."""

MODULE_REF = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
FILE_REF_PREFIX = "jsonschema://"
_HOISTED = ("$defs", "definitions")
_NULL_BRANCH = {"type": "null"}
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAX_MESSAGE = 240
_META_VALIDATOR = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def _walk(schema: Any, visit: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """Rebuild ``schema`` bottom-up, calling ``visit`` on every (sub)schema object."""
    if not isinstance(schema, Mapping):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: _walk(sub, visit) for name, sub in value.items()}
        elif key in _SCHEMA_ONE:
            out[key] = (
                [_walk(sub, visit) for sub in value]
                if isinstance(value, list)
                else _walk(value, visit)
            )
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_walk(sub, visit) for sub in value]
        else:
            out[key] = copy.deepcopy(value)
    return visit(out)


def _nullable_to_any_of(schema: dict[str, Any]) -> dict[str, Any]:
    nullable = schema.pop("nullable", None)
    if nullable is not True:
        return schema
    hoisted = {key: schema.pop(key) for key in (*_HOISTED, "$schema") if key in schema}
    return {**hoisted, "anyOf": [dict(_NULL_BRANCH), schema]}


def strip_port_keys(port: Mapping[str, Any]) -> dict[str, Any]:
    """The port without ``default`` and a boolean ``required`` (top level only)."""
    return {
        key: copy.deepcopy(value)
        for key, value in port.items()
        if key != "default" and not (key == "required" and isinstance(value, bool))
    }


def to_json_schema(port: Mapping[str, Any]) -> dict[str, Any]:
    """The port as plain JSON Schema: without required/default, ``nullable`` as anyOf null."""
    return dict(_walk(strip_port_keys(port), _nullable_to_any_of))


def external_refs(schema: Any) -> list[str]:
    """Every ``$ref`` in ``schema`` that is not local (``#...``)."""
    found: list[str] = []

    def visit(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            found.append(ref)
        return node

    _walk(schema, visit)
    return found


def meta_schema_problems(schema: Any) -> list[str]:
    """Why ``schema`` is not a valid Draft 2020-12 schema (empty when it is)."""
    problems = []
    for error in sorted(_META_VALIDATOR.iter_errors(schema), key=lambda e: list(map(str, e.path))):
        problems.append(f"{_format_path(error.absolute_path)}: {_short(error.message)}")
    return problems


def resolve_refs(schema: Mapping[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """Inline ``module:Model`` and ``jsonschema://`` refs; their ``$defs`` move to the root."""
    defs: dict[str, dict[str, Any]] = {key: {} for key in _HOISTED}
    resolved = _resolve(dict(schema), base_dir, defs, ())
    for key, collected in defs.items():
        if collected:
            resolved[key] = {**resolved.get(key, {}), **collected}
    return resolved


def _resolve(
    schema: dict[str, Any],
    base_dir: Path | None,
    defs: dict[str, dict[str, Any]],
    stack: tuple[str, ...],
) -> dict[str, Any]:
    def visit(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if not isinstance(ref, str) or ref.startswith("#"):
            return node
        if MODULE_REF.match(ref):
            target, target_dir, key = _model_schema(ref), base_dir, ref
        elif ref.startswith(FILE_REF_PREFIX):
            target, target_dir, key = _file_schema(ref, base_dir)
        else:
            raise ValueError(
                f"unsupported $ref {ref!r}: use 'package.module:PydanticModel', "
                "'jsonschema://relative/path.json' or a local '#/$defs/...'"
            )
        if key in stack:
            raise ValueError(f"$ref cycle through {ref!r}")
        for place in _HOISTED:
            for name, sub in dict(target.pop(place, {})).items():
                if name in defs[place] and defs[place][name] != sub:
                    raise ValueError(f"$ref {ref!r}: two different definitions named {name!r}")
                defs[place][name] = sub
        target = _resolve(target, target_dir, defs, (*stack, key))
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return {**target, **siblings}

    resolved = _walk(schema, visit)
    for key in _HOISTED:  # definitions pulled in from refs may hold refs themselves
        for name, sub in list(defs[key].items()):
            if external_refs(sub):
                defs[key][name] = _resolve(sub, base_dir, defs, stack)
    return dict(resolved)


def _model_schema(ref: str) -> dict[str, Any]:
    module_name, _, attribute = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"$ref {ref!r}: cannot import {module_name!r} ({error})") from None
    model = getattr(module, attribute, None)
    if model is None:
        raise ValueError(f"$ref {ref!r}: module {module_name!r} has no {attribute!r}")
    schema_of = getattr(model, "model_json_schema", None)
    if not isinstance(model, type) or not callable(schema_of):
        raise ValueError(f"$ref {ref!r}: {attribute!r} is not a Pydantic model class")
    return dict(schema_of())


def _file_schema(ref: str, base_dir: Path | None) -> tuple[dict[str, Any], Path, str]:
    relative, _, pointer = ref.removeprefix(FILE_REF_PREFIX).partition("#")
    if base_dir is None:
        raise ValueError(f"$ref {ref!r}: the spec has no folder to resolve a file against")
    path = (base_dir / relative).resolve()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"$ref {ref!r}: no file {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"$ref {ref!r}: cannot read {path} ({error})") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"$ref {ref!r}: {path} is not JSON ({error})") from None
    if not isinstance(document, dict):
        raise ValueError(f"$ref {ref!r}: {path} does not hold a JSON Schema object")
    for key in ("$schema", "$id"):
        document.pop(key, None)
    target: Any = document
    for part in [p for p in pointer.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            raise ValueError(f"$ref {ref!r}: {path} has nothing at #{pointer}")
        target = target[part]
    if not isinstance(target, dict):
        raise ValueError(f"$ref {ref!r}: #{pointer} in {path} is not a schema object")
    if target is not document:  # keep the file's definitions for the part's local refs
        target = {**target, **{k: document[k] for k in _HOISTED if k in document}}
    return copy.deepcopy(target), path.parent, f"{path}#{pointer}"


def problems(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """Why ``value`` does not fit ``schema`` (a port or a plain schema); [] when it fits."""
    plain = to_json_schema(schema)
    refs = external_refs(plain)
    if refs:
        raise ValueError(
            f"schema has unresolved $ref {refs[0]!r}; use BlockSpec.input_schema()/"
            "output_schema(), which resolve them"
        )
    validator = Draft202012Validator(plain, format_checker=Draft202012Validator.FORMAT_CHECKER)
    found: list[str] = []
    for error in _flatten(validator.iter_errors(value)):
        message = f"{_format_path(error.absolute_path)}: {describe_error(error)}"
        if message not in found:
            found.append(message)
    return sorted(found)


_TYPE_NAMES = {
    "integer": "整数",
    "number": "数値",
    "string": "文字列",
    "boolean": "真偽値（true / false）",
    "array": "リスト",
    "object": "オブジェクト（「名前: 値」の対応）",
    "null": "空（null）",
}
_FORMAT_NAMES = {
    "date": "日付（例: 2024-01-31）",
    "date-time": "日時（例: 2024-01-31T09:00:00+09:00）",
    "time": "時刻（例: 09:00:00+09:00）",
    "email": "メールアドレス",
    "uri": "URL",
}
_SHOWN_VALUE = 60


def _shown(value: Any) -> str:
    text = repr(value)
    if isinstance(value, bytes | bytearray):
        text = f"ファイルの中身（{len(value):,} バイト）"
    return text if len(text) <= _SHOWN_VALUE else text[: _SHOWN_VALUE - 1] + "…"


def _type_text(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return "・".join(_TYPE_NAMES.get(str(name), str(name)) for name in names)


def describe_error(error: ValidationError) -> str:
    """One JSON Schema problem in Japanese (e.g. 「'abc' は整数ではありません」)."""
    kind, value = error.validator, error.instance
    expected: Any = error.validator_value
    if kind == "type":
        several = isinstance(expected, list) and len(expected) > 1
        ending = "のどれでもありません" if several else "ではありません"
        return f"{_shown(value)} は{_type_text(expected)}{ending}"
    if kind == "required" and isinstance(value, Mapping):
        missing = [name for name in expected if name not in value]
        return f"必須の項目 {', '.join(map(repr, missing))} がありません"
    if kind == "additionalProperties" and isinstance(value, Mapping):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [str(name) for name in value if name not in known]
        allowed = ", ".join(known)
        return f"使えない項目 {', '.join(map(repr, extra))} があります（使える項目: {allowed}）"
    if kind == "enum":
        options = ", ".join(map(repr, expected))
        return f"{_shown(value)} は使える値ではありません（使える値: {options}）"
    if kind == "const":
        return f"{_shown(value)} ではなく {expected!r} にしてください"
    limits = {
        "minimum": "以上にしてください",
        "maximum": "以下にしてください",
        "exclusiveMinimum": "より大きくしてください",
        "exclusiveMaximum": "より小さくしてください",
    }
    if kind in limits:
        return f"{_shown(value)} は {expected} {limits[kind]}"
    if kind == "multipleOf":
        return f"{_shown(value)} は {expected} の倍数にしてください"
    if kind in ("minLength", "maxLength"):
        bound = "以上" if kind == "minLength" else "以内"
        return f"{_shown(value)} は {expected} 文字{bound}にしてください"
    if kind in ("minItems", "maxItems", "minProperties", "maxProperties"):
        bound = "以上" if kind.startswith("min") else "以下"
        unit = "要素" if kind.endswith("Items") else "項目"
        count = len(value) if isinstance(value, list | Mapping) else 0
        return f"{unit}は {expected} 個{bound}にしてください（今は {count} 個）"
    if kind == "uniqueItems":
        return "同じ要素が重複しています。重複を除いてください"
    if kind == "pattern":
        return f"{_shown(value)} は決められた形式（{expected!r}）に合っていません"
    if kind == "format":
        shown = _FORMAT_NAMES.get(str(expected), str(expected))
        return f"{_shown(value)} は{shown}の形式ではありません"
    if kind in ("anyOf", "oneOf"):
        return f"{_shown(value)} は許された形のどれにも合いません"
    if kind == "not":
        return f"{_shown(value)} はここでは使えません"
    return f"{_shown(value)} はスキーマの条件 {kind} に合いません"


def _flatten(errors: Any) -> list[ValidationError]:
    """Replace 'not valid under anyOf [null, X]' by the errors against X."""
    flat: list[ValidationError] = []
    for error in errors:
        branches = error.schema.get("anyOf") if isinstance(error.schema, dict) else None
        if (
            error.validator == "anyOf"
            and isinstance(branches, list)
            and len(branches) == 2
            and branches[0] == _NULL_BRANCH
        ):
            flat.extend(_flatten(e for e in error.context or [] if e.schema_path[0] == 1))
        else:
            flat.append(error)
    return flat


def _format_path(path: Any) -> str:
    text = "$"
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            text += f".{part}"
        else:
            text += f"[{part!r}]"
    return text


def _short(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"
