"""Accessibility of every page of the web UI (issue 34, item 8): axe-core (the npm
package, injected into the page) finds no serious or critical violation at desktop
width and at 390 px; at 390 px nothing is wider than the screen. Skipped (failed under
CI=true) when Chromium or the built web UI is missing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import (
    AXE,
    PAGES,
    Site,
    registering,
    require_web_out,
    serious_violations,
    unavailable,
)

PLAN = """\
apiVersion: v1
id: monthly_close
version: 0.1.0
title: 月次締め
graph:
  - id: note
    block: text.template
    title: 締めの案内
    in: {template: "締め", values: {}}
    out: {text: text}
"""


@pytest.fixture
def web_out() -> Any:
    if not AXE.is_file():
        unavailable("axe-core is not installed: cd web && npm ci")
    return require_web_out()


_register = registering("monthly_close.yaml", PLAN)


@pytest.mark.parametrize("width", [1280, 390])
def test_no_page_has_a_serious_accessibility_violation(
    web_out: Path, site: Callable[..., Site], chromium: Any, width: int
) -> None:
    running = site(web_out, indexed=False, prepare=_register)
    context = chromium.new_context(viewport={"width": width, "height": 900}, locale="ja-JP")
    try:
        page = context.new_page()
        problems: dict[str, list[str]] = {}
        runs = f"{running.server.url}/api/plans/monthly_close/runs"
        started = httpx.post(runs, json={}, timeout=30)
        assert started.status_code == 202, started.text
        run_page = f"/plans/?run={started.json()['run_id']}"  # a run with its diagram
        for path in (*PAGES, run_page):
            page.goto(running.url + path)
            page.wait_for_load_state("networkidle")
            if path == run_page:
                page.locator(".react-flow__node").first.wait_for()
            found = serious_violations(page)
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            if overflow > 1:
                found.append(f"the page is {overflow}px wider than the screen")
            if found:
                problems[path] = found
        assert problems == {}
    finally:
        context.close()


def test_the_check_sees_a_violation_when_there_is_one(
    web_out: Path, site: Callable[..., Site], page: Any
) -> None:
    running = site(web_out, indexed=False)
    page.goto(running.url + "/")
    # After the page has loaded its data: a re-render must not take the button away.
    page.wait_for_load_state("networkidle")
    page.evaluate("document.body.append(document.createElement('button'))")
    assert any(item.startswith("button-name (critical)") for item in serious_violations(page))
