"""The research sample knowledge base (samples/research) and the research question set.

Checks the committed corpus through the project's own extractor (the way the research agent
will index it), that the committed PDF is what ``scripts/build_research_samples.py`` builds,
and that every supporting passage of ``benchmarks/data/research_questions.jsonl`` is in the
named document, on the named page for PDFs.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from functools import cache
from importlib.resources import files
from pathlib import Path
from types import ModuleType

import pytest

from keiri_agent.documents.extract import ExtractedText, extract_text

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(str(files("keiri_agent.samples")))
RESEARCH_DOCS = SAMPLES / "research" / "docs"
HELPDESK_DOCS = SAMPLES / "helpdesk" / "docs"
QUESTIONS = ROOT / "benchmarks" / "data" / "research_questions.jsonl"
DOCUMENTS = (
    "accounting_regulations.md",
    "invoice_style_guide.pdf",
    "notice_20230403_invoice_system.md",
    "notice_20230801_invoice_template.md",
    "notice_20230915_registration_check.md",
    "notice_20230920_transfer_fees.md",
    "notice_20231201_electronic_books.md",
)
REGISTRATION_NUMBER = "T1234567890123"


def document_path(name: str) -> Path:
    """A research document, or a HelpDesk one (questions may target either corpus)."""
    research = RESEARCH_DOCS / name
    return research if research.is_file() else HELPDESK_DOCS / name


@cache
def extracted(name: str) -> ExtractedText:
    path = document_path(name)
    return extract_text(path.read_bytes(), path.name)


@cache
def questions() -> list[dict]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def build_script() -> ModuleType:
    """``scripts/build_research_samples.py`` (it imports its sibling, the HelpDesk builder)."""
    scripts = str(ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    spec = importlib.util.spec_from_file_location(
        "build_research_samples", ROOT / "scripts" / "build_research_samples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_holds_exactly_the_corpus_and_the_guide_source_is_committed() -> None:
    assert sorted(p.name for p in RESEARCH_DOCS.iterdir()) == sorted(DOCUMENTS)
    assert (SAMPLES / "research" / "sources" / "invoice_style_guide.md").is_file()


def test_committed_guide_pdf_is_what_the_build_script_produces() -> None:
    data, pages = build_script().render_guide()
    assert data == (RESEARCH_DOCS / "invoice_style_guide.pdf").read_bytes()
    assert pages == len(extracted("invoice_style_guide.pdf").pages)


def test_corpus_size_is_about_ten_to_twenty_pages() -> None:
    guide = extracted("invoice_style_guide.pdf")
    assert 6 <= len(guide.pages) <= 10
    assert all(text for _, text in guide.pages)
    markdown_chars = sum(len(extracted(name).text) for name in DOCUMENTS if name.endswith(".md"))
    # ~1,000 characters of Japanese text make one A4 page
    assert 10 <= len(guide.pages) + markdown_chars / 1_000 <= 20


def test_guide_page_numbers_and_footer_are_removed_by_the_extractor() -> None:
    path = RESEARCH_DOCS / "invoice_style_guide.pdf"
    raw = extract_text(path.read_bytes(), path.name, normalize=False)
    for number, text in raw.pages:
        assert f"株式会社XYZ商事 請求書様式ガイド - {number} -" in text
    guide = extracted("invoice_style_guide.pdf")
    assert "請求書様式ガイド -" not in guide.text
    chapters = {number: text.split("\n", 1)[0] for number, text in guide.pages}
    assert chapters[2] == "1. このガイドについて"
    assert chapters[5] == "4. 消費税額の端数処理"


def test_notices_are_dated_and_numbered() -> None:
    for name in DOCUMENTS:
        if not name.startswith("notice_"):
            continue
        date = re.fullmatch(r"notice_(\d{4})(\d{2})(\d{2})_\w+\.md", name)
        assert date, name
        year, month, day = (int(part) for part in date.groups())
        header = extracted(name).text.split("\n")[2]
        assert re.match(r"経理部通知 第\d{4}-\d{2}号 / ", header), name
        assert f"{year}年{month}月{day}日" in header, name


@pytest.mark.parametrize(
    ("fact", "documents"),
    [
        (REGISTRATION_NUMBER, DOCUMENTS[:3]),
        ("当社名と所在地の直下", ("accounting_regulations.md", DOCUMENTS[1], DOCUMENTS[3])),
        ("税率ごとに1回", DOCUMENTS[:3]),
        ("2023年10月1日", (*DOCUMENTS[:4], DOCUMENTS[5])),
        ("第2版は2023年9月30日", (DOCUMENTS[3],)),
        ("「売上値引」", (DOCUMENTS[0], DOCUMENTS[5])),
        ("1万円未満", (DOCUMENTS[0], DOCUMENTS[1], DOCUMENTS[5])),
        ("毎年4月に全件を再確認", (DOCUMENTS[0], DOCUMENTS[4])),
        ("仕入税額相当額の80%", (DOCUMENTS[0], DOCUMENTS[4])),
        ("経理\\電子取引\\発行", (DOCUMENTS[1], DOCUMENTS[6])),
        ("「※」", (DOCUMENTS[1], DOCUMENTS[2])),
    ],
)
def test_shared_facts_agree_across_documents(fact: str, documents: tuple[str, ...]) -> None:
    for name in documents:
        assert fact in extracted(name).text, (fact, name)


def test_retention_periods_agree() -> None:
    assert "発行した請求書の控えと受領した請求書: 7年" in extracted(DOCUMENTS[0]).text
    assert "発行した請求書の控えは、7年間保存します" in extracted(DOCUMENTS[1]).text
    assert "保存期間は7年です" in extracted(DOCUMENTS[6]).text


def test_guide_rounding_example_matches_a_hand_computation() -> None:
    ten, eight = 3_333 + 4_444 + 5_555, 1_234
    tax_ten, tax_eight = ten * 10 // 100, eight * 8 // 100  # truncated once per rate
    per_line = sum(round(amount / 10) for amount in (3_333, 4_444, 5_555))
    page = dict(extracted("invoice_style_guide.pdf").pages)[5]
    assert f"10%対象の合計額は{ten:,}円で" in page
    assert f"切り捨てて{tax_ten:,}円です" in page
    assert f"切り捨てて{tax_eight}円です" in page
    assert f"={ten + tax_ten + eight + tax_eight:,}円です" in page
    assert f"={per_line:,}円となり" in page


def test_question_file_shape() -> None:
    items = questions()
    assert len(items) >= 15
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids)
    assert len({item["question"] for item in items}) == len(items)
    for item in items:
        assert set(item) == {"id", "question", "support", "answerable"}
        assert item["question"].strip()
        assert item["answerable"] is bool(item["support"])
        for support in item["support"]:
            assert set(support) == {"document", "page", "contains"}
    assert sum(1 for item in items if not item["answerable"]) == 2
    assert sum(1 for item in items if len(item["support"]) >= 3) >= 3
    readme = (
        "インボイス制度で当社の請求書フォーマットに必要な変更点を、社内規程と過去の通知から調べて"
    )
    assert readme in {item["question"] for item in items}


def test_every_supporting_passage_is_on_its_page() -> None:
    missing = []
    for item in questions():
        for support in item["support"]:
            name, page, contains = support["document"], support["page"], support["contains"]
            assert document_path(name).is_file(), name
            assert 6 <= len(contains) <= 50, contains
            document = extracted(name)
            if name.endswith(".pdf"):
                assert isinstance(page, int), (item["id"], name)
                text = dict(document.pages).get(page, "")
            else:
                assert page is None, (item["id"], name)
                text = document.text
            if contains not in text:
                missing.append((item["id"], name, page, contains))
    assert not missing
