"""Build the HelpDesk sample knowledge base: the XYZシステム manual (PDF) and release notes (DOCX).

Usage::

    uv run python scripts/build_helpdesk_samples.py

Reads ``src/keiri_agent/samples/helpdesk/sources/xyz_manual.md`` and
``sources/xyz_release_notes.md`` and writes ``docs/xyz_manual.pdf`` (reportlab, IPAexGothic from
``matplotlib-fontja``) and ``docs/xyz_release_notes.docx`` (python-docx). The other
samples (``docs/xyz_notifications.md``, ``xyz_faq.csv``, ``questions.jsonl``) are written by hand.

The source Markdown is a small subset: ``#`` title, ``##`` chapter (new page in the PDF),
``###`` section, ``####`` sub-heading (error codes), ``- `` bullets, ``1. `` steps,
``| a | b |`` table rows (first row is the header), ``<!-- pagebreak -->`` and
``<!-- cover -->`` markers; everything else is a paragraph (one per line).

Both outputs are reproducible: the PDF is written in reportlab's invariant mode (fixed dates
and document id) and the DOCX has fixed core properties and zip timestamps.
"""

from __future__ import annotations

import importlib.util
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELPDESK = ROOT / "src" / "keiri_agent" / "samples" / "helpdesk"
SOURCES = HELPDESK / "sources"
DOCS = HELPDESK / "docs"
FONT_NAME = "IPAexGothic"
FOOTER = "XYZシステム 利用者マニュアル"
FIXED_DATE = (2025, 6, 2, 9, 0, 0)


@dataclass(frozen=True)
class Block:
    """One block of the source: kind is title/h1/h2/h3/para/bullet/step/table/pagebreak/cover."""

    kind: str
    text: str = ""
    rows: tuple[tuple[str, ...], ...] = ()


def parse_markdown(source: str) -> list[Block]:
    """The small Markdown subset described in the module docstring, as blocks."""
    blocks: list[Block] = []
    table: list[tuple[str, ...]] = []
    for raw in source.splitlines():
        line = raw.strip()
        if line.startswith("|"):
            table.append(tuple(cell.strip() for cell in line.strip("|").split("|")))
            continue
        if table:
            blocks.append(Block("table", rows=tuple(table)))
            table = []
        if not line:
            continue
        if line == "<!-- pagebreak -->":
            blocks.append(Block("pagebreak"))
        elif line == "<!-- cover -->":
            blocks.append(Block("cover"))
        elif line.startswith("#### "):
            blocks.append(Block("h3", line[5:]))
        elif line.startswith("### "):
            blocks.append(Block("h2", line[4:]))
        elif line.startswith("## "):
            blocks.append(Block("h1", line[3:]))
        elif line.startswith("# "):
            blocks.append(Block("title", line[2:]))
        elif line.startswith("- "):
            blocks.append(Block("bullet", line[2:]))
        elif re.match(r"^\d+\. ", line):
            blocks.append(Block("step", line))
        else:
            blocks.append(Block("para", line))
    if table:
        blocks.append(Block("table", rows=tuple(table)))
    return blocks


def font_path() -> Path:
    """IPAexGothic bundled with matplotlib-fontja (also used by the analysis plots)."""
    spec = importlib.util.find_spec("matplotlib_fontja")
    locations = list(spec.submodule_search_locations or []) if spec else []
    path = Path(locations[0], "fonts", "ipaexg.ttf") if locations else None
    if path is None or not path.is_file():
        raise SystemExit("matplotlib-fontja (fonts/ipaexg.ttf) is not installed; run uv sync")
    return path


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def build_pdf(blocks: list[Block], out: Path) -> int:
    """Render the manual to ``out``; return the number of pages."""
    from reportlab import rl_config
    from reportlab.lib import colors
    from reportlab.lib.enums import TA_CENTER
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import (
        HRFlowable,
        KeepTogether,
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
    )

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
    styles = {
        "title": ParagraphStyle(
            "title",
            parent=base,
            fontSize=26,
            leading=36,
            alignment=TA_CENTER,
            firstLineIndent=0,
            spaceBefore=120,
            spaceAfter=40,
        ),
        "cover": ParagraphStyle(
            "cover", parent=base, fontSize=12, leading=22, alignment=TA_CENTER, firstLineIndent=0
        ),
        "h1": ParagraphStyle(
            "h1",
            parent=base,
            fontSize=18,
            leading=26,
            firstLineIndent=0,
            spaceAfter=4,
            textColor=colors.HexColor("#1F3864"),
        ),
        "h2": ParagraphStyle(
            "h2",
            parent=base,
            fontSize=13.5,
            leading=20,
            firstLineIndent=0,
            spaceBefore=12,
            spaceAfter=6,
            textColor=colors.HexColor("#2F5496"),
        ),
        "h3": ParagraphStyle(
            "h3",
            parent=base,
            fontSize=11.5,
            leading=18,
            firstLineIndent=0,
            spaceBefore=8,
            spaceAfter=2,
            textColor=colors.HexColor("#833C0B"),
        ),
        "bullet": ParagraphStyle(
            "bullet", parent=base, firstLineIndent=-10.5, leftIndent=24, spaceAfter=3
        ),
        "step": ParagraphStyle(
            "step", parent=base, firstLineIndent=-14, leftIndent=28, spaceAfter=3
        ),
        "entry": ParagraphStyle(
            "entry", parent=base, firstLineIndent=0, leftIndent=14, spaceAfter=2
        ),
    }

    story: list = []
    cover = False
    pending_h3: list = []
    for block in blocks:
        text = _escape(block.text)
        if block.kind == "cover":
            cover = True
        elif block.kind == "pagebreak":
            cover = False
            story.append(PageBreak())
        elif block.kind == "title":  # two lines: the title must not equal the page footer
            story.append(Paragraph(text.replace(" ", "<br/>", 1), styles["title"]))
        elif cover:
            story.append(Paragraph(text, styles["cover"]))
            story.append(Spacer(1, 4))
        elif block.kind == "h1":
            story.append(Paragraph(f"<b>{text}</b>", styles["h1"]))
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
            story.append(Paragraph(f"<b>{text}</b>", styles["h2"]))
        elif block.kind == "h3":
            pending_h3 = [Paragraph(f"<b>{text}</b>", styles["h3"])]
        elif block.kind == "bullet":
            story.append(Paragraph(f"・{text}", styles["bullet"]))
        elif block.kind == "step":
            story.append(Paragraph(text, styles["step"]))
        elif pending_h3:
            pending_h3.append(Paragraph(text, styles["entry"]))
            if text.startswith("対処"):
                story.append(KeepTogether(pending_h3))
                pending_h3 = []
        else:
            story.append(Paragraph(text, base))

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
        title="XYZシステム 利用者マニュアル",
        author="経理部・情報システム部",
        subject="XYZシステム バージョン3.2.0",
        creator="scripts/build_helpdesk_samples.py",
    )
    doc.build(story, onFirstPage=footer, onLaterPages=footer)
    out.write_bytes(buffer.getvalue())
    return doc.page


def _fixed_zip(data: bytes) -> bytes:
    """Rewrite a zip with every entry dated ``FIXED_DATE`` (python-docx uses the clock)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_DATE)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def build_docx(blocks: list[Block], out: Path) -> None:
    """Render the release notes to ``out`` with Word heading styles and tables."""
    import datetime as dt

    from docx import Document
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = Document()
    normal = document.styles["Normal"]
    normal.font.size = Pt(10.5)
    normal.element.get_or_add_rPr().get_or_add_rFonts().set(qn("w:eastAsia"), "游ゴシック")
    for block in blocks:
        if block.kind == "title":
            document.add_heading(block.text, level=0)
        elif block.kind in ("h1", "h2", "h3"):
            document.add_heading(block.text, level=int(block.kind[1]))
        elif block.kind == "bullet":
            document.add_paragraph(block.text, style="List Bullet")
        elif block.kind == "step":
            document.add_paragraph(block.text.split(". ", 1)[1], style="List Number")
        elif block.kind == "table":
            header, *rows = block.rows
            table = document.add_table(rows=1, cols=len(header))
            table.style = "Table Grid"
            for cell, value in zip(table.rows[0].cells, header, strict=True):
                cell.text = value
                for run in cell.paragraphs[0].runs:
                    run.bold = True
            for row in rows:
                cells = table.add_row().cells
                for cell, value in zip(cells, row, strict=True):
                    cell.text = value
        elif block.kind == "para":
            document.add_paragraph(block.text)
    props = document.core_properties
    props.title = "XYZシステム リリースノート"
    props.author = "情報システム部"
    props.created = props.modified = dt.datetime(*FIXED_DATE)
    props.last_modified_by = "情報システム部"
    props.revision = 1
    buffer = io.BytesIO()
    document.save(buffer)
    out.write_bytes(_fixed_zip(buffer.getvalue()))


def main() -> None:
    manual = parse_markdown((SOURCES / "xyz_manual.md").read_text(encoding="utf-8"))
    pages = build_pdf(manual, DOCS / "xyz_manual.pdf")
    print(f"wrote {DOCS / 'xyz_manual.pdf'} ({pages} pages)")
    notes = parse_markdown((SOURCES / "xyz_release_notes.md").read_text(encoding="utf-8"))
    build_docx(notes, DOCS / "xyz_release_notes.docx")
    print(f"wrote {DOCS / 'xyz_release_notes.docx'}")


if __name__ == "__main__":
    main()
