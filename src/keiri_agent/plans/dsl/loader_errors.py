"""Pydantic validation errors of a Plan document turned into ``ValidationIssue``s.

Each issue gets the path as written in YAML (``graph[2].in.mode``: the union tags
Pydantic adds are dropped, and for ``when`` only the member the document meant is
kept), the id of the node it is in, the YAML line and column, a hint ("did you mean
'block'?" with the valid fields for unknown keys) and, in ``details``, the valid
fields or values (``choices``, ``closest``) and the expected and actual JSON type.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from keiri_agent.errors import closest_match
from keiri_agent.plans.dsl.models import ConditionCompare, ConditionExpr, Plan
from keiri_agent.plans.issues import IssueCode, ValidationIssue, make_issue

Loc = tuple[str | int, ...]
Positions = dict[Loc, tuple[int, int]]
"""Path in the document -> 1-based (line, column) in the YAML text."""
_NODE_TYPES = ("block", "loop", "subflow")
_NODE_TAGS = frozenset(_NODE_TYPES)
_CONDITION_TAGS = frozenset({"ConditionExpr", "ConditionCompare"})
_EXPECTED_TYPES = {
    "string_type": "string",
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}
"""Pydantic error type -> the JSON type the field expects."""


@dataclass(frozen=True)
class _Described:
    message: str
    hint: str | None = None
    name: str | None = None
    choices: tuple[str, ...] | None = None
    closest: str | None = None
    expected: str | None = None
    actual: str | None = None


def schema_issues(
    errors: list[ErrorDetails], data: dict[str, Any], positions: Mapping[Loc, tuple[int, int]]
) -> list[ValidationIssue]:
    cleaned: list[tuple[Loc, ErrorDetails]] = []
    for error in errors:
        loc = _clean_loc(tuple(error["loc"]), data)
        if loc is not None:
            cleaned.append((loc, error))
    issues: list[ValidationIssue] = []
    seen: set[tuple[Loc, str]] = set()
    for loc, error in cleaned:
        described = _describe(loc, error, data)
        if (loc, described.message) in seen:
            continue
        seen.add((loc, described.message))
        code = IssueCode.SCHEMA
        message, hint = described.message, described.hint
        if loc[-2:] == ("while", "max_iterations") and error["type"] == "missing":
            code = IssueCode.WHILE_MISSING_MAX
            message = (
                "while ループには max_iterations（終わらないループを止める回数の上限）が必要です"
            )
            hint = "condition の隣に 'max_iterations: <回数>' を加えてください"
        line, column = _position_at(loc, positions)
        issues.append(
            make_issue(
                code,
                message,
                node=_node_id_at(loc, data),
                path=format_path(loc) or None,
                hint=hint,
                line=line,
                column=column,
                name=described.name,
                choices=described.choices,
                closest=described.closest,
                expected=described.expected,
                actual=described.actual,
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


def _describe(loc: Loc, error: ErrorDetails, data: Any) -> _Described:
    kind = error["type"]
    name = str(loc[-1]) if loc else "Plan"
    if kind == "missing":
        return _Described(
            f"必須の項目 {name!r} がありません", f"'{name}: ...' を加えてください", name=name
        )
    if kind == "extra_forbidden":
        allowed = _allowed_fields(loc[:-1], data)
        suggestion = closest_match(name, allowed) if allowed else None
        message = f"項目 {name!r} はここでは使えません"
        if suggestion:
            message += f"。{suggestion!r} のことですか？"
        return _Described(
            message,
            f"ここで使える項目: {', '.join(allowed)}" if allowed else "この項目を消してください",
            name=name,
            choices=tuple(allowed) or None,
            closest=suggestion,
        )
    if kind == "union_tag_invalid":
        written = _child_at(loc, data, "type")
        return _Described(
            f"ノードの種類 (type) {written!r} はありません",
            "type は block（省略時）、loop、subflow のどれかにしてください",
            name=str(written),
            choices=_NODE_TYPES,
            closest=closest_match(str(written), _NODE_TYPES),
        )
    expected = _EXPECTED_TYPES.get(kind)
    actual = json_type(error.get("input")) if expected else None
    if kind == "string_type" and loc[-1:] == ("version",):
        quote = 'YAML で引用符で囲んでください: version: "1.0.0"'
        return _Described(pydantic_message(error), quote, expected=expected, actual=actual)
    if kind in {"model_type", "dict_type"} and loc and loc[-1] in {"when", "condition"}:
        message = "条件は {expr: ...} か {left, op, right} の形で書いてください"
        return _Described(message, expected=expected, actual=actual)
    message = pydantic_message(error)
    hint = "YAML で値を引用符で囲んでください" if kind == "string_type" else None
    if kind == "literal_error":
        choices = _literal_choices(loc, data)
        written = str(error.get("input"))
        closest = closest_match(written, choices) if choices else None
        return _Described(message, hint, name=written, choices=choices, closest=closest)
    return _Described(message, hint, expected=expected, actual=actual)


_TYPE_WORDS = {
    "string": "文字列",
    "integer": "整数",
    "number": "数値",
    "boolean": "真偽値 (true / false)",
    "array": "リスト",
    "object": "マッピング（キー: 値）",
}


def pydantic_message(error: ErrorDetails) -> str:
    """A Japanese sentence for one Pydantic error (its English ``msg`` as a fallback)."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    expected = _EXPECTED_TYPES.get(kind)
    if expected is not None:
        return (
            f"{_TYPE_WORDS[expected]}を書いてください"
            f"（{json_type(error.get('input'))} になっています）"
        )
    if kind == "value_error":
        return str(ctx.get("error") or error["msg"].removeprefix("Value error, "))
    if kind == "literal_error":
        return f"値 {error.get('input')!r} は使えません（使えるのは {ctx.get('expected', '')}）"
    if kind == "string_pattern_mismatch":
        return f"値 {error.get('input')!r} は決められた形（{ctx.get('pattern', '')}）に合いません"
    limits = {
        "greater_than": "{gt} より大きい数にしてください",
        "greater_than_equal": "{ge} 以上の数にしてください",
        "less_than": "{lt} より小さい数にしてください",
        "less_than_equal": "{le} 以下の数にしてください",
        "too_short": "{min_length} 個以上にしてください",
        "too_long": "{max_length} 個以下にしてください",
        "string_too_short": "{min_length} 文字以上にしてください",
        "string_too_long": "{max_length} 文字以下にしてください",
    }
    if kind in limits:
        try:
            return limits[kind].format(**ctx)
        except (KeyError, IndexError):
            pass
    return f"値が正しくありません: {error['msg'].removeprefix('Value error, ')}"


def json_type(value: Any) -> str:
    """The JSON type name of a YAML value (``null`` for None)."""
    if value is None:
        return "null"
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}
    return names.get(type(value), "object" if isinstance(value, dict) else type(value).__name__)


def _literal_choices(loc: Loc, data: Any) -> tuple[str, ...] | None:
    """The values a ``Literal`` field accepts (``on_error``: halt, continue, retry)."""
    if not loc or not isinstance(loc[-1], str):
        return None
    model = _model_at(loc[:-1], data)
    if model is None:
        return None
    annotation = _pick(_field(model, loc[-1]), None)
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(arg) for arg in typing.get_args(annotation))
    return None


def _child_at(loc: Loc, data: Any, key: str) -> Any:
    value = data
    for part in loc:
        value = _child(value, part)
    return _child(value, key)


def _allowed_fields(loc: Loc, data: Any) -> list[str]:
    """The field names (YAML spelling) of the model at ``loc``, or [] when unknown."""
    model = _model_at(loc, data)
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def _model_at(loc: Loc, data: Any) -> type[BaseModel] | None:
    """The Pydantic model of the value at ``loc`` (as the document chose it), or None."""
    annotation: Any = Plan
    value: Any = data
    for part in loc:
        annotation = _pick(annotation, value)
        if isinstance(part, int):
            args = typing.get_args(annotation)
            if typing.get_origin(annotation) is not list or not args:
                return None
            annotation = args[0]
        else:
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return None
            field = _field(annotation, part)
            if field is None:
                return None
            annotation = field
        value = _child(value, part)
    model = _pick(annotation, value)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model
    return None


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


def _position_at(
    loc: Loc, positions: Mapping[Loc, tuple[int, int]]
) -> tuple[int | None, int | None]:
    for end in range(len(loc), -1, -1):
        found = positions.get(loc[:end])
        if found is not None:
            return found
    return None, None


def format_path(loc: Loc) -> str:
    """``('graph', 2, 'in', 'mode')`` -> ``graph[2].in.mode``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
