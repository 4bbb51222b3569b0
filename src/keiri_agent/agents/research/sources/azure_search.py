"""``AzureAISearch``: a search source over an Azure AI Search index (its REST API).

    POST {endpoint}/indexes/{index}/docs/search?api-version={version}

authenticated by the ``api-key`` header or an Entra ID bearer token (``token_provider``,
e.g. ``azure.identity.get_bearer_token_provider(credential,
"https://search.azure.com/.default")``). Everything about the index is a setting (none is
hard-coded): the field mapping (key, text, title, URL, page, document), ``select``,
``top``, the semantic configuration (``queryType: semantic``) and the vector fields
searched with the query vectorised by the index's own vectorizer (a ``vectorQueries``
entry of kind ``text``), which makes the search hybrid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from keiri_agent.agents.research.models import DocSnippet, SourceKind
from keiri_agent.agents.research.sources.http import post_json
from keiri_agent.config import ResearchSettings
from keiri_agent.errors import ConfigurationError, ExecutionError

TokenProvider = Callable[[], str]
"""Returns a current Entra ID access token for ``https://search.azure.com``."""


@dataclass(frozen=True)
class AzureSearchFields:
    """Which index field holds what (``None``: the index has no such field)."""

    key: str = "id"
    text: str = "content"
    title: str | None = "title"
    url: str | None = None
    page: str | None = None
    document: str | None = None

    def mapped(self) -> list[str]:
        """The mapped fields, each once, in this order."""
        names = [self.key, self.text, self.title, self.url, self.page, self.document]
        return list(dict.fromkeys(name for name in names if name))


class AzureAISearch:
    """A :class:`~keiri_agent.agents.research.models.SearchTool` over one Azure AI Search index.

    Args:
        endpoint: ``https://<service>.search.windows.net``.
        index: The index name.
        api_key: The ``api-key`` header; or ``token_provider`` for an Entra bearer token.
        api_version: The REST API version.
        fields: The field mapping.
        semantic_configuration: Set: a semantic query with this configuration.
        top: Results per query when ``search`` is not given ``top``.
        select: Fields returned; empty: the mapped fields.
        vector_fields: Vector fields searched by the vectorised query; empty: none.
        vector_k: Nearest neighbours of the vector query.
        timeout_s: Time limit of one request.
    """

    sources: SourceKind = "internal"

    def __init__(
        self,
        endpoint: str,
        index: str,
        *,
        api_key: SecretStr | None = None,
        token_provider: TokenProvider | None = None,
        api_version: str = "2024-07-01",
        fields: AzureSearchFields | None = None,
        semantic_configuration: str | None = None,
        top: int = 5,
        select: Sequence[str] = (),
        vector_fields: Sequence[str] = (),
        vector_k: int = 50,
        timeout_s: float = 30.0,
    ) -> None:
        if not endpoint or not index:
            raise ConfigurationError(
                "Azure AI Search のエンドポイントとインデックス名の両方が必要です。",
                hint="KEIRI_AGENT_RESEARCH_AZURE_SEARCH_ENDPOINT と "
                "KEIRI_AGENT_RESEARCH_AZURE_SEARCH_INDEX を設定してください。",
                code="AZURE_SEARCH_NOT_CONFIGURED",
            )
        if api_key is None and token_provider is None:
            raise ConfigurationError(
                "Azure AI Search の API キーまたは Entra ID トークンが必要です。",
                hint="KEIRI_AGENT_RESEARCH_AZURE_SEARCH_API_KEY にクエリキーを設定してください。",
                code="AZURE_SEARCH_NO_CREDENTIAL",
            )
        self.endpoint = endpoint.rstrip("/")
        self.index = index
        self.api_version = api_version
        self.fields = fields or AzureSearchFields()
        self.semantic_configuration = semantic_configuration or None
        self.top = top
        self.select = [name for name in select if name] or self.fields.mapped()
        self.vector_fields = [name for name in vector_fields if name]
        self.vector_k = vector_k
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._token_provider = token_provider
        self.name = f"Azure AI Search（{index}）"

    @classmethod
    def from_settings(
        cls, research: ResearchSettings, *, token_provider: TokenProvider | None = None
    ) -> AzureAISearch:
        """The index the ``research_azure_search_*`` settings describe (``settings.research``)."""
        return cls(
            research.research_azure_search_endpoint or "",
            research.research_azure_search_index or "",
            api_key=research.research_azure_search_api_key,
            token_provider=token_provider,
            api_version=research.research_azure_search_api_version,
            fields=AzureSearchFields(
                key=research.research_azure_search_key_field,
                text=research.research_azure_search_text_field,
                title=research.research_azure_search_title_field or None,
                url=research.research_azure_search_url_field or None,
                page=research.research_azure_search_page_field or None,
                document=research.research_azure_search_document_field or None,
            ),
            semantic_configuration=research.research_azure_search_semantic_configuration,
            top=research.research_azure_search_top,
            select=research.research_azure_search_select,
            vector_fields=research.research_azure_search_vector_fields,
            vector_k=research.research_azure_search_vector_k,
            timeout_s=research.research_azure_search_timeout_s,
        )

    def request_body(self, query: str, top: int) -> dict[str, Any]:
        """The JSON body of the search request for ``query``."""
        body: dict[str, Any] = {"search": query, "top": top, "select": ",".join(self.select)}
        if self.semantic_configuration:
            body["queryType"] = "semantic"
            body["semanticConfiguration"] = self.semantic_configuration
        if self.vector_fields:
            body["vectorQueries"] = [
                {
                    "kind": "text",
                    "text": query,
                    "fields": ",".join(self.vector_fields),
                    "k": self.vector_k,
                }
            ]
        return body

    def search(self, query: str, *, top: int | None = None) -> list[DocSnippet]:
        """The index's best passages for ``query`` (at most ``top``, default the setting).

        Raises:
            KeiriAgentError: The request failed (Japanese message and hint; never the key).
        """
        count = self.top if top is None else top
        if count <= 0 or not query.strip():
            return []
        data = post_json(
            f"{self.endpoint}/indexes/{self.index}/docs/search",
            self.request_body(query, count),
            params={"api-version": self.api_version},
            headers=self._headers(),
            timeout_s=self.timeout_s,
            service=self.name,
        )
        values = data.get("value")
        if not isinstance(values, list):
            raise ExecutionError(
                f"{self.name} の応答に検索結果（value）がありません。",
                hint="エンドポイントと API バージョンの設定を確認してください。",
                code="SEARCH_BAD_RESPONSE",
                details={"service": self.name},
            )
        snippets = [self._snippet(item) for item in values[:count] if isinstance(item, dict)]
        return [snippet for snippet in snippets if snippet.text]

    def _headers(self) -> dict[str, str]:
        if self._api_key is not None:
            return {"api-key": self._api_key.get_secret_value()}
        assert self._token_provider is not None
        try:
            token = self._token_provider()
        except Exception as exc:  # any credential failure is a configuration issue
            raise ConfigurationError(
                f"{self.name} 用の Entra ID トークンを取得できませんでした。",
                hint="Azure へのサインイン（az login やマネージド ID）と、検索サービスへの"
                "ロール割り当て（Search Index Data Reader）を確認してください。",
                code="SEARCH_TOKEN_FAILED",
                details={"service": self.name, "error": type(exc).__name__},
            ) from None
        return {"Authorization": f"Bearer {token}"}

    def _snippet(self, item: dict[str, Any]) -> DocSnippet:
        fields = self.fields
        text = _text(item.get(fields.text))
        title = _text(item.get(fields.title)) if fields.title else ""
        url = _text(item.get(fields.url)) or None if fields.url else None
        document = _text(item.get(fields.document)) or None if fields.document else None
        page = _page(item.get(fields.page)) if fields.page else None
        key = _text(item.get(fields.key))
        score = item.get("@search.rerankerScore")
        if not isinstance(score, int | float):
            score = item.get("@search.score")
        return DocSnippet(
            ref=f"azure:{self.index}/{key}" if key else (url or f"azure:{self.index}/{title}"),
            text=text,
            title=title or document or url or key,
            source="internal",
            document=document,
            page=page,
            url=url,
            score=float(score) if isinstance(score, int | float) else 0.0,
            origin=f"azure:{self.index}",
        )

    def __repr__(self) -> str:
        return f"AzureAISearch({self.endpoint!r}, {self.index!r})"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str(part) for part in value if part is not None)
    return str(value)


def _page(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
