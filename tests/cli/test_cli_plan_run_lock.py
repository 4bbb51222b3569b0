"""Two real processes resuming one run: one runs it, the other is refused at once.

Process A (``keiri-agent plan resume``) is held inside a node by ``rt.hold`` (it
waits for a file this test writes); while A owns the run, process B resumes the
same run and must exit 1 with ``RUN_IN_PROGRESS`` without waiting for A. Then A is
let go and the run's state must be whole: complete, every output there, A's
answers kept and nothing of B's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.plans.run.run_lock import RunLock, lock_path
from keiri_agent.plans.run.run_log import read_events
from keiri_agent.plans.run.run_state import find_state, load_state

REPO = Path(__file__).resolve().parents[2]
SPEC_DIRS = [REPO / "tests" / "plans" / "data" / d for d in ("runner_blocks", "lock_blocks")]
GUARD_S = 120  # only a guard against a hang: nothing here measures speed

HELD_PLAN = """
apiVersion: v1
id: held_approval
version: 0.1.0
graph:
  - id: ask
    block: rt.ask
    in: {{question: "承認しますか？"}}
    out: {{answer: decision}}
  - id: hold
    block: rt.hold
    in: {{gate: '{gate}', value: "${{ask.decision}}"}}
    out: {{value: held}}
  - id: note
    block: text.template
    in:
      template: "回答: {{decision}}"
      values: {{decision: "${{hold.held}}"}}
    out: {{text: message}}
exports:
  - {{from: note.message, as: message}}
"""


def _cli() -> list[str]:
    """The installed ``keiri-agent`` next to this interpreter (else its entry point)."""
    script = shutil.which("keiri-agent", path=str(Path(sys.executable).parent))
    if script:
        return [script]
    return [sys.executable, "-c", "from keiri_agent.cli import main; main()"]


def _resume(run_id: str, answers: Path) -> list[str]:
    return [*_cli(), "plan", "resume", run_id, "--inputs", str(answers), "--json", "--no-prompt"]


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + GUARD_S
    while not path.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"process A ended before it reached the held node:\n{out}\n{err}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("process A never reached the held node")
        time.sleep(0.02)


@pytest.mark.slow
def test_two_processes_resuming_one_run_one_runs_the_other_is_refused(
    keiri_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(d) for d in SPEC_DIRS]))
    gate = tmp_path / "gate"
    gate.mkdir()
    plan = tmp_path / "held_approval.yaml"
    plan.write_text(HELD_PLAN.format(gate=gate.as_posix()), encoding="utf-8")
    first = CliRunner().invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    assert first.exit_code == 0, first.output
    run_id = json.loads(first.stdout)["run_id"]
    yes, no = tmp_path / "yes.yaml", tmp_path / "no.yaml"
    yes.write_text("ask: {answer: はい}\n", encoding="utf-8")
    no.write_text("ask: {answer: いいえ}\n", encoding="utf-8")
    options = {"cwd": keiri_home, "env": dict(os.environ), "text": True, "encoding": "utf-8"}

    a = subprocess.Popen(
        _resume(run_id, yes), stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options
    )
    try:
        _wait_for(gate / "started", a)
        b = subprocess.run(_resume(run_id, no), capture_output=True, timeout=GUARD_S, **options)
        a_still_running = a.poll() is None
    finally:
        (gate / "release").touch()
        a_out, a_err = a.communicate(timeout=GUARD_S)

    assert a_still_running  # B returned while A owned the run: it did not wait for A
    assert b.returncode == 1, b.stdout + b.stderr
    error = json.loads(b.stdout)["error"]
    assert error["code"] == "RUN_IN_PROGRESS"
    assert f"この実行 ({run_id}) は別の処理で実行中です" in error["message"]
    assert "終わるまで待ってから" in error["hint"]
    assert "[RUN_IN_PROGRESS]" in b.stderr and "別の処理で実行中" in b.stderr
    assert "Traceback" not in b.stderr

    assert a.returncode == 0, a_out + a_err
    done = json.loads(a_out)
    assert done["status"] == "success"
    assert done["outputs"]["note"]["message"] == "回答: はい"
    state = load_state(keiri_home / "runs", run_id)
    assert state.status == "success"
    assert state.answers == {"ask": {"answer": "はい"}}
    assert {n: s.status for n, s in state.graph.nodes.items()} == {
        "ask": "success",
        "hold": "success",
        "note": "success",
    }
    assert state.graph.nodes["ask"].outputs == {"decision": "はい"}  # outputs by alias
    assert state.graph.nodes["hold"].outputs == {"held": "はい"}
    assert state.graph.nodes["note"].outputs == {"message": "回答: はい"}
    log = read_events(keiri_home / "runs" / state.log_path)
    assert [e["event"] for e in log].count("plan_resumed") == 1  # B logged nothing
    assert state.last_seq == len(log)  # one event numbering, nothing from B


def test_resume_of_a_run_owned_elsewhere_reports_the_code_and_changes_nothing(
    keiri_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same report in-process (fast): exit 1, the message on stderr, --json's code."""
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(SPEC_DIRS[0])]))
    plan = tmp_path / "ask.yaml"
    plan.write_text(
        "apiVersion: v1\nid: ask\nversion: 0.1.0\ngraph:\n  - {id: ask, block: rt.ask}\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    run_id = json.loads(runner.invoke(app, ["plan", "run", str(plan), "--json"]).stdout)["run_id"]
    answers = tmp_path / "answers.yaml"
    answers.write_text("ask: {answer: はい}\n", encoding="utf-8")
    state_file = find_state(keiri_home / "runs", run_id)
    before = state_file.read_bytes()

    with RunLock(state_file, run_id):
        as_json = runner.invoke(app, ["plan", "resume", run_id, "--inputs", str(answers), "--json"])
        plain = runner.invoke(app, ["plan", "resume", run_id, "--inputs", str(answers)])

    assert as_json.exit_code == 1 and plain.exit_code == 1
    reported = json.loads(as_json.stdout)
    assert reported["ok"] is False and reported["error"]["code"] == "RUN_IN_PROGRESS"
    assert reported["error"]["details"] == {
        "run_id": run_id,
        "lock_path": str(lock_path(state_file)),
    }
    assert f"[RUN_IN_PROGRESS] この実行 ({run_id}) は別の処理で実行中です" in plain.stderr
    assert "ヒント:" in plain.stderr
    assert isinstance(plain.exception, SystemExit)  # a reported exit, not a crash
    assert state_file.read_bytes() == before
