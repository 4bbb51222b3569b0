"""A Plan that asks for a file, run from the web UI alone (issue 34): 実行する → the run
waits at its input step and shows the step's form (the field's label, what it accepts);
送信 without the file puts 「入力してください」 next to the field; a CP932 CSV uploaded
→ the run goes on, its table is shown and its workbook downloads; after a reload the
run is still there (its id is in the address). Skipped (failed under CI=true) when
Chromium or the built web UI is missing."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import Site, registering, require_web_out, visible_text
from openpyxl import load_workbook
from playwright.sync_api import expect

PLAN = """\
apiVersion: v1
id: expenses
version: 0.1.0
title: 部署別の経費集計
graph:
  - id: upload
    block: ui.interactive_input
    title: 経費データの受け取り
    in:
      mode: collect
      message: 経費の CSV を選んでください
      requirements:
        - {id: expenses, type: file, label: 経費CSV, accept: .csv}
    out: {collected_data: collected}
  - id: read
    block: csv.read
    title: CSV の読み込み
    in: {file: "${upload.collected.expenses}"}
    out: {records: rows}
  - id: total
    block: table.aggregate
    title: 部署別の合計
    in:
      records: "${read.rows}"
      group_by: [部署]
      metrics: {金額: [sum]}
    out: {records: totals}
  - id: book
    block: excel.write
    title: 集計表の作成
    in:
      workbook: null
      data: "${total.totals}"
      output_config: {sheet: 部署別, create_sheet: true, mode: overwrite}
    out: {workbook: workbook}
exports:
  - {from: total.totals, as: totals, title: 部署別の合計}
  - {from: book.workbook, as: workbook, title: 部署別集計表}
"""


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


_register = registering("expenses.yaml", PLAN)


def test_a_plan_that_asks_for_a_csv_runs_in_the_web_ui(
    web_out: Path, site: Callable[..., Site], page: Any, tmp_path: Path
) -> None:
    csv = tmp_path / "経費.csv"
    csv.write_bytes('部署,金額\r\n営業部,"1,200"\r\n総務部,300\r\n営業部,800\r\n'.encode("cp932"))
    running = site(web_out, indexed=False, prepare=_register)

    page.goto(running.url + "/plans/")
    page.get_by_test_id("plan-start").click()
    form = page.get_by_test_id("input-form")
    expect(form).to_contain_text("入力: 経費データの受け取り")
    expect(form).to_contain_text("経費の CSV を選んでください")
    field = form.get_by_label("経費CSV")
    assert field.get_attribute("accept") == ".csv"
    assert "run=run_" in page.url
    steps = page.get_by_test_id("plan-diagram-steps").locator("li")
    expect(steps).to_have_count(4)
    expect(steps.first).to_have_attribute("data-step-state", "waiting")  # the paused step
    expect(steps.first).to_contain_text("経費データの受け取り")
    expect(steps.nth(2)).to_contain_text("「CSV の読み込み」の結果を使います")
    expect(steps.nth(3)).to_have_attribute("data-step-state", "pending")
    boxes = page.get_by_test_id("plan-diagram").locator(".react-flow__node")
    expect(boxes).to_have_count(4)
    expect(page.get_by_test_id("plan-diagram").locator(".react-flow__edge")).to_have_count(3)
    expect(boxes.first).to_contain_text("入力待ち")

    form.get_by_test_id("input-submit").click()
    expect(page.get_by_test_id("input-problem")).to_have_text("入力してください（必須）")

    page.get_by_test_id("input-form").get_by_label("経費CSV").set_input_files(str(csv))
    page.get_by_test_id("input-form").get_by_test_id("input-submit").click()
    expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=30_000)
    for index in range(4):  # followed live: no reload
        expect(steps.nth(index)).to_have_attribute("data-step-state", "success")
    outputs = page.get_by_test_id("plan-run")
    expect(outputs.locator("dt").first).to_have_text("部署別の合計")
    expect(outputs.locator("table").first).to_contain_text("2000")  # 営業部's total
    page.get_by_text("途中の結果").click()
    expect(outputs.locator("table", has_text="1200")).to_have_count(1)  # "1,200" in CP932

    with page.expect_download() as download:
        page.get_by_role("link", name="部署別集計表.xlsx").click()
    assert download.value.suggested_filename == "部署別集計表.xlsx"
    book = load_workbook(io.BytesIO(Path(download.value.path()).read_bytes()))
    rows = list(book["部署別"].iter_rows(values_only=True))
    assert rows[0] == ("部署", "金額_sum") and ("営業部", 2000) in rows

    page.reload()
    expect(page.get_by_test_id("run-status")).to_have_text("成功")

    run_id = page.url.split("run=")[1]
    before = httpx.get(f"{running.server.url}/api/runs/{run_id}").json()["attempt"]
    page.get_by_test_id("run-rerun").get_by_label("やり直すステップ").select_option(
        label="部署別の合計"
    )
    page.get_by_test_id("run-rerun-button").click()
    # The page showed 成功 before the click too: wait for the server's new attempt first.
    deadline = time.monotonic() + 30
    after = httpx.get(f"{running.server.url}/api/runs/{run_id}").json()
    while (after["attempt"], after["status"]) != (before + 1, "success"):
        assert time.monotonic() < deadline, after
        time.sleep(0.2)
        after = httpx.get(f"{running.server.url}/api/runs/{run_id}").json()
    expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=30_000)
    expect(page.get_by_test_id("run-rerun-error")).to_have_count(0)


IDS = re.compile(r"\brun_[0-9a-f]{12}\b|\bresearch_[0-9a-f]{12}\b")
CODES = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b")
NODE_IDS = ("upload", "read", "total", "book", "expenses", "collected", "totals", "rows")


def test_pages_speak_in_words_not_ids(
    web_out: Path, site: Callable[..., Site], page: Any, tmp_path: Path
) -> None:
    import base64

    import httpx

    running = site(web_out, indexed=False, prepare=_register)
    data = base64.b64encode("部署,金額\r\n営業部,100\r\n".encode("cp932")).decode()
    answers = {"upload": {"expenses": {"name": "経費.csv", "base64": data}}}
    started = httpx.post(
        f"{running.server.url}/api/plans/expenses/runs", json={"answers": answers}, timeout=30
    )
    run_id = started.json()["run_id"]

    pages = ("/plans/", f"/plans/?run={run_id}", "/approvals/", "/schedules/", "/history/")
    for path in (*pages, "/analysis/", "/design/", "/helpdesk/", "/sessions/", "/audit/"):
        page.goto(running.url + path)
        page.wait_for_load_state("networkidle")
        if "run=" in path:
            expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=30_000)
            expect(page.get_by_test_id("run-output").first).to_be_visible()
        text = visible_text(page)
        assert not IDS.findall(text), (path, IDS.findall(text))
        assert not CODES.findall(text), (path, CODES.findall(text))
        words = set(re.findall(r"[A-Za-z_]+", text))
        assert not words & set(NODE_IDS), (path, words & set(NODE_IDS))
