"""The SQL side of the run service: ``runs`` and ``run_events`` (``storage.schema``).

Every change to a run is one transaction that also numbers its event: the run's
``last_seq`` is raised first (``UPDATE … RETURNING``, so SQLite takes its write lock at
once and PostgreSQL locks the row), then the event is inserted with that number. So
events are numbered 1, 2, … without gaps or repeats, whichever process writes them.

Ownership: ``claim`` gives a queued run (or a running one whose lease expired) to one
worker and raises ``attempt``; that worker's writes (``append``, ``beat``,
``settle``) name the attempt and change nothing once another claim replaced it
(``LeaseLost``). Times of leases are epoch seconds of the writing machine: the
machines of a deployment keep their clocks synchronised (NTP).
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy
from sqlalchemy import and_, select, update

from keiri_agent.events import Event, EventSource, utc_timestamp
from keiri_agent.masking import mask_secrets
from keiri_agent.runs.records import Run, RunStatus
from keiri_agent.storage.schema import run_events, runs

_WRITERS: weakref.WeakKeyDictionary[sqlalchemy.Engine, threading.Lock] = weakref.WeakKeyDictionary()
_WRITERS_LOCK = threading.Lock()


def _sqlite_writer(engine: sqlalchemy.Engine) -> threading.Lock:
    """The lock the threads of this process take before writing to ``engine``."""
    with _WRITERS_LOCK:
        lock = _WRITERS.get(engine)
        if lock is None:
            lock = _WRITERS[engine] = threading.Lock()
        return lock


EVENT_BATCH = 500
"""The most events one read returns (a follower reads again for the rest)."""


class LeaseLost(RuntimeError):
    """This worker no longer owns the run: another worker claimed it after its lease
    expired, or it was cancelled while waiting. Nothing was written."""


@dataclass(frozen=True)
class NewEvent:
    """An event before it has its number."""

    source: EventSource
    kind: str
    payload: dict[str, Any]
    timestamp: str = ""


class RunStore:
    """``runs`` and ``run_events`` over a migrated SQLAlchemy engine."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    @contextlib.contextmanager
    def _begin(self) -> Iterator[sqlalchemy.Connection]:
        """A write transaction. On SQLite the threads of this process take turns first:
        SQLite admits one writer at a time and makes the others sleep and retry (its
        busy handler), which under many concurrent runs costs more than the writes."""
        if self.engine.dialect.name != "sqlite":
            with self.engine.begin() as connection:
                yield connection
            return
        with _sqlite_writer(self.engine), self.engine.begin() as connection:
            yield connection

    # --- creating and reading ----------------------------------------------------

    def create(
        self,
        run_id: str,
        *,
        kind: str,
        subject: str,
        title: str,
        owner: str,
        inputs: dict[str, Any],
    ) -> Run:
        now = datetime.now(UTC)
        with self._begin() as connection:
            connection.execute(
                runs.insert().values(
                    run_id=run_id,
                    kind=kind,
                    subject=subject,
                    title=title,
                    owner=owner,
                    status="queued",
                    inputs=inputs,
                    result=None,
                    error=None,
                    last_seq=0,
                    attempt=0,
                    cancel_requested=False,
                    worker="",
                    lease_until=0.0,
                    created_at=now,
                    updated_at=now,
                )
            )
        created = self.get(run_id)
        assert created is not None
        return created

    def get(self, run_id: str) -> Run | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(runs).where(runs.c.run_id == run_id)).first()
        return None if row is None else _run(row._mapping)

    def find(
        self,
        *,
        kind: str | None = None,
        subjects: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        limit: int = 50,
        oldest_first: bool = False,
    ) -> list[Run]:
        """The newest runs first (``oldest_first``: the oldest), filtered by kind, subject
        and status when given."""
        created = runs.c.created_at.asc() if oldest_first else runs.c.created_at.desc()
        query = select(runs).order_by(created, runs.c.run_id).limit(limit)
        if kind is not None:
            query = query.where(runs.c.kind == kind)
        if subjects is not None:
            query = query.where(runs.c.subject.in_(list(subjects)))
        if statuses is not None:
            query = query.where(runs.c.status.in_(list(statuses)))
        with self.engine.connect() as connection:
            return [_run(row._mapping) for row in connection.execute(query)]

    def events_after(self, run_id: str, seq: int, limit: int = EVENT_BATCH) -> list[Event]:
        query = (
            select(run_events)
            .where(run_events.c.run_id == run_id, run_events.c.seq > seq)
            .order_by(run_events.c.seq)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [
            Event(
                source=row.source,
                kind=row.kind,
                run_id=row.run_id,
                seq=row.seq,
                timestamp=row.timestamp,
                payload=row.payload if isinstance(row.payload, dict) else {},
            )
            for row in rows
        ]

    # --- the owner's writes ---------------------------------------------------------

    def claim(self, run_id: str, worker: str, lease_s: float) -> Run | None:
        """Give the run to ``worker`` when it is queued, or running with an expired
        lease; the run (status ``running``, ``attempt`` raised) or ``None`` when
        another worker has it, it was cancelled or it has settled."""
        now = time.time()
        with self._begin() as connection:
            claimed = connection.execute(
                update(runs)
                .where(
                    runs.c.run_id == run_id,
                    runs.c.cancel_requested.is_(False),
                    (runs.c.status == "queued")
                    | and_(runs.c.status == "running", runs.c.lease_until < now),
                )
                .values(
                    status="running",
                    attempt=runs.c.attempt + 1,
                    worker=worker,
                    lease_until=now + lease_s,
                    updated_at=datetime.now(UTC),
                )
            ).rowcount
        return self.get(run_id) if claimed == 1 else None

    def beat(self, run_id: str, attempt: int, lease_s: float) -> bool:
        """Extend the lease; True when someone asked to cancel the run.

        Raises ``LeaseLost`` when the run is no longer this attempt's."""
        with self._begin() as connection:
            row = connection.execute(
                update(runs)
                .where(_owned_by(run_id, attempt))
                .values(lease_until=time.time() + lease_s, updated_at=datetime.now(UTC))
                .returning(runs.c.cancel_requested)
            ).first()
        if row is None:
            raise LeaseLost(run_id)
        return bool(row[0])

    def append(self, run_id: str, attempt: int, events: Sequence[NewEvent]) -> list[Event]:
        """Number and write ``events`` (in order) for the attempt owning the run."""
        if not events:
            return []
        with self._begin() as connection:
            return self._write(connection, run_id, _owned_by(run_id, attempt), {}, events)

    def settle(
        self,
        run_id: str,
        attempt: int,
        status: RunStatus,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        events: Sequence[NewEvent] = (),
    ) -> list[Event]:
        """End the attempt: the run becomes ``status`` (finished, or ``waiting``), with
        its last events. Raises ``LeaseLost`` when the attempt no longer owns it."""
        values: dict[str, Any] = {
            "status": status,
            "result": result,
            "error": mask_secrets(error) if error else None,
            "worker": "",
            "lease_until": 0.0,
        }
        with self._begin() as connection:
            return self._write(connection, run_id, _owned_by(run_id, attempt), values, events)

    # --- anyone's writes -------------------------------------------------------------

    def transition(
        self,
        run_id: str,
        from_statuses: Sequence[str],
        values: dict[str, Any],
        event: NewEvent,
        *,
        expired_before: float | None = None,
        attempt: int | None = None,
    ) -> Event | None:
        """Move the run out of one of ``from_statuses`` with ``values`` and ``event``
        (only once its lease ended before ``expired_before``, or only while
        ``attempt`` owns it, when given); the event, or ``None`` when the run was not
        in such a state (someone else moved it)."""
        condition = and_(runs.c.run_id == run_id, runs.c.status.in_(list(from_statuses)))
        if expired_before is not None:
            condition = and_(condition, runs.c.lease_until < expired_before)
        if attempt is not None:
            condition = and_(condition, runs.c.attempt == attempt)
        with self._begin() as connection:
            try:
                written = self._write(connection, run_id, condition, values, [event])
            except LeaseLost:
                return None
        return written[0]

    def request_cancel(self, run_id: str) -> None:
        with self._begin() as connection:
            connection.execute(
                update(runs).where(runs.c.run_id == run_id).values(cancel_requested=True)
            )

    def expire_leases(self, worker: str) -> int:
        """End the leases held by ``worker`` (a process known to be dead) at once."""
        with self._begin() as connection:
            return connection.execute(
                update(runs)
                .where(runs.c.worker == worker, runs.c.status == "running")
                .values(lease_until=0.0)
            ).rowcount

    def queued_before(self, moment: datetime, limit: int = 200) -> list[Run]:
        """Runs queued and unchanged since before ``moment``, oldest first."""
        query = (
            select(runs)
            .where(runs.c.status == "queued", runs.c.updated_at < moment)
            .order_by(runs.c.created_at, runs.c.run_id)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            return [_run(row._mapping) for row in connection.execute(query)]

    def expired(self, now: float) -> list[Run]:
        """Running runs whose lease ended before ``now``: their worker is gone."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(runs).where(runs.c.status == "running", runs.c.lease_until < now)
            ).all()
        return [_run(row._mapping) for row in rows]

    def workers(self) -> list[str]:
        """The workers named by running runs (to find the dead ones of this host)."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(runs.c.worker).where(runs.c.status == "running").distinct()
            ).all()
        return [row[0] for row in rows if row[0]]

    # --- one numbered write ----------------------------------------------------------

    def _write(
        self,
        connection: sqlalchemy.Connection,
        run_id: str,
        condition: Any,
        values: dict[str, Any],
        events: Sequence[NewEvent],
    ) -> list[Event]:
        row = connection.execute(
            update(runs)
            .where(condition)
            .values(last_seq=runs.c.last_seq + len(events), updated_at=datetime.now(UTC), **values)
            .returning(runs.c.last_seq)
        ).first()
        if row is None:
            raise LeaseLost(run_id)
        first = row[0] - len(events) + 1
        written = [
            Event(
                event.source,
                event.kind,
                run_id,
                first + index,
                event.timestamp or utc_timestamp(),
                mask_secrets(dict(event.payload)),
            )
            for index, event in enumerate(events)
        ]
        if written:
            connection.execute(
                run_events.insert(),
                [
                    {
                        "run_id": run_id,
                        "seq": item.seq,
                        "source": item.source,
                        "kind": item.kind,
                        "timestamp": item.timestamp,
                        "payload": dict(item.payload),
                    }
                    for item in written
                ],
            )
        return written


def _owned_by(run_id: str, attempt: int) -> Any:
    return and_(runs.c.run_id == run_id, runs.c.attempt == attempt, runs.c.status == "running")


def _run(row: Any) -> Run:
    return Run(
        run_id=row["run_id"],
        kind=row["kind"],
        subject=row["subject"],
        title=row["title"],
        owner=row["owner"],
        status=row["status"],
        inputs=dict(row["inputs"] or {}),
        result=row["result"],
        error=row["error"],
        last_seq=row["last_seq"],
        attempt=row["attempt"],
        cancel_requested=bool(row["cancel_requested"]),
        worker=row["worker"],
        lease_until=float(row["lease_until"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
