"""Timeouts with ``per_node`` caps, and cancellation racing timeouts or block errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from runner_support import events, make_plan, make_runner, node, recorder

from keiri_agent.events import Event
from keiri_agent.plans.run.run_state import load_state
from keiri_agent.plans.run.scheduler import Attempt


def _cancel_on_start(cancel: threading.Event, node_id: str) -> Any:
    def on_event(event: Event) -> None:
        if event.kind == "node_start" and event.payload.get("node_id") == node_id:
            cancel.set()

    return on_event


# -- a timed-out attempt gives back its per_node slot --------------------------------------


def test_a_timeout_bounds_the_retry_of_a_capped_node(runs: Path) -> None:
    plan = make_plan(
        node("slow", sleep_ms=3000, cooperative=False, label="slow"),
        on_error="retry",
        retries=1,
        timeout_ms=200,
        per_node={"slow": 1},
    )
    began = time.monotonic()

    result = make_runner(runs).start(plan)

    # the retry did not wait for the abandoned 3 s attempt to give back the slot
    assert time.monotonic() - began < 2.5
    assert result.status == "failed"
    assert [e["error"]["code"] for e in events(result, "node_error")] == [
        "TIMEOUT_ERROR",
        "TIMEOUT_ERROR",
    ]
    assert recorder().counts["slow"] == 2


def test_timed_out_iterations_of_a_capped_body_node_do_not_stall_the_next(runs: Path) -> None:
    body = [node("work", sleep_ms=3000, cooperative=False, label="w${item}")]
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [0, 1, 2], "max_concurrency": 1},
        "body": {"plan": {"graph": body, "exports": []}},
        "out": {},
    }
    plan = make_plan(loop, on_error="continue", timeout_ms=200, per_node={"work": 1})
    began = time.monotonic()

    result = make_runner(runs).start(plan)

    assert time.monotonic() - began < 2.5
    assert sorted(recorder().counts) == ["w0", "w1", "w2"]
    codes = [e["error"]["code"] for e in events(result, "node_error")]
    assert codes.count("TIMEOUT_ERROR") == 3


def test_a_slot_is_given_back_once_whoever_asks_first() -> None:
    slot = threading.BoundedSemaphore(1)
    slot.acquire()
    attempt = Attempt(token=1, node=None, retry=0)  # type: ignore[arg-type]
    attempt.hold(slot)

    attempt.release_slot()  # the scheduler abandons the attempt
    attempt.release_slot()  # then the attempt's own finally: no second release

    assert slot.acquire(blocking=False)
    assert not slot.acquire(blocking=False)


# -- cancelling while an attempt times out or fails ----------------------------------------


def test_a_timeout_after_cancel_leaves_the_node_cancelled_and_resume_reruns_it(
    runs: Path,
) -> None:
    cancel = threading.Event()
    plan = make_plan(
        node("a", value=1, label="a", sleep_ms=3000, cooperative=False),
        node("b", value="${a.value}", label="b"),
        timeout_ms=300,
    )
    runner = make_runner(runs)

    stopped = runner.start(plan, on_event=_cancel_on_start(cancel, "a"), cancel_event=cancel)

    assert stopped.status == "cancelled"
    assert stopped.errors == []
    assert not events(stopped, "node_error")
    state = load_state(runs, stopped.run_id)
    assert state.graph.nodes["a"].status == "cancelled"

    resumed = make_runner(runs).resume(stopped.run_id, answers={})

    assert recorder().counts["a"] == 2  # a ran again (and timed out again, on its own)
    assert "a" in [e["node_id"] for e in events(resumed, "node_start")]
    assert [e["error"]["code"] for e in events(resumed, "node_error")][-1:] == ["TIMEOUT_ERROR"]


def test_an_error_raised_in_reaction_to_cancel_leaves_the_node_cancelled(runs: Path) -> None:
    cancel = threading.Event()
    # a's first run ends with API_ERROR (like an aborted HTTP call), its second succeeds
    plan = make_plan(
        node("a", value=1, label="a", sleep_ms=300, cooperative=False, fail_times=1),
        node("b", value="${a.value}", label="b"),
    )

    stopped = make_runner(runs).start(
        plan, on_event=_cancel_on_start(cancel, "a"), cancel_event=cancel
    )

    assert stopped.status == "cancelled"
    assert stopped.errors == []
    state = load_state(runs, stopped.run_id)
    assert state.graph.nodes["a"].status == "cancelled"
    assert state.graph.nodes["b"].status == "pending"

    resumed = make_runner(runs).resume(stopped.run_id, answers={})

    assert resumed.status == "success"
    assert recorder().counts["a"] == 2
    assert recorder().counts["b"] == 1


# -- a lone block runs inline on the scheduling thread, watched for its timeout ------------


def test_an_inline_block_that_overruns_its_timeout_is_abandoned_and_the_run_goes_on(
    runs: Path,
) -> None:
    plan = make_plan(
        node("first", value=1),
        node("stuck", sleep_ms=4000, cooperative=False, label="stuck", value="${first.value}"),
        node("left", value="${stuck.value}", label="left"),
        node("right", value="${stuck.value}", label="right"),
        on_error="continue",
        timeout_ms=200,
    )
    threads: dict[tuple[str, str], int] = {}

    def on_event(event: Event) -> None:
        threads[(event.kind, str(event.payload.get("node_id")))] = threading.get_ident()

    result = make_runner(runs).start(plan, on_event=on_event)

    # "stuck" was alone: it ran on the thread that settled "first" (no hand-off) ...
    assert threads[("node_start", "stuck")] == threads[("node_complete", "first")]
    # ... and overran: the run reported the timeout and finished the other branches
    # while the abandoned block was still sleeping
    (error,) = events(result, "node_error")
    assert error["node_id"] == "stuck" and error["error"]["code"] == "TIMEOUT_ERROR"
    assert result.status == "failed"  # a failed node under "continue"
    assert [e["node_id"] for e in events(result, "node_complete")] == ["first", "left", "right"]
    assert ("stuck", "end") not in [(name, kind) for name, kind, _ in recorder().events]
    # the loop went on on another thread than the stuck one
    assert threads[("node_error", "stuck")] != threads[("node_start", "stuck")]
    assert load_state(runs, result.run_id).graph.nodes["stuck"].status == "failed"
