"""``document.render``: a Markdown report as a Word document (.docx bytes).

Markdown is parsed with markdown-it-py (CommonMark plus GFM pipe tables) and
written with python-docx: headings, paragraphs with bold / italic / inline code,
bullet lists (nested up to three levels as Word list styles), numbered lists
(numbers written out, so every list starts at its own first number), tables,
code blocks, block quotes and rules. Raw HTML is not interpreted: it is shown as
the text it is. The Markdown is bounded by :data:`MAX_MARKDOWN_CHARS`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from docx import Document
from docx.document import Document as DocxDocument
from docx.shared import Pt
from docx.text.paragraph import Paragraph
from markdown_it import MarkdownIt
from markdown_it.token import Token

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import invalid

MAX_MARKDOWN_CHARS = 200_000
CODE_FONT = "Consolas"
_BULLET_STYLES = ("List Bullet", "List Bullet 2", "List Bullet 3")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def render_docx(markdown: str, title: str | None = None) -> tuple[bytes, dict[str, int]]:
    """The .docx bytes of ``markdown`` and counts of what was written."""
    document = Document()
    counts = {"headings": 0, "paragraphs": 0, "list_items": 0, "tables": 0, "code_blocks": 0}
    if title:
        document.core_properties.title = title
        document.add_heading(title, level=0)
    _Writer(document, counts).blocks(_parser().parse(markdown))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue(), counts


class _Writer:
    """Walks markdown-it's block tokens and writes them to the document."""

    def __init__(self, document: DocxDocument, counts: dict[str, int]) -> None:
        self.document = document
        self.counts = counts
        self.lists: list[dict[str, Any]] = []  # open lists: {"ordered", "number"}
        self.quote = 0

    def blocks(self, tokens: Sequence[Token]) -> None:
        index = 0
        while index < len(tokens):
            token = tokens[index]
            kind = token.type
            if kind == "heading_open":
                level = min(int(token.tag[1]), 9)
                paragraph = self.document.add_heading(level=level)
                self.inline(paragraph, tokens[index + 1])
                self.counts["headings"] += 1
                index += 2
            elif kind == "paragraph_open":
                paragraph = self.paragraph()
                self.inline(paragraph, tokens[index + 1])
                index += 2
            elif kind in ("bullet_list_open", "ordered_list_open"):
                start = int(token.attrGet("start") or 1)
                self.lists.append({"ordered": kind == "ordered_list_open", "number": start})
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "list_item_open":
                self.counts["list_items"] += 1
            elif kind == "list_item_close" and self.lists:
                self.lists[-1]["number"] += 1
            elif kind == "blockquote_open":
                self.quote += 1
            elif kind == "blockquote_close":
                self.quote -= 1
            elif kind in ("fence", "code_block"):
                self.code(token.content)
            elif kind == "hr":
                self.document.add_paragraph("―" * 20)
            elif kind == "table_open":
                index = self.table(tokens, index)
            elif kind == "html_block":  # not produced with html off; kept as text if it is
                self.document.add_paragraph(token.content.rstrip("\n"))
            index += 1

    def paragraph(self) -> Paragraph:
        """A new paragraph: a list item's first paragraph gets the list style or number."""
        self.counts["paragraphs"] += 1
        if not self.lists:
            paragraph = self.document.add_paragraph(style="Quote" if self.quote else None)
            return paragraph
        current = self.lists[-1]
        depth = len(self.lists)
        if current["ordered"]:
            paragraph = self.document.add_paragraph(style="List Paragraph")
            paragraph.paragraph_format.left_indent = Pt(18 * depth)
            paragraph.add_run(f"{current['number']}. ")
            return paragraph
        style = _BULLET_STYLES[min(depth, len(_BULLET_STYLES)) - 1]
        return self.document.add_paragraph(style=style)

    def inline(self, paragraph: Paragraph, token: Token) -> None:
        bold = italic = 0
        for child in token.children or []:
            kind = child.type
            if kind == "strong_open":
                bold += 1
            elif kind == "strong_close":
                bold -= 1
            elif kind == "em_open":
                italic += 1
            elif kind == "em_close":
                italic -= 1
            elif kind in ("text", "html_inline"):
                run = paragraph.add_run(child.content)
                run.bold = bold > 0 or None
                run.italic = italic > 0 or None
            elif kind == "code_inline":
                run = paragraph.add_run(child.content)
                run.font.name = CODE_FONT
            elif kind == "softbreak":
                paragraph.add_run(" ")
            elif kind == "hardbreak":
                paragraph.add_run().add_break()
            elif kind == "image":
                paragraph.add_run(f"[画像: {child.content}]")

    def code(self, content: str) -> None:
        paragraph = self.document.add_paragraph()
        for number, line in enumerate(content.rstrip("\n").split("\n")):
            run = paragraph.add_run()
            if number:
                run.add_break()
            run.add_text(line)
            run.font.name = CODE_FONT
            run.font.size = Pt(9)
        self.counts["code_blocks"] += 1

    def table(self, tokens: Sequence[Token], index: int) -> int:
        """Write the table opened at ``tokens[index]``; the index of its ``table_close``."""
        rows: list[list[Token]] = []
        header_rows = 0
        in_head = False
        while tokens[index].type != "table_close":
            token = tokens[index]
            if token.type == "thead_open":
                in_head = True
            elif token.type == "thead_close":
                in_head = False
            elif token.type == "tr_open":
                rows.append([])
                header_rows += in_head
            elif token.type == "inline":
                rows[-1].append(token)
            index += 1
        width = max((len(row) for row in rows), default=0)
        if not rows or not width:
            return index
        table = self.document.add_table(rows=len(rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(rows):
            for c, cell_token in enumerate(row):
                paragraph = table.cell(r, c).paragraphs[0]
                self.inline(paragraph, cell_token)
                if r < header_rows:
                    for run in paragraph.runs:
                        run.bold = True
        self.counts["tables"] += 1
        return index


def _text(inputs: Mapping[str, Any], name: str) -> str | None:
    value = inputs.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"{name} は文字列で指定してください", field=name)
    return value


def _filename(inputs: Mapping[str, Any]) -> str:
    name = _text(inputs, "filename") or "report.docx"
    if any(mark in name for mark in '/\\:*?"<>|') or not name.lower().endswith(".docx"):
        raise invalid(
            f"filename「{name}」は使えません",
            hint="フォルダを含まない、.docx で終わる名前にしてください（例: 点検報告.docx）",
            field="filename",
        )
    return name


class DocumentRenderBlock(ProcessingBlock):
    """``document.render``: Markdown → .docx bytes."""

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _filename(inputs)

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        markdown = _text(inputs, "markdown")
        if markdown is None:
            raise invalid("markdown（報告書の本文）を指定してください", field="markdown")
        if len(markdown) > MAX_MARKDOWN_CHARS:
            raise invalid(
                f"markdown が長すぎます（{len(markdown):,}文字。上限は{MAX_MARKDOWN_CHARS:,}文字）",
                hint="表の行を絞るか、報告書を分けてください",
                field="markdown",
            )
        title = _text(inputs, "title")
        filename = _filename(inputs)
        ctx.check_cancelled()
        data, counts = render_docx(markdown, title)
        summary = {"filename": filename, "bytes": len(data), **counts}
        return {"document": data, "summary": summary}
