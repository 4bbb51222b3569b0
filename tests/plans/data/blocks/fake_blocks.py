"""Blocks used only by the plan validator / dry-run tests (loaded from a user spec dir)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, UIBlock

CALLS: list[str] = []
"""Every run() appends the block name: the dry-run tests assert it stays empty."""


class InteractiveInput(UIBlock):
    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"fields": inputs.get("requirements", [])}

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        CALLS.append("interactive_input")
        return {"collected_data": dict(ctx.answers or {}), "approved": True}


class Notify(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        CALLS.append("notify")
        raise AssertionError("a side-effecting block must never run in a dry run")


class Numbers(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        CALLS.append("numbers")
        return {"count": 1, "label": "x", "summary": {"total": 1, "files": []}, "files": []}


class NoSample(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        CALLS.append("no_sample")
        return {"result": {}}


class BadRef(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        CALLS.append("bad_ref")
        return {}
