"""Build the second HelpDesk sample: the ケイヒクラウド (expense reimbursement) manual PDF.

Usage::

    uv run python scripts/build_expense_helpdesk_samples.py [--chromium /usr/bin/chromium]

Prints ``src/keiri_agent/samples/helpdesk_expense/sources/keihi_manual.html`` to
``docs/keihi_manual.pdf`` THE WAY BROWSERS PRINT: headless Chromium (Debian package
``chromium``) with the Noto CJK fonts (``fonts-noto-cjk``) installed. Chromium's Skia
backend embeds the CFF/OTF CJK glyphs as Type3 fonts with ToUnicode maps. Chrome's own
"Save as PDF" also wraps page content in Form XObjects; the headless build on Debian does
not, so each page's content stream is moved into a Form XObject (``/Fm0``) here and the
page draws it with ``q /Fm0 Do Q``, as in PDFs saved from desktop browsers.

The output is reproducible: the creation/modification dates are fixed, the document id is
derived from the content, and the PDF is rewritten by pypdf. The build needs Chromium; the
tests only read the committed PDF. The other files of the sample (``docs/*.md``, the FAQ
CSV, ``questions.jsonl``) are written by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import tempfile
from pathlib import Path

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    ByteStringObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "src" / "keiri_agent" / "samples" / "helpdesk_expense"
SOURCE = SAMPLE / "sources" / "keihi_manual.html"
OUTPUT = SAMPLE / "docs" / "keihi_manual.pdf"
FIXED_DATE = "D:20250401090000+09'00'"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-pdf-header-footer",
)


def print_to_pdf(chromium: str, source: Path, target: Path) -> None:
    """Chromium's print-to-PDF of ``source`` (a local HTML file) into ``target``."""
    subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--print-to-pdf={target}", source.resolve().as_uri()],
        check=True,
        capture_output=True,
        timeout=180,
    )
    if not target.is_file():
        raise SystemExit(f"chromium wrote no PDF for {source}")


def wrap_pages_in_forms(printed: Path) -> PdfWriter:
    """The printed PDF with each page's content moved into a Form XObject ``/Fm0``."""
    writer = PdfWriter(clone_from=PdfReader(printed))
    for page in writer.pages:
        content = page.get_contents()
        data = content.get_data() if content is not None else b""
        resources = page["/Resources"].get_object()
        form = DecodedStreamObject()
        form.set_data(data)
        form.update(
            {
                NameObject("/Type"): NameObject("/XObject"),
                NameObject("/Subtype"): NameObject("/Form"),
                NameObject("/BBox"): ArrayObject(
                    [NumberObject(round(float(v))) for v in page.mediabox]
                ),
                NameObject("/Resources"): resources,
            }
        )
        form_ref = writer._add_object(form)
        page_resources = DictionaryObject(
            {NameObject("/XObject"): DictionaryObject({NameObject("/Fm0"): form_ref})}
        )
        page[NameObject("/Resources")] = page_resources
        drawing = DecodedStreamObject()
        drawing.set_data(b"q /Fm0 Do Q\n")
        page.replace_contents(drawing)
    writer.compress_identical_objects()
    for page in writer.pages:
        page.compress_content_streams()
    return writer


def finish(writer: PdfWriter, target: Path) -> None:
    """Fixed metadata and a content-derived id, then write ``target``."""
    writer.add_metadata(
        {
            "/Title": "ケイヒクラウド 利用者マニュアル",
            "/Creator": "Chromium (headless) print to PDF",
            "/Producer": "Skia/PDF; pages wrapped in Form XObjects by pypdf",
            "/CreationDate": FIXED_DATE,
            "/ModDate": FIXED_DATE,
        }
    )
    digest = hashlib.md5(SOURCE.read_bytes(), usedforsecurity=False).digest()
    writer._ID = ArrayObject([ByteStringObject(digest), ByteStringObject(digest)])
    with target.open("wb") as out:
        writer.write(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keiri-expense-sample-") as folder:
        printed = Path(folder) / "printed.pdf"
        print_to_pdf(args.chromium, SOURCE, printed)
        finish(wrap_pages_in_forms(printed), OUTPUT)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
