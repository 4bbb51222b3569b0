"""A new user's walk through the Streamlit app (``keiri-agent ui``) in headless Chromium.

The app runs as a child process (the command a user types) on a free loopback port,
over a temporary workspace, offline (the rule-based reasoner, no LLM). The walk
(issue 16, "Done when"):

- データ分析: upload the bundled CP932 CSV (``samples/reconciliation/請求一覧.csv``),
  ask three questions (each answered with a table), an out-of-scope one (refused with
  「…には対応していません」), a normal one (still answered), then 「レポートにまとめて」
  (the report is shown) and download the report; a reload (F5) keeps the
  conversation (the URL's ``thread``/``data`` query parameters);
- 実行: pick the sample Plan 経費精算チェック, fill its form shown before the run, run
  it and download the ``.xlsx`` it writes (it opens with openpyxl).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import openpyxl
import pytest
from playwright.sync_api import expect
from streamlit_support import UiProcess, settle

from keiri_agent.samples import __file__ as samples_init

SAMPLES = Path(samples_init).parent
CP932_CSV = SAMPLES / "reconciliation" / "請求一覧.csv"
EXPENSES = SAMPLES / "expenses" / "経費明細.xlsx"
TIMEOUT_MS = 90_000
QUESTIONS = [
    ("取引先別の請求額の合計を見せて", "北斗物産株式会社"),
    ("請求額の平均は？", "請求額"),
    ("月別の請求額の推移", "2025-05"),
]
OUT_OF_SCOPE = "来月の売上を予測して"
STILL_ANSWERED = ("請求額が最も大きい取引先は？", "北斗物産株式会社")
REPORT_REQUEST = "レポートにまとめて"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[UiProcess]:
    ui = UiProcess(tmp_path / "workspace").wait_ready()
    yield ui
    ui.stop()


def _messages(page: Any) -> Any:
    return page.get_by_test_id("stChatMessage")


def _ask(page: Any, question: str) -> Any:
    """Type ``question`` into the chat, wait for the answer; the assistant's message."""
    before = _messages(page).count()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    expect(_messages(page)).to_have_count(before + 2, timeout=TIMEOUT_MS)
    settle(page)
    answer = _messages(page).nth(before + 1)
    expect(_messages(page).nth(before)).to_contain_text(question)
    return answer


def _answered_with_table(answer: Any, expected: str) -> None:
    """An answer with a visible table (Streamlit's data frame) and no error."""
    expect(answer.get_by_test_id("stDataFrame").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(answer.get_by_test_id("stAlertContentError")).to_have_count(0)
    expect(answer).to_contain_text(expected)
    expect(answer).not_to_contain_text("どのような分析をしますか")


def _analysis_walk(page: Any, app: UiProcess, tmp_path: Path) -> None:
    page.goto(app.url + "/")
    settle(page)
    expect(page.get_by_role("heading", name="データ分析")).to_be_visible()
    zone = page.get_by_test_id("stFileUploaderDropzone").first
    expect(zone.get_by_role("button", name="ファイルを選択", exact=True)).to_be_visible()
    heard = zone.aria_snapshot()  # what a screen reader reads: Streamlit's English texts hidden
    assert "Upload" not in heard and "per file" not in heard, heard
    assert "ここへのドロップも可" in heard, heard
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(CP932_CSV))
    settle(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar).to_contain_text("請求一覧.csv: 6 行 × 6 列", timeout=TIMEOUT_MS)

    for question, expected in QUESTIONS:
        _answered_with_table(_ask(page, question), expected)

    refused = _ask(page, OUT_OF_SCOPE)
    expect(refused).to_contain_text("には対応していません")
    expect(refused.get_by_test_id("stDataFrame")).to_have_count(0)

    _answered_with_table(_ask(page, STILL_ANSWERED[0]), STILL_ANSWERED[1])

    report = _ask(page, REPORT_REQUEST)
    expect(report.get_by_test_id("stExpander").filter(has_text="レポート")).to_be_visible()
    expect(report).to_contain_text("分析レポート")
    expect(report).to_contain_text("取引先別の集計")
    with page.expect_download(timeout=TIMEOUT_MS) as downloading:
        report.get_by_role("button", name="レポート（Markdown）をダウンロード").click()
    download = downloading.value
    assert download.suggested_filename == "report.md"
    saved = tmp_path / "report.md"
    download.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert text.startswith("# 分析レポート")
    assert "請求一覧.csv" in text
    assert "北斗物産株式会社" in text

    # F5: the conversation and its file come back from the URL's query parameters
    query = parse_qs(urlparse(page.url).query)
    assert query.get("thread") and query.get("data"), page.url
    count = 2 * (len(QUESTIONS) + 3)  # each request and its answer
    expect(_messages(page)).to_have_count(count)
    page.reload()
    settle(page)
    expect(_messages(page)).to_have_count(count, timeout=TIMEOUT_MS)
    expect(_messages(page).first).to_contain_text(QUESTIONS[0][0])
    expect(_messages(page).last).to_contain_text("分析レポート")
    assert parse_qs(urlparse(page.url).query).get("thread") == query["thread"]
    expect(page.get_by_test_id("stSidebar")).to_contain_text("請求一覧.csv: 6 行 × 6 列")
    _answered_with_table(_ask(page, QUESTIONS[0][0]), QUESTIONS[0][1])  # the file is back


def _run_walk(page: Any, tmp_path: Path) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="実行").click()
    settle(page)
    expect(page.get_by_role("heading", name="実行", exact=True)).to_be_visible()
    plan_box = page.get_by_test_id("stSelectbox").filter(has_text="Plan")
    plan_box.click()
    page.get_by_role("option", name=re.compile("サンプル: 経費精算チェック")).click()
    settle(page)
    expect(page.get_by_role("heading", name="経費精算チェック", exact=True)).to_be_visible()

    # the form is there before 実行
    expect(page.get_by_role("heading", name="経費明細と上限金額")).to_be_visible()
    workbook_field = page.get_by_role("region", name=re.compile("経費明細（Excel）"))
    workbook_field.locator("input[type=file]").set_input_files(str(EXPENSES))
    settle(page)
    expect(page.get_by_text("保持中のファイル: 経費明細.xlsx")).to_be_visible()
    limit = page.get_by_role("spinbutton", name=re.compile("1件あたりの上限金額（円）"))
    expect(limit).to_have_value("30000")  # a yen amount, as the Plan gives it (not 30000.00)
    limit.fill("20000")
    limit.press("Enter")
    settle(page)
    expect(limit).to_have_value("20000")

    page.get_by_role("button", name="実行", exact=True).click()
    settle(page)
    expect(page.get_by_role("heading", name=re.compile("結果: 完了"))).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    download_button = page.get_by_role("button", name=re.compile(r"\.xlsx をダウンロード"))
    expect(download_button).to_be_visible()
    with page.expect_download(timeout=TIMEOUT_MS) as downloading:
        download_button.click()
    download = downloading.value
    assert download.suggested_filename.endswith(".xlsx"), download.suggested_filename
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    workbook = openpyxl.load_workbook(io.BytesIO(saved.read_bytes()))
    assert "上限超過" in workbook.sheetnames
    rows = list(workbook["上限超過"].iter_rows(values_only=True))
    assert len(rows) > 1, rows  # a header and at least one item over 20,000 円


def test_a_new_user_walks_through_the_app(app: UiProcess, page: Any, tmp_path: Path) -> None:
    pending: dict[int, str] = {}  # requests the browser has not finished (a stall shows here)
    page.on("request", lambda request: pending.__setitem__(id(request), request.url))
    page.on("requestfinished", lambda request: pending.pop(id(request), None))
    page.on("requestfailed", lambda request: pending.pop(id(request), None))
    try:
        _analysis_walk(page, app, tmp_path)
        _run_walk(page, tmp_path)
    except BaseException:
        page.screenshot(path=str(tmp_path / "walk-failure.png"), full_page=True)
        (tmp_path / "walk-failure.html").write_text(page.content(), encoding="utf-8")
        print(
            f"screenshot: {tmp_path / 'walk-failure.png'} (page: walk-failure.html)\n"
            "requests not finished:\n" + "\n".join(pending.values()) + "\n"
            f"server log:\n{app.output()}"
        )
        raise
    assert "Traceback" not in app.output(), app.output()
