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
"""

from __future__ import annotations

import io
import logging
from typing import Any

from pdfminer.converter import PDFPageAggregator
from pdfminer.layout import LAParams, LTChar, LTFigure, LTPage, LTTextContainer
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


def _page_text(layout: LTPage) -> str:
    boxes = [box.get_text() for box in _text_boxes(layout)]
    return "\n".join(box.rstrip("\n") for box in boxes)


def _open(data: bytes, name: str) -> PDFDocument:
    try:
        return PDFDocument(PDFParser(io.BytesIO(data)), password="")
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_ENCRYPTED,
            name,
            "the PDF is password-protected",
            hint="open it with its password and save or print it as a PDF without a password, "
            "then upload that copy",
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
        warnings.append("the PDF's permissions ask not to copy its text; extracted anyway")
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
        warnings.append(f"page {len(pages) + 1} could not be read ({type(exc).__name__})")
    total = page_count(document)
    if total is not None and total > max_pages:
        warnings.append(f"only the first {max_pages} of {total} pages were read")
    if not pages or not any(text.strip() for _, text in pages):
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_NO_TEXT,
            name,
            "the PDF has no extractable text (a scan or image-only PDF)",
            hint="run OCR on it (e.g. Adobe Acrobat 'Recognize text'), or upload the original "
            "Word/Excel file",
            details={"kind": "pdf", "pages_read": len(pages)},
        )
    return pages, warnings
