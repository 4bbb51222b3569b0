"""Damaged run state files: `plan resume` reports them, it never crashes.

A run state cut short by a full disk or a power loss, emptied, overwritten with
binary data, edited by hand into the wrong shape, or holding a bad tag → used to:
10 of these 13 variants crashed ``plan resume`` with a ``JSONDecodeError``,
``AttributeError``, ``KeyError``, ``ValidationError`` or ``binascii.Error``
traceback → now: every one is ``RUN_STATE_CORRUPT`` (exit 1): a Japanese message
naming the file, with what to do (run the plan again; the file may be deleted),
the machine code in ``--json``, and no traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

PLAN = """
apiVersion: v1
id: damaged
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: name, type: text, label: 名前}
"""


def _edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[str], bytes]:
    def edit(text: str) -> bytes:
        data = json.loads(text)
        result = change(data)
        return json.dumps(data if result is None else result).encode()

    return edit


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data[key] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        del data[key]

    return change


def _bad_bytes(data: dict[str, Any]) -> None:
    data["answers"] = {"ask": {"file": {"__bytes__": "@@not base64@@"}}}


def _bad_node(data: dict[str, Any]) -> None:
    data["graph"] = {"nodes": {"ask": "waiting"}}


def _bad_plan(data: dict[str, Any]) -> None:
    data["plan"] = {"id": "damaged", "graph": "nothing"}


VARIANTS: dict[str, Callable[[str], bytes]] = {
    "truncated": lambda text: text[: len(text) // 2].encode(),
    "empty": lambda text: b"",
    "binary": lambda text: bytes(range(256)) * 4,
    "a list": _edit(lambda data: [data]),
    "a string": _edit(lambda data: "run state"),
    "missing run_id": _edit(_drop("run_id")),
    "missing graph": _edit(_drop("graph")),
    "vars a list": _edit(_set("vars", ["x"])),
    "counters not numbers": _edit(_set("counters", {"run": "many"})),
    "node not a mapping": _edit(_bad_node),
    "plan of the wrong shape": _edit(_bad_plan),
    "bad base64 in a bytes tag": _edit(_bad_bytes),
    "another run's id": _edit(_set("run_id", "run_000000000000")),
}


@pytest.fixture
def paused_run(keiri_home: Path) -> tuple[str, Path]:
    plan = keiri_home / "damaged.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    started = CliRunner().invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    assert started.exit_code == 0, started.output
    run_id = json.loads(started.stdout)["run_id"]
    (state_file,) = list(keiri_home.rglob(f"{run_id}.state.json"))
    return run_id, state_file


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_damaged_run_state_is_a_clear_error(paused_run: tuple[str, Path], variant: str) -> None:
    run_id, state_file = paused_run
    state_file.write_bytes(VARIANTS[variant](state_file.read_text(encoding="utf-8")))

    result = CliRunner().invoke(app, ["plan", "resume", run_id, "--json", "--no-prompt"])

    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "RUN_STATE_CORRUPT"
    assert str(state_file) in error["message"] and "壊れて" in error["message"]
    assert "最初から実行し直して" in error["hint"] and "削除して構いません" in error["hint"]
    assert "Traceback" not in result.output

    human = CliRunner().invoke(app, ["plan", "resume", run_id, "--no-prompt"])
    assert human.exit_code == 1
    assert "RUN_STATE_CORRUPT" in human.output and "Traceback" not in human.output
