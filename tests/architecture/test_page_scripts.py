"""Streamlit draws every bare expression in a page script ("magic"): only calls may stand."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui"
PAGE_SCRIPTS = sorted(
    path
    for path in UI.glob("*.py")
    if f'"{path.name}"' in (UI / "app.py").read_text(encoding="utf-8")
)


def test_the_page_scripts_are_found() -> None:
    assert {path.name for path in PAGE_SCRIPTS} >= {"run_page.py", "helpdesk_page.py"}


@pytest.mark.parametrize("script", PAGE_SCRIPTS, ids=lambda path: path.name)
def test_no_bare_value_would_be_drawn_on_the_page(script: Path) -> None:
    body = ast.parse(script.read_text(encoding="utf-8")).body
    drawn = [
        f"{script.name}:{node.lineno}"
        for node in body[1:]  # body[0] is the module docstring (Streamlit skips it)
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call | ast.Await)
    ]
    assert not drawn, f"bare values Streamlit would show to users: {drawn}"
