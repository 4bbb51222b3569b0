"""The plan runner's error policy (halt/continue/retry), timeouts and I/O contract checks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import events, make_plan, make_runner, node, recorder, starts

from keiri_agent.plans.run.run_state import load_state


def _only_error(result: Any) -> dict[str, Any]:
    assert len(result.errors) == 1, result.errors
    return result.errors[0]


def test_halt_stops_scheduling_waits_for_running_nodes_and_fails(runs: Path) -> None:
    plan = make_plan(
        node("bad", fail_times=9, label="bad"),
        node("running", sleep_ms=150, label="running"),
        node("after_bad", value="${bad.value}", label="after_bad"),
        node("after_running", value="${running.value}", label="after_running"),
        workers=2,
    )

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    error = _only_error(result)
    assert error["code"] == "API_ERROR"
    assert error["details"]["node_id"] == "bad"
    assert error["hint"] == "try again"
    assert "running" in result.outputs
    assert recorder().counts == {"bad": 1, "running": 1}
    state = load_state(runs, result.run_id)
    assert state.graph.nodes["after_running"].status == "pending"
    assert events(result, "plan_complete")[-1]["status"] == "failed"


def test_continue_gives_the_failed_node_null_aliases_and_runs_the_rest(runs: Path) -> None:
    plan = make_plan(
        node("bad", fail_times=9, label="bad", out_={"value": "v"}),
        node("uses_bad", value="${bad.v}", label="uses_bad"),
        node("other", value=1, label="other"),
        on_error="continue",
    )

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    assert _only_error(result)["details"]["node_id"] == "bad"
    assert result.outputs["bad"] == {"v": None}
    assert result.outputs["uses_bad"]["value"] is None
    assert result.outputs["other"]["value"] == 1


def test_retry_reruns_a_failing_block_until_it_succeeds(runs: Path) -> None:
    plan = make_plan(node("flaky", fail_times=2, label="flaky"), on_error="retry", retries=2)

    result = make_runner(runs).start(plan)

    assert result.status == "success"
    assert result.outputs["flaky"]["attempt"] == 3
    assert recorder().counts["flaky"] == 3
    retries = [(e["retry"], e["will_retry"]) for e in events(result, "node_error")]
    assert retries == [(0, True), (1, True)]
    assert [e["attempt"] for e in events(result, "node_start")] == [1, 2, 3]


def test_retry_gives_up_after_policy_retries_and_halts(runs: Path) -> None:
    plan = make_plan(
        node("flaky", fail_times=9, label="flaky"),
        node("after", value="${flaky.value}", label="after"),
        on_error="retry",
        retries=2,
    )

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    assert recorder().counts == {"flaky": 3}
    assert [e["will_retry"] for e in events(result, "node_error")] == [True, True, False]
    assert load_state(runs, result.run_id).graph.nodes["flaky"].attempts == 3


def test_input_errors_are_not_retried(runs: Path) -> None:
    plan = make_plan(node("s", block="rt.strict", number="three"), on_error="retry", retries=3)

    result = make_runner(runs).start(plan)

    assert _only_error(result)["code"] == "INPUT_VALIDATION_FAILED"
    assert len(events(result, "node_error")) == 1


def test_a_timed_out_attempt_fails_without_waiting_and_sees_its_cancel_event(
    runs: Path,
) -> None:
    plan = make_plan(
        node("sleepy", sleep_ms=5000, cooperative=False, label="sleepy"), timeout_ms=100
    )
    began = time.monotonic()

    result = make_runner(runs).start(plan)

    assert time.monotonic() - began < 3.0  # the 5 s attempt was abandoned, not awaited
    error = _only_error(result)
    assert error["code"] == "TIMEOUT_ERROR"
    assert error["details"] == {"node_id": "sleepy", "path": "sleepy", "timeout_ms": 100}
    assert recorder().cancel_seen("sleepy").wait(10)


def test_a_cooperative_block_stops_when_its_attempt_times_out(runs: Path) -> None:
    plan = make_plan(node("coop", sleep_ms=30_000, label="coop"), timeout_ms=50)

    result = make_runner(runs).start(plan)

    assert _only_error(result)["code"] == "TIMEOUT_ERROR"
    assert recorder().cancel_seen("coop").wait(5)


def test_timeouts_are_per_attempt_and_retried(runs: Path) -> None:
    plan = make_plan(
        node("sleepy", sleep_ms=2000, label="sleepy"), on_error="retry", retries=1, timeout_ms=100
    )

    result = make_runner(runs).start(plan)

    assert recorder().counts["sleepy"] == 2
    assert [e["will_retry"] for e in events(result, "node_error")] == [True, False]
    assert _only_error(result)["code"] == "TIMEOUT_ERROR"


def test_an_unexpected_exception_becomes_block_failed_with_type_and_message(runs: Path) -> None:
    result = make_runner(runs).start(make_plan(node("crashy", crash=True, label="crashy")))

    error = _only_error(result)
    assert error["code"] == "BLOCK_FAILED"
    assert "RuntimeError: boom in crashy" in error["message"]
    assert error["recoverable"] is False
    assert error["details"]["exception_type"] == "RuntimeError"
    assert "boom in crashy" in error["details"]["traceback"]


@pytest.mark.parametrize(
    ("inputs", "field", "fragment"),
    [
        ({}, "number", "必須の入力 'number' が指定されていません"),
        (
            {"number": "3"},
            "number",
            "入力 'number' の値が正しくありません: $: '3' は整数ではありません",
        ),
        ({"number": 3, "mode": "shout"}, "mode", "入力 'mode' の値が正しくありません"),
        ({"number": 3, "colour": "red"}, "colour", "入力 'colour' はこのブロックにありません"),
    ],
)
def test_inputs_are_checked_against_the_block_contract(
    runs: Path, inputs: dict[str, Any], field: str, fragment: str
) -> None:
    result = make_runner(runs).start(make_plan(node("s", block="rt.strict", **inputs)))

    error = _only_error(result)
    assert error["code"] == "INPUT_VALIDATION_FAILED"
    assert error["details"]["field"] == field
    assert fragment in error["message"]
    assert error["input_snapshot"] == {"mode": "ok", **inputs}


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("bad_output", "出力 'result' の値が仕様に合いません"),
        ("missing_output", "出力 'result' が返されていません"),
        ("extra_output", "仕様にない出力 'surprise'"),
        ("unstorable", "実行の記録に保存できません"),
        ("not_a_mapping", "出力の対応ではなく"),
    ],
)
def test_outputs_are_checked_against_the_block_contract(
    runs: Path, mode: str, fragment: str
) -> None:
    result = make_runner(runs).start(make_plan(node("s", block="rt.strict", number=1, mode=mode)))

    error = _only_error(result)
    assert error["code"] == "OUTPUT_SCHEMA_MISMATCH"
    assert fragment in error["message"]


def test_a_reference_that_cannot_resolve_at_run_time_is_dependency_not_found(
    runs: Path,
) -> None:
    plan = make_plan(node("a"), node("b", value="${a.missing_alias}"))

    result = make_runner(runs).start(plan)

    error = _only_error(result)
    assert error["code"] == "DEPENDENCY_NOT_FOUND"
    assert error["details"]["node_id"] == "b"
    assert "missing_alias" in error["message"]


def test_node_error_events_carry_the_error_and_retry_count(runs: Path) -> None:
    result = make_runner(runs).start(make_plan(node("bad", fail_times=1, label="bad")))

    (event,) = events(result, "node_error")
    assert event["node_id"] == "bad"
    assert event["error"]["code"] == "API_ERROR"
    assert event["retry"] == 0 and event["will_retry"] is False
    assert starts(result) == ["bad"]
