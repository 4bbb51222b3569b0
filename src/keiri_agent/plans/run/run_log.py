"""The structured run log (seed 002 §8.4): JSONL events, summarised and with secrets masked.

One file per run, ``runs/{plan_id}/{timestamp}-{run_id}.jsonl`` (timestamp like
``20250101T100000Z``); a resumed or re-run invocation appends to the same file, and
the events of a subflow go to its parent's file under the subflow's own run id.
Every line is one JSON object::

    {"event": "node_complete", "run_id": "run_1a2b3c4d5e6f", "plan_id": "invoice",
     "node_id": "parse", "timestamp": "2025-01-01T10:00:01.250Z",
     "block": "file.parse_zip", "attempt": 1, "outputs": {"evidence": {...}},
     "duration_ms": 15.2}

Events (``EVENT_NAMES``) and their fields besides the common ones:

==================  ================================================================
``plan_start``      ``plan_version``, ``vars``; subflows: ``parent_run_id``
``plan_resumed``    ``mode`` (``resume`` | ``rerun``), ``from_node`` (rerun)
``node_start``      ``block`` (or ``type``: loop/subflow), ``attempt``
``node_complete``   ``outputs``, ``duration_ms``, ``attempt``
``node_skipped``    ``reason`` (``when_condition_false``), ``condition``
``loop_iteration``  ``iteration``; foreach: ``item``
``node_error``      ``error`` (``BlockError.to_dict()``), ``attempt``, ``retry`` (retries
                    done before this attempt), ``will_retry``
``node_waiting``    ``block``, ``request`` (what the human is asked)
``plan_paused``     ``waiting`` (node ids), ``total_duration_ms``
``plan_complete``   ``status``, ``total_duration_ms``, ``errors`` (count)
==================  ================================================================

Node events of a node with a ``title`` in the Plan also carry that ``title``.

Node ids of nodes inside loop bodies and subflows are paths from the top plan:
``each_file[3]/analyze``, ``validate/check``. Values are summarised (strings over 200
characters cut, long lists shortened with their count, bytes as ``<bytes n>``, depth
limited) and secrets masked (see ``sanitize`` and ``keiri_agent.masking``).

The ``on_event`` callback receives each event, in log order, as the shared
``keiri_agent.events.Event``: ``source="plan"``, ``kind`` the event name, ``run_id``
the top-level run, ``seq`` numbered across every invocation of the run (a resume
continues after the last number, kept in the run state), and ``payload`` the
line's other fields (``plan_id``, ``node_id`` when set, the event's own fields; a
subflow's events also carry their nested ``run_id``). ``log_line(event)`` gives
the JSONL line back.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import os
import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from keiri_agent.events import Event, EventCallback, EventEmitter
from keiri_agent.masking import MASK, is_secret_key, mask_text
from keiri_agent.private import private_dir, private_opener

_LOGGER = logging.getLogger(__name__)

EVENT_NAMES: Final = (
    "plan_start",
    "plan_resumed",
    "node_start",
    "node_complete",
    "node_skipped",
    "loop_iteration",
    "node_error",
    "node_waiting",
    "plan_paused",
    "plan_complete",
)

MAX_TEXT: Final = 200
MAX_ITEMS: Final = 5
MAX_KEYS: Final = 30
MAX_DEPTH: Final = 6
_PASS = frozenset({type(None), bool, int})


def sanitize(value: Any, *, depth: int = 0, max_depth: int = MAX_DEPTH) -> Any:
    """A JSON-compatible summary of ``value`` that is safe to log.

    Strings over 200 characters keep their start and say their length; lists keep
    their first 5 items and say their count; mappings keep 30 keys; bytes become
    ``<bytes n>``; containers deeper than ``max_depth`` become ``<dict n keys>`` /
    ``<list n items>``; dates become ISO text; other objects ``<TypeName>``. Values
    under secret-looking keys become ``***`` and key-like text is masked.
    """
    kind = type(value)
    if kind in _PASS:
        return value
    if kind is float:
        return value if math.isfinite(value) else str(value)
    if kind is dict:
        return _sanitize_mapping(value, depth, max_depth)
    if kind is str or isinstance(value, str):
        text = mask_text(value)
        if len(text) > MAX_TEXT:
            return f"{text[:MAX_TEXT]}… <{len(value)} chars>"
        return text
    if isinstance(value, Mapping):
        return _sanitize_mapping(value, depth, max_depth)
    if isinstance(value, list | tuple | set | frozenset):
        return _sanitize_items(value, depth, max_depth)
    return _scalar_summary(value)


def _scalar_summary(value: Any) -> Any:
    """The loggable form of a value that is neither text nor a container."""
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<bytes {len(value)}>"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return f"<{type(value).__name__}>"


def _sanitize_mapping(value: Mapping[Any, Any], depth: int, max_depth: int) -> Any:
    if depth >= max_depth:
        return f"<dict {len(value)} keys>"
    result: dict[str, Any] = {}
    for index, (key, item) in enumerate(value.items()):
        if index >= MAX_KEYS:
            result["…"] = f"<{len(value) - MAX_KEYS} more keys>"
            break
        name = str(key)
        if item is not None and is_secret_key(name):
            result[name] = MASK
        else:
            result[name] = sanitize(item, depth=depth + 1, max_depth=max_depth)
    return result


def _sanitize_items(value: Any, depth: int, max_depth: int) -> Any:
    items = value if isinstance(value, list) else list(value)
    if depth >= max_depth:
        return f"<list {len(items)} items>"
    shown = [sanitize(item, depth=depth + 1, max_depth=max_depth) for item in items[:MAX_ITEMS]]
    if len(items) > MAX_ITEMS:
        shown.append(f"<{len(items) - MAX_ITEMS} more, {len(items)} items>")
    return shown


def safe_path_part(plan_id: str) -> Path:
    """``plan_id`` as a relative folder (``common/validation``, ``経理/月次`` keep theirs).

    Letters and digits of any script are kept (Japanese plan ids give readable,
    distinct folders); anything else that could be a path trick becomes ``_``.
    Runs are found by their run id, so the folder is only for people browsing.
    """
    parts = [re.sub(r"[^\w.\-]", "_", part) for part in plan_id.split("/")]
    parts = [part for part in parts if part.strip(".") not in ("",)]
    return Path(*parts) if parts else Path("_")


def log_path_for(
    runs_dir: Path, plan_id: str, run_id: str, moment: dt.datetime | None = None
) -> Path:
    """``runs_dir/{plan_id}/{20250101T100000Z}-{run_id}.jsonl``."""
    return runs_dir / log_relative_path(plan_id, run_id, moment)


def log_relative_path(plan_id: str, run_id: str, moment: dt.datetime | None = None) -> str:
    """``{plan_id}/{20250101T100000Z}-{run_id}.jsonl``, relative to ``runs_dir``."""
    moment = (moment or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    name = f"{moment:%Y%m%dT%H%M%SZ}-{run_id}.jsonl"
    return (safe_path_part(plan_id) / name).as_posix()


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
_encode = _ENCODER.encode
"""The JSON text of a sanitised value."""


_encode_text = json.encoder.encode_basestring
"""``_encode`` of a str (the C function ``_ENCODER`` uses for text: not ASCII-only)."""
FLUSH_INTERVAL_S = 0.1
_FLUSH_AT_ONCE = frozenset(
    {"plan_start", "plan_resumed", "node_error", "node_waiting", "plan_paused", "plan_complete"}
)


class RunLog:
    """Appends sanitised events to a JSONL file (thread-safe) and forwards them.

    Events are numbered by one ``EventEmitter`` for the top-level run ``run_id``
    (``start_after``: the last number an earlier invocation used). Lines reach the
    file at once for plan events, errors and waits, and otherwise within
    ``FLUSH_INTERVAL_S`` (a flush per node event would cost the scheduler more than
    the event), by the next line or by a timer when no line follows (a long block);
    ``close()`` flushes everything.
    """

    def __init__(
        self,
        path: Path,
        *,
        run_id: str,
        on_event: EventCallback | None = None,
        start_after: int = 0,
    ) -> None:
        self.path = path
        self._on_event = on_event
        self._emitter = EventEmitter("plan", run_id, self._deliver, start_after=start_after)
        private_dir(path.parent)
        # readable by its owner only, like the run state (it holds business data)
        self._file = open(path, "a", encoding="utf-8", opener=private_opener)  # noqa: SIM115
        self._flushed = time.monotonic()
        self._armed = False
        """A late flush is due (``_LATE``; armed under the emitter's lock)."""
        self._heads: dict[tuple[str, str, str], str] = {}

    @property
    def last_seq(self) -> int:
        """The number of the last event emitted (what the next invocation starts after)."""
        return self._emitter.last_seq

    def emit(
        self, event: str, *, run_id: str, plan_id: str, node_id: str | None = None, **data: Any
    ) -> None:
        """Write one event line and call ``on_event`` with it, in log order.

        ``run_id`` is the run the event belongs to (a subflow's nested run id for its
        events). A failing callback is logged (``keiri_agent.plans.run.run_log``) and
        does not stop the run: observers must not change the outcome of a plan.
        """
        self.emit_fields(event, run_id, plan_id, node_id, data)

    def emit_fields(
        self,
        event: str,
        run_id: str,
        plan_id: str,
        node_id: str | None,
        data: Mapping[str, Any],
    ) -> None:
        """``emit`` with the event's own fields as a mapping (read, not kept)."""
        fields: dict[str, Any] = {}
        shared: list[str] | None = None
        """Fields holding the caller's own dict (copied only if the fields are kept)."""
        for name, value in data.items():  # ``sanitize(data)`` without building a dict
            kind = type(value)
            if value is not None and _SECRET_NAMES.get(name, True) and _secret_name(name):
                fields[name] = MASK
            elif kind in _PASS or (kind is float and math.isfinite(value)):
                # None, bool, int, a finite float: nothing to summarise
                fields[name] = value
            elif kind is dict and _plain(value):
                fields[name] = value  # ``sanitize`` returns a copy of it: made below if kept
                shared = [name] if shared is None else [*shared, name]
            else:
                fields[name] = sanitize(value, depth=1, max_depth=MAX_DEPTH + 1)
        emitter = self._emitter
        if _LINE_CLASH.isdisjoint(fields):
            # the line's JSON built here, off the emitter's lock: the head (event, run,
            # plan) is cached, the fields are encoded once, the timestamp spliced in
            head = self._heads.get((event, run_id, plan_id))
            if head is None:
                head = _encode({"event": event, "run_id": run_id, "plan_id": plan_id})
                head = self._heads.setdefault((event, run_id, plan_id), head[:-1])
            if node_id is not None:
                head = f'{head}, "node_id": {_encode_text(node_id)}, "timestamp": "'
            else:
                head = f'{head}, "timestamp": "'
            tail = f'", {_encode(fields)[1:]}\n' if fields else '"}\n'
            if self._on_event is None:  # nobody observes the Event: only the line is made
                with emitter.lock:  # numbered and written in one go: lines stay in order
                    timestamp = emitter.next_unobserved()[1]
                    self._write_line(event, f"{head}{timestamp}{tail}")
                return
            if shared is not None:
                _copy(fields, shared)
            payload = self._payload(run_id, plan_id, node_id)
            payload.update(fields)
            with emitter.lock:
                done = emitter.next_event(event, payload)
                self._write_line(event, f"{head}{done.timestamp}{tail}")
                self._observe(done)
            return
        if shared is not None:
            _copy(fields, shared)
        payload = self._payload(run_id, plan_id, node_id)
        payload.update(fields)
        emitter.emit_owned(event, payload)

    def _payload(self, run_id: str, plan_id: str, node_id: str | None) -> dict[str, Any]:
        """An event's payload before its own fields (``run_id`` only when nested)."""
        if run_id != self._emitter.run_id:
            payload: dict[str, Any] = {"run_id": run_id, "plan_id": plan_id}
        else:
            payload = {"plan_id": plan_id}
        if node_id is not None:
            payload["node_id"] = node_id
        return payload

    def _deliver(self, event: Event) -> None:
        """The emitter's callback (called under its lock, so lines stay in order)."""
        self._write_line(event.kind, _ENCODER.encode(log_line(event)) + "\n")
        self._observe(event)

    def _write_line(self, kind: str, line: str) -> None:
        if not self._file.closed:
            self._file.write(line)
            now = time.monotonic()
            if kind in _FLUSH_AT_ONCE or now - self._flushed >= FLUSH_INTERVAL_S:
                self._file.flush()
                self._flushed = now
            elif not self._armed:
                self._armed = True
                _LATE.arm(self)

    def _flush_late(self) -> None:
        """Flush what the last lines left in the buffer (``_LATE``'s thread calls it)."""
        with self._emitter.lock:
            self._armed = False
            if not self._file.closed:
                self._file.flush()
                self._flushed = time.monotonic()

    def _observe(self, event: Event) -> None:
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                _LOGGER.exception("on_event callback failed on %s", event.kind)

    def close(self) -> None:
        """Close the file; later events still reach ``on_event`` but are not written."""
        with self._emitter.lock:
            self._file.close()  # a late flush still due finds it closed

    def __enter__(self) -> RunLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _LateFlushes:
    """One daemon thread that flushes every run log's lines no later line flushed,
    ``FLUSH_INTERVAL_S`` after they were written.

    A ``threading.Timer`` per arming would start a thread each time, and starting one
    waits until the new thread runs (≈ 1 ms, more when the machine is busy), on the
    scheduler's thread. Deadlines come in time order (one interval after arming).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: deque[tuple[float, RunLog]] = deque()
        self._thread: threading.Thread | None = None

    def arm(self, log: RunLog) -> None:
        """Flush ``log`` one interval from now."""
        with self._cond:
            self._due.append((time.monotonic() + FLUSH_INTERVAL_S, log))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="plan-log-flush", daemon=True
                )
                self._thread.start()
            elif len(self._due) == 1:  # else the thread waits for an earlier deadline
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due:
                    self._cond.wait()
                due, log = self._due[0]
                delay = due - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                self._due.popleft()
            try:
                log._flush_late()
            except Exception:  # a full disk: that log's next line or close() reports it
                _LOGGER.warning("late flush of a run log failed", exc_info=True)

    def after_fork(self) -> None:
        """In a forked child: no thread yet (the parent's is not there)."""
        self._cond = threading.Condition(threading.Lock())
        self._due = deque()
        self._thread = None


_LATE = _LateFlushes()
os.register_at_fork(after_in_child=_LATE.after_fork)


def _copy(fields: dict[str, Any], names: list[str]) -> None:
    """Replace the caller's dicts under ``names`` by copies (an event keeps its fields)."""
    for name in names:
        fields[name] = dict(fields[name])


_LINE_HEAD = frozenset({"run_id", "plan_id", "node_id"})
_LINE_CLASH = frozenset({"event", "run_id", "plan_id", "node_id", "timestamp"})
"""Field names that would replace a head field of the line (then built by ``log_line``)."""

_SECRET_NAMES: dict[str, bool] = {}


def _secret_name(name: str) -> bool:
    """``is_secret_key``, remembered per field name (events use a handful of names)."""
    secret = _SECRET_NAMES.get(name)
    if secret is None:
        secret = _SECRET_NAMES[name] = is_secret_key(name)
    return secret


def _plain(value: dict[Any, Any]) -> bool:
    """True when ``sanitize`` would return a copy of ``value`` as it is: at most
    ``MAX_KEYS`` text keys, none secret-looking, whose values are None, bool, int or
    finite floats (a node's outputs are often just that)."""
    if len(value) > MAX_KEYS:
        return False
    for key, item in value.items():
        kind = type(key)
        if kind is not str or (_SECRET_NAMES.get(key, True) and _secret_name(key)):
            return False
        kind = type(item)
        if not (kind in _PASS or (kind is float and math.isfinite(item))):
            return False
    return True


def log_line(event: Event) -> dict[str, Any]:
    """The JSONL line of a run event: ``{"event", "run_id", "plan_id", "node_id"?,
    "timestamp", **fields}`` (``run_id``: the nested run's for a subflow's events)."""
    payload = event.payload
    line: dict[str, Any] = {
        "event": event.kind,
        "run_id": payload.get("run_id", event.run_id),
        "plan_id": payload.get("plan_id"),
    }
    node_id = payload.get("node_id")
    if node_id is not None:
        line["node_id"] = node_id
    line["timestamp"] = event.timestamp
    for name, value in payload.items():
        if name not in _LINE_HEAD:
            line[name] = value
    return line


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every event of a run log, in order.

    A torn last line (a process killed mid-write) is ignored; a bad line elsewhere
    raises ``ValueError`` naming its line number.
    """
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):
                break
            raise ValueError(f"{path}: line {number} is not JSON ({exc.msg})") from exc
    return events
