"""The shared Event type: numbering, order under threads, JSON form."""

from __future__ import annotations

import datetime as dt
import json
import threading

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


def test_timestamps_are_utc_with_milliseconds() -> None:
    jst = dt.timezone(dt.timedelta(hours=9))
    assert events.utc_timestamp(dt.datetime(2026, 1, 1, 19, 0, 0, 250_400, tzinfo=jst)) == (
        "2026-01-01T10:00:00.250Z"
    )
    assert events.utc_timestamp(dt.datetime(1970, 1, 1, 0, 0, 5, tzinfo=dt.UTC)) == (
        "1970-01-01T00:00:05.000Z"
    )
    now = events.utc_timestamp()
    assert len(now) == 24 and now.endswith("Z") and now[10] == "T"
