"""The block step's per-node preparation (``block_step._Prepared``, once per invocation).

Resolution and checks are worked out on a node's first attempt and reused by its later
attempts (loop iterations, retries): values must still be resolved per attempt and
errors must still be those of the full checks.
"""

from __future__ import annotations

from pathlib import Path

from runner_support import make_plan, make_runner, node
from test_runner_loops import foreach


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
