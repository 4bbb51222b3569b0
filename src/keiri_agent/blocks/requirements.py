"""``ui.interactive_input`` requirements: initial values, answer checks, merging (seed 002 §3).

Pure helpers shared by the block (``blocks.interactive_input``), the legacy UI
blocks and the UI (Streamlit Session State)::

    key = session_key("invoice_reconciliation", "collect_inputs", "1.0.0")
    values = initial_values(requirements)            # first render
    values, warnings = merge_values(values, old_requirements, new_requirements)
    error = check_value(requirement, answer)         # None when the answer fits

Answer shapes per requirement type:

- ``text`` / ``chat``: a string (``validation``: ``pattern``, ``min_length``, ``max_length``);
- ``select``: one of ``options``; ``boolean``: a bool;
- ``number``: an int or float, not a bool (``validation``: ``min``, ``max``);
- ``file``: ``bytes`` or ``{"name": str, "data": bytes}``; when ``accept`` lists
  extensions (``".zip,.xlsx"``) and the name is known, the name must end with one;
- ``files``: a list of files as above;
- ``folder``: a path string (not empty) or a list of files as above.

An empty answer (None, ``""``/blank text, an empty list) counts as missing.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from keiri_agent.blocks.records import kind_label

REQUIREMENT_TYPES = ("file", "files", "folder", "text", "select", "boolean", "number", "chat")

_INITIAL: dict[str, Any] = {
    "file": None,
    "files": [],
    "folder": None,
    "text": "",
    "chat": "",
    "boolean": False,
    "number": None,
}


def session_key(plan_id: str, node_id: str, block_version: str) -> str:
    """The Streamlit Session State key of one node's values (seed §3, §8.2)."""
    return f"plan:{plan_id}::node:{node_id}::v{block_version}"


def initial_value(requirement: Mapping[str, Any]) -> Any:
    """The first value of a field: its ``default``, else a per-type empty value.

    select without default: the first option (None without options).
    """
    if "default" in requirement:
        return copy.deepcopy(requirement["default"])
    kind = requirement.get("type")
    if kind == "select":
        options = requirement.get("options") or []
        return copy.deepcopy(options[0]) if options else None
    return copy.deepcopy(_INITIAL.get(str(kind)))


def initial_values(requirements: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Requirement id → initial value, in declaration order."""
    return {str(item["id"]): initial_value(item) for item in requirements}


def merge_values(
    old_values: Mapping[str, Any],
    old_requirements: Iterable[Mapping[str, Any]],
    new_requirements: Iterable[Mapping[str, Any]],
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Carry values over a change of ``requirements`` ("merge + difference warning").

    A value is kept when its id is still declared with the same type. Warnings
    (``{"code", "id", "message"}``): REQUIREMENT_REMOVED (value dropped),
    REQUIREMENT_TYPE_CHANGED (value dropped, field re-initialised),
    REQUIREMENT_ADDED (field initialised).
    """
    old_types = {str(item["id"]): item.get("type") for item in old_requirements}
    values: dict[str, Any] = {}
    warnings: list[dict[str, str]] = []
    new_ids: set[str] = set()
    for item in new_requirements:
        field_id = str(item["id"])
        new_ids.add(field_id)
        kind = item.get("type")
        if field_id not in old_types:
            values[field_id] = initial_value(item)
            warnings.append(
                _warning(
                    "REQUIREMENT_ADDED", field_id, f"項目 {field_id!r}（{kind}）が加わりました"
                )
            )
        elif old_types[field_id] != kind:
            values[field_id] = initial_value(item)
            warnings.append(
                _warning(
                    "REQUIREMENT_TYPE_CHANGED",
                    field_id,
                    f"項目 {field_id!r} の型が {old_types[field_id]} から {kind} に変わったため、"
                    "入力済みの値を消しました。もう一度入力してください",
                )
            )
        elif field_id in old_values:
            values[field_id] = old_values[field_id]
        else:
            values[field_id] = initial_value(item)
    for field_id in old_types:
        if field_id not in new_ids:
            warnings.append(
                _warning(
                    "REQUIREMENT_REMOVED",
                    field_id,
                    f"項目 {field_id!r} は聞かれなくなったため、入力済みの値を消しました",
                )
            )
    return values, warnings


def _warning(code: str, field_id: str, message: str) -> dict[str, str]:
    return {"code": code, "id": field_id, "message": message}


def is_empty(value: Any) -> bool:
    """True for an answer that counts as not given."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, (list, tuple)) and not value


def accepted_extensions(accept: Any) -> list[str]:
    """``".zip, .XLSX"`` → ``[".zip", ".xlsx"]`` (``"xlsx"`` gets its dot)."""
    if not isinstance(accept, str):
        return []
    found = []
    for part in accept.split(","):
        ext = part.strip().lower()
        if ext:
            found.append(ext if ext.startswith(".") else f".{ext}")
    return found


def check_value(requirement: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit ``requirement`` (None when it fits; not for empty values)."""
    kind = requirement.get("type")
    validation = requirement.get("validation") or {}
    if kind in ("text", "chat"):
        return _check_text(value, validation)
    if kind == "select":
        options = requirement.get("options") or []
        if value not in options:
            shown = "、".join(map(str, options))
            return f"{value!r} は選択肢にありません。次から選んでください: {shown}"
        return None
    if kind == "boolean":
        if isinstance(value, bool):
            return None
        return f"はい / いいえ（true / false）で答えてください（入力されたのは {_kind(value)}）"
    if kind == "number":
        return _check_number(value, validation)
    extensions = accepted_extensions(requirement.get("accept"))
    if kind == "file":
        return _check_file(value, extensions)
    if kind == "files":
        return _check_files(value, extensions)
    if kind == "folder":
        if isinstance(value, str):
            return None
        return _check_files(value, extensions, what="フォルダのパスかファイルのリスト")
    return f"項目の型 {kind!r} は使えません（使える型: {', '.join(REQUIREMENT_TYPES)}）"


def _kind(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return "ファイルの中身"
    return kind_label(value)


def _check_text(value: Any, validation: Mapping[str, Any]) -> str | None:
    if not isinstance(value, str):
        return f"文字で入力してください（入力されたのは {_kind(value)}）"
    min_length = validation.get("min_length")
    max_length = validation.get("max_length")
    if isinstance(min_length, int) and len(value) < min_length:
        return f"{min_length} 文字以上で入力してください（今は {len(value)} 文字）"
    if isinstance(max_length, int) and len(value) > max_length:
        return f"{max_length} 文字以内で入力してください（今は {len(value)} 文字）"
    pattern = validation.get("pattern")
    if isinstance(pattern, str) and re.fullmatch(pattern, value) is None:
        return f"決められた形式（{pattern!r}）に合っていません。形式どおりに入力してください"
    return None


def _check_number(value: Any, validation: Mapping[str, Any]) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"数値で入力してください（入力されたのは {_kind(value)}）"
    low, high = _number(validation.get("min")), _number(validation.get("max"))
    if low is not None and value < low:
        return f"{low} 以上の数値を入力してください"
    if high is not None and value > high:
        return f"{high} 以下の数値を入力してください"
    return None


def _number(value: Any) -> int | float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def file_name(value: Any) -> str | None:
    """The name of a file answer (None for bare bytes)."""
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        return str(value["name"])
    return None


def _check_file(value: Any, extensions: Sequence[str]) -> str | None:
    if isinstance(value, (bytes, bytearray)):
        return None
    if not isinstance(value, Mapping):
        return f"ファイルをアップロードしてください（入力されたのは {_kind(value)}）"
    name, data = value.get("name"), value.get("data")
    if not isinstance(name, str) or not name or not isinstance(data, (bytes, bytearray)):
        return "ファイルの名前と中身を読み取れません。もう一度アップロードしてください"
    if extensions and not name.lower().endswith(tuple(extensions)):
        allowed = ", ".join(extensions)
        return f"{name!r} はこの項目で受け付けない種類です。{allowed} のファイルを選んでください"
    return None


def _check_files(
    value: Any, extensions: Sequence[str], what: str = "ファイルのリスト"
) -> str | None:
    if not isinstance(value, (list, tuple)):
        return f"{what}を渡してください（入力されたのは {_kind(value)}）"
    for index, item in enumerate(value):
        problem = _check_file(item, extensions)
        if problem:
            return f"{index + 1} 番目のファイル: {problem}"
    return None
