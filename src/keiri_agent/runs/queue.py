"""Runs executed through a PostgreSQL job queue (procrastinate) by any number of
worker processes, on any machine that reaches the database and the workspace.

- ``QueueDispatch`` is the run service's ``dispatch`` where the application database
  is PostgreSQL: it puts a job naming the run in the queue (at most one waiting job
  per run) and returns.
- ``QueueWorker`` is what ``keiri-agent worker`` runs (and ``serve`` too, unless
  ``KEIRI_AGENT_RUN_EXECUTE_IN_SERVE`` is false): procrastinate's worker takes jobs
  and calls ``RunService.execute`` on ``run_concurrency`` threads; every
  ``run_lease_s / 2`` it recovers — the jobs of workers whose procrastinate heartbeat
  stopped are closed (they were only messages), ``RunService.recover`` puts the
  runs whose lease expired back in the queue, so another worker continues them, and
  due schedules start (``runs.schedules``).

The queue's tables live in their own PostgreSQL schema (``QUEUE_SCHEMA``), created
when a worker or server first opens it, next to the application's tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, KeiriAgentError
from keiri_agent.masking import mask_text
from keiri_agent.runs.service import RunService

log = logging.getLogger(__name__)

QUEUE_SCHEMA = "keiri_queue"
"""The PostgreSQL schema of procrastinate's tables."""
QUEUE = "keiri-runs"
TASK = "keiri_agent.execute_run"
FETCH_POLL_S = 1.0
"""How often an idle worker looks for jobs when no notification arrived."""
RESTART_S = 5
"""How long a worker whose connection failed waits before it starts again."""


def is_postgres(settings: Settings) -> bool:
    url = (settings.storage.database_url or "").lower()
    return url.startswith(("postgresql", "postgres"))


def queue_conninfo(settings: Settings) -> str:
    """The libpq connection string of the application database (PostgreSQL only)."""
    from keiri_agent.storage.checkpointer import postgres_conninfo

    if not is_postgres(settings) or settings.storage.database_url is None:
        raise ConfigurationError(
            "実行キュー（keiri-agent worker）には PostgreSQL のデータベースが必要です",
            hint="KEIRI_AGENT_DATABASE_URL に PostgreSQL の接続先を設定してください。"
            "SQLite のままなら keiri-agent serve が実行まで行うため、worker は要りません",
        )
    return postgres_conninfo(settings.storage.database_url)


_CONNECTION = {"options": f"-c search_path={QUEUE_SCHEMA}"}


def ensure_queue_schema(conninfo: str) -> None:
    """Create the queue's schema and tables once (safe when processes start together)."""
    import psycopg
    from procrastinate.schema import SchemaManager

    with psycopg.connect(conninfo) as connection:  # one transaction, committed on exit
        connection.execute("SELECT pg_advisory_xact_lock(hashtext('keiri-agent-queue'))")
        connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{QUEUE_SCHEMA}"')
        connection.execute(f'SET LOCAL search_path = "{QUEUE_SCHEMA}"')
        if connection.execute("SELECT to_regclass('procrastinate_jobs')").fetchone() == (None,):
            log.info("creating the run queue's tables in schema %s", QUEUE_SCHEMA)
            connection.execute(SchemaManager.get_schema())


@contextlib.contextmanager
def store_errors(conninfo: str) -> Iterator[None]:
    """A database that cannot be reached is ``STORE_UNREACHABLE`` (as for the
    application's own tables), not a traceback: psycopg's error, or the one
    procrastinate wraps."""
    import psycopg
    from procrastinate.exceptions import ConnectorException

    from keiri_agent.storage.errors import store_error

    try:
        yield
    except (psycopg.Error, ConnectorException) as error:
        cause = error if isinstance(error, psycopg.Error) else error.__cause__
        translated = None if cause is None else store_error(cause, _where(conninfo))
        if translated is None:
            raise
        raise translated from None


def _where(conninfo: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(conninfo)
    except Exception:
        return "PostgreSQL"
    return f"{parts.get('host') or 'localhost'}:{parts.get('port') or 5432}"


class QueueDispatch:
    """Puts runs in the queue from any thread (its own small connection pool)."""

    def __init__(self, conninfo: str) -> None:
        import procrastinate

        self.conninfo = conninfo
        with store_errors(conninfo):
            ensure_queue_schema(conninfo)
        self._app = procrastinate.App(
            connector=procrastinate.SyncPsycopgConnector(
                conninfo=conninfo, kwargs=_CONNECTION, min_size=1, max_size=4
            )
        )
        self._app.open()

    def __call__(self, run_id: str) -> None:
        from procrastinate.exceptions import AlreadyEnqueued

        deferrer = self._app.configure_task(TASK, queue=QUEUE, queueing_lock=run_id)
        with store_errors(self.conninfo), contextlib.suppress(AlreadyEnqueued):
            deferrer.defer(run_id=run_id)  # AlreadyEnqueued: a job for it is waiting

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._app.close()


class QueueWorker:
    """Executes queued runs with procrastinate's worker until ``stop`` (see the module
    docstring). ``run`` blocks (``keiri-agent worker``); ``start`` runs it on a thread
    (``keiri-agent serve``)."""

    def __init__(
        self,
        settings: Settings,
        service: RunService,
        conninfo: str,
        *,
        ticks: Sequence[Callable[[], object]] = (),
    ) -> None:
        """``ticks``: more work for each recovery pass (starting due schedules)."""
        self.settings = settings
        self.service = service
        self.conninfo = conninfo
        self.ticks = list(ticks)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: BaseException | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run_logged, name="run-queue", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=60)

    def _run_logged(self) -> None:
        try:
            self.run()
        except BaseException as error:  # a server keeps answering; it logs why
            self.failure = error
            log.error("the run queue worker stopped: %s", mask_text(str(error)))
            self._ready.set()

    def run(self) -> None:
        """Execute runs until ``stop`` (a database out of reach at start-up is
        STORE_UNREACHABLE; later outages are waited out)."""
        with store_errors(self.conninfo):
            asyncio.run(self._main())

    def request_stop(self) -> None:
        """Stop taking jobs, without waiting (a signal handler's part); the runs
        executing here stop and go back to the queue."""
        self.service.shutdown()
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended
                loop.call_soon_threadsafe(stopping.set)

    def stop(self) -> None:
        """``request_stop``, then wait for the worker's thread to end."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout=self.settings.runs.run_lease_s * 2)

    async def _main(self) -> None:
        import procrastinate

        concurrency = self.settings.runs.run_concurrency
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        # sync jobs run on the loop's default executor: one thread per concurrent run
        self._loop.set_default_executor(ThreadPoolExecutor(max_workers=concurrency + 2))
        app = procrastinate.App(
            connector=procrastinate.PsycopgConnector(
                conninfo=self.conninfo, kwargs=_CONNECTION, min_size=1, max_size=concurrency + 2
            )
        )
        execute: Callable[[str], None] = self.service.execute
        app.task(name=TASK, queue=QUEUE)(_execute_run(execute))
        stopped = asyncio.create_task(self._stopping.wait())
        async with app.open_async():
            recovery = asyncio.create_task(self._recover_loop(app))
            self._ready.set()
            while not stopped.done():
                worker = asyncio.create_task(
                    app.run_worker_async(
                        queues=[QUEUE],
                        concurrency=concurrency,
                        install_signal_handlers=False,
                        update_heartbeat_interval=self.settings.runs.run_heartbeat_s,
                        stalled_worker_timeout=self.settings.runs.run_lease_s,
                        fetch_job_polling_interval=FETCH_POLL_S,
                        delete_jobs="always",
                        shutdown_graceful_timeout=self.settings.runs.run_lease_s,
                    )
                )
                await asyncio.wait({worker, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if not worker.done():
                    worker.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await worker
                    break
                failure = None if worker.cancelled() else worker.exception()
                if failure is not None:  # e.g. the database went away: start again
                    log.warning(
                        "the run queue worker stopped (%s); starting again in %d s",
                        mask_text(str(failure)),
                        RESTART_S,
                    )
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(stopped), RESTART_S)
            recovery.cancel()

    async def _recover_loop(self, app: Any) -> None:
        from procrastinate.jobs import Status

        interval = self.settings.runs.run_lease_s / 2
        while True:
            try:
                stalled = await app.job_manager.get_stalled_jobs(
                    queue=QUEUE, seconds_since_heartbeat=self.settings.runs.run_lease_s
                )
                for job in stalled:  # its worker died: the run is recovered below
                    await app.job_manager.finish_job(job, Status.FAILED, delete_job=True)
                await asyncio.to_thread(self.service.recover)
                for tick in self.ticks:
                    await asyncio.to_thread(tick)
            except KeiriAgentError as error:
                log.warning("run recovery failed: %s", mask_text(str(error)))
            except Exception:
                log.exception("run recovery failed")
            await asyncio.sleep(interval)


def _execute_run(execute: Callable[[str], None]) -> Callable[..., None]:
    def execute_run(run_id: str) -> None:
        execute(run_id)

    return execute_run
