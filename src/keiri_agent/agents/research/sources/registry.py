"""``search_tools``: the search sources of one research question, from the settings.

The internal knowledge bases chosen for the question (every indexed one by default, or
the named ones), plus Azure AI Search when an endpoint and index are configured, plus
the web when a provider and its key are configured. No knowledge base indexed and no
other source configured is an error the user can fix (index documents first).

The bundled sample corpus (a fictional company's documents, knowledge base
``SAMPLE_KB``) is searched only when it is asked for — named in ``kb_names`` — and then
alone: never with another knowledge base, Azure AI Search or the web, and never as part
of the default "every indexed knowledge base".
"""

from __future__ import annotations

from collections.abc import Sequence

from keiri_agent.agents.research.models import SearchTool
from keiri_agent.agents.research.sources.azure_search import AzureAISearch, TokenProvider
from keiri_agent.agents.research.sources.internal import knowledge_base_names, open_internal
from keiri_agent.agents.research.sources.web import web_search
from keiri_agent.config import ResearchSettings, Settings
from keiri_agent.errors import UserInputError

SAMPLE_KB = "research"
"""The knowledge base the bundled research corpus is indexed into (reserved for it)."""
SAMPLE_SOURCE_NAME = "同梱のサンプル資料（架空の会社）"
"""The sample as a search source, in progress and limitations."""
SAMPLE_NOTICE = (
    "サンプル資料は、架空の会社の経理規程・経理部通知・請求書様式ガイドです。"
    "サンプル資料を選ぶと、サンプル資料だけを検索します"
    "（ほかのナレッジベース・Azure AI Search・Web 検索とは混ぜません）。"
)
"""What every surface says when the sample is chosen."""


def azure_search_configured(research: ResearchSettings) -> bool:
    """An Azure AI Search endpoint and index are set."""
    return bool(research.research_azure_search_endpoint and research.research_azure_search_index)


def search_tools(
    settings: Settings,
    *,
    kb_names: Sequence[str] | None = None,
    azure_token_provider: TokenProvider | None = None,
) -> list[SearchTool]:
    """The sources a research question searches, internal first.

    Args:
        settings: The research, search and workspace settings.
        kb_names: The knowledge bases to search; None or empty: every indexed one but
            the sample (none is fine when Azure AI Search or the web is configured).
            ``SAMPLE_KB`` alone: the sample only, nothing else.
        azure_token_provider: An Entra ID token provider for Azure AI Search (instead
            of ``research_azure_search_api_key``).

    Raises:
        UserInputError: A named knowledge base does not exist, the sample is named
            with other knowledge bases or has not been indexed, or there is nothing at
            all to search (``NO_RESEARCH_SOURCE``).
        ConfigurationError: Azure AI Search or the web provider is half configured.
    """
    names = list(dict.fromkeys(name for name in kb_names or () if name))
    if SAMPLE_KB in names:
        return [_sample_source(settings, names)]
    tools: list[SearchTool] = []
    external = (
        azure_search_configured(settings.research)
        or settings.research.research_web_provider is not None
    )
    if not names:
        names = [name for name in knowledge_base_names(settings) if name != SAMPLE_KB]
        if not names and not external:
            raise UserInputError(
                "検索できる資料がありません。",
                hint="先に、調べたい文書をナレッジベースに登録してください（ヘルプデスクの"
                "画面で登録できます。できない場合は管理者に依頼してください）。"
                "試すだけなら、同梱のサンプル資料（架空の会社の資料）を読み込んで"
                "選んでください。",
                code="NO_RESEARCH_SOURCE",
                details={"knowledge_bases": knowledge_base_names(settings)},
            )
    if names:
        tools.append(open_internal(settings, names))
    if azure_search_configured(settings.research):
        tools.append(
            AzureAISearch.from_settings(settings.research, token_provider=azure_token_provider)
        )
    web = web_search(settings.research)
    if web is not None:
        tools.append(web)
    return tools


def _sample_source(settings: Settings, names: list[str]) -> SearchTool:
    """The sample knowledge base as the run's only source."""
    others = [name for name in names if name != SAMPLE_KB]
    if others:
        raise UserInputError(
            "サンプル資料は、ほかのナレッジベースと一緒には検索できません。",
            hint=f"サンプル資料だけを選ぶか、サンプル資料を外して「{'」「'.join(others)}」"
            "を選んでください。",
            code="SAMPLE_NOT_MIXED",
            details={"knowledge_bases": others},
        )
    if SAMPLE_KB not in knowledge_base_names(settings):
        raise UserInputError(
            "サンプル資料がまだ読み込まれていません。",
            hint="「サンプル資料を読み込む」で読み込んでから、もう一度調査してください。",
            code="SAMPLE_NOT_INDEXED",
        )
    return open_internal(settings, [SAMPLE_KB], source_name=SAMPLE_SOURCE_NAME)
