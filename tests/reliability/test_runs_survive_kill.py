"""Runs outlive the process executing them (the run service, issue 31).

``kill -9`` of ``keiri-agent serve`` in the middle of a Plan run (a foreach over 8
side-effecting items, ``rt.record``) and of a research run (a web source that answers
slowly) → used to: the research run ended ``failed`` (RUN_INTERRUPTED, "start
again"), the Plan run stayed ``running`` until someone resumed it by hand → now both
finish by themselves:

- embedded default (SQLite, ``serve`` executes runs on its own threads): after
  ``serve`` is started again;
- PostgreSQL with the job queue: ``serve`` only queues, two ``keiri-agent worker``
  processes execute; ``kill -9`` of the worker executing both runs → the other worker
  finishes them once the killed one's lease expired.

Every Plan item's effect happened exactly once (``rt.record`` uses its idempotency
key: an item that finished just before the kill runs again but finds its key); a
client that reconnects with ``Last-Event-ID`` gets each event once, numbered
without a gap.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from api_support import ServeProcess, SseEvent, stream_events

from keiri_agent.agents.research.sources.testing import StubAnswer, TavilyStub

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "tests" / "plans" / "data" / "durable_blocks"
ITEMS = 8
GUARD_S = 120  # only a guard against a hang

PLAN = """
apiVersion: v1
id: durable_each
version: 0.1.0
graph:
  - id: each
    type: loop
    foreach: {{input: {items}, max_concurrency: 1}}
    body:
      plan:
        graph:
          - id: rec
            block: rt.record
            in: {{path: '{effects}', item: "${{item}}", delay_s: 0.5}}
        exports:
          - {{from: rec.value, as: v}}
    out: {{collect: v}}
  - id: after
    block: rt.record
    in: {{path: '{effects}', item: done, delay_s: 0}}
"""

WEB_RESULT = {
    "title": "インボイス制度の概要",
    "url": "https://example.jp/invoice",
    "content": "適格請求書には登録番号を記載します。",
    "score": 0.9,
}


def _slow_web(count: int) -> list[StubAnswer]:
    answer = TavilyStub.results([WEB_RESULT])
    return [StubAnswer(answer.body, delay_s=3.0) for _ in range(count)]


def _wait(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _status(client: httpx.Client, url: str) -> str:
    return str(client.get(url).json()["status"])


def test_kill_9_of_serve_then_restart_finishes_a_plan_run_and_a_research_run(
    tmp_path: Path,
) -> None:
    _kill_and_finish(tmp_path, {}, workers=False)


def test_kill_9_of_a_worker_on_postgres_another_worker_finishes_both_runs(
    tmp_path: Path, postgres_database: str
) -> None:
    database = {
        "KEIRI_AGENT_DATABASE_URL": postgres_database,
        "KEIRI_AGENT_RUN_EXECUTE_IN_SERVE": "false",
    }
    _kill_and_finish(tmp_path, database, workers=True)


class WorkerProcess:
    """``keiri-agent worker`` in a child process (all output to a log file)."""

    def __init__(self, home: Path, env: dict[str, str], name: str) -> None:
        self.log = home / f"worker-{name}.log"
        environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_"))
        }
        environment.update(KEIRI_AGENT_HOME=str(home), KEIRI_AGENT_LOG_LEVEL="INFO", **env)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [*_cli(), "worker", "--concurrency", "4"],
                cwd=home,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _cli() -> list[str]:
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "keiri_agent.cli"]


def _kill_and_finish(tmp_path: Path, database: dict[str, str], *, workers: bool) -> None:
    effects = tmp_path / "effects.txt"
    designs = tmp_path / "designs"
    designs.mkdir()
    items = json.dumps([f"item{i}" for i in range(ITEMS)])
    (designs / "durable_each.yaml").write_text(
        PLAN.format(items=items, effects=effects), encoding="utf-8"
    )
    with TavilyStub(_slow_web(60)) as web:
        env = {
            "KEIRI_AGENT_PROVIDER": "offline",
            "KEIRI_AGENT_BLOCK_SPEC_DIRS": json.dumps([str(SPEC_DIR)]),
            "KEIRI_AGENT_RUN_LEASE_S": "3",
            "KEIRI_AGENT_RUN_HEARTBEAT_S": "0.5",
            "KEIRI_AGENT_RESEARCH_WEB_PROVIDER": "tavily",
            "KEIRI_AGENT_RESEARCH_WEB_API_KEY": "tvly-test-0123456789abcdef",
            "KEIRI_AGENT_RESEARCH_WEB_BASE_URL": web.base_url,
            **database,
        }
        first = ServeProcess(tmp_path, env).wait_ready()
        worker_a = WorkerProcess(tmp_path, env, "a") if workers else None
        worker_b = None
        with httpx.Client(base_url=first.url, timeout=30) as client:
            plan = client.post("/api/plans/durable_each/runs", json={})
            assert plan.status_code == 202, plan.text
            research = client.post("/api/research", json={"question": "インボイス制度の登録番号"})
            assert research.status_code == 202, research.text
            plan_run, research_run = plan.json(), research.json()
            plan_url = f"/api/plans/runs/{plan_run['run_id']}"
            research_url = f"/api/research/{research_run['run_id']}"
            _wait(lambda: effects.exists() and len(effects.read_text().splitlines()) >= 3, "items")
            assert _status(client, research_url) == "running"
            seen_plan = stream_events(client, plan_run["events_url"], limit=4)
            seen_research = stream_events(client, research_run["events_url"], limit=2)
            if worker_a is not None:  # a second worker joins; the first (owning both) dies
                worker_b = WorkerProcess(tmp_path, env, "b")
                time.sleep(2)
        killed = worker_a.process if worker_a is not None else first.process
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        done_before = effects.read_text().splitlines()
        assert len(done_before) < ITEMS  # killed in the middle of the foreach

        second = first if workers else ServeProcess(tmp_path, env).wait_ready()
        try:
            with httpx.Client(base_url=second.url, timeout=60) as client:
                _wait(lambda: _status(client, plan_url) == "success", "the Plan run")
                _wait(lambda: _status(client, research_url) == "success", "the research run")
                plan_rest = _resume(client, plan_run["events_url"], seen_plan)
                research_rest = _resume(client, research_run["events_url"], seen_research)
                plan_whole = stream_events(client, plan_run["events_url"])
                research_whole = stream_events(client, research_run["events_url"])
                report = client.get(research_url).json()["result"]["report_md"]
        finally:
            second.stop()
            for worker in (worker_a, worker_b):
                if worker is not None:
                    worker.stop()

    # every item's effect exactly once, then the node after the loop: an item whose
    # effect was done just before the kill (its progress not yet saved) runs again on
    # the other worker, finds its idempotency key and does not repeat the effect
    effect_items = [line.split("\t")[0] for line in effects.read_text().splitlines()]
    assert Counter(effect_items) == Counter([f"item{i}" for i in range(ITEMS)] + ["done"])
    for seen, rest, whole in (
        (seen_plan, plan_rest, plan_whole),
        (seen_research, research_rest, research_whole),
    ):
        ids = [event.id for event in whole]
        assert ids == list(range(1, len(ids) + 1))  # no gap, no repeat
        assert [_key(e) for e in seen + rest] == [_key(e) for e in whole]
        assert "run_requeued" in [event.event for event in whole]  # taken up again
    assert plan_whole[-1].event == "plan_complete"
    assert research_whole[-1].event == "done"
    assert report


def _resume(client: httpx.Client, url: str, seen: list[SseEvent]) -> list[SseEvent]:
    return stream_events(client, url, headers={"Last-Event-ID": str(seen[-1].id)})


def _key(event: SseEvent) -> tuple[Any, ...]:
    return (event.id, event.event, json.dumps(event.data, sort_keys=True))
