"""Document text extraction: pypdf vs pdfminer.six on generated Japanese PDFs, DOCX, XLSX.

Prints ``name: value`` lines:

- ``pdf.<library>.pages_per_s`` / ``pdf.<library>.mb_per_s`` — raw text extraction of a
  generated 40-page Japanese PDF (reportlab, CID font HeiseiKakuGo-W5), for ``pypdf`` and
  ``pdfminer`` (pdfminer.six with layout analysis, as ``keiri_agent.documents`` uses it).
- ``pdf.<library>.correct_pages`` — share of pages whose normalised text equals the
  normalised drawn text; ``pdf.<library>.actual_text`` — 1 when a glyph drawn inside an
  ``/ActualText`` span is read as its ActualText.
- ``pdf.chosen`` and ``pdf.chosen.pages_per_s`` — ``extract_text`` end to end (pdfminer.six).
- ``docx.pages_per_s``/``docx.mb_per_s`` (a page ≈ 40 paragraphs) and ``xlsx.rows_per_s``/
  ``xlsx.mb_per_s`` through ``extract_text``.

    uv run python benchmarks/document_extraction.py
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from docx import Document
from openpyxl import Workbook
from pypdf import PdfReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from keiri_agent.documents import extract_text, normalize_text
from keiri_agent.documents.pdf import read_pdf

FONT = "HeiseiKakuGo-W5"
PAGES = 40
LINES = [
    "請求書 第{n}回 支払期限 2024年4月30日",
    "XYZシステム利用料 合計 ¥12,345",
    "長い民間の会計処理について、経費精算の手順を説明します。",
    "勘定科目 旅費交通費 消耗品費 支払手数料 {n}件",
    "ひらがな・カタカナ・漢字 混在 ABC def 123",
]


def drawn_lines(page: int) -> list[str]:
    return [line.format(n=page) for line in LINES]


def make_pdf(pages: int) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for page in range(1, pages + 1):
        pdf.setFont(FONT, 11)
        for i, line in enumerate(drawn_lines(page)):
            pdf.drawString(60, 780 - 18 * i, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def make_actual_text_pdf() -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.setFont(FONT, 12)
    pdf.drawString(72, 700, "営業部")
    pdf._code.append("/Span <</ActualText <FEFF9577>>> BDC")  # 長
    pdf.drawString(108, 700, "X")
    pdf._code.append("EMC")
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def pypdf_pages(data: bytes) -> list[str]:
    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages]


def pdfminer_pages(data: bytes) -> list[str]:
    return [text for _, text in read_pdf(data, "bench.pdf", 10_000)[0]]


def timed(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def make_docx(paragraphs: int) -> bytes:
    document = Document()
    for i in range(paragraphs):
        document.add_paragraph(f"第{i}項 経費精算の手順を説明します。XYZシステムで申請します。")
    table = document.add_table(rows=50, cols=4)
    for row in table.rows:
        for c, cell in enumerate(row.cells):
            cell.text = f"科目{c}"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_xlsx(rows: int) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for i in range(rows):
        sheet.append([f"2024-04-{i % 28 + 1:02d}", "旅費交通費", i * 100, "出張 東京"])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def main() -> None:
    pdfmetrics.registerFont(UnicodeCIDFont(FONT))
    pdf = make_pdf(PAGES)
    mb = len(pdf) / 1_048_576
    expected = [normalize_text("\n".join(drawn_lines(p))) for p in range(1, PAGES + 1)]
    actual_pdf = make_actual_text_pdf()
    for library, reader in (("pypdf", pypdf_pages), ("pdfminer", pdfminer_pages)):
        seconds = timed(lambda reader=reader: reader(pdf))  # type: ignore[misc]
        got = [normalize_text(text) for text in reader(pdf)]
        correct = sum(a == b for a, b in zip(got, expected, strict=False)) / PAGES
        actual = normalize_text(reader(actual_pdf)[0])
        print(f"pdf.{library}.pages_per_s: {PAGES / seconds:.1f}")
        print(f"pdf.{library}.mb_per_s: {mb / seconds:.2f}")
        print(f"pdf.{library}.correct_pages: {correct:.3f}")
        print(f"pdf.{library}.actual_text: {int(actual == '営業部長')}")
    seconds = timed(lambda: extract_text(pdf, "bench.pdf", max_pages=PAGES))
    print("pdf.chosen: pdfminer")
    print(f"pdf.chosen.pages_per_s: {PAGES / seconds:.1f}")
    print(f"pdf.chosen.mb_per_s: {mb / seconds:.2f}")

    paragraphs = 400
    docx = make_docx(paragraphs)
    seconds = timed(lambda: extract_text(docx, "bench.docx"))
    print(f"docx.pages_per_s: {paragraphs / 40 / seconds:.1f}")
    print(f"docx.mb_per_s: {len(docx) / 1_048_576 / seconds:.2f}")

    rows = 5000
    xlsx = make_xlsx(rows)
    seconds = timed(lambda: extract_text(xlsx, "bench.xlsx", max_chars=10_000_000))
    print(f"xlsx.rows_per_s: {rows / seconds:.0f}")
    print(f"xlsx.mb_per_s: {len(xlsx) / 1_048_576 / seconds:.2f}")


if __name__ == "__main__":
    main()
