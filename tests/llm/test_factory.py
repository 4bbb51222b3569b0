"""The chat model and embeddings factories, exercised against the stub server."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_openai import AzureChatOpenAI, ChatOpenAI, OpenAIEmbeddings
from pydantic import BaseModel, SecretStr

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, LLMError
from keiri_agent.llm import chat_model, embeddings, invoke_structured
from keiri_agent.llm.factory import PLACEHOLDER_API_KEY
from keiri_agent.llm.testing import StubError, StubOpenAIServer, StubReply, stub_embedding


class Answer(BaseModel):
    total: int


def compatible(server: StubOpenAIServer, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "provider": "openai-compatible",
        "openai_api_base": server.base_url,
        "model": "stub-model",
        "retry_backoff_s": 0.01,
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


def test_offline_provider_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="オフライン"):
        chat_model(Settings(provider="offline"))
    with pytest.raises(ConfigurationError, match="オフライン"):
        embeddings(Settings(provider="offline"))


def test_openai_compatible_sends_to_the_base_url_with_a_placeholder_key() -> None:
    with StubOpenAIServer(["こんにちは"]) as server:
        model = chat_model(compatible(server))
        reply = model.invoke("hello")

    assert reply.content == "こんにちは"
    [request] = server.chat_requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "stub-model"
    assert request.body["messages"] == [{"role": "user", "content": "hello"}]
    assert request.headers["authorization"] == f"Bearer {PLACEHOLDER_API_KEY}"


def test_openai_provider_uses_the_key_and_base_url() -> None:
    with StubOpenAIServer(["ok"]) as server:
        settings = Settings(
            provider="openai", openai_api_key=SecretStr("sk-test"), openai_api_base=server.base_url
        )
        assert chat_model(settings).invoke("hi").content == "ok"

    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-test"


def test_timeout_and_retries_reach_the_sdk_client() -> None:
    with StubOpenAIServer() as server:
        model = chat_model(compatible(server, request_timeout_s=7.5, max_retries=4))

    assert isinstance(model, ChatOpenAI)
    assert model.request_timeout == 7.5
    assert model.root_client.timeout == 7.5
    assert model.root_client.max_retries == 4
    assert model.root_async_client.max_retries == 4


def test_azure_builds_a_deployment_url() -> None:
    with StubOpenAIServer(["azure ok"]) as server:
        settings = Settings(
            provider="azure",
            azure_openai_api_key=SecretStr("azure-key"),
            azure_openai_endpoint=server.origin,
            azure_openai_deployment="keiri-gpt",
            azure_openai_api_version="2024-10-21",
        )
        model = chat_model(settings)
        assert isinstance(model, AzureChatOpenAI)
        assert model.invoke("hi").content == "azure ok"

    [request] = server.chat_requests
    assert request.path == "/openai/deployments/keiri-gpt/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "azure-key"


def test_a_429_is_retried_then_succeeds() -> None:
    with StubOpenAIServer([StubError(status=429, message="slow down"), "done"]) as server:
        model = chat_model(compatible(server, max_retries=2))
        started = time.monotonic()
        reply = model.invoke("hi")
        elapsed = time.monotonic() - started

    assert reply.content == "done"
    assert len(server.chat_requests) == 2
    assert elapsed < 2.0


def test_persistent_500_fails_after_max_retries_plus_one_attempts() -> None:
    max_retries = 2
    replies: list[StubReply] = [StubError(status=500, message="boom")] * (max_retries + 1)
    with StubOpenAIServer(replies) as server:
        model = chat_model(compatible(server, max_retries=max_retries, retry_backoff_s=0.2))
        started = time.monotonic()
        with pytest.raises(LLMError) as caught:
            invoke_structured(model, Answer, [])
        elapsed = time.monotonic() - started

    assert len(server.chat_requests) == max_retries + 1
    assert caught.value.details["status_code"] == 500
    assert "接続先 URL" in (caught.value.hint or "")
    # Backoff 0.2 s then 0.4 s, each shortened by at most 25 % jitter.
    assert 0.45 <= elapsed < 3.0


def test_a_server_retry_after_is_honoured() -> None:
    replies: list[StubReply] = [StubError(status=429, headers={"retry-after-ms": "400"}), "ok"]
    with StubOpenAIServer(replies) as server:
        model = chat_model(compatible(server, max_retries=1, retry_backoff_s=0.01))
        started = time.monotonic()
        assert model.invoke("hi").content == "ok"
        assert time.monotonic() - started >= 0.4


def test_async_calls_retry_too() -> None:
    with StubOpenAIServer([StubError(status=503), "async ok"]) as server:
        model = chat_model(compatible(server, max_retries=1))
        reply = asyncio.run(model.ainvoke("hi"))

    assert reply.content == "async ok"
    assert len(server.chat_requests) == 2


def test_embeddings_from_a_compatible_server_are_sent_as_text() -> None:
    with StubOpenAIServer(embedding_dim=8) as server:
        model = embeddings(compatible(server, embedding_model="stub-embed"))
        vectors = model.embed_documents(["売上", "経費"])
        query = model.embed_query("売上")

    assert vectors[0] == pytest.approx(stub_embedding("売上", 8), abs=1e-6)
    assert vectors[1] == pytest.approx(stub_embedding("経費", 8), abs=1e-6)
    assert query == pytest.approx(vectors[0])
    first = server.requests[0]
    assert first.path == "/v1/embeddings"
    assert first.body["input"] == ["売上", "経費"]
    assert first.body["model"] == "stub-embed"


def test_embeddings_get_the_timeout_and_retries() -> None:
    with StubOpenAIServer() as server:
        model = embeddings(compatible(server, max_retries=3, request_timeout_s=5))
        assert isinstance(model, OpenAIEmbeddings)
        assert model.request_timeout == 5
        assert model.max_retries == 3
        assert model.client._client.max_retries == 3
