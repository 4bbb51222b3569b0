"""The vector index: chunks embedded with the configured provider, stored in Qdrant.

Three storage modes, picked by the constructor arguments:

* **local** (``path=folder``, the default through :meth:`VectorIndex.from_settings`):
  Qdrant's embedded mode, persisted on disk. One *process* at a time may open a
  folder (Qdrant locks it); inside a process every index on the same folder
  shares one client (a registry keyed by the resolved path), so several
  collections can live side by side. Access to a local client is serialised by
  a lock shared by its users, which makes searches thread-safe. A damaged folder
  (its ``meta.json`` or a collection's SQLite file) is ``KNOWLEDGE_BASE_CORRUPT``
  naming the folder to delete (``helpdesk index`` then embeds the documents again).
  The folder is created owner-only (0700); Qdrant writes its files there with the
  umask's bits, so they are narrowed to 0600 after each call that creates them
  (opening the folder, creating a collection).
* **server** (``url=...``, ``KEIRI_AGENT_QDRANT_URL``): a Qdrant server, any
  number of processes.
* **memory** (neither): a throwaway index for tests and one-off use.

The collection is created lazily with the dimension of the first embedding
(cosine distance). An existing collection whose dimension differs from the
embeddings' (the embedding model changed) is a :class:`ConfigurationError`
asking to re-index. Point ids are UUID5s of the chunk ids; the payload holds
the chunk (text, source, metadata) and the document name it was upserted under.

Chunks are embedded ``batch_size`` texts per request; a request that times out is sent
again in halves, and the smaller size is kept for the index's later requests
(``llm.embedding_batches.BatchedEmbedder``: a slow CPU server still gets through).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import math
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from langchain_core.embeddings import Embeddings
from qdrant_client import QdrantClient
from qdrant_client.http import models
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from keiri_agent.errors import ConfigurationError, ExecutionError, KeiriAgentError
from keiri_agent.llm import embedding_batches
from keiri_agent.llm.embedding_batches import BatchedEmbedder, checked_vector
from keiri_agent.private import private_dir, restrict_tree
from keiri_agent.search.models import BatchProgress, Chunk, Hit, Retriever, Source
from keiri_agent.search.stored import corrupt

if TYPE_CHECKING:
    from keiri_agent.config import Settings

T = TypeVar("T")

DEFAULT_BATCH_SIZE = embedding_batches.DEFAULT_BATCH_SIZE
"""Texts per ``embed_documents`` call (halved on a timeout) and points per upsert request
by default."""

POINT_ID_NAMESPACE = uuid.UUID("6f1c2a8e-4b7d-5e3f-9a0b-1c2d3e4f5a6b")
"""Namespace of the UUID5 point ids derived from chunk ids (never change it)."""

VECTOR_STORE_ERROR = "VECTOR_STORE_ERROR"
"""``code`` of the ExecutionError raised when the Qdrant service fails."""

_COLLECTION_NAME = re.compile(r"^[\w-][\w.-]{0,254}$")
_SCROLL_PAGE = 512
_SERVER_HINT = (
    "管理者にベクトル検索サーバー（Qdrant）が動いているか、接続先 KEIRI_AGENT_QDRANT_URL と"
    "認証キー KEIRI_AGENT_QDRANT_API_KEY の設定が正しいかの確認を依頼してください"
    "（KEIRI_AGENT_QDRANT_URL を外すとこのパソコン上の索引を使います）。"
)


def default_qdrant_path(settings: Settings) -> Path:
    """Where local-mode indexes live: ``<home>/.keiri/qdrant``."""
    return settings.storage.home / ".keiri" / "qdrant"


def point_id(chunk_id: str) -> str:
    """The Qdrant point id of a chunk: a UUID5 of its id (stable across runs)."""
    return str(uuid.uuid5(POINT_ID_NAMESPACE, chunk_id))


# --- shared local clients ---------------------------------------------------


@dataclass
class _LocalStore:
    client: QdrantClient
    lock: threading.RLock
    users: int


_LOCAL_STORES: dict[str, _LocalStore] = {}
_LOCAL_STORES_LOCK = threading.Lock()


def _acquire_local(path: Path) -> tuple[str, _LocalStore]:
    """The process-wide client of a local folder (opened on first use)."""
    key = str(path.expanduser().resolve())
    with _LOCAL_STORES_LOCK:
        store = _LOCAL_STORES.get(key)
        if store is None:
            private_dir(Path(key))
            try:
                # Access is serialised by ``store.lock``, so sqlite's same-thread
                # check (on by default on some platforms) only gets in the way.
                client = QdrantClient(path=key, force_disable_check_same_thread=True)
            except RuntimeError as exc:
                if "already accessed" not in str(exc):
                    raise corrupt(Path(key), Path(key), f"{type(exc).__name__}: {exc}") from None
                raise ConfigurationError(
                    f"ベクトル索引のフォルダ {key} は別の keiri-agent が使用中です",
                    hint="同じフォルダは 1 つの処理からしか使えません。ほかの keiri-agent"
                    "（コマンド・画面・API サーバー）を終了してから、もう一度実行してください。"
                    "同時に使うには、管理者に Qdrant サーバーの用意と"
                    "接続先 KEIRI_AGENT_QDRANT_URL の設定を依頼してください。",
                    details={"path": key},
                ) from exc
            except OSError:
                raise
            except Exception as exc:  # the folder's meta.json or SQLite file is damaged
                raise corrupt(Path(key), Path(key), f"{type(exc).__name__}: {exc}") from None
            _restrict(key)
            store = _LocalStore(client=client, lock=threading.RLock(), users=0)
            _LOCAL_STORES[key] = store
        store.users += 1
        return key, store


def _restrict(key: str) -> None:
    """Narrow the local folder ``key`` and what Qdrant wrote in it to their owner
    (best effort: a file this user cannot change stays as it is)."""
    with contextlib.suppress(OSError):
        restrict_tree(Path(key))


@atexit.register
def _close_local_stores() -> None:
    """Close the shared local clients before the interpreter tears modules down."""
    with _LOCAL_STORES_LOCK:
        stores = list(_LOCAL_STORES.values())
        _LOCAL_STORES.clear()
    for store in stores:
        with contextlib.suppress(Exception), store.lock:
            store.client.close()


def _release_local(key: str) -> None:
    with _LOCAL_STORES_LOCK:
        store = _LOCAL_STORES.get(key)
        if store is None:
            return
        store.users -= 1
        if store.users <= 0:
            del _LOCAL_STORES[key]
            with store.lock:
                store.client.close()


# --- the index ----------------------------------------------------------------


class VectorIndex:
    """A :class:`~keiri_agent.search.models.ChunkIndex` on a Qdrant collection.

    Args:
        collection: Collection name (letters, digits, ``_``, ``-``, ``.``).
        embeddings: LangChain embeddings (``keiri_agent.llm.embeddings(settings)``).
        path: Folder of a local, on-disk index (shared by collections).
        url: Qdrant server URL (exclusive with ``path``).
        api_key: Qdrant server API key.
        batch_size: Texts per ``embed_documents`` call (halved, for the rest of this
            index's life, when a call times out) and points per upsert.
        timeout_s: Request timeout for a Qdrant server.

    Neither ``path`` nor ``url``: an in-memory index, gone when closed.

    Raises:
        ConfigurationError: A bad collection name, both ``path`` and ``url``, or
            a local folder held by another process.
    """

    def __init__(
        self,
        collection: str,
        embeddings: Embeddings,
        *,
        path: Path | None = None,
        url: str | None = None,
        api_key: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        timeout_s: float | None = None,
    ) -> None:
        if not _COLLECTION_NAME.match(collection):
            raise ConfigurationError(
                f"ベクトル索引のコレクション名 {collection!r} は使えません",
                hint="英数字・'_'・'-'・'.'（先頭以外）だけで 255 文字以内の名前にしてください。",
            )
        if path is not None and url is not None:
            raise ConfigurationError(
                "ベクトル索引の保存先にフォルダとサーバーの両方が指定されています",
                hint="このパソコン上の索引を使う場合は、管理者に KEIRI_AGENT_QDRANT_URL"
                "（Qdrant サーバーの接続先）の設定を外すよう依頼してください。",
            )
        if batch_size < 1:
            raise ConfigurationError(
                f"埋め込みの一括処理件数は 1 以上にしてください（指定: {batch_size}）",
                hint="管理者に KEIRI_AGENT_EMBEDDING_BATCH_SIZE（埋め込みを一度に送る件数）を"
                "1 以上の数に設定するよう依頼してください。",
            )
        self.collection = collection
        self.embeddings = embeddings
        self.batch_size = batch_size
        self._embedder = BatchedEmbedder(embeddings, batch_size)
        self._local_key: str | None = None
        self._closed = False
        self._dim: int | None = None
        self._serial: contextlib.AbstractContextManager[Any]
        if url is not None:
            timeout = None if timeout_s is None else max(1, math.ceil(timeout_s))
            self._client = QdrantClient(
                url=url, api_key=api_key, timeout=timeout, check_compatibility=False
            )
            self._lock = threading.RLock()
            self._serial = contextlib.nullcontext()
            self.mode = "server"
        elif path is not None:
            self._local_key, store = _acquire_local(path)
            self._client = store.client
            self._lock = store.lock
            self._serial = store.lock
            self.mode = "local"
        else:
            self._client = QdrantClient(location=":memory:", force_disable_check_same_thread=True)
            self._lock = threading.RLock()
            self._serial = self._lock
            self.mode = "memory"

    @classmethod
    def from_settings(
        cls, settings: Settings, collection: str, path: Path | None = None
    ) -> VectorIndex:
        """The index of ``collection`` with the configured embeddings and Qdrant.

        ``settings.storage.qdrant_url`` set: that server. Otherwise local mode in ``path``
        (default :func:`default_qdrant_path`).

        Raises:
            ConfigurationError: No embeddings provider is configured (offline) or
                the local folder is held by another process.
        """
        from keiri_agent.llm import embeddings as build_embeddings

        try:
            model = build_embeddings(settings)
        except ConfigurationError as exc:
            hint = exc.hint or "埋め込みがなくてもキーワード検索は使えます。"
            raise ConfigurationError(
                f"ベクトル検索には埋め込み（文章のベクトル化）の接続先が必要です: {exc.message}",
                hint=hint,
                details={"collection": collection, **exc.details},
            ) from exc
        if settings.storage.qdrant_url:
            key = settings.storage.qdrant_api_key
            return cls(
                collection,
                model,
                url=settings.storage.qdrant_url,
                api_key=key.get_secret_value() if key is not None else None,
                batch_size=settings.embeddings.embedding_batch_size,
                timeout_s=settings.llm.request_timeout_s,
            )
        return cls(
            collection,
            model,
            path=path if path is not None else default_qdrant_path(settings),
            batch_size=settings.embeddings.embedding_batch_size,
        )

    # --- ChunkIndex -------------------------------------------------------------

    @property
    def retriever(self) -> Retriever:
        return "vector"

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` chunks closest to ``query`` (score: cosine similarity), best first."""
        self._check_open()
        if k <= 0 or not query.strip():
            return []
        dim = self._existing_dim()
        if dim is None:
            return []
        vector = self._embed_query(query)
        self._check_dim(len(vector), dim)
        with self._serial:
            response = self._call(
                "検索",
                lambda: self._client.query_points(
                    self.collection, query=vector, limit=k, with_payload=True
                ),
            )
        return [
            Hit(
                chunk=_chunk_from_payload(point.payload or {}),
                score=point.score,
                retriever="vector",
            )
            for point in response.points
        ]

    def upsert(
        self, document: str, chunks: Sequence[Chunk], *, on_batch: BatchProgress | None = None
    ) -> None:
        """Replace every chunk of ``document`` with ``chunks`` (embedded in batches).

        The texts are embedded first, so a failing embeddings service leaves the
        document's old chunks in place. ``on_batch(embedded, total)`` is called after
        each batch of texts is embedded.
        """
        self._check_open()
        vectors = self._embed_documents([chunk.text for chunk in chunks], on_batch)
        dim = self._ensure_collection(len(vectors[0])) if vectors else self._existing_dim()
        for vector in vectors:
            self._check_dim(len(vector), dim)
        points = [
            models.PointStruct(
                id=point_id(chunk.id), vector=vector, payload=_payload(document, chunk)
            )
            for chunk, vector in zip(chunks, vectors, strict=True)
        ]
        if dim is None:
            return
        with self._serial:
            self._call("古いチャンクの削除", lambda: self._delete_filtered([document]))
            for start in range(0, len(points), self.batch_size):
                batch = points[start : start + self.batch_size]
                self._call(
                    "チャンクの保存",
                    functools.partial(self._client.upsert, self.collection, batch, wait=True),
                )

    def delete_documents(self, documents: Sequence[str]) -> None:
        """Remove every chunk of the named documents (unknown names are ignored)."""
        self._check_open()
        names = list(dict.fromkeys(documents))
        if not names or self._existing_dim() is None:
            return
        with self._serial:
            self._call("文書の削除", lambda: self._delete_filtered(names))

    def documents(self) -> set[str]:
        """The names of the documents that have chunks in the collection."""
        self._check_open()
        if self._existing_dim() is None:
            return set()
        found: set[str] = set()
        offset: Any = None
        while True:
            with self._serial:
                points, offset = self._call(
                    "文書の一覧取得",
                    functools.partial(
                        self._client.scroll,
                        self.collection,
                        limit=_SCROLL_PAGE,
                        offset=offset,
                        with_payload=["document"],
                        with_vectors=False,
                    ),
                )
            found.update(str((point.payload or {}).get("document")) for point in points)
            if offset is None:
                return found

    # --- lifecycle ----------------------------------------------------------------

    def close(self) -> None:
        """Release the client (a shared local client closes with its last user)."""
        if self._closed:
            return
        self._closed = True
        if self._local_key is not None:
            _release_local(self._local_key)
        else:
            with self._lock:
                self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"VectorIndex(collection={self.collection!r}, mode={self.mode!r})"

    # --- internals ----------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")

    def _existing_dim(self) -> int | None:
        """The collection's vector size, None when it does not exist yet."""
        if self._dim is not None:
            return self._dim
        with self._lock:
            if self._dim is not None:
                return self._dim
            exists = self._call(
                "コレクションを開く処理", lambda: self._client.collection_exists(self.collection)
            )
            if not exists:
                return None
            info = self._call(
                "コレクションを開く処理", lambda: self._client.get_collection(self.collection)
            )
            vectors = info.config.params.vectors
            if not isinstance(vectors, models.VectorParams):
                raise ConfigurationError(
                    f"ベクトル索引のコレクション {self.collection!r} は keiri-agent が"
                    "作ったものではありません",
                    hint="別のコレクション名を使うか、そのコレクションを削除してから"
                    "文書をもう一度登録してください。",
                    details={"collection": self.collection},
                )
            self._dim = vectors.size
            return self._dim

    def _ensure_collection(self, dim: int) -> int:
        """Create the collection for ``dim``-sized vectors unless it exists; its size."""
        with self._lock:
            existing = self._existing_dim()
            if existing is not None:
                self._check_dim(dim, existing)
                return existing
            try:
                self._call("コレクションの作成", lambda: self._create(dim))
            except ExecutionError as exc:
                # Another process may have created it in the meantime (server mode).
                cause = exc.__cause__
                if not (isinstance(cause, UnexpectedResponse) and cause.status_code == 409):
                    raise
                existing = self._existing_dim()
                if existing is None:
                    raise
                self._check_dim(dim, existing)
                return existing
            self._dim = dim
            return dim

    def _create(self, dim: int) -> None:
        self._client.create_collection(
            self.collection,
            vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
        )
        if self.mode == "server":
            self._client.create_payload_index(
                self.collection, "document", models.PayloadSchemaType.KEYWORD
            )
        elif self._local_key is not None:
            _restrict(self._local_key)  # the collection's folder and SQLite file

    def _check_dim(self, dim: int, expected: int | None) -> None:
        if expected is not None and dim != expected:
            raise ConfigurationError(
                f"ベクトル索引 {self.collection!r} は {expected} 次元ですが、いまの埋め込み"
                f"モデルは {dim} 次元のベクトルを作ります"
                "（埋め込みモデルが変わった可能性があります）",
                hint="古い索引（例: .keiri/qdrant フォルダ）を削除して文書をもう一度登録するか、"
                "管理者に KEIRI_AGENT_EMBEDDING_MODEL（埋め込みモデル）を以前の設定に"
                "戻すよう依頼してください。",
                details={"collection": self.collection, "expected": expected, "actual": dim},
            )

    def _delete_filtered(self, documents: list[str]) -> None:
        selector = models.FilterSelector(
            filter=models.Filter(
                must=[models.FieldCondition(key="document", match=models.MatchAny(any=documents))]
            )
        )
        self._client.delete(self.collection, points_selector=selector, wait=True)

    def _embed_documents(
        self, texts: list[str], on_batch: BatchProgress | None = None
    ) -> list[list[float]]:
        """One checked vector per text (``BatchedEmbedder``: halved batches on a timeout)."""
        return [checked_vector(vector) for vector in self._embedder.embed(texts, on_batch)]

    def _embed_query(self, query: str) -> list[float]:
        return checked_vector(
            _embedding_call(self.embeddings, lambda: self.embeddings.embed_query(query))
        )

    def _call(self, action: str, operation: Callable[[], T]) -> T:
        """Run a Qdrant operation, translating its failures."""
        try:
            return operation()
        except KeiriAgentError:
            raise
        except UnexpectedResponse as exc:
            if exc.status_code in (401, 403):
                raise ConfigurationError(
                    f"Qdrant サーバーへのアクセスが拒否されました（{action}）",
                    hint="管理者に KEIRI_AGENT_QDRANT_API_KEY（Qdrant サーバーの認証キー）の"
                    "確認を依頼してください。",
                    details={"collection": self.collection, "status_code": exc.status_code},
                ) from exc
            raise self._store_error(action, exc) from exc
        except ApiException as exc:
            raise self._store_error(action, exc) from exc

    def _store_error(self, action: str, exc: Exception) -> ExecutionError:
        return ExecutionError(
            f"ベクトル索引（Qdrant）の処理に失敗しました（{action}、コレクション "
            f"{self.collection!r}）: {type(exc).__name__}: {exc}",
            hint=_SERVER_HINT if self.mode == "server" else None,
            details={"collection": self.collection, "error_type": type(exc).__name__},
            code=VECTOR_STORE_ERROR,
        )


def _embedding_call(model: Any, operation: Callable[[], T]) -> T:
    """Call the embeddings ``model``; its failures and malformed replies become an
    ``LLMError`` naming the endpoint (``llm.structured.model_errors``)."""
    from keiri_agent.llm.structured import model_errors

    with model_errors(model):
        return operation()


def _payload(document: str, chunk: Chunk) -> dict[str, Any]:
    return {
        "document": document,
        "chunk_id": chunk.id,
        "text": chunk.text,
        "source": chunk.source.to_dict(),
        "metadata": dict(chunk.metadata),
    }


def _chunk_from_payload(payload: Mapping[str, Any]) -> Chunk:
    source: Mapping[str, Any] = payload.get("source") or {}
    return Chunk(
        id=str(payload.get("chunk_id", "")),
        text=str(payload.get("text", "")),
        source=Source(
            document=str(source.get("document") or payload.get("document", "")),
            page=source.get("page"),
            heading=source.get("heading"),
            row=source.get("row"),
        ),
        metadata={str(key): str(value) for key, value in (payload.get("metadata") or {}).items()},
    )
