"""Wall time of the ``keiri-agent`` commands a user types, from process start to exit.

Each command runs as a fresh process through the installed console script (offline:
no provider variables, a throwaway ``KEIRI_AGENT_HOME``), like a user at a terminal.
Prints ``name: value`` lines: the min and median seconds of ``--repeats`` runs of

* ``--help``;
* ``analyze`` on the bundled sales sample with a table question (offline reasoner);
* ``helpdesk ask`` on the bundled sample knowledge base (indexed once beforehand,
  not timed);
* ``plan validate`` on the bundled sample Plan ``expense_check.yaml``;

and each median as a ratio to ``python -c "import pandas"`` measured in the same run
(targets: ``--help`` ≤ 0.5×, ``analyze`` ≤ 3×). Beside it, the floor ``analyze`` cannot go
below, each as its own ratio to ``import pandas``:

* ``import_analysis_libraries`` imports only the libraries the command must load (pandas,
  LangGraph's ``StateGraph`` with the langchain-core and langsmith modules it imports, the
  settings' pydantic-settings), as published;
* ``import_analysis_stack`` imports the same after ``keiri_agent``, whose package
  ``__init__`` defers the parts of those libraries LangGraph never uses
  (``keiri_agent/deferred_packages.py``): what the command really pays for them;

and ``analyze.ratio_to_analysis_stack`` (what our code and the work itself add). Runs are
interleaved (one of each command per round) so that load on a shared machine hits all of
them alike.

    .venv/bin/python benchmarks/cli_latency.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "keiri_agent" / "samples"
OFFLINE_DROPPED = ("KEIRI_AGENT_", "OPENAI_", "AZURE_OPENAI_", "LANGCHAIN_", "LANGSMITH_")
TARGETS = {"help": 0.5, "analyze": 3.0}
LIBRARY_IMPORTS = "import pandas, langgraph.graph, langchain_core.messages, pydantic_settings"
STACK_IMPORTS = f"import keiri_agent; {LIBRARY_IMPORTS}"


def offline_env(home: Path) -> dict[str, str]:
    """The current environment without provider/tracing variables, with ``home`` as the
    workspace."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(OFFLINE_DROPPED)}
    env["KEIRI_AGENT_HOME"] = str(home)
    return env


def cli() -> str:
    """The ``keiri-agent`` console script next to this interpreter."""
    script = Path(sys.executable).with_name("keiri-agent")
    found = str(script) if script.exists() else shutil.which("keiri-agent")
    if found is None:
        raise SystemExit("keiri-agent not found: run `make install` first")
    return found


def wall_s(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting ``command`` to its exit; a failure stops the benchmark."""
    start = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    exe = cli()
    with tempfile.TemporaryDirectory(prefix="keiri-cli-latency-") as folder:
        home = Path(folder)
        env = offline_env(home)
        wall_s([exe, "helpdesk", "index", "--sample", "--json"], env, home)  # set-up, untimed
        commands = {
            "import_pandas": [sys.executable, "-c", "import pandas"],
            "import_analysis_libraries": [sys.executable, "-c", LIBRARY_IMPORTS],
            "import_analysis_stack": [sys.executable, "-c", STACK_IMPORTS],
            "help": [exe, "--help"],
            "analyze": [exe, "analyze", str(SAMPLES / "sales.csv"), "地域別の売上合計"],
            "helpdesk_ask": [exe, "helpdesk", "ask", "パスワードを忘れました"],
            "plan_validate": [exe, "plan", "validate", str(SAMPLES / "plans/expense_check.yaml")],
        }
        for command in commands.values():  # warm the OS file cache and bytecode once
            wall_s(command, env, home)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, command in commands.items():
                samples[name].append(wall_s(command, env, home))

    baseline = statistics.median(samples["import_pandas"])
    stack = statistics.median(samples["import_analysis_stack"])
    print(f"repeats: {args.repeats}")
    print(f"load_average_1min: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cpus)")
    for name, times in samples.items():
        print(f"{name}.min_s: {min(times):.3f}")
        print(f"{name}.median_s: {statistics.median(times):.3f}")
        if name != "import_pandas":
            ratio = statistics.median(times) / baseline
            target = f" (target ≤ {TARGETS[name]})" if name in TARGETS else ""
            print(f"{name}.ratio_to_import_pandas: {ratio:.2f}{target}")
    print(f"analyze.ratio_to_analysis_stack: {statistics.median(samples['analyze']) / stack:.2f}")


if __name__ == "__main__":
    main()
