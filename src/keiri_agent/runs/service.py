"""The run service: every long task (research, Plan runs, HelpDesk asks, indexing,
analysis turns, Plan generation) started, executed, followed,
cancelled and recovered the same way, whatever process or machine executes it.

    service = RunService(store, kinds={"research": ResearchKind(...)}, dispatch=executor)
    run = service.start("research", subject=session_id, title=question, inputs={...})
    async for event in service.follow(run.run_id, after=0):  # None: nothing new yet
        ...
    service.cancel(run.run_id)

- ``start`` records the run ``queued`` and hands its id to ``dispatch`` (the
  in-process executor, or the job queue that ``keiri-agent worker`` processes read);
  it never executes inside the caller.
- ``execute(run_id)`` is what a worker calls: it claims the run (at most one worker
  owns a run at a time), runs its kind's executor with a heartbeat that extends the
  lease and reads the cancel flag, and settles the run with its outcome. A run whose
  worker died (its lease expired) is put back in the queue by ``recover`` and its
  kind continues it from its durable state (a Plan after its last settled node or
  loop item; research reuses the notes of the steps that finished).
- Events are numbered by the store as they are written, so a follower that
  reconnects with ``Last-Event-ID`` through any process gets no gap and no repeat.
  Events of runs executing in this process wake followers at once; others are
  polled every ``poll_interval_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from keiri_agent.errors import KeiriAgentError, UserInputError, error_category
from keiri_agent.events import Event, EventSource
from keiri_agent.masking import mask_secrets
from keiri_agent.runs.records import SETTLED, STATUS_JA, Run, RunStatus, run_not_found
from keiri_agent.runs.store import EVENT_BATCH, LeaseLost, NewEvent, RunStore

log = logging.getLogger(__name__)


def _pid_namespace() -> str:
    """This process's pid namespace (containers sharing a host name differ in it)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


WORKER = f"{socket.gethostname()}/{_pid_namespace()}:{os.getpid()}"
"""This process, as recorded in ``runs.worker`` while it executes a run: host name and
pid namespace, then pid — a process of the same host and namespace whose pid is gone
is known dead at once (``recover``)."""

SETTLED_POLL_MAX_S = 2.0
"""The longest pause between two reads of a run awaited by ``settled``."""

Dispatch = Callable[[str], None]
"""Hands a run id to whatever executes runs (``runs.executors``)."""


@dataclass(frozen=True)
class Timing:
    """How long a lease lasts, how often its owner renews it, how often followers of
    runs executing elsewhere poll (seconds)."""

    lease_s: float = 30.0
    heartbeat_s: float = 2.0
    poll_interval_s: float = 0.2


@dataclass
class Outcome:
    """How one attempt ended: a finished status, ``waiting`` for answers, or
    ``queued``: the run could not be worked on now (its state is held elsewhere for a
    moment) and goes back to the queue."""

    status: RunStatus
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass
class RunContext:
    """What a kind's executor gets besides the run: where its events go (numbered
    anew by the store) and the flag that asks it to stop."""

    run: Run
    on_event: Callable[[Event], None]
    cancel_event: threading.Event = field(default_factory=threading.Event)


class RunKind(Protocol):
    """One kind of run: its event source and how an attempt executes."""

    source: EventSource

    def execute(self, run: Run, context: RunContext) -> Outcome: ...


def new_run_id() -> str:
    """A new run id: ``run_`` and 12 hex digits."""
    return f"run_{uuid.uuid4().hex[:12]}"


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


class RunService:
    """Runs of every kind over one store (see the module docstring)."""

    def __init__(
        self,
        store: RunStore,
        kinds: Mapping[str, RunKind],
        *,
        dispatch: Dispatch | None = None,
        timing: Timing | None = None,
        worker: str = WORKER,
    ) -> None:
        self.store = store
        self.kinds = dict(kinds)
        self.dispatch: Dispatch = dispatch or (lambda run_id: None)
        self.timing = timing or Timing()
        self.worker = worker
        self._waiters = _Waiters()
        self._executing: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._closing = False

    # --- starting, cancelling, continuing -----------------------------------------

    def start(
        self,
        kind: str,
        *,
        subject: str,
        title: str,
        inputs: dict[str, Any],
        owner: str = "",
        run_id: str | None = None,
        first_events: Sequence[NewEvent] = (),
    ) -> Run:
        """Record a run (``queued``, with ``first_events``: why it started) and
        dispatch it; returns its record."""
        if kind not in self.kinds:
            raise ValueError(f"unknown run kind {kind!r}")
        run = self.store.create(
            run_id or new_run_id(),
            kind=kind,
            subject=subject,
            title=title,
            owner=owner,
            inputs=inputs,
        )
        for event in first_events:
            self.store.transition(run.run_id, ["queued"], {}, event)
        self._dispatch(run.run_id)
        return self.require(run.run_id)

    def _dispatch(self, run_id: str) -> None:
        """Hand the run over; when the queue cannot take it now, the run stays
        ``queued`` and the next recovery pass dispatches it."""
        try:
            self.dispatch(run_id)
        except KeiriAgentError as error:
            log.warning("run %s: not dispatched yet (%s); recovery will", run_id, error.code)

    def record_failed(
        self,
        kind: str,
        *,
        subject: str,
        title: str,
        error: dict[str, Any],
        first_events: Sequence[NewEvent] = (),
        owner: str = "",
    ) -> Run:
        """Record a run that could not start (a scheduled Plan that no longer loads):
        ``failed`` at once with its error, so the failure is seen where runs are."""
        run = self.store.create(
            new_run_id(), kind=kind, subject=subject, title=title, owner=owner, inputs={}
        )
        source = self.kinds[kind].source if kind in self.kinds else "plan"
        for event in first_events:
            self.store.transition(run.run_id, ["queued"], {}, event)
        payload = {"status": "failed", "error": error}
        failed = NewEvent(source, "failed", payload)
        self.store.transition(
            run.run_id, ["queued"], {"status": "failed", "error": mask_secrets(error)}, failed
        )
        return self.require(run.run_id)

    def get(self, run_id: str) -> Run | None:
        return self.store.get(run_id)

    def subject_owner(self, kind: str, subject: str) -> str | None:
        """Who made the conversation or session ``subject`` of ``kind`` (the owner of
        its first run: 管理者 continuing it does not take it over); None when no run has
        it yet."""
        found = self.store.find(kind=kind, subjects=[subject], limit=1, oldest_first=True)
        return found[0].owner if found else None

    def require(self, run_id: str) -> Run:
        """The run, or RUN_NOT_FOUND."""
        run = self.store.get(run_id)
        if run is None:
            raise run_not_found(run_id)
        return run

    def cancel(self, run_id: str) -> Run | None:
        """Ask the run to stop, from any process: a queued or waiting run is cancelled
        at once; a running one by its owner within a heartbeat."""
        run = self.store.get(run_id)
        if run is None or run.finished:
            return run
        self.store.request_cancel(run_id)
        source = self._source(run)
        self.store.transition(
            run_id,
            ["queued", "waiting"],
            {"status": "cancelled"},
            NewEvent(source, "cancelled", {"status": "cancelled"}),
        )
        with self._lock:
            local = self._executing.get(run_id)
        if local is not None:
            local.set()
        self._waiters.wake(run_id)
        return self.store.get(run_id)

    def continue_waiting(self, run_id: str) -> Run:
        """Put a ``waiting`` run back in the queue (its answers are stored by its kind)."""
        run = self.require(run_id)
        event = NewEvent(self._source(run), "run_continued", {})
        if self.store.transition(run_id, ["waiting"], {"status": "queued"}, event) is None:
            current = self.require(run_id)
            raise UserInputError(
                f"実行 {run_id} は入力を待っていないため、再開できません"
                f"（状態: {STATUS_JA.get(current.status, current.status)}）",
                code="RUN_NOT_RESUMABLE",
                hint="状態が「入力待ち」の実行だけに回答を送れます",
                details={"run_id": run_id, "status": current.status},
            )
        self._waiters.wake(run_id)
        self._dispatch(run_id)
        return self.require(run_id)

    def run_again(self, run_id: str, event: NewEvent) -> Run | None:
        """Put a settled run (finished, or waiting) back in the queue to execute again
        — a Plan run rerun from a step, whose kind has made its state ready — with
        ``event`` saying why; ``None`` when the run is not settled (another request
        moved it first). Its events continue its numbering."""
        values = {
            "status": "queued",
            "result": None,
            "error": None,
            "cancel_requested": False,
            "worker": "",
            "lease_until": 0.0,
        }
        if self.store.transition(run_id, [*SETTLED], values, event) is None:
            return None
        self._waiters.wake(run_id)
        self._dispatch(run_id)
        return self.require(run_id)

    # --- executing (what a worker calls) -------------------------------------------

    def execute(self, run_id: str) -> None:
        """Claim the run and execute one attempt of it; returns at once when another
        worker owns it or it has nothing left to do. Never raises for the run's own
        failure: the run's status and events say how it ended."""
        if self._closing:
            return  # this process stops: the run stays queued for the next one
        run = self.store.claim(run_id, self.worker, self.timing.lease_s)
        if run is None:
            self._cancel_if_asked(run_id, ["queued"])
            return
        kind = self.kinds.get(run.kind)
        cancel = threading.Event()
        with self._lock:
            self._executing[run_id] = cancel
        emitter = _Emitter(self, run)
        stop_beating = threading.Event()
        beater = threading.Thread(
            target=self._beat, args=(run, cancel, stop_beating), name=f"beat-{run_id}", daemon=True
        )
        beater.start()
        try:
            if kind is None:
                outcome = Outcome("failed", error=_unknown_kind(run.kind))
            else:
                outcome = self._attempt(kind, run, emitter, cancel)
            if emitter.lost:
                pass  # another worker owns the run now
            elif outcome.status == "queued":  # busy elsewhere for a moment: try again later
                self._release(run, emitter, reason="busy")
            elif outcome.status == "cancelled" and self._closing and not self._user_cancelled(run):
                self._release(run, emitter, reason="shutdown")
            else:
                self._settle(run, outcome, emitter)
        finally:
            stop_beating.set()
            beater.join()
            with self._lock:
                self._executing.pop(run_id, None)
            self._waiters.wake(run_id)

    def _attempt(
        self, kind: RunKind, run: Run, emitter: _Emitter, cancel: threading.Event
    ) -> Outcome:
        context = RunContext(run, emitter.forward, cancel)
        try:
            return kind.execute(run, context)
        except KeiriAgentError as error:
            return Outcome("failed", error={**error.to_dict(), "category": error_category(error)})
        except Exception as error:
            log.exception("%s run %s failed", run.kind, run.run_id)
            return Outcome("failed", error=_unexpected(error))

    def _settle(self, run: Run, outcome: Outcome, emitter: _Emitter) -> None:
        events: list[NewEvent] = []
        if outcome.status in ("failed", "cancelled"):
            payload: dict[str, Any] = {"status": outcome.status}
            if outcome.error is not None:
                payload["error"] = outcome.error
            events.append(NewEvent(emitter.source, outcome.status, payload))
        try:
            self.store.settle(
                run.run_id,
                run.attempt,
                outcome.status,
                result=outcome.result,
                error=outcome.error,
                events=events,
            )
        except LeaseLost:
            log.warning("run %s: lease lost before it settled", run.run_id)
            return
        if outcome.status == "waiting":
            self._cancel_if_asked(run.run_id, ["waiting"])

    def _cancel_if_asked(self, run_id: str, statuses: list[str]) -> None:
        """A run that stopped in ``statuses`` after someone asked to cancel it (the
        ask came while it was running) ends ``cancelled`` now."""
        current = self.store.get(run_id)
        if current is None or not current.cancel_requested or current.status not in statuses:
            return
        event = NewEvent(self._source(current), "cancelled", {"status": "cancelled"})
        self.store.transition(run_id, statuses, {"status": "cancelled"}, event)
        self._waiters.wake(run_id)

    def _user_cancelled(self, run: Run) -> bool:
        current = self.store.get(run.run_id)
        return current is None or current.cancel_requested

    def _release(self, run: Run, emitter: _Emitter, *, reason: str) -> None:
        """The run goes back to the queue, not cancelled by anyone: this process is
        shutting down (``shutdown``: the next process or another worker continues it),
        or its state is held by another invocation for a moment (``busy``)."""
        event = NewEvent(emitter.source, "run_requeued", {"attempt": run.attempt, "reason": reason})
        values = {"status": "queued", "worker": "", "lease_until": 0.0}
        if self.store.transition(run.run_id, ["running"], values, event, attempt=run.attempt):
            log.info("run %s: queued again (%s)", run.run_id, reason)
            self._cancel_if_asked(run.run_id, ["queued"])
            if reason == "shutdown":
                self._dispatch(run.run_id)  # another worker may take it at once

    def _beat(self, run: Run, cancel: threading.Event, stop: threading.Event) -> None:
        while not stop.wait(self.timing.heartbeat_s):
            try:
                if self.store.beat(run.run_id, run.attempt, self.timing.lease_s):
                    cancel.set()
            except LeaseLost:
                log.warning("run %s: lease lost (attempt %d)", run.run_id, run.attempt)
                cancel.set()
                return
            except KeiriAgentError as error:  # the store is out of reach: try again
                log.warning("run %s: heartbeat failed: %s", run.run_id, error.code)
            except Exception:  # never let the beat die while the run goes on
                log.exception("run %s: heartbeat failed", run.run_id)

    # --- following ------------------------------------------------------------------

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[Event | None]:
        """The run's events after ``after`` as they are stored; ``None`` when nothing
        arrived for a poll interval (the SSE layer sends heartbeats on those). Ends
        once the run has settled (finished or waiting) and every event was yielded."""
        entry = self._waiters.add(run_id)
        _, flag = entry
        position = after
        try:
            while True:
                flag.clear()
                run = await asyncio.to_thread(self.store.get, run_id)
                events = await asyncio.to_thread(self.store.events_after, run_id, position)
                for event in events:
                    position = event.seq
                    yield event
                if len(events) == EVENT_BATCH:
                    continue
                if run is None or (run.settled and not events):
                    return
                if not events:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(flag.wait(), self.timing.poll_interval_s)
                    if not flag.is_set():
                        yield None
        finally:
            self._waiters.remove(run_id, entry)

    async def settled(self, run_id: str) -> Run:
        """Wait until the run has settled (finished or waiting); its record. Reads only
        the run (not its events): woken at once when this process settles it; a run
        executed elsewhere is polled, every poll interval at first, then less often
        (up to ``SETTLED_POLL_MAX_S``: hundreds of waiting requests must not keep the
        database busy)."""
        entry = self._waiters.add(run_id)
        _, flag = entry
        interval = self.timing.poll_interval_s
        try:
            while True:
                flag.clear()
                run = await asyncio.to_thread(self.require, run_id)
                if run.settled:
                    return run
                try:
                    await asyncio.wait_for(flag.wait(), interval)
                except TimeoutError:
                    interval = min(interval * 2, max(SETTLED_POLL_MAX_S, interval))
        finally:
            self._waiters.remove(run_id, entry)

    def next_events(self, run_id: str, after: int, timeout: float | None = None) -> list[Event]:
        """For a synchronous follower (a Streamlit page): the run's events after
        ``after``, waiting up to ``timeout`` seconds for one (polling the store every
        poll interval). ``[]`` when the wait timed out, or when the run has settled
        and nothing is left after ``after``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            run = self.store.get(run_id)
            events = self.store.events_after(run_id, after)
            if events or run is None or run.settled:
                return events
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return []
            pause = self.timing.poll_interval_s
            time.sleep(pause if left is None else min(pause, left))

    # --- recovery -------------------------------------------------------------------

    def recover(self) -> list[str]:
        """Put back in the queue the runs whose worker is gone (lease expired; a dead
        process of this host at once) and dispatch them; their ids."""
        self._expire_dead_local_workers()
        requeued = []
        now = time.time()
        for run in self.store.expired(now):
            with self._lock:
                if run.run_id in self._executing:
                    continue
            if run.cancel_requested:  # asked to stop before its worker died
                event = NewEvent(self._source(run), "cancelled", {"status": "cancelled"})
                values: dict[str, Any] = {"status": "cancelled", "worker": ""}
            else:
                payload = {"attempt": run.attempt, "reason": "worker_lost"}
                event = NewEvent(self._source(run), "run_requeued", payload)
                values = {"status": "queued", "worker": ""}
            if self.store.transition(run.run_id, ["running"], values, event, expired_before=now):
                log.warning("run %s: its worker %s is gone; queued again", run.run_id, run.worker)
                requeued.append(run.run_id)
                self._waiters.wake(run.run_id)
        for run_id in requeued:
            self._dispatch(run_id)
        stale = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=self.timing.lease_s / 2)
        for run in self.store.queued_before(stale):
            if run.cancel_requested:
                self._cancel_if_asked(run.run_id, ["queued"])
            else:
                self._dispatch(run.run_id)  # its dispatch was lost, or its process died
        return requeued

    def _expire_dead_local_workers(self) -> None:
        import psutil

        host = self.worker.rsplit(":", 1)[0]
        for worker in self.store.workers():
            name, _, pid = worker.rpartition(":")
            if name != host or worker == self.worker or not (pid.isascii() and pid.isdigit()):
                continue
            if not psutil.pid_exists(int(pid)):
                self.store.expire_leases(worker)

    def wake(self, run_id: str) -> None:
        self._waiters.wake(run_id)

    def shutdown(self) -> None:
        """This process stops: the runs it executes stop and go back to the queue."""
        self._closing = True
        with self._lock:
            flags = list(self._executing.values())
        for flag in flags:
            flag.set()

    def _source(self, run: Run) -> EventSource:
        kind = self.kinds.get(run.kind)
        return kind.source if kind is not None else "plan"


class _Emitter:
    """Writes an attempt's events to the store, numbered there, and wakes followers;
    once the lease is lost it writes nothing more and asks the attempt to stop."""

    def __init__(self, service: RunService, run: Run) -> None:
        self.service = service
        self.run = run
        self.source = service._source(run)
        self.lost = False
        self._lock = threading.Lock()

    def forward(self, event: Event) -> None:
        """An event of the kind's executor (its own numbering is replaced)."""
        self._append(NewEvent(event.source, event.kind, dict(event.payload), event.timestamp))

    def _append(self, event: NewEvent) -> None:
        with self._lock:
            if self.lost:
                return
            try:
                self.service.store.append(self.run.run_id, self.run.attempt, [event])
            except LeaseLost:
                self.lost = True
                with self.service._lock:
                    flag = self.service._executing.get(self.run.run_id)
                if flag is not None:
                    flag.set()
                return
        self.service._waiters.wake(self.run.run_id)


def _unknown_kind(kind: str) -> dict[str, Any]:
    return {
        "code": "RUN_KIND_UNKNOWN",
        "message": f"この実行の種類「{kind}」を、このバージョンの keiri-agent は実行できません",
        "hint": "keiri-agent を最新版に更新してください",
        "details": {"kind": kind},
    }


def _unexpected(error: Exception) -> dict[str, Any]:
    return {
        "code": "RUN_FAILED",
        "category": "internal",
        "message": "実行中に予期しないエラーが発生しました",
        "hint": "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください",
        "details": {"type": type(error).__name__},
    }
