"""PDF text with pdfminer.six, preferring ``/ActualText`` of marked content where present.

PDFs printed from Word or browsers sometimes draw glyphs whose ToUnicode mapping is wrong
(radical look-alikes, ligatures, private-use code points) and put the intended text in a
``/Span <</ActualText (...)>> BDC ... EMC`` marked-content sequence. pdfminer's interpreter
reports those sequences to the device through ``begin_tag``/``end_tag``; ``_ActualTextDevice``
remembers the characters drawn inside such a span and, when it closes, gives the first one
the ActualText and empties the rest, so layout analysis then sees the intended text.
Property lists given by name (``/Span /MC0 BDC``, resolved through the page's
``/Properties`` resources) are handled by ``_Interpreter``. Text drawn inside Form
XObjects (``q /Fm1 Do Q``) is read too (``_text_boxes``).

Tables drawn with ruling lines or cell rectangles (as browsers and Word print them) are read
cell by cell (``_tables``): the text lines inside a table's grid are cut at its column
rulings, a cell's wrapped lines are joined, and each row becomes one line with its cells
separated by tabs (the format the DOCX/XLSX extractors give), so a cell's second line is
never read as part of the next cell. Text outside any grid reads as pdfminer lays it out.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from pdfminer.converter import PDFPageAggregator
from pdfminer.layout import (
    LAParams,
    LTAnno,
    LTChar,
    LTCurve,
    LTFigure,
    LTPage,
    LTRect,
    LTTextContainer,
    LTTextLineHorizontal,
)
from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import decode_text

from keiri_agent.documents.errors import DocumentError, DocumentErrorCode, corrupt
from keiri_agent.stopping import check_stop

logging.getLogger("pdfminer").setLevel(logging.ERROR)


def _actual_text(props: Any) -> str | None:
    """The decoded /ActualText of a marked-content property list, if any."""
    props = resolve1(props)
    if not isinstance(props, dict):
        return None
    raw = resolve1(props.get("ActualText"))
    if isinstance(raw, bytes):
        return decode_text(raw)
    return raw if isinstance(raw, str) else None


class _ActualTextDevice(PDFPageAggregator):
    """A page aggregator that replaces the glyphs of an ActualText span with its text."""

    def __init__(self, rsrcmgr: PDFResourceManager, laparams: LAParams) -> None:
        super().__init__(rsrcmgr, laparams=laparams)
        self._chars: list[LTChar] = []
        self._spans: list[tuple[str | None, int]] = []
        self.replaced = 0

    def begin_page(self, page: PDFPage, ctm: Any) -> None:
        self._chars = []
        self._spans = []
        super().begin_page(page, ctm)

    def begin_tag(self, tag: PSLiteral, props: Any = None) -> None:
        self._spans.append((_actual_text(props), len(self._chars)))

    def end_tag(self) -> None:
        if not self._spans:
            return
        text, start = self._spans.pop()
        chars = self._chars[start:]
        if text is None or not chars:
            return
        chars[0]._text = text
        for char in chars[1:]:
            char._text = ""
        self.replaced += 1

    def render_char(self, *args: Any, **kwargs: Any) -> float:
        adv = super().render_char(*args, **kwargs)
        last = self.cur_item._objs[-1] if self.cur_item._objs else None
        if isinstance(last, LTChar):
            self._chars.append(last)
        return adv


class _Interpreter(PDFPageInterpreter):
    """Resolves property lists given by name through the page's /Properties resources."""

    def do_BDC(self, tag: Any, props: Any) -> None:
        if isinstance(props, PSLiteral):
            named = resolve1(resolve1(self.resources.get("Properties", {})) or {})
            if isinstance(named, dict):
                props = named.get(props.name, props)
        super().do_BDC(tag, props)


def _figure_boxes(figure: LTFigure) -> list[LTTextContainer]:
    """The text boxes inside a Form XObject (``LTFigure``), nested forms included."""
    found: list[LTTextContainer] = []
    for obj in figure:
        if isinstance(obj, LTTextContainer):
            found.append(obj)
        elif isinstance(obj, LTFigure):
            found += _figure_boxes(obj)
    return found


def _text_boxes(layout: LTPage) -> list[LTTextContainer]:
    """The page's text boxes in reading order, those drawn inside Form XObjects included.

    Browsers print tables of contents, headers and footers (sometimes whole pages) as
    Form XObjects; pdfminer lays their text out inside ``LTFigure`` objects, after the
    page's own boxes. Each such box is placed before the first page box below it, so a
    running header stays on top and a footer at the bottom.
    """
    page_boxes: list[LTTextContainer] = []
    form_boxes: list[LTTextContainer] = []
    for obj in layout:
        if isinstance(obj, LTTextContainer):
            page_boxes.append(obj)
        elif isinstance(obj, LTFigure):
            form_boxes += _figure_boxes(obj)
    if not form_boxes:
        return page_boxes
    form_boxes.sort(key=lambda box: -box.y1)
    ordered: list[LTTextContainer] = []
    position = 0
    for box in page_boxes:
        while position < len(form_boxes) and form_boxes[position].y1 > box.y1:
            ordered.append(form_boxes[position])
            position += 1
        ordered.append(box)
    return ordered + form_boxes[position:]


_RULE = 2.5
"""A drawn segment at most this many points thick is a ruling line."""
_SNAP = 2.0
"""Rulings closer than this (points) are the same edge; segments this close touch."""
_MAX_SEGMENTS = 2000
"""Pages with more drawn segments (charts, drawings) are not searched for tables."""
_MAX_CELL_LINES = 12
"""A grid with a cell of more lines is a frame around text (a boxed two-column page),
not a table: its text reads as laid out."""

Segment = tuple[float, float, float, float]
"""(x0, y0, x1, y1) of a horizontal or vertical ruling."""


def _segments(container: Any) -> list[Segment]:
    """The ruling lines of a page: thin lines and rectangles, and the edges of cell
    rectangles (filled backgrounds), inside Form XObjects too."""
    found: list[Segment] = []
    for obj in container:
        if isinstance(obj, LTFigure):
            found += _segments(obj)
            continue
        if not isinstance(obj, LTCurve):
            continue
        x0, y0, x1, y1 = obj.bbox
        width, height = x1 - x0, y1 - y0
        if width <= _RULE < height or height <= _RULE < width:
            found.append((x0, y0, x1, y1))
        elif isinstance(obj, LTRect) and width > _RULE and height > _RULE:
            found += [(x0, y0, x1, y0), (x0, y1, x1, y1), (x0, y0, x0, y1), (x1, y0, x1, y1)]
    return found


def _touch(a: Segment, b: Segment) -> bool:
    return (
        a[0] - _SNAP <= b[2]
        and b[0] - _SNAP <= a[2]
        and a[1] - _SNAP <= b[3]
        and b[1] - _SNAP <= a[3]
    )


def _clusters(segments: list[Segment]) -> list[list[Segment]]:
    """Groups of segments that touch one another (each group is one drawn grid).

    Segments are swept left to right: once a segment starts right of another's end, no
    later one can touch it."""
    segments = sorted(segments)
    parent = list(range(len(segments)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(segments):
        for j in range(i + 1, len(segments)):
            if segments[j][0] - _SNAP > a[2]:
                break
            if _touch(a, segments[j]):
                parent[root(i)] = root(j)
    groups: dict[int, list[Segment]] = {}
    for i, segment in enumerate(segments):
        groups.setdefault(root(i), []).append(segment)
    return list(groups.values())


def _edges(values: list[float]) -> list[float]:
    """Sorted positions, those within ``_SNAP`` of the previous one merged."""
    out: list[float] = []
    for value in sorted(values):
        if not out or value - out[-1] > _SNAP:
            out.append(value)
    return out


@dataclass
class _Table:
    """A ruled grid: column edges left to right, row edges top to bottom."""

    xs: list[float]
    ys: list[float]
    cells: dict[tuple[int, int], list[tuple[float, float, str]]] = field(default_factory=dict)
    """(row, column) → (top, left, text) of each piece of a line inside the cell."""

    def holds(self, x: float, y: float) -> bool:
        return self.xs[0] - _SNAP <= x <= self.xs[-1] + _SNAP and (
            self.ys[-1] - _SNAP <= y <= self.ys[0] + _SNAP
        )

    def cell(self, x: float, y: float) -> tuple[int, int]:
        column = sum(1 for edge in self.xs[1:-1] if x >= edge)
        row = sum(1 for edge in self.ys[1:-1] if y <= edge)
        return row, column

    def add(self, line: LTTextLineHorizontal) -> None:
        """Cut ``line`` at the column rulings and file each piece under its cell."""
        pieces: dict[tuple[int, int], list[str]] = {}
        lefts: dict[tuple[int, int], float] = {}
        current: tuple[int, int] | None = None
        for item in line:
            if isinstance(item, LTChar):
                current = self.cell((item.x0 + item.x1) / 2, (item.y0 + item.y1) / 2)
                lefts.setdefault(current, item.x0)
            if current is not None and isinstance(item, LTChar | LTAnno):
                pieces.setdefault(current, []).append(item.get_text())
        for key, texts in pieces.items():
            text = "".join(texts).replace("\n", "").strip()
            if text:
                self.cells.setdefault(key, []).append((line.y1, lefts[key], text))

    def framed_text(self) -> bool:
        """Whether a cell holds more lines than a table cell does (``_MAX_CELL_LINES``)."""
        return any(len(pieces) > _MAX_CELL_LINES for pieces in self.cells.values())

    def text(self) -> str:
        rows: list[str] = []
        for row in range(len(self.ys) - 1):
            cells = [_cell_text(self.cells.get((row, col), [])) for col in range(len(self.xs) - 1)]
            line = "\t".join(cells).rstrip("\t")
            if line.strip():
                rows.append(line)
        return "\n".join(rows)


_CJK_EDGE = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_ITEM_START = re.compile(r"^(?:[・●○■□◆◇※•\-–—*]|\d+[.)．）]|[(（]\d+[)）])")


def _cell_text(pieces: list[tuple[float, float, str]]) -> str:
    """A cell's lines top to bottom (pieces of one line left to right), wrapped lines
    joined: nothing between CJK text, a space otherwise and before a list item."""
    out = ""
    for _, _, text in sorted(pieces, key=lambda piece: (-round(piece[0]), piece[1])):
        if out:
            glued = _CJK_EDGE.match(out[-1]) or _CJK_EDGE.match(text[0])
            out += text if glued and not _ITEM_START.match(text) else " " + text
        else:
            out = text
    return out


def _tables(layout: LTPage) -> list[_Table]:
    """The ruled tables of a page: grids of at least two columns and two rows (a frame
    split once, such as a two-column page in a box, is not a table)."""
    segments = _segments(layout)
    if not segments or len(segments) > _MAX_SEGMENTS:
        return []
    tables: list[_Table] = []
    for group in _clusters(segments):
        xs = _edges([(x0 + x1) / 2 for x0, _, x1, _ in group if x1 - x0 <= _RULE])
        ys = _edges([(y0 + y1) / 2 for _, y0, _, y1 in group if y1 - y0 <= _RULE])
        if len(xs) >= 3 and len(ys) >= 3:
            tables.append(_Table(xs, ys[::-1]))
    return tables


def _table_of(line: Any, tables: list[_Table]) -> _Table | None:
    if not isinstance(line, LTTextLineHorizontal):
        return None
    x, y = (line.x0 + line.x1) / 2, (line.y0 + line.y1) / 2
    return next((table for table in tables if table.holds(x, y)), None)


def _page_text(layout: LTPage) -> str:
    boxes = _text_boxes(layout)
    tables = _tables(layout)
    if not tables:
        return "\n".join(box.get_text().rstrip("\n") for box in boxes)
    for box in boxes:
        for line in box:
            table = _table_of(line, tables)
            if table is not None:
                table.add(line)
    tables = [table for table in tables if not table.framed_text()]
    parts: list[str] = []
    written: set[int] = set()
    for box in boxes:
        lines: list[str] = []
        for line in box:
            table = _table_of(line, tables)
            if table is None:
                lines.append(line.get_text())
                continue
            if id(table) not in written:
                written.add(id(table))
                if lines:
                    parts.append("".join(lines).rstrip("\n"))
                    lines = []
                parts.append(table.text())
        if lines:
            parts.append("".join(lines).rstrip("\n"))
    return "\n".join(part for part in parts if part)


def _open(data: bytes, name: str) -> PDFDocument:
    try:
        return PDFDocument(PDFParser(io.BytesIO(data)), password="")
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_ENCRYPTED,
            name,
            "PDF にパスワードが掛かっています",
            hint="パスワードを入力して開き、パスワードなしの PDF として保存（または PDF に印刷）"
            "したものをアップロードしてください。",
            details={"kind": "pdf", "cause": type(exc).__name__},
        ) from None
    except Exception as exc:
        raise corrupt(name, "pdf", exc) from None


def page_count(document: PDFDocument) -> int | None:
    """The /Count of the page tree, or None when the file does not say."""
    try:
        count = resolve1(resolve1(document.catalog["Pages"])["Count"])
    except Exception:
        return None
    return count if isinstance(count, int) else None


def read_pdf(data: bytes, name: str, max_pages: int) -> tuple[list[tuple[int, str]], list[str]]:
    """(page number, raw text) of the first ``max_pages`` pages, and warnings."""
    if b"%PDF-" not in data[:1024]:
        raise corrupt(name, "pdf")
    document = _open(data, name)
    warnings: list[str] = []
    if not document.is_extractable:
        warnings.append(
            "この PDF は文字のコピーを禁止する設定ですが、読み込みのため文字を取り出しました"
        )
    rsrcmgr = PDFResourceManager(caching=True)
    device = _ActualTextDevice(rsrcmgr, LAParams(all_texts=True))
    interpreter = _Interpreter(rsrcmgr, device)
    pages: list[tuple[int, str]] = []
    try:
        for number, page in enumerate(PDFPage.create_pages(document), start=1):
            if number > max_pages:
                break
            check_stop()
            interpreter.process_page(page)
            pages.append((number, _page_text(device.get_result())))
    except DocumentError:
        raise
    except Exception as exc:
        if not pages:
            raise corrupt(name, "pdf", exc) from None
        warnings.append(f"{len(pages) + 1} ページ目を読めませんでした（{type(exc).__name__}）")
    total = page_count(document)
    if total is not None and total > max_pages:
        warnings.append(f"全 {total} ページのうち、先頭の {max_pages} ページだけを読み込みました")
    if not pages or not any(text.strip() for _, text in pages):
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_NO_TEXT,
            name,
            "PDF から文字を取り出せません（スキャンした画像だけの PDF です）",
            hint="OCR（Adobe Acrobat の「テキスト認識」など）を掛けてから、"
            "または元の Word・Excel ファイルをアップロードしてください。",
            details={"kind": "pdf", "pages_read": len(pages)},
        )
    return pages, warnings
