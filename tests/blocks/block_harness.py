"""Running a built-in block the way the engine does, for the block tests."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.plans.catalog.catalog import BlockCatalog, schema_problems

CATALOG = BlockCatalog.discover()


def make_context() -> BlockContext:
    """A context for calling a block directly."""
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(),
    )


def run(block_id: str, ctx: BlockContext, **inputs: Any) -> dict[str, Any]:
    """Run a block as the engine does: defaults, input and output schema checks."""
    spec = CATALOG.resolve(block_id)
    values = {**spec.input_defaults(), **inputs}
    for name, value in values.items():
        if not isinstance(value, bytes):
            assert schema_problems(value, spec.input_schema(name)) == [], name
    outputs = CATALOG.load(spec).run(values, ctx)
    assert set(outputs) == set(spec.outputs)
    for name, value in outputs.items():
        assert schema_problems(value, spec.output_schema(name)) == [], name
    return outputs


def failure(block_id: str, ctx: BlockContext, **inputs: Any) -> BlockError:
    """The INPUT_VALIDATION_FAILED error a block raises for bad input (always recoverable)."""
    with pytest.raises(BlockError) as exc:
        run(block_id, ctx, **inputs)
    assert exc.value.code == BlockErrorCode.INPUT_VALIDATION_FAILED
    assert exc.value.recoverable is True
    return exc.value
