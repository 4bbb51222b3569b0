"""IsolatedWorker and AnalysisActions' reuse of it: one child per dataset, limits kept."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil
import pytest
from process_support import live_children

from keiri_agent.agents.analysis.datasets import DatasetRegistry
from keiri_agent.agents.analysis.runtime.actions import AnalysisActions
from keiri_agent.agents.analysis.runtime.isolation import IsolatedWorker, isolation_available
from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path
from keiri_agent.errors import ActionMemoryError, ActionTimeoutError, SpecError

pytestmark = pytest.mark.skipif(not isolation_available(), reason="needs os.fork")
GROUPBY = {"op": "groupby_agg", "group_cols": ["地域"], "metrics": {"売上": ["sum"]}}


def _pid_and_rows(_spec: object, frame: pd.DataFrame) -> tuple[int, int]:
    return os.getpid(), len(frame)


def _sleep(seconds: float, _frame: pd.DataFrame) -> None:
    time.sleep(seconds)


def _hog(megabytes: int, _frame: pd.DataFrame) -> float:
    return float(np.ones(megabytes * 2**20 // 8).sum())


def _fail(_spec: object, _frame: pd.DataFrame) -> None:
    raise SpecError("bad spec", hint="fix it")


def _call(runner: AnalysisActions, func: Callable[..., Any], arg: Any, dataset_id: str) -> Any:
    """``runner._run`` with any function in place of an op (it is called with the frame)."""
    result: Any = runner._run(func, arg, dataset_id)
    return result


@pytest.fixture
def actions(tmp_path: Path) -> Iterator[tuple[AnalysisActions, str]]:
    registry = DatasetRegistry(max_bytes=10 * 2**20)
    dataset_id = registry.load_path(sample_data_path())
    settings = Settings(home=tmp_path, analysis_timeout_s=1.0, analysis_memory_mb=150)
    runner = AnalysisActions(registry, settings)
    yield runner, dataset_id
    runner.close()


def test_actions_on_one_dataset_reuse_one_child(actions: tuple[AnalysisActions, str]) -> None:
    runner, dataset_id = actions
    before = live_children()
    first = runner.execute(GROUPBY, dataset_id)
    workers = live_children() - before
    assert len(workers) == 1  # the worker stays up for the next action
    second = runner.execute(GROUPBY, dataset_id)
    assert live_children() - before == workers
    assert first.artifacts[0]["payload"] == second.artifacts[0]["payload"]
    runner.close()
    time.sleep(0.05)
    assert not (live_children() & workers)


def test_slow_action_is_killed_and_the_worker_replaced(
    actions: tuple[AnalysisActions, str],
) -> None:
    runner, dataset_id = actions
    frame = runner.registry.get(dataset_id)
    first_pid, _ = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    started = time.monotonic()
    with pytest.raises(ActionTimeoutError):
        _call(runner, _sleep, 10, dataset_id)
    assert time.monotonic() - started < 4
    assert not psutil.pid_exists(first_pid) or psutil.Process(first_pid).status() == "zombie"
    pid, rows = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    assert pid != first_pid and rows == len(frame)
    assert runner.registry.get(dataset_id).equals(frame)


def test_memory_hog_is_killed_and_the_worker_replaced(
    actions: tuple[AnalysisActions, str],
) -> None:
    runner, dataset_id = actions
    frame = runner.registry.get(dataset_id).copy()
    first_pid, _ = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    with pytest.raises(ActionMemoryError):
        _call(runner, _hog, 600, dataset_id)
    pid, _ = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    assert pid != first_pid
    assert runner.registry.get(dataset_id).equals(frame)
    assert runner.execute(GROUPBY, dataset_id).artifacts


def test_error_in_action_keeps_the_worker(actions: tuple[AnalysisActions, str]) -> None:
    runner, dataset_id = actions
    first_pid, _ = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    with pytest.raises(SpecError, match="bad spec"):
        _call(runner, _fail, GROUPBY, dataset_id)
    pid, _ = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    assert pid == first_pid


def test_replaced_dataset_gets_a_new_worker(actions: tuple[AnalysisActions, str]) -> None:
    runner, dataset_id = actions
    first_pid, _ = _call(runner, _pid_and_rows, GROUPBY, dataset_id)
    other = runner.registry.add_frame(pd.DataFrame({"地域": ["東京"], "売上": [1]}), "x.csv")
    pid, rows = _call(runner, _pid_and_rows, GROUPBY, other)
    assert pid != first_pid and rows == 1
    runner.registry.remove(dataset_id)
    _call(runner, _pid_and_rows, GROUPBY, other)
    time.sleep(0.05)
    assert first_pid not in live_children()  # the removed dataset's worker ended


def test_worker_limits_each_action_not_their_sum() -> None:
    """Each action's memory is measured from its own start, so many moderate ones pass."""
    frame = pd.DataFrame({"x": [1, 2, 3]})
    worker = IsolatedWorker(frame)
    try:
        for _ in range(4):
            assert worker.call(_hog, 80, timeout_s=10, memory_mb=150) == 80 * 2**17
        with pytest.raises(ActionTimeoutError):
            worker.call(_sleep, 5, timeout_s=0.3, memory_mb=150)
        assert not worker.alive
    finally:
        worker.close()


def _open_files(_spec: object, path: str) -> bool:
    with open(path, encoding="utf-8") as handle:  # files stay usable in the worker
        return handle.read() == "kept"


def test_the_worker_holds_none_of_the_apps_connections(tmp_path: Path) -> None:
    """A connection the app closes is closed for its peer too: a forked worker holding a
    copy kept browser keep-alive connections open with nobody reading them (the app
    froze), and would keep a listening port bound after the app exits."""
    app_side, browser_side = socket.socketpair()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    kept = tmp_path / "kept.txt"
    kept.write_text("kept", encoding="utf-8")
    worker = IsolatedWorker(str(kept))
    try:
        assert worker.call(_open_files, None, timeout_s=30, memory_mb=256)
        app_side.close()
        browser_side.settimeout(5)
        assert browser_side.recv(1) == b""  # the peer sees the close (timed out before)
        listener.close()
        socket.create_server(("127.0.0.1", port)).close()  # the port is free again
    finally:
        worker.close()
        browser_side.close()
