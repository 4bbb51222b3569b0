"""Structured output with re-asks, service errors, and strict prompt rendering."""

from __future__ import annotations

import asyncio
import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from keiri_agent.config import Settings
from keiri_agent.errors import LLMError
from keiri_agent.llm import (
    PromptRenderError,
    ainvoke_structured,
    chat_model,
    invoke_structured,
    render_prompt,
)
from keiri_agent.llm.testing import (
    ScriptedChatModel,
    ScriptExhaustedError,
    StubError,
    StubOpenAIServer,
    StubReply,
)


class Invoice(BaseModel):
    """An invoice line the model extracts."""

    vendor: str
    amount: int


QUESTION = [SystemMessage(content="Extract the invoice."), HumanMessage(content="ABC商事 12000円")]


def compatible(server: StubOpenAIServer) -> Settings:
    return Settings(
        provider="openai-compatible",
        openai_api_base=server.base_url,
        model="stub-model",
        max_retries=1,
        retry_backoff_s=0.01,
    )


def test_function_calling_through_chat_openai_and_the_stub_server() -> None:
    with StubOpenAIServer([{"vendor": "ABC商事", "amount": 12000}]) as server:
        invoice = invoke_structured(chat_model(compatible(server)), Invoice, QUESTION)

    assert invoice == Invoice(vendor="ABC商事", amount=12000)
    body = server.chat_requests[0].body
    assert [tool["function"]["name"] for tool in body["tools"]] == ["Invoice"]
    assert body["tool_choice"]["function"]["name"] == "Invoice"


def test_json_schema_method_through_the_stub_server() -> None:
    with StubOpenAIServer([Invoice(vendor="X", amount=1)]) as server:
        model = chat_model(compatible(server))
        invoice = invoke_structured(model, Invoice, QUESTION, method="json_schema")

    assert invoice == Invoice(vendor="X", amount=1)
    assert server.chat_requests[0].body["response_format"]["type"] == "json_schema"


def test_invalid_reply_is_fed_back_and_the_valid_one_returned() -> None:
    model = ScriptedChatModel([{"vendor": "ABC商事"}, {"vendor": "ABC商事", "amount": 12000}])

    invoice = invoke_structured(model, Invoice, QUESTION)

    assert invoice == Invoice(vendor="ABC商事", amount=12000)
    assert len(model.calls) == 2
    second = model.calls[1]
    assert second[: len(QUESTION)] == QUESTION
    raw, feedback = second[len(QUESTION) :]
    assert isinstance(raw, AIMessage)
    assert raw.tool_calls[0]["args"] == {"vendor": "ABC商事"}
    assert isinstance(feedback, ToolMessage)
    assert feedback.tool_call_id == raw.tool_calls[0]["id"]
    assert "amount: Field required" in feedback.text
    assert "Field required" in model.prompts[1]


def test_reask_over_the_wire_answers_each_tool_call() -> None:
    replies: list[StubReply] = [{"vendor": "ABC"}, {"vendor": "ABC", "amount": 5}]
    with StubOpenAIServer(replies) as server:
        invoice = invoke_structured(chat_model(compatible(server)), Invoice, QUESTION)

    assert invoice.amount == 5
    messages = server.chat_requests[1].body["messages"]
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "tool"]
    assert messages[3]["tool_call_id"] == messages[2]["tool_calls"][0]["id"]
    assert "Field required" in messages[3]["content"]


def test_a_plain_text_reply_is_reasked_with_a_human_message() -> None:
    model = ScriptedChatModel(
        [AIMessage(content="I think it is 12000"), Invoice(vendor="A", amount=1)]
    )

    assert invoke_structured(model, Invoice, QUESTION) == Invoice(vendor="A", amount=1)
    feedback = model.calls[1][-1]
    assert isinstance(feedback, HumanMessage)
    assert "no Invoice object" in feedback.text


def test_reasks_are_bounded_then_llm_error() -> None:
    model = ScriptedChatModel([{"vendor": "A"}, {"amount": "many"}, {"vendor": 3}])

    with pytest.raises(LLMError) as caught:
        invoke_structured(model, Invoice, QUESTION, reasks=2)

    assert len(model.calls) == 3
    error = caught.value
    assert error.code == "LLM_ERROR"
    assert error.details["attempts"] == 3
    assert error.details["schema"] == "Invoice"
    assert "vendor: Input should be a valid string" in error.details["validation_error"]


def test_zero_reasks_means_one_attempt() -> None:
    model = ScriptedChatModel([{"vendor": "A"}])
    with pytest.raises(LLMError, match="1 回試しても"):
        invoke_structured(model, Invoice, QUESTION, reasks=0)


def test_service_errors_become_llm_errors_with_a_hint() -> None:
    server = StubOpenAIServer([StubError(status=401, message="bad key")])
    with server, pytest.raises(LLMError) as caught:
        invoke_structured(chat_model(compatible(server)), Invoice, QUESTION)

    assert len(server.chat_requests) == 1  # 401 is not retried
    assert "API キー" in (caught.value.hint or "")
    assert caught.value.details["status_code"] == 401
    assert "AuthenticationError" in caught.value.details["error_type"]


def test_unknown_model_hint_names_the_model() -> None:
    server = StubOpenAIServer([StubError(status=404, message="no such model")])
    with server, pytest.raises(LLMError) as caught:
        invoke_structured(chat_model(compatible(server)), Invoice, QUESTION)

    assert "モデル名" in (caught.value.hint or "")


def test_an_exhausted_script_is_not_disguised_as_a_service_error() -> None:
    with pytest.raises(ScriptExhaustedError):
        invoke_structured(ScriptedChatModel([]), Invoice, QUESTION)


def test_async_variant_reasks_too() -> None:
    model = ScriptedChatModel([{"vendor": 1}, {"vendor": "B", "amount": 2}])

    invoice = asyncio.run(ainvoke_structured(model, Invoice, QUESTION))

    assert invoice == Invoice(vendor="B", amount=2)
    assert len(model.calls) == 2


def test_render_prompt_fills_placeholders_and_keeps_literal_braces() -> None:
    text = render_prompt("列 {column} の合計 {{json}} {amount:,}", column="売上", amount=1200)
    assert text == "列 売上 の合計 {json} 1,200"


@pytest.mark.parametrize(
    ("template", "values", "message"),
    [
        ("{question} / {context}", {"question": "q"}, "missing value(s) for context"),
        ("{question}", {"question": "q", "extra": 1}, "no placeholder: extra"),
        ("{} and {0}", {}, "positional field"),
        ("{unclosed", {}, "malformed prompt template"),
    ],
)
def test_render_prompt_is_strict(template: str, values: dict[str, object], message: str) -> None:
    with pytest.raises(PromptRenderError, match=re.escape(message)):
        render_prompt(template, **values)
