"""How close in meaning passages are to a question, by the configured embeddings.

The offline support check (``agents.helpdesk.offline.answers.support``) uses it, when an
embeddings endpoint is configured, to keep a quote only when its passage is among the
ones closest in meaning to the question (see ``SIMILARITY_MARGIN`` there).

:class:`EmbeddingSimilarity` embeds the question as a query and the passages as
documents (``embed_query`` / ``embed_documents``, so a model with query/passage prefixes
such as e5 sees them) and returns cosine similarities. Passage vectors are kept in a
bounded cache: an agent judges the same passages again for each part and attempt.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from keiri_agent.errors import LLMError
from keiri_agent.llm.embedding_batches import BatchedEmbedder, checked_vector
from keiri_agent.llm.structured import endpoint_of, model_errors

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from keiri_agent.config import Settings

Similarity = Callable[[str, Sequence[str]], list[float]]
"""``similarity(question, passages)`` → one cosine similarity per passage, in order."""

CACHE_SIZE = 4096
"""Passage (and question) vectors kept (the oldest dropped first)."""


class EmbeddingSimilarity:
    """Cosine similarity of a question to passages by ``model`` (thread-safe).

    Raises (when called):
        LLMError: The embeddings service failed (translated by ``model_errors``, naming
            the endpoint), timed out on a single passage, or answered empty vectors or
            vectors of different dimensions.
    """

    def __init__(self, model: Embeddings, cache_size: int = CACHE_SIZE) -> None:
        self.model = model
        self._embedder = BatchedEmbedder(model)
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def __call__(self, question: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        asked = self._query(question)
        vectors = self._vectors(passages)
        if any(len(vector) != len(asked) for vector in vectors):
            raise LLMError(
                "埋め込みサービスが、質問と資料で次元の異なるベクトルを返しました",
                hint="管理者に、埋め込みの接続先が 1 つのモデルだけを使っているかの確認を"
                "依頼してください。",
                details={"endpoint": endpoint_of(self.model), "reason": "vector_dimension"},
            )
        return [cosine(asked, vector) for vector in vectors]

    def _query(self, question: str) -> list[float]:
        """The question's vector (cached: the answer and the reflection judge the same
        part on the same passages)."""
        with self._lock:
            cached = self._queries.get(question)
        if cached is not None:
            return cached
        with model_errors(self.model):
            vector = checked_vector(self.model.embed_query(question))
        with self._lock:
            self._queries[question] = vector
            while len(self._queries) > self._cache_size:
                self._queries.popitem(last=False)
        return vector

    def _vectors(self, passages: Sequence[str]) -> list[list[float]]:
        unique = list(dict.fromkeys(passages))
        with self._lock:
            known = {text: self._cache[text] for text in unique if text in self._cache}
            for text in known:
                self._cache.move_to_end(text)
        missing = [text for text in unique if text not in known]
        if missing:
            embedded = [checked_vector(vector) for vector in self._embedder.embed(missing)]
            known.update(zip(missing, embedded, strict=True))
            with self._lock:
                for text in missing:
                    self._cache[text] = known[text]
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [known[text] for text in passages]


def meaning_check(settings: Settings) -> EmbeddingSimilarity | None:
    """The offline support check's similarity in meaning: by the configured embeddings
    endpoint (``Settings.embeddings_configured``), else None (the words alone decide)."""
    if not settings.embeddings_configured:
        return None
    from keiri_agent.llm.factory import embeddings

    return EmbeddingSimilarity(embeddings(settings))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


__all__ = ["CACHE_SIZE", "EmbeddingSimilarity", "Similarity", "cosine", "meaning_check"]
