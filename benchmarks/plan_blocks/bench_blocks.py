"""Blocks for benchmarks/plan_runner.py: they add up the time spent inside ``run``."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock

_LOCK = threading.Lock()
WORK_S = [0.0]
"""Seconds spent inside run() since the last reset (summed over threads)."""


def reset() -> None:
    with _LOCK:
        WORK_S[0] = 0.0


class Sleep(ProcessingBlock):
    """Sleep ``ms`` milliseconds (0: return at once) and echo ``value``."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        started = time.perf_counter()
        if inputs["ms"]:
            time.sleep(inputs["ms"] / 1000)
        result = {"value": inputs.get("value")}
        elapsed = time.perf_counter() - started
        with _LOCK:
            WORK_S[0] += elapsed
        return result
