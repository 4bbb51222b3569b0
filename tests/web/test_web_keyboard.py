"""The web UI by keyboard alone (issue 34, item 8): a Plan is started, its form answered
and its workbook downloaded with Tab and Enter only; on every page each control is
reached by Tab, in order, and shows where the focus is. Skipped (failed under CI=true)
when Chromium or the built web UI is missing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import PAGES, Site, registering, require_web_out
from playwright.sync_api import expect
from test_web_plan_run import PLAN

FOCUSED = """() => {
    const element = document.activeElement;
    if (!element || element === document.body) return null;
    const style = getComputedStyle(element);
    return {
        tag: element.tagName.toLowerCase(),
        testid: element.closest("[data-testid]")?.getAttribute("data-testid") || "",
        text: (element.innerText || element.getAttribute("aria-label") || "").trim().slice(0, 40),
        visible: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0
            || style.boxShadow !== "none",
        key: element.outerHTML.slice(0, 120),
    };
}"""

CONTROLS = """() => [...document.querySelectorAll(
    'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select, '
    + 'textarea, [tabindex="0"]'
)].filter((element) => {
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0
        && !element.closest("details:not([open]) > :not(summary)");
}).map((element) => element.outerHTML.slice(0, 120))"""


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


_register = registering("expenses.yaml", PLAN)


def tab_to(page: Any, matches: Callable[[dict[str, Any]], bool], limit: int = 80) -> dict[str, Any]:
    """Press Tab until the focused element ``matches``; it, or a failure after ``limit``."""
    seen: list[str] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is not None and matches(focused):
            return dict(focused)
        seen.append(str(focused and (focused["testid"] or focused["text"])))
    raise AssertionError(f"not reached by Tab; focus went through {seen}")


def test_a_plan_runs_by_keyboard_alone(
    web_out: Path, site: Callable[..., Site], page: Any, tmp_path: Path
) -> None:
    csv = tmp_path / "経費.csv"
    csv.write_bytes("部署,金額\r\n営業部,1200\r\n総務部,300\r\n".encode("cp932"))
    running = site(web_out, indexed=False, prepare=_register)
    page.goto(running.url + "/plans/")
    expect(page.get_by_test_id("plan-start").first).to_be_visible()

    tab_to(page, lambda focused: focused["testid"] == "plan-start")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("input-form")).to_be_visible()
    tab_to(page, lambda focused: focused["tag"] == "input")
    page.locator(":focus").set_input_files(str(csv))  # the one step a file chooser needs
    tab_to(page, lambda focused: focused["testid"] == "input-submit")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=30_000)

    with page.expect_download() as download:
        tab_to(page, lambda focused: focused["tag"] == "a" and ".xlsx" in focused["text"])
        page.keyboard.press("Enter")
    assert download.value.suggested_filename == "部署別集計表.xlsx"


def test_every_control_is_reached_by_tab_and_shows_the_focus(
    web_out: Path, site: Callable[..., Site], page: Any
) -> None:
    running = site(web_out, indexed=False, prepare=_register)
    started = httpx.post(f"{running.server.url}/api/plans/expenses/runs", json={}, timeout=30)
    assert started.status_code == 202, started.text
    problems: dict[str, list[str]] = {}
    for path in (*PAGES, f"/plans/?run={started.json()['run_id']}"):
        page.goto(running.url + path)
        page.wait_for_load_state("networkidle")
        controls = page.evaluate(CONTROLS)
        reached: list[str] = []
        unseen_focus: list[str] = []
        for _ in range(4 * len(controls) + 10):  # a date field takes a Tab per part
            page.keyboard.press("Tab")
            focused = page.evaluate(FOCUSED)
            if focused is None:  # past the last control: the browser's own
                break
            if focused["key"] in reached:
                continue
            reached.append(focused["key"])
            if not focused["visible"]:
                unseen_focus.append(focused["key"])
        missing = [control for control in controls if control not in reached]
        found = [f"not reached by Tab: {item}" for item in missing]
        found += [f"focus not visible: {item}" for item in unseen_focus]
        if found:
            problems[path] = found
    assert problems == {}
