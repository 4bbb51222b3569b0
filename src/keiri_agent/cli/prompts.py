"""Ask a paused run's input requests on the terminal: ``waiting`` → answers.

``plan run`` / ``plan resume`` with prompting on call ``ask_waiting(result.waiting,
known)`` and resume the run with what it returns (``{node path: {field id:
value}}``). A request is the one ``ui.interactive_input`` (and the legacy UI
blocks) show: ``{"mode", "message", "fields": [{"id", "type", "label",
"required", "options", "accept", "validation", "default"}], "missing"?,
"errors"?}``; bare field ids (``"fields": ["answer"]``) or only ``missing`` ids
are asked as text. Each value is read as its type and checked with
``blocks.requirements.check_value`` (bad input is asked again):

- text / chat: the line; number: an int or float; boolean: y/n (はい/いいえ);
- select: an option's number or the exact option (one choice: the block takes one);
- file: a path, read as ``{"name", "data"}`` (must exist, be readable, fit ``accept``
  and the upload limit: ``services.plan_inputs.read_input_file``, as ``--file`` reads);
- files: paths separated by commas or one per line (an empty line ends), globs allowed;
- folder: an existing directory, answered as its absolute path (the block takes a path).

Empty input on an optional field (or one with a default) is "no answer" (the
block then uses the default). A re-request (``missing``/``errors`` after invalid
answers) is shown first; when ``known`` holds the answers this invocation sent to
that node, only the missing and invalid fields are asked again and the rest are
kept (each resume sends the node's full set of answers). EOF or Ctrl-C at a
prompt raises ``PromptAborted``: the run stays paused in its checkpoint.
Prompts and request details go to stderr, so ``--json`` output stays clean.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from keiri_agent.blocks.requirements import REQUIREMENT_TYPES, accepted_extensions, check_value
from keiri_agent.cli.common import err_console, settings
from keiri_agent.errors import UserInputError
from keiri_agent.services.plan_inputs import MIB, read_input_file

__all__ = ["PromptAborted", "ask_node", "ask_waiting", "field_notes", "request_fields"]

_NO_ANSWER = object()
_YES = ("y", "yes", "true", "1", "はい")
_NO = ("n", "no", "false", "0", "いいえ")
_GLOB_CHARS = ("*", "?", "[")


class PromptAborted(Exception):
    """The user ended input (EOF or Ctrl-C) at a prompt."""


class _Invalid(Exception):
    """An answer that does not fit its field (the message says why); asked again."""


def ask_waiting(
    waiting: Sequence[Mapping[str, Any]],
    known: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Answers for every waiting node whose request lists fields (others are left out)."""
    answers: dict[str, dict[str, Any]] = {}
    for item in waiting:
        node_id = str(item.get("node_id"))
        request = item.get("request")
        if not isinstance(request, Mapping) or not request_fields(request):
            err_console.print(
                f"[yellow]{escape(node_id)}[/yellow]: この入力は端末から尋ねられません"
                "（--inputs で回答してください）"
            )
            continue
        previous = (known or {}).get(node_id)
        answers[node_id] = ask_node(node_id, str(item.get("block") or ""), request, previous)
    return answers


def request_fields(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's fields as mappings (bare ids and ``missing`` ids become text fields)."""
    raw = request.get("fields")
    if not isinstance(raw, list):
        raw = request.get("missing")
    if not isinstance(raw, list):
        raw = []
    fields: list[dict[str, Any]] = []
    for item in raw:
        if isinstance(item, Mapping) and item.get("id") is not None:
            fields.append(dict(item))
        elif isinstance(item, str | int):
            fields.append({"id": str(item), "type": "text", "required": True})
    return fields


def ask_node(
    node_id: str,
    block: str,
    request: Mapping[str, Any],
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Show one node's request and ask its fields: ``{field id: value}``."""
    fields = request_fields(request)
    missing = [str(item) for item in request.get("missing") or []]
    raw_errors = request.get("errors")
    errors: Mapping[str, Any] = raw_errors if isinstance(raw_errors, Mapping) else {}
    err_console.rule(f"入力待ち: {escape(node_id)}" + (f" ({escape(block)})" if block else ""))
    for key in ("message", "question"):
        if request.get(key):
            err_console.print(escape(str(request[key])))
    for field_id, problem in errors.items():
        err_console.print(f"[red]✗ {escape(str(field_id))}[/red]: {escape(str(problem))}")
    if missing:
        err_console.print(f"[red]未回答[/red]: {escape(', '.join(missing))}")
    ids = {str(field["id"]) for field in fields}
    redo = (set(missing) | {str(key) for key in errors}) & ids
    answers: dict[str, Any] = {}
    if previous is not None and redo:  # ask again only what was missing or invalid
        answers = {key: value for key, value in previous.items() if key in ids - redo}
        fields = [field for field in fields if str(field["id"]) in redo]
    for field in fields:
        value = ask_field(field)
        if value is not _NO_ANSWER:
            answers[str(field["id"])] = value
    return answers


def ask_field(field: Mapping[str, Any]) -> Any:
    """Ask one field until the answer fits; ``_NO_ANSWER`` for an empty optional one."""
    kind = str(field.get("type") or "text")
    optional = field.get("required", True) is False or "default" in field
    _show_field(field, kind, optional)
    while True:
        raw = _read(_prompt_text(kind))
        try:
            value = _parse(field, kind, raw) if raw.strip() else _NO_ANSWER
            if value is _NO_ANSWER:
                if optional:
                    return _NO_ANSWER
                raise _Invalid("必須です。入力してください。")
            problem = check_value(field, value) if kind in REQUIREMENT_TYPES else None
            if problem:
                raise _Invalid(problem)
        except _Invalid as invalid:
            err_console.print(f"[red]{escape(str(invalid))}[/red]")
            continue
        return value


KIND_WORDS = {
    "text": "文字",
    "number": "数値",
    "boolean": "はい/いいえ",
    "select": "選択",
    "enum": "選択",
    "file": "ファイル",
    "files": "複数のファイル",
    "folder": "フォルダー",
    "table": "表",
    "date": "日付",
}


def field_notes(field: Mapping[str, Any]) -> str:
    """``数値、必須、既定: 30000`` — what a field takes, in words."""
    kind = str(field.get("type") or "text")
    notes = [KIND_WORDS.get(kind, kind), "任意" if field.get("required", True) is False else "必須"]
    if "default" in field:
        default = field["default"]
        notes.append(f"既定: 「{default}」" if isinstance(default, str) else f"既定: {default}")
    if field.get("accept"):
        notes.append(f"形式: {field['accept']}")
    return "、".join(notes)


def _show_field(field: Mapping[str, Any], kind: str, optional: bool) -> None:
    label = str(field.get("label") or field["id"])
    err_console.print(f"[bold]{escape(label)}[/bold] [dim]（{escape(field_notes(field))}）[/dim]")
    if field.get("description"):
        err_console.print(f"  [dim]{escape(str(field['description']))}[/dim]")
    if kind == "select":
        for number, option in enumerate(field.get("options") or [], start=1):
            err_console.print(f"  {number}) {escape(str(option))}")
    if optional:
        err_console.print("  [dim]空のまま Enter で回答なし（既定値があればそれを使用）[/dim]")


def _prompt_text(kind: str) -> str:
    return {
        "boolean": "  y/n",
        "select": "  番号または選択肢",
        "file": "  ファイルのパス",
        "files": "  パス（カンマ区切り・1行ずつ・glob 可、空行で終了）",
        "folder": "  フォルダのパス",
        "number": "  数値",
    }.get(kind, "  >")


def _read(text: str) -> str:
    """One line from the terminal (stderr prompt); PromptAborted on EOF or Ctrl-C."""
    try:
        value = click.prompt(text, default="", show_default=False, err=True)
    except click.exceptions.Abort:
        raise PromptAborted from None
    return str(value)


def _parse(field: Mapping[str, Any], kind: str, raw: str) -> Any:
    text = raw.strip()
    if kind == "number":
        return _number(text)
    if kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise _Invalid("y か n で答えてください")
    if kind == "select":
        return _option(field.get("options") or [], text)
    if kind == "file":
        return _file(_path(text), accepted_extensions(field.get("accept")))
    if kind == "files":
        return _files(raw, accepted_extensions(field.get("accept")))
    if kind == "folder":
        folder = _path(text)
        if not folder.is_dir():
            raise _Invalid(f"フォルダが見つかりません: {folder}")
        return str(folder.resolve())
    return raw


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise _Invalid(f"数値ではありません: {text!r}") from None
    if not math.isfinite(value):
        raise _Invalid(f"有限の数値を入力してください: {text!r}")
    return value


def _option(options: Sequence[Any], text: str) -> Any:
    for option in options:
        if str(option) == text:
            return option
    if text.isascii() and text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    raise _Invalid(f"1〜{len(options)} の番号か、選択肢そのものを入力してください")


def _path(text: str) -> Path:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return Path(os.path.expanduser(text))


def _file(path: Path, extensions: Sequence[str]) -> dict[str, Any]:
    if not path.is_file():
        raise _Invalid(f"ファイルが見つかりません: {path}")
    if extensions and not path.name.lower().endswith(tuple(extensions)):
        raise _Invalid(f"{path.name} は受け付けない形式です（{', '.join(extensions)}）")
    try:
        return read_input_file(path, max_bytes=settings().inputs.max_upload_mb * MIB)
    except UserInputError as error:
        raise _Invalid(
            f"{error.message}（{error.hint}）" if error.hint else error.message
        ) from None


def _files(first: str, extensions: Sequence[str]) -> Any:
    """Paths from the first line and the following lines up to an empty one."""
    lines = [first]
    line = first
    while line.strip():
        line = _read("  ")
        lines.append(line)
    paths: list[Path] = []
    for entry in (line.strip() for line in lines):
        if not entry:
            continue
        parts = [entry] if _path(entry).exists() else entry.split(",")
        for part in (item.strip() for item in parts):
            if not part:
                continue
            if any(char in part for char in _GLOB_CHARS) and not _path(part).exists():
                matches = sorted(glob.glob(str(_path(part))))
                if not matches:
                    raise _Invalid(f"一致するファイルがありません: {part}")
                paths += [Path(match) for match in matches if Path(match).is_file()]
            else:
                paths.append(_path(part))
    if not paths:
        return _NO_ANSWER
    unique = list(dict.fromkeys(paths))
    return [_file(path, extensions) for path in unique]
