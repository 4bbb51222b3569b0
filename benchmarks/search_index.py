"""Search index speed on synthetic Japanese chunks.

Prints ``name: value`` lines:

- ``corpus.chunks`` / ``corpus.avg_chars`` — the generated corpus (deterministic seed):
  10,000 chunks of about 400 characters made by recombining back-office sentences.
- ``keyword.build_s`` — tokenising and indexing every chunk (``KeywordIndex.upsert``).
- ``keyword.save_s`` / ``keyword.open_s`` — writing the index folder and loading it again.
- ``keyword.query_p50_ms`` / ``keyword.query_p95_ms`` — one ``search(query, k=5)``
  (tokenising included) over 200 generated queries, after 20 warm-up queries.
- ``keyword.threads4_qps`` — queries per second with 4 threads searching at once.

Sections are functions taking the corpus and the queries; a vector or hybrid section can be
added to ``SECTIONS`` with the same signature.

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

from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, Source
from keiri_agent.search.tokenize import default_tokenizer

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


def keyword_section(corpus: list[Chunk], queries: list[str]) -> dict[str, float]:
    tokenizer = default_tokenizer()
    tokenizer.terms("ウォームアップ")
    index = KeywordIndex(tokenizer)
    by_document: dict[str, list[Chunk]] = {}
    for chunk in corpus:
        by_document.setdefault(chunk.source.document, []).append(chunk)
    start = time.perf_counter()
    for document, chunks in by_document.items():
        index.upsert(document, chunks)
    build = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        index.save(Path(folder))
        save = time.perf_counter() - start
        start = time.perf_counter()
        KeywordIndex.open(Path(folder), tokenizer)
        load = time.perf_counter() - start
    for query in queries[:20]:
        index.search(query, k=5)
    times = []
    for query in queries:
        start = time.perf_counter()
        index.search(query, k=5)
        times.append((time.perf_counter() - start) * 1000)
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


SECTIONS: dict[str, Callable[[list[Chunk], list[str]], dict[str, float]]] = {
    "keyword": keyword_section,
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
    for name, section in SECTIONS.items():
        for key, value in section(corpus, queries).items():
            print(f"{name}.{key}: {value:.3f}")


if __name__ == "__main__":
    main()
