"""Embedding many texts in batches that shrink when the service does not answer in time.

A slow embeddings server (measured: an e5 model on a CPU machine took 59 s for 4 texts)
cannot answer a large batch within ``request_timeout_s``, so indexing never finished.
:class:`BatchedEmbedder` sends ``batch_size`` texts per ``embed_documents`` call; when a
call times out it halves the batch and sends the same texts again, down to a single
text, and keeps the smaller size for every later call (a size that timed out once would
time out again). A single text that still times out is an ``LLMError`` saying that the
server is too slow for the timeout. The vectors always come back in the order of the
texts.

What counts as a timeout is decided by the exception's type (:func:`is_timeout`), never
by its message. Note that the openai SDK retries a timed-out request ``max_retries``
times before it raises, so each halving costs ``(max_retries + 1) * request_timeout_s``;
on a server known to be slow, a small ``KEIRI_AGENT_EMBEDDING_BATCH_SIZE`` avoids it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from keiri_agent.errors import LLMError
from keiri_agent.llm.structured import endpoint_of, model_errors

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

logger = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 64
"""Texts per ``embed_documents`` call to begin with (``KEIRI_AGENT_EMBEDDING_BATCH_SIZE``)."""

_HTTP_MODULES = ("httpx", "httpx2")
"""The HTTP clients whose timeouts may reach us (the openai SDK uses httpx2, or httpx)."""


def _loaded_types(name: str, modules: Sequence[str]) -> tuple[type[BaseException], ...]:
    """The class ``name`` of each of ``modules`` already imported (an exception of a
    module that was never imported cannot have been raised)."""
    found = (getattr(sys.modules.get(module), name, None) for module in modules)
    return tuple(kind for kind in found if isinstance(kind, type))


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` says the service did not reply in time (by type, never by message).

    The openai SDK raises ``openai.APITimeoutError`` once its retries are spent
    (langchain-openai passes it on), caused by the HTTP client's ``TimeoutException``;
    an embeddings client calling httpx itself raises that ``TimeoutException``. A
    timeout while connecting (``ConnectTimeout``) or waiting for a free connection
    (``PoolTimeout``) is not about the size of the request and does not count.
    """
    not_about_size = _loaded_types("ConnectTimeout", _HTTP_MODULES) + _loaded_types(
        "PoolTimeout", _HTTP_MODULES
    )
    sdk_timeout = _loaded_types("APITimeoutError", ("openai",))
    if sdk_timeout and isinstance(exc, sdk_timeout):
        return not isinstance(exc.__cause__, not_about_size)
    http_timeout = _loaded_types("TimeoutException", _HTTP_MODULES)
    return isinstance(exc, http_timeout) and not isinstance(exc, not_about_size)


class BatchedEmbedder:
    """``model.embed_documents`` in batches of ``batch_size`` texts, halved on a timeout.

    Args:
        model: The embeddings (``keiri_agent.llm.embeddings(settings)``).
        batch_size: Texts per call to begin with (at least 1).

    ``batch_size`` is what the next call sends: after a timeout it is the smaller size
    that is used from then on by every :meth:`embed` of this embedder.
    """

    def __init__(self, model: Embeddings, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size

    def embed(
        self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None
    ) -> list[list[float]]:
        """One vector per text, in the order of ``texts``.

        ``on_batch(done, total)`` is called after each batch that came back, with the
        number of texts embedded so far.

        Raises:
            LLMError: A single text timed out, the service failed (its error translated
                by ``llm.structured.model_errors``, naming the endpoint), or it answered a
                batch with another number of vectors than texts.
        """
        vectors: list[list[float]] = []
        while len(vectors) < len(texts):
            batch = list(texts[len(vectors) : len(vectors) + self.batch_size])
            result = self._call(batch)
            if result is None:  # timed out: the same texts again, in a smaller batch
                continue
            if len(result) != len(batch):
                raise LLMError(
                    f"埋め込みサービスが {len(batch)} 件の文章に {len(result)} 件の"
                    "ベクトルを返しました",
                    hint="管理者に埋め込みの接続先が OpenAI 互換のサービスかの確認を"
                    "依頼してください。",
                    details={"endpoint": endpoint_of(self.model), "reason": "vector_count"},
                )
            vectors.extend(result)
            if on_batch is not None:
                on_batch(len(vectors), len(texts))
        return vectors

    def _call(self, batch: list[str]) -> list[list[float]] | None:
        """The vectors of ``batch``; None when the call timed out (the size is halved)."""
        with model_errors(self.model):
            try:
                return self.model.embed_documents(batch)
            except Exception as exc:
                if not is_timeout(exc):
                    raise
                self._shrink(batch, exc)
                return None

    def _shrink(self, batch: list[str], exc: Exception) -> None:
        """Halve the batch size after ``batch`` timed out; a single text is an error."""
        if len(batch) == 1:
            raise embedding_timeout_error(self.model, batch[0], exc) from None
        self.batch_size = len(batch) // 2
        logger.warning(
            "embeddings: a batch of %d texts timed out (%s); sending %d texts per request "
            "from now on",
            len(batch),
            type(exc).__name__,
            self.batch_size,
        )


def checked_vector(vector: Sequence[float]) -> list[float]:
    """``vector`` as floats; an empty one is an ``LLMError`` (a malformed reply)."""
    values = [float(value) for value in vector]
    if not values:
        raise LLMError(
            "埋め込みサービスが空のベクトルを返しました",
            hint="管理者に埋め込みモデル KEIRI_AGENT_EMBEDDING_MODEL と接続先の確認を"
            "依頼してください。",
        )
    return values


def embedding_timeout_error(model: Embeddings, text: str, exc: BaseException) -> LLMError:
    """The error of a single text the embeddings service could not embed in time."""
    endpoint = endpoint_of(model)
    where = f"、接続先 {endpoint}" if endpoint else ""
    return LLMError(
        "埋め込みサービスが時間内に応答しませんでした"
        f"（文章 1 件（{len(text):,} 文字）だけを送っても時間切れになりました{where}）",
        hint="埋め込みサーバーの処理が待ち時間に間に合っていません。管理者に、待ち時間 "
        "KEIRI_AGENT_REQUEST_TIMEOUT_S を延ばすか、より速い埋め込みサーバーを用意するよう"
        "依頼してください。",
        details={
            "endpoint": endpoint,
            "error_type": type(exc).__name__,
            "reason": "embedding_timeout",
            "chars": len(text),
        },
    )


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "BatchedEmbedder",
    "checked_vector",
    "embedding_timeout_error",
    "is_timeout",
]
