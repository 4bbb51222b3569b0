"""The deep-research agent's search sources (seed 004 §1).

``internal`` (the workspace's knowledge bases, :mod:`.internal`), Azure AI Search
(:mod:`.azure_search`), the web plug-in (:mod:`.web`), and :func:`.registry.search_tools`,
which picks the ones the settings configure. Each is a
:class:`~keiri_agent.agents.research.models.SearchTool`.
"""

from keiri_agent.agents.research.sources.azure_search import AzureAISearch, AzureSearchFields
from keiri_agent.agents.research.sources.internal import InternalSearch, open_internal
from keiri_agent.agents.research.sources.registry import search_tools
from keiri_agent.agents.research.sources.web import TavilySearch, WebSearch, web_search

__all__ = [
    "AzureAISearch",
    "AzureSearchFields",
    "InternalSearch",
    "TavilySearch",
    "WebSearch",
    "open_internal",
    "search_tools",
    "web_search",
]
