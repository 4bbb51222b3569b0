"""The web UI as a team runs it: the `keiri-agent serve` command (a child process) serves
the built export and the API; its model is the project's OpenAI-compatible stub server on
loopback (a scripted model reached over HTTP, as a real provider would be)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import SAMPLE_LABEL, require_web_out
from playwright.sync_api import expect

sys.path.insert(0, str(Path(__file__).parents[1] / "api"))
from api_support import ServeProcess, research_workspace

from keiri_agent.agents.research.llm_reasoner import GapOutput, PlanOutput
from keiri_agent.llm.testing import StubOpenAIServer, StubReply

QUESTION = "インボイス制度で請求書に必要な記載事項を調べて"
REPORT = "## 結論\n\n登録番号がない取引先は、取引先マスタの登録番号欄を「未登録」とします [1]。"
"""Says what the sample's first passage on 登録番号 says, so the claim check keeps its
citation (a sentence its passage does not say would be marked and cite nothing)."""


@pytest.fixture
def web_out() -> Any:
    return require_web_out()


def test_the_served_web_ui_runs_research_through_a_model_server(
    web_out: Path, tmp_path: Path, page: Any
) -> None:
    research_workspace(tmp_path)
    replies: list[StubReply] = [  # one query: plan, its summary, the gap check, the report
        PlanOutput(needs_research=True, reason="記載事項", queries=["登録番号"]),
        "適格請求書には登録番号を記載します [1]。",
        GapOutput(missing="", queries=[]),
        REPORT,
    ]
    with StubOpenAIServer(replies) as model:
        server = ServeProcess(
            tmp_path,
            {
                "KEIRI_AGENT_PROVIDER": "openai-compatible",
                "KEIRI_AGENT_OPENAI_API_BASE": model.base_url,
                "KEIRI_AGENT_OPENAI_API_KEY": "stub-key",
                "KEIRI_AGENT_MODEL": "stub-model",
                "KEIRI_AGENT_MAX_RETRIES": "0",
                "KEIRI_AGENT_WEB_DIR": str(web_out),
            },
        ).wait_ready()
        try:
            page.goto(server.url + "/")
            page.get_by_test_id("kb-choice").get_by_label(SAMPLE_LABEL).check()
            page.get_by_test_id("question").fill(QUESTION)
            page.get_by_test_id("start").click()
            report = page.get_by_test_id("report")
            expect(report).to_contain_text("登録番号がない取引先は", timeout=60_000)
            expect(page.get_by_test_id("source-item").first).to_be_visible()
            assert model.remaining == 0  # every scripted reply was asked for, in order
        finally:
            server.stop()
