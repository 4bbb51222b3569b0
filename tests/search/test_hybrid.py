"""Reciprocal rank fusion over hand-made rankings, and over a real vector index."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from keiri_agent.errors import LLMError
from keiri_agent.llm.testing import HashEmbeddings
from keiri_agent.search import Chunk, Hit, Retriever, Searcher, Source
from keiri_agent.search.hybrid import HybridSearcher
from keiri_agent.search.vector import VectorIndex


def chunk(name: str) -> Chunk:
    return Chunk(id=name, text=f"text of {name}", source=Source(f"{name}.md"))


class Ranked:
    """A searcher returning a fixed ranking (truncated to k) and recording its calls."""

    def __init__(
        self,
        ids: list[str],
        retriever: Retriever = "keyword",
        *,
        error: Exception | None = None,
        barrier: threading.Barrier | None = None,
    ) -> None:
        self.ids = ids
        self._retriever = retriever
        self.error = error
        self.barrier = barrier
        self.calls: list[tuple[str, int]] = []
        self.threads: list[str] = []

    @property
    def retriever(self) -> Retriever:
        return self._retriever

    def search(self, query: str, k: int = 5) -> list[Hit]:
        self.calls.append((query, k))
        self.threads.append(threading.current_thread().name)
        if self.barrier is not None:
            self.barrier.wait(timeout=10)
        if self.error is not None:
            raise self.error
        return [
            Hit(chunk(name), 100.0 - rank, self._retriever) for rank, name in enumerate(self.ids)
        ][:k]


def rrf(*ranks: int, k_rrf: int = 60) -> float:
    return sum(1 / (k_rrf + rank) for rank in ranks)


def assert_ranking(hits: list[Hit], expected: list[tuple[str, float]]) -> None:
    assert [hit.chunk.id for hit in hits] == [name for name, _ in expected]
    assert [hit.score for hit in hits] == pytest.approx([score for _, score in expected])


def test_rrf_order_and_scores() -> None:
    keyword = Ranked(["a", "b", "c", "d"])
    vector = Ranked(["c", "a", "e"], "vector")
    hybrid = HybridSearcher([keyword, vector])
    assert isinstance(hybrid, Searcher)
    assert hybrid.retriever == "hybrid"
    hits = hybrid.search("q", k=10)
    # a: 1+2, c: 3+1, b: 2, e: 3, d: 4
    assert [hit.chunk.id for hit in hits] == ["a", "c", "b", "e", "d"]
    expected = [rrf(1, 2), rrf(3, 1), rrf(2), rrf(3), rrf(4)]
    assert [hit.score for hit in hits] == pytest.approx(expected)
    assert all(hit.retriever == "hybrid" for hit in hits)
    assert hits[0].chunk == chunk("a")


def test_k_rrf_changes_the_order() -> None:
    # x and z are first in one list each, y second in both. k_rrf=0: all score 1
    # (1/1 vs 1/2 + 1/2) and ties go to the better single rank, then the earlier
    # searcher. k_rrf=1: y = 1/3 + 1/3 beats x = z = 1/2.
    first = Ranked(["x", "y"])
    second = Ranked(["z", "y"])
    tied = HybridSearcher([first, second], k_rrf=0).search("q", k=3)
    assert_ranking(tied, [("x", 1.0), ("z", 1.0), ("y", 1.0)])
    ranked = HybridSearcher([first, second], k_rrf=1).search("q", k=3)
    assert_ranking(ranked, [("y", 2 / 3), ("x", 0.5), ("z", 0.5)])


def test_dedupes_within_and_across_searchers() -> None:
    repeating = Ranked(["a", "a", "b"])
    other = Ranked(["b"])
    hits = HybridSearcher([repeating, other]).search("q", k=5)
    # a counts rank 1 once (its repeat at rank 2 is ignored); b: rank 3 + rank 1
    assert_ranking(hits, [("b", rrf(3, 1)), ("a", rrf(1))])
    assert len({hit.chunk.id for hit in hits}) == len(hits)


def test_weights() -> None:
    keyword = Ranked(["a", "b"])
    vector = Ranked(["b", "a"], "vector")
    even = HybridSearcher([keyword, vector]).search("q", k=2)
    assert_ranking(even, [("a", rrf(1, 2)), ("b", rrf(2, 1))])
    assert [hit.chunk.id for hit in even] == ["a", "b"]  # tie: earlier searcher's first
    weighted = HybridSearcher([keyword, vector], weights=[1.0, 2.0]).search("q", k=2)
    assert_ranking(weighted, [("b", 1 / 62 + 2 / 61), ("a", 1 / 61 + 2 / 62)])


def test_k_limits_and_fetch_k() -> None:
    keyword = Ranked([f"k{n}" for n in range(40)])
    vector = Ranked([f"v{n}" for n in range(40)], "vector")
    hits = HybridSearcher([keyword, vector]).search("query", k=4)
    assert len(hits) == 4
    assert keyword.calls == [("query", 12)] and vector.calls == [("query", 12)]
    HybridSearcher([keyword, vector]).search("query", k=2)
    assert keyword.calls[-1] == ("query", 10)  # max(3k, 10)
    HybridSearcher([keyword, vector], fetch_k=25).search("query", k=2)
    assert keyword.calls[-1] == ("query", 25)
    assert HybridSearcher([keyword]).search("query", k=0) == []
    single = HybridSearcher([keyword]).search("query", k=3)
    assert_ranking(single, [("k0", rrf(1)), ("k1", rrf(2)), ("k2", rrf(3))])


def test_runs_searchers_concurrently() -> None:
    barrier = threading.Barrier(2)  # each search waits for the other: sequential would hang
    keyword = Ranked(["a"], barrier=barrier)
    vector = Ranked(["b"], "vector", barrier=barrier)
    hits = HybridSearcher([keyword, vector]).search("q", k=2)
    assert {hit.chunk.id for hit in hits} == {"a", "b"}
    assert keyword.threads[0] != vector.threads[0]


def test_a_failing_searcher_propagates() -> None:
    failure = LLMError("the model service failed", hint="check the base URL")
    hybrid = HybridSearcher([Ranked(["a"]), Ranked([], "vector", error=failure)])
    with pytest.raises(LLMError, match="model service failed"):
        hybrid.search("q")
    with pytest.raises(ZeroDivisionError):
        HybridSearcher([Ranked([], error=ZeroDivisionError())]).search("q")


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="at least one"):
        HybridSearcher([])
    with pytest.raises(ValueError, match="weights"):
        HybridSearcher([Ranked([])], weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="positive"):
        HybridSearcher([Ranked([])], weights=[0.0])
    with pytest.raises(ValueError, match="k_rrf"):
        HybridSearcher([Ranked([])], k_rrf=-1)
    with pytest.raises(ValueError, match="fetch_k"):
        HybridSearcher([Ranked([])], fetch_k=0)


def test_fuses_a_real_vector_index(tmp_path: Path) -> None:
    texts = ["経費精算の締め日", "交通費の上限", "パスワードの再設定"]
    with VectorIndex("manuals", HashEmbeddings(), path=tmp_path / "qdrant") as index:
        index.upsert(
            "rules.md",
            [Chunk(f"rules.md#{n}", text, Source("rules.md")) for n, text in enumerate(texts)],
        )
        keyword = Ranked(["rules.md#1"])  # pretend BM25 found only this chunk
        hits = HybridSearcher([index, keyword]).search("交通費の上限", k=3)
    assert hits[0].chunk.id == "rules.md#1"
    assert hits[0].text == "交通費の上限"
    assert hits[0].score == pytest.approx(rrf(1, 1))
    assert {hit.chunk.id for hit in hits} == {"rules.md#0", "rules.md#1", "rules.md#2"}
