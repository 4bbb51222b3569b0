"""The 予定 page in headless Chromium (issue 31): a schedule is added with a business-day
rule and shown with its next date in 日本時間; a rule the product cannot read is refused
with its Japanese message; a schedule is paused, then deleted after confirmation. Skipped
(failed under CI=true) when Chromium or the built web UI is missing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_support import Site, registering, require_web_out
from playwright.sync_api import expect

PLAN = """\
apiVersion: v1
id: monthly_close
version: 0.1.0
graph:
  - id: g
    block: text.template
    in: {template: "締め", values: {}}
    out: {text: t}
"""


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


_register = registering("monthly_close.yaml", PLAN)


def test_a_schedule_is_added_paused_and_deleted_in_the_browser(
    web_out: Path, site: Callable[..., Site], page: Any
) -> None:
    server = site(web_out, indexed=False, prepare=_register)
    page.goto(server.url + "/schedules/")
    expect(page.get_by_test_id("schedules-empty")).to_be_visible()

    page.get_by_test_id("schedule-rule").fill("毎日")
    page.get_by_role("button", name="追加する").click()
    error = page.get_by_test_id("schedule-add-error")
    expect(error).to_contain_text("予定の書き方「毎日」を読み取れません")

    page.get_by_test_id("schedule-rule").fill("毎月第5営業日")
    page.get_by_test_id("schedule-at").fill("09:30")
    page.get_by_role("button", name="追加する").click()
    item = page.get_by_test_id("schedule-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("monthly_close")
    expect(item).to_contain_text("毎月第5営業日 09:30")
    expect(item).to_contain_text(re.compile(r"\d{4}/\d{2}/\d{2} 09:30"))  # next, in 日本時間
    upcoming = item.get_by_test_id("schedule-upcoming").locator("li")
    expect(upcoming).to_have_count(4)
    shown = upcoming.all_inner_texts()
    assert all(re.fullmatch(r"\d{4}/\d{2}/\d{2} 09:30", text) for text in shown), shown
    assert len({text[:7] for text in shown}) == 4 and shown == sorted(shown)  # one a month

    page.get_by_test_id("schedule-pause").click()
    expect(item).to_contain_text("一時停止中")
    page.get_by_test_id("schedule-delete").click()
    page.get_by_test_id("confirm-delete").click()
    expect(page.get_by_test_id("schedules-empty")).to_be_visible()
