"""The HelpDesk sample knowledge base (samples/helpdesk) and its retrieval question set.

Checks the committed outputs of ``scripts/build_helpdesk_samples.py`` (nothing is rebuilt
here) through the project's own extractor, the way the HelpDesk agent will index them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from functools import cache
from importlib.resources import files
from pathlib import Path

import pytest

from keiri_agent.documents.extract import ExtractedText, extract_text

HELPDESK = Path(str(files("keiri_agent.samples") / "helpdesk"))
DOCUMENTS = ("xyz_manual.pdf", "xyz_notifications.md", "xyz_release_notes.docx", "xyz_faq.csv")
FAQ_HEADER = ["id", "category", "question", "answer"]
FOOTER = "XYZシステム 利用者マニュアル"


def sample_path(name: str) -> Path:
    """Manuals live in docs/ (what gets indexed as the manual); the FAQ next to it."""
    return HELPDESK / name if name.endswith(".csv") else HELPDESK / "docs" / name


@cache
def extracted(name: str) -> ExtractedText:
    path = sample_path(name)
    return extract_text(path.read_bytes(), path.name)


@cache
def raw_manual() -> ExtractedText:
    """The manual without normalisation (footers and line breaks kept)."""
    path = sample_path("xyz_manual.pdf")
    return extract_text(path.read_bytes(), path.name, normalize=False)


@cache
def faq_rows() -> list[dict[str, str]]:
    data = (HELPDESK / "xyz_faq.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf"), "the FAQ must be UTF-8 with a BOM"
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


@cache
def questions() -> list[dict]:
    lines = (HELPDESK / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_the_samples_and_their_sources_are_committed() -> None:
    for name in DOCUMENTS:
        assert sample_path(name).is_file(), name
    # docs/ holds exactly the manuals to index (no sources, no question set)
    assert sorted(p.name for p in (HELPDESK / "docs").iterdir()) == sorted(DOCUMENTS[:3])
    for name in ("questions.jsonl", "sources/xyz_manual.md"):
        assert (HELPDESK / name).is_file(), name
    assert (HELPDESK / "sources" / "xyz_release_notes.md").is_file()
    script = Path(__file__).resolve().parents[2] / "scripts" / "build_helpdesk_samples.py"
    assert script.is_file()


def test_manual_pdf_has_ten_to_fourteen_pages() -> None:
    manual = extracted("xyz_manual.pdf")
    assert 10 <= len(manual.pages) <= 14
    assert not manual.truncated
    assert all(text for _, text in manual.pages)


@pytest.mark.parametrize(
    "heading",
    [
        "1. はじめに",
        "1.3 動作環境",
        "2. ログインとパスワード",
        "2.2 パスワードの条件",
        "2.5 アカウントロックの解除",
        "2.6 二要素認証",
        "3. 経費精算の申請",
        "4. 承認ワークフロー",
        "5. エラーコード一覧",
        "6. よくある操作のヒント",
    ],
)
def test_manual_headings_survive_extraction_as_their_own_lines(heading: str) -> None:
    lines = extracted("xyz_manual.pdf").text.split("\n")
    assert heading in lines


def test_manual_lists_at_least_twelve_error_codes() -> None:
    text = extracted("xyz_manual.pdf").text
    chapter = text[text.index("5. エラーコード一覧") : text.index("6. よくある操作のヒント")]
    codes = set(re.findall(r"^(E1\d{3})", chapter, flags=re.MULTILINE))
    assert len(codes) >= 12
    assert "E1023" in codes


def test_manual_footer_is_on_every_page_but_removed_by_the_extractor() -> None:
    for number, text in raw_manual().pages:
        assert f"{FOOTER} - {number} -" in text
    manual = extracted("xyz_manual.pdf")
    assert FOOTER not in manual.text
    assert not re.search(r"- \d+ -", manual.text)
    assert manual.text.startswith(
        "XYZシステム\n利用者マニュアル"
    )  # the cover title, its lines kept


def test_manual_paragraphs_wrap_and_are_joined_again() -> None:
    raw = raw_manual().text
    sentence = "正しいパスワードを入力してもログインできず"
    assert sentence in extracted("xyz_manual.pdf").text
    assert max(len(line) for line in raw.splitlines()) < 60  # lines really wrap in the PDF


def test_release_notes_docx_has_headings_and_table_text() -> None:
    from docx import Document

    text = extracted("xyz_release_notes.docx").text
    for version in ("3.2.0", "3.1.0", "3.0.0"):
        assert f"バージョン{version}(" in text
    for section in ("新機能", "改善", "不具合修正", "既知の問題"):
        assert f"\n{section}\n" in text
    assert "3.2.0\t2025年6月2日\t" in text  # a table row, tab-separated
    document = Document(str(sample_path("xyz_release_notes.docx")))
    assert document.tables
    styles = {p.style.name for p in document.paragraphs}
    assert {"Heading 1", "Heading 2"} <= styles


def test_notifications_markdown_headings() -> None:
    text = extracted("xyz_notifications.md").text
    for heading in (
        "# 通知設定",
        "## メール通知",
        "## Teams通知",
        "## 通知のタイミング",
        "## 通知が届かない時の確認点",
        "### Teams通知が届かない場合",
    ):
        assert re.search(f"^{re.escape(heading)}$", text, flags=re.MULTILINE), heading


def test_faq_csv_header_and_rows() -> None:
    rows = faq_rows()
    assert list(rows[0]) == FAQ_HEADER
    assert 40 <= len(rows) <= 60
    assert len({row["id"] for row in rows}) == len(rows)
    assert all(row["category"] and row["question"] and row["answer"] for row in rows)
    categories = {row["category"] for row in rows}
    assert {"ログイン", "パスワード", "アカウントロック", "通知", "経費精算", "承認"} <= categories
    assert extracted("xyz_faq.csv").text.startswith("id,category,question,answer\n")


@pytest.mark.parametrize(
    ("fact", "documents"),
    [
        ("12文字以上", ("xyz_manual.pdf", "xyz_faq.csv")),
        ("8文字から12文字に", ("xyz_manual.pdf", "xyz_release_notes.docx")),
        ("有効期限は90日", ("xyz_manual.pdf", "xyz_faq.csv")),
        ("5回続けて間違える", ("xyz_manual.pdf", "xyz_faq.csv")),
        ("30分間ロック", ("xyz_manual.pdf", "xyz_faq.csv")),
        ("翌月10日", ("xyz_manual.pdf", "xyz_faq.csv")),
        ("3営業日が経過", ("xyz_manual.pdf", "xyz_notifications.md", "xyz_release_notes.docx")),
        ("毎朝8時", ("xyz_notifications.md", "xyz_faq.csv", "xyz_release_notes.docx")),
        ("最長30日", ("xyz_manual.pdf", "xyz_faq.csv", "xyz_release_notes.docx")),
    ],
)
def test_shared_facts_agree_across_documents(fact: str, documents: tuple[str, ...]) -> None:
    for name in documents:
        assert fact in extracted(name).text, (fact, name)


def test_question_set_shape() -> None:
    items = questions()
    assert len(items) >= 36
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids)
    for item in items:
        assert set(item) == {"id", "question", "expected", "parts"}
        assert item["question"].strip()
        if item["expected"]:
            assert item["parts"] == len(item["expected"])
    multi = [item for item in items if item["parts"] >= 2]
    assert len(multi) >= 6
    assert any(item["parts"] == 4 for item in multi)
    assert any(
        item["question"] == "パスワードの条件と、ロックされた時の解除方法を教えて" for item in multi
    )
    assert sum(1 for item in items if not item["expected"]) >= 2
    faq_only = [
        item
        for item in items
        if item["expected"] and {e["document"] for e in item["expected"]} == {"xyz_faq.csv"}
    ]
    assert len(faq_only) >= 6


def test_every_expected_passage_is_in_its_document() -> None:
    answers = [row["answer"] for row in faq_rows()]
    missing = []
    for item in questions():
        for expected in item["expected"]:
            document, contains = expected["document"], expected["contains"]
            assert document in DOCUMENTS, document
            assert 8 <= len(contains) <= 30, contains
            found = (
                any(contains in answer for answer in answers)
                if document == "xyz_faq.csv"
                else contains in extracted(document).text
            )
            if not found:
                missing.append((item["id"], document, contains))
    assert not missing
