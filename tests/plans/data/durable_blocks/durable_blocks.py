"""A side-effecting block used only by the durable-run tests (loaded from this folder).

``rt.record`` waits ``delay_s`` (cooperatively: a cancelled run stops it), then
appends ``item`` as one line to the file ``path`` and returns it: the file is the
record of every time the block really ran, which the tests compare with the run
state saved when the process was killed or interrupted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock


class Record(ProcessingBlock):
    """Append ``item`` to ``path`` after ``delay_s``; output it as ``value``."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        if ctx.cancel_event.wait(inputs["delay_s"]):
            ctx.check_cancelled()
        line = f"{inputs['item']}\n".encode()
        descriptor = os.open(inputs["path"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
        return {"value": inputs["item"]}
