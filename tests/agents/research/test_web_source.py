"""The web plug-in: none by default, Tavily against a loopback stub (request checked,
results mapped, errors in Japanese, the key never shown)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import SecretStr

from keiri_agent.agents.research.models import DocSnippet, SearchTool
from keiri_agent.agents.research.sources.testing import StubAnswer, TavilyStub
from keiri_agent.agents.research.sources.web import TavilySearch, WebSearch, web_search
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, ExecutionError

KEY = "tvly-secret-0123456789abcdef"

RESULTS: list[dict[str, Any]] = [
    {
        "title": "インボイス制度の概要｜国税庁",
        "url": "https://www.nta.go.jp/taxes/shiraberu/zeimokubetsu/shohi/keigenzeiritsu/invoice_about.htm",
        "content": "適格請求書発行事業者の登録番号を記載する必要があります。",
        "score": 0.91,
        "raw_content": None,
    },
    {"title": "", "url": "https://example.jp/faq", "content": "税率ごとの消費税額。", "score": 0.5},
    {"title": "no text", "url": "https://example.jp/empty", "content": ""},
]


def _settings(base_url: str, **values: object) -> Settings:
    return Settings(
        provider="offline",
        research_web_provider="tavily",
        research_web_api_key=SecretStr(KEY),
        research_web_base_url=base_url,
        **values,  # type: ignore[arg-type]
    )


def test_no_web_search_by_default() -> None:
    assert web_search(Settings(provider="offline").research) is None


def test_provider_without_key_is_a_japanese_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="API キーが設定されていません") as caught:
        web_search(Settings(provider="offline", research_web_provider="tavily").research)
    assert caught.value.hint and "KEIRI_AGENT_RESEARCH_WEB_API_KEY" in caught.value.hint


def test_tavily_request_and_result_mapping() -> None:
    with TavilyStub([TavilyStub.results(RESULTS)]) as stub:
        tool = web_search(_settings(stub.base_url, research_web_max_results=4).research)
        assert isinstance(tool, TavilySearch)
        assert isinstance(tool, WebSearch) and isinstance(tool, SearchTool)
        snippets = tool.search("インボイス 登録番号")
    [request] = stub.requests
    assert request.path == "/search"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "query": "インボイス 登録番号",
        "max_results": 4,
        "search_depth": "basic",
    }
    url = RESULTS[0]["url"]
    assert snippets == [
        DocSnippet(
            ref=url,
            text="適格請求書発行事業者の登録番号を記載する必要があります。",
            title="インボイス制度の概要｜国税庁",
            source="web",
            url=url,
            score=0.91,
            origin="web:tavily",
        ),
        DocSnippet(
            ref="https://example.jp/faq",
            text="税率ごとの消費税額。",
            title="https://example.jp/faq",  # no title: the URL stands in
            source="web",
            url="https://example.jp/faq",
            score=0.5,
            origin="web:tavily",
        ),
    ]  # the result without text is dropped
    assert snippets[0].label() == f"インボイス制度の概要｜国税庁 <{url}>"


def test_top_overrides_the_setting() -> None:
    with TavilyStub([TavilyStub.results(RESULTS)]) as stub:
        snippets = TavilySearch(SecretStr(KEY), base_url=stub.base_url).search("請求書", top=1)
    assert stub.requests[0].body["max_results"] == 1
    assert len(snippets) == 1


@pytest.mark.parametrize(
    ("status", "error_type", "code"),
    [
        (401, ConfigurationError, "SEARCH_UNAUTHORIZED"),
        (429, ExecutionError, "SEARCH_RATE_LIMITED"),
        (500, ExecutionError, "SEARCH_SERVER_ERROR"),
    ],
)
def test_errors_are_japanese_and_never_show_the_key(
    status: int,
    error_type: type[Exception],
    code: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    answer = StubAnswer({"detail": {"error": f"Unauthorized: {KEY}"}}, status=status)
    with TavilyStub([answer]) as stub, caplog.at_level(logging.DEBUG):
        tool = web_search(_settings(stub.base_url).research)
        assert tool is not None
        with pytest.raises(error_type) as caught:
            tool.search("請求書")
    error = caught.value
    assert getattr(error, "code", None) == code
    assert "Web 検索（Tavily）" in str(error) and f"HTTP {status}" in str(error)
    assert KEY not in str(error) and KEY not in caplog.text
    assert KEY not in repr(tool)


def test_timeout_and_bad_json() -> None:
    answers = [
        StubAnswer(TavilyStub.results(RESULTS).body, delay_s=1.0),
        StubAnswer(raw=b"not json"),
        StubAnswer({"answer": "no results key"}),
    ]
    with TavilyStub(answers) as stub:
        tool = web_search(_settings(stub.base_url, research_web_timeout_s=0.2).research)
        assert tool is not None
        codes = []
        for _ in answers:
            with pytest.raises(ExecutionError) as caught:
                tool.search("請求書")
            assert KEY not in str(caught.value)
            codes.append(caught.value.code)
    assert codes == ["SEARCH_TIMEOUT", "SEARCH_BAD_RESPONSE", "SEARCH_BAD_RESPONSE"]
