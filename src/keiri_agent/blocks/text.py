"""Built-in text blocks: ``text.template`` and ``text.join``."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.errors import BlockError, BlockErrorCode, closest_match

_FORMATTER = string.Formatter()
MAX_WIDTH = 1000
"""Largest width or precision a placeholder's format spec may ask for."""


def _invalid(message: str, *, hint: str | None = None, **details: Any) -> BlockError:
    return BlockError(BlockErrorCode.INPUT_VALIDATION_FAILED, message, details=details, hint=hint)


def render_value(value: Any, format_spec: str = "") -> str:
    """Text for one placeholder: None → "", booleans → true/false, lists/mappings → JSON."""
    if format_spec:
        return format(value, format_spec)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def fill_template(template: str, values: Mapping[str, Any]) -> str:
    """Replace ``{name}`` / ``{name:spec}`` with ``values[name]``; ``{{``/``}}`` are braces.

    Only plain keys are allowed: no attribute access (``{a.b}``), indexing (``{a[0]}``),
    conversions (``{a!r}``), positional fields (``{}``) or nested fields in a spec.
    """
    try:
        parts = list(_FORMATTER.parse(template))
    except ValueError as error:
        raise _invalid(
            f"template is not valid: {error}",
            hint="write {name} for a value and {{ or }} for a literal brace",
        ) from None
    pieces: list[str] = []
    for literal, name, format_spec, conversion in parts:
        pieces.append(literal)
        if name is None:
            continue
        if name == "" or any(c in name for c in ".[]") or conversion is not None:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + "}"
            raise _invalid(
                f"placeholder {shown} is not allowed: use a plain name such as {{amount}}",
                hint="attribute access, indexing, conversions and positional {} are refused",
                placeholder=shown,
            )
        if format_spec and "{" in format_spec:
            raise _invalid(f"placeholder {{{name}:{format_spec}}}: nested fields not allowed")
        if any(int(n) > MAX_WIDTH for n in re.findall(r"\d+", format_spec or "")):
            raise _invalid(
                f"placeholder {{{name}:{format_spec}}}: widths and precisions above "
                f"{MAX_WIDTH} are not allowed",
                placeholder=name,
            )
        if name not in values:
            suggestion = closest_match(name, [str(k) for k in values])
            known = ", ".join(map(str, values)) or "(none)"
            raise _invalid(
                f"template placeholder {{{name}}} has no value in 'values'",
                hint=f"did you mean {{{suggestion}}}?"
                if suggestion
                else f"add {name!r} to 'values' (given: {known})",
                missing=name,
            )
        try:
            pieces.append(render_value(values[name], format_spec or ""))
        except (ValueError, TypeError) as error:
            raise _invalid(
                f"placeholder {{{name}:{format_spec}}} cannot format "
                f"{type(values[name]).__name__} value: {error}",
                placeholder=name,
            ) from None
    return "".join(pieces)


class TemplateBlock(ProcessingBlock):
    """``text.template``: fill ``{name}`` placeholders from ``values``."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        template = inputs.get("template")
        values = inputs.get("values") or {}
        if not isinstance(template, str):
            raise _invalid("'template' must be text", field="template")
        if not isinstance(values, Mapping):
            raise _invalid("'values' must be a mapping of names to values", field="values")
        return {"text": fill_template(template, values)}


class JoinBlock(ProcessingBlock):
    """``text.join``: join a list of strings with a separator."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        items = inputs.get("items")
        separator = inputs.get("separator", "\n")
        skip_empty = bool(inputs.get("skip_empty", False))
        if not isinstance(items, list):
            raise _invalid("'items' must be a list of strings", field="items")
        if not isinstance(separator, str):
            raise _invalid("'separator' must be text", field="separator")
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise _invalid(
                    f"items[{index}] is {type(item).__name__}, not text",
                    hint="convert values to text first (e.g. with text.template)",
                    field=f"items[{index}]",
                )
        kept = [item for item in items if item.strip()] if skip_empty else items
        return {"text": separator.join(kept)}
