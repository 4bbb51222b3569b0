"""The diagram of a Plan: top-level steps in words and one edge per dependency."""

from __future__ import annotations

from pathlib import Path

from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.run.outputs import result_of
from keiri_agent.plans.run.run_state import RunState
from keiri_agent.services.plan_diagram import plan_diagram

PLAN = """\
apiVersion: v1
id: diagram
version: 0.1.0
graph:
  - id: upload
    title: 経費データの受け取り
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: csv, type: file, label: 経費CSV, accept: .csv}
    out: {collected_data: files}
  - id: rows
    block: text.template
    in: {template: "${upload.files}", values: {}}
    out: {text: rows}
  - id: totals
    title: 部署別の合計
    block: text.template
    in: {template: "${rows.rows}", values: {}}
    out: {text: totals}
  - id: approve
    title: 上長の承認
    block: ui.interactive_input
    in:
      mode: confirm
      message: 合計を確認してください
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
  - id: each
    title: 部署ごとの報告
    type: loop
    foreach: {input: [1, 2]}
    body:
      plan:
        graph:
          - {id: inner, block: text.template, in: {template: "${rows.rows}", values: {}}}
        exports: [{from: inner.text, as: r}]
    out: {collect: r}
  - id: book
    title: Excel に書く
    block: text.template
    when: {expr: "${approve.approved} == true"}
    in: {template: "${totals.totals} ${rows.rows}", values: {}}
    out: {text: book}
"""


def test_steps_are_named_in_words_and_connected_by_what_they_read() -> None:
    diagram = plan_diagram(load_plan_text(PLAN))

    assert diagram["steps"] == [
        {"id": "upload", "title": "経費データの受け取り", "kind": "input"},
        {"id": "rows", "title": "ステップ 2", "kind": "step"},  # untitled: never its id
        {"id": "totals", "title": "部署別の合計", "kind": "step"},
        {"id": "approve", "title": "上長の承認", "kind": "approval"},
        {"id": "each", "title": "部署ごとの報告", "kind": "loop"},
        {"id": "book", "title": "Excel に書く", "kind": "step"},
    ]
    edges = {(edge["source"], edge["target"]) for edge in diagram["edges"]}
    assert edges == {
        ("upload", "rows"),
        ("rows", "totals"),
        ("rows", "each"),  # the loop's body reads it: the loop comes after it
        ("approve", "book"),  # ``when`` waits for the approval
        ("rows", "book"),
        ("totals", "book"),
    }
    assert len(diagram["edges"]) == len(edges)  # each once


def test_a_run_says_where_each_step_stands_a_waiting_loop_included(tmp_path: Path) -> None:
    plan = load_plan_text(PLAN)
    state = RunState(run_id="run_0123456789ab", plan_id="diagram", plan={}, log_path="x.jsonl")
    for node_id, status in (("upload", "success"), ("rows", "success"), ("each", "paused")):
        state.graph.node(node_id).status = status
    state.graph.node("totals").status = "cancelled"

    steps = result_of(state, plan, "paused", tmp_path).step_states

    assert steps == {
        "upload": "success",
        "rows": "success",
        "totals": "cancelled",
        "approve": "pending",  # not reached
        "each": "waiting",  # its body waits for an answer
        "book": "pending",
    }
