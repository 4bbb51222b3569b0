"""Built-in text blocks: text.template (safe placeholders) and text.join."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from keiri_agent.blocks.base import Block, BlockContext
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.plans.catalog.catalog import BlockCatalog, schema_problems


@pytest.fixture(scope="module")
def catalog() -> BlockCatalog:
    return BlockCatalog.discover()


@pytest.fixture
def ctx() -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(),
    )


def run(catalog: BlockCatalog, block_id: str, ctx: BlockContext, **inputs: Any) -> dict[str, Any]:
    spec = catalog.resolve(block_id)
    values = {**spec.input_defaults(), **inputs}
    block: Block = catalog.load(spec)
    outputs = block.run(values, ctx)
    for name in spec.outputs:
        assert schema_problems(outputs[name], spec.output_schema(name)) == []
    return outputs


def invalid(catalog: BlockCatalog, block_id: str, ctx: BlockContext, **inputs: Any) -> BlockError:
    with pytest.raises(BlockError) as caught:
        run(catalog, block_id, ctx, **inputs)
    assert caught.value.code == BlockErrorCode.INPUT_VALIDATION_FAILED
    return caught.value


# --- text.template ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        ("Hello {name}", {"name": "World"}, "Hello World"),
        ("{氏名} 様", {"氏名": "山田"}, "山田 様"),
        ("{a}{a}-{b}", {"a": "x", "b": 2}, "xx-2"),
        ("合計 {amount:,} 円", {"amount": 1234567}, "合計 1,234,567 円"),
        ("{rate:.1%}", {"rate": 0.125}, "12.5%"),
        ("[{code:>5}]", {"code": "A1"}, "[   A1]"),
        ("{{literal}} {x}", {"x": 1}, "{literal} 1"),
        ("none={v}", {"v": None}, "none="),
        ("{t}/{f}", {"t": True, "f": False}, "true/false"),
        ("{items}", {"items": ["a", 1]}, '["a", 1]'),
        ("{obj}", {"obj": {"k": "値"}}, '{"k": "値"}'),
        ("{f}", {"f": 1.5}, "1.5"),
        ("no placeholders", {}, "no placeholders"),
        ("", {}, ""),
        ("{0}", {"0": "zero"}, "zero"),
    ],
)
def test_template_fills_placeholders(
    catalog: BlockCatalog, ctx: BlockContext, template: str, values: dict[str, Any], expected: str
) -> None:
    assert run(catalog, "text.template", ctx, template=template, values=values) == {
        "text": expected
    }


def test_template_values_default_to_empty(catalog: BlockCatalog, ctx: BlockContext) -> None:
    assert run(catalog, "text.template", ctx, template="固定文") == {"text": "固定文"}


def test_missing_placeholder_is_named_with_a_hint(catalog: BlockCatalog, ctx: BlockContext) -> None:
    error = invalid(catalog, "text.template", ctx, template="{custmer} 様", values={"customer": 1})
    assert "{custmer}" in error.message
    assert error.details["missing"] == "custmer"
    assert error.hint == "{customer} ではありませんか？"
    error = invalid(catalog, "text.template", ctx, template="{x}", values={})
    assert "'x'" in (error.hint or "")


@pytest.mark.parametrize(
    "template",
    [
        "{0.__class__}",
        "{name.__class__.__mro__}",
        "{name[0]}",
        "{name!r}",
        "{}",
        "{name:{width}}",
        "{name:>100000000}",
        "{name:.5000f}",
    ],
)
def test_unsafe_placeholders_are_refused(
    catalog: BlockCatalog, ctx: BlockContext, template: str
) -> None:
    values = {"name": "x", "0": "y", "width": 3}
    invalid(catalog, "text.template", ctx, template=template, values=values)


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("{unclosed", {}),
        ("closing}", {}),
        ("{n:,}", {"n": "text"}),
        ("{d:>3}", {"d": {"a": 1}}),
    ],
)
def test_bad_templates_and_formats(
    catalog: BlockCatalog, ctx: BlockContext, template: str, values: dict[str, Any]
) -> None:
    invalid(catalog, "text.template", ctx, template=template, values=values)


def test_template_type_checks(catalog: BlockCatalog, ctx: BlockContext) -> None:
    invalid(catalog, "text.template", ctx, template=3)
    invalid(catalog, "text.template", ctx, template="{a}", values=["a"])
    spec = catalog.resolve("text.template")
    assert schema_problems(3, spec.input_schema("template")) == ["$: 3 は文字列ではありません"]


# --- text.join --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"items": ["a", "b", "c"]}, "a\nb\nc"),
        ({"items": ["a", "b"], "separator": ", "}, "a, b"),
        ({"items": ["請求", "書"], "separator": ""}, "請求書"),
        ({"items": []}, ""),
        ({"items": ["only"]}, "only"),
        ({"items": ["a", "", "  ", "b"], "separator": "|"}, "a||  |b"),
        ({"items": ["a", "", "  ", "b"], "separator": "|", "skip_empty": True}, "a|b"),
    ],
)
def test_join(
    catalog: BlockCatalog, ctx: BlockContext, inputs: dict[str, Any], expected: str
) -> None:
    assert run(catalog, "text.join", ctx, **inputs) == {"text": expected}
    assert expected == inputs.get("separator", "\n").join(
        item for item in inputs["items"] if not inputs.get("skip_empty") or item.strip()
    )


def test_join_refuses_non_text_items(catalog: BlockCatalog, ctx: BlockContext) -> None:
    error = invalid(catalog, "text.join", ctx, items=["a", 1])
    assert "items[1]" in error.message and error.details["field"] == "items[1]"
    invalid(catalog, "text.join", ctx, items="abc")
    invalid(catalog, "text.join", ctx, items=["a"], separator=None)
    spec = catalog.resolve("text.join")
    assert schema_problems(["a", 1], spec.input_schema("items")) == [
        "$[1]: 1 は文字列ではありません"
    ]
