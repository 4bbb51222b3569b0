"""Hybrid search: reciprocal rank fusion (RRF) of several searchers.

Each searcher is asked for ``fetch_k`` hits; a chunk's fused score is

    score(chunk) = Σ_i  weight_i / (k_rrf + rank_i(chunk))

over the searchers ``i`` that found it (``rank`` is 1-based; a searcher that
lists the same chunk twice counts its best rank once). Only ranks matter, so
BM25 scores and cosine similarities never have to be made comparable. Hits are
deduplicated by chunk id (the chunk of the first searcher that found it is
kept) and come back best first with ``retriever="hybrid"``; ties go to the
chunk with the better single rank, then to the earlier searcher.

The searchers run concurrently (a small thread pool) when there are two or
more. A failing searcher's error propagates: a partial result would hide a
broken index.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from keiri_agent.search.models import Chunk, Hit, Retriever, Searcher

DEFAULT_K_RRF = 60
"""The usual RRF constant (Cormack et al. 2009): dampens the head of each ranking."""

MAX_WORKERS = 4


@dataclass
class _Fused:
    chunk: Chunk
    score: float
    best_rank: int
    first_searcher: int


class HybridSearcher:
    """A :class:`~keiri_agent.search.models.Searcher` fusing others by reciprocal rank.

    Args:
        searchers: The searchers to fuse (at least one).
        k_rrf: The RRF constant (>= 0); larger values flatten rank differences.
        fetch_k: Hits asked of each searcher; default ``max(3 * k, 10)``.
        weights: One weight (> 0) per searcher, multiplying its contributions;
            default 1 each.

    Raises:
        ValueError: No searchers, a negative ``k_rrf``, ``fetch_k < 1``, or
            weights that do not match the searchers or are not positive.
    """

    def __init__(
        self,
        searchers: Sequence[Searcher],
        *,
        k_rrf: int = DEFAULT_K_RRF,
        fetch_k: int | None = None,
        weights: Sequence[float] | None = None,
    ) -> None:
        if not searchers:
            raise ValueError("HybridSearcher needs at least one searcher")
        if k_rrf < 0:
            raise ValueError(f"k_rrf must be >= 0, got {k_rrf}")
        if fetch_k is not None and fetch_k < 1:
            raise ValueError(f"fetch_k must be >= 1, got {fetch_k}")
        if weights is None:
            weights = [1.0] * len(searchers)
        if len(weights) != len(searchers):
            raise ValueError(f"{len(weights)} weights given for {len(searchers)} searchers")
        if any(not weight > 0 for weight in weights):
            raise ValueError(f"weights must be positive, got {list(weights)}")
        self.searchers = list(searchers)
        self.k_rrf = k_rrf
        self.fetch_k = fetch_k
        self.weights = [float(weight) for weight in weights]

    @property
    def retriever(self) -> Retriever:
        return "hybrid"

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` best chunks by fused rank, best first (score: the RRF sum)."""
        if k <= 0:
            return []
        fetch_k = self.fetch_k if self.fetch_k is not None else max(k * 3, 10)
        rankings = self._rankings(query, fetch_k)
        fused: dict[str, _Fused] = {}
        for index, (hits, weight) in enumerate(zip(rankings, self.weights, strict=True)):
            seen: set[str] = set()
            for rank, hit in enumerate(hits, start=1):
                chunk_id = hit.chunk.id
                if chunk_id in seen:
                    continue
                seen.add(chunk_id)
                contribution = weight / (self.k_rrf + rank)
                entry = fused.get(chunk_id)
                if entry is None:
                    fused[chunk_id] = _Fused(hit.chunk, contribution, rank, index)
                else:
                    entry.score += contribution
                    entry.best_rank = min(entry.best_rank, rank)
        ordered = sorted(
            fused.values(), key=lambda item: (-item.score, item.best_rank, item.first_searcher)
        )
        return [Hit(item.chunk, item.score, "hybrid") for item in ordered[:k]]

    def _rankings(self, query: str, fetch_k: int) -> list[list[Hit]]:
        """Every searcher's hits, in searcher order; the first error (in that order) is raised.

        The first searcher runs in the calling thread, the others at the same time on a
        pool shared by every HybridSearcher (a pool per query cost ~2 ms).
        """
        first, *others = self.searchers
        futures = [_pool().submit(searcher.search, query, fetch_k) for searcher in others]
        try:
            head = first.search(query, fetch_k)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        return [head, *(future.result() for future in futures)]

    def __repr__(self) -> str:
        kinds = ", ".join(searcher.retriever for searcher in self.searchers)
        return f"HybridSearcher([{kinds}], k_rrf={self.k_rrf})"


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The shared search pool (created on first use)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="hybrid-search")
        return _POOL
