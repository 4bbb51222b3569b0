"""Validator rules that look at one node or one plan section at a time.

``plans.check.validator`` walks the plan and calls these; each reports through an
``add(code, message, *, node_id, path, hint, severity, ...details)`` callback so
every problem is collected (none stops the walk). ``unknown`` reports a name that
is not one of the valid choices, with the choices and the closest one in
``details``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from keiri_agent.errors import closest_match
from keiri_agent.plans.catalog.catalog import BlockSpec
from keiri_agent.plans.catalog.port_types import describe_types, literal_schema, schema_types
from keiri_agent.plans.dsl.models import BlockNode, Plan
from keiri_agent.plans.issues import IssueCode, Severity, ValidationIssue

INTERACTIVE_INPUT = "ui.interactive_input"
REQUIREMENT_TYPES = ("file", "files", "folder", "text", "select", "boolean", "number", "chat")


class Add(Protocol):
    """The validator's issue collector."""

    def __call__(
        self,
        code: IssueCode,
        message: str,
        *,
        node_id: str | None = None,
        path: str | None = None,
        hint: str | None = None,
        severity: Severity = "error",
        name: str | None = None,
        choices: Iterable[str] | None = None,
        closest: str | None = None,
        expected: str | None = None,
        actual: str | None = None,
        cause: ValidationIssue | None = None,
    ) -> None: ...


def block_id_of(reference: str) -> str:
    """``ui.interactive_input@^1`` -> ``ui.interactive_input``."""
    return reference.partition("@")[0].strip()


def unknown_block(add: Add, node: BlockNode, path: str, known: Sequence[str]) -> None:
    """UNKNOWN_BLOCK with up to three close matches."""
    block_id = block_id_of(node.block)
    close = difflib.get_close_matches(block_id, known, n=3, cutoff=0.5)
    add(
        IssueCode.UNKNOWN_BLOCK,
        f"ブロック {block_id!r} は見つかりません"
        + (f"。{'、'.join(repr(c) for c in close)} のことですか？" if close else ""),
        node_id=node.id,
        path=f"{path}.block",
        hint=(
            "使えるブロックは `keiri-agent blocks list` で一覧できます。"
            "正しいブロック id に直してください"
        ),
        name=block_id,
        choices=known,
        closest=closest_match(block_id, known) or (close[0] if close else None),
    )


def check_ports(add: Add, node: BlockNode, path: str, spec: BlockSpec) -> None:
    """UNKNOWN_INPUT, MISSING_REQUIRED_INPUT, OUTPUT_NOT_DECLARED, DUPLICATE_ALIAS."""
    declared_in = list(spec.inputs)
    for key in node.inputs:
        if key not in spec.inputs:
            unknown(
                add,
                IssueCode.UNKNOWN_INPUT,
                f"{spec.reference} の入力",
                key,
                declared_in,
                node_id=node.id,
                path=f"{path}.in.{key}",
                hint=f"{spec.id} の入力は {'、'.join(declared_in) or '（なし）'} です。"
                "この中の名前に直すか、in から消してください",
            )
    for name in spec.required_inputs():
        if name not in node.inputs:
            add(
                IssueCode.MISSING_REQUIRED_INPUT,
                f"{spec.reference} の必須の入力 {name!r} が指定されていません",
                node_id=node.id,
                path=f"{path}.in",
                hint=f"in に '{name}: ...' を加えてください（値か ${{...}} の参照）",
                name=name,
                expected=type_name(spec.inputs[name]),
            )
    declared_out = list(spec.outputs)
    aliases: dict[str, str] = {}
    for port, alias in node.outputs.items():
        if port not in spec.outputs:
            unknown(
                add,
                IssueCode.OUTPUT_NOT_DECLARED,
                f"{spec.reference} の出力",
                port,
                declared_out,
                node_id=node.id,
                path=f"{path}.out.{port}",
                hint=f"{spec.id} の出力は {'、'.join(declared_out) or '（なし）'} です。"
                "この中の名前に直すか、out から消してください",
            )
        if alias in aliases:
            add(
                IssueCode.DUPLICATE_ALIAS,
                f"別名 {alias!r} が出力 {aliases[alias]!r} と {port!r} の両方に使われています",
                node_id=node.id,
                path=f"{path}.out.{port}",
                hint="出力ごとに別の別名を付けてください",
                name=alias,
            )
        aliases.setdefault(alias, port)


def literal_mismatch(
    add: Add,
    node_id: str,
    path: str,
    problems: list[str],
    schema: Mapping[str, Any],
    what: str,
    value: Any,
) -> None:
    """INPUT_TYPE_MISMATCH for a literal (no references) that does not fit its port;
    ``choices`` are the schema's ``enum`` values when it has them."""
    shown = "; ".join(problems[:3]) + (
        f"（ほか {len(problems) - 3} 件）" if len(problems) > 3 else ""
    )
    enum = schema.get("enum")
    choices = [str(choice) for choice in enum] if isinstance(enum, list) else None
    add(
        IssueCode.INPUT_TYPE_MISMATCH,
        f"{what} の値が受け付ける形に合いません: {shown}",
        node_id=node_id,
        path=path,
        hint=_schema_hint(schema),
        choices=choices,
        closest=closest_match(str(value), choices) if choices and isinstance(value, str) else None,
        expected=type_name(schema),
        actual=value_type(value),
    )


def check_requirements(add: Add, nodes: Iterable[tuple[BlockNode, str]]) -> None:
    """``ui.interactive_input`` requirements: REQUIREMENTS_DUPLICATE_ID (within a node),
    REQUIREMENTS_TYPE_CONFLICT (one id, different types across nodes),
    REQUIREMENTS_UNKNOWN_TYPE and REQUIREMENTS_MISSING_OPTIONS (select without options)."""
    seen_types: dict[str, tuple[str, str]] = {}
    for node, path in nodes:
        requirements = node.inputs.get("requirements")
        if not isinstance(requirements, list):
            continue
        ids: set[str] = set()
        for index, item in enumerate(requirements):
            if not isinstance(item, Mapping):
                continue
            where = f"{path}.in.requirements[{index}]"
            field_id, field_type = item.get("id"), item.get("type")
            if isinstance(field_id, str):
                if field_id in ids:
                    add(
                        IssueCode.REQUIREMENTS_DUPLICATE_ID,
                        f"入力項目の id {field_id!r} がこのノードで 2 回使われています",
                        node_id=node.id,
                        path=f"{where}.id",
                        hint=(
                            "項目ごとに別の id を付けてください"
                            "（id は collected_data のキーになります）"
                        ),
                        name=field_id,
                    )
                ids.add(field_id)
            if not isinstance(field_type, str) or "${" in field_type:
                continue
            if field_type not in REQUIREMENT_TYPES:
                unknown(
                    add,
                    IssueCode.REQUIREMENTS_UNKNOWN_TYPE,
                    "入力項目の種類",
                    field_type,
                    REQUIREMENT_TYPES,
                    node_id=node.id,
                    path=f"{where}.type",
                )
            elif field_type == "select" and not item.get("options"):
                add(
                    IssueCode.REQUIREMENTS_MISSING_OPTIONS,
                    f"選択式の入力項目 {field_id!r} に選択肢 (options) がありません",
                    node_id=node.id,
                    path=f"{where}.options",
                    hint="options: [選択肢1, 選択肢2] のように選択肢を加えてください",
                    name=field_id if isinstance(field_id, str) else None,
                )
            if not isinstance(field_id, str):
                continue
            first = seen_types.setdefault(field_id, (field_type, node.id))
            if first[0] != field_type and first[1] != node.id:
                add(
                    IssueCode.REQUIREMENTS_TYPE_CONFLICT,
                    f"入力項目 {field_id!r} の種類が、ここでは {field_type!r}、ノード {first[1]!r} "
                    f"では {first[0]!r} で食い違っています",
                    node_id=node.id,
                    path=f"{where}.type",
                    hint="同じ id には同じ種類を使うか、どちらかの id を変えてください",
                    name=field_id,
                    expected=first[0],
                    actual=field_type,
                )


def check_layout(
    add: Add, plan: Plan, node_ids: Iterable[str], ui_nodes: Mapping[str, Sequence[str]]
) -> None:
    """LAYOUT_UNKNOWN_NODE (error), LAYOUT_DUPLICATE_NODE and LAYOUT_MISSING_NODE (warnings).

    ``ui_nodes``: UI-kind node id -> its enclosing loops; a node is in the layout when
    it or one of its enclosing loops is listed.
    """
    known = list(node_ids)
    known_set = set(known)
    listed: set[str] = set()
    for index, node_id in enumerate(plan.ui.layout):
        if node_id not in known_set:
            unknown(
                add,
                IssueCode.LAYOUT_UNKNOWN_NODE,
                "ui.layout のノード",
                node_id,
                known,
                path=f"ui.layout[{index}]",
            )
        elif node_id in listed:
            add(
                IssueCode.LAYOUT_DUPLICATE_NODE,
                f"ノード {node_id!r} が ui.layout に 2 回書かれています",
                node_id=node_id,
                name=node_id,
                path=f"ui.layout[{index}]",
                hint="ui.layout からどちらか一方を消してください",
                severity="warning",
            )
        listed.add(node_id)
    if not plan.ui.layout:
        return
    for node_id, loops in ui_nodes.items():
        if node_id not in listed and not listed.intersection(loops):
            add(
                IssueCode.LAYOUT_MISSING_NODE,
                f"画面に表示するノード {node_id!r} が ui.layout にありません",
                node_id=node_id,
                path="ui.layout",
                hint=f"表示したい位置で ui.layout に {node_id!r} を加えてください",
                name=node_id,
                severity="warning",
            )


def check_var_titles(add: Add, plan: Plan) -> None:
    """UNKNOWN_REFERENCE for a ``ui.vars`` entry that names no var of the Plan."""
    names = list(plan.vars)
    for name in plan.ui.vars:
        if name not in plan.vars:
            unknown(
                add,
                IssueCode.UNKNOWN_REFERENCE,
                "ui.vars の変数",
                name,
                names,
                path=f"ui.vars.{name}",
                hint="ui.vars には vars にある変数の名前を書いてください",
            )


def check_concurrency(add: Add, plan: Plan, node_ids: Iterable[str]) -> None:
    """CONCURRENCY_UNKNOWN_NODE for ``policy.concurrency.per_node`` (the model bounds values)."""
    known = list(node_ids)
    known_set = set(known)
    for node_id in plan.policy.concurrency.per_node:
        path = f"policy.concurrency.per_node.{node_id}"
        if node_id not in known_set:
            unknown(
                add,
                IssueCode.CONCURRENCY_UNKNOWN_NODE,
                "ノード",
                node_id,
                known,
                path=path,
                hint="policy.concurrency.per_node にはこの Plan のノード id を書いてください",
            )


def type_name(schema: Any) -> str | None:
    """The JSON type(s) a schema allows (``string``, ``array | object``); None when unknown."""
    types = schema_types(schema) if isinstance(schema, Mapping) else None
    return describe_types(types) if types else None


def value_type(value: Any) -> str | None:
    """The JSON type of a literal value (``null`` for None); None when unknown."""
    return "null" if value is None else type_name(literal_schema(value))


def unknown(
    add: Add,
    code: IssueCode,
    kind: str,
    value: str,
    choices: Sequence[str],
    *,
    node_id: str | None = None,
    path: str | None = None,
    hint: str | None = None,
    suffix: str = "",
) -> None:
    """``code`` for a name that is not one of ``choices``: ``入力 'x' は見つかりません。
    'y' のことですか？`` (``suffix`` before the suggestion), with the choices and the closest
    one in details."""
    closest = closest_match(value, choices) if choices else None
    add(
        code,
        unknown_message(kind, value, closest, suffix),
        node_id=node_id,
        path=path,
        hint=hint,
        name=value,
        choices=choices,
        closest=closest,
    )


def unknown_message(kind: str, value: str, closest: str | None, suffix: str = "") -> str:
    """``入力 'x' は見つかりません。'y' のことですか？`` (the suggestion only when one
    is close; ``suffix`` right after the name, e.g. ``（${x.y} の中）``)."""
    text = f"{kind} {value!r} は見つかりません{suffix}"
    if closest is not None:
        text += f"。{closest!r} のことですか？"
    return text


def _schema_hint(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if "enum" in schema:
        return f"次のどれかにしてください: {', '.join(map(str, schema['enum']))}"
    return f"{kind} 型の値にしてください" if isinstance(kind, str) else None
