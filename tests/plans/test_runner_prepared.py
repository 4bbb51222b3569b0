"""The block step's per-node preparation (``block_step._Prepared``) and ``LazyEvent``.

Resolution and checks are worked out on a node's first attempt and reused by its later
attempts (loop iterations, retries): values must still be resolved per attempt and
errors must still be those of the full checks.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest
from runner_support import make_plan, make_runner, node
from test_runner_loops import foreach

from keiri_agent.plans.run.scheduler import LazyEvent


def test_lazy_event_behaves_like_an_event_across_threads() -> None:
    event = LazyEvent()
    assert isinstance(event, threading.Event)
    assert not event.is_set()
    assert event.wait(0.01) is False
    setter = threading.Thread(target=lambda: (time.sleep(0.05), event.set()))
    setter.start()
    assert event.wait(5) is True
    setter.join()
    assert event.is_set()
    event.clear()
    assert not event.is_set()


def test_each_iteration_resolves_its_own_values_from_one_prepared_node(runs: Path) -> None:
    plan = make_plan(
        foreach(
            "each",
            [10, 20, 30],
            [
                node(
                    "work", value={"n": "${item}", "i": "${idx}", "fixed": [1, "a"], "t": "x${idx}"}
                )
            ],
            [{"from": "work.value", "as": "v"}],
            collect="v",
            indexVar="idx",
        ),
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success", result.errors
    assert result.outputs["each"]["v"] == [
        {"n": 10, "i": 0, "fixed": [1, "a"], "t": "x0"},
        {"n": 20, "i": 1, "fixed": [1, "a"], "t": "x1"},
        {"n": 30, "i": 2, "fixed": [1, "a"], "t": "x2"},
    ]
    values = result.outputs["each"]["v"]
    assert values[0]["fixed"] is not values[1]["fixed"]  # containers rebuilt per attempt


def test_wrong_input_names_fail_with_the_full_checks_error(runs: Path) -> None:
    plan = make_plan(
        foreach(
            "each", [1, 2], [node("work", nope="${item}")], [{"from": "work.value", "as": "v"}]
        ),
    )

    result = make_runner(runs).start(plan)

    assert result.status == "failed"
    error = result.errors[0]
    assert error["code"] == "INPUT_VALIDATION_FAILED"
    assert "入力 'nope' はこのブロックにありません" in error["message"]
    assert error["details"]["error"]["details"]["field"] == "nope"


def test_a_plan_run_again_reuses_its_prepared_nodes_unless_the_spec_differs(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.plans.run import block_step

    plan = make_plan(node("a", value=1), node("b", value="${a.value}"))
    runner = make_runner(runs)
    first = runner.start(plan)
    prepared = block_step._shared[id(plan.graph[1])]
    second = runner.start(plan)

    assert first.status == second.status == "success"
    assert second.outputs["b"]["value"] == first.outputs["b"]["value"] == 1
    assert block_step._shared[id(plan.graph[1])] is prepared  # the same spec object
    other = make_runner(runs)  # a catalog whose rt.work is another spec object
    resolve = other.catalog.resolve
    monkeypatch.setattr(
        other.catalog, "resolve", lambda reference: dataclasses.replace(resolve(reference))
    )
    third = other.start(plan)
    assert third.status == "success"
    again = block_step._shared[id(plan.graph[1])]
    assert again is not prepared
    assert again.ports.spec is not prepared.ports.spec
