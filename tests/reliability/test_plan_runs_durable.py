"""Plan runs killed, interrupted and resumed: finished work is never done twice.

A real ``keiri-agent plan run`` process runs a foreach over N items whose body is
a side-effecting block (``rt.record`` appends its item to a file), then a node
after the loop.

- ``kill -9`` midway through the foreach → used to: the state said ``running`` with
  nothing saved, forever; ``plan resume`` refused ("is running, not paused", hint:
  a Python-only ``rerun_from_node``); running the plan again repeated finished
  items → now: every finished node and loop iteration is on disk; the dead
  process's run (lock free) resumes after its last finished iteration; an item
  whose iteration was recorded finished before the kill never runs again, and the
  outputs equal an uninterrupted run's. Killed at several points of one run.
- Ctrl-C (SIGINT) midway → used to: exit 130 printing nothing, state ``running``
  → now: the node in flight stops (cooperatively), the run is saved ``cancelled``,
  the command says where it stopped and prints the exact resume command, exit 130;
  resuming finishes it without repeating finished items. SIGTERM: the same, 143.
- ``plan resume`` of a finished run names the ``plan rerun`` CLI, not a Python
  API; ``plan rerun RUN_ID --from NODE`` runs that node and what follows again.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.plans.run.run_state import RunState, read_state

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "tests" / "plans" / "data" / "durable_blocks"
GUARD_S = 120  # only a guard against a hang: nothing here measures speed
ITEMS = 8

PLAN = """
apiVersion: v1
id: durable_each
version: 0.1.0
graph:
  - id: each
    type: loop
    foreach: {{input: {items}, max_concurrency: 1}}
    body:
      plan:
        graph:
          - id: rec
            block: rt.record
            in: {{path: '{effects}', item: "${{item}}", delay_s: {delay}}}
        exports:
          - {{from: rec.value, as: v}}
    out: {{collect: v}}
  - id: after
    block: rt.record
    in: {{path: '{effects}', item: "${{each.v}}", delay_s: 0}}
    out: {{value: total}}
"""


def _cli() -> list[str]:
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    if script:
        return [script]
    return [sys.executable, "-c", "from keiri_agent.cli import main; main()"]


def _write_plan(folder: Path, effects: Path, delay: float) -> Path:
    items = json.dumps([f"item{i}" for i in range(ITEMS)])
    plan = folder / f"durable_each_{effects.stem}.yaml"
    plan.write_text(
        PLAN.format(items=items, effects=effects.as_posix(), delay=delay), encoding="utf-8"
    )
    return plan


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _wait_lines(path: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Wait until ``count`` distinct items have had their effect."""
    deadline = time.monotonic() + GUARD_S
    while len({line for line in _lines(path) if line.startswith("item")}) < count:
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the run ended before {count} items were recorded:\n{out}\n{err}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"{count} items never got recorded")
        time.sleep(0.005)


def _counts(path: Path) -> Counter[str]:
    """How many times each item's block really ran (``rt.record``'s ``<path>.runs``)."""
    return Counter(line for line in _lines(Path(f"{path}.runs")) if line.startswith("item"))


def _effects(path: Path) -> Counter[str]:
    """How many times each item's effect was done (once per idempotency key)."""
    items = (line.split("\t")[0] for line in _lines(path))
    return Counter(item for item in items if item.startswith("item"))


def _state(home: Path) -> RunState:
    (found,) = list(home.rglob("*.state.json"))
    return read_state(found)


def _finished_items(state: RunState) -> set[str]:
    """The items whose iteration the saved state records as finished."""
    each = state.graph.nodes.get("each")
    if each is None or each.loop is None:
        return set()
    return {f"item{i}" for i, status in each.loop.statuses.items() if status == "success"}


@pytest.fixture
def workspace(keiri_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(SPEC_DIR)]))
    return keiri_home


def _options(home: Path) -> dict[str, Any]:
    return {
        "cwd": home,
        "env": dict(os.environ),
        "text": True,
        "encoding": "utf-8",
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
    }


def _uninterrupted_outputs(workspace: Path, tmp_path: Path) -> dict[str, Any]:
    effects = tmp_path / "reference.txt"
    plan = _write_plan(tmp_path, effects, delay=0)
    done = CliRunner().invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    assert done.exit_code == 0, done.output
    for state_file in workspace.rglob("*.state.json"):  # keep one run in the workspace
        state_file.unlink()
    result = json.loads(done.stdout)
    assert result["status"] == "success"
    return result["outputs"]


@pytest.mark.slow
def test_a_run_killed_at_several_points_resumes_without_redoing_finished_items(
    workspace: Path, tmp_path: Path
) -> None:
    expected = _uninterrupted_outputs(workspace, tmp_path)
    effects = tmp_path / "effects.txt"
    plan = _write_plan(tmp_path, effects, delay=0.15)
    command = [*_cli(), "plan", "run", str(plan), "--json", "--no-prompt"]
    ran_after_kill: list[tuple[set[str], Counter[str]]] = []
    for kill_at in (2, 4, ITEMS - 1):
        process = subprocess.Popen(command, **_options(workspace))
        _wait_lines(effects, kill_at, process)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=GUARD_S)
        state = _state(workspace)
        finished = _finished_items(state)
        assert state.status == "running"  # what a dead process leaves behind
        # every iteration that had finished more than a moment before the kill is saved
        assert len(finished) >= kill_at - 1, (kill_at, finished)
        ran_after_kill.append((finished, _counts(effects)))
        command = [*_cli(), "plan", "resume", state.run_id, "--json", "--no-prompt"]

    done = subprocess.run(command, timeout=GUARD_S, check=False, **_options(workspace))
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "success"
    assert result["outputs"] == expected

    counts = _counts(effects)
    assert set(counts) == {f"item{i}" for i in range(ITEMS)}  # every item's effect is there
    # an item recorded finished at a kill never ran after it; only an item in flight
    # at a kill (its effect written, its iteration not yet saved) may run once more
    for finished, at_kill in ran_after_kill:
        for item in finished:
            assert counts[item] == at_kill[item], (item, at_kill, counts)
    assert sum(counts.values()) <= ITEMS + len(ran_after_kill)
    # and an item that did run again found its idempotency key: its effect is once
    assert _effects(effects) == Counter({f"item{i}": 1 for i in range(ITEMS)})


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_saves_the_run_cancelled_and_says_how_to_resume(
    workspace: Path, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    effects = tmp_path / "effects.txt"
    plan = _write_plan(tmp_path, effects, delay=0.3)
    process = subprocess.Popen(
        [*_cli(), "plan", "run", str(plan), "--no-prompt"], **_options(workspace)
    )
    _wait_lines(effects, 3, process)
    process.send_signal(sig)
    out, err = process.communicate(timeout=GUARD_S)

    assert process.returncode == code, out + err
    assert "Traceback" not in err
    state = _state(workspace)
    assert state.status == "cancelled"
    assert "中断" in err and "止まった位置: each（繰り返し" in err
    assert f"keiri-agent plan resume {state.run_id}" in err
    finished = _finished_items(state)
    assert len(finished) >= 3
    recorded = _counts(effects)

    resumed = CliRunner().invoke(app, ["plan", "resume", state.run_id, "--json", "--no-prompt"])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["status"] == "success"
    counts = _counts(effects)
    assert set(counts) == {f"item{i}" for i in range(ITEMS)}
    for item in finished:
        assert counts[item] == recorded[item] == 1
    assert _effects(effects) == Counter({f"item{i}": 1 for i in range(ITEMS)})


def test_resume_of_a_finished_run_names_the_rerun_command_which_runs_the_node_again(
    workspace: Path, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    plan = _write_plan(tmp_path, effects, delay=0)
    done = CliRunner().invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    run_id = json.loads(done.stdout)["run_id"]

    again = CliRunner().invoke(app, ["plan", "resume", run_id, "--json", "--no-prompt"])
    assert again.exit_code == 1
    error = json.loads(again.stdout)["error"]
    assert error["code"] == "RUN_NOT_RESUMABLE"
    assert f"keiri-agent plan rerun {run_id} --from" in error["hint"]
    assert "rerun_from_node" not in again.output

    before = len(_lines(effects))
    rerun = CliRunner().invoke(app, ["plan", "rerun", run_id, "--from", "after", "--json"])
    assert rerun.exit_code == 0, rerun.output
    assert json.loads(rerun.stdout)["status"] == "success"
    # only `after` ran again, not the loop, and a re-run does its effect again
    assert len(_lines(effects)) == before + 1

    unknown = CliRunner().invoke(app, ["plan", "rerun", run_id, "--from", "nope", "--json"])
    assert unknown.exit_code == 1
    assert json.loads(unknown.stdout)["error"]["code"] == "INPUT_ERROR"
