"""Save a screenshot of the research page after a run to docs/web-research.png
(1280×900, Japanese text in Noto Sans CJK / the app's Noto Sans JP).

    .venv/bin/python tests/web/screenshot.py [output.png]

Needs the built web UI (``make web``) and /usr/bin/chromium (``fonts-noto-cjk``)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "api"), str(HERE.parent / "agents" / "research")]

from api_support import LiveServer, research_workspace  # noqa: E402
from browser_support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_FLAGS,
    WEB_OUT,
    Site,
    ask,
    research_model_factory,
    wait_for_report,
)
from proxy import CuttableProxy  # noqa: E402

from keiri_agent.api.app import create_app  # noqa: E402

DEFAULT_OUTPUT = HERE.parents[1] / "docs" / "web-research.png"


def main(output: Path) -> int:
    if not (WEB_OUT / "index.html").is_file():
        print(f"the web UI is not built ({WEB_OUT}): run `make web` first", file=sys.stderr)
        return 1
    if not CHROMIUM.is_file():
        print(f"Chromium not found at {CHROMIUM}", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as home:
        settings = research_workspace(Path(home), web_dir=WEB_OUT)
        server = LiveServer(create_app(settings, model_factory=research_model_factory(0.1)))
        site = Site(server=server.start(), proxy=CuttableProxy(server.port).start())
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
                )
                page = browser.new_page(viewport={"width": 1280, "height": 900}, locale="ja-JP")
                ask(page, site)
                wait_for_report(page)
                page.get_by_test_id("source-item").first.click()
                page.get_by_test_id("passage").wait_for()
                page.evaluate("() => window.scrollTo(0, 0)")
                page.evaluate("() => document.fonts.ready")
                # the whole page, so the report below the progress list shows too
                page.screenshot(path=str(output), full_page=True)
                browser.close()
        finally:
            site.proxy.stop()
            server.stop()
    print(f"saved {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT))
