"""``InternalSearch``: the workspace's knowledge bases as a research search source.

The same knowledge bases the HelpDesk indexes (``.keiri/knowledge/<name>``, collections
``manual`` and ``qa``), searched through the shared search layer: a collection whose
documents all have vectors is searched hybrid (keyword + vector, reciprocal-rank fused)
when embeddings are configured, by keyword otherwise. The rankings of every collection of
every chosen knowledge base are fused by reciprocal rank, so one snippet list answers a
query; a snippet's ``ref`` is its chunk id (``document#n``), its origin ``kb:<name>``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from keiri_agent.agents.research.models import DocSnippet, SourceKind
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.search.hybrid import DEFAULT_K_RRF, HybridSearcher
from keiri_agent.search.knowledge_base import MANIFEST_FILE, KnowledgeBase
from keiri_agent.search.models import ChunkIndex, Hit, Searcher
from keiri_agent.workspace import Workspace


@dataclass
class _Fused:
    hit: Hit
    origin: str
    score: float
    best_rank: int


class InternalSearch:
    """A :class:`~keiri_agent.agents.research.models.SearchTool` over knowledge bases.

    Args:
        knowledge_bases: One knowledge base or several (named by their folder).
        name: Shown in progress and limitations; default ``社内ナレッジ（a, b）``.
        use_vectors: Search by vector too where a collection has every vector.
    """

    sources: SourceKind = "internal"

    def __init__(
        self,
        knowledge_bases: KnowledgeBase | Sequence[KnowledgeBase],
        *,
        name: str | None = None,
        use_vectors: bool = True,
    ) -> None:
        bases = (
            [knowledge_bases]
            if isinstance(knowledge_bases, KnowledgeBase)
            else list(knowledge_bases)
        )
        if not bases:
            raise ValueError("InternalSearch needs at least one knowledge base")
        self.knowledge_bases = bases
        self.use_vectors = use_vectors
        self.kb_names = [base.root.name for base in bases]
        self.name = name or f"社内ナレッジ（{', '.join(self.kb_names)}）"

    def search(self, query: str, *, top: int = 5) -> list[DocSnippet]:
        """The ``top`` best chunks of every collection for ``query``, fused by rank."""
        if top <= 0 or not query.strip():
            return []
        fetch_k = max(top * 3, 10)
        fused: dict[tuple[str, str, str], _Fused] = {}
        for base, kb_name in zip(self.knowledge_bases, self.kb_names, strict=True):
            origin = f"kb:{kb_name}"
            for collection in base.collections():
                hits = self._searcher(base, collection).search(query, fetch_k)
                for rank, hit in enumerate(hits, start=1):
                    key = (kb_name, collection, hit.chunk.id)
                    contribution = 1.0 / (DEFAULT_K_RRF + rank)
                    entry = fused.get(key)
                    if entry is None:
                        fused[key] = _Fused(hit, origin, contribution, rank)
                    else:
                        entry.score += contribution
                        entry.best_rank = min(entry.best_rank, rank)
        ordered = sorted(fused.values(), key=lambda item: (-item.score, item.best_rank))
        return [_snippet(item.hit, item.origin, item.score) for item in ordered[:top]]

    def retrieval_warnings(self) -> list[str]:
        """A limitation (Japanese) per knowledge base searched by keywords alone although
        vectors are in use (``use_vectors``): some of its documents have no vectors yet."""
        if not self.use_vectors:
            return []
        out = []
        for base, kb_name in zip(self.knowledge_bases, self.kb_names, strict=True):
            missing = sum(
                1
                for collection in base.collections()
                for entry in base.documents(collection).values()
                if not entry.get("vector")
            )
            if missing:
                out.append(
                    f"ナレッジベース「{kb_name}」の一部はキーワード検索だけで検索しました"
                    f"（ベクトルのない資料が {missing} 件あります。keiri-agent helpdesk "
                    f"index --name {kb_name} で登録し直すとベクトルが追加されます）。"
                )
        return out

    def _searcher(self, base: KnowledgeBase, collection: str) -> Searcher:
        keyword = base.keyword(collection)
        # the manifest says whether every document has vectors: only then is the vector
        # index opened (a collection indexed without embeddings never touches Qdrant)
        if not self.use_vectors or base.vector_index_factory is None:
            return keyword
        manifest = base.documents(collection)
        if not manifest or not all(entry.get("vector") for entry in manifest.values()):
            return keyword
        vector = base.vector(collection)
        if vector is None or not base.vectors_complete(collection):
            return keyword
        return HybridSearcher([keyword, vector])

    def __repr__(self) -> str:
        return f"InternalSearch({self.kb_names!r})"


def _snippet(hit: Hit, origin: str, score: float) -> DocSnippet:
    source = hit.chunk.source
    return DocSnippet(
        ref=hit.chunk.id,
        text=hit.chunk.text,
        title=source.document,
        source="internal",
        document=source.document,
        page=source.page,
        heading=source.heading,
        score=score,
        origin=origin,
        row=source.row,
    )


def knowledge_base_names(settings: Settings) -> list[str]:
    """The workspace's knowledge bases with at least one indexed collection (sorted)."""
    root = Workspace.from_settings(settings).state / "knowledge"
    if not root.is_dir():
        return []
    return sorted(
        child.name
        for child in root.iterdir()
        if child.is_dir() and any((folder / MANIFEST_FILE).is_file() for folder in child.iterdir())
    )


def open_internal(
    settings: Settings, kb_names: Sequence[str] | None = None, *, source_name: str | None = None
) -> InternalSearch:
    """The workspace's knowledge bases ``kb_names`` (default: every indexed one) as one
    source (``source_name``: how progress and limitations call it).

    Vectors are used when an embeddings endpoint is configured
    (``Settings.active_embedding_provider``, whatever the chat provider).

    Raises:
        UserInputError: A name that is not an indexed knowledge base (the message lists
            the existing ones), or no knowledge base has been indexed.
    """
    existing = knowledge_base_names(settings)
    names = list(dict.fromkeys(kb_names)) if kb_names else existing
    unknown = [name for name in names if name not in existing]
    if unknown or not names:
        listed = "、".join(existing) if existing else "（まだありません）"
        message = (
            f"ナレッジベース「{'」「'.join(unknown)}」が見つかりません。"
            if unknown
            else "検索できるナレッジベースがありません。"
        )
        raise UserInputError(
            message,
            hint=f"既存のナレッジベース: {listed}。名前を確認するか、先に "
            "keiri-agent helpdesk index で文書を登録してください。",
            code="UNKNOWN_KNOWLEDGE_BASE",
            details={"unknown": unknown, "knowledge_bases": existing},
        )
    use_vectors = settings.active_embedding_provider is not None
    factory = _vector_factory(settings) if use_vectors else None
    bases = [
        KnowledgeBase.for_workspace(
            settings, name, vector_index_factory=factory(name) if factory else None
        )
        for name in names
    ]
    return InternalSearch(bases, name=source_name, use_vectors=use_vectors)


def _vector_factory(
    settings: Settings,
) -> Callable[[str], Callable[[str], ChunkIndex | None]]:
    """Per knowledge base: its collections' vector indexes (Qdrant ``<kb>-<collection>``,
    the names the HelpDesk indexes under)."""

    def for_base(kb_name: str) -> Callable[[str], ChunkIndex | None]:
        def factory(collection: str) -> ChunkIndex | None:
            from keiri_agent.search.vector import VectorIndex  # qdrant-client: ~2 s import

            return VectorIndex.from_settings(settings, f"{kb_name}-{collection}")

        return factory

    return for_base
