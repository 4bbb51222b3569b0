"""What the web UI tests share: where Chromium and the web UI's export are, the skip
(or, under CI, failure) when one is missing, the scripted research model."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from api_support import LiveServer
from langchain_core.language_models import BaseChatModel
from proxy import CuttableProxy
from research_agent_support import cited_summaries, first_passage_sentence, scripted

from keiri_agent.agents.research.llm_reasoner import PlanOutput
from keiri_agent.api.web import default_web_dir
from keiri_agent.config import Settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
WEB_OUT = default_web_dir()
QUESTION = "インボイス制度で請求書フォーマットに必要な変更点を調べて"
QUERIES = ["登録番号", "端数処理", "請求書 記載事項"]
REPORT = (
    "## 結論\n\n"
    "適格請求書には登録番号の記載が必要です。\n\n"
    "## 対応\n\n- 請求書フォーマットに登録番号の欄を追加する\n"
)
"""The scripted report's own text (its lead and its recommendation cite nothing); the
writer adds the summaries' cited sentences under 根拠 (:func:`write_report`)."""


def write_report(prompt: str) -> str:
    """The scripted report: ``REPORT`` and the steps' cited sentences, as a faithful
    model writes them (each says what its passage says, so the claim check keeps it)."""
    cited = "\n".join(f"- {line}" for line in cited_summaries(prompt))
    return f"{REPORT}\n## 根拠\n\n{cited}\n"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; under CI (``CI=true``) a missing tool is a failure."""
    if in_ci():
        pytest.fail(f"{reason} (required when CI=true)", pytrace=False)
    pytest.skip(reason)


def require_web_out() -> Path:
    """The built web UI (``web/out``), or skip/fail saying why it is missing."""
    if (WEB_OUT / "index.html").is_file():
        return WEB_OUT
    if shutil.which("node") is None or shutil.which("npm") is None:
        unavailable("Node.js not found: the web UI is not built, skipping its browser tests")
    unavailable(f"the web UI is not built ({WEB_OUT} missing): run `make web`")


def research_model_factory(delay_s: float) -> Callable[[Settings], BaseChatModel]:
    """A deterministic research model (plan, a summary per query, the report), each
    call ``delay_s`` slower: every run over the same corpus streams the same events."""

    def factory(_settings: Settings) -> BaseChatModel:
        plan = PlanOutput(needs_research=True, reason="記載事項と端数処理", queries=QUERIES)
        return scripted(plan, first_passage_sentence, write_report, delay_s=delay_s)

    return factory


@dataclass
class Site:
    """The API + web UI (``server``) and the proxy the browser goes through."""

    server: LiveServer
    proxy: CuttableProxy

    @property
    def url(self) -> str:
        return self.proxy.url


def run_ids(page: Any) -> list[str]:
    """Collects the run id of every research run the page starts (the GraphQL
    ``deepResearch`` answer, or ``POST /api/research``), in order."""
    found: list[str] = []

    def on_response(response: Any) -> None:
        if response.request.method != "POST" or not (
            response.url.endswith("/graphql") or response.url.endswith("/api/research")
        ):
            return
        try:
            body = response.json()
        except Exception:  # not JSON: not a start
            return
        started = (body.get("data") or {}).get("deepResearch") if "data" in body else body
        run_id = (started or {}).get("runId") or (started or {}).get("run_id")
        if run_id:
            found.append(run_id)

    page.on("response", on_response)
    return found


SAMPLE_LABEL = re.compile("サンプル資料（架空の会社）")
"""The sample corpus's checkbox on the research page."""


def ask(page: Any, site: Site, question: str = QUESTION, *, sample: bool = True) -> None:
    """Open the research page, choose the bundled sample (``sample``: the research
    workspaces have it indexed; it is searched only when chosen), type ``question``
    and start."""
    page.goto(site.url + "/")
    if sample:
        page.get_by_test_id("kb-choice").get_by_label(SAMPLE_LABEL).check()
    page.get_by_test_id("question").fill(question)
    page.get_by_test_id("start").click()


def wait_for_report(page: Any, timeout_s: float = 90.0) -> str:
    """The rendered report once the run is over (its text): the report's last line has
    arrived and the cancel button is gone, hidden or disabled."""
    report = page.get_by_test_id("report")
    report.get_by_text("登録番号の欄を追加する").wait_for(timeout=timeout_s * 1000)
    # one query for all three states: the button may go between two separate checks, and a
    # check on a gone element waits for it (a 30 s timeout seen in a CI run)
    running = page.locator('[data-testid="cancel"]:enabled').filter(visible=True)
    deadline = time.monotonic() + timeout_s
    while running.count():
        if time.monotonic() > deadline:
            raise AssertionError("the research run did not finish on the page")
        time.sleep(0.1)
    return str(report.inner_text())


def registering(file_name: str, text: str) -> Callable[[Settings], None]:
    """A ``site(prepare=…)`` step that registers the Plan ``text`` as ``designs/file_name``."""

    def prepare(settings: Settings) -> None:
        designs = settings.storage.home / "designs"
        designs.mkdir(parents=True, exist_ok=True)
        (designs / file_name).write_text(text, encoding="utf-8")

    return prepare


AXE = Path(__file__).resolve().parents[2] / "web" / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core from the web UI's npm packages (``npm ci`` in web/)."""
PAGES = (
    "/",
    "/sessions/",
    "/helpdesk/",
    "/analysis/",
    "/design/",
    "/plans/",
    "/schedules/",
    "/approvals/",
    "/history/",
    "/audit/",
)
"""Every page of the web UI (the accessibility and keyboard tests visit each)."""


def visible_text(page: Any) -> str:
    """What a person reads: ``innerText`` leaves closed ``<details>`` out (the offline
    notice too: the setting it names is how to configure a model)."""
    return str(
        page.evaluate(
            """() => {
                const notice = document.querySelector('[data-testid="offline-notice"]');
                const text = document.body.innerText;
                return notice ? text.replace(notice.innerText, "") : text;
            }"""
        )
    )


def serious_violations(page: Any) -> list[str]:
    """What axe-core finds serious or critical on the page as it stands."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => {
            const result = await axe.run(document, {resultTypes: ["violations"]});
            return result.violations
                .filter((v) => v.impact === "serious" || v.impact === "critical")
                .map((v) => `${v.id} (${v.impact}): ` +
                    v.nodes.map((n) => n.target.join(" ")).join(", "));
        }"""
    )
    return [str(item) for item in found]
