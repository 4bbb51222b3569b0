"""The run log: JSONL events, file naming, summaries, secret masking, concurrent appends."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
from pathlib import Path

import pytest
from runner_support import events, make_plan, make_runner, node

from keiri_agent.events import Event, EventEmitter
from keiri_agent.plans.run.run_log import (
    EVENT_NAMES,
    RunLog,
    log_line,
    log_path_for,
    read_events,
    sanitize,
)

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_a_run_writes_the_seed_events_with_ids_and_utc_timestamps(tmp_path: Path) -> None:
    plan = make_plan(
        node("a", value=1),
        node("skip", when_={"expr": "${a.value} > 1"}),
        node("b", value="${a.value}", fail_times=1, label="b"),
        on_error="retry",
        retries=1,
        workers=1,
    )

    result = make_runner(tmp_path / "runs").start(plan)

    log = events(result)
    assert [e["event"] for e in log] == [
        "plan_start",
        "node_start",
        "node_complete",
        "node_skipped",
        "node_start",
        "node_error",
        "node_start",
        "node_complete",
        "plan_complete",
    ]
    assert {e["event"] for e in log} <= set(EVENT_NAMES)
    for event in log:
        assert event["run_id"] == result.run_id
        assert event["plan_id"] == "test_plan"
        assert TIMESTAMP.match(event["timestamp"])
    assert log[1] == {**log[1], "node_id": "a", "block": "rt.work@1.0.0", "attempt": 1}
    assert log[2]["outputs"] == {"value": 1, "label": "a", "attempt": 1}
    assert log[2]["duration_ms"] >= 0
    assert log[3]["reason"] == "when_condition_false"
    assert log[5]["error"]["code"] == "API_ERROR" and log[5]["retry"] == 0
    assert log[-1]["status"] == "success" and log[-1]["total_duration_ms"] > 0
    assert "node_id" not in log[0] and "node_id" not in log[-1]


def test_the_log_file_is_named_by_plan_timestamp_and_run_id(tmp_path: Path) -> None:
    moment = dt.datetime(2025, 1, 1, 10, 0, 0, tzinfo=dt.UTC)

    path = log_path_for(tmp_path, "common/validation", "run_abc", moment)
    result = make_runner(tmp_path / "runs").start(make_plan(node("a")))

    assert path == tmp_path / "common" / "validation" / "20250101T100000Z-run_abc.jsonl"
    assert log_path_for(tmp_path, "../../etc", "r").parent == tmp_path / "etc"
    assert result.log_path.parent == tmp_path / "runs" / "test_plan"
    assert re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{result.run_id}\.jsonl", result.log_path.name)


def test_secrets_are_masked_by_key_and_by_value(tmp_path: Path) -> None:
    secret = "sk-proj-" + "a1B2" * 8
    value = {
        "api_key": "plain",
        "Authorization": "Bearer abc.def.ghi",
        "nested": {"db_password": "hunter2", "note": f"key is {secret} ok", "token": None},
        "header": "Bearer eyJhbGciOiJIUzI1NiJ9",
    }

    result = make_runner(tmp_path / "runs").start(make_plan(node("a", value=value)))

    text = result.log_path.read_text(encoding="utf-8")
    assert "plain" not in text and "hunter2" not in text and secret not in text
    assert "eyJhbGciOiJIUzI1NiJ9" not in text
    logged = events(result, "node_complete")[0]["outputs"]["value"]
    assert logged == {
        "api_key": "***",
        "Authorization": "***",
        "nested": {"db_password": "***", "note": "key is *** ok", "token": None},
        "header": "***",
    }
    assert result.outputs["a"]["value"] == value


def test_values_are_summarised() -> None:
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(10):
        deep = {"child": deep}

    summary = sanitize(
        {
            "text": "あ" * 250,
            "items": list(range(12)),
            "raw": b"\x00" * 2048,
            "when": dt.date(2025, 1, 31),
            "deep": deep,
            "other": object(),
        },
        max_depth=4,
    )

    assert summary["text"] == "あ" * 200 + "… <250 chars>"
    assert summary["items"] == [0, 1, 2, 3, 4, "<7 more, 12 items>"]
    assert summary["raw"] == "<bytes 2048>"
    assert summary["when"] == "2025-01-31"
    assert summary["deep"] == {"child": {"child": {"child": "<dict 1 keys>"}}}
    assert summary["other"] == "<object>"
    json.dumps(summary)


def test_events_from_many_threads_are_whole_lines(tmp_path: Path) -> None:
    seen: list[Event] = []
    path = tmp_path / "log.jsonl"
    with RunLog(path, run_id="r", on_event=seen.append) as log:

        def write(thread: int) -> None:
            for index in range(200):
                log.emit("node_start", run_id="r", plan_id="p", node_id=f"t{thread}", n=index)

        threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    read = read_events(path)
    assert len(read) == 1600
    assert [log_line(event) for event in seen] == read
    for writer in range(8):
        assert [e["n"] for e in read if e["node_id"] == f"t{writer}"] == list(range(200))


def test_read_events_ignores_a_torn_last_line_but_not_a_broken_middle(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    good = json.dumps({"event": "plan_start"})
    path.write_text(f'{good}\n{good}\n{{"event": "node_st', encoding="utf-8")
    assert len(read_events(path)) == 2

    path.write_text(f"{good}\nnot json\n{good}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        read_events(path)


def test_a_failing_event_callback_does_not_stop_the_run(tmp_path: Path) -> None:
    def explode(event: Event) -> None:
        raise RuntimeError("observer bug")

    result = make_runner(tmp_path / "runs").start(make_plan(node("a")), on_event=explode)

    assert result.status == "success"
    assert events(result)[-1]["event"] == "plan_complete"


def test_log_line_keeps_the_jsonl_shape_of_an_event() -> None:
    top = Event("plan", "node_start", "r", 3, "t", {"plan_id": "p", "node_id": "a", "attempt": 1})
    nested = Event("plan", "plan_start", "r", 4, "t", {"run_id": "r.sub#1", "plan_id": "q"})

    assert list(log_line(top).items()) == [
        ("event", "node_start"),
        ("run_id", "r"),
        ("plan_id", "p"),
        ("node_id", "a"),
        ("timestamp", "t"),
        ("attempt", 1),
    ]
    assert log_line(nested) == {
        "event": "plan_start",
        "run_id": "r.sub#1",
        "plan_id": "q",
        "timestamp": "t",
    }


def test_events_are_numbered_in_log_order_and_continue_after_start_after(tmp_path: Path) -> None:
    seen: list[Event] = []
    with RunLog(tmp_path / "log.jsonl", run_id="r", on_event=seen.append, start_after=41) as log:
        log.emit("plan_start", run_id="r", plan_id="p")
        log.emit("plan_start", run_id="r.sub#1", plan_id="q", node_id="call")
        assert log.last_seq == 43

    assert [(e.source, e.run_id, e.seq) for e in seen] == [("plan", "r", 42), ("plan", "r", 43)]
    assert seen[1].payload == {"run_id": "r.sub#1", "plan_id": "q", "node_id": "call"}


def test_run_folders_keep_japanese_plan_ids_readable_and_distinct() -> None:
    from keiri_agent.plans.run.run_log import safe_path_part

    assert safe_path_part("経理/売上") == Path("経理", "売上")
    assert safe_path_part("総務/請求") != safe_path_part("経理/売上")
    assert safe_path_part("a/../b") == Path("a", "b")  # no way out of runs/
    assert safe_path_part("..") == Path("_")
    assert safe_path_part("a b/c:d") == Path("a_b", "c_d")


def test_each_line_is_the_json_of_its_event_whatever_the_fields(tmp_path: Path) -> None:
    # The log builds a line's JSON once per event (cached head, fields encoded
    # before the emitter's lock); it must stay the plain encoding of log_line(event),
    # byte for byte and in key order, for every kind of field.
    seen: list[Event] = []
    path = tmp_path / "log.jsonl"
    cases: list[dict[str, object]] = [
        {},
        {"block": "x.y@1.0.0", "attempt": 1},
        {"outputs": {"value": [1, 2.5, None, True, '日本語"引用"']}, "duration_ms": 0.25},
        {"outputs": {"when": dt.date(2026, 1, 2)}, "ratio": float("nan")},
        {"api_key": 123, "token": None, "password": "pw"},
        {"timestamp": "clash", "attempt": 2},  # a field named like a head field
    ]
    with RunLog(path, run_id="r", on_event=seen.append) as log:
        for index, fields in enumerate(cases):
            log.emit("node_complete", run_id="r", plan_id="p", node_id=f"n{index}", **fields)
            log.emit("plan_start", run_id="r.sub#1", plan_id="q", **fields)
            log.emit("plan_complete", run_id="r", plan_id=None, **fields)  # type: ignore[arg-type]

    written = path.read_text(encoding="utf-8").splitlines()
    encoder = json.JSONEncoder(ensure_ascii=False, default=str)
    assert written == [encoder.encode(log_line(event)) for event in seen]
    masked = read_events(path)[12]
    assert (masked["api_key"], masked["token"], masked["password"]) == ("***", None, "***")


def test_an_unobserved_log_writes_the_same_lines_without_building_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no on_event nobody reads the Event: the line is written from its parts
    # (numbered all the same), and it is the line an observed log writes.
    cases: list[dict[str, object]] = [
        {},
        {"block": "x.y@1.0.0", "attempt": 1},
        {"outputs": {"value": [1, 2.5, None, '日本語"引用"']}, "duration_ms": 0.25},
        {"api_key": 123, "token": None, "password": "pw"},
        {"timestamp": "clash", "attempt": 2},
    ]

    def write(log: RunLog) -> None:
        for index, fields in enumerate(cases):
            for _ in range(2):
                log.emit("node_complete", run_id="r", plan_id="p", node_id=f"n{index}", **fields)
            log.emit("plan_start", run_id="r.sub#1", plan_id="q", **fields)

    with RunLog(tmp_path / "seen.jsonl", run_id="r", on_event=lambda event: None) as log:
        write(log)
    built: list[str] = []
    original = EventEmitter.next_event

    def counted(self: EventEmitter, kind: str, payload: dict[str, object]) -> Event:
        built.append(kind)
        return original(self, kind, payload)

    monkeypatch.setattr(EventEmitter, "next_event", counted)
    with RunLog(tmp_path / "unseen.jsonl", run_id="r", start_after=7) as log:
        write(log)
        assert log.last_seq == 7 + 3 * len(cases)

    def without_time(name: str) -> list[str]:
        text = (tmp_path / name).read_text(encoding="utf-8")
        return re.sub(r'"timestamp": "[^"]*"', '"timestamp": "T"', text).splitlines()

    assert without_time("unseen.jsonl") == without_time("seen.jsonl")
    assert len(without_time("unseen.jsonl")) == 3 * len(cases)
    assert built == ["node_complete", "node_complete", "plan_start"]  # the clashing case


def test_a_line_reaches_the_file_soon_even_when_no_event_follows(tmp_path: Path) -> None:
    # A node's start is held back only briefly (lines are flushed together): while a
    # long block runs and nothing else is logged, `plan status` and the page reading
    # the file must still see that the node started.
    path = tmp_path / "log.jsonl"
    with RunLog(path, run_id="r") as log:
        log.emit("node_start", run_id="r", plan_id="p", node_id="slow", attempt=1)
        deadline = time.monotonic() + 5
        while not path.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [event["node_id"] for event in read_events(path)] == ["slow"]


def test_an_event_keeps_its_own_copy_of_a_plain_mapping_field(tmp_path: Path) -> None:
    # An unobserved line encodes the caller's plain dict as it is (no copy); an event
    # that is kept holds a copy, so a later change by the caller does not reach it.
    received: list[Event] = []
    outputs = {"value": 1, "flag": True}
    clashing = {"n": 1}
    with RunLog(tmp_path / "seen.jsonl", run_id="r", on_event=received.append) as log:
        log.emit("node_complete", run_id="r", plan_id="p", node_id="a", outputs=outputs)
        log.emit("node_complete", run_id="r", plan_id="p", node_id="b", timestamp="x", o=clashing)
    with RunLog(tmp_path / "unseen.jsonl", run_id="r") as log:
        log.emit("node_complete", run_id="r", plan_id="p", node_id="a", outputs=outputs)
    outputs["value"] = 2
    clashing["n"] = 2
    assert received[0].payload["outputs"] == {"value": 1, "flag": True}
    assert received[0].payload["outputs"] is not outputs
    assert received[1].payload["o"] == {"n": 1}
    assert read_events(tmp_path / "unseen.jsonl")[0]["outputs"] == {"value": 1, "flag": True}


def test_late_flushes_start_no_thread_per_arming(tmp_path: Path, thread_starts: list[str]) -> None:
    # A thread start waits until the new thread runs (≈ 1 ms, more on a busy machine):
    # one thread flushes every log's late lines instead of a Timer per arming.
    from keiri_agent.plans.run import run_log

    path = tmp_path / "late.jsonl"
    with RunLog(path, run_id="r") as log:
        for index in range(3):
            log.emit("node_start", run_id="r", plan_id="p", node_id=f"n{index}")
            deadline = time.monotonic() + 2
            while len(read_events(path)) < index + 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(read_events(path)) == index + 1  # flushed late, without a next line
    assert len(thread_starts) <= 1  # the shared flusher, the first time only
    assert thread_starts in ([], ["plan-log-flush"])
    assert run_log._LATE._thread is not None


def test_a_failing_late_flush_does_not_stop_the_other_logs_flushes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One thread flushes every log of the process (an API server runs many plans): a
    # log whose flush fails (a full disk) must not end the flushes of the others.
    failing_path, healthy_path = tmp_path / "failing.jsonl", tmp_path / "healthy.jsonl"
    with RunLog(failing_path, run_id="f") as failing:

        def disk_full() -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(failing, "_flush_late", disk_full)
        failing.emit("node_start", run_id="f", plan_id="p", node_id="a")
        time.sleep(0.3)  # the failing log's deadline has passed
        monkeypatch.undo()
        # a new log: its first line is within the flush interval, so only the thread flushes it
        with RunLog(healthy_path, run_id="h") as healthy:
            healthy.emit("node_start", run_id="h", plan_id="p", node_id="b")
            deadline = time.monotonic() + 3
            while not healthy_path.read_text(encoding="utf-8") and time.monotonic() < deadline:
                time.sleep(0.02)
            assert [event["node_id"] for event in read_events(healthy_path)] == ["b"]
