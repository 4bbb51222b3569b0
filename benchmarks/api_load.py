"""The HTTP API under load (issue 13): concurrent research runs and HelpDesk asks over
loopback against a real ``keiri-agent serve`` process.

**Research.** A temporary workspace with the bundled research corpus indexed; the
server's chat and embeddings models are the project's OpenAI-compatible stub server
(``StubOpenAIServer`` on loopback, reached through ``KEIRI_AGENT_PROVIDER=
openai-compatible`` and ``KEIRI_AGENT_OPENAI_API_BASE``), every reply the same
structured object, so the order in which concurrent runs ask does not matter: the
planner gets one query, the gap check nothing new, summaries and the report get JSON
text. After one warm-up run (imports, first model client: not counted), ``--runs``
clients each ``POST /api/research`` and read the run's SSE stream to its end, all at
once (httpx, asyncio). Prints:

- ``research.runs`` / ``research.events`` / ``research.wall_s``;
- ``research.latency_p50_ms`` / ``research.latency_p95_ms`` — an event's creation (its
  ``timestamp``, written by the run's worker thread) to its arrival at the client
  (both clocks are this machine's);
- ``research.events_per_s`` — events delivered to the clients ÷ wall time;
- ``research.errors`` — runs that did not start (not 202), whose stream failed or did
  not end with ``done`` (target 0);
- ``research.api_s_per_run`` — wall time ÷ runs; ``research.inprocess_s_per_run`` — the
  same run through ``ResearchService`` in this process (the baseline, median of 5, one at
  a time); ``research.api_over_inprocess`` — their ratio (the server runs
  ``run_concurrency`` runs at once, so below 1 means the API's concurrency pays
  for its HTTP, database and SSE costs);
- ``server.peak_rss_mb`` — the server process's peak resident memory (psutil, sampled
  every 50 ms, children included).

With ``--database-url postgresql+psycopg://…`` the runs are recorded in that database
and ``--cross-process`` starts a second server on it: runs are started on the first and
streamed from the second, so the latency is the cross-process one (bounded by
``api_poll_interval_s`` polling).

**HelpDesk.** ``--asks`` concurrent ``POST /api/helpdesk/ask`` (``{"question", "kb"}``)
against an offline server over the bundled corpus: ``helpdesk.latency_p50_ms`` /
``helpdesk.latency_p95_ms`` (request → JSON answer), ``helpdesk.asks_per_s``,
``helpdesk.errors`` and its ``server.peak_rss_mb``. Skipped with a message when the
server has no such route.

**Abuse.** ``/api/health`` polled every 10 ms while one client posts a 1.9 MiB GraphQL
query of 110,000 aliases (under the body limit): ``abuse.health_quiet_p50_ms`` (the same
polling with nothing else running: the baseline), ``abuse.health_max_ms`` and
``abuse.health_max_over_quiet`` while the query is handled, ``abuse.query_ms`` and
``abuse.query_status`` (400 ``GRAPHQL_LIMIT``: refused before it is parsed). Skipped with
``--abuse 0``.

Default run (50 runs, 200 asks) takes about two minutes on two cores;
``--runs 5 --asks 20`` for a quick check.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

from keiri_agent.config import Settings
from keiri_agent.llm.testing import StubOpenAIServer
from keiri_agent.services.research import EXAMPLE_QUESTION, SAMPLE_KB, ResearchService

REPLY = {
    "needs_research": True,
    "reason": "benchmark",
    "queries": ["適格請求書 登録番号"],
    "missing": "",
}
"""Fits the planner (one query) and the gap check (that query again: nothing new)."""
READY_S = 120.0
STREAM_TIMEOUT_S = 300.0


def _cli() -> list[str]:
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    if script:
        return [script]
    return [sys.executable, "-c", "from keiri_agent.cli import main; main()"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PeakRss:
    """The peak resident memory of a process and its children, sampled in a thread."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                processes = [self.process, *self.process.children(recursive=True)]
                total = 0
                for process in processes:
                    try:
                        total += process.memory_info().rss
                    except psutil.Error:
                        continue
                self.peak = max(self.peak, total)
            except psutil.Error:
                return
            self._stop.wait(0.05)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 2**20


@contextmanager
def serve(home: Path, env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """``keiri-agent serve`` on a free loopback port; (base URL, pid) once it answers."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    base = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_"))
    }
    log = (home / f"serve-{port}.log").open("wb")
    process = subprocess.Popen(
        [*_cli(), "serve", "--port", str(port)],
        cwd=home,
        env={**base, "KEIRI_AGENT_HOME": str(home), "KEIRI_AGENT_LOG_LEVEL": "WARNING", **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + READY_S
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                log.flush()
                text = (home / f"serve-{port}.log").read_text(errors="replace")
                raise SystemExit(f"keiri-agent serve did not start:\n{text}")
            try:
                if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _one_run(
    start: httpx.AsyncClient, stream: httpx.AsyncClient, latencies: list[float]
) -> tuple[int, bool]:
    """Start one run on ``start``, read its events on ``stream``: (events, ok)."""
    try:
        response = await start.post(
            "/api/research", json={"question": EXAMPLE_QUESTION, "kb": [SAMPLE_KB]}
        )
        if response.status_code != 202:
            return 0, False
        count, last = 0, None
        async with stream.stream("GET", response.json()["events_url"]) as events:
            if events.status_code != 200:
                return 0, False
            async for line in events.aiter_lines():
                if line.startswith("event: "):
                    last = line[7:]
                elif line.startswith("data: "):
                    arrived = time.time()
                    timestamp = line.split('"timestamp":"', 1)[1].split('"', 1)[0]
                    created = datetime.fromisoformat(timestamp).timestamp()
                    latencies.append((arrived - created) * 1000)
                    count += 1
        return count, last == "done"
    except (httpx.HTTPError, IndexError, ValueError):
        return 0, False


async def research_load(start_url: str, stream_url: str, runs: int) -> dict[str, Any]:
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=runs + 10, max_keepalive_connections=runs + 10)
    timeout = httpx.Timeout(STREAM_TIMEOUT_S)
    async with (
        httpx.AsyncClient(base_url=start_url, limits=limits, timeout=timeout) as start,
        httpx.AsyncClient(base_url=stream_url, limits=limits, timeout=timeout) as stream,
    ):
        await _one_run(start, stream, [])  # warm-up: imports and the first model client
        began = time.perf_counter()
        outcomes = await asyncio.gather(*(_one_run(start, stream, latencies) for _ in range(runs)))
        wall = time.perf_counter() - began
    events = sum(count for count, _ in outcomes)
    return {
        "runs": runs,
        "events": events,
        "wall_s": wall,
        "latency_p50_ms": _percentile(latencies, 0.5),
        "latency_p95_ms": _percentile(latencies, 0.95),
        "events_per_s": events / wall,
        "errors": sum(1 for _, ok in outcomes if not ok),
    }


def inprocess_s_per_run(settings: Settings, repeats: int = 5) -> float:
    """The baseline: one research run through ``ResearchService`` in this process (one
    event loop for all, as a server's worker thread has: the model's async client is
    bound to the loop that first used it)."""
    agent = ResearchService(settings).agent([SAMPLE_KB])

    async def runs() -> list[float]:
        await agent.aresearch(EXAMPLE_QUESTION)  # warm-up
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            await agent.aresearch(EXAMPLE_QUESTION)
            times.append(time.perf_counter() - began)
        return times

    return statistics.median(asyncio.run(runs()))


def bench_research(args: argparse.Namespace) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="keiri-api-load-") as folder,
        StubOpenAIServer([REPLY] * (args.runs * 12 + 200)) as stub,
    ):
        home = Path(folder)
        env = {
            "KEIRI_AGENT_PROVIDER": "openai-compatible",
            "KEIRI_AGENT_OPENAI_API_BASE": stub.base_url,
            "KEIRI_AGENT_OPENAI_API_KEY": "stub-key",
            "KEIRI_AGENT_MODEL": "stub-model",
            "KEIRI_AGENT_MAX_RETRIES": "0",
            # one client starts every run of the burst: above the per-client start limit
            "KEIRI_AGENT_API_RUN_STARTS_PER_MINUTE": str(max(30, args.runs * 4)),
        }
        if args.database_url:
            env["KEIRI_AGENT_DATABASE_URL"] = args.database_url
        settings = Settings(
            home=home,
            provider="openai-compatible",
            openai_api_base=stub.base_url,
            openai_api_key="stub-key",  # type: ignore[arg-type]
            model="stub-model",
            max_retries=0,
            database_url=args.database_url or None,
        )
        ResearchService(settings).index_sample()  # the stub's embeddings, as the server's
        baseline = inprocess_s_per_run(settings)
        with serve(home, env) as (url, pid):
            if args.cross_process:
                with serve(home, env) as (second_url, second_pid):
                    rss = [PeakRss(pid), PeakRss(second_pid)]
                    figures = asyncio.run(research_load(url, second_url, args.runs))
                    peaks = [sampler.stop() for sampler in rss]
            else:
                rss = [PeakRss(pid)]
                figures = asyncio.run(research_load(url, url, args.runs))
                peaks = [rss[0].stop()]
    print(f"research.cross_process: {bool(args.cross_process)}")
    for name in ("runs", "events", "errors"):
        print(f"research.{name}: {figures[name]}")
    print(f"research.wall_s: {figures['wall_s']:.2f}")
    print(f"research.latency_p50_ms: {figures['latency_p50_ms']:.1f}")
    print(f"research.latency_p95_ms: {figures['latency_p95_ms']:.1f}")
    print(f"research.events_per_s: {figures['events_per_s']:.1f}")
    api_per_run = figures["wall_s"] / figures["runs"]
    print(f"research.api_s_per_run: {api_per_run:.3f}")
    print(f"research.inprocess_s_per_run: {baseline:.3f}")
    print(f"research.api_over_inprocess: {api_per_run / baseline:.2f}")
    print(f"server.peak_rss_mb: {max(peaks):.0f}")


async def _one_ask(client: httpx.AsyncClient, latencies: list[float]) -> bool:
    began = time.perf_counter()
    try:
        response = await client.post(
            "/api/helpdesk/ask", json={"question": EXAMPLE_QUESTION, "kb": SAMPLE_KB}
        )
        response.json()
    except (httpx.HTTPError, ValueError):
        return False
    latencies.append((time.perf_counter() - began) * 1000)
    return response.status_code == 200


async def helpdesk_load(url: str, asks: int) -> dict[str, Any] | None:
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=asks + 10, max_keepalive_connections=asks + 10)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=STREAM_TIMEOUT_S) as client:
        paths = (await client.get("/openapi.json")).json().get("paths", {})
        if "/api/helpdesk/ask" not in paths:
            return None
        await _one_ask(client, [])  # warm-up
        began = time.perf_counter()
        outcomes = await asyncio.gather(*(_one_ask(client, latencies) for _ in range(asks)))
        wall = time.perf_counter() - began
    return {
        "asks": asks,
        "wall_s": wall,
        "latency_p50_ms": _percentile(latencies, 0.5),
        "latency_p95_ms": _percentile(latencies, 0.95),
        "asks_per_s": asks / wall,
        "errors": sum(1 for ok in outcomes if not ok),
    }


def bench_helpdesk(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="keiri-api-load-") as folder:
        home = Path(folder)
        ResearchService(Settings(home=home, provider="offline")).index_sample()
        with serve(home, {"KEIRI_AGENT_PROVIDER": "offline"}) as (url, pid):
            rss = PeakRss(pid)
            figures = asyncio.run(helpdesk_load(url, args.asks))
            peak = rss.stop()
    if figures is None:
        print("helpdesk: skipped (this server has no POST /api/helpdesk/ask route)")
        return
    for name in ("asks", "errors"):
        print(f"helpdesk.{name}: {figures[name]}")
    print(f"helpdesk.wall_s: {figures['wall_s']:.2f}")
    print(f"helpdesk.latency_p50_ms: {figures['latency_p50_ms']:.1f}")
    print(f"helpdesk.latency_p95_ms: {figures['latency_p95_ms']:.1f}")
    print(f"helpdesk.asks_per_s: {figures['asks_per_s']:.1f}")
    print(f"helpdesk.server.peak_rss_mb: {peak:.0f}")


def _health_latencies(url: str, during: Callable[[], object], settle_s: float) -> list[float]:
    """``/api/health`` latencies (ms), polled every 10 ms while ``during()`` runs (with
    ``settle_s`` of polling before and after it)."""
    import httpx

    latencies: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while not stop.is_set():
                started = time.perf_counter()
                client.get("/api/health")
                latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.01)

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(settle_s)
    during()
    time.sleep(settle_s)
    stop.set()
    poller.join()
    return latencies


def bench_abuse(args: argparse.Namespace) -> None:
    import httpx

    huge = "query { " + " ".join(f"a{n}: __typename" for n in range(110_000)) + " }"
    answer: dict[str, float] = {}

    def post_huge() -> None:
        started = time.perf_counter()
        response = httpx.post(f"{url}/graphql", json={"query": huge}, timeout=120)
        answer["ms"] = (time.perf_counter() - started) * 1000
        answer["status"] = response.status_code

    with (
        tempfile.TemporaryDirectory(prefix="keiri-api-load-") as folder,
        serve(Path(folder), {"KEIRI_AGENT_PROVIDER": "offline"}) as (url, _pid),
    ):
        quiet = _health_latencies(url, lambda: None, 0.5)
        busy = _health_latencies(url, post_huge, 0.2)
    quiet_p50 = statistics.median(quiet)
    print(f"abuse.health_quiet_p50_ms: {quiet_p50:.1f}")
    print(f"abuse.health_max_ms: {max(busy):.1f}")
    print(f"abuse.health_max_over_quiet: {max(busy) / quiet_p50:.1f}")
    print(f"abuse.query_ms: {answer['ms']:.0f}")
    print(f"abuse.query_status: {answer['status']:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="concurrent research runs")
    parser.add_argument("--asks", type=int, default=200, help="concurrent HelpDesk asks")
    parser.add_argument("--database-url", default="", help="postgresql+psycopg://… (else SQLite)")
    parser.add_argument(
        "--cross-process", action="store_true", help="stream from a second server (PostgreSQL)"
    )
    parser.add_argument(
        "--abuse", type=int, default=1, help="1: /api/health during a huge GraphQL query"
    )
    args = parser.parse_args()
    if args.cross_process and not args.database_url.startswith("postgresql"):
        parser.error("--cross-process needs --database-url postgresql+psycopg://…")
    if args.runs > 0:
        bench_research(args)
    if args.asks > 0:
        bench_helpdesk(args)
    if args.abuse:
        bench_abuse(args)


if __name__ == "__main__":
    main()
