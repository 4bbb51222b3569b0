"""The research agent over the real ChatOpenAI client against the stub OpenAI server."""

from __future__ import annotations

from pathlib import Path

from research_agent_support import SNIPPETS, FixedSource, MemoryNoteStore

from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.agents.research.llm_reasoner import GapOutput, PlanOutput
from keiri_agent.config import Settings
from keiri_agent.llm.testing import StubError, StubOpenAIServer, StubReply


def settings_for(server: StubOpenAIServer, home: Path) -> Settings:
    return Settings(
        home=home,
        provider="openai-compatible",
        openai_api_base=server.base_url,
        model="stub-model",
        max_retries=0,
    )


def test_full_run_over_the_stub_server(tmp_path: Path) -> None:
    replies: list[StubReply] = [
        PlanOutput(needs_research=True, reason="記載事項", queries=["登録番号"]),
        "適格請求書には登録番号が必要です [1]。",
        GapOutput(missing="", queries=[]),
        "## 結論\n\n登録番号の記載が必要です [1]。",
    ]
    store = MemoryNoteStore()
    with StubOpenAIServer(replies) as server:
        agent = DeepResearchAgent(
            settings_for(server, tmp_path), tools=[FixedSource(SNIPPETS)], store=store
        )
        result = agent.research("インボイスの記載事項は？", session_id="stub")
        requests = server.chat_requests
    assert len(requests) == 4 and server.remaining == 0
    assert all(r.body["model"] == "stub-model" for r in requests)
    assert requests[0].body["tools"][0]["function"]["name"] == "PlanOutput"
    summary_request = requests[1].body
    assert summary_request.get("max_tokens", summary_request.get("max_completion_tokens")) == 512
    assert "[1] invoice.pdf p.2 「1 記載事項」" in summary_request["messages"][-1]["content"]
    assert requests[2].body["tools"][0]["function"]["name"] == "GapOutput"
    assert result.offline is False and [n.query for n in store.notes("stub")] == ["登録番号"]
    assert result.report_md.startswith("## 結論\n\n登録番号の記載が必要です [1]。")
    assert "- [1] invoice.pdf p.2 「1 記載事項」" in result.report_md


def test_a_service_failure_in_the_summary_fails_the_step_not_the_run(tmp_path: Path) -> None:
    replies: list[StubReply] = [
        PlanOutput(needs_research=True, reason="", queries=["登録番号"]),
        StubError(429, "rate limited"),
    ]
    with StubOpenAIServer(replies) as server:
        agent = DeepResearchAgent(
            settings_for(server, tmp_path), tools=[FixedSource(SNIPPETS)], store=MemoryNoteStore()
        )
        result = agent.research("インボイスの記載事項は？")
    assert result.notes == [] and "レポートは作成していません" in result.report_md
    assert any("エラーになりました（LLM_ERROR）" in item for item in result.limitations)


def test_a_second_run_in_the_same_process_reaches_the_model_too(tmp_path: Path) -> None:
    """Every synchronous run has its own event loop (the API's worker threads, the
    Streamlit page): the model's HTTP client must not stay bound to the first one."""
    replies: list[StubReply] = []
    for _ in range(2):
        replies += [
            PlanOutput(needs_research=True, reason="記載事項", queries=["登録番号"]),
            "適格請求書には登録番号が必要です [1]。",
            GapOutput(missing="", queries=[]),
            "## 結論\n\n登録番号の記載が必要です [1]。",
        ]
    with StubOpenAIServer(replies) as server:
        settings = settings_for(server, tmp_path)
        results = [
            DeepResearchAgent(
                settings, tools=[FixedSource(SNIPPETS)], store=MemoryNoteStore()
            ).research("インボイスの記載事項は？")
            for _ in range(2)
        ]
        assert server.remaining == 0
    for result in results:
        assert result.limitations == [] and result.notes
        assert result.report_md.startswith("## 結論")
