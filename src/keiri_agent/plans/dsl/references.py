"""``${...}`` references in Plans (seed 002 §5): parsing, finding and resolving them.

Roots: a node id (``${parse.evidence.files}``: node ``parse``, output alias
``evidence``, then an attribute path), ``vars``, ``env``, ``config``, and inside
loop bodies the loop's item/index variables (``${file}``, ``${idx}``). Path
segments are keys (``.name``; letters of any script, digits, ``_`` and ``-``),
list indexes (``items.0`` or ``items[0]``; an all-digit segment indexes a list and, on a
mapping, is the key exactly as written — ``${codes.0101}`` reads key ``"0101"``,
``${by_year.2024}`` key ``"2024"`` or ``2024``), quoted keys for anything else
(``row['請求 金額']``) and a final ``.length`` (the size of a list, string or
mapping; a mapping that has a ``length`` key gives that key's value instead).

A value that is exactly one reference keeps the referenced value's type; a
reference embedded in longer text is turned into text (``to_text``). ``$${``
writes a literal ``${``. Lookups only index mappings and lists of resolved data:
a path never reaches Python attributes (``${a.__class__}`` is a missing key).

CONTRACT (implementation owned by the references/expressions work; signatures are fixed).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from keiri_agent.errors import UserInputError, closest_match
from keiri_agent.plans.issues import unknown_choice_text

MAX_REFERENCE_LENGTH = 500
"""Characters between ``${`` and ``}``."""
MAX_PATH_SEGMENTS = 32
MAX_VALUE_DEPTH = 100
"""How deeply a literal (dicts/lists) may nest when finding or resolving references."""

_HINT = (
    "参照は ${ノード id.出力の別名.キー}、${vars.名前}、${env.NAME}、${config.a.b}、${item} の"
    "形で書きます。番号は items[0] か items.0、任意のキーは ['キー']、最後に .length で長さ。"
    "文字として ${ を書くときは $${ と書いてください"
)
_ROOT = re.compile(r"[^\W\d][\w\-]*")
_SEGMENT = re.compile(r"\.([\w\-]+)|\[([0-9]+)\]|\['([^'\\]*)'\]|\[\"([^\"\\]*)\"\]")
_INDEX = re.compile(r"[0-9]+")
_MARKER = re.compile(r"\$\$\{|\$\{")


class ReferenceError_(UserInputError):  # trailing _: the builtin ReferenceError stays visible
    """A reference that cannot be parsed or resolved (names the reference and the reason).

    Syntax errors carry ``details["position"]`` (0-based, in the text that was scanned)
    and ``details["reason"]`` (the message without the position).
    """

    code = "REFERENCE_ERROR"


class Digits(int):
    """An all-digit path segment: the int (a list index) that keeps the text as written.

    ``.0101`` is the list index 101 but the mapping key ``"0101"``: leading zeros are
    kept for mapping lookups (account codes, month keys like ``01``, padded ids).
    Compares and hashes as the int; ``str``/``repr`` give the text.
    """

    text: str

    def __new__(cls, text: str) -> Digits:
        value = super().__new__(cls, text)
        value.text = text
        return value

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def __reduce__(self) -> tuple[type[Digits], tuple[str]]:
        return (type(self), (self.text,))


@dataclass(frozen=True)
class Reference:
    """One parsed reference: ``root`` and the ``path`` after it (keys, indexes, 'length')."""

    root: str
    path: tuple[str | int, ...]
    """All-digit ``.key`` segments are ``Digits`` (an int that keeps its text)."""
    text: str
    """The reference as written, without ``${`` and ``}``."""

    def __str__(self) -> str:
        return "${" + self.text + "}"


def _syntax_error(reason: str, source: str, position: int) -> NoReturn:
    snippet = source[max(0, position - 20) : position + 20]
    raise ReferenceError_(
        f"参照の書き方に誤りがあります: {reason}（{position} 文字目: {snippet!r}）",
        hint=_HINT,
        details={"reason": reason, "position": position, "text": source[:200]},
    )


def _parse_body(source: str, start: int, end: int) -> Reference:
    """Parse ``source[start:end]`` (the inside of ``${...}``); positions are in ``source``."""
    while start < end and source[start].isspace():
        start += 1
    while end > start and source[end - 1].isspace():
        end -= 1
    if start == end:
        _syntax_error("参照 '${}' の中が空です", source, start)
    if end - start > MAX_REFERENCE_LENGTH:
        _syntax_error(f"参照が {MAX_REFERENCE_LENGTH} 文字より長いです", source, start)
    root = _ROOT.match(source, start, end)
    if root is None:
        _syntax_error(
            f"参照は名前（ノード id、vars、env、config、ループ変数）で始めてください"
            f"（{source[start]!r} で始まっています）",
            source,
            start,
        )
    path: list[str | int] = []
    pos = root.end()
    while pos < end:
        match = _SEGMENT.match(source, pos, end)
        if match is None:
            char = source[pos]
            if source.startswith("${", pos):
                reason = "参照の中に '${' があります"
            elif char == ".":
                reason = "'.' の後にキーがありません"
            elif char == "[":
                reason = (
                    "'[' の後には [0] のような番号か ['na"
                    "me'] のような引用符付きのキーを書いてください"
                )
            else:
                reason = f"ここでは {char!r} は使えません"
            _syntax_error(reason, source, pos)
        key, index, single, double = match.groups()
        if index is not None:
            path.append(Digits(index))
        elif key is not None:
            path.append(Digits(key) if _INDEX.fullmatch(key) else key)
        else:
            path.append(single if single is not None else double)
        if len(path) > MAX_PATH_SEGMENTS:
            _syntax_error(f"参照の段数が {MAX_PATH_SEGMENTS} を超えています", source, pos)
        pos = match.end()
    return Reference(root=root.group(), path=tuple(path), text=source[start:end])


def parse_reference(text: str) -> Reference:
    """Parse the inside of ``${...}`` (the ``${``/``}`` wrapper is also accepted).

    Raises ReferenceError_ with the position on bad syntax.
    """
    if not isinstance(text, str):
        raise ReferenceError_(
            f"参照は文字列で書いてください（{type(text).__name__} になっています）", hint=_HINT
        )
    if len(text) > MAX_REFERENCE_LENGTH + 3:
        _syntax_error(f"参照が {MAX_REFERENCE_LENGTH} 文字より長いです", text, 0)
    if text.startswith("${"):
        reference, end = read_reference(text, 0)
        if end != len(text):
            _syntax_error("参照の後に余分な文字があります", text, end)
        return reference
    return _parse_body(text, 0, len(text))


def read_reference(text: str, start: int) -> tuple[Reference, int]:
    """The reference whose ``${`` is at ``text[start]`` and the offset just after its ``}``."""
    close = text.find("}", start + 2)
    if close == -1:
        _syntax_error("'${' が閉じていません（'}' がありません）", text, start)
    brace = text.find("{", start + 2, close)
    if brace != -1:
        nested = text[brace - 1] == "$"
        reason = "参照の中に '${' があります" if nested else "参照の中に '{' があります"
        _syntax_error(reason, text, brace - 1 if nested else brace)
    return _parse_body(text, start + 2, close), close + 1


def split_template(text: str) -> list[str | Reference]:
    """Split text into literal pieces and references (``$${`` becomes a literal ``${``)."""
    return list(_template_parts(text))


@functools.lru_cache(maxsize=8192)
def _template_parts(text: str) -> tuple[str | Reference, ...]:
    """``split_template`` of ``text``, parsed once: the checks before a run and every
    node attempt (1,000 loop iterations) read the same templates again."""
    parts: list[str | Reference] = []
    buffer: list[str] = []
    pos = 0
    while True:
        marker = _MARKER.search(text, pos)
        if marker is None:
            buffer.append(text[pos:])
            break
        buffer.append(text[pos : marker.start()])
        if marker.group() == "$${":
            buffer.append("${")
            pos = marker.end()
            continue
        reference, pos = read_reference(text, marker.start())
        literal = "".join(buffer)
        if literal:
            parts.append(literal)
        buffer = []
        parts.append(reference)
    literal = "".join(buffer)
    if literal or not parts:
        parts.append(literal)
    return tuple(parts)


def rewrite_text(text: str, replace: Callable[[Reference], str | None]) -> str:
    """``text`` with each ``${...}`` whose ``replace(reference)`` is not None rewritten
    to ``${<that text>}``; everything else (``$${`` escapes, bad syntax) kept as written."""
    if "${" not in text:
        return text
    parts: list[str] = []
    pos = 0
    while (marker := _MARKER.search(text, pos)) is not None:
        if marker.group() == "$${":
            parts.append(text[pos : marker.end()])
            pos = marker.end()
            continue
        try:
            reference, end = read_reference(text, marker.start())
        except ReferenceError_:
            parts.append(text[pos : marker.end()])
            pos = marker.end()
            continue
        new = replace(reference)
        parts.append(text[pos : marker.start()])
        parts.append(text[marker.start() : end] if new is None else "${" + new + "}")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def rewrite_references(value: Any, replace: Callable[[Reference], str | None]) -> Any:
    """Rewrite every reference inside ``value`` (strings in nested dicts and lists).

    ``replace(reference)`` returns the new inside of ``${...}`` (``"node.alias.key"``)
    or None to keep it. Dicts and lists are changed in place, once each even when
    shared (YAML anchors load as one object); the rewritten value is returned. Used
    by ``migrate`` and by anything that renames nodes or aliases in a plan.
    """
    seen: set[int] = set()

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return rewrite_text(item, replace)
        if isinstance(item, list | dict):
            if id(item) in seen:
                return item
            seen.add(id(item))
        if isinstance(item, list):
            item[:] = [walk(element) for element in item]
        elif isinstance(item, dict):
            for key in list(item):
                item[key] = walk(item[key])
        return item

    return walk(value)


def _too_deep(path: str) -> NoReturn:
    message = f"{path or '値'} の入れ子が {MAX_VALUE_DEPTH} 段より深いです"
    raise ReferenceError_(message, details={"field": path})


def _find(value: Any, path: str, depth: int) -> Iterator[tuple[str, Reference]]:
    if depth > MAX_VALUE_DEPTH:
        _too_deep(path)
    if isinstance(value, str):
        if "${" not in value:
            return
        try:
            parts = _template_parts(value)
        except ReferenceError_ as exc:
            where = f"{path}: " if path else ""
            raise ReferenceError_(
                f"{where}{exc.message}", hint=exc.hint, details={**exc.details, "field": path}
            ) from None
        for part in parts:
            if isinstance(part, Reference):
                yield path, part
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _find(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _find(item, f"{path}[{index}]", depth + 1)


def find_references(value: Any, path: str = "") -> Iterator[tuple[str, Reference]]:
    """Every reference inside a literal (nested dicts/lists/strings) with its field path.

    Paths look like ``in.requirements[0].label`` (``path`` is the prefix). A string
    with bad reference syntax raises ReferenceError_ naming the field.
    """
    yield from _find(value, path, 0)


def is_whole_reference(value: Any) -> bool:
    """True when ``value`` is a string that is exactly one ``${...}`` (never raises)."""
    if not isinstance(value, str) or not value.startswith("${") or not value.endswith("}"):
        return False
    try:
        parts = _template_parts(value)
    except ReferenceError_:
        return False
    return len(parts) == 1 and isinstance(parts[0], Reference)


Resolver = Callable[[Reference], Any]
"""Returns the value of a reference or raises ReferenceError_ (see ``Scope.lookup``)."""


def _lookup_error(reference: Reference, message: str, **details: Any) -> NoReturn:
    raise ReferenceError_(
        f"{reference} の値を取り出せません: {message}",
        hint="参照に書いたノード id、出力の別名、キーを確かめてください",
        details={"reference": reference.text, **details},
    )


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return f"{len(value)} 個の要素のリスト"
    if isinstance(value, str):
        return "文字列"
    return type(value).__name__


def _length(value: Any, reference: Reference, where: str) -> int:
    if isinstance(value, str | bytes | list | tuple | set | frozenset | Mapping):
        return len(value)
    _lookup_error(
        reference, f"{where} は {_describe(value)} で、.length（長さ）がありません", at=where
    )


def _step(value: Any, segment: str | int, reference: Reference, where: str, kind: str) -> Any:
    """One path segment: a mapping key or a list index, never an attribute."""
    if type(value) is dict and type(segment) is str and segment in value:
        return value[segment]  # the common case, without the ABC ``isinstance`` below
    available: list[str] = []
    if isinstance(value, Mapping):
        if isinstance(segment, int):
            # The key as written ("0101", "2024"), then an int key (YAML ``2024:``) when
            # the text is the int's own form: "0101" never reads key "101" or 101.
            text = segment.text if isinstance(segment, Digits) else str(segment)
            if text in value:
                return value[text]
            if text == str(int(segment)) and segment in value:
                return value[segment]
        elif segment in value:
            return value[segment]
        available = [str(key) for key in value][:100]
        message = (
            f"{unknown_choice_text(kind, str(segment), available)}（{where} の中）"
            if available
            else f"{kind} {str(segment)!r} は見つかりません（{where} は空です）"
        )
    elif isinstance(value, list | tuple) and isinstance(segment, int):
        if segment < len(value):
            return value[segment]
        valid = f"使える番号は 0〜{len(value) - 1}" if value else "空です"
        message = f"番号 {segment} は範囲外です: {where} は {_describe(value)}（{valid}）"
    elif isinstance(value, list | tuple):
        message = (
            f"{where} は {_describe(value)} です。{segment!r} ではなく [0] のような番号か "
            ".length を使ってください"
        )
    else:
        message = (
            f"{where} は {_describe(value)} です。中を取り出せるのはマッピングとリストだけです"
            f"（{segment!r} は取り出せません）"
        )
    _lookup_error(reference, message, missing=segment, available=available, at=where)


def _walk(
    value: Any,
    reference: Reference,
    path: tuple[str | int, ...],
    where: str,
    first_kind: str = "キー",
) -> Any:
    """Follow ``path`` from ``value``; ``where`` names the value for messages."""
    if len(path) == 1 and type(value) is dict:
        segment = path[0]
        if type(segment) is str and segment in value:  # ``${node.alias}``: one plain key
            return value[segment]
    for number, segment in enumerate(path):
        last = number == len(path) - 1
        if last and segment == "length" and not (isinstance(value, Mapping) and "length" in value):
            return _length(value, reference, where)
        kind = first_kind if number == 0 else "キー"
        value = _step(value, segment, reference, where, kind)
        where = f"{where}[{segment}]" if isinstance(segment, int) else f"{where}.{segment}"
    return value


@dataclass(frozen=True)
class Scope:
    """The values references resolve against while running (or dry-running) a graph.

    ``nodes``: node id → {alias: value} for nodes that finished (a skipped node maps to
    ``None``: every reference through it resolves to ``None``); ``locals``: loop
    item/index variables (looked up first).
    """

    nodes: Mapping[str, Mapping[str, Any] | None]
    vars: Mapping[str, Any]
    env: Mapping[str, str]
    config: Mapping[str, Any]
    locals: Mapping[str, Any]

    def lookup(self, reference: Reference) -> Any:
        """The referenced value; ReferenceError_ naming what is missing and what exists."""
        root, path = reference.root, reference.path
        if root in self.locals:
            return _walk(self.locals[root], reference, path, root)
        if root == "env":
            if not path:
                _lookup_error(reference, "環境変数の名前を書いてください: ${env.NAME}")
            name = str(path[0])
            if name not in self.env:
                suggestion = closest_match(name, self.env)
                did_you_mean = f"。{suggestion!r} のことですか？" if suggestion else ""
                _lookup_error(
                    reference,
                    f"環境変数 {name!r} が設定されていません{did_you_mean}",
                    missing=name,
                )
            return _walk(self.env[name], reference, path[1:], f"env.{name}")
        if root in ("vars", "config"):
            return _walk(self.vars if root == "vars" else self.config, reference, path, root)
        if root in self.nodes:
            outputs = self.nodes[root]
            if outputs is None:
                return None
            return _walk(outputs, reference, path, root, "出力の別名")
        roots = list(dict.fromkeys([*self.locals, "vars", "env", "config", *self.nodes]))
        message = unknown_choice_text("参照の名前", root, roots)
        _lookup_error(
            reference,
            f"{message}（まだ実行されていないノードか、書き間違いです）",
            missing=root,
            available=roots[:100],
        )


def to_text(value: Any) -> str:
    """The text form used inside longer strings: None → '', true/false, compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list | tuple):
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        except (TypeError, ValueError, RecursionError):
            return str(value)
    return str(value)


def _resolve(value: Any, resolver: Resolver, depth: int) -> Any:
    if depth > MAX_VALUE_DEPTH:
        _too_deep("")
    if isinstance(value, str):
        if "${" not in value:
            return value
        parts = _template_parts(value)
        if len(parts) == 1 and isinstance(parts[0], Reference):
            return resolver(parts[0])
        return "".join(part if isinstance(part, str) else to_text(resolver(part)) for part in parts)
    if isinstance(value, Mapping):
        return {key: _resolve(item, resolver, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, resolver, depth + 1) for item in value]
    if isinstance(value, tuple):
        return tuple(_resolve(item, resolver, depth + 1) for item in value)
    return value


def resolve_value(value: Any, resolver: Resolver) -> Any:
    """Replace every reference inside ``value`` (recursively), keeping whole-reference types.

    Text around references uses ``to_text``; mapping keys are not resolved.
    """
    return _resolve(value, resolver, 0)
