"""extract_text on real files generated in the test: PDF, DOCX, XLSX, text; every failure."""

from __future__ import annotations

import io

import pytest
from openpyxl import Workbook
from pypdf import PdfReader, PdfWriter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from keiri_agent.documents import DocumentError, DocumentErrorCode, extract_text

FONT = "HeiseiKakuGo-W5"
pdfmetrics.registerFont(UnicodeCIDFont(FONT))


def make_pdf(pages: list[list[str]], *, actual_text: tuple[str, str] | None = None) -> bytes:
    """One page per list of lines; ``actual_text`` = (drawn glyphs, their /ActualText)."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for lines in pages:
        pdf.setFont(FONT, 12)  # the font is reset by showPage
        for i, line in enumerate(lines):
            pdf.drawString(72, 780 - 20 * i, line)
        if actual_text is not None:
            drawn, actual = actual_text
            hex_text = (b"\xfe\xff" + actual.encode("utf-16-be")).hex().upper()
            pdf.drawString(72, 500, "営業部")
            pdf._code.append(f"/Span <</ActualText <{hex_text}>>> BDC")
            pdf.drawString(108, 500, drawn)
            pdf._code.append("EMC")
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def image_only_pdf() -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.rect(72, 500, 200, 100, fill=1)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def encrypt(data: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx() -> bytes:
    from docx import Document

    document = Document()
    document.add_paragraph("経費精算の手順")
    table = document.add_table(rows=2, cols=3)
    for r, row in enumerate([["科目", "金額", "備考"], ["旅費", "12000", "出張"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("以上")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_xlsx() -> bytes:
    workbook = Workbook()
    first = workbook.active
    assert first is not None
    first.title = "売上"
    first.append(["月", "金額"])
    first.append(["4月", 1000])
    first.append(["5月", 2500.0])
    second = workbook.create_sheet("費用")
    second["B2"] = "家賃"
    second["C2"] = 300
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


# --- PDF ---------------------------------------------------------------------


def test_pdf_japanese_text_is_extracted_and_normalised() -> None:
    data = make_pdf([["請求書 第 3 回", "XYZ システム利用料 合計 12,345円"], ["2ページ目の本文"]])
    result = extract_text(data, "請求書.pdf")
    assert result.kind == "pdf"
    assert result.pages == (
        (1, "請求書 第3回\nXYZシステム利用料 合計12,345円"),
        (2, "2ページ目の本文"),
    )
    assert result.text == "請求書 第3回\nXYZシステム利用料 合計12,345円\n\n2ページ目の本文"
    assert not result.truncated


def test_pdf_reads_only_max_pages_and_says_so() -> None:
    data = make_pdf([[f"第{n}章の本文です"] for n in range(1, 6)])
    result = extract_text(data, "long.pdf", max_pages=2)
    assert [number for number, _ in result.pages] == [1, 2]
    assert result.truncated
    assert "全 5 ページのうち、先頭の 2 ページだけを読み込みました" in result.warnings


def test_pdf_prefers_actual_text_of_marked_content() -> None:
    data = make_pdf([["本文"]], actual_text=("X", "長"))
    result = extract_text(data, "actual.pdf")
    assert "営業部長" in result.text
    assert "X" not in result.text


def test_encrypted_pdf_is_a_clear_error() -> None:
    data = encrypt(make_pdf([["秘密の文書"]]), "secret")
    with pytest.raises(DocumentError) as info:
        extract_text(data, "secret.pdf")
    assert info.value.code == DocumentErrorCode.DOCUMENT_ENCRYPTED
    assert "secret.pdf" in info.value.message
    assert info.value.hint and "パスワード" in info.value.hint
    assert info.value.details["file"] == "secret.pdf"


def test_pdf_with_only_an_owner_password_is_read() -> None:
    data = encrypt(make_pdf([["閲覧は自由な文書"]]), "")
    assert extract_text(data, "owner.pdf").text == "閲覧は自由な文書"


def test_image_only_pdf_is_no_text() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(image_only_pdf(), "scan.pdf")
    assert info.value.code == DocumentErrorCode.DOCUMENT_NO_TEXT
    assert "OCR" in (info.value.hint or "")


@pytest.mark.parametrize(
    "data",
    [b"not a pdf at all", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", b"%PDF-1.7\n" + bytes(300)],
)
def test_corrupt_pdf_is_a_clear_error(data: bytes) -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(data, "broken.pdf")
    assert info.value.code == DocumentErrorCode.DOCUMENT_CORRUPT
    assert info.value.message.startswith("broken.pdf: ")


def test_truncated_pdf_is_a_clear_error() -> None:
    data = make_pdf([["途中で切れた文書"]])
    with pytest.raises(DocumentError) as info:
        extract_text(data[: len(data) // 3], "cut.pdf")
    assert info.value.code in {
        DocumentErrorCode.DOCUMENT_CORRUPT,
        DocumentErrorCode.DOCUMENT_NO_TEXT,
    }


# --- DOCX and XLSX -----------------------------------------------------------


def test_docx_paragraphs_and_table_rows() -> None:
    result = extract_text(make_docx(), "手順.docx")
    assert result.kind == "docx"
    assert result.text == "経費精算の手順\n科目\t金額\t備考\n旅費\t12000\t出張\n\n以上"
    assert result.pages == ()


def test_xlsx_sheets_as_headings_and_tab_separated_rows() -> None:
    result = extract_text(make_xlsx(), "台帳.xlsx")
    assert result.text == "## 売上\n月\t金額\n4月\t1000\n5月\t2500\n\n## 費用\n\t家賃\t300"
    assert [number for number, _ in result.pages] == [1, 2]


def test_empty_workbook_is_no_text() -> None:
    out = io.BytesIO()
    Workbook().save(out)
    with pytest.raises(DocumentError) as info:
        extract_text(out.getvalue(), "empty.xlsx")
    assert info.value.code == DocumentErrorCode.DOCUMENT_NO_TEXT


@pytest.mark.parametrize("name", ["a.docx", "a.xlsx"])
@pytest.mark.parametrize("data", [b"garbage bytes", b"PK\x03\x04" + bytes(50)])
def test_corrupt_office_files_are_clear_errors(name: str, data: bytes) -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(data, name)
    assert info.value.code == DocumentErrorCode.DOCUMENT_CORRUPT
    assert name in info.value.message


@pytest.mark.parametrize("name", ["a.docx", "a.xlsx"])
def test_zip_of_something_else_is_corrupt(name: str) -> None:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(DocumentError) as info:
        extract_text(out.getvalue(), name)
    assert info.value.code == DocumentErrorCode.DOCUMENT_CORRUPT


@pytest.mark.parametrize("name", ["a.docx", "a.xlsx"])
def test_ole_container_is_encrypted_office_file(name: str) -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    with pytest.raises(DocumentError) as info:
        extract_text(data, name)
    assert info.value.code == DocumentErrorCode.DOCUMENT_ENCRYPTED


# --- text --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "warned"),
    [
        ("勘定科目,金額\r\n旅費,100\r\n".encode(), False),
        ("勘定科目,金額\r\n旅費,100\r\n".encode("utf-8-sig"), False),
        ("勘定科目,金額\r\n旅費,100\r\n".encode("cp932"), True),
        ("勘定科目,金額\r\n旅費,100\r\n".encode("utf-16"), False),
    ],
)
def test_csv_encodings(data: bytes, warned: bool) -> None:
    result = extract_text(data, "ledger.csv")
    assert result.text == "勘定科目,金額\n旅費,100\n"
    assert result.kind == "csv"
    assert ("Shift_JIS（CP932）として読み込みました" in result.warnings) is warned


def test_cp932_only_characters_in_text() -> None:
    data = "①請求書　～ ㈱サンプル".encode("cp932")
    assert extract_text(data, "memo.txt").text == "①請求書　～ ㈱サンプル"


def test_markdown_is_kept_as_is() -> None:
    assert extract_text("# 見出し\n\n- 項目\n".encode(), "a.md").text == "# 見出し\n\n- 項目\n"


def test_undecodable_text_is_an_encoding_error() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(b"\x81\x20\xff\xfe\x80abc", "bad.txt")
    assert info.value.code == DocumentErrorCode.DOCUMENT_ENCODING


def test_binary_data_in_a_text_file_is_corrupt() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(b"abc\x00\x01def", "bin.txt")
    assert info.value.code == DocumentErrorCode.DOCUMENT_CORRUPT


def test_control_characters_in_a_text_file_are_corrupt() -> None:
    # no NUL, valid UTF-8, but binary: the shared decoder's control-character check
    with pytest.raises(DocumentError) as info:
        extract_text(b"a\x01b\x02c\x03d\x04e\x05f", "bin.txt")
    assert info.value.code == DocumentErrorCode.DOCUMENT_CORRUPT


# --- limits and general errors ----------------------------------------------


@pytest.mark.parametrize("name", ["a.txt", "a.md", "a.csv", "a.pdf", "a.docx", "a.xlsx"])
def test_zero_byte_files_are_empty(name: str) -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(b"", name)
    assert info.value.code == DocumentErrorCode.DOCUMENT_EMPTY
    assert info.value.to_dict()["details"]["file"] == name


def test_whitespace_only_text_is_no_text() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(b" \n\n ", "blank.txt")
    assert info.value.code == DocumentErrorCode.DOCUMENT_NO_TEXT


def test_too_large_input() -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(b"x" * 2000, "big.txt", max_bytes=1000)
    assert info.value.code == DocumentErrorCode.DOCUMENT_TOO_LARGE
    assert info.value.details["max_bytes"] == 1000


def test_output_is_cut_at_max_chars() -> None:
    result = extract_text("あ".encode() * 500, "long.txt", max_chars=100)
    assert result.text == "あ" * 100
    assert result.truncated
    assert result.warnings == ("文字数が多いため、先頭の 100 文字までを読み込みました",)


@pytest.mark.parametrize("name", ["a.doc", "a.pptx", "README"])
def test_unsupported_type(name: str) -> None:
    with pytest.raises(DocumentError) as info:
        extract_text(b"data", name)
    assert info.value.code == DocumentErrorCode.DOCUMENT_UNSUPPORTED
    assert ".pdf" in (info.value.hint or "")


def test_docx_tables_nested_in_cells_are_read() -> None:
    from docx import Document

    document = Document()
    document.add_paragraph("見積書")
    outer = document.add_table(rows=2, cols=2)
    outer.cell(0, 0).text = "明細"
    outer.cell(0, 1).text = "内訳:"
    inner = outer.cell(0, 1).add_table(rows=2, cols=2)
    for r, row in enumerate([["品目", "金額"], ["保守費", "120,000"]]):
        for c, value in enumerate(row):
            inner.cell(r, c).text = value
    inner.cell(1, 0).add_table(rows=1, cols=1).cell(0, 0).text = "深い"
    outer.cell(1, 0).text = "合計"
    outer.cell(1, 1).text = "120,000"
    out = io.BytesIO()
    document.save(out)
    result = extract_text(out.getvalue(), "見積.docx")
    assert result.text == ("見積書\n明細\t内訳:\n品目\t金額\n保守費\t120,000\n深い\n合計\t120,000")


def form_xobject_pdf(text: str) -> bytes:
    """A one-page PDF whose page content is only ``q /Fm1 Do Q``: the text lives inside
    the Form XObject (how browsers print tables of contents and page furniture)."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.beginForm("Fm1")
    pdf.setFont("Helvetica", 12)
    pdf.drawString(72, 720, text)
    pdf.endForm()
    pdf.doForm("Fm1")
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def test_pdf_text_inside_a_form_xobject_is_read() -> None:
    data = form_xobject_pdf("Refund requests close 30 days after purchase.")
    page_content = PdfReader(io.BytesIO(data)).pages[0].get_contents()
    assert page_content is not None
    drawn = page_content.get_data()
    assert b" Do" in drawn and b"Tj" not in drawn  # the page itself only calls the form

    document = extract_text(data, "refunds.pdf")

    assert "Refund requests close 30 days after purchase." in document.text
    assert [number for number, _ in document.pages] == [1]


def test_nested_form_xobjects_are_read_in_page_order() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.setFont("Helvetica", 12)
    pdf.beginForm("Inner")
    pdf.drawString(72, 700, "Second line inside the inner form.")
    pdf.endForm()
    pdf.beginForm("Outer")
    pdf.drawString(72, 720, "First line inside the outer form.")
    pdf.doForm("Inner")
    pdf.endForm()
    pdf.drawString(72, 760, "Heading drawn on the page itself.")
    pdf.doForm("Outer")
    pdf.showPage()
    pdf.save()

    text = extract_text(buffer.getvalue(), "nested.pdf").text

    lines = [line for line in text.splitlines() if line.strip()]
    assert lines == [
        "Heading drawn on the page itself.",
        "First line inside the outer form.",
        "Second line inside the inner form.",
    ]


def ruled_table_pdf() -> bytes:
    """A page with a paragraph, a table whose cells wrap over several lines, a paragraph."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

    style = ParagraphStyle("cell", fontName=FONT, fontSize=10, leading=13, wordWrap="CJK")
    rows = [
        ["番号", "症状", "対処"],
        [
            "A-17",
            "印刷キューが停止しました",
            "プリンタの電源を入れ直し、十分に待ってから印刷をもう一度実行してください。",
        ],
        ["B-02", "用紙がありません", "トレイに用紙を補充してから再開ボタンを押してください。"],
    ]
    table = Table(
        [[Paragraph(cell, style) for cell in row] for row in rows], colWidths=[50, 70, 140]
    )
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, "black")]))
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4).build(
        [
            Paragraph("次の表はプリンタの表示と対処です。", style),
            table,
            Paragraph("表にない表示は管理者に連絡してください。", style),
        ]
    )
    return buffer.getvalue()


def test_pdf_table_cells_keep_their_wrapped_lines_together() -> None:
    text = extract_text(ruled_table_pdf(), "printer.pdf").text
    lines = text.split("\n")
    assert lines[0] == "次の表はプリンタの表示と対処です。"
    assert lines[1] == "番号\t症状\t対処"
    assert lines[2] == (
        "A-17\t印刷キューが停止しました\t"
        "プリンタの電源を入れ直し、十分に待ってから印刷をもう一度実行してください。"
    )
    assert (
        lines[3] == "B-02\t用紙がありません\tトレイに用紙を補充してから再開ボタンを押してください。"
    )
    assert lines[4] == "表にない表示は管理者に連絡してください。"


def test_pdf_boxed_two_column_page_is_not_read_as_a_table() -> None:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.rect(50, 100, 500, 700)  # a frame around the page
    pdf.line(50, 760, 550, 760)  # under the title band
    pdf.line(300, 100, 300, 760)  # between the two columns
    pdf.setFont(FONT, 11)
    pdf.drawString(60, 775, "会報 第12号")
    for i in range(20):
        pdf.drawString(60, 740 - 18 * i, f"左の記事の{i + 1}行目です。")
        pdf.drawString(310, 740 - 18 * i, f"右の記事の{i + 1}行目です。")
    pdf.showPage()
    pdf.save()
    text = extract_text(buffer.getvalue(), "newsletter.pdf").text
    assert "\t" not in text
    assert "左の記事の1行目です。\n左の記事の2行目です。" in text
    assert "右の記事の1行目です。\n右の記事の2行目です。" in text
