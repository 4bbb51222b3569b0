"""Web search as a plug-in: a ``WebSearch`` protocol, one provider (Tavily), chosen by settings.

None is active by default: ``web_search(settings.research)`` returns a provider only when
``research_web_provider`` and ``research_web_api_key`` are both set. The provider's base
URL is a setting too (tests point it at a loopback stub).

Tavily: ``POST {base}/search`` with ``{"query", "max_results", "search_depth"}`` and the
key as a bearer token; each result ``{title, url, content, score}`` becomes a
``DocSnippet(source="web")`` whose ref is the URL.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import SecretStr

from keiri_agent.agents.research.models import DocSnippet, SourceKind
from keiri_agent.agents.research.sources.http import post_json
from keiri_agent.config import ResearchSettings
from keiri_agent.errors import ConfigurationError, ExecutionError

WEB_PROVIDERS = ("tavily",)
"""The providers ``research_web_provider`` accepts."""


@runtime_checkable
class WebSearch(Protocol):
    """A web search provider: a ``SearchTool`` whose snippets carry a URL (``source="web"``)."""

    name: str
    sources: SourceKind
    provider: str

    def search(self, query: str, *, top: int = 5) -> list[DocSnippet]: ...


class TavilySearch:
    """Web search by the Tavily API.

    Args:
        api_key: The Tavily key (sent as ``Authorization: Bearer``; never shown).
        base_url: The API's base URL.
        max_results: Results per query when ``search`` is not given ``top``.
        timeout_s: Time limit of one request.
    """

    provider = "tavily"
    sources: SourceKind = "web"

    def __init__(
        self,
        api_key: SecretStr,
        *,
        base_url: str = "https://api.tavily.com",
        max_results: int = 5,
        timeout_s: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_results = max_results
        self.timeout_s = timeout_s
        self._api_key = api_key
        self.name = "Web 検索（Tavily）"

    def search(self, query: str, *, top: int | None = None) -> list[DocSnippet]:
        """The web's best pages for ``query`` (at most ``top``, default the setting).

        Raises:
            KeiriAgentError: The request failed (Japanese message and hint; never the key).
        """
        count = self.max_results if top is None else top
        if count <= 0 or not query.strip():
            return []
        data = post_json(
            f"{self.base_url}/search",
            {"query": query, "max_results": count, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {self._api_key.get_secret_value()}"},
            timeout_s=self.timeout_s,
            service=self.name,
        )
        results = data.get("results")
        if not isinstance(results, list):
            raise ExecutionError(
                f"{self.name} の応答に検索結果（results）がありません。",
                hint="Web 検索の接続先 URL の設定を確認してください。",
                code="SEARCH_BAD_RESPONSE",
                details={"service": self.name},
            )
        snippets: list[DocSnippet] = []
        for item in results[:count]:
            snippet = _snippet(item)
            if snippet is not None:
                snippets.append(snippet)
        return snippets

    def __repr__(self) -> str:
        return f"TavilySearch({self.base_url!r})"


def _snippet(item: Any) -> DocSnippet | None:
    if not isinstance(item, dict):
        return None
    url = str(item.get("url") or "").strip()
    text = str(item.get("content") or "").strip()
    if not url or not text:
        return None
    score = item.get("score")
    return DocSnippet(
        ref=url,
        text=text,
        title=str(item.get("title") or "").strip() or url,
        source="web",
        url=url,
        score=float(score) if isinstance(score, int | float) else 0.0,
        origin="web:tavily",
    )


def web_search(research: ResearchSettings) -> WebSearch | None:
    """The web search provider ``settings.research`` configures, or None (no provider).

    Raises:
        ConfigurationError: A provider is chosen but its key is missing.
    """
    provider = research.research_web_provider
    if provider is None:
        return None
    key = research.research_web_api_key
    if key is None:
        raise ConfigurationError(
            f"Web 検索（{provider}）の API キーが設定されていません。",
            hint="KEIRI_AGENT_RESEARCH_WEB_API_KEY を設定するか、Web 検索を使わない場合は "
            "KEIRI_AGENT_RESEARCH_WEB_PROVIDER を空にしてください。",
            code="WEB_SEARCH_NO_KEY",
        )
    return TavilySearch(
        key,
        base_url=research.research_web_base_url,
        max_results=research.research_web_max_results,
        timeout_s=research.research_web_timeout_s,
    )
