"""Settings are built by the surfaces, once, and handed down (issue 31 item 6): no
component builds its own ``Settings()`` or calls ``load_settings()`` — ``PlanEngine()``,
the demo and the migration environment used to, so a component could read another
environment than the command that called it. A section built alone (``ResearchSettings()``)
counts too: it holds the defaults, not what the environment says."""

from __future__ import annotations

import ast
from pathlib import Path

from keiri_agent.config import SECTIONS

SRC = Path(__file__).resolve().parents[2] / "src" / "keiri_agent"
SURFACES = {
    "cli/common.py",  # the CLI's one Settings per invocation
    "ui/session.py",  # the Streamlit session's one Settings
    "api/server.py",  # a uvicorn worker process's app (app_from_environment)
    "config.py",  # where they are defined (load_settings)
}
BUILDERS = {"Settings", "load_settings", *(section.__name__ for section in SECTIONS.values())}


def _builds_settings(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in BUILDERS
    ]


def test_only_the_surfaces_build_settings() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).as_posix() not in SURFACES
        for line in _builds_settings(path)
    ]
    assert found == [], "pass the caller's Settings instead: " + ", ".join(found)
