"""Schedules through the API (``/api/schedules``): added, listed, paused, resumed and
deleted; a due schedule's run started by the server by itself, its first event saying
when it was due; bad rules, times and Plans answered in Japanese with their codes."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from api_support import LiveServer, stream_events

from keiri_agent.config import Settings
from keiri_agent.runs.schedules import ScheduleStore
from keiri_agent.storage.engine import create_engine

PLAN = """\
apiVersion: v1
id: greet
version: 0.1.0
vars:
  name: 経理部
graph:
  - id: g
    block: text.template
    in: {template: "こんにちは {n}", values: {n: "${vars.name}"}}
    out: {text: t}
"""


def _workspace(home: Path) -> Settings:
    (home / "designs").mkdir(parents=True)
    (home / "designs" / "greet.yaml").write_text(PLAN, encoding="utf-8")
    return Settings(home=home, provider="offline", run_lease_s=3, run_heartbeat_s=0.5)


def test_schedules_are_managed_and_a_due_one_runs_by_itself(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    settings = _workspace(tmp_path)
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        added = client.post(
            "/api/schedules",
            json={
                "plan_id": "greet",
                "rule": "毎月第5営業日",
                "at": "09:30",
                "vars": {"name": "総務部"},
            },
        )
        assert added.status_code == 201, added.text
        schedule = added.json()
        assert schedule["next_at"].endswith("09:30+09:00")
        upcoming = [dt.datetime.fromisoformat(moment) for moment in schedule["upcoming"]]
        assert schedule["upcoming"][0] == schedule["next_at"] and len(upcoming) == 5
        assert len({(moment.year, moment.month) for moment in upcoming}) == 5  # one a month
        assert upcoming == sorted(upcoming) and all(m.weekday() < 5 for m in upcoming)
        assert all(5 <= moment.day <= 11 for moment in upcoming)  # the 5th business day
        listed = client.get("/api/schedules").json()["schedules"]
        assert [item["schedule_id"] for item in listed] == [schedule["schedule_id"]]
        paused = client.post(f"/api/schedules/{schedule['schedule_id']}/pause").json()
        assert paused["paused"] is True and paused["upcoming"] == []
        resumed = client.post(f"/api/schedules/{schedule['schedule_id']}/resume").json()
        assert resumed["paused"] is False

        # due a minute ago: the server's next recovery pass starts its run
        engine = create_engine(settings)
        ScheduleStore(engine).update(schedule["schedule_id"], next_at=time.time() - 60)
        deadline = time.monotonic() + 30
        while (shown := client.get("/api/schedules").json()["schedules"][0])["last_run_id"] is None:
            assert time.monotonic() < deadline, "the due schedule never ran"
            time.sleep(0.1)
        run_id = shown["last_run_id"]
        while client.get(f"/api/plans/runs/{run_id}").json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        run = client.get(f"/api/plans/runs/{run_id}").json()
        events = stream_events(client, f"/api/plans/runs/{run_id}/events")
        deleted = client.delete(f"/api/schedules/{schedule['schedule_id']}")
        after = client.get("/api/schedules").json()["schedules"]
        engine.dispose()

    assert run["status"] == "success"
    assert run["outputs"]["g"]["t"] == "こんにちは 総務部"
    assert events[0].event == "scheduled"
    assert events[0].data is not None
    assert events[0].data["payload"]["schedule_id"] == schedule["schedule_id"]
    assert events[0].data["payload"]["late"] is False
    assert deleted.status_code == 200 and after == []


def test_bad_schedules_are_refused_in_japanese_with_their_codes(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    settings = _workspace(tmp_path)
    broken = PLAN.replace("id: greet", "id: broken").replace("text.template", "no.such_block")
    (tmp_path / "designs" / "broken.yaml").write_text(broken, encoding="utf-8")
    server = serve(settings)
    cases = [
        ({"plan_id": "broken", "rule": "毎月末営業日"}, 400, "PLAN_INVALID"),
        ({"plan_id": "greet", "rule": "毎日"}, 400, "SCHEDULE_RULE_INVALID"),
        ({"plan_id": "greet", "rule": "毎月末営業日", "at": "9時"}, 400, "SCHEDULE_TIME_INVALID"),
        ({"plan_id": "nope", "rule": "毎月末営業日"}, 404, "PLAN_NOT_FOUND"),
    ]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        answers = [client.post("/api/schedules", json=body) for body, _, _ in cases]
        missing = client.post("/api/schedules/sch_nope/pause")
    for answer, (_, status, code) in zip(answers, cases, strict=True):
        assert answer.status_code == status, answer.text
        assert answer.json()["error"]["code"] == code
        assert "Traceback" not in answer.text
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "SCHEDULE_NOT_FOUND"


def test_a_scheduled_run_whose_plan_is_gone_is_shown_as_failed_saying_why(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    settings = _workspace(tmp_path)
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        schedule = client.post(
            "/api/schedules", json={"plan_id": "greet", "rule": "毎月末営業日"}
        ).json()
        (tmp_path / "designs" / "greet.yaml").unlink()
        engine = create_engine(settings)
        ScheduleStore(engine).update(schedule["schedule_id"], next_at=time.time() - 1)
        engine.dispose()
        deadline = time.monotonic() + 30
        while (shown := client.get("/api/schedules").json()["schedules"][0])["last_run_id"] is None:
            assert time.monotonic() < deadline, "the due schedule never ran"
            time.sleep(0.1)
        run = client.get(f"/api/plans/runs/{shown['last_run_id']}")
        events = stream_events(client, run.json()["events_url"])

    assert run.status_code == 200, run.text
    body = run.json()
    assert body["status"] == "failed"
    assert body["errors"][0]["code"] == "PLAN_NOT_FOUND"
    assert [event.event for event in events] == ["scheduled", "failed"]
