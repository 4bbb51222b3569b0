"""One background-job runner: a long task in a worker thread, its events for a consumer.

    job = Job(lambda emit: desk.ask(question, on_event=emit), name="helpdesk-ask").start()
    for event in job.follow():          # blocks; ends when the task has ended
        show(event)
    answer = job.result()               # the task's value, or its exception re-raised

The producer is ``task(emit) -> result``: it calls ``emit(event)`` with
``keiri_agent.events.Event`` values, from any thread (the HelpDesk agent emits from
several worker threads at once). The job keeps every event, in the order received:

- ``events()`` — all so far (a late consumer, or a Streamlit rerun, replays them);
- ``follow(start)`` — the events from position ``start`` on as they arrive, until the
  task has ended and every event was delivered (or ``timeout`` seconds pass without
  one); ``next_events(start, timeout)`` is one step of it;
- ``events_after(seq)`` — the events numbered after ``seq`` (``Event.seq``), for a
  consumer that reconnects (the HTTP API's SSE ``Last-Event-ID``).

The outcome: ``done``, ``error`` (the exception the task raised, if any) and
``result()``. ``cancel()`` sets ``cancel_event``; cancellation is cooperative: a task
that can stop early passes ``job.cancel_event`` on (the Plan runner's
``cancel_event``); threads are never killed. All methods are thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from keiri_agent.events import Event, EventCallback

T = TypeVar("T")

Task = Callable[[EventCallback], T]


class JobNotDone(RuntimeError):
    """``result()`` was asked while the task was still running (a programming error)."""


class Job(Generic[T]):
    """A task running in a daemon worker thread; see the module docstring."""

    def __init__(self, task: Task[T], *, name: str = "keiri-job") -> None:
        self.name = name
        self.cancel_event = threading.Event()
        self._task = task
        self._events: list[Event] = []
        self._changed = threading.Condition()
        self._done = False
        self._result: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Job[T]:
        """Start the worker thread (once); returns the job.

        Separate from the constructor so that a task may refer to its own job
        (``job.cancel_event``) before it starts.
        """
        self._thread.start()
        return self

    # --- producer side ---------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        with self._changed:
            self._events.append(event)
            self._changed.notify_all()

    def _run(self) -> None:
        try:
            result = self._task(self._emit)
        except BaseException as error:  # kept for the consumer: result() re-raises it
            with self._changed:
                self._error = error
        else:
            with self._changed:
                self._result = result
        finally:
            with self._changed:
                self._done = True
                self._changed.notify_all()

    # --- consumer side ---------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the task has returned or raised."""
        with self._changed:
            return self._done

    @property
    def error(self) -> BaseException | None:
        """The exception the task raised (None while running or after a success)."""
        with self._changed:
            return self._error

    @property
    def cancel_requested(self) -> bool:
        """True once ``cancel()`` was called."""
        return self.cancel_event.is_set()

    def cancel(self) -> None:
        """Ask the task to stop (it sees ``cancel_event``); returns at once."""
        self.cancel_event.set()

    def result(self) -> T:
        """The task's return value; its exception re-raised; ``JobNotDone`` while running."""
        with self._changed:
            if not self._done:
                raise JobNotDone(f"job {self.name} is still running")
            if self._error is not None:
                raise self._error
            return self._result  # type: ignore[return-value]  # T may include None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the task has ended (or ``timeout`` seconds); True when it has."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done, timeout)

    def events(self) -> list[Event]:
        """Every event received so far, in order (a copy)."""
        with self._changed:
            return list(self._events)

    def events_after(self, seq: int) -> list[Event]:
        """The events numbered after ``seq``, in the order received."""
        with self._changed:
            return [event for event in self._events if event.seq > seq]

    def next_events(self, start: int, timeout: float | None = None) -> list[Event]:
        """The events from position ``start`` on; waits up to ``timeout`` seconds for one.

        Returns ``[]`` when the wait timed out, or when the task has ended and
        nothing is left after ``start``.
        """
        with self._changed:
            self._changed.wait_for(lambda: len(self._events) > start or self._done, timeout)
            return self._events[start:]

    def follow(self, start: int = 0, *, timeout: float | None = None) -> Iterator[Event]:
        """Yield the events from position ``start`` on as they arrive, until the task has
        ended and all were yielded, or ``timeout`` seconds passed without a new event."""
        position = start
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            batch = self.next_events(position, left)
            if batch:
                yield from batch
                position += len(batch)
                deadline = None if timeout is None else time.monotonic() + timeout
                continue
            if self.done and position >= len(self.events()):
                return
            if deadline is not None and time.monotonic() >= deadline:
                return
