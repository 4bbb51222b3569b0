"""The Streamlit app as a user starts it: ``keiri-agent ui`` in a child process on a
free loopback port, over a temporary workspace with the offline provider (no LLM), and
the waits a browser walk through it needs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "api"))
from api_support import _cli, _free_port

READY_S = 120.0
"""How long ``keiri-agent ui`` may take to answer Streamlit's health check."""
SETTLED_S = 0.6
"""How long the page must stay without Streamlit's running indicator to count as settled."""


class UiProcess:
    """``keiri-agent ui`` on a free port (``url``), its workspace ``home`` (also its
    working folder, so no ``.env`` of the developer applies), offline, headless;
    ``wait_ready()`` polls ``/_stcore/health``, ``stop()`` ends its process group."""

    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home / f"ui-{self.port}.log"
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_", "STREAMLIT_"))
        }
        env.update(
            KEIRI_AGENT_HOME=str(home),
            KEIRI_AGENT_PROVIDER="offline",
            KEIRI_AGENT_LOG_LEVEL="WARNING",
            STREAMLIT_SERVER_HEADLESS="true",
            STREAMLIT_SERVER_FILE_WATCHER_TYPE="none",
        )
        command = [*_cli(), "ui", "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=home,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self) -> UiProcess:
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"keiri-agent ui exited early:\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/_stcore/health", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        pytest.fail(f"keiri-agent ui never became ready:\n{self.output()}")

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        group = os.getpgid(self.process.pid)
        os.killpg(group, signal.SIGINT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            self.process.wait(timeout=10)


def settle(page: Any, timeout_s: float = 90.0) -> None:
    """Wait until the app is connected and its script has stayed not running for
    ``SETTLED_S`` (a script run, with the reruns it asks for, is over)."""
    app = page.get_by_test_id("stApp")
    app.wait_for(timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    quiet_since: float | None = None
    while True:
        now = time.monotonic()
        idle = (
            app.get_attribute("data-test-script-state") == "notRunning"
            and app.get_attribute("data-test-connection-state") == "CONNECTED"
        )
        if not idle:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= SETTLED_S:
            return
        if now > deadline:
            raise AssertionError("the Streamlit app is still running after the timeout")
        time.sleep(0.1)
