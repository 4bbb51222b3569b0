"""A re-run of a settled Plan run through the run service (``PlanRuns.rerun``): the same
run queued again from a node (its state made ready by ``PlanEngine.prepare_rerun``),
executed by a worker after the nodes kept, its events continuing the run's numbering;
refused for a run still queued or running and for a node the Plan does not have."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from keiri_agent.config import Settings
from keiri_agent.errors import RunInProgressError, UserInputError
from keiri_agent.plans.dsl.loader import check_plan_text
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.runs.plan_kind import KIND, PlanKind
from keiri_agent.runs.service import RunService, Timing
from keiri_agent.runs.store import RunStore
from keiri_agent.services.plan_runs import PlanRuns
from keiri_agent.storage.migrate import upgrade

STRICT = """\
apiVersion: v1
id: strict
version: 0.1.0
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: "テンプレートを入力してください"
      requirements:
        - {id: name, type: text, label: "名前", required: true}
        - {id: template, type: text, label: "テンプレート", required: true}
    out:
      collected_data: collected
  - id: message
    block: text.template
    in:
      template: ${collect.collected.template}
      values: ${collect.collected}
    out:
      text: text
"""
WRONG = {"collect": {"name": "山田", "template": "{nam} 様"}}
FIXED = {"collect": {"name": "山田", "template": "{name} 様"}}


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[PlanRuns]:
    """Plan runs over a run service that executes only when the test calls ``execute``."""
    engine = PlanEngine(Settings(home=tmp_path, provider="offline"), env={})
    database = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'runs.db'}")
    upgrade(database)
    service = RunService(
        RunStore(database), {KIND: PlanKind(engine)}, timing=Timing(poll_interval_s=0.05)
    )
    yield PlanRuns(engine, service)
    database.dispose()


def _plan() -> Plan:
    plan = check_plan_text(STRICT).plan
    assert plan is not None
    return plan


def _failed(runs: PlanRuns) -> str:
    run_id = runs.start(_plan(), answers=WRONG)
    runs.service.execute(run_id)
    assert runs.service.require(run_id).status == "failed"
    assert "{nam}" in runs.result(run_id).errors[0]["message"]
    return run_id


def test_a_failed_run_runs_again_from_a_node_as_the_same_run(runs: PlanRuns) -> None:
    run_id = _failed(runs)
    before = runs.service.require(run_id).last_seq

    assert runs.rerun(run_id, "collect", FIXED) == run_id
    queued = runs.service.require(run_id)
    assert queued.status == "queued" and queued.error is None
    runs.service.execute(run_id)

    final = runs.service.require(run_id)
    assert final.status == "success", final.error
    assert final.attempt == 2
    result = runs.result(run_id)
    assert result.status == "success"
    assert result.outputs["message"]["text"] == "山田 様"
    events = runs.service.store.events_after(run_id, before)
    assert [e.seq for e in events] == list(range(before + 1, before + 1 + len(events)))
    assert events[0].kind == "run_rerun" and events[0].payload == {"from_node": "collect"}
    assert "plan_start" not in [e.kind for e in events]  # continued, not started over
    started = [e.payload.get("node_id") for e in events if e.kind == "node_start"]
    assert started == ["collect", "message"]


def test_a_rerun_from_the_failed_node_keeps_the_nodes_before_it(runs: PlanRuns) -> None:
    run_id = _failed(runs)
    before = runs.service.require(run_id).last_seq

    runs.rerun(run_id, "message")
    runs.service.execute(run_id)

    events = runs.service.store.events_after(run_id, before)
    assert [e.payload.get("node_id") for e in events if e.kind == "node_start"] == ["message"]
    assert runs.service.require(run_id).status == "failed"  # the same answers, the same error


def test_a_run_not_settled_or_an_unknown_node_is_refused(runs: PlanRuns) -> None:
    queued = runs.start(_plan(), answers=WRONG)
    with pytest.raises(RunInProgressError):
        runs.rerun(queued, "message")
    assert runs.service.require(queued).status == "queued"

    run_id = _failed(runs)
    with pytest.raises(UserInputError, match="nowhere"):
        runs.rerun(run_id, "nowhere")
    assert runs.service.require(run_id).status == "failed"
    assert runs.result(run_id).status == "failed"  # its state untouched


APPROVED_PAYMENTS = """\
apiVersion: v1
id: payments
version: 0.1.0
graph:
  - id: amounts
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: total, type: number, label: 合計, required: true}
    out: {collected_data: collected}
  - id: approve
    block: ui.interactive_input
    in:
      mode: confirm
      message: 支払を承認してください
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
  - id: output
    block: text.template
    when: {expr: "${approve.approved} == true"}
    in: {template: "支払 {total}", values: "${amounts.collected}"}
    out: {text: text}
"""


def test_a_rerun_asks_every_approval_again(runs: PlanRuns) -> None:
    from keiri_agent.errors import KeiriAgentError
    from keiri_agent.people.roles import Person

    plan = check_plan_text(APPROVED_PAYMENTS).plan
    assert plan is not None
    yamada = Person("yamada", "山田", frozenset({"operator", "approver"}))
    sato = Person("sato", "佐藤", frozenset({"approver"}))
    run_id = runs.start(plan, answers={"amounts": {"total": 100}}, started_by="yamada", by=yamada)
    runs.service.execute(run_id)
    runs.resume(run_id, {"approve": {"approved": True}}, by=sato)
    runs.service.execute(run_id)
    assert runs.result(run_id).outputs["output"]["text"] == "支払 100"

    # The approval has no data dependency, yet a new amount is not output on the old one.
    runs.rerun(run_id, "amounts", {"amounts": {"total": 900}}, by=yamada)
    runs.service.execute(run_id)
    result = runs.result(run_id)
    assert result.status == "paused" and [w["node_id"] for w in result.waiting] == ["approve"]
    assert "output" not in result.outputs or result.outputs["output"] is None

    # Nor can the starter give the approval with the re-run, or start with it given.
    with pytest.raises(KeiriAgentError) as refused:
        runs.rerun(run_id, "amounts", {"approve": {"approved": True}}, by=yamada)
    assert refused.value.code == "PERMISSION_DENIED"
    with pytest.raises(KeiriAgentError) as up_front:
        runs.start(plan, answers={"approve": {"approved": True}}, started_by="yamada", by=yamada)
    assert "職務分掌" in up_front.value.message
