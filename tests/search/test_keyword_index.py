"""KeywordIndex: BM25 ranking, upsert/delete, persistence, tokenizer mismatch, threads."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from keiri_agent.search.keyword import IndexMismatchError, KeywordIndex
from keiri_agent.search.models import PAGE_STARTS, Chunk, ChunkIndex, Searcher, Source
from keiri_agent.search.stored import KnowledgeBaseCorruptError
from keiri_agent.search.tokenize import CharNgramTokenizer, SudachiTokenizer

TEXTS = {
    "manual.pdf": [
        ("パスワードの有効期限は90日間です。期限が切れる前に変更してください。", "2.3 パスワード"),
        ("パスワードを5回続けて間違えるとアカウントがロックされます。", "2.4 ロック"),
        ("経費精算は、経費が発生した日の翌月10日までに申請してください。", "3.5 申請期限"),
        (
            "交通費の申請では、乗車区間と運賃を入力します。ICカードの履歴も取り込めます。",
            "3.4 交通費",
        ),
        ("エラーE1023は添付ファイルのサイズが10MBを超えたときに表示されます。", "5.3 エラー"),
    ],
    "faq.csv": [
        ("Q: 領収書をなくしました\nA: 紛失届を提出してください。", None),
        ("Q: 承認者が不在です\nA: 代理承認者を設定してください。", None),
    ],
}


def chunks_of(document: str) -> list[Chunk]:
    return [
        Chunk(
            f"{document}#{i}",
            text,
            Source(document, page=1 if document.endswith("pdf") else None, heading=heading),
        )
        for i, (text, heading) in enumerate(TEXTS[document])
    ]


@pytest.fixture(scope="module")
def tokenizer() -> SudachiTokenizer:
    return SudachiTokenizer("A")


@pytest.fixture
def index(tokenizer: SudachiTokenizer) -> KeywordIndex:
    index = KeywordIndex(tokenizer)
    for document in TEXTS:
        index.upsert(document, chunks_of(document))
    return index


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("パスワードの有効期限は何日？", "manual.pdf#0"),
        ("何回間違えるとロックされますか", "manual.pdf#1"),
        ("経費精算の締め切りはいつ", "manual.pdf#2"),
        ("ＩＣカードで交通費", "manual.pdf#3"),
        ("Ｅ１０２３", "manual.pdf#4"),
        ("領収書を紛失した", "faq.csv#0"),
        ("代理承認", "faq.csv#1"),
    ],
)
def test_bm25_ranks_the_right_chunk_first(index: KeywordIndex, query: str, expected: str) -> None:
    hits = index.search(query, k=3)
    assert hits[0].chunk.id == expected
    assert hits[0].retriever == "keyword"
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert all(hit.score > 0 for hit in hits)


def test_heading_terms_are_searchable(index: KeywordIndex) -> None:
    assert index.search("申請期限", k=1)[0].chunk.id == "manual.pdf#2"


def test_no_match_and_degenerate_queries(index: KeywordIndex) -> None:
    assert index.search("量子コンピューター", k=5) == []
    assert index.search("", k=5) == []
    assert index.search("。、", k=5) == []
    assert index.search("パスワード", k=0) == []
    assert len(index.search("申請", k=1)) == 1


def test_empty_index(tokenizer: SudachiTokenizer) -> None:
    assert KeywordIndex(tokenizer).search("パスワード") == []


def test_protocols(index: KeywordIndex) -> None:
    assert isinstance(index, Searcher)
    chunk_index: ChunkIndex = index
    assert chunk_index.retriever == "keyword"
    assert index.documents() == {"manual.pdf", "faq.csv"}
    assert len(index) == 7


def test_upsert_replaces_the_documents_chunks(index: KeywordIndex) -> None:
    replacement = [
        Chunk("faq.csv#0", "Q: 給与明細はどこ\nA: ポータルで確認できます。", Source("faq.csv"))
    ]
    index.upsert("faq.csv", replacement)
    assert index.search("領収書を紛失した", k=5) == []
    assert index.search("給与明細", k=1)[0].chunk == replacement[0]
    assert len(index) == 6
    assert index.chunks("faq.csv") == replacement


def test_upsert_rejects_chunks_of_another_document(index: KeywordIndex) -> None:
    with pytest.raises(ValueError, match="belongs to"):
        index.upsert("other.md", chunks_of("faq.csv"))


def test_delete_documents(index: KeywordIndex) -> None:
    index.delete_documents(["manual.pdf", "unknown.pdf"])
    assert index.documents() == {"faq.csv"}
    assert index.search("パスワード") == []
    index.upsert("faq.csv", [])
    assert index.documents() == set()
    assert len(index) == 0


def test_many_updates_compact_and_keep_results(tokenizer: SudachiTokenizer) -> None:
    index = KeywordIndex(CharNgramTokenizer())
    for round_ in range(30):
        index.upsert(
            "big.md",
            [
                Chunk(f"big.md#{i}", f"文書{i}の本文{round_}です", Source("big.md"))
                for i in range(100)
            ],
        )
    assert len(index) == 100
    assert index.search("文書7の本文29", k=1)[0].chunk.id == "big.md#7"


def test_persistence_round_trip(
    index: KeywordIndex, tokenizer: SudachiTokenizer, tmp_path: Path
) -> None:
    folder = tmp_path / "kw"
    index.save(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["index.json"]
    loaded = KeywordIndex.open(folder, tokenizer)
    assert loaded.documents() == index.documents()
    for query in ["パスワードの有効期限", "ロック", "経費精算", "E1023", "代理承認"]:
        assert loaded.search(query, k=5) == index.search(query, k=5)
    assert loaded.chunks("manual.pdf")[0].source == Source(
        "manual.pdf", page=1, heading="2.3 パスワード"
    )


def test_open_missing_folder_is_empty_and_save_uses_it(
    tokenizer: SudachiTokenizer, tmp_path: Path
) -> None:
    folder = tmp_path / "new"
    index = KeywordIndex.open(folder, tokenizer)
    assert len(index) == 0
    index.upsert("a.md", [Chunk("a.md#0", "請求書の発行", Source("a.md"))])
    index.save()
    assert KeywordIndex.open(folder, tokenizer).search("請求書")[0].chunk.id == "a.md#0"


def test_save_without_folder_is_an_error(tokenizer: SudachiTokenizer) -> None:
    with pytest.raises(ValueError, match="no folder"):
        KeywordIndex(tokenizer).save()


def test_tokenizer_mismatch_is_refused_or_rebuilt(index: KeywordIndex, tmp_path: Path) -> None:
    index.save(tmp_path)
    with pytest.raises(IndexMismatchError, match="sudachi-core-A") as caught:
        KeywordIndex.open(tmp_path, CharNgramTokenizer())
    assert caught.value.details["requested"] == "char2gram"
    rebuilt = KeywordIndex.open(tmp_path, CharNgramTokenizer(), rebuild=True)
    assert rebuilt.search("代理承認", k=1)[0].chunk.id == "faq.csv#1"
    rebuilt.save()
    assert KeywordIndex.open(tmp_path, CharNgramTokenizer()).documents() == index.documents()


def test_unreadable_index_is_reported_as_corrupt(
    tokenizer: SudachiTokenizer, tmp_path: Path
) -> None:
    (tmp_path / "index.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(KnowledgeBaseCorruptError, match=r"index\.json"):
        KeywordIndex.open(tmp_path, tokenizer)


def test_newer_index_is_a_clear_error(tokenizer: SudachiTokenizer, tmp_path: Path) -> None:
    content = json.dumps({"format": 99, "tokenizer": "x", "chunks": []})
    (tmp_path / "index.json").write_text(content, encoding="utf-8")
    with pytest.raises(IndexMismatchError, match="index"):
        KeywordIndex.open(tmp_path, tokenizer)


def test_save_is_atomic_when_writing_fails(
    index: KeywordIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "kw"
    index.save(folder)
    before = (folder / "index.json").read_text(encoding="utf-8")

    def broken(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("keiri_agent.private.os.replace", broken)
    index.delete_documents(["faq.csv"])
    with pytest.raises(OSError, match="disk full"):
        index.save()
    assert (folder / "index.json").read_text(encoding="utf-8") == before
    assert [p.name for p in folder.iterdir()] == ["index.json"]


def test_concurrent_searches_match_serial(index: KeywordIndex) -> None:
    queries = [
        "パスワードの有効期限",
        "ロック",
        "経費精算の締め切り",
        "E1023",
        "代理承認",
        "交通費",
        "領収書",
    ] * 30
    serial = [index.search(query, k=3) for query in queries]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(lambda q: index.search(q, k=3), queries)) == serial


def test_searches_during_updates_do_not_fail(index: KeywordIndex) -> None:
    def update(i: int) -> None:
        index.upsert("faq.csv", chunks_of("faq.csv")[: 1 + i % 2])

    with ThreadPoolExecutor(8) as pool:
        futures = [
            pool.submit(update, i) if i % 4 == 0 else pool.submit(index.search, "領収書", 3)
            for i in range(200)
        ]
        for future in futures:
            future.result()
    assert index.search("パスワードの有効期限", k=1)[0].chunk.id == "manual.pdf#0"


def test_stats(index: KeywordIndex) -> None:
    stats = index.stats()
    assert stats["documents"] == 2 and stats["chunks"] == 7
    assert stats["tokenizer"] == "sudachi-core-A"


def test_a_chunk_s_page_starts_survive_saving(tokenizer: SudachiTokenizer, tmp_path: Path) -> None:
    spanning = Chunk(
        "m.pdf#0",
        "承認は経理部が行います。\n領収書は7年間保管します。",
        Source("m.pdf", page=3),
        {PAGE_STARTS: "0:3,13:4"},
    )
    index = KeywordIndex.open(tmp_path / "kw", tokenizer)
    index.upsert("m.pdf", [spanning])
    index.save()
    [loaded] = KeywordIndex.open(tmp_path / "kw", tokenizer).chunks("m.pdf")
    assert loaded.page_starts == ((0, 3), (13, 4))
    assert loaded.page_of(loaded.text.index("領収書")) == 4
