"""The HelpDesk agent over the real ChatOpenAI client against the stub OpenAI server."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpdesk_support import FixedSearcher

from keiri_agent.agents.helpdesk import HelpDeskAgent, ReflectionResult, SubtaskPlan, default_tools
from keiri_agent.config import Settings
from keiri_agent.errors import LLMError
from keiri_agent.llm.testing import StubError, StubOpenAIServer, StubReply, StubToolCall
from keiri_agent.search.models import Chunk, Source

CHUNKS = [Chunk("m#1", "パスワードは8文字以上です。", Source("manual.pdf", 3, "2.1 パスワード"))]


def settings_for(server: StubOpenAIServer, home: Path) -> Settings:
    return Settings(
        home=home,
        provider="openai-compatible",
        openai_api_base=server.base_url,
        model="stub-model",
        max_retries=0,
    )


def test_full_run_reaches_the_configured_base_url(tmp_path: Path) -> None:
    replies: list[StubReply] = [
        SubtaskPlan(subtasks=["パスワードの条件"]),
        StubToolCall("search_xyz_manual", {"query": "パスワード"}),
        "8文字以上です [1]。",
        ReflectionResult(advice="", is_completed=True),
        "パスワードは8文字以上です [1]。",
    ]
    with StubOpenAIServer(replies) as server:
        tools = default_tools(FixedSearcher(CHUNKS), FixedSearcher(CHUNKS))
        agent = HelpDeskAgent(settings_for(server, tmp_path), tools=tools)
        result = agent.run_agent("パスワードの条件は?")
        requests = server.chat_requests
    assert len(requests) == 5 and server.remaining == 0
    assert all(r.path == "/v1/chat/completions" for r in requests)
    assert all(r.body["model"] == "stub-model" for r in requests)
    tool_names = [t["function"]["name"] for t in requests[1].body["tools"]]
    assert tool_names == ["search_xyz_manual", "search_xyz_qa"]
    tool_message = requests[2].body["messages"][-2]
    assert tool_message["role"] == "tool" and "[1] manual.pdf p.3" in tool_message["content"]
    assert result.offline is False
    assert result.subtasks[0].is_completed
    assert result.answer.startswith("パスワードは8文字以上です [1]。")
    assert "## 出典\n[1] manual.pdf p.3 「2.1 パスワード」" in result.answer


def test_service_failure_raises_llm_error_with_a_hint(tmp_path: Path) -> None:
    with StubOpenAIServer([StubError(401, "bad key")]) as server:
        tools = default_tools(FixedSearcher(CHUNKS), FixedSearcher(CHUNKS))
        agent = HelpDeskAgent(settings_for(server, tmp_path), tools=tools)
        with pytest.raises(LLMError) as caught:
            agent.run_agent("パスワードの条件は?")
    assert "API キー" in (caught.value.hint or "")


def test_failure_inside_a_subtask_raises_llm_error(tmp_path: Path) -> None:
    replies: list[StubReply] = [SubtaskPlan(subtasks=["パスワードの条件"]), StubError(500, "boom")]
    with StubOpenAIServer(replies) as server:
        tools = default_tools(FixedSearcher(CHUNKS), FixedSearcher(CHUNKS))
        agent = HelpDeskAgent(settings_for(server, tmp_path), tools=tools)
        with pytest.raises(LLMError, match="500"):
            agent.run_agent("パスワードの条件は?")
