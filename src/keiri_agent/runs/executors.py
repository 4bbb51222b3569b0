"""What executes runs: threads of this process (the embedded default), or the
PostgreSQL job queue that ``keiri-agent worker`` processes read (``runs.queue``).

Both take run ids from ``RunService.start`` / ``continue_waiting`` / ``recover`` and
call ``RunService.execute``; the service's claim makes a run execute on at most one
worker, so a run dispatched twice (a recovery racing a start) executes once.

``LocalExecutor`` also recovers: every ``recover_interval_s`` (and once when it
starts) it puts back the runs whose worker is gone — after a restart, the runs the
killed process was executing continue by themselves — and starts due schedules.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from keiri_agent.errors import KeiriAgentError
from keiri_agent.masking import mask_text
from keiri_agent.runs.service import RunService

log = logging.getLogger(__name__)


class LocalExecutor:
    """Executes runs on a bounded pool of threads of this process."""

    def __init__(
        self,
        *,
        workers: int,
        recover_interval_s: float,
        ticks: Sequence[Callable[[], object]] = (),
    ) -> None:
        """``ticks``: more work for each recovery pass (starting due schedules)."""
        self.service: RunService | None = None
        self.recover_interval_s = recover_interval_s
        self.ticks = list(ticks)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="run")
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._recovery: threading.Thread | None = None

    def bind(self, service: RunService) -> None:
        """The service whose runs this executes (it dispatches to ``dispatch``)."""
        self.service = service

    def dispatch(self, run_id: str) -> None:
        with self._lock:
            if run_id in self._pending or self._stop.is_set():
                return  # already waiting for a thread here
            self._pending.add(run_id)
        self._pool.submit(self._execute, run_id)

    def _execute(self, run_id: str) -> None:
        with self._lock:
            self._pending.discard(run_id)
        assert self.service is not None
        try:
            self.service.execute(run_id)
        except BaseException:  # the pool would swallow it
            log.exception("run %s: executing failed", run_id)

    def start_recovery(self) -> None:
        """Recover now, then every ``recover_interval_s`` until ``close``."""
        self._recover_once()
        self._recovery = threading.Thread(
            target=self._recover_loop, name="run-recovery", daemon=True
        )
        self._recovery.start()

    def _recover_loop(self) -> None:
        while not self._stop.wait(self.recover_interval_s):
            self._recover_once()

    def _recover_once(self) -> None:
        assert self.service is not None
        for step in (self.service.recover, *self.ticks):
            try:
                step()
            except KeiriAgentError as error:  # the store is out of reach: next time
                log.warning("run recovery failed: %s", mask_text(str(error)))
            except Exception:
                log.exception("run recovery failed")

    def close(self) -> None:
        """Stop taking runs; the running ones stop and go back to the queue (the
        next process continues them: ``RunService.shutdown``)."""
        self._stop.set()
        if self.service is not None:
            self.service.shutdown()
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._recovery is not None:
            self._recovery.join()
