"""AzureAISearch against a loopback stub of the REST API: requests checked, results mapped,
every failure a Japanese error that never shows the key."""

from __future__ import annotations

import logging

import pytest

from keiri_agent.agents.research.models import DocSnippet, SearchTool
from keiri_agent.agents.research.sources.azure_search import AzureAISearch, AzureSearchFields
from keiri_agent.agents.research.sources.testing import AzureSearchStub, StubAnswer
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, ExecutionError, KeiriAgentError

KEY = "azs-query-key-0123456789abcdef"

DOCS = [
    {
        "@search.score": 2.5,
        "@search.rerankerScore": 3.1,
        "chunk_id": "inv-7",
        "chunk": "適格請求書には登録番号の記載が必要です。",
        "doc_title": "請求書規程",
        "source_url": "https://intra.example.jp/rules/invoice.pdf",
        "page_no": 4,
        "file_name": "invoice_rules.pdf",
    },
    {
        "@search.score": 1.25,
        "chunk_id": "inv-9",
        "chunk": "税率ごとに区分した消費税額を記載します。",
        "doc_title": "請求書規程",
        "source_url": "https://intra.example.jp/rules/invoice.pdf",
        "page_no": "5",
        "file_name": "invoice_rules.pdf",
    },
]


def _settings(endpoint: str, **values: object) -> Settings:
    base: dict[str, object] = {
        "research_azure_search_endpoint": endpoint,
        "research_azure_search_index": "kitei-idx",
        "research_azure_search_api_key": KEY,
        "research_azure_search_api_version": "2024-11-01-preview",
        "research_azure_search_key_field": "chunk_id",
        "research_azure_search_text_field": "chunk",
        "research_azure_search_title_field": "doc_title",
        "research_azure_search_url_field": "source_url",
        "research_azure_search_page_field": "page_no",
        "research_azure_search_document_field": "file_name",
    }
    base.update(values)
    return Settings(provider="offline", **base)  # type: ignore[arg-type]


def test_request_carries_every_setting_and_results_are_mapped() -> None:
    with AzureSearchStub([AzureSearchStub.documents(DOCS)]) as stub:
        settings = _settings(
            stub.base_url + "/",
            research_azure_search_semantic_configuration="kitei-semantic",
            research_azure_search_top=7,
            research_azure_search_vector_fields="chunk_vector, title_vector",
            research_azure_search_vector_k=12,
        )
        tool = AzureAISearch.from_settings(settings.research)
        assert isinstance(tool, SearchTool)
        snippets = tool.search("インボイス 登録番号")
    [request] = stub.requests
    assert request.path == "/indexes/kitei-idx/docs/search"
    assert request.params == {"api-version": "2024-11-01-preview"}
    assert request.headers["api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.body == {
        "search": "インボイス 登録番号",
        "top": 7,
        "select": "chunk_id,chunk,doc_title,source_url,page_no,file_name",
        "queryType": "semantic",
        "semanticConfiguration": "kitei-semantic",
        "vectorQueries": [
            {
                "kind": "text",
                "text": "インボイス 登録番号",
                "fields": "chunk_vector,title_vector",
                "k": 12,
            }
        ],
    }
    assert snippets == [
        DocSnippet(
            ref="azure:kitei-idx/inv-7",
            text="適格請求書には登録番号の記載が必要です。",
            title="請求書規程",
            source="internal",
            document="invoice_rules.pdf",
            page=4,
            url="https://intra.example.jp/rules/invoice.pdf",
            score=3.1,  # the semantic reranker's score wins over the BM25 one
            origin="azure:kitei-idx",
        ),
        DocSnippet(
            ref="azure:kitei-idx/inv-9",
            text="税率ごとに区分した消費税額を記載します。",
            title="請求書規程",
            source="internal",
            document="invoice_rules.pdf",
            page=5,
            url="https://intra.example.jp/rules/invoice.pdf",
            score=1.25,
            origin="azure:kitei-idx",
        ),
    ]


def test_plain_keyword_query_has_no_semantic_or_vector_part_and_honours_select_and_top() -> None:
    with AzureSearchStub([AzureSearchStub.documents(DOCS[:1])]) as stub:
        settings = _settings(stub.base_url, research_azure_search_select="chunk,doc_title")
        snippets = AzureAISearch.from_settings(settings.research).search("登録番号", top=2)
    body = stub.requests[0].body
    assert body == {"search": "登録番号", "top": 2, "select": "chunk,doc_title"}
    assert [snippet.text for snippet in snippets] == [DOCS[0]["chunk"]]


def test_entra_token_is_sent_as_bearer_instead_of_a_key() -> None:
    with AzureSearchStub([AzureSearchStub.documents([])]) as stub:
        tool = AzureAISearch(
            stub.base_url,
            "kitei-idx",
            token_provider=lambda: "entra-token-abc",
            fields=AzureSearchFields(key="chunk_id", text="chunk"),
        )
        assert tool.search("請求書") == []
    headers = stub.requests[0].headers
    assert headers["authorization"] == "Bearer entra-token-abc"
    assert "api-key" not in headers
    assert stub.requests[0].params == {"api-version": "2024-07-01"}


def test_missing_credentials_or_endpoint_are_configuration_errors_in_japanese() -> None:
    with pytest.raises(ConfigurationError, match="API キーまたは Entra ID") as no_key:
        AzureAISearch("https://x.search.windows.net", "idx")
    assert no_key.value.hint and "KEIRI_AGENT_RESEARCH_AZURE_SEARCH_API_KEY" in no_key.value.hint
    with pytest.raises(ConfigurationError, match="エンドポイントとインデックス名"):
        AzureAISearch.from_settings(Settings(provider="offline").research)


@pytest.mark.parametrize(
    ("status", "error_type", "code", "words"),
    [
        (401, ConfigurationError, "SEARCH_UNAUTHORIZED", "認証"),
        (403, ConfigurationError, "SEARCH_UNAUTHORIZED", "認証"),
        (404, ConfigurationError, "SEARCH_NOT_FOUND", "見つかりません"),
        (400, ConfigurationError, "SEARCH_BAD_REQUEST", "受け付けませんでした"),
        (429, ExecutionError, "SEARCH_RATE_LIMITED", "利用上限"),
        (503, ExecutionError, "SEARCH_SERVER_ERROR", "サーバーエラー"),
    ],
)
def test_http_errors_become_japanese_errors_without_the_key(
    status: int,
    error_type: type[KeiriAgentError],
    code: str,
    words: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the service echoes the key in its error body: it must not reach any message or log
    answer = StubAnswer({"error": {"message": f"bad key {KEY}"}}, status=status)
    with (
        AzureSearchStub([answer]) as stub,
        caplog.at_level(logging.DEBUG),
        pytest.raises(error_type) as caught,
    ):
        AzureAISearch.from_settings(_settings(stub.base_url).research).search("請求書")
    error = caught.value
    assert error.code == code
    assert words in error.message and f"HTTP {status}" in error.message
    assert error.hint
    _assert_no_key(error, caplog)


def test_timeout_is_an_execution_error(caplog: pytest.LogCaptureFixture) -> None:
    slow = StubAnswer(AzureSearchStub.documents(DOCS).body, delay_s=1.0)
    with AzureSearchStub([slow]) as stub, caplog.at_level(logging.DEBUG):
        tool = AzureAISearch.from_settings(
            _settings(stub.base_url, research_azure_search_timeout_s=0.2).research
        )
        with pytest.raises(ExecutionError) as caught:
            tool.search("請求書")
    assert caught.value.code == "SEARCH_TIMEOUT"
    assert "0.2 秒以内に応答しませんでした" in caught.value.message
    _assert_no_key(caught.value, caplog)


@pytest.mark.parametrize(
    "answer",
    [StubAnswer(raw=b"<html>gateway</html>"), StubAnswer({"values": []}), StubAnswer([1, 2])],
)
def test_bad_json_is_an_execution_error(answer: StubAnswer) -> None:
    with AzureSearchStub([answer]) as stub, pytest.raises(ExecutionError) as caught:
        AzureAISearch.from_settings(_settings(stub.base_url).research).search("請求書")
    assert caught.value.code == "SEARCH_BAD_RESPONSE"
    assert "応答" in caught.value.message
    _assert_no_key(caught.value, None)


def test_unreachable_endpoint_is_an_execution_error() -> None:
    with AzureSearchStub() as stub:
        url = stub.base_url  # the port is closed once the stub stops
    with pytest.raises(ExecutionError) as caught:
        AzureAISearch.from_settings(_settings(url).research).search("請求書")
    assert caught.value.code == "SEARCH_UNREACHABLE"
    assert "接続できませんでした" in caught.value.message


def test_failing_token_provider_is_a_configuration_error() -> None:
    def broken() -> str:
        raise RuntimeError(f"credential {KEY} expired")

    tool = AzureAISearch("http://127.0.0.1:9", "idx", token_provider=broken)
    with pytest.raises(ConfigurationError) as caught:
        tool.search("請求書")
    assert caught.value.code == "SEARCH_TOKEN_FAILED"
    _assert_no_key(caught.value, None)


def _assert_no_key(error: KeiriAgentError, caplog: pytest.LogCaptureFixture | None) -> None:
    assert KEY not in str(error)
    assert KEY not in repr(error.to_dict())
    assert error.__cause__ is None or KEY not in str(error.__cause__)
    if caplog is not None:
        assert KEY not in caplog.text
