"""A team's whole journey in one browser, nothing from Streamlit (issue 34, Done when):
describe a procedure on 設計 → answer its questions → register it → run it from the Plans
page with an uploaded CP932 CSV → answer its paused form → download the Excel and check
its rows → reload → find the run in 履歴 by the Plan's name and open it again.

The offline generator builds the Plan (no model). Skipped (failed under CI=true) when
Chromium or the built web UI is missing."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_support import Site, require_web_out
from openpyxl import load_workbook
from playwright.sync_api import expect

INSTRUCTION = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
NAME = "交際費の明細抽出"
CSV = (
    "日付,部署,勘定科目,金額\r\n"
    '2026/04/01,営業部,交際費,"8,000"\r\n'
    "2026/04/02,営業部,交際費,3000\r\n"
    "2026/04/03,総務部,旅費交通費,9000\r\n"
    '2026/04/05,経理部,交際費,"12,500"\r\n'
)


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


def test_design_register_run_download_and_find_it_again(
    web_out: Path, site: Callable[..., Site], page: Any, tmp_path: Path
) -> None:
    csv = tmp_path / "経費精算.csv"
    csv.write_bytes(CSV.encode("cp932"))
    running = site(web_out, indexed=False, scripted=False)

    # 設計: the instruction, its questions, the finished Plan, registered by name
    page.goto(running.url + "/")
    page.get_by_role("navigation", name="メインメニュー").get_by_role("link", name="設計").click()
    page.get_by_label("やりたいこと（文章で）").fill(INSTRUCTION)
    page.get_by_role("button", name="Plan を作る").click()
    questions = page.get_by_test_id("design-questions")
    expect(questions.get_by_text("未回答")).to_have_count(2)
    questions.get_by_label("絞り込みの条件 1（「交際費」と比べる）に使う列は？").fill("勘定科目")
    questions.get_by_label("絞り込みの条件 2（5,000と比べる）に使う列は？").fill("金額")
    questions.get_by_role("button", name="回答して Plan を作り直す").click()
    expect(page.get_by_test_id("design-verdict")).to_contain_text("指示のすべての項目を満たし")
    expect(page.get_by_test_id("plan-diagram").locator(".react-flow__node")).to_have_count(4)
    register = page.get_by_test_id("design-register")
    register.get_by_label("Plan の名前").fill(NAME)
    register.get_by_role("button", name="登録する").click()
    page.get_by_role("link", name=f"Plan のページで「{NAME}」を実行する").click()

    # 実行: start, answer the paused form with the CSV, follow it to the end
    plan = page.get_by_test_id("plan-item").filter(has_text=NAME)
    plan.get_by_role("button", name="実行する").click()
    settings = plan.get_by_test_id("input-form")  # the answers, asked in the design's words
    expect(settings.get_by_label("絞り込みの条件 1（「交際費」と比べる）に使う列")).to_have_value(
        "勘定科目"
    )
    settings.get_by_test_id("input-submit").click()
    form = page.get_by_test_id("plan-run").get_by_test_id("input-form")
    expect(form).to_be_visible()
    expect(page.get_by_test_id("plan-diagram-steps").locator("li").first).to_have_attribute(
        "data-step-state", "waiting"
    )
    form.locator('input[type="file"]').first.set_input_files(str(csv))
    form.get_by_test_id("input-submit").click()
    expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=60_000)
    run_url = page.url

    link = page.get_by_test_id("plan-run").get_by_role("link", name=".xlsx")
    with page.expect_download() as download:
        link.first.click()
    assert download.value.suggested_filename.endswith(".xlsx")
    book = load_workbook(io.BytesIO(Path(download.value.path()).read_bytes()))
    rows = [row for sheet in book.worksheets for row in sheet.iter_rows(values_only=True)]
    header, body = rows[0], rows[1:]
    amounts = sorted(row[header.index("金額")] for row in body)
    assert amounts == [8000, 12500]  # 交際費 over 5,000 yen only, as numbers
    assert {row[header.index("勘定科目")] for row in body} == {"交際費"}

    # 履歴: after a reload, the run is found by the Plan's name and opens again
    page.reload()
    expect(page.get_by_test_id("run-status")).to_have_text("成功")
    page.get_by_role("navigation", name="メインメニュー").get_by_role("link", name="履歴").click()
    page.wait_for_url("**/history/")
    page.reload()
    page.get_by_label("言葉").fill(NAME)
    page.get_by_test_id("history-search").click()
    row = page.get_by_test_id("history-row").filter(has_text=NAME)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("成功")
    row.get_by_role("link", name=NAME).click()
    expect(page.get_by_test_id("run-status")).to_have_text("成功")
    assert page.url == run_url
