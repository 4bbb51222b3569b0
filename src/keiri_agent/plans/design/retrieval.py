"""Top-K block retrieval over the catalog (seed 003 §3): which blocks the model sees.

Each block (newest version of each id) is one text: its id (also split at dots), its
description, tags, category, and the names and descriptions of its inputs and outputs.

* ``bm25``: Okapi BM25 over those texts with the search layer's Japanese tokenizer
  (``search.KeywordIndex`` and ``search.tokenize.default_tokenizer``; Sudachi). The raw
  scores are divided by the best one, so the best block scores 1 and a block sharing no
  term with the query scores 0.
* ``embedding``: one vector per block, embedded once per catalog version (a hash of each
  spec's ``id@version`` and of the text above — what is embedded — plus the model name)
  and cached in memory and, with ``cache_dir``, in ``block_embeddings_<hash>.json``
  there; cosine similarity with the query's vector, min-max normalised over the catalog
  (the worst block 0, the best 1).
* ``hybrid``: ``(bm25_weight * bm25 + embedding_weight * embedding) / (sum of weights)``
  on the normalised scores (defaults 0.5 / 0.5), so the score stays in [0, 1].

Selection: best score first (ties by id), at most ``per_category`` blocks of one
category and ``total`` in all; blocks scoring 0 are left out. Pinned blocks always come
first, flagged ``pinned=True``, whatever their score (they count towards the caps, but
are never dropped by them). A block's category is its spec's ``category`` or, when it
has none, the prefix of its id (``table.filter`` → ``table``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from keiri_agent.errors import KeiriAgentError, LLMError, UserInputError
from keiri_agent.llm.embedding_batches import DEFAULT_BATCH_SIZE, BatchedEmbedder
from keiri_agent.plans.catalog import BlockCatalog, BlockSpec
from keiri_agent.plans.design.models import BlockCandidate, RetrievalMethod
from keiri_agent.private import write_private
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, Source
from keiri_agent.search.tokenize import Tokenizer, default_tokenizer

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

DEFAULT_BM25_WEIGHT = 0.5
DEFAULT_EMBEDDING_WEIGHT = 0.5
CACHE_FORMAT = 1
_MEMORY: dict[str, dict[str, list[float]]] = {}
"""Block vectors by cache key (catalog version + model), shared by every retriever."""
_MEMORY_LOCK = threading.Lock()


def block_category(spec: BlockSpec) -> str:
    """The spec's ``category``, else the prefix of its id."""
    return spec.category or spec.id.split(".", 1)[0]


def _port_text(ports: Any) -> list[str]:
    parts: list[str] = []
    for name, port in ports.items():
        parts.append(str(name))
        description = port.get("description") if isinstance(port, dict) else None
        if description:
            parts.append(str(description))
    return parts


def block_text(spec: BlockSpec) -> str:
    """What retrieval knows of a block: id, description, tags, category, port names."""
    parts = [
        spec.id,
        spec.id.replace(".", " ").replace("_", " "),
        spec.description.strip(),
        " ".join(spec.tags),
        block_category(spec),
        *_port_text(spec.inputs),
        *_port_text(spec.outputs),
    ]
    return "\n".join(part for part in parts if part)


def _model_name(embeddings: Embeddings) -> str:
    for attribute in ("model", "deployment", "model_name"):
        value = getattr(embeddings, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(embeddings).__name__


FILE_SOURCE = "ui.interactive_input"
"""The block that brings a user's files into a Plan (its file fields)."""


class BlockRetriever:
    """Finds the catalog's blocks that fit an instruction (see the module docstring)."""

    def __init__(
        self,
        catalog: BlockCatalog,
        *,
        embeddings: Embeddings | None = None,
        cache_dir: Path | None = None,
        tokenizer: Tokenizer | None = None,
        bm25_weight: float = DEFAULT_BM25_WEIGHT,
        embedding_weight: float = DEFAULT_EMBEDDING_WEIGHT,
        embedding_batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if bm25_weight < 0 or embedding_weight < 0 or bm25_weight + embedding_weight <= 0:
            raise ValueError("the hybrid weights must be >= 0 and not both 0")
        self.catalog = catalog
        self.embeddings = embeddings
        self._embedder = (
            BatchedEmbedder(embeddings, embedding_batch_size) if embeddings is not None else None
        )
        self.cache_dir = cache_dir
        self.bm25_weight = bm25_weight
        self.embedding_weight = embedding_weight
        self.specs: list[BlockSpec] = [catalog.resolve(block_id) for block_id in catalog.ids()]
        self._texts = {spec.id: block_text(spec) for spec in self.specs}
        self._index = KeywordIndex(
            tokenizer if tokenizer is not None else default_tokenizer(), index_headings=False
        )
        for spec in self.specs:
            chunk = Chunk(id=spec.id, text=self._texts[spec.id], source=Source(document=spec.id))
            self._index.upsert(spec.id, [chunk])
        self._lock = threading.Lock()

    # --- versions and vectors -----------------------------------------------------------

    @property
    def catalog_version(self) -> str:
        """A hash of the specs' retrieval content (changes when any spec's text does)."""
        digest = hashlib.sha256()
        for spec in self.specs:
            digest.update(f"{spec.reference}\n{self._texts[spec.id]}\n\0".encode())
        return digest.hexdigest()

    def _cache_key(self) -> str:
        assert self.embeddings is not None
        raw = f"{self.catalog_version}\n{_model_name(self.embeddings)}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def _cache_file(self, key: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"block_embeddings_{key[:24]}.json"

    def block_vectors(self) -> dict[str, list[float]]:
        """One vector per block: from memory, the cache file, or the embeddings model."""
        embedder = self._embedder
        if embedder is None:
            raise ValueError("this retriever has no embeddings model")
        key = self._cache_key()
        with _MEMORY_LOCK:
            cached = _MEMORY.get(key)
        if cached is not None:
            return cached
        with self._lock:
            vectors = self._read_cache(key)
            if vectors is None:
                ids = [spec.id for spec in self.specs]
                texts = [self._texts[block_id] for block_id in ids]
                embedded = _embed(lambda: embedder.embed(texts))
                vectors = {
                    block_id: list(map(float, vector))
                    for block_id, vector in zip(ids, embedded, strict=True)
                }
                self._write_cache(key, vectors)
            with _MEMORY_LOCK:
                _MEMORY[key] = vectors
            return vectors

    def _read_cache(self, key: str) -> dict[str, list[float]] | None:
        path = self._cache_file(key)
        if path is None or not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            vectors = data["vectors"]
            if data.get("format") != CACHE_FORMAT or data.get("key") != key:
                return None
            if sorted(vectors) != sorted(spec.id for spec in self.specs):
                return None
            return {block_id: [float(x) for x in vector] for block_id, vector in vectors.items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # damaged or foreign: embed again and overwrite

    def _write_cache(self, key: str, vectors: dict[str, list[float]]) -> None:
        path = self._cache_file(key)
        if path is None:
            return
        payload = {
            "format": CACHE_FORMAT,
            "key": key,
            "model": _model_name(self.embeddings) if self.embeddings else None,
            "catalog_version": self.catalog_version,
            "vectors": vectors,
        }
        try:
            write_private(path, json.dumps(payload))
        except OSError:
            return  # the cache is an optimisation: a read-only folder only costs a re-embed

    # --- scores -------------------------------------------------------------------------

    def bm25_scores(self, query: str) -> dict[str, float]:
        """Every block's BM25 score divided by the best one (all 0 when nothing matches)."""
        hits = self._index.search(query, k=len(self.specs))
        raw = {hit.chunk.id: hit.score for hit in hits}
        best = max(raw.values(), default=0.0)
        return {spec.id: (raw.get(spec.id, 0.0) / best if best > 0 else 0.0) for spec in self.specs}

    def embedding_scores(self, query: str) -> dict[str, float]:
        """Cosine similarity with the query, min-max normalised over the catalog."""
        vectors = self.block_vectors()
        assert self.embeddings is not None
        embeddings = self.embeddings
        query_vector = np.asarray(_embed(lambda: embeddings.embed_query(query)), dtype=np.float64)
        ids = [spec.id for spec in self.specs]
        matrix = np.asarray([vectors[block_id] for block_id in ids], dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query_vector) or 1.0)
        cosine = matrix @ query_vector / np.where(norms == 0, 1.0, norms)
        low, high = float(cosine.min()), float(cosine.max())
        span = high - low
        return {
            block_id: (float(value) - low) / span if span > 0 else 0.0
            for block_id, value in zip(ids, cosine, strict=True)
        }

    # --- search -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        per_category: int = 6,
        total: int = 30,
        pinned: Iterable[str] = (),
        method: RetrievalMethod | None = None,
    ) -> list[BlockCandidate]:
        """The candidates for ``query``: pinned ones first, then the best by score."""
        chosen = method or ("hybrid" if self.embeddings is not None else "bm25")
        if chosen != "bm25" and self.embeddings is None:
            raise ValueError(f"method {chosen!r} needs an embeddings model")
        by_id = {spec.id: spec for spec in self.specs}
        pins = _unique(pinned)
        unknown = [block_id for block_id in pins if block_id not in by_id]
        if unknown:
            raise UserInputError(
                f"固定したブロック {', '.join(unknown)} はブロックカタログにありません。",
                hint="候補一覧から固定し直してください（`keiri-agent blocks list` で一覧できます）",
                details={"unknown": unknown},
            )
        bm25 = self.bm25_scores(query) if chosen in ("bm25", "hybrid") else None
        vector = self.embedding_scores(query) if chosen in ("embedding", "hybrid") else None
        weight = self.bm25_weight + self.embedding_weight

        def score(block_id: str) -> float:
            if bm25 is not None and vector is not None:
                combined = (
                    self.bm25_weight * bm25[block_id] + self.embedding_weight * vector[block_id]
                )
                return combined / weight
            return (bm25 or vector or {}).get(block_id, 0.0)

        def candidate(block_id: str, *, is_pinned: bool) -> BlockCandidate:
            spec = by_id[block_id]
            return BlockCandidate(
                block_id=block_id,
                category=block_category(spec),
                description=spec.description.strip(),
                inputs=tuple(spec.inputs),
                required_inputs=tuple(spec.required_inputs()),
                outputs=tuple(spec.outputs),
                score=min(1.0, max(0.0, score(block_id))),
                bm25=None if bm25 is None else bm25[block_id],
                embedding=None if vector is None else vector[block_id],
                pinned=is_pinned,
            )

        result = [candidate(block_id, is_pinned=True) for block_id in pins]
        per: dict[str, int] = {}
        for item in result:
            per[item.category] = per.get(item.category, 0) + 1
        ranked = sorted(
            (s.id for s in self.specs if s.id not in pins and not s.superseded_by),
            key=lambda i: (-score(i), i),
        )
        for block_id in ranked:
            if len(result) >= total:
                break
            if score(block_id) <= 0:
                break
            category = block_category(by_id[block_id])
            if per.get(category, 0) >= per_category:
                continue
            per[category] = per.get(category, 0) + 1
            result.append(candidate(block_id, is_pinned=False))
        return self._with_file_source(result, by_id, total, candidate)

    def _with_file_source(
        self,
        result: list[BlockCandidate],
        by_id: dict[str, BlockSpec],
        total: int,
        candidate: Any,
    ) -> list[BlockCandidate]:
        """Add the block that brings a user's files into a Plan (``FILE_SOURCE``) when a
        candidate needs a file and it is not a candidate yet: a file reaches a Plan only
        through it, so a Plan reading files needs it whatever the instruction's words.
        It comes last, when the cap leaves room."""
        if FILE_SOURCE not in by_id or any(c.block_id == FILE_SOURCE for c in result):
            return result
        if not any(_takes_file(by_id[c.block_id]) for c in result):
            return result
        if len(result) < total:
            result.append(candidate(FILE_SOURCE, is_pinned=False))
        return result


def _takes_file(spec: BlockSpec) -> bool:
    """A required input without a JSON type: bytes, i.e. a file's content."""
    return any("type" not in spec.input_schema(name) for name in spec.required_inputs())


def _unique(values: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


def _embed(call: Any) -> Any:
    """Run an embeddings call; a failure of the service becomes an ``LLMError`` (one
    already said in Japanese, e.g. a text that timed out alone, stays as it is)."""
    try:
        return call()
    except KeiriAgentError:
        raise
    except Exception as error:
        raise LLMError(
            f"埋め込みモデルの呼び出しに失敗しました（{type(error).__name__}）。",
            hint="埋め込みの接続設定（KEIRI_AGENT_EMBEDDING_MODEL など）を確認するか、"
            "method='bm25' で検索してください",
            details={"cause": str(error)[:200]},
        ) from None


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Share of ``relevant`` block ids found among the first ``k`` of ``ranked``."""
    wanted = set(relevant)
    if not wanted:
        return 1.0
    return len(wanted & set(ranked[:k])) / len(wanted)


__all__ = [
    "DEFAULT_BM25_WEIGHT",
    "DEFAULT_EMBEDDING_WEIGHT",
    "BlockRetriever",
    "block_category",
    "block_text",
    "recall_at_k",
]
