"""The second HelpDesk sample (samples/helpdesk_expense): a browser-printed manual PDF.

Checks the committed outputs of ``scripts/build_expense_helpdesk_samples.py`` (Chromium is
not needed here): the PDF is built the way browsers print (Type3 CJK fonts, page content in
Form XObjects) and the project's extractor reads it page by page.
"""

from __future__ import annotations

import csv
import io
from functools import cache
from importlib.resources import files
from pathlib import Path

from pypdf import PdfReader

from keiri_agent.documents.extract import ExtractedText, extract_text

SAMPLE = Path(str(files("keiri_agent.samples") / "helpdesk_expense"))
MANUAL = SAMPLE / "docs" / "keihi_manual.pdf"


@cache
def manual() -> ExtractedText:
    return extract_text(MANUAL.read_bytes(), MANUAL.name)


def test_the_sample_files_and_sources_are_committed() -> None:
    for path in (
        MANUAL,
        SAMPLE / "docs" / "keihi_release_notes.md",
        SAMPLE / "keihi_faq.csv",
        SAMPLE / "questions.jsonl",
        SAMPLE / "sources" / "keihi_manual.html",
    ):
        assert path.is_file(), path


def test_the_manual_is_printed_the_way_browsers_print() -> None:
    reader = PdfReader(MANUAL)
    assert len(reader.pages) >= 12
    for page in reader.pages:
        forms = page["/Resources"]["/XObject"]
        form = forms["/Fm0"].get_object()
        assert form["/Subtype"] == "/Form"
        fonts = [font.get_object() for font in form["/Resources"]["/Font"].values()]
        assert fonts and all(font["/Subtype"] == "/Type3" for font in fonts)
        assert all("/ToUnicode" in font for font in fonts)
        assert page.get_contents().get_data().strip() == b"q /Fm0 Do Q"


def test_every_page_is_read_with_its_chapter() -> None:
    pages = dict(manual().pages)
    assert not manual().warnings
    assert pages[1].startswith("ケイヒクラウド")
    assert pages[3].startswith("2. 経費申請の作成")
    assert pages[9].startswith("8. インボイス制度への対応")
    assert pages[14].startswith("12. お問い合わせ先")
    # Latin and CJK mixed words and label/value lines come through
    assert "REST APIを使用します" in pages[12]
    assert "ファイル形式:JPEG、PNG、PDF" in pages[4]
    assert "1. メニューの「経費申請」から「新規作成」をクリックします。" in pages[3]


def test_a_sentence_wraps_across_the_page_break() -> None:
    pages = dict(manual().pages)
    assert pages[10].endswith("変更前の承認経路のまま回")
    assert pages[11].startswith("付されます。")


def test_the_faq_is_utf8_with_bom_and_the_release_notes_name_versions() -> None:
    data = (SAMPLE / "keihi_faq.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert list(rows[0]) == ["id", "category", "question", "answer"]
    assert len(rows) >= 15
    notes = (SAMPLE / "docs" / "keihi_release_notes.md").read_text(encoding="utf-8")
    assert "## バージョン 4.2.0（2025年4月1日）" in notes
