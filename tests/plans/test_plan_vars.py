"""Plan vars: they may use each other (in any order); validate, dry run and run agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.plans.dsl.references import ReferenceError_
from keiri_agent.plans.dsl.scope import PlanVars
from keiri_agent.plans.engine import PlanEngine

PLAN = """\
apiVersion: v1
id: p
version: 0.1.0
vars: {title: "${vars.base}レポート", base: "月次", note: "x"}
graph:
  - id: t
    block: text.template
    in: {template: "{a} {b}", values: {a: "${vars.title}", b: "${vars.note}"}}
exports:
  - {from: t.text, as: out}
"""


@pytest.fixture
def engine(keiri_home: Path) -> PlanEngine:
    designs = keiri_home / "designs"
    designs.mkdir()
    (designs / "p.yaml").write_text(PLAN, encoding="utf-8")
    (designs / "cycle.yaml").write_text(
        PLAN.replace("id: p", "id: cycle").replace('base: "月次"', 'base: "${vars.title}!"'),
        encoding="utf-8",
    )
    return PlanEngine(Settings(provider="offline"))


def test_a_var_may_use_another_declared_after_it(engine: PlanEngine) -> None:
    plan = engine.load("p")
    assert engine.validate(plan).errors == []
    assert engine.dry_run(plan).ok
    result = engine.run(plan)
    assert result.status == "success", result.errors
    assert result.outputs["t"]["text"] == "月次レポート x"


def test_given_vars_are_values_and_not_resolved_again(engine: PlanEngine) -> None:
    plan = engine.load("p")
    given = {"note": "価格 ${price}"}
    assert engine.dry_run(plan, vars=given).ok
    result = engine.run(plan, vars=given)
    assert result.outputs["t"]["text"] == "月次レポート 価格 ${price}"


def test_vars_in_a_cycle_are_reported_everywhere(engine: PlanEngine) -> None:
    plan = engine.load("cycle")
    errors = engine.validate(plan).errors
    assert [e.code for e in errors] == ["VAR_CYCLE"]
    assert "title → base → title" in errors[0].message or "base → title → base" in (
        errors[0].message
    )
    assert not engine.dry_run(plan).ok
    with pytest.raises(ReferenceError_, match="循環しています"):
        PlanVars(plan.vars, {}, {}, {}).resolved()


def test_plan_vars_mapping_resolves_lazily_and_lists_every_name() -> None:
    plan_vars = PlanVars({"a": "${vars.b}-1", "b": "${env.X}"}, {"c": 3}, {"X": "x"}, {})
    assert list(plan_vars) == ["a", "b", "c"] and len(plan_vars) == 3
    assert plan_vars.resolved() == {"a": "x-1", "b": "x", "c": 3}


def test_a_plan_id_that_is_also_a_folder_name_loads_the_plan(
    engine: PlanEngine, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.errors import UserInputError
    from keiri_agent.plans.dsl.loader import load_plan_file

    monkeypatch.chdir(keiri_home)
    (keiri_home / "p").mkdir()  # a folder in the current directory named like the plan id
    assert engine.load("p").id == "p"
    with pytest.raises(UserInputError, match="Plan のファイルではありません") as caught:
        load_plan_file(keiri_home / "p")
    assert caught.value.code == "PLAN_NOT_FOUND"
