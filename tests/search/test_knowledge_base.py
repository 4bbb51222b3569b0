"""KnowledgeBase: incremental indexing, failures, FAQ collections, removal, vector factory."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.llm.testing import TimingOutEmbeddings
from keiri_agent.search import knowledge_base
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.knowledge_base import KnowledgeBase
from keiri_agent.search.models import BatchProgress, Chunk, Hit, Retriever, Source
from keiri_agent.search.tokenize import SudachiTokenizer
from keiri_agent.search.vector import VectorIndex

FONT = "HeiseiKakuGo-W5"
pdfmetrics.registerFont(UnicodeCIDFont(FONT))


def make_pdf(lines: list[str]) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.setFont(FONT, 11)
    for i, line in enumerate(lines):
        pdf.drawString(60, 780 - 18 * i, line)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def encrypt(data: bytes) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


class MemoryVectorIndex:
    """A stand-in ChunkIndex recording what it was given (substring match as 'vector')."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[Chunk]] = {}
        self.upserts: list[str] = []

    @property
    def retriever(self) -> Retriever:
        return "vector"

    def search(self, query: str, k: int = 5) -> list[Hit]:
        found = [c for chunks in self.chunks.values() for c in chunks if query in c.text]
        return [Hit(chunk=c, score=1.0, retriever="vector") for c in found[:k]]

    def upsert(
        self, document: str, chunks: Sequence[Chunk], *, on_batch: BatchProgress | None = None
    ) -> None:
        self.upserts.append(document)
        self.chunks[document] = list(chunks)

    def delete_documents(self, documents: Sequence[str]) -> None:
        for document in documents:
            self.chunks.pop(document, None)

    def documents(self) -> set[str]:
        return set(self.chunks)


@pytest.fixture(scope="module")
def tokenizer() -> SudachiTokenizer:
    return SudachiTokenizer("A")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "manual.md").write_text(
        "# 2. ログイン\n## 2.3 パスワード\nパスワードの有効期限は90日間です。\n", encoding="utf-8"
    )
    (folder / "sub" / "manual.pdf").write_bytes(
        make_pdf(["3.5 申請期限", "経費精算は翌月10日までに申請してください。"])
    )
    (folder / "notes.txt").write_text("交通費はICカードの履歴から取り込めます。", encoding="utf-8")
    (folder / "ignored.png").write_bytes(b"\x89PNG")
    return folder


def top(kb: KnowledgeBase, query: str, collection: str = "manual") -> str | None:
    hits = kb.keyword(collection).search(query, k=1)
    return hits[0].chunk.id if hits else None


def test_index_folder_then_search(docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer)
    progress: list[tuple[int, int, str]] = []
    report = kb.index_files([docs], on_progress=lambda *event: progress.append(event))
    assert report.ok
    assert report.added == ["manual.md", "notes.txt", "manual.pdf"]  # sorted by relative path
    assert progress == [(1, 3, "manual.md"), (2, 3, "notes.txt"), (3, 3, "manual.pdf")]
    assert top(kb, "パスワードの有効期限") == "manual.md#0"
    assert top(kb, "経費精算の締め切り") == "manual.pdf#0"
    assert kb.keyword("manual").search("経費精算", k=1)[0].source.page == 1
    assert kb.collections() == ["manual"]
    assert kb.vector("manual") is None
    stats = kb.stats()["manual"]
    assert stats["documents"] == 3 and stats["chunks"] == report.chunks
    assert stats["tokenizer"] == "sudachi-core-A"


def test_incremental_reindex(docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    root = tmp_path / "kb"
    KnowledgeBase(root, tokenizer=tokenizer).index_files([docs])

    kb = KnowledgeBase(root, tokenizer=tokenizer)  # a new process: state from disk
    second = kb.index_files([docs])
    assert second.unchanged == ["manual.md", "notes.txt", "manual.pdf"]
    assert not (second.added or second.updated or second.failed)
    assert second.chunks == 0

    (docs / "notes.txt").write_text("源泉徴収票は年末に配布します。", encoding="utf-8")
    third = kb.index_files([docs])
    assert third.updated == ["notes.txt"]
    assert third.unchanged == ["manual.md", "manual.pdf"]
    assert top(kb, "交通費") is None  # the old chunks are gone
    assert top(kb, "源泉徴収票") == "notes.txt#0"

    removed = kb.remove(["notes.txt"], "manual")
    assert removed.removed == ["notes.txt"]
    assert top(kb, "源泉徴収票") is None
    assert "notes.txt" not in kb.documents("manual")
    reopened = KnowledgeBase(root, tokenizer=tokenizer)
    assert top(reopened, "源泉徴収票") is None
    assert top(reopened, "パスワード") == "manual.md#0"


def test_documents_chunked_by_another_version_are_indexed_again(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "kb"
    KnowledgeBase(root, tokenizer=tokenizer).index_files([docs])
    # an upgrade changed what extraction/chunking make of the same bytes
    monkeypatch.setattr(knowledge_base, "CHUNKING_VERSION", knowledge_base.CHUNKING_VERSION + 1)
    again = KnowledgeBase(root, tokenizer=tokenizer).index_files([docs])
    assert again.updated == ["manual.md", "notes.txt", "manual.pdf"]
    assert not again.unchanged
    settled = KnowledgeBase(root, tokenizer=tokenizer).index_files([docs])
    assert settled.unchanged == ["manual.md", "notes.txt", "manual.pdf"]


def test_failing_files_are_reported_and_others_indexed(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer)
    kb.index_files([docs])
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "locked.pdf").write_bytes(encrypt(make_pdf(["機密情報"])))
    (bad / "corrupt.pdf").write_bytes(b"%PDF-1.4 garbage")
    (bad / "slides.pptx").write_bytes(b"pptx")
    (bad / "good.md").write_text("請求書は月末までに登録します。", encoding="utf-8")
    report = kb.index_files(
        [
            bad / "locked.pdf",
            bad / "corrupt.pdf",
            bad / "slides.pptx",
            bad / "missing.md",
            bad / "good.md",
        ]
    )
    failed = {failure.document: failure for failure in report.failed}
    assert set(failed) == {"locked.pdf", "corrupt.pdf", "slides.pptx", "missing.md"}
    assert failed["locked.pdf"].code == "DOCUMENT_ENCRYPTED"
    assert failed["corrupt.pdf"].code == "DOCUMENT_CORRUPT"
    assert ".pdf" in (failed["slides.pptx"].hint or "")
    assert failed["missing.md"].code == "FILE_NOT_FOUND"
    assert report.added == ["good.md"]
    assert not report.ok
    assert top(kb, "請求書") == "good.md#0"
    assert top(kb, "パスワード") == "manual.md#0"  # nothing indexed before is lost
    assert "locked.pdf" not in kb.documents("manual")
    assert report.to_dict()["failed"][0]["document"] == "locked.pdf"
    assert "失敗 4" in report.summary()


def test_a_file_that_breaks_keeps_its_previous_version(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer)
    kb.index_files([docs])
    (docs / "sub" / "manual.pdf").write_bytes(b"%PDF-1.4 now broken")
    report = kb.index_files([docs])
    assert [failure.document for failure in report.failed] == ["manual.pdf"]
    assert top(kb, "経費精算") == "manual.pdf#0"


def test_same_name_in_two_folders_is_an_error(tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "manual.md").write_text("本文", encoding="utf-8")
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer)
    with pytest.raises(UserInputError, match=r"manual\.md") as caught:
        kb.index_files([tmp_path / "a", tmp_path / "b"])
    assert len(caught.value.details["paths"]) == 2
    assert kb.collections() == []
    same = kb.index_files([tmp_path / "a" / "manual.md", tmp_path / "a" / "manual.md"])
    assert same.added == ["manual.md"]


def test_faq_collection(tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    faq = tmp_path / "faq.csv"
    faq.write_bytes("質問,回答\n領収書をなくした,紛失届を出してください。\n".encode("cp932"))
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer)
    report = kb.index_files([faq], "qa", faq=True)
    assert report.added == ["faq.csv"]
    hit = kb.keyword("qa").search("領収書を紛失", k=1)[0]
    assert hit.chunk.metadata["answer"] == "紛失届を出してください。"
    assert hit.source.row == 1
    assert kb.documents("qa")["faq.csv"]["kind"] == "faq"
    # the same file as a document is a different kind: re-indexed, not "unchanged"
    assert kb.index_files([faq], "qa").updated == ["faq.csv"]
    bad = tmp_path / "bad.csv"
    bad.write_text("項目,内容\na,b\n", encoding="utf-8")
    failure = kb.index_files([bad], "qa", faq=True).failed[0]
    assert failure.code == "FAQ_COLUMN_NOT_FOUND"
    assert sorted(kb.collections()) == ["qa"]


def _faq(tmp_path: Path, rows: int) -> Path:
    faq = tmp_path / "faq.csv"
    lines = [f"申請{n}の期限は？,申請{n}は翌月{n}日までです。" for n in range(1, rows + 1)]
    faq.write_text("質問,回答\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return faq


def test_progress_moves_while_a_file_is_embedded_batch_by_batch(
    tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    embeddings = TimingOutEmbeddings(most=2)  # a slow server: batches of 4 time out
    kb = KnowledgeBase(
        tmp_path / "kb",
        tokenizer=tokenizer,
        vector_index_factory=lambda name: VectorIndex(name, embeddings, batch_size=4),
    )
    progress: list[tuple[int, int, str]] = []
    report = kb.index_files(
        [_faq(tmp_path, 5)], "qa", faq=True, on_progress=lambda *event: progress.append(event)
    )
    assert report.ok and report.chunks == 5
    assert progress == [
        (0, 1, "faq.csv（埋め込み 2/5 チャンク）"),
        (0, 1, "faq.csv（埋め込み 4/5 チャンク）"),
        (1, 1, "faq.csv"),
    ]
    assert embeddings.sizes == [4, 2, 2, 1]
    assert kb.vectors_complete("qa")


def test_a_text_the_embeddings_server_cannot_answer_in_time_is_reported(
    tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    embeddings = TimingOutEmbeddings(most=0)
    kb = KnowledgeBase(
        tmp_path / "kb",
        tokenizer=tokenizer,
        vector_index_factory=lambda name: VectorIndex(name, embeddings, batch_size=4),
    )
    [failure] = kb.index_files([_faq(tmp_path, 3)], "qa", faq=True).failed
    assert failure.code == "LLM_ERROR"
    assert "時間内に応答しませんでした" in failure.message
    assert "KEIRI_AGENT_REQUEST_TIMEOUT_S" in (failure.hint or "")
    assert kb.documents("qa") == {}


def test_vector_index_factory(docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    vectors: dict[str, MemoryVectorIndex] = {}

    def factory(collection: str) -> MemoryVectorIndex:
        return vectors.setdefault(collection, MemoryVectorIndex())

    root = tmp_path / "kb"
    KnowledgeBase(root, tokenizer=tokenizer).index_files([docs])  # keyword only first
    kb = KnowledgeBase(root, tokenizer=tokenizer, vector_index_factory=factory)
    report = kb.index_files([docs])
    assert report.updated == ["manual.md", "notes.txt", "manual.pdf"]  # now also vectors
    assert vectors["manual"].documents() == {"manual.md", "notes.txt", "manual.pdf"}
    vector = kb.vector("manual")
    assert vector is not None
    assert vector.search("有効期限")[0].chunk.id == "manual.md#0"
    assert kb.index_files([docs]).unchanged == ["manual.md", "notes.txt", "manual.pdf"]
    kb.remove(["manual.md"], "manual")
    assert "manual.md" not in vectors["manual"].documents()


def test_vector_failure_leaves_the_file_for_next_time(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    class Failing(MemoryVectorIndex):
        def upsert(
            self, document: str, chunks: Sequence[Chunk], *, on_batch: BatchProgress | None = None
        ) -> None:
            raise ConnectionError("qdrant is down")

    kb = KnowledgeBase(
        tmp_path / "kb", tokenizer=tokenizer, vector_index_factory=lambda _: Failing()
    )
    report = kb.index_files([docs / "manual.md"])
    assert report.failed[0].code == "INDEX_FAILED"
    assert "qdrant is down" in report.failed[0].message
    assert "manual.md" not in kb.documents("manual")


def test_unknown_collection_and_bad_names(tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer)
    with pytest.raises(UserInputError, match="コレクション 'manual' はありません"):
        kb.keyword("manual")
    with pytest.raises(UserInputError, match="コレクションの名前として使えません"):
        kb.index_files([], "../escape")
    kb.index_files([], "manual")
    assert kb.collections() == ["manual"]
    assert len(kb.keyword("manual")) == 0
    report = kb.remove(["nothing.md"], "manual")
    assert report.failed[0].code == "DOCUMENT_NOT_INDEXED"


def test_for_workspace_uses_the_private_state_folder(keiri_home: Path) -> None:
    kb = KnowledgeBase.for_workspace(Settings())
    assert kb.root == keiri_home.resolve() / ".keiri" / "knowledge" / "helpdesk"
    assert KnowledgeBase.for_workspace(Settings(), "research").root.name == "research"


def test_saved_after_each_file(docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer) -> None:
    root = tmp_path / "kb"
    kb = KnowledgeBase(root, tokenizer=tokenizer)
    seen: list[set[str]] = []

    def on_progress(done: int, total: int, document: str) -> None:
        seen.append(KeywordIndex.open(root / "manual" / "keyword", tokenizer).documents())

    kb.index_files([docs], on_progress=on_progress)
    assert seen == [
        {"manual.md"},
        {"manual.md", "notes.txt"},
        {"manual.md", "notes.txt", "manual.pdf"},
    ]


# --------------------------------------------------------------------------- shared use


def test_two_instances_on_one_folder_do_not_lose_each_others_documents(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    """A CLI run and an app session, say: each sees and keeps what the other indexed."""
    root = tmp_path / "kb"
    first = KnowledgeBase(root, tokenizer=tokenizer)
    second = KnowledgeBase(root, tokenizer=tokenizer)
    first.index_files([docs / "manual.md"])
    assert second.documents("manual").keys() == {"manual.md"}  # read after the other wrote

    second.index_files([docs / "notes.txt"])
    first.index_files([docs / "sub"])  # first's cached copy is stale: it must re-read

    for kb in (first, second, KnowledgeBase(root, tokenizer=tokenizer)):
        assert kb.documents("manual").keys() == {"manual.md", "notes.txt", "manual.pdf"}
        assert kb.keyword("manual").search("ICカード")[0].source.document == "notes.txt"


def test_files_indexed_without_vectors_get_them_and_missing_vectors_are_rebuilt(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    root = tmp_path / "kb"
    KnowledgeBase(root, tokenizer=tokenizer).index_files([docs / "manual.md"])  # offline
    store = MemoryVectorIndex()
    kb = KnowledgeBase(root, tokenizer=tokenizer, vector_index_factory=lambda _: store)
    assert kb.vectors_complete("manual") is False  # keyword only so far

    assert kb.index_files([docs / "manual.md"]).updated == ["manual.md"]
    assert kb.vectors_complete("manual") is True

    # the vector store lost its data (folder deleted): the next run re-embeds
    emptied = MemoryVectorIndex()
    fresh = KnowledgeBase(root, tokenizer=tokenizer, vector_index_factory=lambda _: emptied)
    assert fresh.vectors_complete("manual") is False
    assert fresh.index_files([docs / "manual.md"]).updated == ["manual.md"]
    assert emptied.documents() == {"manual.md"}


def test_vectors_of_documents_the_manifest_does_not_list_are_deleted(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    store = MemoryVectorIndex()
    store.upsert("old.md", [Chunk("old.md#0", "古いパスワード規程", Source("old.md"))])
    kb = KnowledgeBase(tmp_path / "kb", tokenizer=tokenizer, vector_index_factory=lambda _: store)
    kb.index_files([docs / "manual.md"])
    assert store.documents() == {"manual.md"}  # the leftover is gone, the new file is in
    assert kb.vector("manual") is store


def test_reading_a_collection_does_not_open_its_vector_index(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer
) -> None:
    root = tmp_path / "kb"
    KnowledgeBase(root, tokenizer=tokenizer).index_files([docs])
    opened: list[str] = []

    def factory(collection: str) -> MemoryVectorIndex:
        opened.append(collection)
        return MemoryVectorIndex()

    kb = KnowledgeBase(root, tokenizer=tokenizer, vector_index_factory=factory)
    assert kb.stats()["manual"]["documents"] == 3
    assert kb.documents("manual") and kb.keyword("manual").search("申請")
    assert opened == []  # e.g. a Qdrant folder held by another process does not matter here


def test_a_collection_another_process_is_indexing_is_a_clear_error(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import portalocker

    from keiri_agent.search import knowledge_base

    root = tmp_path / "kb"
    kb = KnowledgeBase(root, tokenizer=tokenizer)
    kb.index_files([docs / "manual.md"])
    monkeypatch.setattr(knowledge_base, "LOCK_TIMEOUT_S", 0.2)
    # another process holds the lock (a portalocker lock is per open file)
    with (
        portalocker.Lock(str(root / "manual" / ".lock"), timeout=1),
        pytest.raises(UserInputError) as caught,
    ):
        KnowledgeBase(root, tokenizer=tokenizer).index_files([docs / "notes.txt"])
    assert caught.value.code == "KNOWLEDGE_BASE_BUSY"
    assert KnowledgeBase(root, tokenizer=tokenizer).documents("manual").keys() == {"manual.md"}


@pytest.mark.parametrize("documents", ["[]", '{"a.md": 3}', '"x"'])
def test_a_manifest_of_the_wrong_shape_is_reported_as_corrupt(
    docs: Path, tmp_path: Path, tokenizer: SudachiTokenizer, documents: str
) -> None:
    root = tmp_path / "kb"
    KnowledgeBase(root, tokenizer=tokenizer).index_files([docs / "manual.md"])
    (root / "manual" / "manifest.json").write_text(
        '{"format": 1, "documents": ' + documents + "}", encoding="utf-8"
    )
    with pytest.raises(UserInputError) as caught:
        KnowledgeBase(root, tokenizer=tokenizer).stats()
    assert caught.value.code == "KNOWLEDGE_BASE_CORRUPT"
    assert str(root / "manual") in (caught.value.hint or "")
