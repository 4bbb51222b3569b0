"""What an invocation hands back (``result_of``), read off the state in one pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner_support import make_plan, node

from keiri_agent.plans.run.outputs import collect_errors, collect_waiting, result_of
from keiri_agent.plans.run.run_state import (
    FINISHED,
    GraphState,
    LoopState,
    NodeState,
    RunState,
    SubflowState,
)


def _error(name: str) -> dict[str, Any]:
    return {"code": "BLOCK_FAILED", "message": name}


def _state() -> RunState:
    inner_failed = GraphState({"x": NodeState("failed", error=_error("inner"))})
    inner_waiting = GraphState({"ask": NodeState("waiting", block="ui.confirm", request={"q": 1})})
    loop = LoopState("foreach", {1: inner_waiting, 0: inner_failed}, {0: "failed", 1: "running"})
    sub = SubflowState("run_sub", {}, {}, GraphState({"s": NodeState("failed", error=_error("s"))}))
    graph = GraphState(
        {
            "ok": NodeState("success", outputs={"v": 1}),
            "skip": NodeState("skipped", outputs={"v": None}),
            "bad": NodeState("failed", outputs={"v": None}, error=_error("bad")),
            "wait": NodeState("waiting", block="ui.confirm", request={"q": 2}),
            "each": NodeState("running", loop=loop),
            "call": NodeState("success", outputs={"r": 2}, subflow=sub),
            "todo": NodeState(),
        }
    )
    return RunState(
        run_id="run_0123456789ab", plan_id="p", plan={}, log_path="p/x.jsonl", graph=graph
    )


def test_the_result_lists_what_the_separate_collections_list(tmp_path: Path) -> None:
    state = _state()
    ids = ["todo", "each", "call", "wait", "bad", "skip", "ok", "absent"]
    plan = make_plan(*(node(node_id, value=1) for node_id in ids))

    result = result_of(state, plan, "success", tmp_path)

    assert result.status == "failed"
    assert result.errors == collect_errors(state.graph)
    assert [error["message"] for error in result.errors] == ["bad", "inner", "s"]
    assert result.waiting == collect_waiting(state.graph)
    assert result.waiting == [
        {"node_id": "wait", "block": "ui.confirm", "request": {"q": 2}},
        {"node_id": "each[1]/ask", "block": "ui.confirm", "request": {"q": 1}},
    ]
    assert list(result.outputs) == ["call", "bad", "skip", "ok"]
    assert result.outputs["call"] == {"r": 2}
    assert result.unfinished == [
        {"node_id": "todo", "iterations_done": None},
        {"node_id": "each", "iterations_done": 0},
        {"node_id": "wait", "iterations_done": None},
        {"node_id": "absent", "iterations_done": None},
    ]
    assert all(state.graph.nodes[n].status not in FINISHED for n in ("todo", "each", "wait"))
