"""The plan runner: scheduling, conditions, pause/resume (also from a new process), rerun."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from runner_support import events, make_plan, make_runner, node, recorder, starts

from keiri_agent.errors import PlanValidationError, UserInputError
from keiri_agent.events import Event
from keiri_agent.plans.run.run_log import log_line
from keiri_agent.plans.run.run_state import StateEncodingError, load_state


def test_values_flow_through_aliases_and_empty_out_exposes_every_output(runs: Path) -> None:
    plan = make_plan(
        node("a", value={"n": 21}, out_={"value": "payload"}),
        node("b", block="rt.strict", number="${a.payload.n}"),
        node("c", value="total=${b.result}"),
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success", result.errors
    assert result.outputs == {
        "a": {"payload": {"n": 21}},
        "b": {"result": 42, "blob": None},
        "c": {"value": "total=42", "label": "c", "attempt": 1},
    }
    assert starts(result) == ["a", "b", "c"]
    assert result.errors == [] and result.waiting == []


def test_port_defaults_fill_missing_inputs(runs: Path) -> None:
    result = make_runner(runs).start(make_plan(node("a")))

    assert result.outputs["a"] == {"value": None, "label": "a", "attempt": 1}


def test_a_fast_branch_runs_its_downstream_before_a_slow_sibling_finishes(runs: Path) -> None:
    plan = make_plan(
        node("slow", sleep_ms=400, label="slow"),
        node("fast", sleep_ms=5, label="fast"),
        node("after_fast", value="${fast.value}", label="after_fast"),
        node("join", value=["${slow.value}", "${after_fast.value}"], label="join"),
        workers=4,
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success"
    rec = recorder()
    assert rec.time_of("after_fast", "start") < rec.time_of("slow", "end")
    assert rec.time_of("join", "start") >= rec.time_of("slow", "end")


def test_no_more_than_default_max_workers_blocks_run_at_once(runs: Path) -> None:
    nodes = [node(f"n{i}", sleep_ms=30, label=f"n{i}") for i in range(12)]

    result = make_runner(runs).start(make_plan(*nodes, workers=3))

    assert result.status == "success"
    assert recorder().max_active == 3


def test_a_false_when_skips_the_node_with_null_aliases_and_dependants_still_run(
    runs: Path,
) -> None:
    plan = make_plan(
        node("gate", value=0),
        node("gated", value="x", when_={"expr": "${gate.value} > 0"}, out_={"value": "v"}),
        node("after", value="${gated.v}"),
        node("inner", value="${gated.v.deep.path}"),
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success"
    assert result.outputs["gated"] == {"v": None}
    assert result.outputs["after"]["value"] is None
    assert result.outputs["inner"]["value"] is None
    (skipped,) = events(result, "node_skipped")
    assert skipped["node_id"] == "gated"
    assert skipped["reason"] == "when_condition_false"
    assert skipped["condition"] == "${gate.value} > 0"
    assert "gated" not in starts(result)


def test_comparison_when_runs_the_node_when_true(runs: Path) -> None:
    plan = make_plan(
        node("gate", value=5),
        node("gated", value="ran", when_={"left": "${gate.value}", "op": "gte", "right": 5}),
    )

    result = make_runner(runs).start(plan)

    assert result.outputs["gated"]["value"] == "ran"


def test_vars_resolve_env_and_config_and_caller_vars_override(runs: Path) -> None:
    plan = make_plan(
        node("a", value=["${vars.name}", "${vars.region}", "${vars.limit}"]),
        vars={"name": "${env.USER_NAME}", "region": "${config.region}", "limit": 1},
    )
    runner = make_runner(runs, env={"USER_NAME": "yamada"}, config={"region": "kanto"})

    result = runner.start(plan, vars={"limit": 5})

    assert result.outputs["a"]["value"] == ["yamada", "kanto", 5]
    logged = events(result, "plan_start")[0]["vars"]
    assert logged == {"name": "${env.USER_NAME}", "region": "${config.region}", "limit": 5}


def test_a_plan_that_cannot_run_is_rejected_before_it_starts(runs: Path) -> None:
    unknown = make_plan(node("a", block="rt.missing"))
    cycle = make_plan(node("a", value="${b.value}"), node("b", value="${a.value}"))

    with pytest.raises(PlanValidationError, match=r"rt\.missing"):
        make_runner(runs).start(unknown)
    with pytest.raises(PlanValidationError) as raised:
        make_runner(runs).start(cycle)
    assert raised.value.issues[0]["code"] == "CYCLE"
    assert not runs.exists()


def test_every_node_with_an_unknown_block_is_named(runs: Path) -> None:
    plan = make_plan(node("a", block="rt.missing"), node("b"), node("c", block="rt.missing"))

    with pytest.raises(PlanValidationError) as raised:
        make_runner(runs).start(plan)

    assert [issue["node_id"] for issue in raised.value.issues] == ["a", "c"]
    assert all("rt.missing" in issue["message"] for issue in raised.value.issues)


def test_a_bad_reference_is_named_by_its_node_and_field(runs: Path) -> None:
    plan = make_plan(node("a", value=1), node("b", value="${a.value"), node("c", value="x"))

    with pytest.raises(PlanValidationError) as raised:
        make_runner(runs).start(plan)

    [issue] = raised.value.issues
    assert issue["node_id"] == "b"
    assert issue["message"].startswith("b: in.value: ")


def _pause_plan() -> Any:
    return make_plan(
        node("prepare", value="draft", label="prepare"),
        node("ask", block="rt.ask", question="${prepare.value} OK?"),
        node("use", value="${ask.answer}", label="use"),
        node("independent", sleep_ms=50, value="side", label="independent"),
    )


def test_a_ui_block_without_answers_pauses_after_independent_branches_finish(
    runs: Path,
) -> None:
    result = make_runner(runs).start(_pause_plan())

    assert result.status == "paused"
    assert result.waiting == [
        {
            "node_id": "ask",
            "block": "rt.ask",
            "request": {"question": "draft OK?", "fields": ["answer"]},
        }
    ]
    assert set(result.outputs) == {"prepare", "independent"}
    assert events(result, "node_waiting")[0]["request"]["question"] == "draft OK?"
    (paused,) = events(result, "plan_paused")
    assert paused["waiting"] == ["ask"]
    assert load_state(runs, result.run_id).status == "paused"


def test_resume_with_answers_continues_without_rerunning_finished_nodes(runs: Path) -> None:
    runner = make_runner(runs)
    paused = runner.start(_pause_plan())

    result = runner.resume(paused.run_id, answers={"ask": {"answer": "yes"}})

    assert result.status == "success"
    assert result.run_id == paused.run_id
    assert result.outputs["use"]["value"] == "yes"
    assert recorder().counts["prepare"] == 1
    assert recorder().counts["independent"] == 1
    resumed = events(result, "plan_resumed")
    assert resumed[0]["mode"] == "resume"
    assert [e["status"] for e in events(result, "plan_complete")] == ["success"]


def test_answers_given_at_start_are_used_without_pausing(runs: Path) -> None:
    result = make_runner(runs).start(_pause_plan(), answers={"ask": {"answer": 7}})

    assert result.status == "success"
    assert result.outputs["use"]["value"] == 7


def test_resume_without_the_answer_pauses_again(runs: Path) -> None:
    runner = make_runner(runs)
    paused = runner.start(_pause_plan())

    again = runner.resume(paused.run_id, answers={})

    assert again.status == "paused"
    assert [w["node_id"] for w in again.waiting] == ["ask"]


def test_resume_in_a_new_process_uses_the_state_on_disk(runs: Path, tmp_path: Path) -> None:
    paused = make_runner(runs).start(_pause_plan())
    assert paused.status == "paused"
    script = tmp_path / "resume.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from pathlib import Path
            from runner_support import make_runner
            result = make_runner(Path({str(runs)!r})).resume(
                {paused.run_id!r}, answers={{"ask": {{"answer": "from another process"}}}}
            )
            print(json.dumps({{"status": result.status, "outputs": result.outputs}}))
            """
        )
    )

    completed = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )

    assert completed.returncode == 0, completed.stderr
    data = json.loads(completed.stdout.strip().splitlines()[-1])
    assert data["status"] == "success"
    assert data["outputs"]["use"]["value"] == "from another process"
    assert data["outputs"]["prepare"]["value"] == "draft"
    log = events(paused)
    assert [e["node_id"] for e in log if e["event"] == "node_start"].count("prepare") == 1
    assert log[-1]["event"] == "plan_complete" and log[-1]["status"] == "success"
    assert load_state(runs, paused.run_id).status == "success"


def test_resume_refuses_a_run_that_is_not_paused(runs: Path) -> None:
    runner = make_runner(runs)
    done = runner.start(make_plan(node("a")))

    with pytest.raises(UserInputError, match="再開するものがありません"):
        runner.resume(done.run_id, answers={})
    with pytest.raises(UserInputError, match=r"実行 .* が見つかりません"):
        runner.resume("run_doesnotexist", answers={})


def test_rerun_from_node_reruns_it_and_downstream_keeping_upstream_outputs(runs: Path) -> None:
    plan = make_plan(
        node("upstream", value=3, label="upstream"),
        node("flaky", value="${upstream.value}", fail_times=1, label="flaky"),
        node("downstream", value="${flaky.value}", label="downstream"),
        node("sibling", value="s", label="sibling"),
        workers=1,
    )
    runner = make_runner(runs)
    failed = runner.start(plan)
    assert failed.status == "failed"
    assert failed.errors[0]["details"]["node_id"] == "flaky"
    assert "downstream" not in failed.outputs

    result = runner.rerun_from_node(failed.run_id, "flaky")

    assert result.status == "success", result.errors
    assert result.outputs["downstream"]["value"] == 3
    assert recorder().counts == {"upstream": 1, "flaky": 2, "downstream": 1, "sibling": 1}
    assert events(result, "plan_resumed")[-1]["from_node"] == "flaky"


def test_rerun_from_a_finished_node_reruns_its_downstream_with_new_vars(runs: Path) -> None:
    plan = make_plan(
        node("a", value="${vars.x}", label="a"),
        node("b", value="${a.value}", label="b"),
        node("c", value="${vars.x}", label="c"),
        vars={"x": 1},
    )
    runner = make_runner(runs)
    first = runner.start(plan)

    result = runner.rerun_from_node(first.run_id, "a", vars={"x": 2})

    assert result.outputs["b"]["value"] == 2
    assert result.outputs["c"]["value"] == 1
    assert recorder().counts == {"a": 2, "b": 2, "c": 1}


def test_rerun_names_the_valid_nodes_when_the_node_is_unknown(runs: Path) -> None:
    runner = make_runner(runs)
    first = runner.start(make_plan(node("alpha")))

    with pytest.raises(UserInputError, match="'alpha' のことですか"):
        runner.rerun_from_node(first.run_id, "alpah")


def test_bytes_and_dates_survive_the_state_round_trip(runs: Path) -> None:
    runner = make_runner(runs)
    result = runner.start(make_plan(node("b", block="rt.strict", number=1, mode="bytes")))

    reloaded = runner.result(result.run_id)

    assert reloaded.outputs["b"]["blob"]["raw"] == b"\x00\xffPK"
    assert str(reloaded.outputs["b"]["blob"]["when"]) == "2025-01-31"
    raw = result.state_path.read_text() if result.state_path else ""
    assert '"__bytes__": "AP9QSw=="' in raw and '"__date__": "2025-01-31"' in raw


def test_vars_and_answers_the_state_cannot_store_are_refused(runs: Path) -> None:
    with pytest.raises(StateEncodingError, match="object"):
        make_runner(runs).start(make_plan(node("a")), vars={"x": object()})
    with pytest.raises(UserInputError, match="「項目: 値」の対応"):
        make_runner(runs).start(make_plan(node("a")), answers={"a": "yes"})


def test_cancellation_stops_running_blocks_and_unstarted_nodes(runs: Path) -> None:
    cancel = threading.Event()

    def on_event(event: Event) -> None:
        if event.kind == "node_start" and event.payload.get("node_id") == "long":
            cancel.set()

    plan = make_plan(
        node("long", sleep_ms=30_000, label="long"),
        node("after", value="${long.value}", label="after"),
    )

    result = make_runner(runs).start(plan, on_event=on_event, cancel_event=cancel)

    assert result.status == "cancelled"
    assert recorder().cancel_seen("long").is_set()
    assert "after" not in recorder().counts
    state = load_state(runs, result.run_id)
    assert state.graph.nodes["long"].status == "cancelled"
    assert state.graph.nodes["after"].status == "pending"
    assert events(result, "plan_complete")[-1]["status"] == "cancelled"


def test_a_cancelled_run_resumes_where_it_stopped(runs: Path) -> None:
    cancel = threading.Event()
    plan = make_plan(node("first", label="first"), node("second", value="${first.label}"))
    runner = make_runner(runs)
    stopped = runner.start(
        plan,
        on_event=lambda e: cancel.set() if e.kind == "node_start" else None,
        cancel_event=cancel,
    )
    assert stopped.status == "cancelled"
    assert "second" not in stopped.outputs

    result = runner.resume(stopped.run_id, answers={})

    assert result.status == "success"
    assert result.outputs["second"]["value"] == "first"


def test_on_event_receives_the_logged_events_in_order(runs: Path) -> None:
    seen: list[Event] = []

    result = make_runner(runs).start(make_plan(node("a"), node("b")), on_event=seen.append)

    assert [log_line(event) for event in seen] == events(result)


def test_event_numbers_increase_and_continue_across_pause_and_resume(runs: Path) -> None:
    runner = make_runner(runs)
    first: list[Event] = []
    second: list[Event] = []

    paused = runner.start(_pause_plan(), on_event=first.append)
    result = runner.resume(
        paused.run_id, answers={"ask": {"answer": "yes"}}, on_event=second.append
    )

    numbers = [event.seq for event in first + second]
    assert numbers == list(range(1, len(numbers) + 1))
    assert {(event.source, event.run_id) for event in first + second} == {("plan", paused.run_id)}
    assert first[-1].kind == "plan_paused" and second[0].kind == "plan_resumed"
    assert load_state(runs, result.run_id).last_seq == numbers[-1]
    assert [log_line(event) for event in first + second] == events(result)


def test_a_block_can_ask_again_when_the_answers_are_incomplete(runs: Path) -> None:
    runner = make_runner(runs)
    paused = runner.start(_pause_plan())

    again = runner.resume(paused.run_id, answers={"ask": {"comment": "no answer field"}})

    assert again.status == "paused"
    assert again.waiting[0]["request"] == {"question": "draft OK?", "missing": ["answer"]}
    done = runner.resume(paused.run_id, answers={"ask": {"answer": "now"}})
    assert done.outputs["use"]["value"] == "now"


def test_result_reads_the_saved_outcome_of_a_run(runs: Path) -> None:
    runner = make_runner(runs)
    paused = runner.start(_pause_plan())

    assert make_runner(runs).result(paused.run_id) == paused


def test_a_run_after_the_first_starts_no_thread(runs: Path, thread_starts: list[str]) -> None:
    # Starting a thread waits until it runs (≈ 1 ms, more on a busy machine): the
    # scheduler's loop, the coalesced progress saves and the log's late flushes run
    # on threads kept from earlier runs.
    plan = make_plan(
        *[node(f"n{i}", value=f"${{n{i - 1}.value}}" if i else 0) for i in range(300)],
        timeout_ms=10_000,
    )
    runner = make_runner(runs)
    first = runner.start(plan)
    assert first.status == "success", first.errors
    thread_starts.clear()
    for _ in range(3):
        result = runner.start(plan)
        assert result.status == "success", result.errors
        assert result.outputs["n299"]["value"] == 0
    assert thread_starts == []
