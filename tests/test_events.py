"""The shared Event type: numbering, order under threads, JSON form."""

from __future__ import annotations

import json
import threading

import pytest

from keiri_agent import events
from keiri_agent.events import Event, EventEmitter


def test_events_are_numbered_from_start_after_and_serialise_to_json() -> None:
    received: list[Event] = []
    emitter = EventEmitter("plan", "run_1", received.append, start_after=41)
    emitter.emit("node_start", {"node_id": "a"})
    emitter.emit("node_complete")
    assert [event.seq for event in received] == [42, 43]
    assert emitter.last_seq == 43
    line = json.loads(json.dumps(received[0].to_dict()))
    assert line["source"] == "plan"
    assert line["kind"] == "node_start"
    assert line["run_id"] == "run_1"
    assert line["payload"] == {"node_id": "a"}
    assert line["timestamp"].endswith("Z")


def test_parallel_emitters_deliver_unique_increasing_numbers_in_order() -> None:
    received: list[int] = []
    emitter = EventEmitter("helpdesk", "t", lambda event: received.append(event.seq))

    def work() -> None:
        for _ in range(200):
            emitter.emit("tick")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert received == list(range(1, 801))


def test_payload_cannot_be_changed_after_emit() -> None:
    payload = {"x": 1}
    event = EventEmitter("analysis", "t", None).emit("step", payload)
    payload["x"] = 2
    assert event.payload["x"] == 1


def test_timestamps_reuse_their_text_only_within_the_same_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    moments = iter([1767261600.2504, 1767261600.2509, 1767261600.9991, 1767261601.0004, 5.0])
    monkeypatch.setattr(events.time, "time", lambda: next(moments))

    stamps = [events.utc_timestamp() for _ in range(5)]

    assert stamps == [
        "2026-01-01T10:00:00.250Z",
        "2026-01-01T10:00:00.250Z",
        "2026-01-01T10:00:00.999Z",
        "2026-01-01T10:00:01.000Z",
        "1970-01-01T00:00:05.000Z",
    ]
