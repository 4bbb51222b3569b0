"""Research runs through the run service (services.research_runs over keiri_agent.runs):
the events written once and in order, a failure and a cancel ending the stream with
their own event, the runs of a dead process continued, a follower resuming after any
id."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "agents" / "research"))
from research_agent_support import SNIPPETS, FixedSource

from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.events import Event
from keiri_agent.runs.executors import LocalExecutor
from keiri_agent.runs.research_kind import ResearchKind
from keiri_agent.runs.service import RunService, Timing
from keiri_agent.runs.store import NewEvent, RunStore
from keiri_agent.services.research import ResearchService
from keiri_agent.services.research_runs import ResearchRuns

QUESTION = "請求書の登録番号と端数処理について調べて"


class FixedService(ResearchService):
    """The research service over fixed sources (``delay_s`` per search, or a failure)."""

    def __init__(self, settings: Settings, *, delay_s: float = 0.0, fail: bool = False) -> None:
        super().__init__(settings)
        self.delay_s = delay_s
        self.fail = fail

    def agent(self, kb_names: Any = None) -> DeepResearchAgent:
        if self.fail:
            raise KeiriAgentError("検索元に接続できませんでした", hint="設定を確認してください")
        source = FixedSource(SNIPPETS, delay_s=self.delay_s)
        return DeepResearchAgent(self.settings, tools=[source], store=self.store)


class Runs(ResearchRuns):
    """Research runs executed by a local executor (``close`` stops it)."""

    def __init__(self, research: ResearchService, *, worker: str | None = None) -> None:
        self.executor = LocalExecutor(workers=4, recover_interval_s=60)
        timing = Timing(lease_s=3.0, heartbeat_s=0.2, poll_interval_s=0.05)
        service = RunService(
            RunStore(research.store.engine),
            {"research": ResearchKind(research)},
            dispatch=self.executor.dispatch,
            timing=timing,
            **({"worker": worker} if worker else {}),
        )
        self.executor.bind(service)
        super().__init__(research, service)
        self.store = service.store

    def check_sources(self, kb_names: list[str]) -> None:
        pass  # fixed sources

    def close(self) -> None:
        self.executor.close()


def _runs(tmp_path: Path, **kwargs: Any) -> Runs:
    settings = Settings(home=tmp_path, provider="offline", api_poll_interval_s=0.05)
    return Runs(FixedService(settings, **kwargs))


def _follow(runs: ResearchRuns, run_id: str, after: int = 0) -> list[Event]:
    async def read() -> list[Event]:
        return [event async for event in runs.follow(run_id, after) if event is not None]

    return asyncio.run(asyncio.wait_for(read(), 60))


def _wait_finished(runs: ResearchRuns, run_id: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        record = runs.get(run_id)
        if record is not None and record.finished:
            return record.status
        time.sleep(0.05)
    raise AssertionError("the run did not finish")


def test_events_are_stored_once_in_order_and_any_follower_resumes_after_any_id(
    tmp_path: Path,
) -> None:
    runs = _runs(tmp_path)
    record = runs.start(QUESTION)
    events = _follow(runs, record.run_id)
    try:
        assert [event.seq for event in events] == list(range(1, len(events) + 1))
        assert events[-1].kind == "done"
        for cut in (0, 1, len(events) // 2, len(events)):
            assert _follow(runs, record.run_id, cut) == events[cut:]
        # another store over the same database reads the same rows
        again = RunStore(runs.store.engine)
        assert again.events_after(record.run_id, 0) == events
        final = runs.get(record.run_id)
        assert final is not None and final.status == "success"
        assert final.last_seq == events[-1].seq
        assert final.result is not None and final.result["report_md"]
    finally:
        runs.close()


def test_a_failing_run_ends_with_a_failed_event_and_its_error(tmp_path: Path) -> None:
    runs = _runs(tmp_path, fail=True)
    record = runs.start(QUESTION)
    try:
        events = _follow(runs, record.run_id)
        assert [event.kind for event in events] == ["failed"]
        assert events[0].payload["error"]["message"] == "検索元に接続できませんでした"
        final = runs.get(record.run_id)
        assert final is not None and final.status == "failed"
        assert final.error is not None and final.error["hint"] == "設定を確認してください"
    finally:
        runs.close()


def test_cancel_stops_a_running_run_with_a_cancelled_event(tmp_path: Path) -> None:
    runs = _runs(tmp_path, delay_s=1.0)
    record = runs.start(QUESTION)
    try:
        deadline = time.monotonic() + 30
        while (current := runs.get(record.run_id)) is not None and current.status == "queued":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        runs.cancel(record.run_id)
        assert _wait_finished(runs, record.run_id) == "cancelled"
        events = _follow(runs, record.run_id)
        assert events[-1].kind == "cancelled"
        assert [event.seq for event in events] == list(range(1, len(events) + 1))
    finally:
        runs.close()


def test_a_run_of_a_dead_process_is_continued_by_the_next_one(tmp_path: Path) -> None:
    """A run left ``running`` by a process that died (kill -9) is not failed: the next
    process puts it back in the queue and executes it; its stream goes on from the
    last event with no gap or repeat."""
    runs = _runs(tmp_path)
    try:
        store = runs.store
        store.create(
            "run_orphan",
            kind="research",
            subject="s1",
            title=QUESTION,
            owner="",
            inputs={"question": QUESTION, "session_id": "s1", "kb_names": []},
        )
        host = runs.service.worker.rsplit(":", 1)[0]
        dead = f"{host}:999999999"  # no such process
        claimed = store.claim("run_orphan", dead, lease_s=3600)
        assert claimed is not None
        store.append("run_orphan", claimed.attempt, [NewEvent("research", "plan", {})])
        assert runs.service.recover() == ["run_orphan"]
        assert _wait_finished(runs, "run_orphan") == "success"
        events = _follow(runs, "run_orphan")
        assert [event.seq for event in events] == list(range(1, len(events) + 1))
        assert [event.kind for event in events[:2]] == ["plan", "run_requeued"]
        assert events[-1].kind == "done"
        final = runs.get("run_orphan")
        assert final is not None and final.result is not None and final.result["report_md"]
        assert runs.service.recover() == []
    finally:
        runs.close()


def test_a_stale_worker_can_write_nothing_once_another_claimed_the_run(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    try:
        store = runs.store
        store.create("run_x", kind="research", subject="s1", title=QUESTION, owner="", inputs={})
        first = store.claim("run_x", "a:1", lease_s=0.0)
        assert first is not None and first.attempt == 1
        second = store.claim("run_x", "b:2", lease_s=60)  # the first lease has expired
        assert second is not None and second.attempt == 2
        assert store.claim("run_x", "c:3", lease_s=60) is None  # owned: nobody else
        from keiri_agent.runs.store import LeaseLost

        with pytest.raises(LeaseLost):
            store.append("run_x", 1, [NewEvent("research", "late", {})])
        with pytest.raises(LeaseLost):
            store.settle("run_x", 1, "success")
        with pytest.raises(LeaseLost):
            store.beat("run_x", 1, 60)
        written = store.append("run_x", 2, [NewEvent("research", "ok", {})])
        assert [event.seq for event in written] == [1]
        assert [event.kind for event in store.events_after("run_x", 0)] == ["ok"]
    finally:
        runs.close()


@pytest.mark.parametrize(
    ("question", "session_id"),
    [("   ", None), ("x" * 4001, None), (QUESTION, "s" * 129), (QUESTION, "bad\nid")],
)
def test_bad_questions_and_session_ids_are_refused_before_anything_is_stored(
    tmp_path: Path, question: str, session_id: str | None
) -> None:
    runs = _runs(tmp_path)
    try:
        with pytest.raises(UserInputError):
            runs.start(question, session_id=session_id)
        assert runs.store.find() == []
    finally:
        runs.close()
