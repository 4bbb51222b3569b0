"""Plan runs over HTTP: uvicorn on loopback, a real HTTP client. A run pauses at a
``ui.interactive_input`` node, is resumed with answers through the API and succeeds;
its SSE events are read to the end, and a dropped stream resumes with Last-Event-ID
without loss or repeat; binary outputs download."""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import docx
import httpx
import pytest
from api_support import LiveServer, stream_events
from openpyxl import load_workbook

from keiri_agent.config import Settings
from keiri_agent.demo import sample_plan_path
from keiri_agent.workspace import Workspace

PLAN = """\
apiVersion: v1
id: api/limit_report
version: 0.1.0
description: 上限金額を聞いて報告書を作る
vars:
  title: 月次チェック
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
      template: "{title}: 上限 {limit} 円"
      values:
        title: ${vars.title}
        limit: ${collect.collected.limit}
    out: {text: text}
  - id: render
    block: document.render
    in:
      markdown: ${report.text}
      title: 報告
      filename: 報告.docx
    out: {document: document}
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Settings:
    settings = Settings(home=tmp_path, provider="offline")
    designs = Workspace.from_settings(settings).designs
    (designs / "api").mkdir(parents=True)
    (designs / "api" / "limit_report.yaml").write_text(PLAN, encoding="utf-8")
    return settings


def _start(client: httpx.Client, **body: object) -> dict:
    response = client.post("/api/plans/api/limit_report/runs", json=body)
    assert response.status_code == 202, response.text
    return response.json()


def _wait(client: httpx.Client, run_id: str, status: str) -> dict:
    deadline = time.monotonic() + 30
    while True:
        run = client.get(f"/api/plans/runs/{run_id}").json()
        if run["status"] == status or time.monotonic() > deadline:
            return run
        time.sleep(0.05)


def test_a_paused_run_resumed_through_the_api_succeeds_with_its_outputs(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        started = _start(client, vars={"title": "三月"})
        paused = _wait(client, started["run_id"], "paused")
        resumed = client.post(
            f"/api/plans/runs/{started['run_id']}/resume",
            json={"answers": {"collect": {"limit": 50000}}},
        )
        done = _wait(client, started["run_id"], "success")
        download = client.get(f"/api/plans/runs/{started['run_id']}/outputs/render/document")

    assert started["events_url"] == f"/api/plans/runs/{started['run_id']}/events"
    assert paused["status"] == "paused"
    assert [item["node_id"] for item in paused["waiting"]] == ["collect"]
    assert paused["waiting"][0]["request"]["fields"][0]["id"] == "limit"
    assert resumed.status_code == 202, resumed.text
    assert done["status"] == "success", done
    assert done["outputs"]["report"]["text"] == "三月: 上限 50000 円"
    assert done["outputs"]["render"]["document"]["bytes"] > 0
    assert download.status_code == 200
    text = "\n".join(p.text for p in docx.Document(io.BytesIO(download.content)).paragraphs)
    assert "三月: 上限 50000 円" in text


def test_run_events_read_to_the_end_then_resumed_after_a_drop_without_loss_or_repeat(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run = _start(client)
        before_answers = stream_events(client, run["events_url"])  # ends: paused
        client.post(
            f"/api/plans/runs/{run['run_id']}/resume",
            json={"answers": {"collect": {"limit": 1}}},
        ).raise_for_status()
        first = stream_events(client, run["events_url"], limit=2)
        rest = stream_events(
            client, run["events_url"], headers={"Last-Event-ID": str(first[-1].id)}
        )
        whole = stream_events(client, run["events_url"])
        query = stream_events(client, f"{run['events_url']}?lastEventId={before_answers[-1].id}")

    assert before_answers[0].event == "plan_start"
    assert before_answers[-1].event == "plan_paused"
    ids = [event.id for event in whole]
    assert ids == list(range(1, len(ids) + 1))
    assert whole[-1].event == "plan_complete"
    assert whole[-1].data is not None and whole[-1].data["payload"]["status"] == "success"
    assert all(e.data and e.data["source"] == "plan" and e.data["seq"] == e.id for e in whole)
    union = first + rest
    assert [(e.id, e.event, e.data) for e in union] == [(e.id, e.event, e.data) for e in whole]
    # a resume continues the numbering: queued again, then the runner resumes
    assert [e.event for e in query[:2]] == ["run_continued", "plan_resumed"]
    assert [e.id for e in before_answers + query] == ids


def test_bad_run_ids_and_unknown_runs_are_refused(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        unknown = client.get("/api/plans/runs/run_000000000000")
        malformed = client.get("/api/plans/runs/run..x")
        events = client.get("/api/plans/runs/run_000000000000/events")
        resume = client.post("/api/plans/runs/run_000000000000/resume", json={"answers": {}})
        traversal = client.post("/api/plans/..%2F..%2Fetc%2Fpasswd/runs", json={})

    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "RUN_NOT_FOUND"
    assert "runs_dir" not in unknown.text and str(workspace.storage.home) not in unknown.text
    assert malformed.status_code == 400
    assert events.status_code == 404 and resume.status_code == 404
    assert traversal.status_code in (400, 404)
    assert "root:" not in traversal.text


def test_a_finished_run_is_not_resumable_and_not_cancellable(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run = _start(client, answers={"collect": {"limit": 10}})
        done = _wait(client, run["run_id"], "success")
        resume = client.post(f"/api/plans/runs/{run['run_id']}/resume", json={"answers": {}})
        cancel = client.post(f"/api/plans/runs/{run['run_id']}/cancel")

    assert done["status"] == "success" and done["outputs"]["report"]["text"].endswith("10 円")
    assert resume.status_code == 400
    assert resume.json()["error"]["code"] == "RUN_NOT_RESUMABLE"
    assert cancel.status_code == 409


def test_the_sample_expense_check_paused_on_one_server_is_resumed_with_a_file_on_another(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    designs = Workspace.from_settings(workspace).designs
    (designs / "examples").mkdir()
    sample = sample_plan_path("expense_check").read_text(encoding="utf-8")
    (designs / "examples" / "expense_check.yaml").write_text(sample, encoding="utf-8")
    workbook = Path(
        str(resources.files("keiri_agent.samples").joinpath("expenses", "経費明細.xlsx"))
    )
    one, other = serve(workspace), serve(workspace)
    with (
        httpx.Client(base_url=one.url, timeout=60) as first,
        httpx.Client(base_url=other.url, timeout=60) as second,
    ):
        run = first.post("/api/plans/examples/expense_check/runs", json={}).json()
        paused = _wait(first, run["run_id"], "paused")
        answer = {
            "workbook": {
                "name": "経費明細.xlsx",
                "base64": base64.b64encode(workbook.read_bytes()).decode(),
            },
            "limit": 30000,
        }
        bad = second.post(
            f"/api/plans/runs/{run['run_id']}/resume",
            json={"answers": {"collect": {**answer, "workbook": {"name": "x", "base64": "!!"}}}},
        )
        resumed = second.post(
            f"/api/plans/runs/{run['run_id']}/resume", json={"answers": {"collect": answer}}
        )
        events = stream_events(first, run["events_url"])  # the other server's events too
        done = _wait(first, run["run_id"], "success")
        sheet = second.get(f"/api/plans/runs/{run['run_id']}/outputs/write_over_limit/workbook")

    assert paused["status"] == "paused"
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "ANSWER_FILE_INVALID"
    assert resumed.status_code == 202, resumed.text
    assert done["status"] == "success", done["errors"]
    assert done["outputs"]["check_numbers"]["summary"] == {"total": 9, "valid": 5, "invalid": 4}
    assert [e.event for e in events].count("plan_resumed") == 1
    assert events[-1].event == "plan_complete"
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    over = list(load_workbook(io.BytesIO(sheet.content))["上限超過"].values)
    assert len(over) == 3  # the header and the two rows over the limit


LONG_LOOP = """\
apiVersion: v1
id: api/long_loop
version: 0.1.0
vars:
  items: {items}
graph:
  - id: each
    type: loop
    foreach:
      input: "${{vars.items}}"
      itemVar: item
      max_concurrency: 1
    body:
      plan:
        graph:
          - id: say
            block: text.template
            in:
              template: "{{n}}"
              values: {{n: "${{item}}"}}
            out: {{text: said}}
        exports:
          - {{from: say.said, as: said}}
    out:
      collect: said
"""


def test_a_running_run_is_cancelled_through_the_api(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    designs = Workspace.from_settings(workspace).designs
    text = LONG_LOOP.format(items=list(range(3000)))
    (designs / "api" / "long_loop.yaml").write_text(text, encoding="utf-8")
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        run = client.post("/api/plans/api/long_loop/runs", json={}).json()
        cancel = client.post(f"/api/plans/runs/{run['run_id']}/cancel")
        done = _wait(client, run["run_id"], "cancelled")
        events = stream_events(client, run["events_url"])

    assert run["status"] in ("queued", "running")
    assert cancel.status_code == 200, cancel.text
    assert done["status"] == "cancelled"
    assert events[-1].event == "cancelled"
    assert events[-1].data is not None and events[-1].data["payload"]["status"] == "cancelled"


def test_the_run_and_its_events_carry_the_titles_the_plan_gives(
    workspace: Settings, serve: Callable[..., LiveServer]
) -> None:
    titled = (
        PLAN.replace("version: 0.1.0", "version: 0.1.0\ntitle: 上限チェック報告")
        .replace("  - id: collect\n", "  - id: collect\n    title: 上限金額の入力\n")
        .replace("  - id: report\n", "  - id: report\n    title: 報告文の作成\n")
        .replace(
            "graph:",
            "ui:\n  vars: {title: {title: 月次の名前, description: 報告の先頭に入ります}}\ngraph:",
        )
    )
    designs = Workspace.from_settings(workspace).designs
    (designs / "api" / "limit_report.yaml").write_text(titled, encoding="utf-8")
    server = serve(workspace)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        shown = client.get("/api/plans/api/limit_report").json()
        run = _start(client)
        paused = _wait(client, run["run_id"], "paused")
        client.post(
            f"/api/plans/runs/{run['run_id']}/resume",
            json={"answers": {"collect": {"limit": 1}}},
        ).raise_for_status()
        done = _wait(client, run["run_id"], "success")
        events = stream_events(client, run["events_url"])

    assert shown["summary"]["title"] == "上限チェック報告"
    assert [n["title"] for n in shown["summary"]["nodes"]] == [
        "上限金額の入力",
        "報告文の作成",
        None,
    ]
    assert shown["inputs"]["vars"][0]["title"] == "月次の名前"
    assert shown["inputs"]["vars"][0]["description"] == "報告の先頭に入ります"
    assert paused["title"] == "上限チェック報告"
    assert paused["waiting"][0]["title"] == "上限金額の入力"
    assert done["node_titles"] == {
        "collect": "上限金額の入力", "report": "報告文の作成", "render": "render"
    }  # fmt: skip
    starts = {
        e.data["payload"]["node_id"]: e.data["payload"]
        for e in events
        if e.data and e.event == "node_start"
    }
    assert starts["collect"]["title"] == "上限金額の入力"
    steps = [(step["title"], step["kind"]) for step in shown["diagram"]["steps"]]
    assert steps == [("上限金額の入力", "input"), ("報告文の作成", "step"), ("ステップ 3", "step")]
    assert shown["diagram"]["edges"] == [
        {"source": "collect", "target": "report"},
        {"source": "report", "target": "render"},
    ]
    assert paused["diagram"] == shown["diagram"]
    assert paused["step_states"] == {"collect": "waiting", "report": "pending", "render": "pending"}
    assert done["step_states"] == dict.fromkeys(("collect", "report", "render"), "success")
    assert starts["report"]["title"] == "報告文の作成"
    assert "title" not in starts["render"]  # no title in the Plan: none in the event
