"""Which tokenizer finds the right chunk: BM25 over the sample help-desk knowledge base.

Indexes the samples in ``src/keiri_agent/samples/helpdesk`` (manual PDF, release notes
DOCX, notifications Markdown, FAQ CSV) with ``chunk_document`` / ``chunk_faq`` and a
``KeywordIndex`` per tokenizer, asks every question of ``questions.jsonl`` and prints:

- ``tokenizer.<name>.hit_at_3`` — share of questions with a relevant chunk in the top 3
  (a hit is relevant when its document equals an expected ``document`` and its text contains
  the expected ``contains``, both NFKC-normalised);
- ``tokenizer.<name>.hit_at_1`` / ``.mrr`` — the same at rank 1 and the mean reciprocal rank
  of the first relevant hit within the top 10;
- ``tokenizer.<name>.index_s`` — tokenising and indexing every chunk;
- ``tokenizer.<name>.query_ms`` — mean time of one search (tokenising included).

Tokenizers: Sudachi A, C and CA (``keiri_agent.search.tokenize``), MeCab through fugashi with
unidic-lite (a dev dependency, lemma lowercased, same part-of-speech filter), and character
bigrams. ``--inline`` runs on a tiny built-in corpus instead (for a smoke test).

    uv run python benchmarks/search_tokenizers.py [--inline] [--misses]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.search.chunking import chunk_document, chunk_faq
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, Source
from keiri_agent.search.tokenize import (
    CharNgramTokenizer,
    SudachiTokenizer,
    Tokenizer,
    normalize_for_search,
)

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "keiri_agent" / "samples" / "helpdesk"
_DROP = {"助詞", "助動詞", "補助記号", "記号", "空白", "接続詞", "感動詞", "代名詞", "接頭辞"}


class FugashiTokenizer:
    """MeCab (fugashi + unidic-lite) lemmas, lowercased, with the Sudachi POS filter."""

    name = "fugashi-unidic-lite"

    def __init__(self) -> None:
        import threading

        import fugashi

        self._factory = fugashi.Tagger
        self._local = threading.local()

    def terms(self, text: str) -> list[str]:
        tagger = getattr(self._local, "tagger", None)
        if tagger is None:
            tagger = self._local.tagger = self._factory()
        out = []
        for word in tagger(normalize_for_search(text)):
            feature = word.feature
            if feature.pos1 in _DROP or (
                feature.pos1 in ("動詞", "形容詞") and feature.pos2 == "非自立可能"
            ):
                continue
            lemma = feature.lemma or word.surface
            out.append(lemma.split("-")[0].lower())
        return out


@dataclass
class Question:
    id: str
    question: str
    expected: list[tuple[str, str]]


def sample_corpus() -> tuple[list[Chunk], list[Question]]:
    chunks: list[Chunk] = []
    for path in sorted((SAMPLES / "docs").iterdir()):
        chunks += chunk_document(path.name, path.read_bytes())
    faq = SAMPLES / "xyz_faq.csv"
    chunks += chunk_faq(faq.name, faq.read_bytes())
    questions = []
    for line in (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            questions.append(
                Question(
                    item["id"],
                    item["question"],
                    [(e["document"], e["contains"]) for e in item.get("expected", [])],
                )
            )
    return chunks, [q for q in questions if q.expected]


def inline_corpus() -> tuple[list[Chunk], list[Question]]:
    texts = {
        "manual.md": [
            "パスワードの有効期限は90日間です。期限の7日前から通知されます。",
            "パスワードを5回続けて間違えるとアカウントがロックされます。",
            "経費精算は、経費が発生した日の翌月10日までに申請してください。",
        ],
        "faq.csv": ["Q: エラーE1023が出ます\nA: 添付ファイルのサイズを確認してください。"],
    }
    chunks = [
        Chunk(f"{doc}#{i}", text, Source(doc))
        for doc, items in texts.items()
        for i, text in enumerate(items)
    ]
    questions = [
        Question("i1", "パスワードは何日で期限切れ？", [("manual.md", "有効期限は90日間")]),
        Question("i2", "ログインを何回失敗するとロック？", [("manual.md", "5回続けて")]),
        Question("i3", "経費精算の締め切り", [("manual.md", "翌月10日")]),
        Question("i4", "Ｅ１０２３ エラー", [("faq.csv", "E1023")]),
    ]
    return chunks, questions


def relevant(chunk: Chunk, expected: list[tuple[str, str]]) -> bool:
    text = normalize_for_search(chunk.text)
    return any(
        chunk.source.document == document and normalize_for_search(contains) in text
        for document, contains in expected
    )


def evaluate(
    tokenizer: Tokenizer, chunks: list[Chunk], questions: list[Question], misses: bool
) -> dict[str, float]:
    tokenizer.terms("ウォームアップ")
    index = KeywordIndex(tokenizer)
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.source.document, []).append(chunk)
    start = time.perf_counter()
    for document, items in by_document.items():
        index.upsert(document, items)
    index_s = time.perf_counter() - start
    hit1 = hit3 = 0
    rr = 0.0
    elapsed = 0.0
    for question in questions:
        start = time.perf_counter()
        hits = index.search(question.question, k=10)
        elapsed += time.perf_counter() - start
        ranks = [i for i, hit in enumerate(hits, 1) if relevant(hit.chunk, question.expected)]
        first = ranks[0] if ranks else None
        hit1 += first == 1
        hit3 += first is not None and first <= 3
        rr += 1 / first if first else 0.0
        if misses and (first is None or first > 3):
            top = hits[0].chunk.id if hits else "-"
            print(
                f"# {tokenizer.name} miss {question.id} rank={first} top={top}: {question.question}"
            )
    n = len(questions) or 1
    return {
        "hit_at_1": hit1 / n,
        "hit_at_3": hit3 / n,
        "mrr": rr / n,
        "index_s": index_s,
        "query_ms": elapsed / n * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inline", action="store_true", help="use the tiny built-in corpus")
    parser.add_argument("--misses", action="store_true", help="print the questions missed")
    args = parser.parse_args()
    use_samples = not args.inline and (SAMPLES / "questions.jsonl").exists()
    chunks, questions = sample_corpus() if use_samples else inline_corpus()
    print(f"corpus: {'samples' if use_samples else 'inline'}")
    print(f"corpus.chunks: {len(chunks)}")
    print(f"corpus.questions: {len(questions)}")
    tokenizers: list[Tokenizer] = [
        SudachiTokenizer("A"),
        SudachiTokenizer("C"),
        SudachiTokenizer("CA"),
        CharNgramTokenizer(2),
    ]
    try:
        tokenizers.insert(3, FugashiTokenizer())
    except ImportError:
        print("# fugashi/unidic-lite not installed: skipped")
    for tokenizer in tokenizers:
        for key, value in evaluate(tokenizer, chunks, questions, args.misses).items():
            print(f"tokenizer.{tokenizer.name}.{key}: {value:.3f}")


if __name__ == "__main__":
    main()
