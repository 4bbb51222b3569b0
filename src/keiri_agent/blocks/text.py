"""Built-in text blocks: ``text.template`` and ``text.join``."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import kind_label
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
            f"template の書き方が正しくありません（{error}）",
            hint="値は {名前} と書き、波かっこそのものは {{ または }} と書いてください",
        ) from None
    pieces: list[str] = []
    for literal, name, format_spec, conversion in parts:
        pieces.append(literal)
        if name is None:
            continue
        if name == "" or any(c in name for c in ".[]") or conversion is not None:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + "}"
            raise _invalid(
                f"差し込み位置 {shown} は使えません。{{金額}} のように名前だけを書いてください",
                hint="{a.b}、{a[0]}、{a!r}、名前のない {} は使えません",
                placeholder=shown,
            )
        if format_spec and "{" in format_spec:
            raise _invalid(
                f"差し込み位置 {{{name}:{format_spec}}}: 書式の中に {{}} は書けません",
                hint="書式には ,.0f のような固定の指定を書いてください",
                placeholder=name,
            )
        if any(int(n) > MAX_WIDTH for n in re.findall(r"\d+", format_spec or "")):
            raise _invalid(
                f"差し込み位置 {{{name}:{format_spec}}}: 幅や桁数に {MAX_WIDTH} より大きい数は"
                "指定できません",
                hint=f"幅や桁数は {MAX_WIDTH} 以下にしてください",
                placeholder=name,
            )
        if name not in values:
            suggestion = closest_match(name, [str(k) for k in values])
            known = ", ".join(map(str, values)) or "なし"
            raise _invalid(
                f"template の差し込み位置 {{{name}}} に入れる値が values にありません",
                hint=f"{{{suggestion}}} ではありませんか？"
                if suggestion
                else f"values に {name!r} を加えてください（今ある名前: {known}）",
                missing=name,
            )
        try:
            pieces.append(render_value(values[name], format_spec or ""))
        except (ValueError, TypeError) as error:
            raise _invalid(
                f"差し込み位置 {{{name}:{format_spec}}} の書式で "
                f"{kind_label(values[name])} の値を整形できません（{error}）",
                hint="数値の書式（,.0f など）は数値の値にだけ使えます",
                placeholder=name,
            ) from None
    return "".join(pieces)


class TemplateBlock(ProcessingBlock):
    """``text.template``: fill ``{name}`` placeholders from ``values``."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        template = inputs.get("template")
        values = inputs.get("values") or {}
        if not isinstance(template, str):
            raise _invalid(
                "template は文字列で指定してください", hint="例: '{取引先} 様'", field="template"
            )
        if not isinstance(values, Mapping):
            raise _invalid(
                "values は「名前: 値」の対応で指定してください",
                hint="例: values: {取引先: 株式会社A, 金額: 10000}",
                field="values",
            )
        return {"text": fill_template(template, values)}


class JoinBlock(ProcessingBlock):
    """``text.join``: join a list of strings with a separator."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        items = inputs.get("items")
        separator = inputs.get("separator", "\n")
        skip_empty = bool(inputs.get("skip_empty", False))
        if not isinstance(items, list):
            raise _invalid("items は文字列のリストで指定してください", field="items")
        if not isinstance(separator, str):
            raise _invalid(
                "separator（区切り文字）は文字列で指定してください",
                hint="例: separator: '、'",
                field="separator",
            )
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise _invalid(
                    f"items の {index + 1} 番目（items[{index}]）が {kind_label(item)} で、"
                    "文字列ではありません",
                    hint="先に text.template などで文字列にしてください",
                    field=f"items[{index}]",
                )
        kept = [item for item in items if item.strip()] if skip_empty else items
        return {"text": separator.join(kept)}
