"""The Qdrant vector index, in local mode on temporary folders (no network)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from langchain_openai import OpenAIEmbeddings
from pydantic import SecretStr
from qdrant_client import QdrantClient

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, ExecutionError, LLMError
from keiri_agent.llm.testing import (
    HashEmbeddings,
    LoopbackServer,
    StubOpenAIServer,
    TimingOutEmbeddings,
    stub_embedding,
)
from keiri_agent.search import Chunk, ChunkIndex, Searcher, Source, vector
from keiri_agent.search.models import PAGE_STARTS
from keiri_agent.search.vector import (
    VECTOR_STORE_ERROR,
    VectorIndex,
    default_qdrant_path,
    point_id,
)

TEXTS = [
    "経費精算は月末までに申請してください。",
    "交通費の上限は一日あたり五千円です。",
    "パスワードを忘れた場合は管理者に連絡してください。",
    "請求書はPDFで経理部に送付します。",
]


def chunks(document: str, texts: list[str], **source: object) -> list[Chunk]:
    return [
        Chunk(
            id=f"{document}#{ordinal}",
            text=text,
            source=Source(document, **source),  # type: ignore[arg-type]
            metadata={"ordinal": str(ordinal)},
        )
        for ordinal, text in enumerate(texts)
    ]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "qdrant"


@pytest.fixture
def index(folder: Path) -> Iterator[VectorIndex]:
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as vector_index:
        yield vector_index


def test_implements_the_search_contract(index: VectorIndex) -> None:
    assert isinstance(index, Searcher)
    as_index: ChunkIndex = index
    assert as_index.retriever == "vector"


def test_the_chunk_equal_to_the_query_comes_first(index: VectorIndex) -> None:
    index.upsert("rules.md", chunks("rules.md", TEXTS, heading="規程", page=2))
    for ordinal, text in enumerate(TEXTS):
        hits = index.search(text, k=2)
        assert len(hits) == 2
        best = hits[0]
        assert best.chunk.id == f"rules.md#{ordinal}"
        assert best.text == text
        assert best.score == pytest.approx(1.0, abs=1e-6)
        assert best.retriever == "vector"
        assert best.source == Source("rules.md", page=2, heading="規程")
        assert best.chunk.metadata == {"ordinal": str(ordinal)}
        assert hits[1].score < best.score


def test_k_limits_and_empty_cases(index: VectorIndex) -> None:
    assert index.search("anything") == []  # no collection yet
    assert index.documents() == set()
    index.delete_documents(["missing.md"])  # no collection: nothing to do
    index.upsert("rules.md", chunks("rules.md", TEXTS))
    assert len(index.search(TEXTS[0], k=3)) == 3
    assert len(index.search(TEXTS[0], k=50)) == len(TEXTS)
    assert index.search(TEXTS[0], k=0) == []
    assert index.search("   ") == []


def test_upsert_replaces_the_documents_old_chunks(index: VectorIndex) -> None:
    index.upsert("rules.md", chunks("rules.md", TEXTS))
    index.upsert("faq.csv", chunks("faq.csv", ["よくある質問: 締め日はいつですか"], row=1))
    index.upsert("rules.md", chunks("rules.md", ["改訂版: 経費精算は二十五日締めです。"]))
    assert index.documents() == {"rules.md", "faq.csv"}
    hits = index.search(TEXTS[1], k=10)
    assert {hit.chunk.id for hit in hits} == {"rules.md#0", "faq.csv#0"}
    assert {hit.text for hit in hits} == {
        "改訂版: 経費精算は二十五日締めです。",
        "よくある質問: 締め日はいつですか",
    }
    index.upsert("rules.md", [])  # no chunks left: the document disappears
    assert index.documents() == {"faq.csv"}


def test_delete_documents(index: VectorIndex) -> None:
    index.upsert("a.md", chunks("a.md", TEXTS[:2]))
    index.upsert("b.md", chunks("b.md", TEXTS[2:]))
    index.delete_documents(["a.md", "unknown.md"])
    assert index.documents() == {"b.md"}
    assert {hit.source.document for hit in index.search(TEXTS[0], k=10)} == {"b.md"}
    index.delete_documents([])
    assert index.documents() == {"b.md"}


def test_documents_pages_through_many_points(
    index: VectorIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector, "_SCROLL_PAGE", 7)
    for number in range(12):
        name = f"doc{number}.md"
        index.upsert(name, chunks(name, [f"本文 {number} {text}" for text in TEXTS]))
    assert index.documents() == {f"doc{number}.md" for number in range(12)}


def test_embeds_in_batches(folder: Path) -> None:
    embeddings = HashEmbeddings()
    with VectorIndex("manuals", embeddings, path=folder, batch_size=3) as index:
        texts = [f"{text} その{n}" for n in range(2) for text in TEXTS]  # 8 texts
        index.upsert("rules.md", chunks("rules.md", texts))
        assert [len(batch) for batch in embeddings.document_batches] == [3, 3, 2]
        assert len(index.search(texts[7], k=20)) == 8
        assert embeddings.queries == [texts[7]]


def test_a_batch_that_times_out_is_embedded_in_halves(folder: Path) -> None:
    embeddings = TimingOutEmbeddings(most=2)
    texts = [f"{text} その{n}" for n in range(2) for text in TEXTS]  # 8 texts
    progress: list[tuple[int, int]] = []
    with VectorIndex("manuals", embeddings, path=folder, batch_size=8) as index:
        index.upsert(
            "rules.md",
            chunks("rules.md", texts),
            on_batch=lambda done, total: progress.append((done, total)),
        )
        for ordinal, text in enumerate(texts):  # each chunk stored with its own vector
            assert index.search(text, k=1)[0].chunk.id == f"rules.md#{ordinal}"
        index.upsert("faq.csv", chunks("faq.csv", texts[:4]))
    assert embeddings.sizes == [8, 4, 2, 2, 2, 2, 2, 2]  # the smaller size is kept
    assert progress == [(2, 8), (4, 8), (6, 8), (8, 8)]


class _SlowEmbeddingsHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings that never answers more than 2 texts."""

    protocol_version = "HTTP/1.1"
    sizes: list[int]
    released: threading.Event

    def log_message(self, format: str, *args: object) -> None:
        """Silence the access log."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"]
        self.sizes.append(len(texts))
        if len(texts) > 2:  # too slow: the client gives up first
            self.released.wait(timeout=30)
            self.close_connection = True
            return
        data = [
            {"object": "embedding", "index": index, "embedding": stub_embedding(text, 16)}
            for index, text in enumerate(texts)
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def test_the_openai_client_s_timeout_halves_the_batch(folder: Path) -> None:
    sizes: list[int] = []
    released = threading.Event()
    handler = type("Handler", (_SlowEmbeddingsHandler,), {"sizes": sizes, "released": released})
    server = LoopbackServer(handler)
    try:
        settings = Settings(
            provider="offline",
            embedding_provider="openai-compatible",
            embedding_base_url=f"{server.origin}/v1",
            embedding_batch_size=4,
            request_timeout_s=0.5,
            max_retries=0,
        )
        with VectorIndex.from_settings(settings, "manuals", path=folder) as index:
            index.upsert("rules.md", chunks("rules.md", [*TEXTS, "補足: 領収書は原本を保管"]))
            assert index.documents() == {"rules.md"}
    finally:
        released.set()
        server.stop()
    assert sizes == [4, 2, 2, 1]


def test_point_ids_are_uuid5_of_chunk_ids() -> None:
    value = point_id("rules.md#0")
    assert uuid.UUID(value).version == 5
    assert value == point_id("rules.md#0") != point_id("rules.md#1")


def test_persists_across_reopening(folder: Path) -> None:
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        index.upsert("rules.md", chunks("rules.md", TEXTS, page=1))
        before = index.search(TEXTS[2], k=4)
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        assert index.documents() == {"rules.md"}
        after = index.search(TEXTS[2], k=4)
    assert [hit.chunk for hit in after] == [hit.chunk for hit in before]
    assert [hit.score for hit in after] == pytest.approx([hit.score for hit in before])


def test_collections_share_one_local_folder(folder: Path) -> None:
    first = VectorIndex("manuals", HashEmbeddings(), path=folder)
    second = VectorIndex("faq", HashEmbeddings(), path=folder)
    try:
        first.upsert("rules.md", chunks("rules.md", TEXTS[:2]))
        second.upsert("faq.csv", chunks("faq.csv", TEXTS[2:]))
        assert first.documents() == {"rules.md"}
        assert second.documents() == {"faq.csv"}
        first.close()
        # the shared client stays open for the remaining user
        assert second.search(TEXTS[3], k=1)[0].chunk.id == "faq.csv#1"
    finally:
        first.close()
        second.close()
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as reopened:
        assert reopened.documents() == {"rules.md"}


def test_a_folder_held_elsewhere_is_a_configuration_error(folder: Path) -> None:
    # Qdrant's folder lock (flock) conflicts per open file, as with another process.
    other = QdrantClient(path=str(folder))
    try:
        with pytest.raises(ConfigurationError, match="別の keiri-agent が使用中です") as caught:
            VectorIndex("manuals", HashEmbeddings(), path=folder)
        assert "KEIRI_AGENT_QDRANT_URL" in (caught.value.hint or "")
    finally:
        other.close()
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        assert index.documents() == set()


def test_a_changed_embedding_dimension_asks_to_reindex(folder: Path) -> None:
    with VectorIndex("manuals", HashEmbeddings(dim=64), path=folder) as index:
        index.upsert("rules.md", chunks("rules.md", TEXTS))
    with VectorIndex("manuals", HashEmbeddings(dim=32), path=folder) as index:
        with pytest.raises(ConfigurationError, match="もう一度登録") as caught:
            index.search(TEXTS[0])
        error = caught.value
        assert "'manuals'" in error.message and "64" in error.message and "32" in error.message
        assert error.details == {"collection": "manuals", "expected": 64, "actual": 32}
        with pytest.raises(ConfigurationError, match="64 次元"):
            index.upsert("new.md", chunks("new.md", TEXTS[:1]))
        assert index.documents() == {"rules.md"}  # nothing was replaced


def test_memory_mode_and_invalid_arguments(folder: Path) -> None:
    with VectorIndex("scratch", HashEmbeddings()) as index:
        assert index.mode == "memory"
        index.upsert("a.md", chunks("a.md", TEXTS))
        assert index.search(TEXTS[3], k=1)[0].chunk.id == "a.md#3"
    with pytest.raises(RuntimeError, match="closed"):
        index.search(TEXTS[0])
    with pytest.raises(ConfigurationError, match="コレクション名"):
        VectorIndex("../escape", HashEmbeddings(), path=folder)
    with pytest.raises(ConfigurationError, match="両方が指定されています"):
        VectorIndex("x", HashEmbeddings(), path=folder, url="http://127.0.0.1:6333")
    with pytest.raises(ConfigurationError, match="一括処理件数"):
        VectorIndex("x", HashEmbeddings(), batch_size=0)


def test_concurrent_searches_and_upserts(index: VectorIndex) -> None:
    index.upsert("rules.md", chunks("rules.md", TEXTS))
    errors: list[BaseException] = []

    def search_many() -> None:
        try:
            for _ in range(20):
                assert index.search(TEXTS[0], k=1)[0].text == TEXTS[0]
        except BaseException as exc:
            errors.append(exc)

    def upsert_many() -> None:
        try:
            for number in range(10):
                index.upsert("other.md", chunks("other.md", [f"別文書 {number}"]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=search_many) for _ in range(4)]
    threads.append(threading.Thread(target=upsert_many))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert index.documents() == {"rules.md", "other.md"}


def test_a_failing_embeddings_service_keeps_the_old_chunks(folder: Path) -> None:
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        index.upsert("rules.md", chunks("rules.md", TEXTS))
    settings = Settings(
        provider="openai-compatible",
        openai_api_base="http://127.0.0.1:9/v1",  # discard port: connection refused
        max_retries=0,
        request_timeout_s=2,
    )
    with VectorIndex.from_settings(settings, "manuals", path=folder) as broken:
        with pytest.raises(LLMError, match="LLM サービスでエラーが起きました") as caught:
            broken.upsert("rules.md", chunks("rules.md", ["新しい本文"]))
        assert "接続先 URL" in (caught.value.hint or "")
        with pytest.raises(LLMError):
            broken.search(TEXTS[0])
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        assert index.documents() == {"rules.md"}
        assert index.search(TEXTS[0], k=1)[0].text == TEXTS[0]


def test_from_settings_uses_the_openai_client_against_the_stub_server(keiri_home: Path) -> None:
    with StubOpenAIServer(embedding_dim=48) as server:
        settings = Settings(
            provider="openai-compatible",
            openai_api_base=server.base_url,
            embedding_model="stub-embedding",
            embedding_batch_size=2,
            retry_backoff_s=0.01,
        )
        with VectorIndex.from_settings(settings, "manuals") as index:
            assert isinstance(index.embeddings, OpenAIEmbeddings)
            assert index.mode == "local"
            index.upsert("rules.md", chunks("rules.md", TEXTS))
            hits = index.search(TEXTS[1], k=2)
            assert hits[0].text == TEXTS[1]
            assert hits[0].score == pytest.approx(1.0, abs=1e-5)
            index.upsert("rules.md", chunks("rules.md", TEXTS[:1]))
            assert [hit.chunk.id for hit in index.search(TEXTS[1], k=5)] == ["rules.md#0"]
        embedding_requests = [r for r in server.requests if r.path.endswith("/embeddings")]
        # 4 texts in batches of 2, one query, 1 text, one query
        assert [
            len(r.body["input"]) if isinstance(r.body["input"], list) else 1
            for r in embedding_requests
        ] == [2, 2, 1, 1, 1]
        assert all(r.body["model"] == "stub-embedding" for r in embedding_requests)
    assert (default_qdrant_path(settings) / "collection" / "manuals").exists()
    assert default_qdrant_path(settings) == keiri_home / ".keiri" / "qdrant"


def test_from_settings_offline_is_a_configuration_error_with_a_hint() -> None:
    with pytest.raises(ConfigurationError, match="ベクトル検索には埋め込み") as caught:
        VectorIndex.from_settings(Settings(provider="offline"), "manuals")
    hint = caught.value.hint or ""
    assert "KEIRI_AGENT_EMBEDDING_PROVIDER" in hint and "キーワード検索" in hint


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_server_mode_failures_are_vector_store_errors() -> None:
    settings = Settings(
        provider="openai",
        openai_api_key=SecretStr("sk-test"),
        qdrant_url="http://127.0.0.1:9",  # discard port: connection refused
        qdrant_api_key=SecretStr("qdrant-secret"),
        request_timeout_s=2,
    )
    with VectorIndex.from_settings(settings, "manuals") as index:
        assert index.mode == "server"
        with pytest.raises(ExecutionError) as caught:
            index.documents()
    assert caught.value.code == VECTOR_STORE_ERROR
    assert "KEIRI_AGENT_QDRANT_URL" in (caught.value.hint or "")
    assert "qdrant-secret" not in str(caught.value)


def test_a_chunk_s_page_starts_survive_reopening(folder: Path) -> None:
    spanning = Chunk(
        "m.pdf#0",
        "承認は経理部が行います。\n領収書は7年間保管します。",
        Source("m.pdf", page=3),
        {PAGE_STARTS: "0:3,13:4"},
    )
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        index.upsert("m.pdf", [spanning])
    with VectorIndex("manuals", HashEmbeddings(), path=folder) as index:
        [hit] = index.search("領収書", k=1)
    assert hit.chunk.page_starts == ((0, 3), (13, 4))
