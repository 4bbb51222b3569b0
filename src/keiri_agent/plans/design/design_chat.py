"""The Design chat (seed 003 §7): the questions a generated Plan left open, over turns.

Pure and surface-neutral: the 設計 page keeps the state in Session State, the API in
its store (``to_dict`` / ``from_dict``); the CLI can drive it too::

    chat = DesignChat(plan_yaml, build_requirements(plan_yaml))
    while (request := chat.next_request()) is not None:   # ui.interactive_input, inquire
        turn = chat.answer(values_from_the_user)          # errors in Japanese, per field
    chat.vars_preview()                                   # the vars as they now stand
    new_yaml = chat.apply()

A turn asks a few requirements at a time (``batch_size``) with the fields
``ui.interactive_input`` shows in ``inquire`` mode (its ``response`` field is optional
here: a free note kept in ``notes``). Each answer is checked with
``blocks.requirements.check_value``; valid answers are kept even when others in the
same turn are wrong. An optional requirement left blank is settled as "not set".

A file or table cannot live in YAML, so ``file``/``table`` requirements are not asked
in the chat: ``apply()`` turns them into a run-time question, a ``ui.interactive_input``
collect node (``DESIGN_INPUT_NODE``) at the start of the graph (or the collect node
already there, extended), and points the target input at
``${<node>.collected.<id>}``; references to a var they replace are rewritten with
``plans.dsl.references.rewrite_references``; ``ui.layout`` lists the node first.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from keiri_agent.blocks.interactive_input import MODE_FIELDS, describe, mode_fields
from keiri_agent.blocks.requirements import check_value, is_empty
from keiri_agent.plans.design.models import Requirement
from keiri_agent.plans.design.requirements import SCHEMA_TEMPLATES, iter_nodes
from keiri_agent.plans.dsl.references import Reference, rewrite_references

DESIGN_INPUT_NODE = "design_inputs"
"""The collect node ``apply()`` adds for files asked at run time."""
DEFAULT_BATCH = 3
RUNTIME_TYPES = ("file", "table")
_NOTE = {"label": "補足（任意）", "required": False}


@dataclass
class ChatTurn:
    """What one ``answer()`` did."""

    accepted: dict[str, Any] = field(default_factory=dict)
    """Requirement id → the value confirmed in this turn (None: optional, left blank)."""
    errors: dict[str, str] = field(default_factory=dict)
    """Requirement id → why the answer was not taken (Japanese, with what to enter)."""
    pending: list[str] = field(default_factory=list)
    """Requirement ids still open after this turn."""
    done: bool = False
    message: str = ""
    """Japanese summary of the turn for the page."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "accepted": dict(self.accepted),
            "errors": dict(self.errors),
            "pending": list(self.pending),
            "done": self.done,
            "message": self.message,
        }


class DesignChat:
    """The chat over one Plan's open requirements (state: the YAML, values, notes)."""

    def __init__(
        self,
        plan_yaml: str,
        requirements: Sequence[Requirement],
        *,
        batch_size: int = DEFAULT_BATCH,
        values: Mapping[str, Any] | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self.plan_yaml = plan_yaml
        self.requirements = list(requirements)
        self.batch_size = max(1, batch_size)
        self.values: dict[str, Any] = dict(values or {})
        """Confirmed answers by requirement id (None: optional, left blank)."""
        self.notes: list[str] = list(notes)

    # --- state ----------------------------------------------------------------

    @property
    def pending(self) -> list[Requirement]:
        """Requirements still to ask in the chat (files are asked at run time)."""
        return [
            item
            for item in self.requirements
            if item.type not in RUNTIME_TYPES and item.id not in self.values
        ]

    @property
    def runtime(self) -> list[Requirement]:
        """Requirements that become run-time questions (``file``/``table``)."""
        return [item for item in self.requirements if item.type in RUNTIME_TYPES]

    @property
    def done(self) -> bool:
        return not self.pending

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible state (answers are text, numbers, booleans or options)."""
        return {
            "plan_yaml": self.plan_yaml,
            "requirements": [item.to_dict() for item in self.requirements],
            "batch_size": self.batch_size,
            "values": copy.deepcopy(self.values),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DesignChat:
        return cls(
            str(data["plan_yaml"]),
            [requirement_from_dict(item) for item in data.get("requirements") or []],
            batch_size=int(data.get("batch_size") or DEFAULT_BATCH),
            values=data.get("values") or {},
            notes=data.get("notes") or (),
        )

    # --- turns ----------------------------------------------------------------

    def next_request(self) -> dict[str, Any] | None:
        """The ``ui.interactive_input`` request (mode inquire) for the next few
        requirements, or None when nothing is left to ask."""
        batch = self.pending[: self.batch_size]
        if not batch:
            return None
        fields = [
            {**item, **_NOTE} if item["id"] == MODE_FIELDS["inquire"]["id"] else item
            for item in mode_fields(
                {"mode": "inquire", "requirements": [r.to_field() for r in batch]}
            )
        ]
        left = len(self.pending) - len(batch)
        message = "Plan を仕上げるために、次の項目を教えてください。"
        if left:
            message += f"（このあと残り {left} 項目）"
        if self.runtime:
            names = "、".join(item.label or item.id for item in self.runtime)
            message += f" なお {names} は実行するときにアップロードしていただきます。"
        return describe("inquire", message, fields)

    def answer(self, values: Mapping[str, Any]) -> ChatTurn:
        """Check and keep the answers (by requirement id); a wrong answer is reported
        and stays open, the right ones are kept."""
        turn = ChatTurn()
        by_id = {item.id: item for item in self.requirements}
        asked = {item.id for item in self.pending[: self.batch_size]}
        note_id = MODE_FIELDS["inquire"]["id"]
        for key, raw in values.items():
            if key == note_id and key not in by_id:
                if isinstance(raw, str) and raw.strip():
                    self.notes.append(raw.strip())
                continue
            requirement = by_id.get(key)
            if requirement is None or requirement.type in RUNTIME_TYPES:
                turn.errors[str(key)] = (
                    f"「{key}」という質問はありません。表示されている項目に答えてください。"
                )
                continue
            if is_empty(raw):
                if not requirement.required:
                    self.values[key] = turn.accepted[key] = None
                continue
            value = _coerce(requirement, raw)
            problem = check_value(requirement.to_field(), value)
            if problem is not None:
                turn.errors[key] = japanese_error(requirement, value)
                continue
            self.values[key] = turn.accepted[key] = value
        for item in self.requirements:  # optional ones shown and left out: settled blank
            left_out = item.id not in self.values and item.id not in values
            if item.id in asked and not item.required and left_out:
                self.values[item.id] = turn.accepted[item.id] = None
        turn.pending = [item.id for item in self.pending]
        turn.done = not turn.pending
        turn.message = _summary(turn, by_id)
        return turn

    # --- results --------------------------------------------------------------

    def vars_preview(self) -> dict[str, Any]:
        """The Plan's ``vars`` with the confirmed values (open ones: None)."""
        plan = _load(self.plan_yaml)
        preview = dict(plan.get("vars") or {})
        for item in self.requirements:
            name = _var_target(item)
            if name is None or item.type in RUNTIME_TYPES:
                continue
            if item.id in self.values:
                preview[name] = _yaml_value(item, self.values[item.id])
            else:
                preview.setdefault(name, None)
        return preview

    def apply(self) -> str:
        """The Plan YAML with the confirmed values set and files asked at run time."""
        plan = _load(self.plan_yaml)
        variables = plan.setdefault("vars", {})
        nodes = {str(node.get("id")): node for node in iter_nodes(plan.get("graph"))}
        for item in self.requirements:
            if item.type in RUNTIME_TYPES or item.id not in self.values:
                continue
            value = self.values[item.id]
            if value is None or item.target is None:
                continue
            name = _var_target(item)
            if name is not None:
                variables[name] = _yaml_value(item, value)
                continue
            node_id, _, port = item.target.partition(".")
            node = nodes.get(node_id)
            if node is not None and port:
                node.setdefault("in", {})[port] = _yaml_value(item, value)
        runtime = self.runtime
        if runtime:
            _ask_at_run_time(plan, nodes, runtime)
        if not variables:
            plan.pop("vars")
        return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False, width=100)


def requirement_from_dict(data: Mapping[str, Any]) -> Requirement:
    """A ``Requirement`` from its ``to_dict()`` form."""
    return Requirement(
        id=str(data["id"]),
        type=data["type"],
        label=data.get("label"),
        description=data.get("description"),
        options=tuple(data.get("options") or ()),
        required=data.get("required", True) is not False,
        accept=data.get("accept"),
        hint=data.get("hint"),
        validation=data.get("validation"),
        target=data.get("target"),
    )


def japanese_error(requirement: Requirement, value: Any) -> str:
    """Why ``value`` does not fit, in Japanese with what to enter instead."""
    label = requirement.label or requirement.id
    field_spec = requirement.to_field()
    kind = field_spec["type"]
    if kind == "select":
        return f"「{label}」は次から選んでください: {'、'.join(requirement.options)}"
    if kind == "boolean":
        return f"「{label}」は「はい」か「いいえ」で答えてください。"
    if kind == "number":
        validation = requirement.validation or {}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = validation.get("min"), validation.get("max")
            if low is not None and value < low:
                return f"「{label}」は {low} 以上の数を入力してください。"
            if high is not None and value > high:
                return f"「{label}」は {high} 以下の数を入力してください。"
        return f"「{label}」は数値で入力してください（例: 1000）。"
    if kind == "text" and isinstance(value, str):
        example = f"（{requirement.hint}）" if requirement.hint else ""
        return f"「{label}」の形式が正しくありません。入力例に合わせてください{example}。"
    return f"「{label}」は文字で入力してください。"


_NUMBER = re.compile(r"^[+-]?\d[\d,]*(\.\d+)?$")
_YES = {"はい", "yes", "true", "y", "1"}
_NO = {"いいえ", "no", "false", "n", "0"}


def _coerce(requirement: Requirement, value: Any) -> Any:
    """Text from a chat surface read as the requirement's type ("1,200" → 1200)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if requirement.type == "number" and _NUMBER.match(text):
        plain = text.replace(",", "")
        return float(plain) if "." in plain else int(plain)
    if requirement.type == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
    return text


def _summary(turn: ChatTurn, by_id: Mapping[str, Requirement]) -> str:
    parts = []
    if turn.accepted:
        names = "、".join(by_id[key].label or key for key in turn.accepted if key in by_id)
        parts.append(f"{names} を確定しました。")
    if turn.errors:
        parts.append(f"{len(turn.errors)} 項目を確認してください。")
    left = f"残り {len(turn.pending)} 項目です。"
    parts.append("すべての項目が確定しました。" if turn.done else left)
    return "".join(parts)


def _load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError("the plan YAML is not a mapping")
    return data


def _var_target(item: Requirement) -> str | None:
    if item.target and item.target.startswith("vars."):
        return item.target.removeprefix("vars.")
    return None


def _yaml_value(item: Requirement, value: Any) -> Any:
    """What the Plan holds for an answer: the schema of a chosen template, else as given."""
    if item.target and item.target.endswith(".output_schema") and value in SCHEMA_TEMPLATES:
        return copy.deepcopy(SCHEMA_TEMPLATES[value])
    return value


def _ask_at_run_time(
    plan: dict[str, Any], nodes: Mapping[str, dict[str, Any]], runtime: Sequence[Requirement]
) -> None:
    graph = plan.setdefault("graph", [])
    collect = graph[0] if graph and _is_collect(graph[0]) else None
    if collect is None:
        node_id = DESIGN_INPUT_NODE
        while node_id in nodes:
            node_id += "_"
        collect = {
            "id": node_id,
            "block": "ui.interactive_input",
            "in": {
                "mode": "collect",
                "message": "実行に使うファイルをアップロードしてください",
                "requirements": [],
            },
            "out": {"collected_data": "collected"},
        }
        graph.insert(0, collect)
    node_id = str(collect["id"])
    outputs = collect.setdefault("out", {})
    alias = outputs.setdefault("collected_data", "collected")
    fields = collect["in"].setdefault("requirements", [])
    known = {item.get("id") for item in fields}
    replaced_vars: dict[str, str] = {}
    for item in runtime:
        if item.id not in known:
            fields.append(item.to_field())
        reference = f"${{{node_id}.{alias}.{item.id}}}"
        name = _var_target(item)
        if name is not None:
            replaced_vars[name] = f"{node_id}.{alias}.{item.id}"
            continue
        target_node, _, port = (item.target or "").partition(".")
        if target_node in nodes and port:
            nodes[target_node].setdefault("in", {})[port] = reference

    if replaced_vars:

        def replace(ref: Reference) -> str | None:
            if ref.root == "vars" and ref.path and str(ref.path[0]) in replaced_vars:
                rest = "".join(f".{part}" for part in ref.path[1:])
                return replaced_vars[str(ref.path[0])] + rest
            return None

        rewrite_references(graph, replace)
        rewrite_references(plan.get("exports") or [], replace)
        variables = plan.get("vars") or {}
        for name in replaced_vars:
            if variables.get(name) is None:
                variables.pop(name, None)
    layout = (plan.get("ui") or {}).get("layout")
    if isinstance(layout, list) and layout and node_id not in layout:
        layout.insert(0, node_id)


def _is_collect(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and str(node.get("block") or "").partition("@")[0] == "ui.interactive_input"
        and (node.get("in") or {}).get("mode", "collect") in ("collect", "mixed")
        and isinstance((node.get("in") or {}).get("requirements", []), list)
        and not (node.get("when") or node.get("foreach"))
    )
