"""A side-effecting block used only by the durable-run tests (loaded from this folder).

``rt.record`` waits ``delay_s`` (cooperatively: a cancelled run stops it), then
records ``item`` and returns it. It keeps two files, which the tests compare with
the run state saved when the process was killed or interrupted:

- ``<path>.runs``: one line ``item`` every time the block really ran;
- ``path``: the effect, one line ``item<TAB>idempotency key`` — written only when
  no line carries this execution's key yet, as a block with an effect outside the
  run is meant to use ``BlockContext.idempotency_key``. A node that runs again
  because its process died after the effect (before its progress was saved) finds
  its key and does not repeat the effect.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock


class Record(ProcessingBlock):
    """Record ``item`` after ``delay_s`` (once per idempotency key); output it as ``value``."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        if ctx.cancel_event.wait(inputs["delay_s"]):
            ctx.check_cancelled()
        effects = Path(inputs["path"])
        item = str(inputs["item"])
        _append(Path(f"{effects}.runs"), f"{item}\n")
        done = effects.read_text(encoding="utf-8").splitlines() if effects.exists() else []
        if not any(line.endswith(f"\t{ctx.idempotency_key}") for line in done):
            _append(effects, f"{item}\t{ctx.idempotency_key}\n")
        return {"value": inputs["item"]}


def _append(path: Path, line: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)
