"""Reference documents for Plan generation: extraction (shared budget, failures) and digest."""

from __future__ import annotations

import io

import pytest
from openpyxl import Workbook
from pypdf import PdfReader, PdfWriter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from keiri_agent.plans.design import documents as design_documents
from keiri_agent.plans.design.documents import (
    HEADING,
    XLSX_MAX_COLUMNS,
    XLSX_MAX_ROWS,
    digest_documents,
    extract_design_documents,
)
from keiri_agent.plans.design.models import NO_DOCUMENTS, DesignDocument

FONT = "HeiseiKakuGo-W5"
pdfmetrics.registerFont(UnicodeCIDFont(FONT))


def make_pdf(pages: list[str], *, image: bool = False) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for text in pages:
        pdf.setFont(FONT, 12)
        pdf.drawString(72, 780, text)
        if image:
            from PIL import Image
            from reportlab.lib.utils import ImageReader

            picture = Image.new("RGB", (8, 8), (200, 0, 0))
            pdf.drawImage(ImageReader(picture), 72, 500, 40, 40)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def encrypt(data: bytes) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(paragraphs: list[str], *, image: bool = False) -> bytes:
    from docx import Document

    document = Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if image:
        from PIL import Image

        picture = io.BytesIO()
        Image.new("RGB", (8, 8), (0, 0, 200)).save(picture, format="PNG")
        picture.seek(0)
        document.add_picture(picture)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_xlsx(rows: int, columns: int) -> bytes:
    workbook = Workbook()
    first = workbook.active
    assert first is not None
    first.title = "入金明細"
    for r in range(1, rows + 1):
        first.append([f"R{r}C{c}" for c in range(1, columns + 1)])
    second = workbook.create_sheet("別シート")
    second["A1"] = "二枚目のシートの内容"
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


# --- extraction ----------------------------------------------------------------------


def test_supported_files_are_read_in_order() -> None:
    docs = extract_design_documents(
        [
            ("規程.txt", "経費は月末に精算する。".encode()),
            ("手順.md", "# 手順\n1. 請求書を受け取る".encode()),
            ("手順書.docx", make_docx(["入金明細を確認する", "差異を報告する"])),
            ("規程.pdf", make_pdf(["社内規程 第1条"])),
        ]
    )
    assert [d.name for d in docs] == ["規程.txt", "手順.md", "手順書.docx", "規程.pdf"]
    assert not any(d.failed for d in docs)
    assert docs[0].text == "経費は月末に精算する。"
    assert "請求書を受け取る" in docs[1].text
    assert "入金明細を確認する" in docs[2].text and "差異を報告する" in docs[2].text
    assert "社内規程" in docs[3].text


def test_xlsx_reads_only_the_first_sheets_top_left_range() -> None:
    rows, columns = XLSX_MAX_ROWS + 30, XLSX_MAX_COLUMNS + 5
    [doc] = extract_design_documents([("様式.xlsx", make_xlsx(rows, columns))])
    assert not doc.failed and doc.truncated
    assert "R1C1" in doc.text and f"R{XLSX_MAX_ROWS}C{XLSX_MAX_COLUMNS}" in doc.text
    assert f"R{XLSX_MAX_ROWS + 1}C1" not in doc.text  # rows below the range
    assert f"R1C{XLSX_MAX_COLUMNS + 1}" not in doc.text  # columns right of it
    assert "二枚目" not in doc.text  # other sheets
    assert any("様式.xlsx" in w and "先頭シート" in w for w in doc.warnings)


def test_small_xlsx_first_sheet_is_whole() -> None:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["取引先", "金額"])
    sheet.append(["A社", 1200])
    out = io.BytesIO()
    workbook.save(out)
    [doc] = extract_design_documents([("一覧.xlsx", out.getvalue())])
    assert doc.text.splitlines()[1:] == ["取引先\t金額", "A社\t1200"]
    assert not doc.truncated and doc.warnings == ()


def test_character_budget_is_shared_across_files() -> None:
    files = [
        ("a.txt", ("あ" * 60).encode()),
        ("b.txt", ("い" * 60).encode()),
        ("c.txt", ("う" * 10).encode()),
    ]
    a, b, c = extract_design_documents(files, max_chars=100)
    assert a.text == "あ" * 60 and not a.truncated
    assert b.text == "い" * 40 and b.truncated  # 100 - 60 left for it
    assert c.text == "" and c.truncated and not c.failed
    assert any("c.txt" in w and "上限" in w for w in c.warnings)


def test_pdf_pages_past_the_limit_are_reported() -> None:
    [doc] = extract_design_documents(
        [("長い規程.pdf", make_pdf(["一頁目", "二頁目", "三頁目"]))], max_pdf_pages=2
    )
    assert "一頁目" in doc.text and "二頁目" in doc.text and "三頁目" not in doc.text
    assert doc.truncated
    assert any("先頭 2 ページ" in w for w in doc.warnings)


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("暗号.pdf", encrypt(make_pdf(["秘密"])), "パスワード"),
        ("壊れた.docx", b"PK\x03\x04 not really a zip", "壊れて"),
        ("壊れた.pdf", b"%PDF-1.7 garbage", "壊れて"),
        ("空.txt", b"", "空"),
        ("データ.zip", b"PK\x05\x06" + b"\0" * 18, ".zip"),
        ("スキャン.png", b"\x89PNG\r\n\x1a\n", "画像"),
    ],
)
def test_unreadable_files_fail_with_a_japanese_warning(name: str, data: bytes, words: str) -> None:
    [doc] = extract_design_documents([(name, data)])
    assert doc.failed and doc.text == ""
    [warning] = doc.warnings
    assert warning.startswith(f"{name}: ") and words in warning
    assert "ください" in warning  # says what to do


def test_a_failing_file_does_not_stop_the_others() -> None:
    docs = extract_design_documents(
        [("暗号.pdf", encrypt(make_pdf(["秘密"]))), ("規程.txt", "本文".encode())]
    )
    assert [d.failed for d in docs] == [True, False]
    assert docs[1].text == "本文"


def test_an_unexpected_library_error_is_a_failed_document(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(design_documents, "extract_text", explode)
    [doc] = extract_design_documents([("規程.txt", b"text")])
    assert doc.failed and "規程.txt" in doc.warnings[0]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("図入り.pdf", make_pdf(["図のある頁"], image=True)),
        ("図入り.docx", make_docx(["図のある手順"], image=True)),
    ],
)
def test_embedded_images_are_ignored_and_reported(name: str, data: bytes) -> None:
    [doc] = extract_design_documents([(name, data)])
    assert not doc.failed and "図のある" in doc.text
    assert any(name in w and "画像" in w for w in doc.warnings)


def test_no_image_warning_without_images() -> None:
    [doc] = extract_design_documents([("文字だけ.docx", make_docx(["本文"]))])
    assert doc.warnings == ()


# --- digest --------------------------------------------------------------------------


def doc(name: str, text: str) -> DesignDocument:
    return DesignDocument(name=name, text=text)


def test_digest_compresses_whitespace_and_drops_repeated_lines() -> None:
    first = "社外秘\n経費は   月末に\t精算する\n\n\n社外秘\n領収書を添付する"
    second = "社外秘\n　旅費は実費精算\n領収書を添付する"
    digest = digest_documents([doc("規程.txt", first), doc("手順.md", second)])
    expected = (
        "### 規程.txt\n社外秘\n経費は 月末に 精算する\n領収書を添付する\n\n"
        "### 手順.md\n旅費は実費精算"
    )
    assert digest.text == expected
    assert digest.provided and digest.warnings == ()


def test_digest_gives_each_document_a_fair_share() -> None:
    short = "短い規程です"
    long_lines = "\n".join(f"手順 {i:04d} を確認する" for i in range(1000))
    digest = digest_documents([doc("短い.txt", short), doc("長い.txt", long_lines)], max_chars=400)
    assert len(digest.text) <= 400
    short_part, long_part = digest.text.split("\n\n")
    assert short_part == f"{HEADING.format(name='短い.txt')}\n{short}"  # met in full
    assert long_part.startswith(HEADING.format(name="長い.txt") + "\n手順 0000 を確認する")
    assert long_part.endswith("…")
    # the long document got everything the short one left over
    assert len(digest.text) >= 400 - 20


def test_two_long_documents_share_equally() -> None:
    a = "\n".join(f"甲{i:04d}" for i in range(500))
    b = "\n".join(f"乙{i:04d}" for i in range(500))
    digest = digest_documents([doc("a.txt", a), doc("b.txt", b)], max_chars=1000)
    part_a, part_b = digest.text.split("\n\n")
    assert abs(len(part_a) - len(part_b)) <= 2


def test_none_given_is_no_documents_without_a_warning() -> None:
    digest = digest_documents([])
    assert digest.text == NO_DOCUMENTS and digest.warnings == ()


@pytest.mark.parametrize(
    "documents",
    [
        [DesignDocument(name="暗号.pdf", text="", failed=True, warnings=("暗号.pdf: 読めません",))],
        [doc("空白.txt", "  \n\t\n")],
    ],
)
def test_nothing_readable_is_no_documents_with_a_warning(documents: list[DesignDocument]) -> None:
    digest = digest_documents(documents)
    assert digest.text == NO_DOCUMENTS and not digest.provided
    assert any("参考資料から読み取れる文字がありません" in w for w in digest.warnings)
    for document in documents:  # each document's own warnings are kept
        for warning in document.warnings:
            assert warning in digest.warnings
