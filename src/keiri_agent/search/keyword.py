"""``KeywordIndex``: an Okapi BM25 index over chunks, with a Japanese tokenizer.

Scoring (per query term ``t`` present in chunk ``d``)::

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg_len))
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))        (always > 0)

A chunk is indexed with the terms of its text and of its heading path (so a chunk deep in
"2.1 パスワード" is found by "パスワード" even when its own text does not repeat the word).
Repeated query terms count once per occurrence. Only hits with a score > 0 are returned.

Postings are ``term → {slot: tf}``; at query time each term's BM25 weights are cached as
numpy arrays (slots, weights) until the next change, so a query is a few vector additions.
Reads and writes are guarded by one lock; tokenising the query happens outside it.

Persistence: ``KeywordIndex.open(folder)`` loads ``folder/index.json`` (chunks with their
term counts, the tokenizer name and the BM25 parameters; validated as
``search.stored.KeywordIndexFile``: a damaged file is ``KNOWLEDGE_BASE_CORRUPT``);
``save()`` writes it atomically and owner-only (``private.write_private``: a 0600
temporary file + ``os.replace``). Opening with a different tokenizer is an
``IndexMismatchError`` unless ``rebuild=True`` (then the stored chunk texts are
re-analysed).
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from keiri_agent.errors import UserInputError
from keiri_agent.private import write_private
from keiri_agent.search.models import BatchProgress, Chunk, Hit, Retriever, Source
from keiri_agent.search.stored import KeywordIndexFile, StoredChunk, read_stored
from keiri_agent.search.tokenize import Tokenizer, default_tokenizer

FORMAT_VERSION = 1
INDEX_FILE = "index.json"
DEFAULT_K1 = 1.5
DEFAULT_B = 0.3
"""b = 0.3 (less length normalisation than the usual 0.75) and k1 = 1.5 measured best on
the sample help-desk questions (``benchmarks/search_tokenizers.py``): hit@3 0.80 vs 0.70."""


class IndexMismatchError(UserInputError):
    """A stored index was built differently (tokenizer, format) from what is asked for."""

    code = "INDEX_MISMATCH"


def _chunk_from_stored(stored: StoredChunk) -> Chunk:
    source = stored.source
    return Chunk(
        id=stored.id,
        text=stored.text,
        source=Source(
            document=source.document, page=source.page, heading=source.heading, row=source.row
        ),
        metadata=dict(stored.metadata or {}),
    )


class KeywordIndex:
    """BM25 over chunks; implements ``ChunkIndex`` (``retriever == "keyword"``)."""

    def __init__(
        self,
        tokenizer: Tokenizer | None = None,
        *,
        path: Path | None = None,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        index_headings: bool = True,
    ) -> None:
        self.tokenizer = tokenizer if tokenizer is not None else default_tokenizer()
        self.path = path
        self.k1 = k1
        self.b = b
        self.index_headings = index_headings
        self._lock = threading.RLock()
        self._chunks: list[Chunk | None] = []
        self._terms: list[dict[str, int]] = []
        self._lengths: list[int] = []
        self._by_document: dict[str, list[int]] = {}
        self._postings: dict[str, dict[int, int]] = {}
        self._live = 0
        self._total_length = 0
        self._weights: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # --- ChunkIndex ---------------------------------------------------------------------

    @property
    def retriever(self) -> Retriever:
        return "keyword"

    def analyze(self, chunk: Chunk) -> dict[str, int]:
        """Term counts of a chunk (text, plus its heading path when ``index_headings``)."""
        terms = self.tokenizer.terms(chunk.text)
        if self.index_headings and chunk.source.heading:
            terms += self.tokenizer.terms(chunk.source.heading)
        return dict(Counter(terms))

    def upsert(
        self, document: str, chunks: Sequence[Chunk], *, on_batch: BatchProgress | None = None
    ) -> None:
        """Replace every chunk of ``document`` with ``chunks`` (an empty list deletes it);
        all in one batch (``on_batch`` is called once, at the end)."""
        for chunk in chunks:
            if chunk.source.document != document:
                raise ValueError(
                    f"chunk {chunk.id!r} belongs to {chunk.source.document!r}, not {document!r}"
                )
        analysed = [(chunk, self.analyze(chunk)) for chunk in chunks]  # outside the lock
        with self._lock:
            self._delete(document)
            for chunk, terms in analysed:
                self._add(chunk, terms)
            self._changed()
        if on_batch is not None:
            on_batch(len(chunks), len(chunks))

    def delete_documents(self, documents: Sequence[str]) -> None:
        with self._lock:
            for document in documents:
                self._delete(document)
            self._changed()

    def documents(self) -> set[str]:
        with self._lock:
            return set(self._by_document)

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """At most ``k`` hits, best first; only chunks sharing a term with the query."""
        if k <= 0 or not query.strip():
            return []
        query_terms = Counter(self.tokenizer.terms(query))
        if not query_terms:
            return []
        with self._lock:
            if not self._live:
                return []
            scores = np.zeros(len(self._chunks), dtype=np.float64)
            for term, count in query_terms.items():
                entry = self._term_weights(term)
                if entry is None:
                    continue
                slots, weights = entry
                if count == 1:
                    scores[slots] += weights
                else:
                    scores[slots] += weights * count
            candidates = np.flatnonzero(scores > 0)
            if candidates.size > k:
                top = np.argpartition(-scores[candidates], k - 1)[:k]
                candidates = candidates[top]
            order = sorted(candidates.tolist(), key=lambda slot: (-scores[slot], slot))
            hits = []
            for slot in order:
                chunk = self._chunks[slot]
                assert chunk is not None
                hits.append(Hit(chunk=chunk, score=float(scores[slot]), retriever="keyword"))
            return hits

    # --- more ---------------------------------------------------------------------------

    def chunks(self, document: str | None = None) -> list[Chunk]:
        """Indexed chunks (of one document, or all) in insertion order."""
        with self._lock:
            if document is not None:
                slots: Iterable[int] = self._by_document.get(document, [])
            else:
                slots = (slot for slots in self._by_document.values() for slot in slots)
            return [chunk for slot in slots if (chunk := self._chunks[slot]) is not None]

    def __len__(self) -> int:
        return self._live

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "documents": len(self._by_document),
                "chunks": self._live,
                "terms": len(self._postings),
                "tokenizer": self.tokenizer.name,
                "avg_terms_per_chunk": (self._total_length / self._live) if self._live else 0.0,
            }

    # --- internals ----------------------------------------------------------------------

    def _add(self, chunk: Chunk, terms: dict[str, int]) -> None:
        slot = len(self._chunks)
        length = sum(terms.values())
        self._chunks.append(chunk)
        self._terms.append(terms)
        self._lengths.append(length)
        self._by_document.setdefault(chunk.source.document, []).append(slot)
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[slot] = tf
        self._live += 1
        self._total_length += length

    def _delete(self, document: str) -> None:
        for slot in self._by_document.pop(document, []):
            for term in self._terms[slot]:
                posting = self._postings.get(term)
                if posting is not None:
                    posting.pop(slot, None)
                    if not posting:
                        del self._postings[term]
            self._live -= 1
            self._total_length -= self._lengths[slot]
            self._chunks[slot] = None
            self._terms[slot] = {}
            self._lengths[slot] = 0

    def _changed(self) -> None:
        self._weights.clear()
        if len(self._chunks) > 1024 and self._live < len(self._chunks) // 2:
            self._compact()

    def _compact(self) -> None:
        kept = [
            (chunk, terms)
            for chunk, terms in zip(self._chunks, self._terms, strict=True)
            if chunk is not None
        ]
        self._chunks, self._terms, self._lengths = [], [], []
        self._by_document, self._postings = {}, {}
        self._live = self._total_length = 0
        for chunk, terms in kept:
            self._add(chunk, terms)

    def _term_weights(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._weights.get(term)
        if cached is not None:
            return cached
        posting = self._postings.get(term)
        if not posting:
            return None
        n = self._live
        df = len(posting)
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        average = self._total_length / n if n else 1.0
        slots = np.fromiter(posting.keys(), dtype=np.int64, count=df)
        tf = np.fromiter(posting.values(), dtype=np.float64, count=df)
        lengths = np.asarray([self._lengths[slot] for slot in posting], dtype=np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * lengths / (average or 1.0))
        weights = idf * tf * (self.k1 + 1.0) / (tf + norm)
        self._weights[term] = (slots, weights)
        return slots, weights

    # --- persistence --------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path,
        tokenizer: Tokenizer | None = None,
        *,
        rebuild: bool = False,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        reset_folder: Path | None = None,
    ) -> KeywordIndex:
        """The index saved in folder ``path`` (an empty one bound to it if there is none).

        Raises ``IndexMismatchError`` when it was built with another tokenizer (unless
        ``rebuild``: then its chunks are re-analysed with ``tokenizer``) or another
        format, ``KnowledgeBaseCorruptError`` when it is damaged (its hint names
        ``reset_folder``, default ``path``: the folder to delete before indexing again).
        """
        index = cls(tokenizer, path=path, k1=k1, b=b)
        file = path / INDEX_FILE
        if not file.exists():
            return index
        data = read_stored(KeywordIndexFile, file, reset_folder or path)
        version = data.format
        stored_tokenizer = data.tokenizer
        if version != FORMAT_VERSION:
            raise IndexMismatchError(
                f"キーワード索引 {file} の形式（{version}）はこのバージョンでは読めません"
                f"（読める形式: {FORMAT_VERSION}）",
                hint="索引のフォルダを削除してから、keiri-agent helpdesk index で"
                "文書をもう一度登録してください。",
                details={"path": str(file), "format": version},
            )
        retokenize = stored_tokenizer != index.tokenizer.name
        if retokenize and not rebuild:
            raise IndexMismatchError(
                f"キーワード索引 {path} は単語の区切り方 '{stored_tokenizer}' で作られており、"
                f"いまの設定 '{index.tokenizer.name}' と違います",
                hint="作ったときと同じ区切り方の設定に戻すか、"
                "keiri-agent helpdesk index で文書をもう一度登録してください。",
                details={
                    "path": str(path),
                    "stored": stored_tokenizer,
                    "requested": index.tokenizer.name,
                },
            )
        index.index_headings = data.index_headings
        with index._lock:
            for entry in data.chunks:
                chunk = _chunk_from_stored(entry)
                terms = index.analyze(chunk) if retokenize else entry.terms
                index._add(chunk, terms)
            index._changed()
        return index

    def save(self, path: Path | None = None) -> Path:
        """Write the index to ``path`` (default: where it was opened); returns the folder."""
        folder = path if path is not None else self.path
        if folder is None:
            raise ValueError("this keyword index has no folder: pass save(path)")
        with self._lock:
            entries = [
                {**chunk.to_dict(), "terms": self._terms[slot]}
                for slots in self._by_document.values()
                for slot in slots
                if (chunk := self._chunks[slot]) is not None
            ]
            payload = {
                "format": FORMAT_VERSION,
                "tokenizer": self.tokenizer.name,
                "k1": self.k1,
                "b": self.b,
                "index_headings": self.index_headings,
                "chunks": entries,
            }
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        write_private(folder / INDEX_FILE, text, fsync=True)
        if path is not None and self.path is None:
            self.path = path
        return folder


__all__ = ["DEFAULT_B", "DEFAULT_K1", "IndexMismatchError", "KeywordIndex"]
