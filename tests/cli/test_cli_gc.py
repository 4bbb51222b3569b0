"""The CLI process collects garbage less often while it starts; a server keeps the default."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.collector import DEFAULT_GC_THRESHOLDS, START_UP_GC_THRESHOLD

_THRESHOLD_AFTER_HELP = """
import atexit, gc, sys
atexit.register(lambda: print("threshold", gc.get_threshold()[0]))
sys.argv = ["keiri-agent", "--help"]
from keiri_agent.cli import main
main()
"""


def test_a_command_runs_with_the_start_up_gc_threshold() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _THRESHOLD_AFTER_HELP], capture_output=True, text=True
    )
    assert f"threshold {START_UP_GC_THRESHOLD}" in result.stdout
    assert DEFAULT_GC_THRESHOLDS[0] < START_UP_GC_THRESHOLD


def test_serve_restores_the_default_gc_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    import keiri_agent.api.server as server
    from keiri_agent.cli.app import app

    seen: list[tuple[int, ...]] = []
    monkeypatch.setattr(server, "serve", lambda *args, **kwargs: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    gc.set_threshold(START_UP_GC_THRESHOLD, *before[1:])
    try:
        result = CliRunner().invoke(app, ["serve", "--port", "8765"])
    finally:
        gc.set_threshold(*before)
    assert result.exit_code == 0, result.output
    assert seen == [DEFAULT_GC_THRESHOLDS]


_FROZEN_AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0))
sys.argv = ["keiri-agent", *sys.argv[1:]]
from keiri_agent.cli import main
main()
"""


@pytest.mark.parametrize("args", [["--help"], ["analyze"]])  # a success and a usage error
def test_the_teardown_does_not_walk_what_the_command_leaves(args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _FROZEN_AT_EXIT, *args], capture_output=True, text=True
    )
    assert result.returncode == (0 if args == ["--help"] else 2), result.stderr
    assert "frozen True" in result.stdout
