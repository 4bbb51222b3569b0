"""``ui.interactive_input``: the one UI block of a Plan (seed 002 §3, §4, §8.2).

``requirements`` declare the fields; ``mode`` picks what the node is for:

- ``collect`` / ``mixed``: the fields' answers become ``collected_data`` (by id);
- ``confirm``: an extra required boolean field ``approved`` → output ``approved``;
- ``inquire``: an extra required text field ``response`` → output ``response``.

``request()`` (shown by the UI, CLI or API while the run is paused) lists the
fields; ``run()`` checks ``ctx.answers`` (``{field id: value}``) against them (see
``blocks.requirements`` for the answer shapes). Missing required answers or
invalid values raise ``InputRequired`` with the request plus ``missing`` (ids)
and ``errors`` (id → message): the run stays paused and asks again. An answer
not given for an optional field is its ``default``, else None. Unknown answer
keys are errors too (nothing is dropped silently).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from keiri_agent.blocks.base import BlockContext, InputRequired, UIBlock
from keiri_agent.blocks.requirements import REQUIREMENT_TYPES, check_value, is_empty
from keiri_agent.errors import BlockError, BlockErrorCode

MODES = ("collect", "confirm", "inquire", "mixed")
FIELD_KEYS = ("id", "type", "label", "description", "required", "options", "accept", "validation")
MODE_FIELDS: dict[str, dict[str, Any]] = {
    "confirm": {"id": "approved", "type": "boolean", "label": "承認", "required": True},
    "inquire": {"id": "response", "type": "text", "label": "回答", "required": True},
}
"""The field each mode adds to the requirements (its answer is the mode's output)."""
APPROVAL_COMMENT: dict[str, Any] = {
    "id": "comment",
    "type": "text",
    "label": "コメント（差戻しの理由など）",
    "required": False,
}
"""The field an approval step adds: the approver's comment, shown to the starter."""


def field_of(requirement: Mapping[str, Any]) -> dict[str, Any]:
    """A requirement as a request field (``required`` defaults to true)."""
    field = {key: requirement[key] for key in FIELD_KEYS if key in requirement}
    field["required"] = requirement.get("required", True) is not False
    if "default" in requirement:
        field["default"] = requirement["default"]
    return field


def mode_fields(inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every field the node asks for: its requirements, then its mode's field, then —
    for an approval step — an optional comment."""
    fields = [field_of(item) for item in inputs.get("requirements") or []]
    extra = MODE_FIELDS.get(str(inputs.get("mode") or "collect"))
    if extra is not None:
        fields.append(dict(extra))
    if inputs.get("approval") is not None and not any(f.get("id") == "comment" for f in fields):
        fields.append(dict(APPROVAL_COMMENT))
    return fields


def describe(mode: str, message: str | None, fields: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON-compatible request a paused node shows."""
    return {"mode": mode, "message": message, "fields": [dict(field) for field in fields]}


def collect_answers(
    request: Mapping[str, Any], answers: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """Check ``answers`` against ``request["fields"]``: (values by id, ids answered).

    Raises InputRequired(request + ``missing`` + ``errors``) when a required answer
    is missing or any answer does not fit its field.
    """
    given = dict(answers or {})
    fields = request["fields"]
    values: dict[str, Any] = {}
    answered: list[str] = []
    missing: list[str] = []
    errors: dict[str, str] = {}
    for field in fields:
        field_id = field["id"]
        if field_id in given and not is_empty(given[field_id]):
            value = given[field_id]
            answered.append(field_id)
        elif "default" in field and not is_empty(field["default"]):
            value = field["default"]
        else:
            values[field_id] = None
            if field.get("required", True):
                missing.append(field_id)
            continue
        problem = check_value(field, value)
        if problem:
            errors[field_id] = problem
        values[field_id] = value
    known = {field["id"] for field in fields}
    for key in sorted(set(given) - known, key=str):
        errors[str(key)] = (
            f"{key!r} はこの入力の項目ではありません（項目: {', '.join(sorted(known))}）"
        )
    if missing or errors:
        raise InputRequired({**request, "missing": missing, "errors": errors})
    return values, answered


def metadata(mode: str, answered: Sequence[str]) -> dict[str, Any]:
    """``{mode, answered_at (ISO 8601, UTC), answered_fields}``."""
    return {
        "mode": mode,
        "answered_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "answered_fields": list(answered),
    }


def invalid(message: str, field: str, hint: str | None = None) -> BlockError:
    """An INPUT_VALIDATION_FAILED error about the node's inputs (not the answers)."""
    return BlockError(
        BlockErrorCode.INPUT_VALIDATION_FAILED,
        message,
        details={"field": field},
        hint=hint,
        recoverable=False,
    )


class InteractiveInputBlock(UIBlock):
    """Collect files, text, choices, yes/no, numbers; confirm; or ask a question."""

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        mode = str(inputs.get("mode") or "collect")
        if mode not in MODES:
            raise invalid(
                f"mode {mode!r} は使えません", "mode", hint=f"使える mode: {', '.join(MODES)}"
            )
        seen: set[str] = set()
        reserved = MODE_FIELDS.get(mode, {}).get("id")
        for index, item in enumerate(inputs.get("requirements") or []):
            where = f"requirements[{index}]"
            field_id, kind = item.get("id"), item.get("type")
            if field_id in seen:
                raise invalid(
                    f"{where}: 項目 id {field_id!r} が 2 回宣言されています",
                    where,
                    hint="項目 id が重ならないようにしてください",
                )
            seen.add(field_id)
            if field_id == reserved:
                raise invalid(
                    f"{where}: 項目 id {field_id!r} は {mode} モードで予約されています",
                    where,
                    hint=f"別の id にしてください（{mode} モードは "
                    f"{reserved!r} 項目を自動で加えます）",
                )
            if kind not in REQUIREMENT_TYPES:
                raise invalid(
                    f"{where}: 項目の型 {kind!r} は使えません",
                    where,
                    hint=f"使える型: {', '.join(REQUIREMENT_TYPES)}",
                )
            if kind == "select" and not item.get("options"):
                raise invalid(
                    f"{where}: 選択項目 {field_id!r} に options（選択肢）がありません",
                    where,
                    hint="例: options: [現金, 振込]",
                )

    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        mode = str(inputs.get("mode") or "collect")
        request = describe(mode, inputs.get("message"), mode_fields(inputs))
        if inputs.get("context") is not None:
            request["context"] = inputs["context"]
        return request

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        request = self.request(inputs, ctx)
        mode = request["mode"]
        values, answered = collect_answers(request, ctx.answers)
        if inputs.get("approval") is not None and values.get("approved") is False:
            comment = str(values.get("comment") or "").strip()
            raise BlockError(
                "APPROVAL_REFUSED",
                "差し戻されました"
                + (f"（コメント: {comment}）" if comment else "（コメントなし）"),
                details={"comment": comment},
                hint="コメントの内容を直してから、もう一度実行してください",
                recoverable=False,
            )
        extra = MODE_FIELDS.get(mode, {}).get("id")
        return {
            "collected_data": {key: value for key, value in values.items() if key != extra},
            "approved": values.get("approved") if mode == "confirm" else None,
            "response": values.get("response") if mode == "inquire" else None,
            "metadata": metadata(mode, answered),
        }
