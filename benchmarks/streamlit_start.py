"""Time from starting the Streamlit app to its first useful screen in a browser, as a
ratio to a bare Streamlit app started the same way in the same run.

What a user does: start the server, open it in a browser, wait for the first page.
Each start is timed from launching the server process until the page shows what it
is, in headless Debian Chromium (``/usr/bin/chromium`` through Playwright, the flags
of ``tests/web``), opened in a fresh browser context (no cache, no cookies) as soon as
the server answers its health check:

* ``keiri`` — ``keiri-agent ui --host 127.0.0.1 --port P`` (the command a user types;
  it runs ``python -m streamlit run …/ui/app.py`` with the product's options), offline,
  over a workspace of its own, headless, no file watcher (as ``tests/web`` starts it);
  its first useful screen is the データ分析 page's title, ``st.title("データ分析")``;
* ``bare`` — ``python -m streamlit run bare.py`` with the same options and environment,
  where ``bare.py`` is the one line ``st.title("ベンチマーク")``; its screen is that title.

The screen is the title's ``<h1>`` with that text, visible (non-empty box), as the page
itself sees it in an animation frame. The データ分析 page draws its uploader and chat
input in the same pass right after the title (nothing is built in between), which
``widgets_s`` checks: the chat input visible too. Those widgets are code Streamlit's
front end fetches the first time a page shows one (the bare app shows none), so that
figure is given for information, not as the ratio's.

Prints ``name: value`` lines: per app the median and min seconds of ``--repeats``
starts, from process start to: ``ready_s`` (Streamlit's ``/_stcore/health`` answers),
``screen_s`` (the title is visible), ``widgets_s`` (and the chat input; ``keiri`` only)
and ``settled_s`` (the first script run has ended: for ``keiri`` the side panel of
recent conversations and runs is drawn and the run executor started); then
``keiri_over_bare`` — the ratio of the two ``screen_s`` medians (target < 1.5) — and
``keiri_widgets_over_bare`` (``keiri`` ``widgets_s`` ÷ ``bare`` ``screen_s``). Starts are
interleaved (bare, keiri, bare, keiri, …) so that load on a shared machine hits both
alike; one untimed start of each first warms the OS file cache and the workspace (a
user's workspace exists after their first start; ``--fresh-workspace`` times a new one
each start instead).

    .venv/bin/python benchmarks/streamlit_start.py [--repeats 9] [--fresh-workspace]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
KEIRI_TITLE = "データ分析"
BARE_TITLE = "ベンチマーク"
TARGET = 1.5
TIMEOUT_S = 120.0
DROPPED = ("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_", "STREAMLIT_", "LANGCHAIN_", "LANGSMITH_")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cli() -> str:
    """The ``keiri-agent`` console script next to this interpreter."""
    script = Path(sys.executable).with_name("keiri-agent")
    found = str(script) if script.exists() else shutil.which("keiri-agent")
    if found is None:
        raise SystemExit("keiri-agent not found: run `make install` first")
    return found


def app_env(home: Path) -> dict[str, str]:
    """Offline, headless, no file watcher, ``home`` as the workspace (``tests/web``)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(DROPPED)}
    env.update(
        KEIRI_AGENT_HOME=str(home),
        KEIRI_AGENT_PROVIDER="offline",
        KEIRI_AGENT_LOG_LEVEL="WARNING",
        STREAMLIT_SERVER_HEADLESS="true",
        STREAMLIT_SERVER_FILE_WATCHER_TYPE="none",
    )
    return env


def keiri_command(port: int) -> list[str]:
    return [cli(), "ui", "--host", "127.0.0.1", "--port", str(port)]


def bare_command(script: Path, port: int) -> list[str]:
    """``streamlit run`` with the options ``keiri-agent ui`` gives it (``cli/app.py``)."""
    from keiri_agent.config import Settings
    from keiri_agent.ui import TOOLBAR_MODE

    upload_mb = Settings().inputs.max_upload_mb
    return [
        *(sys.executable, "-m", "streamlit", "run", str(script)),
        *("--server.port", str(port), "--server.address", "127.0.0.1"),
        *("--browser.gatherUsageStats", "false", "--client.toolbarMode", TOOLBAR_MODE),
        *("--server.maxUploadSize", str(upload_mb)),
    ]


@dataclass
class Start:
    ready_s: float
    screen_s: float
    widgets_s: float
    settled_s: float


SHOWN = """([title, chat]) => {
    const shown = (element) => {
        if (!element) return false;
        const box = element.getBoundingClientRect();
        return box.width > 0 && box.height > 0 && getComputedStyle(element).visibility !== "hidden";
    };
    const heading = [...document.querySelectorAll("h1")].find(
        (h1) => h1.textContent.trim() === title
    );
    const input = document.querySelector('[data-testid="stChatInputTextArea"]');
    if (shown(heading)) window.headingShownAt ??= Date.now();
    if (!window.headingShownAt || (chat && !shown(input))) return null;
    return [window.headingShownAt, Date.now()];
}"""
"""The times (ms since the epoch) at which the heading ``title`` was visible, and at which
it and (with ``chat``) the chat input were: checked in every animation frame by the page
itself, so the times are the frames', not those of the test driver's next poll
(Playwright polls a locator at growing intervals, up to 500 ms)."""
SCRIPT_ENDED = """() => document.querySelector('[data-testid="stApp"]')
    ?.getAttribute("data-test-script-state") === "notRunning" ? [Date.now()] : null"""


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT to the process group (the CLI and its Streamlit child), as Ctrl+C does."""
    if process.poll() is not None:
        return
    group = os.getpgid(process.pid)
    os.killpg(group, signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(group, signal.SIGKILL)
        process.wait(timeout=10)


def time_start(
    browser: Any,
    command: list[str],
    port: int,
    env: dict[str, str],
    cwd: Path,
    title: str,
    *,
    chat: bool,
) -> Start:
    """Start ``command`` (a server on ``port``), open it in a new browser context as soon
    as it answers its health check, and wait for the ``<h1>`` ``title`` (and, when
    ``chat``, the chat input) to be visible, then for the script run to end."""
    url = f"http://127.0.0.1:{port}"
    log = cwd / f"server-{port}.log"
    context = browser.new_context()
    page = context.new_page()
    timeout_ms = TIMEOUT_S * 1000

    def seconds_until(condition: str, arg: Any = None) -> list[float]:
        """Seconds from the start to each time ``condition`` (JavaScript) returned."""
        found = page.wait_for_function(condition, arg=arg, polling="raf", timeout=timeout_ms)
        return [float(ms) / 1000 - started_at for ms in found.json_value()]

    with log.open("wb") as output:
        started, started_at = time.perf_counter(), time.time()
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = started + TIMEOUT_S
        while not healthy(url):
            if process.poll() is not None or time.perf_counter() > deadline:
                raise SystemExit(f"{' '.join(command)} did not start:\n{log.read_text()}")
            time.sleep(0.02)
        ready = time.perf_counter() - started
        page.goto(url + "/", wait_until="commit")
        screen, widgets = seconds_until(SHOWN, [title, chat])
        (settled,) = seconds_until(SCRIPT_ENDED)
    finally:
        context.close()
        stop(process)
    return Start(ready, screen, widgets, settled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument(
        "--fresh-workspace", action="store_true", help="a new workspace for every keiri start"
    )
    args = parser.parse_args()
    if not CHROMIUM.is_file():
        raise SystemExit(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="keiri-streamlit-start-") as folder:
        root = Path(folder)
        bare = root / "bare.py"
        bare.write_text(f'import streamlit as st\n\nst.title("{BARE_TITLE}")\n', encoding="utf-8")
        bare_home = root / "bare-home"
        bare_home.mkdir()
        homes = itertools.count()

        def keiri_home() -> Path:
            home = root / (f"workspace-{next(homes)}" if args.fresh_workspace else "workspace")
            home.mkdir(exist_ok=True)
            return home

        def run(browser: Any, name: str) -> Start:
            port = free_port()
            if name == "bare":
                command, home, title = bare_command(bare, port), bare_home, BARE_TITLE
            else:
                command, home, title = keiri_command(port), keiri_home(), KEIRI_TITLE
            env = app_env(home)
            return time_start(browser, command, port, env, home, title, chat=name == "keiri")

        samples: dict[str, list[Start]] = {"bare": [], "keiri": []}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
            )
            try:
                for name in samples:  # warm the OS file cache, bytecode and the workspace
                    run(browser, name)
                for _ in range(args.repeats):
                    for name in samples:
                        samples[name].append(run(browser, name))
            finally:
                browser.close()

    print(f"repeats: {args.repeats}")
    print(f"fresh_workspace: {args.fresh_workspace}")
    print(f"load_average_1min: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cpus)")
    for name, starts in samples.items():
        for field in ("ready_s", "screen_s", "widgets_s", "settled_s"):
            if field == "widgets_s" and name == "bare":
                continue
            values = [getattr(start, field) for start in starts]
            print(f"{name}.{field}.median: {statistics.median(values):.3f}")
            print(f"{name}.{field}.min: {min(values):.3f}")

    def median(name: str, field: str) -> float:
        return statistics.median(getattr(start, field) for start in samples[name])

    bare_screen = median("bare", "screen_s")
    print(f"keiri_over_bare: {median('keiri', 'screen_s') / bare_screen:.2f} (target < {TARGET})")
    print(f"keiri_widgets_over_bare: {median('keiri', 'widgets_s') / bare_screen:.2f}")


if __name__ == "__main__":
    main()
