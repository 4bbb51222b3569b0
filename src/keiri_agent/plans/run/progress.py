"""Saving a run's progress as it goes, so a crash loses (almost) nothing that finished.

The scheduler calls ``ProgressSaver.node_finished()`` every time a node settles (at
any depth: a top-level node, a node inside a loop iteration or a subflow) and the
loop step calls it when an iteration ends. Each call saves the whole run state
atomically (``run_state.save_state``: a temporary file, then ``os.replace``), so the
state file on disk is always a whole, earlier-or-current copy.

What it costs, and the one compromise: a save encodes the whole state, so its cost
grows with the run. A save is therefore written at once unless the previous one was
written less than ``RATIO`` × (what the previous save cost) ago — then it is
coalesced and written by a background flusher at the end of that gap (never later
than ``MAX_GAP_S``). Saving thus costs at most about 1/``RATIO`` of the run's wall
time, and a ``kill -9`` can lose only what finished within that gap (for a small
state a fraction of a millisecond; a node that finished earlier never runs again).
Cancellation (Ctrl-C, SIGTERM) and every end of an invocation save synchronously.

No ``fsync``: ``os.replace`` is atomic for a crash of the process (the page cache
outlives it); after a power loss the file is an earlier whole copy or, on a file
system without ordered writes, possibly empty — which ``read_state`` reports as a
damaged state (``RUN_STATE_CORRUPT``) with what to do.

Nodes finish on worker threads while the state is being encoded: an encoding that
meets a dictionary another thread is changing is simply tried again (the next
completion saves anyway).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from keiri_agent.errors import KeiriAgentError
from keiri_agent.plans.run.run_services import WORKERS
from keiri_agent.plans.run.run_state import RunState, save_state

RATIO = 20.0
"""Saving may take at most about 1/RATIO of the run's wall time."""
MAX_GAP_S = 2.0
"""A finished node is on disk at most this long after it finished (huge states)."""
_ATTEMPTS = 5
_LOGGER = logging.getLogger(__name__)


class ProgressSaver:
    """Saves ``state`` under ``runs_dir`` on node/iteration completion (thread-safe).

    A completion never waits for another thread's save: while one is being written,
    later completions are marked and the flusher writes them right after it.
    """

    def __init__(self, runs_dir: Path, state: RunState) -> None:
        self.runs_dir = runs_dir
        self.state = state
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._next_at = 0.0
        self._dirty = False
        self._saving = False
        self._closed = False
        self._flusher = False
        """The flusher runs (on a ``WORKERS`` thread: no thread start per run)."""

    def node_finished(self) -> None:
        """A node or a loop iteration finished: save now, or within the coalescing gap."""
        if self._dirty:
            # A save is already due and has not started (starting it clears the flag
            # before it reads the state): it will hold this completion too. Read
            # without the lock, which every node would otherwise take.
            return
        with self._lock:
            if self._closed:
                return
            if self._saving or time.monotonic() < self._next_at:
                if not self._flusher:
                    self._flusher = True
                    WORKERS.submit(self._flush_loop)
                elif not self._dirty:
                    # Already dirty: the flusher waits for the gap's end or for the
                    # save in flight, which wake it anyway. Waking it on every node
                    # would cost a thread switch per node.
                    self._wake.notify_all()
                self._dirty = True
                return
            self._saving, self._dirty = True, False
        self._save(strict=False)

    def save_now(self) -> None:
        """Save at once (the invocation starts or ends); errors reach the caller."""
        with self._lock:
            while self._saving:
                self._wake.wait()
            self._saving, self._dirty = True, False
        self._save(strict=True)

    def close(self) -> None:
        """Stop the flusher and wait for a save in flight: nothing is saved after this
        returns (the caller saves last)."""
        with self._lock:
            self._closed = True
            self._wake.notify_all()
            while self._flusher or self._saving:
                self._wake.wait()

    def _flush_loop(self) -> None:
        try:
            self._flush_until_closed()
        finally:
            with self._lock:
                self._flusher = False
                self._wake.notify_all()  # ``close`` waits for this

    def _flush_until_closed(self) -> None:
        while True:
            with self._lock:
                while not self._closed:
                    delay = self._next_at - time.monotonic()
                    if self._dirty and not self._saving and delay <= 0:
                        break
                    self._wake.wait(delay if self._dirty and delay > 0 else None)
                if self._closed:
                    return
                self._saving, self._dirty = True, False
            self._save(strict=False)

    def _save(self, strict: bool) -> None:
        """Write the state (``_saving`` is set by the caller and cleared here)."""
        started = time.monotonic()
        try:
            for _ in range(_ATTEMPTS):
                try:
                    save_state(self.runs_dir, self.state)
                    break
                except RuntimeError:  # another thread changed a mapping while encoding
                    continue
                except (OSError, KeiriAgentError) as error:
                    if strict:
                        raise
                    # e.g. a full disk mid-run: the run goes on, the final save reports it
                    _LOGGER.warning("run %s: progress not saved: %s", self.state.run_id, error)
                    break
            else:
                _LOGGER.debug("run %s: progress not saved this time (busy)", self.state.run_id)
        finally:
            with self._lock:
                cost = time.monotonic() - started
                self._next_at = time.monotonic() + min(cost * RATIO, MAX_GAP_S)
                self._saving = False
                self._wake.notify_all()
