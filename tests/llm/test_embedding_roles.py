"""The embeddings endpoint apart from chat: queries go as queries, passages as passages."""

from __future__ import annotations

import pytest

from keiri_agent.config import Settings
from keiri_agent.llm import embeddings
from keiri_agent.llm.testing import StubOpenAIServer, stub_embedding


def local_embeddings(server: StubOpenAIServer, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "provider": "offline",
        "embedding_provider": "openai-compatible",
        "embedding_base_url": server.base_url,
        "embedding_model": "multilingual-e5-small",
        "max_retries": 0,
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


def test_prefixes_mark_passages_and_queries_while_chat_is_offline() -> None:
    with StubOpenAIServer(embedding_dim=8) as server:
        model = embeddings(
            local_embeddings(
                server, embedding_query_prefix="query: ", embedding_passage_prefix="passage: "
            )
        )
        vectors = model.embed_documents(["返金は購入後30日まで", "Taxi receipts"])
        query = model.embed_query("返金の期限は？")

    passages, question = server.requests
    assert passages.path == question.path == "/v1/embeddings"
    assert passages.body["input"] == ["passage: 返金は購入後30日まで", "passage: Taxi receipts"]
    assert question.body["input"] == ["query: 返金の期限は？"]
    assert "input_type" not in passages.body and "input_type" not in question.body
    assert passages.body["model"] == "multilingual-e5-small"
    assert vectors[1] == pytest.approx(stub_embedding("passage: Taxi receipts", 8), abs=1e-6)
    assert query == pytest.approx(stub_embedding("query: 返金の期限は？", 8), abs=1e-6)


def test_input_type_is_sent_per_request_and_the_text_left_as_is() -> None:
    with StubOpenAIServer(embedding_dim=8) as server:
        model = embeddings(local_embeddings(server, embedding_input_type=True))
        model.embed_documents(["Refund requests close 30 days after purchase."])
        model.embed_query("When do refunds close?")

    passages, question = server.requests
    assert passages.body["input_type"] == "passage"
    assert passages.body["input"] == ["Refund requests close 30 days after purchase."]
    assert question.body["input_type"] == "query"
    assert question.body["input"] == ["When do refunds close?"]


def test_no_prefix_and_no_input_type_sends_the_texts_unchanged() -> None:
    with StubOpenAIServer(embedding_dim=8) as server:
        model = embeddings(local_embeddings(server))
        model.embed_documents(["経費"])
        model.embed_query("経費")
    assert [request.body["input"] for request in server.requests] == [["経費"], ["経費"]]
    assert all("input_type" not in request.body for request in server.requests)


def test_a_compatible_server_never_gets_the_openai_key_of_another_chat_provider() -> None:
    with StubOpenAIServer(embedding_dim=8) as server:
        settings = local_embeddings(
            server, provider="openai", openai_api_key="sk-chat-secret-key-1234567890"
        )
        embeddings(settings).embed_query("経費")
    (request,) = server.requests
    assert "sk-chat-secret" not in request.headers["authorization"]
