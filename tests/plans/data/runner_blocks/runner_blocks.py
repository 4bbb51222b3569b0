"""Blocks used only by the plan runner tests (loaded from this spec folder).

``RECORDER`` (one per process) notes every start and end with a monotonic time,
counts runs per label, and tracks how many blocks run at once.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, InputRequired, ProcessingBlock, UIBlock
from keiri_agent.errors import BlockError


class Recorder:
    """What the test blocks did, thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.events: list[tuple[str, str, float]] = []
            self.counts: Counter[str] = Counter()
            self.active = 0
            self.max_active = 0
            self.saw_cancel: dict[str, threading.Event] = {}

    def cancel_seen(self, label: str) -> threading.Event:
        with self.lock:
            return self.saw_cancel.setdefault(label, threading.Event())

    def begin(self, label: str) -> int:
        with self.lock:
            self.counts[label] += 1
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.events.append((label, "start", time.monotonic()))
            return self.counts[label]

    def end(self, label: str) -> None:
        with self.lock:
            self.active -= 1
            self.events.append((label, "end", time.monotonic()))

    def time_of(self, label: str, kind: str) -> float:
        with self.lock:
            return next(t for name, event, t in self.events if name == label and event == kind)


RECORDER = Recorder()


class Work(ProcessingBlock):
    """Echo ``value`` after ``sleep_ms``; fail the first ``fail_times`` runs of a label."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        label = inputs["label"] or ctx.node_id
        attempt = RECORDER.begin(label)
        try:
            seconds = inputs["sleep_ms"] / 1000
            if inputs["cooperative"]:
                if ctx.cancel_event.wait(seconds):
                    RECORDER.cancel_seen(label).set()
                    ctx.check_cancelled()
            else:
                time.sleep(seconds)
                if ctx.cancel_event.is_set():
                    RECORDER.cancel_seen(label).set()
            if inputs["crash"]:
                raise RuntimeError(f"boom in {label}")
            if attempt <= inputs["fail_times"]:
                raise BlockError(
                    inputs["error_code"],
                    f"{label} failed on run {attempt}",
                    details={"attempt": attempt},
                    hint="try again",
                )
            return {"value": inputs.get("value"), "label": label, "attempt": attempt}
        finally:
            RECORDER.end(label)


class Strict(ProcessingBlock):
    """Typed ports; ``mode`` picks how it breaks its output contract."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        mode = inputs["mode"]
        number = inputs["number"]
        if mode == "bad_output":
            return {"result": "not a number", "blob": None}
        if mode == "missing_output":
            return {"blob": None}
        if mode == "extra_output":
            return {"result": number, "blob": None, "surprise": 1}
        if mode == "unstorable":
            return {"result": number, "blob": {"rows": [object()]}}
        if mode == "bytes":
            return {"result": number, "blob": {"raw": b"\x00\xffPK", "when": _DATE}}
        if mode == "not_a_mapping":
            return [number]  # type: ignore[return-value]
        return {"result": number * 2, "blob": None}


class Ask(UIBlock):
    """Asks ``question``; the answer's ``answer`` field becomes the output."""

    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        return {"question": inputs["question"], "fields": ["answer"]}

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        assert ctx.answers is not None
        if "answer" not in ctx.answers:
            raise InputRequired({"question": inputs["question"], "missing": ["answer"]})
        RECORDER.begin(f"ask:{ctx.node_id}")
        RECORDER.end(f"ask:{ctx.node_id}")
        return {"answer": ctx.answers["answer"]}


def _date() -> Any:
    import datetime

    return datetime.date(2025, 1, 31)


_DATE = _date()
