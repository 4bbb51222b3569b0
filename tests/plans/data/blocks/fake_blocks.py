"""Blocks used only by the plan validator / dry-run tests (a user spec dir: file entrypoints).

The dry run never loads them (tests/plans/test_dry_run.py makes loading fail).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, UIBlock


class InteractiveInput(UIBlock):
    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"fields": inputs.get("requirements", [])}

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"collected_data": dict(ctx.answers or {}), "approved": True}


class Notify(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        raise AssertionError("a side-effecting block must never run in a dry run")


class Numbers(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"count": 1, "label": "x", "summary": {"total": 1, "files": []}, "files": []}


class NoSample(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"result": {}}


class BadRef(ProcessingBlock):
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {}
