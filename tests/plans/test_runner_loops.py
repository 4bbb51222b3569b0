"""The plan runner's loops (foreach/while) and subflows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner_support import events, make_plan, make_runner, node, recorder

from keiri_agent.plans.dsl.models import Plan


def foreach(
    node_id: str,
    items: Any,
    body: list[dict[str, Any]],
    exports: list[dict[str, str]],
    collect: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """A foreach loop node."""
    return {
        "id": node_id,
        "type": "loop",
        "foreach": {"input": items, **options},
        "body": {"plan": {"graph": body, "exports": exports}},
        "out": {"collect": collect} if collect else {},
    }


def test_foreach_collects_results_in_input_order_within_max_concurrency(runs: Path) -> None:
    items = [{"name": f"f{i}", "ms": 80 - i * 10} for i in range(8)]
    plan = make_plan(
        node("files", value=items),
        foreach(
            "each",
            "${files.value}",
            [node("work", value="${file.name}#${idx}", sleep_ms="${file.ms}", label="w${idx}")],
            [{"from": "work.value", "as": "result"}],
            collect="result",
            itemVar="file",
            indexVar="idx",
            max_concurrency=3,
        ),
        node("after", value="${each.result}"),
        workers=8,
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success", result.errors
    expected = [f"f{i}#{i}" for i in range(8)]
    assert result.outputs["each"] == {"result": expected}
    assert result.outputs["after"]["value"] == expected
    assert recorder().max_active == 3
    iterations = events(result, "loop_iteration")
    assert sorted(e["iteration"] for e in iterations) == list(range(8))
    assert iterations[0]["item"] == items[0]
    body_starts = [e["node_id"] for e in events(result, "node_start") if "/" in e["node_id"]]
    assert sorted(body_starts) == sorted(f"each[{i}]/work" for i in range(8))


def test_per_node_caps_the_loop_body_concurrency(runs: Path) -> None:
    plan = make_plan(
        foreach(
            "each",
            list(range(6)),
            [node("work", sleep_ms=30, label="w${item}")],
            [],
            max_concurrency=5,
        ),
        per_node={"each": 2},
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success"
    assert result.outputs["each"] == {}
    assert recorder().max_active == 2


def test_foreach_over_something_that_is_not_a_list_fails_input_validation(runs: Path) -> None:
    plan = make_plan(
        node("thing", value={"a": 1}),
        foreach("each", "${thing.value}", [node("work")], []),
    )

    result = make_runner(runs).start(plan)

    (error,) = result.errors
    assert error["code"] == "INPUT_VALIDATION_FAILED"
    assert error["details"]["field"] == "foreach.input"
    assert error["details"]["node_id"] == "each"


ITEMS = [{"n": 0, "fail": 0}, {"n": 1, "fail": 9}, {"n": 2, "fail": 0}]
FAIL_SECOND = node("work", value="${item.n}", fail_times="${item.fail}", label="w${item.n}")


def test_a_failure_inside_foreach_fails_the_loop_naming_the_iteration(runs: Path) -> None:
    plan = make_plan(
        foreach(
            "each",
            ITEMS,
            [FAIL_SECOND],
            [{"from": "work.value", "as": "v"}],
            collect="v",
        )
    )

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    (error,) = result.errors
    assert error["code"] == "API_ERROR"
    assert error["details"]["node_id"] == "each"
    assert error["details"]["iteration"] == 1
    assert error["details"]["failed_path"] == "each[1]/work"
    assert error["details"]["error"]["details"]["path"] == "each[1]/work"


def test_continue_inside_a_loop_collects_none_and_reports_the_error(runs: Path) -> None:
    plan = make_plan(
        foreach(
            "each",
            ITEMS,
            [FAIL_SECOND],
            [{"from": "work.value", "as": "v"}],
            collect="v",
        ),
        on_error="continue",
    )

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    assert result.outputs["each"] == {"v": [0, None, 2]}
    (error,) = result.errors
    assert error["details"]["path"] == "each[1]/work"
    assert error["details"]["node_id"] == "each"


def _counter_loop(condition: str, max_iterations: int) -> dict[str, Any]:
    return {
        "id": "again",
        "type": "loop",
        "while": {"condition": {"expr": condition}, "max_iterations": max_iterations},
        "body": {
            "plan": {
                "graph": [node("step", label="step")],
                "exports": [{"from": "step.attempt", "as": "n"}],
            }
        },
    }


def test_while_evaluates_the_condition_with_the_previous_iteration_visible(runs: Path) -> None:
    by_node = make_runner(runs).start(
        make_plan(_counter_loop("${step.attempt} == null or ${step.attempt} < 3", 10))
    )
    recorder().reset()
    by_export = make_runner(runs).start(make_plan(_counter_loop("${n} != 2", 10)))

    assert by_node.outputs["again"] == {"n": 3, "iterations": 3}
    assert by_export.outputs["again"] == {"n": 2, "iterations": 2}
    assert [e["iteration"] for e in events(by_node, "loop_iteration")] == [0, 1, 2]


def test_while_stops_at_max_iterations(runs: Path) -> None:
    result = make_runner(runs).start(make_plan(_counter_loop("true", 4)))

    assert result.status == "success"
    assert result.outputs["again"] == {"n": 4, "iterations": 4}
    assert recorder().counts["step"] == 4


def test_a_ui_block_inside_foreach_pauses_each_iteration_and_resumes(runs: Path) -> None:
    plan = make_plan(
        foreach(
            "each",
            ["a", "b"],
            [node("ask", block="rt.ask", question="${item}?")],
            [{"from": "ask.answer", "as": "answer"}],
            collect="answer",
            max_concurrency=2,
        )
    )
    runner = make_runner(runs)

    paused = runner.start(plan)

    assert paused.status == "paused"
    assert [(w["node_id"], w["request"]["question"]) for w in paused.waiting] == [
        ("each[0]/ask", "a?"),
        ("each[1]/ask", "b?"),
    ]
    half = runner.resume(paused.run_id, answers={"each[0]/ask": {"answer": 1}})
    assert half.status == "paused"
    assert [w["node_id"] for w in half.waiting] == ["each[1]/ask"]
    done = runner.resume(paused.run_id, answers={"each[1]/ask": {"answer": 2}})
    assert done.status == "success"
    assert done.outputs["each"] == {"answer": [1, 2]}
    assert recorder().counts == {"ask:each[0]/ask": 1, "ask:each[1]/ask": 1}


def test_a_ui_block_inside_while_asks_again_each_iteration(runs: Path) -> None:
    loop = {
        "id": "review",
        "type": "loop",
        "while": {"condition": {"expr": "${approval.answer} != true"}, "max_iterations": 3},
        "body": {"plan": {"graph": [node("approval", block="rt.ask")], "exports": []}},
    }
    runner = make_runner(runs)

    first = runner.start(make_plan(loop))
    second = runner.resume(first.run_id, answers={"review[0]/approval": {"answer": False}})
    done = runner.resume(first.run_id, answers={"review[1]/approval": {"answer": True}})

    assert [w["node_id"] for w in first.waiting] == ["review[0]/approval"]
    assert [w["node_id"] for w in second.waiting] == ["review[1]/approval"]
    assert done.status == "success"
    assert done.outputs["review"] == {"iterations": 2}


SUB = Plan.model_validate(
    {
        "apiVersion": "v1",
        "id": "common/check",
        "version": "1.0.0",
        "vars": {"data": "default", "threshold": 5},
        "graph": [node("inner", value=["${vars.data}", "${vars.threshold}"], label="inner")],
        "exports": [{"from": "inner.value", "as": "checked"}],
    }
)


def _subflow(inputs: dict[str, Any], exports: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "id": "validate",
        "type": "subflow",
        "call": {"plan_id": "common/check", "inputs": inputs},
        "out": {"exports": exports if exports is not None else [{"from": "checked", "as": "ok"}]},
    }


def test_subflow_runs_with_its_own_vars_overridden_by_inputs_and_maps_exports(
    runs: Path,
) -> None:
    plan = make_plan(
        node("source", value="from parent"),
        _subflow({"data": "${source.value}"}),
        node("after", value="${validate.ok}"),
    )
    loaded: list[str] = []

    def loader(plan_id: str) -> Plan:
        loaded.append(plan_id)
        return SUB

    result = make_runner(runs, plan_loader=loader).start(plan)

    assert result.status == "success", result.errors
    assert result.outputs["validate"] == {"ok": ["from parent", 5]}
    assert result.outputs["after"]["value"] == ["from parent", 5]
    assert loaded == ["common/check"]
    sub_starts = [e for e in events(result, "plan_start") if e["plan_id"] == "common/check"]
    assert sub_starts[0]["run_id"] == f"{result.run_id}.sub#1"
    assert sub_starts[0]["parent_run_id"] == result.run_id
    inner = [e for e in events(result, "node_complete") if e["node_id"] == "validate/inner"]
    assert inner[0]["run_id"] == f"{result.run_id}.sub#1"


def test_subflow_exports_every_value_when_out_exports_is_empty(runs: Path) -> None:
    plan = make_plan(_subflow({}, exports=[]))

    result = make_runner(runs, plan_loader=lambda _: SUB).start(plan)

    assert result.outputs["validate"] == {"checked": ["default", 5]}


def test_parent_vars_are_not_visible_inside_a_subflow(runs: Path) -> None:
    sub = Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "common/check",
            "version": "1.0.0",
            "graph": [node("inner", value="${vars.parent_only}")],
        }
    )
    plan = make_plan(_subflow({}, exports=[]), vars={"parent_only": "secret"})

    result = make_runner(runs, plan_loader=lambda _: sub).start(plan)

    assert result.status == "failed"
    (error,) = result.errors
    assert error["code"] == "SUBFLOW_FAILED"
    assert error["details"]["node_id"] == "validate"
    assert error["details"]["error"]["code"] == "DEPENDENCY_NOT_FOUND"
    assert error["details"]["failed_path"] == "validate/inner"


def test_a_failure_inside_a_subflow_propagates_as_subflow_failed(runs: Path) -> None:
    sub = Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "common/check",
            "version": "1.0.0",
            "graph": [node("inner", fail_times=9, error_code="PERMISSION_DENIED", label="inner")],
        }
    )
    plan = make_plan(_subflow({}, exports=[]), node("after", value="${validate.x}"))

    result = make_runner(runs, plan_loader=lambda _: sub).start(plan)

    (error,) = result.errors
    assert error["code"] == "SUBFLOW_FAILED"
    assert error["details"]["error"]["code"] == "PERMISSION_DENIED"
    assert error["details"]["subflow_run_id"] == f"{result.run_id}.sub#1"
    assert "after" not in result.outputs


def test_a_subflow_that_cannot_be_loaded_fails_the_node(runs: Path) -> None:
    def loader(plan_id: str) -> Plan:
        raise FileNotFoundError(plan_id)

    result = make_runner(runs, plan_loader=loader).start(make_plan(_subflow({})))

    (error,) = result.errors
    assert error["code"] == "SUBFLOW_FAILED"
    assert "FileNotFoundError" in error["message"]


def test_a_paused_subflow_resumes_inside_the_nested_run(runs: Path) -> None:
    sub = Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "common/check",
            "version": "1.0.0",
            "graph": [node("ask", block="rt.ask", question="${vars.q}")],
            "exports": [{"from": "ask.answer", "as": "checked"}],
        }
    )
    runner = make_runner(runs, plan_loader=lambda _: sub)
    paused = runner.start(make_plan(_subflow({"q": "ok?"})))

    done = runner.resume(paused.run_id, answers={"validate/ask": {"answer": "fine"}})

    assert paused.waiting[0]["node_id"] == "validate/ask"
    assert paused.waiting[0]["request"]["question"] == "ok?"
    assert done.status == "success"
    assert done.outputs["validate"] == {"ok": "fine"}


def test_a_halting_subflow_does_not_halt_a_parent_that_continues(runs: Path) -> None:
    sub = Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "common/check",
            "version": "1.0.0",
            "policy": {"on_error": "halt"},
            "graph": [foreach("inner", [1], [node("work", fail_times=9, label="inner")], [])],
        }
    )
    plan = make_plan(
        _subflow({}, exports=[{"from": "checked", "as": "ok"}]),
        node("after", value="${validate.ok}", label="after"),
        on_error="continue",
    )

    result = make_runner(runs, plan_loader=lambda _: sub).start(plan)

    assert result.status == "failed"
    assert [error["code"] for error in result.errors] == ["SUBFLOW_FAILED"]
    assert result.outputs["validate"] == {"ok": None}
    assert result.outputs["after"]["value"] is None


def test_a_failed_iteration_stops_the_loop_from_starting_more(runs: Path) -> None:
    items = [{"n": 0, "fail": 9, "ms": 0}] + [{"n": i, "fail": 0, "ms": 60} for i in range(1, 8)]
    body = node("work", value="${item.n}", fail_times="${item.fail}", sleep_ms="${item.ms}")
    body["in"]["label"] = "w${item.n}"
    plan = make_plan(foreach("each", items, [body], [], max_concurrency=2))

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    assert result.errors[0]["details"]["iteration"] == 0
    assert set(recorder().counts) <= {"w0", "w1", "w2"}


def test_per_node_caps_a_body_node_across_iterations(runs: Path) -> None:
    body = [node("work", sleep_ms=30, label="w${item}")]
    plan = make_plan(
        foreach("each", list(range(8)), body, [], max_concurrency=6), per_node={"work": 2}
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success"
    assert recorder().max_active == 2


def test_nested_loops_name_their_nodes_by_path(runs: Path) -> None:
    inner = foreach(
        "inner",
        "${row}",
        [node("cell", value="${x}")],
        [{"from": "cell.value", "as": "v"}],
        collect="v",
        itemVar="x",
    )
    plan = make_plan(
        foreach(
            "outer",
            [[1, 2], [3]],
            [inner],
            [{"from": "inner.v", "as": "row_values"}],
            collect="row_values",
            itemVar="row",
        )
    )

    result = make_runner(runs).start(plan)

    assert result.outputs["outer"] == {"row_values": [[1, 2], [3]]}
    paths = {e["node_id"] for e in events(result, "node_complete")}
    assert {"outer[0]/inner[1]/cell", "outer[1]/inner[0]/cell", "outer"} <= paths


def test_rerun_of_a_loop_node_runs_every_iteration_again(runs: Path) -> None:
    plan = make_plan(
        foreach("each", [1, 2], [node("work", value="${item}", label="w${item}")], []),
        node("after", value="${each}", label="after"),
    )
    runner = make_runner(runs)
    first = runner.start(plan)

    result = runner.rerun_from_node(first.run_id, "each")

    assert result.status == "success"
    assert recorder().counts == {"w1": 2, "w2": 2, "after": 2}
