"""run_isolated: results, exceptions, time and memory limits, copy-on-write sharing."""

from __future__ import annotations

import ctypes
import faulthandler
import os
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil
import pytest
from process_support import children_ended, live_children

from keiri_agent.agents.analysis.datasets import DatasetRegistry
from keiri_agent.agents.analysis.runtime import isolation
from keiri_agent.agents.analysis.runtime.isolation import (
    configure_blas_threads,
    isolation_available,
    run_isolated,
)
from keiri_agent.demo import sample_data_path
from keiri_agent.errors import (
    ActionMemoryError,
    ActionTimeoutError,
    ExecutionError,
    KeiriAgentError,
    SpecError,
)

pytestmark = pytest.mark.skipif(not isolation_available(), reason="needs os.fork")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAMPLE_SALES = sample_data_path()
LIMITS: dict[str, Any] = {"timeout_s": 10.0, "memory_mb": 256}


class ColumnError(SpecError):
    """A subclass whose __init__ does not take the message (pickles only via fields)."""

    code = "COLUMN_ERROR"

    def __init__(self, column: str, *, choices: list[str]) -> None:
        super().__init__(f"unknown column {column!r}", hint="pick one of " + ", ".join(choices))
        self.column = column


class LockedError(Exception):
    """Carries a lock, so it cannot be pickled."""

    def __init__(self) -> None:
        super().__init__("holds a lock")
        self.lock = threading.Lock()


class NoPickle:
    """Fails loudly if anything tries to pickle it."""

    def __reduce__(self) -> Any:
        raise AssertionError("an argument was pickled")


def _private_mb() -> float:
    """Private (unshared) resident memory of this process, from smaps_rollup."""
    fields = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0])
    return (fields["Private_Clean"] + fields["Private_Dirty"]) / 1024


def test_returns_value_and_passes_arguments() -> None:
    assert run_isolated(lambda a, b: {"sum": a + b}, 2, 3, **LIMITS) == {"sum": 5}
    frame = pd.DataFrame({"x": [1, 2, 3]})
    result = run_isolated(lambda df: df.assign(y=df["x"] * 2), frame, **LIMITS)
    pd.testing.assert_frame_equal(result, frame.assign(y=frame["x"] * 2))


def test_keiri_error_round_trips() -> None:
    def fail() -> None:
        raise SpecError("unknown column 'sales '", hint="use 'sales'", details={"col": "sales "})

    with pytest.raises(SpecError) as info:
        run_isolated(fail, **LIMITS)
    assert type(info.value) is SpecError
    assert info.value.to_dict() == {
        "code": "SPEC_ERROR",
        "message": "unknown column 'sales '",
        "hint": "use 'sales'",
        "details": {"col": "sales "},
    }


def test_error_subclass_with_own_init_round_trips() -> None:
    def fail() -> None:
        raise ColumnError("売上", choices=["数量", "単価"])

    with pytest.raises(ColumnError) as info:
        run_isolated(fail, **LIMITS)
    assert info.value.message == "unknown column '売上'"
    assert info.value.hint == "pick one of 数量, 単価"
    assert info.value.column == "売上" and info.value.code == "COLUMN_ERROR"


def test_instance_code_round_trips() -> None:
    def fail() -> None:
        raise KeiriAgentError("custom", code="MY_CODE", details={"n": 1})

    with pytest.raises(KeiriAgentError) as info:
        run_isolated(fail, **LIMITS)
    assert info.value.code == "MY_CODE" and info.value.details == {"n": 1}


def test_builtin_exception_keeps_type_and_child_traceback() -> None:
    def fail() -> None:
        empty: dict[str, int] = {}
        empty["missing"] += 1

    with pytest.raises(KeyError, match="missing") as info:
        run_isolated(fail, **LIMITS)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "analysis child process" in notes and "fail" in notes


def test_unpicklable_exception_becomes_execution_error() -> None:
    def fail() -> None:
        raise LockedError

    with pytest.raises(ExecutionError, match="LockedError: holds a lock"):
        run_isolated(fail, **LIMITS)


def test_unpicklable_result_becomes_execution_error() -> None:
    with pytest.raises(ExecutionError, match="受け渡せませんでした"):
        run_isolated(lambda: threading.Lock(), **LIMITS)


def test_system_exit_in_child_is_contained() -> None:
    def leave() -> None:
        raise SystemExit(3)

    with pytest.raises(ExecutionError, match="SystemExit"):
        run_isolated(leave, **LIMITS)


def test_crashing_child_becomes_execution_error() -> None:
    with pytest.raises(ExecutionError, match="終了コード 3") as crashed:
        run_isolated(lambda: os._exit(3), **LIMITS)
    assert "exit code" not in crashed.value.message

    def segfault() -> None:
        faulthandler.disable()  # no crash dump from the child in the test output
        ctypes.string_at(0)

    with pytest.raises(ExecutionError, match="SIGSEGV") as killed:
        run_isolated(segfault, **LIMITS)
    assert "killed by" not in killed.value.message
    assert "シグナル SIGSEGV" in killed.value.message


def test_timeout_kills_the_child() -> None:
    before = live_children()
    started = time.monotonic()
    with pytest.raises(ActionTimeoutError) as info:
        run_isolated(time.sleep, 10, timeout_s=1.0, memory_mb=256)
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3.0
    assert info.value.details == {"timeout_s": 1.0}
    assert "KEIRI_AGENT_ANALYSIS_TIMEOUT_S" in (info.value.hint or "")
    assert children_ended(before)


def test_memory_limit_on_new_allocations() -> None:
    before = live_children()
    started = time.monotonic()
    with pytest.raises(ActionMemoryError) as info:
        run_isolated(lambda: float(np.ones(600 * 2**20 // 8).sum()), timeout_s=20, memory_mb=200)
    assert time.monotonic() - started < 5
    assert info.value.details["memory_mb"] == 200
    assert "KEIRI_AGENT_ANALYSIS_MEMORY_MB" in (info.value.hint or "")
    assert children_ended(before)


def test_memory_limit_on_memory_reserved_before_the_fork() -> None:
    """Touching pages mapped (but not resident) in the parent is caught by the RSS watch."""
    before = live_children()
    reserved = np.empty(500 * 2**20 // 8)  # mapped, not touched: not resident yet
    with pytest.raises(ActionMemoryError) as info:
        run_isolated(lambda: reserved.fill(1.0), timeout_s=20, memory_mb=150)
    assert info.value.details["peak_growth_mb"] >= 150  # rounded to 0.1 MiB: just over is 150.0
    assert children_ended(before)


def test_moderate_memory_is_allowed() -> None:
    assert run_isolated(lambda: float(np.ones(50 * 2**20 // 8).sum()), **LIMITS) == 50 * 2**17


def test_threads_in_child_are_not_counted_as_memory() -> None:
    """Per-thread malloc arenas reserve 64 MiB of address space each, but use little."""

    def with_threads() -> int:
        def work() -> None:
            _ = [np.ones(1000) for _ in range(100)]

        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return len(threads)

    assert run_isolated(with_threads, timeout_s=10, memory_mb=100) == 8


def test_registered_frame_survives_failed_actions() -> None:
    registry = DatasetRegistry(max_bytes=10 * 2**20)
    dataset_id = registry.load_path(SAMPLE_SALES)
    frame = registry.get(dataset_id)
    expected = frame.groupby("地域")["売上"].sum()
    with pytest.raises(ActionTimeoutError):
        run_isolated(time.sleep, 5, timeout_s=0.5, memory_mb=256)
    with pytest.raises(ActionMemoryError):
        run_isolated(lambda: np.ones(400 * 2**20 // 8), timeout_s=10, memory_mb=100)
    again = registry.get(dataset_id)
    pd.testing.assert_frame_equal(again, frame)
    result = run_isolated(lambda df: df.groupby("地域")["売上"].sum(), again, **LIMITS)
    pd.testing.assert_series_equal(result, expected)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="needs Linux smaps")
def test_child_shares_the_parents_frame_without_copying() -> None:
    rows = 25_000_000  # ~200 MB of float64
    frame = pd.DataFrame({"value": np.arange(rows, dtype=np.float64)})
    marker = NoPickle()
    parent_rss = psutil.Process().memory_info().rss

    def total(df: pd.DataFrame, _marker: NoPickle) -> tuple[float, float]:
        return float(frame["value"].sum() + df["value"].iloc[0]), _private_mb()

    started = time.monotonic()
    value, child_private_mb = run_isolated(total, frame, marker, **LIMITS)
    elapsed = time.monotonic() - started
    assert value == float(rows) * (rows - 1) / 2
    assert child_private_mb < 100  # the 200 MB column is shared, not copied
    assert elapsed < 2.0
    assert psutil.Process().memory_info().rss < parent_rss + 50 * 2**20
    with pytest.raises(AssertionError, match="pickled"):
        pickle.dumps(marker)


def test_concurrent_actions_from_threads() -> None:
    results: dict[int, int] = {}
    errors: list[BaseException] = []

    def action(index: int) -> None:
        try:
            results[index] = run_isolated(lambda: index * index, **LIMITS)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=action, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == {i: i * i for i in range(6)}


def test_blas_limited_to_one_thread_in_child() -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info()]

    assert all(count == 1 for count in run_isolated(blas_threads, **LIMITS))


def test_children_are_reaped() -> None:
    for _ in range(5):
        run_isolated(int, **LIMITS)
    time.sleep(0.2)
    run_isolated(int, **LIMITS)
    time.sleep(0.2)
    isolation._reap_finished()
    assert not isolation._unreaped
    assert all(child.status() != psutil.STATUS_ZOMBIE for child in psutil.Process().children())


def test_no_fork_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    assert not isolation_available()
    with pytest.raises(ExecutionError, match="Linux か macOS が必要") as info:
        run_isolated(int, **LIMITS)
    assert "KEIRI_AGENT_ANALYSIS_ISOLATION=false" in (info.value.hint or "")


def test_configure_blas_threads_respects_user_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    configure_blas_threads()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "4"  # an explicit setting wins


def test_configure_blas_threads_after_numpy_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    from threadpoolctl import ThreadpoolController, threadpool_info

    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    original = ThreadpoolController().info()
    try:
        configure_blas_threads()
        assert all(lib["num_threads"] == 1 for lib in threadpool_info())
    finally:
        for lib in original:
            ThreadpoolController().select(prefix=lib["prefix"]).limit(limits=lib["num_threads"])
