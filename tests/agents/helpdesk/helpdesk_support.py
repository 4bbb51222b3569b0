"""What the HelpDesk tests share: a Searcher over fixed chunks (seed §14.3: tools mocked)."""

from __future__ import annotations

from keiri_agent.search.models import Chunk, Hit, Retriever


class FixedSearcher:
    """A chunk matches when it contains a query word; more words matched rank higher."""

    def __init__(self, chunks: list[Chunk], retriever: Retriever = "keyword") -> None:
        self.chunks = chunks
        self._retriever = retriever

    @property
    def retriever(self) -> Retriever:
        return self._retriever

    def search(self, query: str, k: int = 5) -> list[Hit]:
        words = query.split()
        scored = [(sum(w in c.text for w in words), c) for c in self.chunks]
        hits = [Hit(c, float(s), self._retriever) for s, c in scored if s > 0]
        return sorted(hits, key=lambda h: -h.score)[:k]
