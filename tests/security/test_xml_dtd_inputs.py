"""Office files carrying a DTD (XML entity declarations).

Catalogue (attack → what used to happen → what happens now):

- an .xlsx whose sheet XML declares ``<!DOCTYPE ... [<!ENTITY x SYSTEM "file:///...">]>``
  and uses ``&x;`` in a cell → ``analyze`` ended in an uncaught ``ParseError`` traceback;
  ``excel.read_data`` and document extraction said "damaged" in English → every reader
  refuses the package before parsing it (``keiri_agent.files.bounds.check_package``), with
  a Japanese message naming the part and what to do (save it again from Excel);
- the same DTD with a harmless internal entity (no reference) → silently accepted →
  refused the same way: no XML part of an Office file needs a DTD;
- a .docx whose document.xml declares a DTD → refused the same way.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from openpyxl import Workbook

from keiri_agent.agents.analysis.datasets.loading import read_excel
from keiri_agent.documents.errors import DocumentError
from keiri_agent.documents.extract import extract_text
from keiri_agent.errors import DatasetError
from keiri_agent.files.excel import ExcelError, read_sheet

_EXTERNAL = b'<!DOCTYPE worksheet [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
_INTERNAL = b'<!DOCTYPE worksheet [<!ENTITY x "yy">]>'


def _rewrite(data: bytes, part_name: str, edit: bytes, *, use_entity: bool) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            part = source.read(info.filename)
            if info.filename == part_name:
                root = part.index(b"<", part.index(b"?>") + 2) if b"?>" in part else 0
                part = part[:root] + edit + part[root:]
                if use_entity:
                    part = part.replace(b"<v>100</v>", b"<v>&x;</v>")
            target.writestr(info, part)
    return out.getvalue()


def _workbook() -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "売上"
    sheet.append(["名前", "金額"])
    sheet.append(["A社", 100])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


@pytest.fixture(params=["external-entity-used", "internal-entity-declared"])
def hostile_xlsx(request: pytest.FixtureRequest) -> bytes:
    if request.param == "external-entity-used":
        return _rewrite(_workbook(), "xl/worksheets/sheet1.xml", _EXTERNAL, use_entity=True)
    return _rewrite(_workbook(), "xl/worksheets/sheet1.xml", _INTERNAL, use_entity=False)


def _assert_clear(error: Exception) -> None:
    text = str(error)
    assert "DTD" in text and "xl/worksheets/sheet1.xml" in text
    assert "保存" in text  # the fix: save it again from Excel
    assert "Traceback" not in text


def test_analysis_refuses_an_xlsx_with_a_dtd(hostile_xlsx: bytes) -> None:
    with pytest.raises(DatasetError) as caught:
        read_excel(hostile_xlsx, "dtd.xlsx", None)
    assert caught.value.code == "INPUT_XML_DTD"
    _assert_clear(caught.value)


def test_excel_read_data_refuses_an_xlsx_with_a_dtd(hostile_xlsx: bytes) -> None:
    with pytest.raises(ExcelError) as caught:
        read_sheet(hostile_xlsx)
    assert caught.value.code == "EXCEL_CORRUPT_WORKBOOK"
    _assert_clear(caught.value)


def test_document_extraction_refuses_an_xlsx_with_a_dtd(hostile_xlsx: bytes) -> None:
    with pytest.raises(DocumentError) as caught:
        extract_text(hostile_xlsx, "dtd.xlsx")
    assert caught.value.code == "DOCUMENT_CORRUPT"
    _assert_clear(caught.value)


def test_document_extraction_refuses_a_docx_with_a_dtd() -> None:
    from docx import Document

    buffer = io.BytesIO()
    document = Document()
    document.add_paragraph("本文")
    document.save(buffer)
    data = _rewrite(
        buffer.getvalue(), "word/document.xml", b'<!DOCTYPE w [<!ENTITY x "y">]>', use_entity=False
    )
    with pytest.raises(DocumentError) as caught:
        extract_text(data, "dtd.docx")
    assert "DTD" in str(caught.value) and "word/document.xml" in str(caught.value)
