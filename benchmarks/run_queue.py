"""Runs through the PostgreSQL job queue (issue 31): throughput and start latency with
1, 2 and 4 ``keiri-agent worker`` processes, and how long a run waits after its worker
is killed.

The path a team really takes: ``keiri-agent serve`` (``KEIRI_AGENT_RUN_EXECUTE_IN_SERVE
=false``: it only queues) and N ``keiri-agent worker --concurrency 1`` processes on one
PostgreSQL database (a throwaway server started here, or ``--database-url``), a Plan
whose one node waits 200 ms (``bench.sleep``, standing in for a scripted model call)
started ``--runs`` times at once through ``POST /api/plans/{id}/runs``. Prints, per N:

- ``workers_N.runs_per_s`` — runs ÷ (first start → last run finished);
- ``workers_N.efficiency`` — that over the ideal N ÷ ``baseline_s_per_run``, where the
  baseline is the same Plan run by ``PlanEngine.run`` in this process (median of 5):
  1.0 would be a queue that costs nothing;
- ``workers_N.start_p50_ms`` / ``start_p95_ms`` — a run's ``created_at`` (queued) to its
  first event (the runner's ``plan_start``), read from the database.

Recovery (2 workers, default lease 30 s, heartbeat 2 s): a Plan of 40 × 0.5 s items is
started; once its worker has run a few items it is killed with SIGKILL.
``recovery.requeued_after_s`` — kill → ``run_requeued`` event (bounded by the lease and
half a lease of recovery interval), ``recovery.resumed_after_s`` — kill → the other
worker's ``plan_resumed``, ``recovery.lease_s`` for reference.

About three minutes on two cores: ``python benchmarks/run_queue.py``;
``--runs 10 --no-recovery`` for a quick check.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import sqlalchemy

HERE = Path(__file__).resolve().parent
BLOCKS = HERE / "plan_blocks"
GUARD_S = 300

PLAN = """
apiVersion: v1
id: bench_queue
version: 0.1.0
graph:
  - id: call
    block: bench.sleep
    in: {ms: 200, value: 1}
"""

LONG_PLAN = """
apiVersion: v1
id: bench_long
version: 0.1.0
graph:
  - id: each
    type: loop
    foreach: {{input: "${{vars.items}}", max_concurrency: 1}}
    body:
      plan:
        graph:
          - id: call
            block: bench.sleep
            in: {{ms: 500, value: "${{item}}"}}
        exports:
          - {{from: call.value, as: v}}
    out: {{collect: v}}
vars:
  items: [{items}]
""".format(items=", ".join(str(i) for i in range(40)))


def _cli() -> list[str]:
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "keiri_agent.cli"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A PostgreSQL server in a temporary folder on a Unix socket (as the tests start it)."""
    binaries = [Path(p).parent for p in sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))]
    folder = str(binaries[-1]) if binaries else ""
    initdb = shutil.which("initdb") or shutil.which("initdb", path=folder)
    pg_ctl = shutil.which("pg_ctl") or shutil.which("pg_ctl", path=folder)
    if not initdb or not pg_ctl:
        sys.exit("PostgreSQL server binaries not found: install postgresql or pass --database-url")
    prefix: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="keiri-bench-pg-"))
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        prefix = ["runuser", "-u", "nobody", "--"]
        shutil.chown(base, user="nobody")
    data = base / "data"
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "keiri", "--no-sync"],
        check=True,
        capture_output=True,
    )
    options = f"-k {base} -c listen_addresses='' -F -c max_connections=200"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://keiri@/postgres?host={base}"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"])
        shutil.rmtree(base, ignore_errors=True)


def _fresh_database(server: str) -> str:
    url = sqlalchemy.make_url(server)
    name = f"keiri_bench_{int(time.time() * 1000)}"
    admin = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


class Deployment:
    """``serve`` (queue only) and worker processes over one workspace and database."""

    def __init__(self, home: Path, database_url: str, lease_s: float) -> None:
        self.home = home
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_"))
        }
        self.env.update(
            KEIRI_AGENT_HOME=str(home),
            KEIRI_AGENT_PROVIDER="offline",
            KEIRI_AGENT_DATABASE_URL=database_url,
            KEIRI_AGENT_RUN_EXECUTE_IN_SERVE="false",
            KEIRI_AGENT_BLOCK_SPEC_DIRS=f'["{BLOCKS}"]',
            KEIRI_AGENT_RUN_LEASE_S=str(lease_s),
            KEIRI_AGENT_API_RUN_STARTS_PER_MINUTE="10000",  # one client starts them all
            KEIRI_AGENT_LOG_LEVEL="WARNING",
        )
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers: list[subprocess.Popen[bytes]] = []
        self.server = self._spawn(["serve", "--port", str(self.port)], "serve")
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.server.poll() is not None:
                sys.exit(f"serve did not start: see {home}/serve.log")
            time.sleep(0.1)

    def _spawn(self, args: list[str], name: str) -> subprocess.Popen[bytes]:
        log = (self.home / f"{name}.log").open("ab")
        return subprocess.Popen(
            [*_cli(), *args], cwd=self.home, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )

    def add_workers(self, count: int) -> None:
        for _ in range(count):
            index = len(self.workers)
            self.workers.append(self._spawn(["worker", "--concurrency", "1"], f"worker{index}"))
        time.sleep(3)  # imports and the first connection

    def stop(self) -> None:
        for process in [*self.workers, self.server]:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in [*self.workers, self.server]:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()


def _baseline_s_per_run(home: Path) -> float:
    """The Plan run by ``PlanEngine.run`` in this process (median of 5)."""
    from keiri_agent.config import Settings
    from keiri_agent.plans.dsl.loader import load_plan_text
    from keiri_agent.plans.engine import PlanEngine

    settings = Settings(home=home / "baseline", provider="offline", block_spec_dirs=[BLOCKS])
    engine = PlanEngine(settings, env={})
    plan = load_plan_text(PLAN)
    engine.run(plan)  # warm-up
    times = []
    for _ in range(5):
        started = time.perf_counter()
        engine.run(plan)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _wait_finished(client: httpx.Client, run_ids: list[str]) -> None:
    deadline = time.monotonic() + GUARD_S
    pending = set(run_ids)
    while pending:
        for run_id in list(pending):
            status = client.get(f"/api/plans/runs/{run_id}").json()["status"]
            if status in ("success", "failed", "cancelled"):
                if status != "success":
                    sys.exit(f"run {run_id} ended {status}")
                pending.discard(run_id)
        if time.monotonic() > deadline:
            sys.exit(f"{len(pending)} runs did not finish")
        time.sleep(0.1)


def _start_latencies_ms(database_url: str, run_ids: list[str]) -> list[float]:
    from keiri_agent.storage.schema import run_events, runs

    engine = sqlalchemy.create_engine(database_url)
    with engine.connect() as connection:
        created = dict(
            connection.execute(
                sqlalchemy.select(runs.c.run_id, runs.c.created_at).where(
                    runs.c.run_id.in_(run_ids)
                )
            ).all()
        )
        first = dict(
            connection.execute(
                sqlalchemy.select(run_events.c.run_id, run_events.c.timestamp).where(
                    run_events.c.run_id.in_(run_ids), run_events.c.seq == 1
                )
            ).all()
        )
    engine.dispose()
    latencies = []
    for run_id in run_ids:
        queued = created[run_id]
        if queued.tzinfo is None:
            queued = queued.replace(tzinfo=UTC)
        started = datetime.fromisoformat(first[run_id].replace("Z", "+00:00"))
        latencies.append((started - queued).total_seconds() * 1000)
    return latencies


def _register(home: Path, plan_id: str, text: str) -> None:
    designs = home / "designs"
    designs.mkdir(parents=True, exist_ok=True)
    (designs / f"{plan_id}.yaml").write_text(text, encoding="utf-8")


def throughput(server: str, workers: int, runs: int, baseline: float) -> dict[str, float]:
    database_url = _fresh_database(server)
    home = Path(tempfile.mkdtemp(prefix="keiri-bench-queue-"))
    _register(home, "bench_queue", PLAN)
    deployment = Deployment(home, database_url, lease_s=30)
    try:
        deployment.add_workers(workers)
        with httpx.Client(base_url=deployment.url, timeout=60) as client:
            client.post("/api/plans/bench_queue/runs", json={}).raise_for_status()  # warm-up
            time.sleep(2)
            started = time.perf_counter()
            ids = [
                client.post("/api/plans/bench_queue/runs", json={}).json()["run_id"]
                for _ in range(runs)
            ]
            _wait_finished(client, ids)
            wall = time.perf_counter() - started
        latencies = sorted(_start_latencies_ms(database_url, ids))
    finally:
        deployment.stop()
        shutil.rmtree(home, ignore_errors=True)
    rate = runs / wall
    return {
        "runs_per_s": rate,
        "efficiency": rate / (workers / baseline),
        "start_p50_ms": statistics.median(latencies),
        "start_p95_ms": latencies[int(0.95 * (len(latencies) - 1))],
    }


def recovery(server: str) -> dict[str, float]:
    from keiri_agent.storage.schema import run_events, runs

    database_url = _fresh_database(server)
    home = Path(tempfile.mkdtemp(prefix="keiri-bench-recovery-"))
    _register(home, "bench_long", LONG_PLAN)
    lease_s = 30.0
    deployment = Deployment(home, database_url, lease_s=lease_s)
    engine = sqlalchemy.create_engine(database_url)
    try:
        deployment.add_workers(2)
        with httpx.Client(base_url=deployment.url, timeout=60) as client:
            run_id = client.post("/api/plans/bench_long/runs", json={}).json()["run_id"]
            deadline = time.monotonic() + GUARD_S
            while True:
                with engine.connect() as connection:
                    owner, seq = connection.execute(
                        sqlalchemy.select(runs.c.worker, runs.c.last_seq).where(
                            runs.c.run_id == run_id
                        )
                    ).one()
                if owner and seq >= 8:
                    break
                if time.monotonic() > deadline:
                    sys.exit("the long run never started")
                time.sleep(0.05)
            pid = int(owner.rsplit(":", 1)[1])
            os.kill(pid, signal.SIGKILL)
            killed = time.monotonic()
            requeued = resumed = None
            while resumed is None:
                with engine.connect() as connection:
                    kinds = connection.execute(
                        sqlalchemy.select(run_events.c.kind).where(run_events.c.run_id == run_id)
                    ).scalars()
                    names = set(kinds)
                if requeued is None and "run_requeued" in names:
                    requeued = time.monotonic() - killed
                if "plan_resumed" in names:
                    resumed = time.monotonic() - killed
                if time.monotonic() - killed > GUARD_S:
                    sys.exit("the run was not taken up again")
                time.sleep(0.05)
            client.post(f"/api/plans/runs/{run_id}/cancel")
    finally:
        engine.dispose()
        deployment.stop()
        shutil.rmtree(home, ignore_errors=True)
    return {
        "requeued_after_s": requeued or 0.0,
        "resumed_after_s": resumed,
        "lease_s": lease_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--database-url", default="", help="postgresql+psycopg://… (a server)")
    parser.add_argument("--no-recovery", action="store_true")
    args = parser.parse_args()

    baseline = _baseline_s_per_run(Path(tempfile.mkdtemp(prefix="keiri-bench-base-")))
    print(f"baseline_s_per_run {baseline:.3f}")
    with throwaway_postgres() if not args.database_url else _given(args.database_url) as server:
        for count in (int(part) for part in args.workers.split(",")):
            figures = throughput(server, count, args.runs, baseline)
            for name, value in figures.items():
                print(f"workers_{count}.{name} {value:.3f}")
        if not args.no_recovery:
            for name, value in recovery(server).items():
                print(f"recovery.{name} {value:.2f}")


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


if __name__ == "__main__":
    main()
