"""Plan runs that outlive a request: started or resumed in a worker thread, followed
from the run's files by any process on the host.

    runs = PlanRuns(engine)
    run_id = runs.start(plan, vars={"month": "2025-01"})        # returns once it runs
    result = runs.result(run_id)                                # paused: result.waiting
    runs.resume(run_id, answers={"collect": {"limit": 30000}})  # continues in a worker
    async for event in runs.follow(run_id, after=0):            # None = nothing new yet
        ...
    runs.recent({"invoice"}, limit=20)                          # newest first

- ``start`` / ``resume`` hand the engine's ``run`` / ``resume`` to a bounded pool of
  worker threads and return once the run's state on disk says ``running`` (so any
  reader sees it at once); an error before the run starts (an invalid plan, bad
  vars or answers, a run that is not resumable or is running elsewhere) is raised
  to the caller instead.
- A run paused at a ``ui.interactive_input`` node is only its state file
  (``runs/{plan_id}/{run_id}.state.json``): it waits there, across restarts, until
  ``resume`` brings the answers, from this process or another.
- ``follow(run_id, after)`` reads the run's JSONL run log (``plans.run.run_log``):
  line *n* is the event numbered *n* (one line per event; a resumed invocation
  appends after the last number), so the ``Last-Event-ID`` resume of the HTTP API
  is "the lines after line ``after``"; it ends once the run is finished or paused
  and every line was yielded (a later resume is a new stream from the last id). A
  run whose process died still says ``running`` until it is resumed (the runner's
  rule), so its stream only sends heartbeats until then.
- At most ``workers`` invocations execute at once; a further ``start``/``resume``
  waits for a free worker (the run id is made by the runner when it starts).
- ``cancel`` stops a run executing in this process (the engine's cancel event).
- ``recent`` lists a plan's runs from their state files (``runs/{plan_id}/``), the
  most recently updated first: run id, status, started and updated time. A state
  file that cannot be read is left out (and logged), so one damaged file does not
  hide the others.
- Answers may carry files in the bytes convention of ``services.jsonforms``
  (``{"name", "base64"}``, or ``{"bytes", "base64"}`` for bare bytes);
  ``decode_answers`` turns them into the file values ``{"name", "data"}`` (bytes)
  the input blocks take.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.events import Event, EventCallback
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.run.run_log import safe_path_part
from keiri_agent.plans.run.run_state import find_state, plan_from_dict, read_state
from keiri_agent.plans.run.runner import RunResult
from keiri_agent.services.jsonforms import decode_bytes

log = logging.getLogger(__name__)

PAUSED_OR_FINISHED = frozenset({"paused", "success", "failed", "cancelled"})
STARTUP_TIMEOUT_S = 30.0
"""How long ``start`` / ``resume`` wait for the run to record that it is running."""
_STARTUP_POLL_S = 0.01
RECENT_RUNS_LIMIT = 20
_STATE_SUFFIX = ".state.json"

Invocation = Callable[[EventCallback, threading.Event], RunResult]


class PlanRuns:
    """The Plan runs of one process over one ``PlanEngine`` (see the module docstring)."""

    def __init__(
        self, engine: PlanEngine, *, workers: int = 4, poll_interval_s: float = 0.2
    ) -> None:
        self.engine = engine
        self.poll_interval_s = poll_interval_s
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="plan-run")
        self._cancels: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    @property
    def runs_dir(self) -> Path:
        return self.engine.runner.runs_dir

    # --- starting, resuming, cancelling ------------------------------------------------

    def start(
        self,
        plan: Plan,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: Mapping[str, Any] | None = None,
    ) -> str:
        """Run ``plan`` in a worker; its run id once the run is recorded as running.

        Raises what the engine raises before a run starts (``PlanValidationError``,
        ``UserInputError`` for vars/answers).
        """
        checked = decode_answers(answers or {})

        def invoke(on_event: EventCallback, cancel: threading.Event) -> RunResult:
            return self.engine.run(
                plan, vars=vars, answers=checked, on_event=on_event, cancel_event=cancel
            )

        return self._launch(invoke)

    def resume(self, run_id: str, answers: Mapping[str, Any]) -> str:
        """Continue a paused (cancelled, interrupted) run in a worker with ``answers``.

        Raises ``UserInputError`` (unknown run, RUN_NOT_RESUMABLE) and
        ``RunInProgressError`` (running elsewhere) before anything changes.
        """
        self.state_file(run_id)  # a bad or unknown id fails here
        checked = decode_answers(answers)

        def invoke(on_event: EventCallback, cancel: threading.Event) -> RunResult:
            return self.engine.resume(
                run_id, answers=checked, on_event=on_event, cancel_event=cancel
            )

        return self._launch(invoke)

    def _launch(self, invoke: Invocation) -> str:
        cancel = threading.Event()
        started = threading.Event()
        first: list[str] = []

        def on_event(event: Event) -> None:
            if not first:
                first.append(event.run_id)
                with self._lock:
                    self._cancels[event.run_id] = cancel
                started.set()

        def work() -> RunResult:
            try:
                return invoke(on_event, cancel)
            except BaseException:
                if first:  # the run had started: its state and log say how it ended
                    log.exception("plan run %s failed", first[0])
                raise
            finally:
                started.set()
                if first:
                    with self._lock:
                        self._cancels.pop(first[0], None)

        future: Future[RunResult] = self._pool.submit(work)
        started.wait()
        if not first:  # it failed before its first event: the caller's error
            return future.result().run_id  # raises the engine's error
        run_id = first[0]
        self._wait_running(run_id, future)
        return run_id

    def _wait_running(self, run_id: str, future: Future[RunResult]) -> None:
        """Until the state on disk says running (it is saved just after the first
        event), or the invocation has ended."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not future.done() and time.monotonic() < deadline:
            try:
                if read_state(find_state(self.runs_dir, run_id)).status == "running":
                    return
            except UserInputError:
                pass  # not written yet
            time.sleep(_STARTUP_POLL_S)

    def cancel(self, run_id: str) -> bool:
        """Ask a run executing in this process to stop; False when it does not run here."""
        self.state_file(run_id)
        with self._lock:
            cancel = self._cancels.get(run_id)
        if cancel is None:
            return False
        cancel.set()
        return True

    # --- reading -----------------------------------------------------------------------

    def state_file(self, run_id: str) -> Path:
        """The run's state file; ``UserInputError`` for a malformed id, RUN_NOT_FOUND
        (without the server's folders) when there is no such run."""
        try:
            return find_state(self.runs_dir, run_id)
        except UserInputError as error:
            if "runs_dir" not in error.details:
                raise  # a malformed id
            raise UserInputError(
                f"実行 {run_id!r} が見つかりません",
                code="RUN_NOT_FOUND",
                hint="開始したときに返された実行 ID"
                "（run_1a2b3c4d5e6f のような形）を指定してください",
                details={"run_id": run_id},
            ) from None

    def result(self, run_id: str) -> RunResult:
        """The run as last saved: status, outputs, errors, the nodes waiting for input."""
        self.state_file(run_id)
        return self.engine.runner.result(run_id)

    def plan(self, run_id: str) -> Plan:
        """The plan saved with the run (read ``result`` first: it reports a damaged one)."""
        return plan_from_dict(read_state(self.state_file(run_id)).plan)

    def status(self, run_id: str) -> str:
        return read_state(self.state_file(run_id)).status

    def log_path(self, run_id: str) -> Path:
        state = read_state(self.state_file(run_id))
        return self.runs_dir / state.log_path

    def recent(self, plan_ids: Collection[str], limit: int = RECENT_RUNS_LIMIT) -> list[RunSummary]:
        """The runs of the plan known by ``plan_ids`` (its id in ``designs/`` and the id
        its YAML declares), most recently updated first, at most ``limit``."""
        return recent_runs(self.runs_dir, plan_ids, limit)

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[Event | None]:
        """The run's events numbered after ``after``, as the run log grows; ``None``
        when nothing new arrived for a poll interval. Ends once the run is paused or
        finished and every event was yielded."""
        path = await asyncio.to_thread(self.log_path, run_id)
        reader = RunLogReader(path, run_id)
        while True:
            status = await asyncio.to_thread(self.status, run_id)
            events = await asyncio.to_thread(reader.read)
            for event in events:
                if event.seq > after:
                    yield event
            if events:
                continue
            if status in PAUSED_OR_FINISHED:
                return
            await asyncio.sleep(self.poll_interval_s)
            yield None

    def close(self) -> None:
        """Cancel the runs of this process (each saves its state as cancelled)."""
        with self._lock:
            cancels = list(self._cancels.values())
        for cancel in cancels:
            cancel.set()
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class RunSummary:
    """One run in a plan's run list."""

    run_id: str
    plan_id: str
    status: str
    started_at: str
    updated_at: str


def recent_runs(
    runs_dir: Path, plan_ids: Collection[str], limit: int = RECENT_RUNS_LIMIT
) -> list[RunSummary]:
    """The runs of a plan from the state files in its folders under ``runs_dir``,
    most recently updated first, at most ``limit``.

    A run's folder is derived from its plan id (``safe_path_part``), and different
    ids can share one, so each state's own ``plan_id`` must be one of ``plan_ids``.
    Files are read newest first by modification time (a state is rewritten whenever
    it is saved), so a long history is not read in full.
    """
    candidates: dict[Path, float] = {}
    for plan_id in plan_ids:
        folder = runs_dir / safe_path_part(plan_id)
        if not folder.is_dir():
            continue
        for path in folder.glob(f"*{_STATE_SUFFIX}"):
            try:
                candidates[path] = path.stat().st_mtime
            except FileNotFoundError:  # removed meanwhile
                continue
    found: list[RunSummary] = []
    for path in sorted(candidates, key=lambda p: candidates[p], reverse=True):
        if len(found) >= limit:
            break
        if path.name.startswith("."):
            continue  # a state being written
        try:
            state = read_state(path)
        except UserInputError as error:
            log.warning("run list: skipping %s: %s", path, error)
            continue
        if state.plan_id in plan_ids:
            found.append(
                RunSummary(
                    state.run_id, state.plan_id, state.status, state.created_at, state.updated_at
                )
            )
    found.sort(key=lambda run: (run.updated_at, run.started_at, run.run_id), reverse=True)
    return found


class RunLogReader:
    """Reads the complete lines a run log gained since the last read, as ``Event`` values
    numbered by their line (a line still being written waits for the next read)."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self._offset = 0
        self._seq = 0

    def read(self) -> list[Event]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offset += end + 1
        events = []
        for raw in data[: end + 1].splitlines():
            if not raw.strip():
                continue
            self._seq += 1
            try:
                line = json.loads(raw)
            except ValueError:  # a line torn by a killed process: keep the numbering
                line = {"event": "unreadable_line"}
            events.append(event_of_line(line, self.run_id, self._seq))
        return events


def event_of_line(line: Mapping[str, Any], run_id: str, seq: int) -> Event:
    """The ``Event`` a run-log line was written from (the reverse of ``run_log.log_line``)."""
    payload = dict(line)
    kind = str(payload.pop("event", ""))
    timestamp = str(payload.pop("timestamp", ""))
    if payload.get("run_id") == run_id:
        del payload["run_id"]  # a subflow's events keep their nested run id
    if payload.get("node_id") is None:
        payload.pop("node_id", None)
    return Event("plan", kind, run_id, seq, timestamp, payload)


def decode_answers(answers: Mapping[str, Any]) -> dict[str, Any]:
    """Answers with files in the bytes convention (``{"name", "base64"}``) turned into
    file values ``{"name", "data"}``; other values as given.

    ``UserInputError`` ANSWER_FILE_INVALID for base64 that does not decode.
    """
    return {str(node): _decoded(node, value) for node, value in answers.items()}


def _decoded(node: str, value: Any) -> Any:
    if isinstance(value, Mapping):
        named = isinstance(value.get("name"), str)
        if "base64" in value and (named or set(value) <= {"bytes", "base64"}):
            name = str(value.get("name") or "")
            try:
                data = decode_bytes(value)
            except (ValueError, TypeError):
                raise UserInputError(
                    f"{node} のファイル「{name}」を読み取れません（base64 が正しくありません）",
                    code="ANSWER_FILE_INVALID",
                    hint="ファイルの中身を base64 で、bytes にはその大きさを送ってください",
                    details={"node_id": node, "name": name},
                ) from None
            if not named:
                return data
            rest = {k: v for k, v in value.items() if k not in ("base64", "bytes")}
            return {**rest, "data": data}
        return {str(key): _decoded(node, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decoded(node, item) for item in value]
    return value
