"""Search index speed on synthetic Japanese chunks.

Prints ``name: value`` lines:

- ``corpus.chunks`` / ``corpus.avg_chars`` — the generated corpus (deterministic seed):
  10,000 chunks of about 400 characters made by recombining back-office sentences.
- ``keyword.build_s`` — tokenising and indexing every chunk (``KeywordIndex.upsert``).
- ``keyword.save_s`` / ``keyword.open_s`` — writing the index folder and loading it again.
- ``keyword.query_p50_ms`` / ``keyword.query_p95_ms`` — one ``search(query, k=5)``
  (tokenising included) over 200 generated queries, after 20 warm-up queries.
- ``keyword.threads4_qps`` — queries per second with 4 threads searching at once.
- ``vector.hash_embeddings.build_s`` — ``VectorIndex.upsert`` of every chunk into Qdrant's
  local (on-disk) mode in a temporary folder, one document at a time; ``.embed_s`` is the
  part of it spent computing the embeddings.
- ``vector.hash_embeddings.query_p50_ms`` / ``.query_p95_ms`` — one ``search(query, k=5)``.
- ``hybrid.hash_embeddings.query_p50_ms`` / ``.query_p95_ms`` — ``HybridSearcher`` (RRF) of
  the keyword index and that vector index, ``k=5`` (each asked for 15).

The vector sections use ``HashEmbeddings(dim=384)`` (hashed character bigrams, no model, no
network) as a stand-in: what they measure is Qdrant's indexing and query cost at a common
embedding size, not retrieval quality and not a real embedding model's latency (a hosted
model adds its round trip to every query and indexing batch).

Sections are functions taking the corpus and the queries (see ``SECTIONS``); built indexes are
kept in ``_BUILT`` so the hybrid section reuses them instead of indexing again.

    uv run python benchmarks/search_index.py [--chunks 10000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from keiri_agent.llm.testing import HashEmbeddings
from keiri_agent.search.hybrid import HybridSearcher
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, Searcher, Source
from keiri_agent.search.tokenize import default_tokenizer
from keiri_agent.search.vector import VectorIndex

SEED = 20240401
SUBJECTS = [
    "経費精算システム",
    "XYZ会計システム",
    "請求書発行",
    "源泉徴収票",
    "固定資産台帳",
    "売掛金の消込",
    "仮払金の精算",
    "出張旅費",
    "交際費の申請",
    "年末調整",
    "支払依頼",
    "月次決算",
    "インボイス登録番号",
    "電子帳簿保存",
    "振込手数料",
]
PREDICATES = [
    "の申請は毎月{n}日までに行ってください。",
    "でエラーコードE{code}が表示された場合は、管理者に連絡してください。",
    "のパスワードは{n}日ごとに変更が必要です。",
    "の承認は部門長が行い、経理部が最終確認します。",
    "に添付する領収書は原本をスキャンしてアップロードします。",
    "の締め日は月末で、翌月{n}営業日目に処理されます。",
    "の金額が{amount}円を超える場合は事前申請が必要です。",
    "について不明な点はヘルプデスク(内線{code})までお問い合わせください。",
    "の画面で検索条件を入力し、対象期間を指定して出力します。",
    "を修正するには、差戻しを受けてから再申請してください。",
]


def make_corpus(chunks: int, seed: int = SEED) -> list[Chunk]:
    rng = random.Random(seed)
    out = []
    for i in range(chunks):
        parts: list[str] = []
        while sum(map(len, parts)) < 380:
            predicate = rng.choice(PREDICATES).format(
                n=rng.randint(1, 30), code=rng.randint(1000, 9999), amount=rng.randint(1, 99) * 1000
            )
            parts.append(rng.choice(SUBJECTS) + predicate)
        document = f"manual_{i // 50:03d}.pdf"
        out.append(
            Chunk(
                id=f"{document}#{i % 50}",
                text="".join(parts),
                source=Source(document=document, page=i % 50 // 5 + 1),
            )
        )
    return out


def make_queries(count: int, seed: int = SEED + 1) -> list[str]:
    rng = random.Random(seed)
    templates = [
        "{s}の申請期限はいつですか",
        "{s}でエラーコードE{code}が出ました",
        "{s}のパスワードを変更したい",
        "{s}の承認者は誰ですか",
        "{s}の金額の上限",
    ]
    return [
        rng.choice(templates).format(s=rng.choice(SUBJECTS), code=rng.randint(1000, 9999))
        for _ in range(count)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


EMBEDDING_DIM = 384
"""A common sentence-embedding size (e.g. multilingual-e5-small, all-MiniLM-L6-v2)."""

_BUILT: dict[str, Any] = {}
"""Indexes built by a section, for later sections: ``keyword``, ``vector``."""


def by_document(corpus: list[Chunk]) -> dict[str, list[Chunk]]:
    out: dict[str, list[Chunk]] = {}
    for chunk in corpus:
        out.setdefault(chunk.source.document, []).append(chunk)
    return out


def query_times_ms(searcher: Searcher, queries: list[str], k: int = 5) -> list[float]:
    """Per-query latency after 20 warm-up queries."""
    for query in queries[:20]:
        searcher.search(query, k=k)
    times = []
    for query in queries:
        start = time.perf_counter()
        searcher.search(query, k=k)
        times.append((time.perf_counter() - start) * 1000)
    return times


def keyword_section(corpus: list[Chunk], queries: list[str]) -> dict[str, float]:
    tokenizer = default_tokenizer()
    tokenizer.terms("ウォームアップ")
    index = KeywordIndex(tokenizer)
    start = time.perf_counter()
    for document, chunks in by_document(corpus).items():
        index.upsert(document, chunks)
    build = time.perf_counter() - start
    _BUILT["keyword"] = index
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        index.save(Path(folder))
        save = time.perf_counter() - start
        start = time.perf_counter()
        KeywordIndex.open(Path(folder), tokenizer)
        load = time.perf_counter() - start
    times = query_times_ms(index, queries)
    with ThreadPoolExecutor(4) as pool:
        start = time.perf_counter()
        list(pool.map(lambda q: index.search(q, k=5), queries * 2))
        qps = len(queries) * 2 / (time.perf_counter() - start)
    return {
        "build_s": build,
        "save_s": save,
        "open_s": load,
        "query_p50_ms": statistics.median(times),
        "query_p95_ms": percentile(times, 0.95),
        "threads4_qps": qps,
    }


class TimedHashEmbeddings(HashEmbeddings):
    """``HashEmbeddings`` that add up the seconds spent embedding documents."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.document_s = 0.0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        start = time.perf_counter()
        try:
            return super().embed_documents(texts)
        finally:
            self.document_s += time.perf_counter() - start


def vector_section(corpus: list[Chunk], queries: list[str]) -> dict[str, float]:
    folder = tempfile.TemporaryDirectory(prefix="keiri-bench-qdrant-")
    embeddings = TimedHashEmbeddings(EMBEDDING_DIM)
    index = VectorIndex("bench", embeddings, path=Path(folder.name))
    start = time.perf_counter()
    for document, chunks in by_document(corpus).items():
        index.upsert(document, chunks)
    build = time.perf_counter() - start
    _BUILT["vector"] = index
    _BUILT["vector_folder"] = folder
    times = query_times_ms(index, queries)
    return {
        "build_s": build,
        "embed_s": embeddings.document_s,
        "query_p50_ms": statistics.median(times),
        "query_p95_ms": percentile(times, 0.95),
    }


def hybrid_section(corpus: list[Chunk], queries: list[str]) -> dict[str, float]:
    if "keyword" not in _BUILT:
        keyword_section(corpus, queries)
    if "vector" not in _BUILT:
        vector_section(corpus, queries)
    hybrid = HybridSearcher([_BUILT["keyword"], _BUILT["vector"]])
    times = query_times_ms(hybrid, queries)
    return {"query_p50_ms": statistics.median(times), "query_p95_ms": percentile(times, 0.95)}


def close_built() -> None:
    vector = _BUILT.pop("vector", None)
    if vector is not None:
        vector.close()
    folder = _BUILT.pop("vector_folder", None)
    if folder is not None:
        folder.cleanup()
    _BUILT.clear()


SECTIONS: dict[str, Callable[[list[Chunk], list[str]], dict[str, float]]] = {
    "keyword": keyword_section,
    "vector.hash_embeddings": vector_section,
    "hybrid.hash_embeddings": hybrid_section,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    corpus = make_corpus(args.chunks)
    queries = make_queries(args.queries)
    print(f"corpus.chunks: {len(corpus)}")
    print(f"corpus.avg_chars: {statistics.mean(len(c.text) for c in corpus):.0f}")
    try:
        for name, section in SECTIONS.items():
            for key, value in section(corpus, queries).items():
                print(f"{name}.{key}: {value:.3f}", flush=True)
    finally:
        close_built()


if __name__ == "__main__":
    main()
