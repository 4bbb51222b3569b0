"""InternalSearch and open_internal over the workspace's knowledge bases (the ones the
HelpDesk indexes): keyword offline, hybrid where vectors are complete, several knowledge
bases fused by rank, unknown names refused in Japanese."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pypdf
import pytest
from pydantic import SecretStr

from keiri_agent.agents.helpdesk.desk import SAMPLE_DOCUMENTS
from keiri_agent.agents.research.models import DocSnippet, SearchTool
from keiri_agent.agents.research.sources.azure_search import AzureAISearch
from keiri_agent.agents.research.sources.internal import (
    InternalSearch,
    knowledge_base_names,
    open_internal,
)
from keiri_agent.agents.research.sources.registry import SAMPLE_KB, SAMPLE_SOURCE_NAME, search_tools
from keiri_agent.agents.research.sources.web import TavilySearch
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.search.knowledge_base import KnowledgeBase
from keiri_agent.search.models import BatchProgress, Chunk, Hit, Retriever

MANUAL_PDF = SAMPLE_DOCUMENTS / "xyz_manual.pdf"


class _MemoryVectors:
    """A stand-in vector index: finds chunks holding any word of a synonym list."""

    SYNONYMS: ClassVar[dict[str, list[str]]] = {"適格請求書": ["インボイス"]}

    def __init__(self) -> None:
        self.chunks: dict[str, list[Chunk]] = {}

    @property
    def retriever(self) -> Retriever:
        return "vector"

    def search(self, query: str, k: int = 5) -> list[Hit]:
        words = [word for key, values in self.SYNONYMS.items() if key in query for word in values]
        found = [c for cs in self.chunks.values() for c in cs if any(w in c.text for w in words)]
        return [Hit(chunk=c, score=1.0, retriever="vector") for c in found[:k]]

    def upsert(
        self, document: str, chunks: Sequence[Chunk], *, on_batch: BatchProgress | None = None
    ) -> None:
        self.chunks[document] = list(chunks)

    def delete_documents(self, documents: Sequence[str]) -> None:
        for document in documents:
            self.chunks.pop(document, None)

    def documents(self) -> set[str]:
        return set(self.chunks)


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _index(settings: Settings, kb: str, folder: Path, **kwargs: object) -> KnowledgeBase:
    base = KnowledgeBase.for_workspace(settings, kb, **kwargs)  # type: ignore[arg-type]
    assert base.index_files([folder], "manual").ok
    return base


def test_snippets_carry_document_page_heading_and_origin(keiri_home: Path) -> None:
    settings = Settings(provider="offline")
    KnowledgeBase.for_workspace(settings, "xyz").index_files([MANUAL_PDF], "manual")
    tool = open_internal(settings, ["xyz"])
    assert isinstance(tool, SearchTool)
    assert tool.name == "社内ナレッジ（xyz）" and tool.sources == "internal"
    snippets = tool.search("E1030 添付ファイル サイズ 上限", top=3)
    assert 1 <= len(snippets) <= 3
    best = snippets[0]
    pages_with_code = {
        number
        for number, page in enumerate(pypdf.PdfReader(MANUAL_PDF).pages, start=1)
        if "E1030" in page.extract_text()
    }
    assert "E1030" in best.text
    assert best.page in pages_with_code
    assert best.document == best.title == "xyz_manual.pdf"
    assert best.ref.startswith("xyz_manual.pdf#")
    assert best.origin == "kb:xyz" and best.source == "internal"
    assert best.label().startswith(f"xyz_manual.pdf p.{best.page}")


def test_knowledge_bases_are_fused_by_reciprocal_rank(keiri_home: Path, tmp_path: Path) -> None:
    settings = Settings(provider="offline")
    _index(
        settings,
        "kitei",
        _write(
            tmp_path / "kitei",
            {
                "a.md": "# 請求書\n\n請求書には登録番号を記載する。"
                "請求書の様式は経理部が定める。\n",
                "b.md": "# 保存\n\n請求書は七年間保存する。\n",
            },
        ),
    )
    _index(
        settings,
        "tsuchi",
        _write(tmp_path / "tsuchi", {"c.md": "# 通知\n\n新しい請求書の様式を通知します。\n"}),
    )
    assert knowledge_base_names(settings) == ["kitei", "tsuchi"]
    tool = open_internal(settings)  # every indexed knowledge base
    assert tool.kb_names == ["kitei", "tsuchi"]
    snippets = tool.search("請求書 様式", top=5)
    by_origin = {(s.origin, s.document) for s in snippets}
    assert ("kb:tsuchi", "c.md") in by_origin and ("kb:kitei", "a.md") in by_origin
    # each knowledge base ranks its own chunks; fusion scores rank r as 1 / (60 + r)
    for origin in ("kb:kitei", "kb:tsuchi"):
        mine = [s for s in snippets if s.origin == origin]
        for rank, snippet in enumerate(mine, start=1):
            assert snippet.score == pytest.approx(1 / (60 + rank))
    assert [s.score for s in snippets] == sorted((s.score for s in snippets), reverse=True)
    assert open_internal(settings, ["tsuchi"]).search("請求書", top=5)[0].origin == "kb:tsuchi"


def test_hybrid_when_every_document_has_vectors(keiri_home: Path, tmp_path: Path) -> None:
    settings = Settings(provider="offline")
    vectors = _MemoryVectors()
    folder = _write(
        tmp_path / "docs",
        {
            "invoice.md": "# 制度\n\nインボイス制度では登録番号の記載が求められる。\n",
            "travel.md": "# 出張\n\n出張旅費は実費で精算する。\n",
        },
    )
    base = _index(settings, "kb", folder, vector_index_factory=lambda collection: vectors)
    query = "適格請求書"  # no keyword overlap with the invoice document
    hybrid = InternalSearch(base).search(query)
    keyword_only = InternalSearch(base, use_vectors=False).search(query)
    assert [s.document for s in hybrid] == ["invoice.md"]
    assert keyword_only == []


def test_keyword_when_vectors_are_incomplete(keiri_home: Path, tmp_path: Path) -> None:
    settings = Settings(provider="offline")
    folder = _write(tmp_path / "docs", {"invoice.md": "# 制度\n\nインボイス制度の説明。\n"})
    _index(settings, "kb", folder)  # indexed without vectors
    opened: list[str] = []

    def factory(collection: str) -> _MemoryVectors:
        opened.append(collection)
        return _MemoryVectors()

    base = KnowledgeBase.for_workspace(settings, "kb", vector_index_factory=factory)
    assert InternalSearch(base).search("適格請求書") == []
    assert [s.document for s in InternalSearch(base).search("インボイス")] == ["invoice.md"]
    assert opened == []  # the manifest says no vectors: the vector index is never opened


def test_unknown_names_are_refused_in_japanese_listing_the_existing(
    keiri_home: Path, tmp_path: Path
) -> None:
    settings = Settings(provider="offline")
    with pytest.raises(UserInputError, match="検索できるナレッジベースがありません") as empty:
        open_internal(settings)
    assert empty.value.hint and "（まだありません）" in empty.value.hint
    _index(settings, "kitei", _write(tmp_path / "k", {"a.md": "# a\n\n本文\n"}))
    _index(settings, "tsuchi", _write(tmp_path / "t", {"b.md": "# b\n\n本文\n"}))
    with pytest.raises(UserInputError) as caught:
        open_internal(settings, ["kitei", "shanai", "../etc"])
    error = caught.value
    assert error.code == "UNKNOWN_KNOWLEDGE_BASE"
    assert error.message == "ナレッジベース「shanai」「../etc」が見つかりません。"
    assert error.hint is not None and "既存のナレッジベース: kitei、tsuchi" in error.hint
    assert error.details["knowledge_bases"] == ["kitei", "tsuchi"]


def test_empty_query_or_top_finds_nothing(keiri_home: Path, tmp_path: Path) -> None:
    settings = Settings(provider="offline")
    _index(settings, "kb", _write(tmp_path / "d", {"a.md": "# a\n\n請求書\n"}))
    tool = open_internal(settings)
    assert tool.search("   ") == [] and tool.search("請求書", top=0) == []


def _every_source() -> Settings:
    """Offline settings with Azure AI Search and the web configured too."""
    return Settings(
        provider="offline",
        research_azure_search_endpoint="http://127.0.0.1:9",
        research_azure_search_index="idx",
        research_azure_search_api_key=SecretStr("azs-key-0123456789"),
        research_web_provider="tavily",
        research_web_api_key=SecretStr("tvly-key-0123456789"),
    )


def test_search_tools_picks_the_configured_sources(keiri_home: Path, tmp_path: Path) -> None:
    base = Settings(provider="offline")
    _index(base, "kitei", _write(tmp_path / "k", {"a.md": "# a\n\n請求書\n"}))
    _index(base, "tsuchi", _write(tmp_path / "t", {"b.md": "# b\n\n通知\n"}))
    [internal] = search_tools(base)
    assert isinstance(internal, InternalSearch) and internal.kb_names == ["kitei", "tsuchi"]
    [only] = search_tools(base, kb_names=["tsuchi"])
    assert isinstance(only, InternalSearch) and only.kb_names == ["tsuchi"]
    full = _every_source()
    tools = search_tools(full)
    assert [type(tool) for tool in tools] == [InternalSearch, AzureAISearch, TavilySearch]
    assert [tool.sources for tool in tools] == ["internal", "internal", "web"]


def test_search_tools_without_knowledge_bases(keiri_home: Path) -> None:
    with pytest.raises(UserInputError, match="検索できる資料がありません") as nothing:
        search_tools(Settings(provider="offline"))
    assert nothing.value.code == "NO_RESEARCH_SOURCE" and "サンプル資料" in str(nothing.value.hint)
    azure_only = Settings(
        provider="offline",
        research_azure_search_endpoint="http://127.0.0.1:9",
        research_azure_search_index="idx",
    )
    tools = search_tools(azure_only, azure_token_provider=lambda: "token")
    assert [type(tool) for tool in tools] == [AzureAISearch]
    with pytest.raises(UserInputError, match="「kitei」が見つかりません"):
        search_tools(azure_only, kb_names=["kitei"], azure_token_provider=lambda: "token")


def test_an_faq_snippet_is_cited_with_its_row(keiri_home: Path) -> None:
    settings = Settings(provider="offline")
    faq = SAMPLE_DOCUMENTS.parent / "xyz_faq.csv"
    assert KnowledgeBase.for_workspace(settings, "xyz").index_files([faq], "qa", faq=True).ok
    (best, *_) = open_internal(settings, ["xyz"]).search("アカウント ロック", top=3)
    assert best.document == "xyz_faq.csv" and isinstance(best.row, int)
    assert best.label().startswith(f"xyz_faq.csv 行{best.row}")
    assert DocSnippet.from_dict(best.to_dict()) == best


def test_the_sample_is_searched_alone_even_with_azure_and_the_web_configured(
    keiri_home: Path, tmp_path: Path
) -> None:
    full = _every_source()
    _index(full, SAMPLE_KB, _write(tmp_path / "s", {"a.md": "# a\n\n請求書\n"}))
    _index(full, "kitei", _write(tmp_path / "k", {"b.md": "# b\n\n通知\n"}))
    [sample] = search_tools(full, kb_names=[SAMPLE_KB])
    assert isinstance(sample, InternalSearch) and sample.kb_names == [SAMPLE_KB]
    assert sample.name == SAMPLE_SOURCE_NAME
    default = search_tools(full)  # every knowledge base but the sample, and the others
    assert [type(tool) for tool in default] == [InternalSearch, AzureAISearch, TavilySearch]
    assert default[0].kb_names == ["kitei"]  # type: ignore[attr-defined]
    with pytest.raises(UserInputError) as mixed:
        search_tools(full, kb_names=[SAMPLE_KB, "kitei"])
    assert mixed.value.code == "SAMPLE_NOT_MIXED"


def test_a_knowledge_base_without_vectors_is_named_when_vectors_are_on(
    keiri_home: Path, tmp_path: Path
) -> None:
    settings = Settings(provider="offline")
    base = _index(settings, "kitei", _write(tmp_path / "k", {"a.md": "# a\n\n請求書\n"}))
    assert InternalSearch(base, use_vectors=False).retrieval_warnings() == []
    [warning] = InternalSearch(base, use_vectors=True).retrieval_warnings()
    assert warning.startswith("ナレッジベース「kitei」の一部はキーワード検索だけで検索しました")
    assert "ベクトルのない資料が 1 件" in warning
