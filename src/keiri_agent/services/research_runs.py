"""Research runs that outlive a request: started in a worker, recorded in the database,
followed by any server process (seed 004's mutation → SSE sequence).

    runs = ResearchRuns(ResearchService(settings))
    record = runs.start("インボイス制度で…", session_id=None, kb_names=["research"])
    async for event in runs.follow(record.run_id, after=0):   # None = nothing new yet
        ...

- ``RunStore`` is the SQL side: one ``research_runs`` row per run (question, status,
  result or error, last event number, owner process, heartbeat, cancel flag) and one
  ``research_events`` row per event, written once, read by every process.
- ``ResearchRuns`` is one per server process: ``start`` records the run and hands it
  to a bounded pool of worker threads (a run never executes inside a request and
  survives the client going away); every event the agent emits is written before it
  is announced; the run ends with the agent's ``done`` event, or with ``failed`` /
  ``cancelled`` numbered after the last one, then its status.
- ``follow(run_id, after)`` yields the stored events numbered after ``after`` — the
  SSE ``Last-Event-ID`` resume — and ends once the run is over and all were sent.
  Events of runs in this process wake a follower at once; runs owned by another
  process are polled every ``api_poll_interval_s`` (PostgreSQL shared by several
  ``serve`` processes, docs/deployment.md).
- While a run executes its owner beats every ``HEARTBEAT_S`` seconds and reads the
  cancel flag, so ``cancel`` works from any process; ``recover_orphans`` marks the
  runs of dead processes on this host as failed when a server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import sqlalchemy
from sqlalchemy import select, update

from keiri_agent.agents.research.agent import new_run_id, new_session_id
from keiri_agent.agents.research.notes import checked_session_id
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.events import Event, utc_timestamp
from keiri_agent.masking import mask_secrets
from keiri_agent.services.research import ResearchService
from keiri_agent.storage.schema import (
    research_events,
    research_runs,
)

log = logging.getLogger(__name__)

RunStatus = Literal["queued", "running", "success", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"success", "failed", "cancelled"})

MAX_QUESTION_CHARS = 4000
"""The longest research question accepted."""
HEARTBEAT_S = 2.0
"""How often a running run's owner updates its heartbeat and reads the cancel flag."""
EVENT_BATCH = 500
"""The most events one read returns (a follower reads again for the rest)."""
WORKER = f"{socket.gethostname()}:{os.getpid()}"
"""This process, as it is recorded in ``research_runs.worker``."""


@dataclass(frozen=True)
class RunRecord:
    """One research run as stored."""

    run_id: str
    session_id: str
    question: str
    kb_names: list[str]
    status: RunStatus
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    last_seq: int
    worker: str
    created_at: datetime
    updated_at: datetime

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "question": self.question,
            "kb_names": list(self.kb_names),
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "last_event_id": self.last_seq,
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
        }


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:  # SQLite hands naive datetimes back
        moment = moment.replace(tzinfo=UTC)
    return utc_timestamp(moment)


class RunStore:
    """``research_runs`` and ``research_events`` over a SQLAlchemy engine (migrated)."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def create(self, run_id: str, session_id: str, question: str, kb_names: list[str]) -> None:
        now = datetime.now(UTC)
        with self.engine.begin() as connection:
            connection.execute(
                research_runs.insert().values(
                    run_id=run_id,
                    session_id=session_id,
                    question=question,
                    kb_names=kb_names,
                    status="queued",
                    result=None,
                    error=None,
                    last_seq=0,
                    cancel_requested=False,
                    worker=WORKER,
                    created_at=now,
                    updated_at=now,
                )
            )

    def append(self, event: Event) -> None:
        """Write one event (once: a repeated number is ignored) and move ``last_seq``."""
        with self.engine.begin() as connection:
            connection.execute(
                research_events.insert().values(
                    run_id=event.run_id,
                    seq=event.seq,
                    kind=event.kind,
                    timestamp=event.timestamp,
                    payload=mask_secrets(dict(event.payload)),
                )
            )
            connection.execute(
                update(research_runs)
                .where(research_runs.c.run_id == event.run_id)
                .where(research_runs.c.last_seq < event.seq)
                .values(last_seq=event.seq, updated_at=datetime.now(UTC))
            )

    def set_status(self, run_id: str, status: RunStatus, **values: Any) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                update(research_runs)
                .where(research_runs.c.run_id == run_id)
                .values(status=status, updated_at=datetime.now(UTC), **values)
            )

    def beat(self, run_id: str) -> bool:
        """Update the heartbeat; True when someone asked to cancel the run."""
        with self.engine.begin() as connection:
            connection.execute(
                update(research_runs)
                .where(research_runs.c.run_id == run_id)
                .values(updated_at=datetime.now(UTC))
            )
            flag = connection.execute(
                select(research_runs.c.cancel_requested).where(research_runs.c.run_id == run_id)
            ).scalar()
        return bool(flag)

    def request_cancel(self, run_id: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                update(research_runs)
                .where(research_runs.c.run_id == run_id)
                .values(cancel_requested=True)
            )

    def get(self, run_id: str) -> RunRecord | None:
        with self.engine.connect() as connection:
            row = connection.execute(
                select(research_runs).where(research_runs.c.run_id == run_id)
            ).first()
        return None if row is None else _record(row._mapping)

    def runs(self, session_id: str | None = None, limit: int = 50) -> list[RunRecord]:
        """The newest runs first (of one session when given)."""
        query = select(research_runs).order_by(research_runs.c.created_at.desc()).limit(limit)
        if session_id is not None:
            query = query.where(research_runs.c.session_id == session_id)
        with self.engine.connect() as connection:
            return [_record(row._mapping) for row in connection.execute(query)]

    def events_after(self, run_id: str, seq: int, limit: int = EVENT_BATCH) -> list[Event]:
        query = (
            select(research_events)
            .where(research_events.c.run_id == run_id, research_events.c.seq > seq)
            .order_by(research_events.c.seq)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [
            Event(
                source="research",
                kind=row.kind,
                run_id=row.run_id,
                seq=row.seq,
                timestamp=row.timestamp,
                payload=row.payload if isinstance(row.payload, dict) else {},
            )
            for row in rows
        ]

    def orphans(self, host: str) -> list[RunRecord]:
        """Unfinished runs owned by a process of ``host``."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(research_runs).where(
                    research_runs.c.status.in_(["queued", "running"]),
                    research_runs.c.worker.like(f"{host}:%"),
                )
            ).all()
        return [_record(row._mapping) for row in rows]


def _record(row: Any) -> RunRecord:
    return RunRecord(
        run_id=row["run_id"],
        session_id=row["session_id"],
        question=row["question"],
        kb_names=list(row["kb_names"] or []),
        status=row["status"],
        result=row["result"],
        error=row["error"],
        last_seq=row["last_seq"],
        worker=row["worker"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class _Waiters:
    """Followers in this process waiting for a run's next event (asyncio, any loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def add(self, run_id: str) -> tuple[asyncio.AbstractEventLoop, asyncio.Event]:
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiting.setdefault(run_id, set()).add(entry)
        return entry

    def remove(self, run_id: str, entry: tuple[asyncio.AbstractEventLoop, asyncio.Event]) -> None:
        with self._lock:
            waiting = self._waiting.get(run_id)
            if waiting is not None:
                waiting.discard(entry)
                if not waiting:
                    del self._waiting[run_id]

    def wake(self, run_id: str) -> None:
        with self._lock:
            entries = list(self._waiting.get(run_id, ()))
        for loop, flag in entries:
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(flag.set)


class ResearchRuns:
    """The research runs of one server process (see the module docstring)."""

    def __init__(
        self,
        service: ResearchService,
        store: RunStore | None = None,
    ) -> None:
        self.service = service
        self.settings = service.settings
        if store is None:
            store = RunStore(service.store.engine)  # the notes' migrated database
        self.store = store
        self._pool = ThreadPoolExecutor(
            max_workers=self.settings.api_research_concurrency, thread_name_prefix="research"
        )
        self._waiters = _Waiters()
        self._local: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = {}
        self._local_lock = threading.Lock()

    # --- starting and running -----------------------------------------------------

    def start(
        self, question: str, *, session_id: str | None = None, kb_names: Sequence[str] = ()
    ) -> RunRecord:
        """Record a run and queue it; returns its record (status ``queued``).

        Raises:
            UserInputError: empty or too long question, bad session id, unknown
                knowledge base.
        """
        question = (question or "").strip()
        if not question:
            raise UserInputError("質問が空です", hint="調べたい内容を文章で入力してください")
        if len(question) > MAX_QUESTION_CHARS:
            raise UserInputError(
                f"質問が長すぎます（{len(question)} 文字）",
                hint=f"{MAX_QUESTION_CHARS} 文字以内にまとめてください",
            )
        session_id = checked_session_id(session_id) or new_session_id()
        names = [name for name in kb_names if name]
        self.check_sources(names)
        run_id = new_run_id()
        self.store.create(run_id, session_id, question, names)
        self._pool.submit(self._execute, run_id, question, session_id, names)
        record = self.store.get(run_id)
        assert record is not None
        return record

    def check_sources(self, kb_names: list[str]) -> None:
        """Fail now (400), not in the worker, when the sources cannot be built."""
        from keiri_agent.agents.research.sources.registry import search_tools

        search_tools(self.settings, kb_names=kb_names or None)

    def _execute(self, run_id: str, question: str, session_id: str, kb_names: list[str]) -> None:
        try:
            asyncio.run(self._aexecute(run_id, question, session_id, kb_names))
        except BaseException:  # the pool would swallow it: log it, the row says failed
            log.exception("research run %s crashed", run_id)

    async def _aexecute(
        self, run_id: str, question: str, session_id: str, kb_names: list[str]
    ) -> None:
        last_seq = 0

        def record(event: Event) -> None:
            nonlocal last_seq
            self.store.append(event)
            last_seq = event.seq
            self._waiters.wake(run_id)

        if self.store.beat(run_id):  # cancelled while queued
            self._finish(run_id, "cancelled", last_seq, record)
            return
        self.store.set_status(run_id, "running")
        self._waiters.wake(run_id)
        watchdog: asyncio.Task[None] | None = None
        try:
            agent = self.service.agent(kb_names or None)
            task = asyncio.create_task(
                agent.aresearch(question, session_id=session_id, on_event=record, run_id=run_id)
            )
            with self._local_lock:
                self._local[run_id] = (asyncio.get_running_loop(), task)
            watchdog = asyncio.create_task(self._watch(run_id, task))
            result = await task
        except asyncio.CancelledError:
            self._finish(run_id, "cancelled", last_seq, record)
        except KeiriAgentError as error:
            self._finish(run_id, "failed", last_seq, record, error=error.to_dict())
        except Exception as error:
            log.exception("research run %s failed", run_id)
            self._finish(run_id, "failed", last_seq, record, error=_unexpected(error))
        else:
            from keiri_agent.services.jsonforms import research_result_json

            self.store.set_status(run_id, "success", result=research_result_json(result))
            self._waiters.wake(run_id)
        finally:
            if watchdog is not None:
                watchdog.cancel()
            with self._local_lock:
                self._local.pop(run_id, None)

    async def _watch(self, run_id: str, task: asyncio.Task[Any]) -> None:
        while not task.done():
            await asyncio.sleep(HEARTBEAT_S)
            if await asyncio.to_thread(self.store.beat, run_id):
                task.cancel()
                return

    def _finish(
        self,
        run_id: str,
        status: RunStatus,
        last_seq: int,
        record: Any,
        *,
        error: dict[str, Any] | None = None,
    ) -> None:
        payload: dict[str, Any] = {"status": status}
        if error is not None:
            payload["error"] = error
        kind = "failed" if status == "failed" else "cancelled"
        record(Event("research", kind, run_id, last_seq + 1, utc_timestamp(), payload))
        self.store.set_status(run_id, status, error=mask_secrets(error) if error else None)
        self._waiters.wake(run_id)

    # --- reading ------------------------------------------------------------------

    def get(self, run_id: str) -> RunRecord | None:
        return self.store.get(run_id)

    def cancel(self, run_id: str) -> RunRecord | None:
        """Ask the run to stop (any process); its owner ends it within a heartbeat."""
        record = self.store.get(run_id)
        if record is None or record.finished:
            return record
        self.store.request_cancel(run_id)
        with self._local_lock:
            local = self._local.get(run_id)
        if local is not None:
            loop, task = local
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
        return self.store.get(run_id)

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[Event | None]:
        """The run's events after ``after`` as they are stored; ``None`` when nothing
        arrived for a poll interval (the SSE layer sends heartbeats on those). Ends
        once the run is over and every event was yielded."""
        entry = self._waiters.add(run_id)
        _, flag = entry
        position = after
        try:
            while True:
                flag.clear()
                record = await asyncio.to_thread(self.store.get, run_id)
                events = await asyncio.to_thread(self.store.events_after, run_id, position)
                for event in events:
                    position = event.seq
                    yield event
                if len(events) == EVENT_BATCH:
                    continue
                if record is None or (record.finished and not events):
                    return
                if not events:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(flag.wait(), self.settings.api_poll_interval_s)
                    if not flag.is_set():
                        yield None
        finally:
            self._waiters.remove(run_id, entry)

    def recover_orphans(self) -> int:
        """Mark unfinished runs of dead processes on this host failed; how many."""
        import psutil

        host = WORKER.rsplit(":", 1)[0]
        recovered = 0
        for record in self.store.orphans(host):
            pid = record.worker.rsplit(":", 1)[-1]
            sibling = (
                record.worker != WORKER
                and pid.isascii()
                and pid.isdigit()
                and psutil.pid_exists(int(pid))
            )
            if sibling or record.run_id in self._local:  # alive in another process, or here
                continue
            error = {
                "code": "RUN_INTERRUPTED",
                "message": "サーバーが停止したため調査が中断されました",
                "hint": "同じ質問でもう一度調査を開始してください",
                "details": {},
            }
            self._finish(
                record.run_id,
                "failed",
                record.last_seq,
                lambda event: self.store.append(event),
                error=error,
            )
            recovered += 1
        return recovered

    def close(self) -> None:
        """Stop taking runs; running ones are cancelled (their status says so)."""
        with self._local_lock:
            local = list(self._local.values())
        for loop, task in local:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
        self._pool.shutdown(wait=True, cancel_futures=True)


def _unexpected(error: Exception) -> dict[str, Any]:
    return {
        "code": "RESEARCH_FAILED",
        "message": "調査中に予期しないエラーが発生しました",
        "hint": "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください",
        "details": {"type": type(error).__name__},
    }
