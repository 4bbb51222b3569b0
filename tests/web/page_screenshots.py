"""Save a screenshot of each page of the web UI to docs/ (1280×900, full page):

- ``web-plan-form.png``: a Plan run paused at its input step — the diagram with the
  step highlighted, and the step's form;
- ``web-plan-run.png``: the same run finished — its diagram, its results by title, the
  workbook;
- ``web-plans.png``: the Plans list with the run;
- ``web-approvals.png``: 承認待ち with a run waiting for approval (totals and table);
- ``web-audit.png``: 監査ログ;
- ``web-schedules.png``: 予定 with a schedule and its next dates;
- ``web-analysis.png``: データ分析 with a CP932 CSV loaded and a chart answered;
- ``web-design.png``: 設計 with a generated Plan, its questions, steps and diagram;
- ``web-helpdesk.png``: ヘルプデスク answering from the bundled sample;
- ``web-history.png``: 履歴 with everything above.

    .venv/bin/python tests/web/page_screenshots.py [output folder]

One person's loopback server over a temporary workspace with two sample Plans. Needs
the built web UI (``make web``) and /usr/bin/chromium (``fonts-noto-cjk``)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "api"), str(HERE.parent / "agents" / "research")]

from api_support import LiveServer  # noqa: E402
from browser_support import CHROMIUM, CHROMIUM_FLAGS, WEB_OUT  # noqa: E402
from test_web_people import PLAN as APPROVAL_PLAN  # noqa: E402
from test_web_plan_run import PLAN as EXPENSES_PLAN  # noqa: E402

from keiri_agent.api.app import create_app  # noqa: E402
from keiri_agent.config import Settings  # noqa: E402

DEFAULT_FOLDER = HERE.parents[1] / "docs"
CSV = '部署,金額\r\n営業部,"1,200"\r\n総務部,300\r\n営業部,800\r\n経理部,450\r\n'
DESIGN_INSTRUCTION = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
HELPDESK_QUESTION = "パスワードを忘れたときはどうすればよいですか？"


def main(folder: Path) -> int:
    if not (WEB_OUT / "index.html").is_file() or not CHROMIUM.is_file():
        print("build the web UI (make web) and install chromium first", file=sys.stderr)
        return 1
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), provider="offline", web_dir=WEB_OUT)
        designs = Path(home) / "designs"
        designs.mkdir(parents=True)
        (designs / "expenses.yaml").write_text(EXPENSES_PLAN, encoding="utf-8")
        (designs / "payments.yaml").write_text(APPROVAL_PLAN, encoding="utf-8")
        (Path(home) / "経費.csv").write_bytes(CSV.encode("cp932"))
        server = LiveServer(create_app(settings)).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
                )
                page = browser.new_page(viewport={"width": 1280, "height": 900}, locale="ja-JP")

                def shot(name: str) -> None:
                    page.evaluate("() => document.fonts.ready")
                    page.evaluate("() => window.scrollTo(0, 0)")
                    page.screenshot(path=str(folder / name), full_page=True)
                    print(f"saved {folder / name}")

                page.goto(server.url + "/plans/")
                page.locator('[data-plan-id="expenses"]').get_by_test_id("plan-start").click()
                expect(page.get_by_test_id("input-form")).to_be_visible()
                page.locator(".react-flow__node").first.wait_for()
                shot("web-plan-form.png")
                page.get_by_test_id("input-form").get_by_label("経費CSV").set_input_files(
                    str(Path(home) / "経費.csv")
                )
                page.get_by_test_id("input-submit").click()
                expect(page.get_by_test_id("run-status")).to_have_text("成功", timeout=30_000)
                page.locator(".react-flow__node").first.wait_for()
                shot("web-plan-run.png")
                page.goto(server.url + "/plans/")
                page.get_by_test_id("plan-run-item").first.wait_for()
                shot("web-plans.png")

                page.locator('[data-plan-id="payments"]').get_by_test_id("plan-start").click()
                time.sleep(2)
                page.goto(server.url + "/approvals/")
                page.get_by_test_id("approval-item").first.wait_for()
                shot("web-approvals.png")
                page.goto(server.url + "/audit/")
                page.get_by_test_id("audit-row").first.wait_for()
                shot("web-audit.png")

                page.goto(server.url + "/schedules/")
                page.get_by_test_id("schedule-rule").fill("毎月第5営業日")
                page.get_by_test_id("schedule-at").fill("09:30")
                page.get_by_role("button", name="追加する").click()
                page.get_by_test_id("schedule-upcoming").wait_for()
                shot("web-schedules.png")

                page.goto(server.url + "/analysis/")
                page.get_by_label("分析するファイル").set_input_files(str(Path(home) / "経費.csv"))
                page.get_by_role("button", name="読み込む").click()
                page.get_by_test_id("analysis-summary").wait_for()
                question = page.get_by_label("知りたいこと（日本語で書けます）")
                question.fill("部署別の金額合計を棒グラフで見せて")
                page.get_by_role("button", name="質問する", exact=True).click()
                page.get_by_test_id("analysis-figure").first.wait_for(timeout=60_000)
                shot("web-analysis.png")

                page.goto(server.url + "/design/")
                page.get_by_label("やりたいこと（文章で）").fill(DESIGN_INSTRUCTION)
                page.get_by_role("button", name="Plan を作る").click()
                page.locator(".react-flow__node").first.wait_for(timeout=60_000)
                shot("web-design.png")

                indexed = httpx.post(f"{server.url}/api/helpdesk/kb/helpdesk/sample", timeout=120)
                indexed.raise_for_status()
                page.goto(server.url + "/helpdesk/")
                page.get_by_test_id("helpdesk-question").fill(
                    "パスワードを忘れたときはどうすればよいですか？"
                )
                page.get_by_test_id("helpdesk-ask").click()
                expect(page.get_by_test_id("helpdesk-answer")).to_contain_text(
                    "出典", timeout=60_000
                )
                shot("web-helpdesk.png")

                page.goto(server.url + "/history/")
                page.get_by_test_id("history-row").first.wait_for()
                shot("web-history.png")
                browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_FOLDER))
