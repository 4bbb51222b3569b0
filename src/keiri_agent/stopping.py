"""Stopping long reads whose caller stopped waiting (a Plan node timed out or was cancelled).

A block runs in a worker thread. When its node times out (or the run is cancelled) the
runner stops waiting and sets the attempt's cancel event; a block that checks
``ctx.check_cancelled()`` returns, but the readers it calls (a workbook, a PDF, a ZIP)
know nothing of blocks. So the runner installs the attempt's event for the thread that
runs the block (:func:`stop_on`), and the readers call :func:`check_stop` in their
per-row / per-page / per-entry loops: once the event is set, :class:`WorkStopped` ends
the read, and the abandoned thread stops burning CPU instead of parsing to the end.

``WorkStopped`` is a ``BaseException``: a reader's ``except Exception`` (turning a
parser's failure into a "damaged file" error) must not swallow it. Outside a block (the
analysis agent, HelpDesk indexing, tests) no event is installed and the checks cost
one thread-local lookup.
"""

from __future__ import annotations

import threading
from types import TracebackType

_installed = threading.local()


class WorkStopped(BaseException):
    """The caller stopped waiting for this work (see the module docstring)."""


class stop_on:
    """Make :func:`check_stop` in this thread raise once ``event`` is set.

    A class rather than a generator context manager: it is entered once per Plan
    node, and this form costs a third of ``contextlib.contextmanager``'s.
    """

    __slots__ = ("_event", "_previous")

    def __init__(self, event: threading.Event) -> None:
        self._event = event
        self._previous: threading.Event | None = None

    def __enter__(self) -> None:
        self._previous = getattr(_installed, "event", None)
        _installed.event = self._event

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        _installed.event = self._previous


def check_stop() -> None:
    """Raise :class:`WorkStopped` when this thread's work was asked to stop."""
    event = getattr(_installed, "event", None)
    if event is not None and event.is_set():
        raise WorkStopped
