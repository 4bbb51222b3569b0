"""A block used only by the run-lock tests (loaded from this spec folder).

``rt.hold`` writes ``{gate}/started`` when it begins, then polls the file system
(the test is another process) until ``{gate}/release`` exists, so a test knows
exactly when a run is inside a node and decides when it may finish.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.errors import BlockError

POLL_S = 0.02


class Hold(ProcessingBlock):
    """Echo ``value`` once ``{gate}/release`` appears (BlockError after ``timeout_s``)."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        gate = Path(inputs["gate"])
        (gate / "started").write_text(ctx.node_id, encoding="utf-8")
        deadline = time.monotonic() + inputs["timeout_s"]
        while not (gate / "release").exists():
            if time.monotonic() > deadline:
                raise BlockError("TIMEOUT_ERROR", f"{gate / 'release'} never appeared")
            if ctx.cancel_event.wait(POLL_S):
                ctx.check_cancelled()
        return {"value": inputs.get("value")}
