"""Build the research sample knowledge base: the 請求書様式ガイド (PDF with page numbers).

Usage::

    uv run python scripts/build_research_samples.py

Reads ``src/keiri_agent/samples/research/sources/invoice_style_guide.md`` and writes
``docs/invoice_style_guide.pdf`` (reportlab, IPAexGothic from ``matplotlib-fontja``), one
chapter per page after the cover. The other documents of the corpus (the 経理規程 and the
dated 経理部通知) are Markdown written by hand in ``docs/``; ``questions`` live in
``benchmarks/data/research_questions.jsonl``.

The source uses the Markdown subset of ``build_helpdesk_samples.py`` (whose parser is reused).
The PDF is written in reportlab's invariant mode (fixed dates and document id), so a rebuild
is byte-identical.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from build_helpdesk_samples import Block, _escape, font_path, parse_markdown

ROOT = Path(__file__).resolve().parents[1]
RESEARCH = ROOT / "src" / "keiri_agent" / "samples" / "research"
SOURCES = RESEARCH / "sources"
DOCS = RESEARCH / "docs"
FONT_NAME = "IPAexGothic"
FOOTER = "株式会社XYZ商事 請求書様式ガイド"


def build_pdf(blocks: list[Block], out: Path) -> int:
    """Render the guide to ``out``; return the number of pages."""
    from reportlab import rl_config
    from reportlab.lib import colors
    from reportlab.lib.enums import TA_CENTER
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import HRFlowable, PageBreak, Paragraph, SimpleDocTemplate, Spacer

    rl_config.invariant = 1
    pdfmetrics.registerFont(TTFont(FONT_NAME, str(font_path())))
    base = ParagraphStyle(
        "body",
        fontName=FONT_NAME,
        fontSize=10.5,
        leading=17,
        wordWrap="CJK",
        spaceAfter=5,
        firstLineIndent=10.5,
    )
    title = ParagraphStyle(
        "title",
        parent=base,
        fontSize=26,
        leading=36,
        alignment=TA_CENTER,
        firstLineIndent=0,
        spaceBefore=120,
        spaceAfter=40,
    )
    cover = ParagraphStyle(
        "cover", parent=base, fontSize=12, leading=22, alignment=TA_CENTER, firstLineIndent=0
    )
    h1 = ParagraphStyle(
        "h1",
        parent=base,
        fontSize=18,
        leading=26,
        firstLineIndent=0,
        spaceAfter=4,
        textColor=colors.HexColor("#1F3864"),
    )
    h2 = ParagraphStyle(
        "h2",
        parent=base,
        fontSize=13.5,
        leading=20,
        firstLineIndent=0,
        spaceBefore=12,
        spaceAfter=6,
        textColor=colors.HexColor("#2F5496"),
    )
    bullet = ParagraphStyle(
        "bullet", parent=base, firstLineIndent=-10.5, leftIndent=24, spaceAfter=3
    )

    story: list = []
    in_cover = False
    for block in blocks:
        text = _escape(block.text)
        if block.kind == "cover":
            in_cover = True
        elif block.kind == "pagebreak":
            in_cover = False
            story.append(PageBreak())
        elif block.kind == "title":
            story.append(Paragraph(text.replace(" ", "<br/>", 1), title))
        elif in_cover:
            story.append(Paragraph(text, cover))
            story.append(Spacer(1, 4))
        elif block.kind == "h1":
            story.append(Paragraph(f"<b>{text}</b>", h1))
            story.append(
                HRFlowable(
                    width="100%",
                    thickness=1.5,
                    color=colors.HexColor("#1F3864"),
                    spaceBefore=2,
                    spaceAfter=10,
                )
            )
        elif block.kind == "h2":
            story.append(Paragraph(f"<b>{text}</b>", h2))
        elif block.kind == "bullet":
            story.append(Paragraph(f"・{text}", bullet))
        elif block.kind == "para":
            story.append(Paragraph(text, base))
        else:
            raise SystemExit(f"unsupported block in the guide source: {block.kind}")

    def footer(canvas: Any, doc: Any) -> None:  # reportlab page callback
        canvas.saveState()
        canvas.setFont(FONT_NAME, 9)
        canvas.setFillColor(colors.HexColor("#595959"))
        canvas.drawCentredString(A4[0] / 2, 12 * mm, f"{FOOTER} - {doc.page} -")
        canvas.setStrokeColor(colors.HexColor("#BFBFBF"))
        canvas.line(20 * mm, 17 * mm, A4[0] - 20 * mm, 17 * mm)
        canvas.restoreState()

    buffer = io.BytesIO()
    doc = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=22 * mm,
        rightMargin=22 * mm,
        topMargin=22 * mm,
        bottomMargin=25 * mm,
        title="請求書様式ガイド 第3版対応",
        author="株式会社XYZ商事 経理部",
        subject="適格請求書の様式と記載事項",
        creator="scripts/build_research_samples.py",
    )
    doc.build(story, onFirstPage=footer, onLaterPages=footer)
    out.write_bytes(buffer.getvalue())
    return doc.page


def render_guide() -> tuple[bytes, int]:
    """The guide PDF as bytes and its page count (what ``main`` writes)."""
    import tempfile

    blocks = parse_markdown((SOURCES / "invoice_style_guide.md").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "invoice_style_guide.pdf"
        pages = build_pdf(blocks, out)
        return out.read_bytes(), pages


def main() -> None:
    data, pages = render_guide()
    target = DOCS / "invoice_style_guide.pdf"
    target.write_bytes(data)
    print(f"wrote {target} ({pages} pages)")


if __name__ == "__main__":
    main()
