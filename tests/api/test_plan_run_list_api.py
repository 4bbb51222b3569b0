"""A plan's recent runs over HTTP (uvicorn on loopback): newest first, only that plan's
(not a plan whose id is its folder's parent), limited, a damaged state file left out,
unknown or path-like plan ids refused."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer

from keiri_agent.config import Settings
from keiri_agent.workspace import Workspace

ASKING = """\
apiVersion: v1
id: api/limit_report
version: 0.1.0
description: 上限金額を聞いて報告する
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: 上限金額を入力してください
      requirements:
        - {id: limit, type: number, label: 上限金額（円）, default: 30000}
    out: {collected_data: collected}
  - id: report
    block: text.template
    in:
      template: "上限 {limit} 円"
      values: {limit: "${collect.collected.limit}"}
    out: {text: text}
"""

PARENT = """\
apiVersion: v1
id: api
version: 0.1.0
description: 挨拶を作る
graph:
  - id: greet
    block: text.template
    in:
      template: "こんにちは {name}"
      values: {name: 経理部}
    out: {text: text}
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Settings:
    settings = Settings(home=tmp_path, provider="offline")
    designs = Workspace.from_settings(settings).designs
    (designs / "api").mkdir(parents=True)
    (designs / "api" / "limit_report.yaml").write_text(ASKING, encoding="utf-8")
    (designs / "api.yaml").write_text(PARENT, encoding="utf-8")
    return settings


def _start(client: httpx.Client, plan_id: str, **body: object) -> str:
    response = client.post(f"/api/plans/{plan_id}/runs", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["run_id"])


def _settled(client: httpx.Client, run_id: str) -> str:
    deadline = time.monotonic() + 30
    while True:
        status = str(client.get(f"/api/plans/runs/{run_id}").json()["status"])
        if status not in ("queued", "running") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_a_plans_runs_are_listed_newest_first_with_status_and_times(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        paused = _start(client, "api/limit_report")
        assert _settled(client, paused) == "paused"
        time.sleep(0.01)  # distinct millisecond timestamps
        done = _start(client, "api/limit_report", answers={"collect": {"limit": 5}})
        assert _settled(client, done) == "success"
        parent = _start(client, "api")
        assert _settled(client, parent) == "success"
        listed = client.get("/api/plans/api/limit_report/runs")
        limited = client.get("/api/plans/api/limit_report/runs", params={"limit": 1})
        parents = client.get("/api/plans/api/runs")

    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["plan_id"] == "api/limit_report"
    assert [(run["run_id"], run["status"]) for run in body["runs"]] == [
        (done, "success"),
        (paused, "paused"),
    ]
    newest = body["runs"][0]
    assert newest["run_url"] == f"/api/plans/runs/{done}"
    assert newest["started_at"] <= newest["updated_at"]
    assert body["runs"][1]["updated_at"] <= newest["updated_at"]
    assert [run["run_id"] for run in limited.json()["runs"]] == [done]
    assert [run["run_id"] for run in parents.json()["runs"]] == [parent]


def test_a_damaged_state_file_is_left_out_and_the_other_runs_listed(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = _start(client, "api")
        assert _settled(client, run_id) == "success"
        runs_dir = Workspace.from_settings(workspace).runs
        (runs_dir / "api" / "run_damaged0001.state.json").write_text("{", encoding="utf-8")
        listed = client.get("/api/plans/api/runs")

    assert listed.status_code == 200, listed.text
    assert [run["run_id"] for run in listed.json()["runs"]] == [run_id]


def test_a_plan_without_runs_lists_none_and_unknown_or_path_ids_are_refused(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        empty = client.get("/api/plans/api/runs")
        unknown = client.get("/api/plans/nothing/here/runs")
        path = client.get("/api/plans/api/limit_report.yaml/runs")
        too_many = client.get("/api/plans/api/runs", params={"limit": 0})

    assert empty.status_code == 200 and empty.json() == {"plan_id": "api", "runs": []}
    assert unknown.status_code == 404, unknown.text
    assert unknown.json()["error"]["code"] == "PLAN_NOT_FOUND"
    assert path.status_code == 400
    assert path.json()["error"]["code"] == "PLAN_PATH"
    assert too_many.status_code == 422


def test_runs_of_a_plan_whose_file_name_differs_from_its_id_are_listed_under_the_file_id(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    designs = Workspace.from_settings(workspace).designs
    (designs / "monthly.yaml").write_text(
        PARENT.replace("id: api\n", "id: keiri/monthly\n"), encoding="utf-8"
    )
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = _start(client, "monthly")
        assert _settled(client, run_id) == "success"
        listed = client.get("/api/plans/monthly/runs")

    assert listed.status_code == 200, listed.text
    assert [run["run_id"] for run in listed.json()["runs"]] == [run_id]
