"""The test doubles themselves, and the conftest guards every test relies on."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import BaseModel, SecretStr

from keiri_agent.llm.testing import (
    ScriptedChatModel,
    ScriptExhaustedError,
    StubOpenAIServer,
    StubReply,
    StubToolCall,
    stub_embedding,
)


class Total(BaseModel):
    column: str
    value: float


@tool
def sum_column(column: str) -> float:
    """Sum a column of the dataset."""
    return 0.0


def client(server: StubOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="stub", base_url=server.base_url, api_key=SecretStr("test"), max_retries=0
    )


# --------------------------------------------------------------------------- ScriptedChatModel


def test_scripted_model_replies_in_order_and_records_calls() -> None:
    model = ScriptedChatModel(["first", "second"])

    assert model.invoke(
        [SystemMessage(content="be brief"), HumanMessage(content="hi")]
    ).content == ("first")
    assert model.invoke("again").content == "second"

    assert model.calls[1] == [HumanMessage(content="again")]
    assert model.prompts == ["System: be brief\nHuman: hi", "Human: again"]
    assert model.remaining == 0


def test_scripted_tool_calls_through_bind_tools() -> None:
    call = {"name": "sum_column", "args": {"column": "売上"}, "id": "c1", "type": "tool_call"}
    model = ScriptedChatModel([AIMessage(content="", tool_calls=[call]), "done"])

    reply = model.bind_tools([sum_column]).invoke("合計は?")

    assert isinstance(reply, AIMessage)
    assert reply.tool_calls == [call]
    model.invoke("plain")
    assert model.tool_names == [["sum_column"], []]


@pytest.mark.parametrize(
    "reply", [Total(column="売上", value=3.5), {"column": "売上", "value": 3.5}]
)
def test_scripted_structured_reply(reply: Total | dict[str, object]) -> None:
    model = ScriptedChatModel([reply])

    assert model.with_structured_output(Total).invoke("total?") == Total(column="売上", value=3.5)


def test_scripted_structured_reply_without_tools_is_json_text() -> None:
    model = ScriptedChatModel([{"a": 1}])
    assert json.loads(model.invoke("json please").text) == {"a": 1}


def test_invalid_scripted_dict_gives_a_real_validation_error() -> None:
    model = ScriptedChatModel([{"column": "売上"}])

    result = model.with_structured_output(Total, include_raw=True).invoke("total?")

    assert isinstance(result, dict)
    assert result["parsed"] is None
    assert "value" in str(result["parsing_error"])


def test_running_out_of_script_names_the_count() -> None:
    model = ScriptedChatModel(["only"])
    model.invoke("one")
    with pytest.raises(ScriptExhaustedError, match="call #2 but only 1 reply was scripted"):
        model.invoke("two")


def test_concurrent_calls_overlap_and_consume_each_reply_once() -> None:
    replies = [f"reply {index}" for index in range(8)]
    model = ScriptedChatModel(replies, wait_for_concurrent=8)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda i: model.invoke(f"q{i}").text, range(8)))

    assert sorted(answers) == sorted(replies)
    assert len(model.calls) == 8
    assert model.peak_in_flight == 8  # all eight were inside the model at once


def test_serial_calls_peak_at_one_and_wait_only_once() -> None:
    model = ScriptedChatModel(["a", "b", "c"], wait_for_concurrent=2, wait_timeout_s=0.5)

    started = time.monotonic()
    answers = [model.invoke(question).text for question in ("1", "2", "3")]

    assert answers == ["a", "b", "c"]
    assert model.peak_in_flight == 1
    assert time.monotonic() - started < 1.0  # 1.5 s if every call waited


def test_async_calls_use_the_script_and_overlap() -> None:
    model = ScriptedChatModel(["a", "b", "c"], wait_for_concurrent=3)

    async def run() -> list[str]:
        return [message.text for message in await model.abatch(["1", "2", "3"])]

    assert sorted(asyncio.run(run())) == ["a", "b", "c"]
    assert model.peak_in_flight == 3


def test_respond_answers_by_what_was_asked() -> None:
    def respond(messages: list[Any], tools: list[str]) -> str:
        return f"{messages[-1].text} with {tools or 'no tools'}"

    model = ScriptedChatModel(respond=respond)
    assert model.invoke("hi").text == "hi with no tools"
    assert model.bind_tools([sum_column]).invoke("sum").text == "sum with ['sum_column']"
    assert model.remaining == 0 and len(model.calls) == 2


# --------------------------------------------------------------------------- StubOpenAIServer


def test_stub_server_answers_tool_calls_and_records_requests() -> None:
    with StubOpenAIServer([StubToolCall("sum_column", {"column": "経費"}, id="call_x")]) as server:
        reply = client(server).bind_tools([sum_column]).invoke("経費の合計")

    assert reply.tool_calls == [
        {"name": "sum_column", "args": {"column": "経費"}, "id": "call_x", "type": "tool_call"}
    ]
    [request] = server.requests
    assert request.body["tools"][0]["function"]["name"] == "sum_column"
    assert request.headers["authorization"] == "Bearer test"


def test_stub_server_streams_text_and_tool_calls() -> None:
    replies: list[StubReply] = [
        "ストリーミングの応答です",
        StubToolCall("sum_column", {"column": "売上"}),
    ]
    with StubOpenAIServer(replies) as server:
        model = client(server)
        chunks = list(model.stream("hi"))
        text = "".join(chunk.text for chunk in chunks)
        streamed: AIMessageChunk | None = None
        for chunk in model.bind_tools([sum_column]).stream("tool"):
            assert isinstance(chunk, AIMessageChunk)
            streamed = chunk if streamed is None else streamed + chunk

    assert len(chunks) > 2
    assert text == "ストリーミングの応答です"
    assert streamed is not None
    assert streamed.tool_calls[0]["name"] == "sum_column"
    assert streamed.tool_calls[0]["args"] == {"column": "売上"}
    assert all(request.body["stream"] for request in server.requests)


def test_stub_server_structured_object_without_tools_is_json_text() -> None:
    with StubOpenAIServer([Total(column="a", value=1)]) as server:
        reply = client(server).invoke("json")
    assert json.loads(reply.text) == {"column": "a", "value": 1.0}


def test_stub_server_out_of_replies_is_a_clear_client_error() -> None:
    with StubOpenAIServer(["one"]) as server:
        model = client(server)
        model.invoke("1")
        with pytest.raises(openai.BadRequestError, match="no reply left: 1 were scripted"):
            model.invoke("2")


def test_stub_embeddings_are_deterministic_in_both_encodings() -> None:
    with StubOpenAIServer(embedding_dim=16) as server:
        sdk = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        as_float = sdk.embeddings.create(model="e", input="請求書", encoding_format="float")
        model = OpenAIEmbeddings(
            model="e",
            base_url=server.base_url,
            api_key=SecretStr("test"),
            check_embedding_ctx_length=False,
        )
        as_base64 = model.embed_query("請求書")

    assert as_float.data[0].embedding == pytest.approx(stub_embedding("請求書", 16))
    assert as_base64 == pytest.approx(stub_embedding("請求書", 16), abs=1e-6)


def test_stub_embedding_similarity_follows_shared_text() -> None:
    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    query = stub_embedding("売上 合計")
    assert cosine(query, stub_embedding("売上 合計 月別")) > cosine(query, stub_embedding("旅費"))


# --------------------------------------------------------------------------- conftest guards


def test_network_guard_blocks_non_loopback_connections() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(pytest.fail.Exception, match="network access blocked") as caught:
            sock.connect(("203.0.113.1", 80))
        assert type(caught.value).__name__ == "NetworkAccessError"
        with pytest.raises(pytest.fail.Exception, match="network access blocked"):
            sock.connect_ex(("203.0.113.1", 80))
    finally:
        sock.close()


def test_network_guard_blocks_name_resolution_but_not_loopback() -> None:
    with pytest.raises(pytest.fail.Exception, match=re.escape("resolving 'api.openai.com'")):
        socket.getaddrinfo("api.openai.com", 443)
    assert socket.getaddrinfo("localhost", 80)
    with StubOpenAIServer(["local is fine"]) as server:
        assert client(server).invoke("hi").text == "local is fine"


def test_network_guard_is_not_swallowed_by_except_exception() -> None:
    swallowed = False
    with pytest.raises(pytest.fail.Exception, match="network access blocked"):
        try:
            socket.create_connection(("198.51.100.7", 443), timeout=1)
        except Exception:  # the guard must get through a broad handler
            swallowed = True
    assert not swallowed


def test_environment_is_isolated(keiri_home: Path) -> None:
    assert Path.cwd() == keiri_home
    assert os.environ["KEIRI_AGENT_HOME"] == str(keiri_home)
    assert "OPENAI_API_KEY" not in os.environ
    assert not any(name.startswith("AZURE_OPENAI_") for name in os.environ)
