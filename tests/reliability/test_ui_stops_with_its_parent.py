"""``keiri-agent ui`` stopped by a signal: its Streamlit child stops too.

``keiri-agent ui`` starts Streamlit in a child process (``python -m streamlit run``).

- SIGTERM to ``keiri-agent ui`` (a service manager, ``kill``) → used to: the parent
  died at once (the default action) and the Streamlit child kept serving the app on
  the port, orphaned, until someone found and killed it → now: the parent passes the
  signal on, waits for Streamlit to stop (kills it after a grace period) and exits with
  128 + the signal; the port no longer answers. The child also gets SIGTERM from the
  kernel when the parent dies in any other way (Linux ``PR_SET_PDEATHSIG``).
- SIGINT sent to the parent alone (``kill -INT``; Ctrl-C in its terminal reaches both)
  → already stopped the child before (``subprocess.call`` kills it on
  KeyboardInterrupt): kept as a regression guard, now with a graceful stop first.
- SIGKILL to the parent (nothing can be handled) → used to: the child kept serving, as
  with SIGTERM → now: the kernel's death signal stops it (Linux).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "web"))
from streamlit_support import UiProcess

STOP_S = 15.0
"""A guard against a hang: how long the parent and the child may take to stop."""


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.parametrize(
    ("signum", "exit_code"),
    [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 128 + signal.SIGINT)],
)
def test_a_signal_to_keiri_agent_ui_stops_its_streamlit_child(
    tmp_path: Path, signum: int, exit_code: int
) -> None:
    ui = UiProcess(tmp_path / "home")
    children: list[psutil.Process] = []
    try:
        ui.wait_ready()
        children = psutil.Process(ui.process.pid).children(recursive=True)
        assert children, "keiri-agent ui runs Streamlit in a child process"
        ui.process.send_signal(signum)
        code = ui.process.wait(timeout=STOP_S)
        _, alive = psutil.wait_procs(children, timeout=STOP_S)
        assert alive == [], f"still running after the parent stopped: {alive}"
        assert not _answers(ui.port)
        assert code == exit_code
    finally:
        _end(ui, children)


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux only")
def test_the_streamlit_child_stops_when_keiri_agent_ui_is_killed(tmp_path: Path) -> None:
    ui = UiProcess(tmp_path / "home")
    children: list[psutil.Process] = []
    try:
        ui.wait_ready()
        children = psutil.Process(ui.process.pid).children(recursive=True)
        assert children
        ui.process.kill()
        ui.process.wait(timeout=STOP_S)
        _, alive = psutil.wait_procs(children, timeout=STOP_S)
        assert alive == [], f"still running after the parent was killed: {alive}"
    finally:
        _end(ui, children)


def _end(ui: UiProcess, children: list[psutil.Process]) -> None:
    """Whatever this test started and is still running: killed by its pid."""
    ui.stop()
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
