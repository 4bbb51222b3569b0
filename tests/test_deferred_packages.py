"""Deferred package ``__init__``s: a leaf submodule imports alone, the package's own
``__init__`` runs once, on first use, and the package then behaves as it always did.

Each case runs in a fresh interpreter: the point is what a process loads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path


def _run(code: str, *, cwd: Path | None = None) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _make_package(root: Path) -> None:
    package = root / "heavy_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import pathlib
            _runs = pathlib.Path(__file__).with_name("runs.txt")
            _runs.write_text(_runs.read_text() + "x" if _runs.exists() else "x")
            from heavy_pkg.leaf import LEAF
            VALUE = LEAF + 1

            def __getattr__(name):
                if name == "lazy_name":
                    return "from the package's own __getattr__"
                raise AttributeError(name)
            """
        ),
        encoding="utf-8",
    )
    (package / "leaf.py").write_text("LEAF = 41\n", encoding="utf-8")


def test_a_leaf_submodule_imports_without_the_package_init(tmp_path: Path) -> None:
    _make_package(tmp_path)
    seen = _run(
        """
        import json, sys
        from keiri_agent import deferred_packages
        deferred_packages.install(["heavy_pkg"])
        from heavy_pkg.leaf import LEAF
        runs_before = (sys.modules["heavy_pkg"].__path__[0] + "/runs.txt")
        import os
        ran_before = os.path.exists(runs_before)
        import heavy_pkg
        value = heavy_pkg.VALUE
        own = heavy_pkg.lazy_name
        try:
            heavy_pkg.nothing_here
            missing = "no error"
        except AttributeError:
            missing = "AttributeError"
        print(json.dumps({"leaf": LEAF, "ran_before": ran_before, "value": value,
                          "own": own, "missing": missing,
                          "runs": open(runs_before).read()}))
        """,
        cwd=tmp_path,
    )
    assert seen == {
        "leaf": 41,
        "ran_before": False,
        "value": 42,
        "own": "from the package's own __getattr__",
        "missing": "AttributeError",
        "runs": "x",
    }


def test_the_init_runs_once_when_threads_reach_it_together(tmp_path: Path) -> None:
    _make_package(tmp_path)
    seen = _run(
        """
        import json, threading
        from keiri_agent import deferred_packages
        deferred_packages.install(["heavy_pkg"])
        import heavy_pkg.leaf, heavy_pkg
        start = threading.Barrier(8)
        values = []
        def use():
            start.wait()
            values.append(heavy_pkg.VALUE)
        threads = [threading.Thread(target=use) for _ in range(8)]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        print(json.dumps({"values": values,
                          "runs": open(heavy_pkg.__path__[0] + "/runs.txt").read()}))
        """,
        cwd=tmp_path,
    )
    assert seen == {"values": [42] * 8, "runs": "x"}


def test_langgraph_loads_no_langsmith_api_models_or_platform_client() -> None:
    seen = _run(
        """
        import json, sys
        import keiri_agent, langgraph.graph
        loaded = {name: name in sys.modules for name in (
            "langsmith.types.run_select_field", "langsmith.types.run", "langgraph_sdk.client",
            "httpx", "websockets")}
        print(json.dumps(loaded))
        """
    )
    assert seen == {
        "langsmith.types.run_select_field": True,
        "langsmith.types.run": False,
        "langgraph_sdk.client": False,
        "httpx": False,
        "websockets": False,
    }


def test_the_deferred_packages_work_as_before_when_used() -> None:
    seen = _run(
        """
        import json
        import keiri_agent, langgraph.graph
        from langsmith.types import Run
        import langgraph_sdk
        from langgraph_sdk.client import get_client
        print(json.dumps({"run": Run.__name__, "same": langgraph_sdk.get_client is get_client,
                          "version": bool(langgraph_sdk.__version__)}))
        """
    )
    assert seen == {"run": "Run", "same": True, "version": True}


def test_a_failing_init_raises_on_use_and_the_next_import_retries(tmp_path: Path) -> None:
    package = tmp_path / "broken_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import pathlib\n"
        "_flag = pathlib.Path(__file__).with_name('fixed')\n"
        "if not _flag.exists():\n"
        "    raise RuntimeError('broken on purpose')\n"
        "VALUE = 'fixed'\n",
        encoding="utf-8",
    )
    (package / "leaf.py").write_text("LEAF = 1\n", encoding="utf-8")
    seen = _run(
        """
        import json, pathlib, sys
        from keiri_agent import deferred_packages
        deferred_packages.install(["broken_pkg"])
        import broken_pkg.leaf, broken_pkg
        try:
            broken_pkg.VALUE
            first = "no error"
        except RuntimeError as error:
            first = str(error)
        in_modules = "broken_pkg" in sys.modules
        pathlib.Path(broken_pkg.__path__[0], "fixed").write_text("")
        import broken_pkg as again
        print(json.dumps({"first": first, "in_modules": in_modules, "again": again.VALUE}))
        """,
        cwd=tmp_path,
    )
    assert seen == {"first": "broken on purpose", "in_modules": False, "again": "fixed"}


def test_a_plain_module_or_a_missing_name_imports_as_usual(tmp_path: Path) -> None:
    (tmp_path / "plain_module.py").write_text("VALUE = 'ran at import'\n", encoding="utf-8")
    seen = _run(
        """
        import json, sys
        from keiri_agent import deferred_packages
        deferred_packages.install(["plain_module", "no_such_package"])
        import plain_module
        ran = plain_module.__dict__.get("VALUE")
        try:
            import no_such_package
            missing = "imported"
        except ModuleNotFoundError:
            missing = "ModuleNotFoundError"
        print(json.dumps({"ran": ran, "missing": missing}))
        """,
        cwd=tmp_path,
    )
    assert seen == {"ran": "ran at import", "missing": "ModuleNotFoundError"}
