"""Retrieval quality on the help-desk question set: keyword, vector, hybrid; whole vs split.

Indexes every chunk of the samples in ``src/keiri_agent/samples/helpdesk`` (manual PDF,
release notes DOCX, notifications Markdown and the FAQ CSV) in **one** index, so a question
competes against the manual and the FAQ at once (the agent searches the two collections with
separate tools; one merged index is the harder ranking). Corpus loading and relevance come
from ``search_tokenizers.py``: a hit is relevant when its document equals an expected
``document`` and its text contains the expected ``contains``, both NFKC-normalised. Only
questions with a non-empty ``expected`` count. Prints ``name: value`` lines:

- ``retrieval.<retriever>.hit_at_3`` — share of questions with a relevant chunk in the top 3
  (a multi-part question counts when any of its expected passages is there);
- ``retrieval.<retriever>.mrr`` — mean reciprocal rank of the first relevant chunk in the
  top 10 (0 when none);
- ``retrieval.<retriever>.multipart_hit_at_3.whole_question`` — for the questions with
  ``parts`` > 1, the share of their expected passages (one per part) found in the top 3 of
  the whole question's results;
- ``retrieval.<retriever>.multipart_hit_at_3.split_parts`` — the same passages searched the
  way the offline agent does: the question split by ``offline.split_question``, each part
  searched with ``offline.reformulate(part, 0, "")``; a passage counts when it is in the top 3
  of any part's results (the agent reads every part's results);
- ``retrieval.keyword.multipart_hit_at_3.split_parts_per_tool`` — as ``split_parts`` but each
  part searched as the agent's two tools do: top 3 of the manual documents and top 3 of the
  FAQ, each its own keyword index (so up to 6 passages per part);
- ``retrieval.multipart.split_count_ok`` — share of multi-part questions the offline rules
  split into exactly ``parts`` parts.

``<retriever>`` is ``keyword`` (``KeywordIndex`` with the default tokenizer), ``vector``
(``VectorIndex`` in memory with the configured embeddings) and ``hybrid``
(``HybridSearcher`` of the two, RRF). Vector and hybrid run only when an embeddings provider
is configured (``Settings().is_offline`` is False); otherwise they print ``n/a``: the
offline stand-in (hashed bigrams) says nothing about a real embedding model's quality.
``--misses`` lists the questions and parts whose expected passage is not in the top 3.

    uv run python benchmarks/helpdesk_retrieval.py [--misses]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from keiri_agent.agents.helpdesk.offline import Vocabulary, reformulate, split_question
from keiri_agent.config import Settings
from keiri_agent.search.hybrid import HybridSearcher
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, ChunkIndex, Hit, Searcher
from keiri_agent.search.tokenize import default_tokenizer
from search_tokenizers import SAMPLES, Question, relevant, sample_corpus

TOP = 3
FAQ = "xyz_faq.csv"
DEPTH = 10
NO_EMBEDDINGS = (
    "n/a (no embeddings provider configured; set OPENAI_API_KEY or "
    "KEIRI_AGENT_PROVIDER=openai-compatible)"
)


def multipart_questions() -> dict[str, int]:
    """Question id → ``parts`` for the questions with more than one part."""
    out = {}
    for line in (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            if item.get("expected") and int(item.get("parts", 1)) > 1:
                out[item["id"]] = int(item["parts"])
    return out


def fill(index: ChunkIndex, chunks: list[Chunk]) -> None:
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.source.document, []).append(chunk)
    for document, items in by_document.items():
        index.upsert(document, items)


def first_rank(hits: list[Hit], expected: list[tuple[str, str]]) -> int | None:
    return next((i for i, hit in enumerate(hits, 1) if relevant(hit.chunk, expected)), None)


def in_top(hits: list[Hit], expected: tuple[str, str]) -> bool:
    return first_rank(hits[:TOP], [expected]) is not None


VOCABULARY = Vocabulary.build(system_name=Settings().helpdesk_system_name)
"""The offline rules' words as the agent has them (the sample system is the default "XYZ")."""


def split_hits(searchers: list[Searcher], question: Question) -> list[list[Hit]]:
    """Each offline part's top 3 from each searcher (the agent's first attempt)."""
    return [
        searcher.search(reformulate(part, 0, "", VOCABULARY), k=TOP)
        for part in split_question(question.question, VOCABULARY)
        for searcher in searchers
    ]


def per_tool_split(
    chunks: list[Chunk], questions: list[Question], multipart: dict[str, int]
) -> float:
    """``split_parts`` with a keyword index per tool: manual documents and the FAQ."""
    manual = KeywordIndex(default_tokenizer())
    qa = KeywordIndex(default_tokenizer())
    fill(manual, [c for c in chunks if c.source.document != FAQ])
    fill(qa, [c for c in chunks if c.source.document == FAQ])
    found = passages = 0
    for question in questions:
        if question.id in multipart:
            hits = split_hits([manual, qa], question)
            for expected in question.expected:
                passages += 1
                found += any(in_top(h, expected) for h in hits)
    return found / (passages or 1)


def evaluate(
    name: str,
    searcher: Searcher,
    questions: list[Question],
    multipart: dict[str, int],
    misses: bool,
) -> dict[str, float]:
    hit3 = 0
    rr = 0.0
    whole = split = passages = 0
    for question in questions:
        hits = searcher.search(question.question, k=DEPTH)
        first = first_rank(hits, question.expected)
        hit3 += first is not None and first <= TOP
        rr += 1 / first if first else 0.0
        if misses and (first is None or first > TOP):
            top = hits[0].chunk.id if hits else "-"
            print(f"# {name} miss {question.id} rank={first} top={top}: {question.question}")
        if question.id not in multipart:
            continue
        part_hits = split_hits([searcher], question)
        for expected in question.expected:
            passages += 1
            found_whole = in_top(hits, expected)
            found_split = any(in_top(h, expected) for h in part_hits)
            whole += found_whole
            split += found_split
            if misses and not (found_whole and found_split):
                print(
                    f"# {name} multipart {question.id} whole={found_whole} "
                    f"split={found_split}: {expected[1]}"
                )
    n = len(questions) or 1
    return {
        "hit_at_3": hit3 / n,
        "mrr": rr / n,
        "multipart_hit_at_3.whole_question": whole / (passages or 1),
        "multipart_hit_at_3.split_parts": split / (passages or 1),
    }


def vector_searchers(
    settings: Settings, chunks: list[Chunk], keyword: KeywordIndex
) -> dict[str, Callable[[], Searcher]]:
    from keiri_agent.llm import embeddings
    from keiri_agent.search.vector import VectorIndex

    vector = VectorIndex("helpdesk-retrieval-bench", embeddings(settings))
    fill(vector, chunks)
    return {
        "vector": lambda: vector,
        "hybrid": lambda: HybridSearcher([keyword, vector]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print what is not in the top 3")
    args = parser.parse_args()
    chunks, questions = sample_corpus()
    multipart = multipart_questions()
    print(f"corpus.chunks: {len(chunks)}")
    print(f"corpus.questions: {len(questions)}")
    print(f"corpus.multipart_questions: {len(multipart)}")
    print(
        f"corpus.multipart_passages: {sum(len(q.expected) for q in questions if q.id in multipart)}"
    )
    split_ok = sum(
        len(split_question(q.question, VOCABULARY)) == multipart[q.id]
        for q in questions
        if q.id in multipart
    )
    print(f"retrieval.multipart.split_count_ok: {split_ok / (len(multipart) or 1):.3f}")

    keyword = KeywordIndex(default_tokenizer())
    fill(keyword, chunks)
    results = evaluate("keyword", keyword, questions, multipart, args.misses)
    results["multipart_hit_at_3.split_parts_per_tool"] = per_tool_split(
        chunks, questions, multipart
    )
    for key, value in results.items():
        print(f"retrieval.keyword.{key}: {value:.3f}")

    settings = Settings()
    if settings.is_offline:
        for name in ("vector", "hybrid"):
            for key in ("hit_at_3", "mrr", *(k for k in results if k.startswith("multipart"))):
                if not key.endswith("per_tool"):
                    print(f"retrieval.{name}.{key}: {NO_EMBEDDINGS}")
        return
    print(f"embeddings.model: {settings.active_provider} {settings.embedding_model}")
    for name, make in vector_searchers(settings, chunks, keyword).items():
        for key, value in evaluate(name, make(), questions, multipart, args.misses).items():
            print(f"retrieval.{name}.{key}: {value:.3f}")


if __name__ == "__main__":
    main()
