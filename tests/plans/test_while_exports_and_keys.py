"""while-loop export names vs other names, and all-digit reference keys with leading zeros."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import pytest
from runner_support import catalog, make_plan, make_runner, node

from keiri_agent.plans.check.validator import PlanValidator, ValidationReport
from keiri_agent.plans.dsl.references import ReferenceError_, Scope, parse_reference


def validate(plan: Any) -> ValidationReport:
    return PlanValidator(catalog()).validate(plan)


def conflicts(report: ValidationReport) -> list[tuple[str | None, str | None]]:
    return [(i.node_id, i.path) for i in report.issues if i.code == "LOOP_VAR_CONFLICT"]


def while_loop(
    graph: list[dict[str, Any]],
    exports: list[dict[str, str]],
    condition: str = "${n} == null",
    loop_id: str = "again",
    max_iterations: int = 2,
) -> dict[str, Any]:
    return {
        "id": loop_id,
        "type": "loop",
        "while": {"condition": {"expr": condition}, "max_iterations": max_iterations},
        "body": {"plan": {"graph": graph, "exports": exports}},
    }


# -- while exports -------------------------------------------------------------------


def _shadowing_body_node_plan() -> Any:
    return make_plan(
        node("seed", value=1),
        while_loop(
            [node("total", value="${seed.value}"), node("show", value="${total.value}")],
            [{"from": "total.value", "as": "total"}, {"from": "show.value", "as": "n"}],
        ),
        exports=[{"from": "again.n", "as": "shown"}],
    )


def test_a_body_node_id_wins_over_a_previous_export_of_the_same_name(runs: Path) -> None:
    result = make_runner(runs).start(_shadowing_body_node_plan())

    assert result.status == "success", result.errors
    assert result.outputs["again"] == {"total": 1, "n": 1, "iterations": 1}


def test_an_export_named_like_a_body_node_is_a_loop_var_conflict() -> None:
    report = validate(_shadowing_body_node_plan())

    assert conflicts(report) == [("again", "graph[1].body.plan.exports[0].as")]
    issue = next(i for i in report.issues if i.code == "LOOP_VAR_CONFLICT")
    assert "'total'" in issue.message and "名前 (as) を変えて" in (issue.hint or "")


def test_an_export_named_vars_does_not_hide_vars(runs: Path) -> None:
    plan = make_plan(
        while_loop(
            [node("s", value="${vars.k}")],
            [{"from": "s.value", "as": "vars"}, {"from": "s.value", "as": "n"}],
        ),
        vars={"k": 7},
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success", result.errors
    assert result.outputs["again"]["n"] == 7
    assert conflicts(validate(plan)) == [("again", "graph[0].body.plan.exports[0].as")]


def test_an_export_named_like_a_top_level_node_is_a_loop_var_conflict() -> None:
    plan = make_plan(
        node("total", value=5),
        while_loop(
            [node("s", value="${total.value}")],
            [{"from": "s.value", "as": "total"}, {"from": "s.value", "as": "n"}],
        ),
        node("after", value="${again.n}"),
    )

    assert conflicts(validate(plan)) == [("again", "graph[1].body.plan.exports[0].as")]


def test_an_export_named_like_an_outer_loop_variable_is_a_loop_var_conflict() -> None:
    inner = while_loop(
        [node("s", value="${row}")],
        [{"from": "s.value", "as": "row"}, {"from": "s.value", "as": "n"}],
        loop_id="inner",
    )
    outer = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": [1, 2], "itemVar": "row"},
        "body": {"plan": {"graph": [inner], "exports": [{"from": "inner.n", "as": "n"}]}},
        "out": {"collect": "n"},
    }

    report = validate(make_plan(outer, exports=[{"from": "each.n", "as": "n"}]))

    assert conflicts(report) == [("inner", "graph[0].body.plan.graph[0].body.plan.exports[0].as")]


def _carry_plan() -> Any:
    """The body reads the previous iteration's export ``text`` (null the first time)."""
    return make_plan(
        while_loop(
            [node("step", value="${text}x")],
            [{"from": "step.value", "as": "text"}],
            condition="${text} != 'xxx'",
            max_iterations=10,
        ),
        exports=[{"from": "again.text", "as": "text"}],
    )


def test_the_body_reads_the_previous_iteration_export_by_name(runs: Path) -> None:
    result = make_runner(runs).start(_carry_plan())

    assert result.status == "success", result.errors
    assert result.outputs["again"] == {"text": "xxx", "iterations": 3}


def test_the_validator_accepts_a_body_reference_to_an_export_name() -> None:
    report = validate(_carry_plan())

    assert [i.code for i in report.errors] == []


# -- leading-zero keys ---------------------------------------------------------------


def lookup(text: str, value: Any) -> Any:
    scope = Scope(nodes={"a": {"value": value}}, vars={}, env={}, config={}, locals={})
    return scope.lookup(parse_reference(text))


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ("a.value.0101", {"0101": "cash", "101": "other"}, "cash"),
        ("a.value.01", {"01": "Jan", "1": "one"}, "Jan"),
        ("a.value['0101']", {"0101": "cash"}, "cash"),
        ("a.value.2024", {"2024": "year"}, "year"),
        ("a.value.2024", {2024: "int key"}, "int key"),
        ("a.value.0", {"0": "zero"}, "zero"),
        ("a.value.0", ["first", "second"], "first"),
        ("a.value.01", ["first", "second"], "second"),
        ("a.value[1]", ["first", "second"], "second"),
        ("a.value.items.0.id", {"items": [{"id": "007"}]}, "007"),
    ],
)
def test_digit_segments(text: str, value: Any, expected: Any) -> None:
    assert lookup(text, value) == expected


def test_a_leading_zero_key_never_falls_back_to_the_number() -> None:
    with pytest.raises(ReferenceError_) as caught:
        lookup("a.value.0101", {"101": "other", 101: "int"})

    assert "'0101'" in caught.value.message


def test_digit_segments_compare_as_ints_and_keep_their_text() -> None:
    reference = parse_reference("a.items.0.code.0101")

    assert reference.path == ("items", 0, "code", 101)
    assert str(reference.path[3]) == "0101"
    for clone in (copy.deepcopy(reference), pickle.loads(pickle.dumps(reference))):
        assert clone == reference and str(clone.path[3]) == "0101"


def test_a_leading_zero_key_resolves_in_a_run(runs: Path) -> None:
    plan = make_plan(
        node("a", value={"0101": "cash", "01": "January"}),
        node("b", value="${a.value.0101}/${a.value.01}"),
        exports=[{"from": "b.value", "as": "text"}],
    )

    result = make_runner(runs).start(plan)

    assert result.status == "success", result.errors
    assert result.outputs["b"]["value"] == "cash/January"


def test_the_dry_run_accepts_a_body_reference_to_an_export_name() -> None:
    from keiri_agent.plans.check.dry_run import dry_run

    report = dry_run(_carry_plan(), catalog(), env={})

    assert not [p for p in report.problems if p.code == "UNKNOWN_REFERENCE"], report.problems
    assert all(p.code != "UNKNOWN_REFERENCE" for record in report.nodes for p in record.problems), [
        (r.node_id, r.problems) for r in report.nodes
    ]


def test_the_dry_run_lets_a_body_node_win_over_an_export_in_the_while_condition() -> None:
    from keiri_agent.plans.check.dry_run import dry_run

    total = {"id": "total", "block": "text.template", "in": {"template": "x"}}
    plan = make_plan(
        while_loop([total], [{"from": "total.text", "as": "total"}], "${total.text} == null"),
        exports=[{"from": "again.total", "as": "shown"}],
    )

    report = dry_run(plan, catalog(), env={})
    (loop,) = [record for record in report.nodes if record.node_id == "again"]

    # as the runner: ${total} in the condition is the body node, not the export's text
    assert loop.problems == [], loop.problems
    assert loop.condition is False
