"""Malformed replies from an LLM endpoint: a catalogue of faults and what happens now.

Each fault is served by ``StubOpenAIServer`` on loopback, so the real openai SDK and
LangChain client path runs.

* A 200 reply with an HTML body (a proxy's error page), JSON with empty
  ``choices`` or JSON cut off midway → used to end in a ``ValueError`` /
  ``IndexError`` / ``JSONDecodeError`` traceback in ``analyze`` and ``helpdesk
  ask``; ``ai.process_llm`` reported "a bug in the block" and abandoned the other
  files → now an ``LLM_ERROR`` naming the endpoint (base URL, never the key); the
  block reports every file one by one.
* A 429 whose ``Retry-After`` asks for a day → used to say "rate limited even
  after retries" → now says (in Japanese) how long the provider asks to wait.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel
from typer.testing import CliRunner

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.llm import ProcessLLMBlock
from keiri_agent.cli.app import app
from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import LLMError
from keiri_agent.llm import chat_model, invoke_structured
from keiri_agent.llm.testing import StubError, StubOpenAIServer, StubRawReply

KEY = "fake-key-for-malformed-replies-0001"

MALFORMED = {
    "html_200": StubRawReply("<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
    "empty_choices": StubRawReply(
        '{"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": []}'
    ),
    "truncated_json": StubRawReply('{"id": "c", "object": "chat.comp'),
    "no_choices": StubRawReply('{"id": "c", "object": "chat.completion", "created": 1}'),
}


class Answer(BaseModel):
    total: int


def stub_settings(server: StubOpenAIServer, **values: Any) -> Settings:
    defaults: dict[str, Any] = {"max_retries": 0, "retry_backoff_s": 0, "model": "stub-model"}
    return load_settings(
        provider="openai-compatible",
        openai_api_base=server.base_url,
        openai_api_key=KEY,
        **{**defaults, **values},
    )


@pytest.mark.parametrize("fault", sorted(MALFORMED))
def test_structured_call_on_a_malformed_reply_is_an_llm_error_naming_the_endpoint(
    fault: str,
) -> None:
    with StubOpenAIServer([MALFORMED[fault]]) as server:
        base = server.base_url
        model = chat_model(stub_settings(server))
        with pytest.raises(LLMError) as info:
            invoke_structured(model, Answer, [HumanMessage("合計は？")])
    error = info.value
    assert error.code == "LLM_ERROR"
    assert base in error.message
    assert error.details["endpoint"] == base
    assert KEY not in str(error.to_dict())
    assert error.__cause__ is None and error.__suppress_context__


def test_a_day_long_retry_after_says_how_long_to_wait() -> None:
    reply = StubError(429, "Rate limit reached", {"Retry-After": "86400"})
    with StubOpenAIServer([reply]) as server:
        model = chat_model(stub_settings(server, max_retries=2))
        with pytest.raises(LLMError) as info:
            invoke_structured(model, Answer, [HumanMessage("合計は？")])
    assert len(server.chat_requests) == 1  # a day is not waited for
    assert info.value.details["retry_after_s"] == 86400
    assert "約 24 時間" in (info.value.hint or "")
    assert "rate limited even after retries" not in (info.value.hint or "")


def test_process_llm_reports_each_file_when_the_endpoint_answers_garbage() -> None:
    files = [
        {
            "group": g,
            "path": f"{g}/請求書.txt",
            "name": "請求書.txt",
            "size": 10,
            "text": "請求金額 12,000円",
            "truncated": False,
            "error": None,
        }
        for g in ("A社", "B社", "C社")
    ]
    replies = [MALFORMED["html_200"], {"取引先": "B社", "金額": 5}, MALFORMED["empty_choices"]]
    with StubOpenAIServer(replies) as server:
        base = server.base_url
        settings = stub_settings(server)
        ctx = BlockContext(
            run_id="run",
            plan_id="plan",
            node_id="n",
            settings=settings,
            logger=logging.getLogger("test"),
        )
        outputs = ProcessLLMBlock().run(
            {
                "evidence_data": {"groups": [], "files": files, "skipped": []},
                "prompt": "取引先と金額",
                "output_schema": {"取引先": "string", "金額": "integer"},
                "max_concurrency": 1,
            },
            ctx,
        )
    assert [item["取引先"] for item in outputs["results"]["items"]] == ["B社"]
    errors = outputs["summary"]["errors"]
    assert len(errors) == 2
    assert all(error["code"] == "LLM_ERROR" for error in errors)
    assert all(base in error["message"] for error in errors)


@pytest.fixture
def sales_csv(tmp_path: Path) -> Path:
    path = tmp_path / "売上.csv"
    frame = pd.DataFrame({"地域": ["関東", "近畿"], "売上": [100, 250]})
    path.write_text(frame.to_csv(index=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("fault", ["html_200", "empty_choices"])
def test_cli_analyze_on_a_malformed_reply_reports_llm_error_without_traceback(
    fault: str, sales_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubOpenAIServer([MALFORMED[fault]] * 4) as server:
        monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")
        base = server.base_url
        monkeypatch.setenv("KEIRI_AGENT_OPENAI_API_BASE", base)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
        monkeypatch.setenv("KEIRI_AGENT_STRUCTURED_OUTPUT_REASKS", "0")
        result = CliRunner().invoke(app, ["analyze", str(sales_csv), "地域別の売上合計"])
    output = result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in output
    assert base in output, output
    assert KEY not in output


@pytest.mark.parametrize("fault", ["html_200", "truncated_json"])
def test_cli_helpdesk_ask_on_a_malformed_reply_reports_llm_error_without_traceback(
    fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubOpenAIServer([MALFORMED[fault]] * 4) as server:
        base = server.base_url
        monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")
        monkeypatch.setenv("KEIRI_AGENT_OPENAI_API_BASE", base)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
        monkeypatch.setenv("KEIRI_AGENT_STRUCTURED_OUTPUT_REASKS", "0")
        indexed = CliRunner().invoke(app, ["helpdesk", "index", "--sample"])
        assert indexed.exit_code == 0, indexed.output
        result = CliRunner().invoke(app, ["helpdesk", "ask", "パスワードの条件は？"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "LLM_ERROR" in result.output and base in result.output, result.output
    assert "Traceback" not in result.output
