"""The HelpDesk agent reads no environment: the surface builds ``Settings`` and passes them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import keiri_agent.agents.helpdesk as helpdesk
from keiri_agent.agents.helpdesk import HelpDeskAgent
from keiri_agent.agents.helpdesk.desk import HelpDesk

PACKAGE = Path(helpdesk.__file__).parent
ENVIRONMENT_READERS = {"Settings", "load_settings", "getenv", "environ", "dotenv_values"}


def environment_reads(path: Path) -> list[str]:
    """``file:line name`` of every call or attribute that reads settings or the environment."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        name = None
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        elif isinstance(node, ast.Attribute) and node.attr == "environ":
            name = node.attr
        if name in ENVIRONMENT_READERS:
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")
    return found


def test_no_module_of_the_agent_reads_settings_or_the_environment() -> None:
    reads = [read for path in sorted(PACKAGE.rglob("*.py")) for read in environment_reads(path)]
    assert reads == []


@pytest.mark.parametrize("entry", [HelpDesk, HelpDeskAgent])
def test_settings_are_a_required_argument(entry: type) -> None:
    parameter = inspect.signature(entry).parameters["settings"]
    assert parameter.default is inspect.Parameter.empty
