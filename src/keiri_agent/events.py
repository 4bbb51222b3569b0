"""One typed event for every long piece of work: analysis turns, HelpDesk runs, Plan runs.

Every producer in the core reports progress as :class:`Event` values through an
:class:`EventEmitter`, which numbers them. Consumers (the CLI's progress lines, the
Streamlit pages, the HTTP API's server-sent events) read one shape whatever produced
them::

    Event(source="plan", kind="node_complete", run_id="run_1a2b…", seq=7,
          timestamp="2026-01-01T10:00:01.250Z", payload={"node_id": "parse", …})

- ``source`` says which part produced it (``analysis``, ``design``, ``helpdesk``,
  ``plan``, ``research``); ``kind`` is the part's own event name (the Plan runner's are listed in
  ``plans.run.run_log.EVENT_NAMES``).
- ``run_id`` is the run, turn or thread the event belongs to.
- ``seq`` increases by one per event of one ``run_id`` and never repeats, so a consumer
  that reconnects can ask for "everything after 41" (the API's ``Last-Event-ID``).
  A producer that continues an earlier run (a resumed Plan) starts its emitter after
  the last number it had used.
- ``payload`` holds plain JSON values only (str, int, float, bool, None, lists and
  dicts of them); producers summarise and mask secrets *before* emitting.

This module imports nothing of the project, so any layer can use it.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

EventSource = Literal["analysis", "design", "helpdesk", "plan", "research"]


def utc_timestamp(moment: dt.datetime | None = None) -> str:
    """``2026-01-01T10:00:01.250Z``: UTC, millisecond precision (now when no ``moment``)."""
    moment = dt.datetime.now(dt.UTC) if moment is None else moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Event:
    """One progress event of one run; immutable and JSON-serialisable (``to_dict``)."""

    source: EventSource
    kind: str
    run_id: str
    seq: int
    timestamp: str
    payload: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "kind", "run_id", "seq", "timestamp", "payload"}`` (a new dict)."""
        return {
            "source": self.source,
            "kind": self.kind,
            "run_id": self.run_id,
            "seq": self.seq,
            "timestamp": self.timestamp,
            "payload": dict(self.payload),
        }


EventCallback = Callable[[Event], None]
"""Receives events; may be called from worker threads (keep it quick and thread-safe)."""


class EventEmitter:
    """Numbers and timestamps the events of one run and hands them to a callback.

    Thread-safe: parallel branches of one run may emit at once; numbers stay unique
    and increasing in the order the callback receives them. ``start_after`` continues
    an earlier run's numbering (a resumed Plan run starts after its last event).
    """

    def __init__(
        self,
        source: EventSource,
        run_id: str,
        callback: EventCallback | None,
        *,
        start_after: int = 0,
    ) -> None:
        self.source: EventSource = source
        self.run_id = run_id
        self._callback = callback
        self._last_seq = start_after
        self.lock = threading.Lock()
        """Held while an event is numbered and delivered (``next_event``)."""

    @property
    def last_seq(self) -> int:
        """The number of the last event emitted (``start_after`` before the first)."""
        return self._last_seq

    def emit(self, kind: str, payload: Mapping[str, Any] | None = None) -> Event:
        """Build the next event and pass it to the callback (under the lock, so in order)."""
        return self.emit_owned(kind, dict(payload or {}))

    def emit_owned(self, kind: str, payload: dict[str, Any]) -> Event:
        """``emit`` for a payload dict the caller hands over (not copied: the caller
        must not change it afterwards)."""
        with self.lock:
            event = self.next_event(kind, payload)
            if self._callback is not None:
                self._callback(event)
        return event

    def next_unobserved(self) -> tuple[int, str]:
        """``(seq, timestamp)`` of the next event, for a caller that holds ``lock`` and
        whose events nobody observes (no callback): the number is used up, as by
        ``next_event``, without building the ``Event`` (a Plan run with no observer
        writes two log lines per node and nothing else reads them as events)."""
        self._last_seq += 1
        return self._last_seq, utc_timestamp()

    def next_event(self, kind: str, payload: dict[str, Any]) -> Event:
        """The next numbered event, for a caller that holds ``lock`` and delivers the
        event itself before releasing it (so events arrive in order); ``payload`` is
        handed over as in ``emit_owned``. A producer that writes each event out as it
        numbers it (the Plan run log) saves a call per event this way."""
        self._last_seq += 1
        return Event(
            source=self.source,
            kind=kind,
            run_id=self.run_id,
            seq=self._last_seq,
            timestamp=utc_timestamp(),
            payload=MappingProxyType(payload),
        )
