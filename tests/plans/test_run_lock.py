"""One invocation owns a run at a time (``plans.run.run_lock``).

The lock is the operating system's and belongs to an open file, so a second
``RunLock`` in this same process stands in for "another process" here; the
killed-child test and ``tests/cli/test_cli_plan_run_lock.py`` use real processes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import portalocker
import pytest
from runner_support import make_plan, make_runner, node

from keiri_agent.errors import (
    ExecutionError,
    KeiriAgentError,
    RunInProgressError,
    UserInputError,
)
from keiri_agent.plans.run import runner as runner_module
from keiri_agent.plans.run.run_lock import RunLock, lock_path
from keiri_agent.plans.run.run_state import find_state, load_state, read_state, save_state
from keiri_agent.plans.run.runner import PlanRunner

SRC = Path(__file__).resolve().parents[2] / "src"
GUARD_S = 120  # only a guard against a hang


def _paused(runner: PlanRunner) -> str:
    paused = runner.start(
        make_plan(node("ask", block="rt.ask", question="OK?"), node("use", value="${ask.answer}"))
    )
    assert paused.status == "paused"
    return paused.run_id


def _is_free(state_file: Path, run_id: str) -> bool:
    try:
        with RunLock(state_file, run_id):
            return True
    except RunInProgressError:
        return False


def test_a_run_owned_elsewhere_is_refused_at_once_and_nothing_changes(runs: Path) -> None:
    runner = make_runner(runs)
    run_id = _paused(runner)
    state_file = find_state(runs, run_id)
    before = state_file.read_bytes()
    log = runs / load_state(runs, run_id).log_path
    log_before = log.read_bytes()

    with RunLock(state_file, run_id):
        with pytest.raises(RunInProgressError) as resumed:
            runner.resume(run_id, answers={"ask": {"answer": "yes"}})
        with pytest.raises(RunInProgressError):
            runner.rerun_from_node(run_id, "ask", answers={"ask": {"answer": "yes"}})
        assert runner.result(run_id).status == "paused"  # reading needs no lock

    error = resumed.value
    assert isinstance(error, KeiriAgentError) and error.code == "RUN_IN_PROGRESS"
    assert f"この実行 ({run_id}) は別の処理で実行中です" in error.message
    assert error.hint is not None and "終わるまで待ってから" in error.hint
    assert f"-{run_id}.jsonl" in error.hint
    assert error.details == {"run_id": run_id, "lock_path": str(lock_path(state_file))}
    assert state_file.read_bytes() == before and log.read_bytes() == log_before
    assert runner.resume(run_id, answers={"ask": {"answer": "yes"}}).status == "success"


def _crash(exception: BaseException) -> Any:
    def execute(self: Any) -> str:
        raise exception

    return execute


@pytest.mark.parametrize(
    ("ending", "plan_nodes"),
    [
        ("success", [node("a")]),
        ("paused", [node("ask", block="rt.ask")]),
        ("failed", [node("a", fail_times=1)]),
        ("exception", [node("a")]),
        ("interrupt", [node("a")]),
    ],
)
def test_the_lock_is_released_on_every_way_out(
    runs: Path, monkeypatch: pytest.MonkeyPatch, ending: str, plan_nodes: list[dict[str, Any]]
) -> None:
    runner = make_runner(runs)
    # keep every RunLock alive (as a caller holding a traceback could), so that only
    # an explicit release frees the lock, not the garbage collector closing its file
    made: list[RunLock] = []
    init = RunLock.__init__

    def kept(lock: RunLock, state_file: Path, run_id: str) -> None:
        init(lock, state_file, run_id)
        made.append(lock)

    monkeypatch.setattr(RunLock, "__init__", kept)
    raised: dict[str, type[BaseException]] = {
        "exception": RuntimeError,
        "interrupt": KeyboardInterrupt,
    }
    if ending in raised:
        crash = raised[ending]("stopped inside the run")
        with monkeypatch.context() as patch, pytest.raises(raised[ending]):
            patch.setattr(runner_module.GraphRun, "execute_watched", _crash(crash))
            runner.start(make_plan(*plan_nodes))
    else:
        assert runner.start(make_plan(*plan_nodes)).status == ending
    assert len(made) == 1

    (state_file,) = runs.glob("*/*.state.json")
    run_id = read_state(state_file).run_id
    assert lock_path(state_file).exists()  # left in place: its existence means nothing
    assert _is_free(state_file, run_id)
    # and the next invocation owns the run (the flaky block succeeds on its second run)
    again = runner.rerun_from_node(run_id, plan_nodes[0]["id"], answers={"ask": {"answer": 1}})
    assert again.status == "success"


def test_a_lock_left_by_a_killed_process_does_not_block_a_later_resume(
    runs: Path, tmp_path: Path
) -> None:
    runner = make_runner(runs)
    run_id = _paused(runner)
    state_file = find_state(runs, run_id)
    holder = tmp_path / "holder.py"
    holder.write_text(
        textwrap.dedent(
            f"""
            import sys, time
            from pathlib import Path
            sys.path.insert(0, {str(SRC)!r})
            from keiri_agent.plans.run.run_lock import RunLock
            lock = RunLock(Path({str(state_file)!r}), {run_id!r})
            lock.acquire()
            print("held", flush=True)
            time.sleep({GUARD_S})
            """
        ),
        encoding="utf-8",
    )
    child = subprocess.Popen([sys.executable, str(holder)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with pytest.raises(RunInProgressError):  # the child really owns the run
            runner.resume(run_id, answers={"ask": {"answer": "yes"}})
    finally:
        child.kill()  # SIGKILL: no clean-up code runs in the child
        child.communicate(timeout=GUARD_S)

    assert lock_path(state_file).exists()
    result = runner.resume(run_id, answers={"ask": {"answer": "yes"}})
    assert result.status == "success"
    assert result.outputs["use"]["value"] == "yes"


def test_the_state_is_read_only_once_the_run_is_owned(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process finishes the run while this one takes the lock: this one must
    see the finished state, not the paused copy it could have read before."""
    runner = make_runner(runs)
    run_id = _paused(runner)
    acquire = RunLock.acquire

    def finished_meanwhile(lock: RunLock) -> None:
        state = load_state(runs, run_id)
        state.status = "success"
        save_state(runs, state)
        acquire(lock)

    monkeypatch.setattr(RunLock, "acquire", finished_meanwhile)
    with pytest.raises(UserInputError, match="成功して終わっている"):
        runner.resume(run_id, answers={"ask": {"answer": "yes"}})


def test_a_plan_that_cannot_run_takes_no_lock_and_leaves_no_file(runs: Path) -> None:
    with pytest.raises(KeiriAgentError):
        make_runner(runs).start(make_plan(node("a", block="rt.missing")))
    assert not runs.exists()


def test_a_file_system_without_locks_is_an_error_not_an_unlocked_run(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise portalocker.exceptions.LockException("locking not supported")

    monkeypatch.setattr(portalocker.Lock, "acquire", refuse)
    with pytest.raises(ExecutionError) as raised:
        make_runner(runs).start(make_plan(node("a")))
    assert raised.value.code == "RUN_LOCK_FAILED"
    assert "locking not supported" in raised.value.message
    assert not list(runs.glob("*/*.state.json"))  # nothing ran
