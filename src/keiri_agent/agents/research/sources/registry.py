"""``search_tools``: the search sources of one research question, from the settings.

The internal knowledge bases chosen for the question (every indexed one by default, or
the named ones), plus Azure AI Search when an endpoint and index are configured, plus
the web when a provider and its key are configured. No knowledge base indexed and no
other source configured is an error the user can fix (index documents first).
"""

from __future__ import annotations

from collections.abc import Sequence

from keiri_agent.agents.research.models import SearchTool
from keiri_agent.agents.research.sources.azure_search import AzureAISearch, TokenProvider
from keiri_agent.agents.research.sources.internal import knowledge_base_names, open_internal
from keiri_agent.agents.research.sources.web import web_search
from keiri_agent.config import Settings


def azure_search_configured(settings: Settings) -> bool:
    """An Azure AI Search endpoint and index are set."""
    return bool(settings.research_azure_search_endpoint and settings.research_azure_search_index)


def search_tools(
    settings: Settings,
    *,
    kb_names: Sequence[str] | None = None,
    azure_token_provider: TokenProvider | None = None,
) -> list[SearchTool]:
    """The sources a research question searches, internal first.

    Args:
        settings: The research, search and workspace settings.
        kb_names: The knowledge bases to search; None: every indexed one (none indexed
            is fine when Azure AI Search or the web is configured).
        azure_token_provider: An Entra ID token provider for Azure AI Search (instead
            of ``research_azure_search_api_key``).

    Raises:
        UserInputError: A named knowledge base does not exist, or there is nothing at
            all to search.
        ConfigurationError: Azure AI Search or the web provider is half configured.
    """
    tools: list[SearchTool] = []
    external = azure_search_configured(settings) or settings.research_web_provider is not None
    if kb_names or knowledge_base_names(settings) or not external:
        tools.append(open_internal(settings, kb_names))
    if azure_search_configured(settings):
        tools.append(AzureAISearch.from_settings(settings, token_provider=azure_token_provider))
    web = web_search(settings)
    if web is not None:
        tools.append(web)
    return tools
