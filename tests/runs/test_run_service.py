"""The run service's rules where a run could be lost (review of issue 31): a cancel
asked while a run is executing is kept when it then pauses for answers or is given
back; a run whose state is held elsewhere goes back to the queue instead of failing; a
process that is stopping claims nothing; a heartbeat survives an unexpected error; a
dispatch that fails leaves the run to recovery."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy

from keiri_agent.api.errors import STATUS_OF_CATEGORY, run_error_response
from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.events import Event, utc_timestamp
from keiri_agent.runs.records import Run
from keiri_agent.runs.service import Outcome, RunContext, RunService, Timing
from keiri_agent.runs.store import RunStore
from keiri_agent.storage.errors import StoreUnreachableError
from keiri_agent.storage.migrate import upgrade

TIMING = Timing(lease_s=3.0, heartbeat_s=0.1, poll_interval_s=0.05)


class Scripted:
    """A kind whose attempts return the outcomes given, in order, after ``hold`` is set."""

    source = "plan"

    def __init__(self, *outcomes: str) -> None:
        self.outcomes = list(outcomes)
        self.started = threading.Event()
        self.hold = threading.Event()
        self.attempts = 0

    def execute(self, run: Run, context: RunContext) -> Outcome:
        self.attempts += 1
        self.started.set()
        self.hold.wait(10)
        return Outcome(self.outcomes.pop(0))  # type: ignore[arg-type]


def _service(tmp_path: Path, kind: Scripted, dispatch=None) -> RunService:  # type: ignore[no-untyped-def]
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'runs.db'}")
    upgrade(engine)
    return RunService(RunStore(engine), {"k": kind}, dispatch=dispatch, timing=TIMING)


def _execute_in_background(service: RunService, run_id: str) -> threading.Thread:
    thread = threading.Thread(target=service.execute, args=(run_id,))
    thread.start()
    return thread


def test_a_cancel_asked_while_running_is_kept_when_the_run_then_waits(tmp_path: Path) -> None:
    kind = Scripted("waiting")
    service = _service(tmp_path, kind)
    run = service.start("k", subject="s", title="t", inputs={})
    thread = _execute_in_background(service, run.run_id)
    assert kind.started.wait(10)
    assert service.cancel(run.run_id).status == "running"  # type: ignore[union-attr]
    kind.hold.set()
    thread.join(10)
    final = service.require(run.run_id)
    assert final.status == "cancelled"  # not 入力待ち with the cancel forgotten
    kinds = [event.kind for event in service.store.events_after(run.run_id, 0)]
    assert kinds[-1] == "cancelled"


def test_a_run_whose_state_is_held_elsewhere_goes_back_to_the_queue(tmp_path: Path) -> None:
    kind = Scripted("queued", "success")
    kind.hold.set()
    service = _service(tmp_path, kind)
    run = service.start("k", subject="s", title="t", inputs={})
    service.execute(run.run_id)
    assert service.require(run.run_id).status == "queued"
    service.execute(run.run_id)
    assert service.require(run.run_id).status == "success"
    kinds = [event.kind for event in service.store.events_after(run.run_id, 0)]
    assert kinds == ["run_requeued"]
    assert kind.attempts == 2


def test_a_stopping_process_claims_nothing(tmp_path: Path) -> None:
    kind = Scripted("success")
    kind.hold.set()
    service = _service(tmp_path, kind)
    run = service.start("k", subject="s", title="t", inputs={})
    service.shutdown()
    service.execute(run.run_id)
    assert kind.attempts == 0
    assert service.require(run.run_id).status == "queued"  # for the next process


def test_an_unexpected_heartbeat_error_does_not_stop_the_heartbeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = Scripted("success")
    service = _service(tmp_path, kind)
    beat = service.store.beat
    calls = {"n": 0}

    def flaky(run_id: str, attempt: int, lease_s: float) -> bool:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("too many connections")
        return beat(run_id, attempt, lease_s)

    monkeypatch.setattr(service.store, "beat", flaky)
    run = service.start("k", subject="s", title="t", inputs={})
    thread = _execute_in_background(service, run.run_id)
    deadline = time.monotonic() + 10
    while calls["n"] < 3:
        assert time.monotonic() < deadline, "the heartbeat stopped after an error"
        time.sleep(0.05)
    kind.hold.set()
    thread.join(10)
    assert service.require(run.run_id).status == "success"


def test_a_failed_dispatch_leaves_the_run_queued_for_recovery(tmp_path: Path) -> None:
    def unreachable(run_id: str) -> None:
        raise StoreUnreachableError("キューに接続できません")

    service = _service(tmp_path, Scripted("success"), dispatch=unreachable)
    run = service.start("k", subject="s", title="t", inputs={})  # no error for the user
    assert service.require(run.run_id).status == "queued"


class Raising:
    """A kind whose attempt raises the error given."""

    source = "plan"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def execute(self, run: Run, context: RunContext) -> Outcome:
        raise self.error


@pytest.mark.parametrize(
    ("error", "category"),
    [
        (UserInputError("x"), "input"),
        (UserInputError("x", code="KB_NOT_FOUND"), "not_found"),
        (LLMError("x"), "model"),
        (StoreUnreachableError("x"), "unavailable"),
        (RuntimeError("bug"), "internal"),
    ],
)
def test_a_failed_run_keeps_the_category_of_its_error(
    tmp_path: Path, error: Exception, category: str
) -> None:
    """A request answered later from the stored error (the API's status) needs the
    error's category, not only its code."""
    service = _service(tmp_path, Raising(error))  # type: ignore[arg-type]
    run = service.start("k", subject="s", title="t", inputs={})
    service.execute(run.run_id)
    failed = service.require(run.run_id)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["category"] == category
    assert run_error_response(failed).status_code == STATUS_OF_CATEGORY[category]


class Emitting(Scripted):
    """Emits ``count`` events, one every 20 ms, then succeeds."""

    def __init__(self, count: int) -> None:
        super().__init__("success")
        self.count = count

    def execute(self, run: Run, context: RunContext) -> Outcome:
        self.hold.wait(10)
        for number in range(self.count):
            context.on_event(Event("plan", "step", run.run_id, 0, utc_timestamp(), {"n": number}))
            time.sleep(0.02)
        return Outcome("success")


def test_a_synchronous_follower_gets_every_event_once_then_an_empty_batch(
    tmp_path: Path,
) -> None:
    kind = Emitting(12)
    service = _service(tmp_path, kind)
    run = service.start("k", subject="s", title="t", inputs={})
    assert service.next_events(run.run_id, 0, timeout=0.2) == []  # queued: nothing yet
    thread = _execute_in_background(service, run.run_id)
    kind.hold.set()
    seen, after = [], 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        batch = service.next_events(run.run_id, after, timeout=1)
        if not batch and service.require(run.run_id).settled:
            break
        seen += batch
        after = batch[-1].seq if batch else after
    thread.join(10)
    assert [event.seq for event in seen] == list(range(1, 13))
    assert [event.payload["n"] for event in seen] == list(range(12))
    assert service.require(run.run_id).status == "success"
    assert asyncio.run(service.settled(run.run_id)).status == "success"
