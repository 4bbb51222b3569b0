"""The PostgreSQL job queue (runs.queue): a run is executed by one worker however
often it is dispatched and however many workers there are; a run whose worker is
gone is continued by another; no queue without PostgreSQL, said in Japanese; a
database out of reach is STORE_UNREACHABLE, not a traceback."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.events import Event
from keiri_agent.runs.queue import QueueDispatch, QueueWorker, queue_conninfo
from keiri_agent.runs.records import Run
from keiri_agent.runs.service import Outcome, RunContext, RunService, Timing
from keiri_agent.runs.store import RunStore
from keiri_agent.storage.errors import StoreUnreachableError
from keiri_agent.storage.migrate import upgrade

GUARD_S = 60


class Counting:
    """A kind that records which worker executed which run, taking ``delay_s``."""

    source = "plan"

    def __init__(self, delay_s: float = 0.2) -> None:
        self.delay_s = delay_s
        self.executed: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def execute(self, run: Run, context: RunContext) -> Outcome:
        context.on_event(Event("plan", "working", run.run_id, 1, "", {}))
        time.sleep(self.delay_s)
        with self.lock:
            self.executed.append((run.run_id, run.worker))
        return Outcome("success", result={"ok": True})


def _settings(url: str) -> Settings:
    return Settings(
        provider="offline",
        database_url=url,
        run_concurrency=3,
        run_lease_s=3.0,
        run_heartbeat_s=0.5,
    )


def _wait(predicate, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + GUARD_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_every_run_executes_once_on_two_workers_however_often_it_is_dispatched(
    postgres_database: str,
) -> None:
    settings = _settings(postgres_database)
    conninfo = queue_conninfo(settings)
    engine = sqlalchemy.create_engine(
        postgres_database.replace("postgresql://", "postgresql+psycopg://")
    )
    upgrade(engine)
    dispatch = QueueDispatch(conninfo)
    kind = Counting()
    timing = Timing(lease_s=3.0, heartbeat_s=0.5, poll_interval_s=0.05)
    workers = []
    for name in ("host:1", "host:2"):
        service = RunService(
            RunStore(engine), {"count": kind}, dispatch=dispatch, timing=timing, worker=name
        )
        worker = QueueWorker(settings, service, conninfo)
        worker.start()
        workers.append(worker)
    starter = workers[0].service
    try:
        ids = [
            starter.start("count", subject="s", title=f"run {i}", inputs={}).run_id
            for i in range(12)
        ]
        for run_id in ids:  # dispatched again: a recovery racing the start
            dispatch(run_id)
        _wait(lambda: all(starter.require(i).status == "success" for i in ids), "the runs")
        counts = Counter(run_id for run_id, _ in kind.executed)
        assert counts == Counter({run_id: 1 for run_id in ids})
        assert {worker for _, worker in kind.executed} == {"host:1", "host:2"}  # both worked
    finally:
        for worker in workers:
            worker.stop()
        dispatch.close()
        engine.dispose()


def test_a_run_whose_worker_vanished_is_continued_by_another(postgres_database: str) -> None:
    settings = _settings(postgres_database)
    conninfo = queue_conninfo(settings)
    engine = sqlalchemy.create_engine(
        postgres_database.replace("postgresql://", "postgresql+psycopg://")
    )
    upgrade(engine)
    dispatch = QueueDispatch(conninfo)
    kind = Counting(delay_s=0.0)
    timing = Timing(lease_s=3.0, heartbeat_s=0.5, poll_interval_s=0.05)
    service = RunService(
        RunStore(engine), {"count": kind}, dispatch=dispatch, timing=timing, worker="alive:1"
    )
    store = service.store
    lost = store.create("run_lost", kind="count", subject="s", title="t", owner="", inputs={})
    assert store.claim(lost.run_id, "elsewhere:7", lease_s=1.0) is not None  # then it died
    worker = QueueWorker(settings, service, conninfo)
    worker.start()
    try:
        _wait(lambda: service.require("run_lost").status == "success", "the lost run")
        kinds = [event.kind for event in store.events_after("run_lost", 0)]
        assert kinds == ["run_requeued", "working"]
        assert service.require("run_lost").attempt == 2
    finally:
        worker.stop()
        dispatch.close()
        engine.dispose()


def test_a_worker_without_postgresql_is_refused_in_japanese(keiri_home: Path) -> None:
    result = CliRunner().invoke(app, ["worker"])
    assert result.exit_code != 0
    assert "PostgreSQL" in result.output and "KEIRI_AGENT_DATABASE_URL" in result.output
    assert "Traceback" not in result.output


def test_a_queue_out_of_reach_is_store_unreachable() -> None:
    with pytest.raises(StoreUnreachableError):
        QueueDispatch("postgresql://keiri@127.0.0.1:1/keiri?connect_timeout=2")
