"""Pydantic validation errors of a Plan document turned into ``ValidationIssue``s.

Each issue gets the path as written in YAML (``graph[2].in.mode``: the union tags
Pydantic adds are dropped, and for ``when`` only the member the document meant is
kept), the id of the node it is in, the YAML line, and a hint ("did you mean
'block'?" with the valid fields for unknown keys).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from keiri_agent.errors import closest_match
from keiri_agent.plans.dsl.models import ConditionCompare, ConditionExpr, Plan
from keiri_agent.plans.issues import ValidationIssue

Loc = tuple[str | int, ...]
_NODE_TAGS = frozenset({"block", "loop", "subflow"})
_CONDITION_TAGS = frozenset({"ConditionExpr", "ConditionCompare"})


def schema_issues(
    errors: list[ErrorDetails], data: dict[str, Any], lines: Mapping[Loc, int]
) -> list[ValidationIssue]:
    cleaned: list[tuple[Loc, ErrorDetails]] = []
    for error in errors:
        loc = _clean_loc(tuple(error["loc"]), data)
        if loc is not None:
            cleaned.append((loc, error))
    issues: list[ValidationIssue] = []
    seen: set[tuple[Loc, str]] = set()
    for loc, error in cleaned:
        message, hint = _describe(loc, error, data)
        if (loc, message) in seen:
            continue
        seen.add((loc, message))
        code = "SCHEMA"
        if loc[-2:] == ("while", "max_iterations") and error["type"] == "missing":
            code = "WHILE_MISSING_MAX"
            message = "a while loop needs max_iterations (it stops an endless loop)"
            hint = "add 'max_iterations: <n>' next to 'condition'"
        issues.append(
            ValidationIssue(
                code,
                "error",
                message,
                node_id=_node_id_at(loc, data),
                path=format_path(loc) or None,
                hint=hint,
                line=_line_at(loc, lines),
            )
        )
    return issues


def _clean_loc(loc: Loc, data: Any) -> Loc | None:
    """Drop union tags from a Pydantic loc; None for errors of a non-chosen union member."""
    out: list[str | int] = []
    value: Any = data
    tag_seen = False
    i = 0
    while i < len(loc):
        part = loc[i]
        after_node_index = len(out) >= 2 and isinstance(out[-1], int) and out[-2] == "graph"
        if isinstance(part, str) and part in _NODE_TAGS and after_node_index and not tag_seen:
            tag_seen = True  # Pydantic puts the discriminator tag right after a node's index
            i += 1
            continue
        tag_seen = False
        if isinstance(part, str) and part in _CONDITION_TAGS:
            chosen = "ConditionExpr" if not isinstance(value, dict) or "expr" in value else None
            chosen = chosen or "ConditionCompare"
            if part != chosen:
                return None
            i += 1
            continue
        out.append(part)
        value = _child(value, part)
        i += 1
    return tuple(out)


def _child(value: Any, part: str | int) -> Any:
    if isinstance(part, int) and isinstance(value, list) and -len(value) <= part < len(value):
        return value[part]
    if isinstance(value, dict):
        return value.get(part)
    return None


def _describe(loc: Loc, error: ErrorDetails, data: Any) -> tuple[str, str | None]:
    kind = error["type"]
    name = str(loc[-1]) if loc else "the plan"
    if kind == "missing":
        return f"missing required field {name!r}", f"add '{name}: ...'"
    if kind == "extra_forbidden":
        allowed = _allowed_fields(loc[:-1], data)
        suggestion = closest_match(name, allowed) if allowed else None
        message = f"unknown field {name!r}"
        if suggestion:
            message += f" — did you mean {suggestion!r}?"
        return message, f"valid fields here: {', '.join(allowed)}" if allowed else None
    if kind == "union_tag_invalid":
        return (
            f"unknown node type {_child_at(loc, data, 'type')!r}",
            "type is block (the default), loop or subflow",
        )
    if kind == "string_type" and loc[-1:] == ("version",):
        return error["msg"], 'quote it in YAML: version: "1.0.0"'
    if kind in {"model_type", "dict_type"} and loc and loc[-1] in {"when", "condition"}:
        return "a condition must be {expr: ...} or {left, op, right}", None
    message = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    hint = None
    if kind == "string_type":
        hint = "quote the value in YAML"
    return message, hint


def _child_at(loc: Loc, data: Any, key: str) -> Any:
    value = data
    for part in loc:
        value = _child(value, part)
    return _child(value, key)


def _allowed_fields(loc: Loc, data: Any) -> list[str]:
    """The field names (YAML spelling) of the model at ``loc``, or [] when unknown."""
    annotation: Any = Plan
    value: Any = data
    for part in loc:
        annotation = _pick(annotation, value)
        if isinstance(part, int):
            args = typing.get_args(annotation)
            if typing.get_origin(annotation) is not list or not args:
                return []
            annotation = args[0]
        else:
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return []
            field = _field(annotation, part)
            if field is None:
                return []
            annotation = field
        value = _child(value, part)
    model = _pick(annotation, value)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [info.alias or name for name, info in model.model_fields.items()]
    return []


def _field(model: type[BaseModel], part: str) -> Any:
    for name, info in model.model_fields.items():
        if part in (name, info.alias):
            return info.annotation
    return None


def _pick(annotation: Any, value: Any) -> Any:
    """Unwrap Annotated/Optional/unions the way the models choose between members."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            members = [
                typing.get_args(arg)[0] if typing.get_origin(arg) is typing.Annotated else arg
                for arg in typing.get_args(annotation)
                if arg is not type(None)
            ]
            if ConditionExpr in members:
                has_expr = not isinstance(value, dict) or "expr" in value
                return ConditionExpr if has_expr else ConditionCompare
            kind = value.get("type", "block") if isinstance(value, dict) else "block"
            for member in members:
                default = getattr(member, "model_fields", {}).get("type")
                if default is not None and kind in typing.get_args(default.annotation):
                    return member
            return members[0] if len(members) == 1 else None
        return annotation


def _node_id_at(loc: Loc, data: Any) -> str | None:
    """The id of the innermost graph node the path goes through."""
    node_id = None
    value = data
    for i, part in enumerate(loc):
        value = _child(value, part)
        if isinstance(part, int) and i > 0 and loc[i - 1] == "graph" and isinstance(value, dict):
            candidate = value.get("id")
            node_id = candidate if isinstance(candidate, str) else node_id
    return node_id


def _line_at(loc: Loc, lines: Mapping[Loc, int]) -> int | None:
    for end in range(len(loc), -1, -1):
        line = lines.get(loc[:end])
        if line is not None:
            return line
    return None


def format_path(loc: Loc) -> str:
    """``('graph', 2, 'in', 'mode')`` -> ``graph[2].in.mode``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
