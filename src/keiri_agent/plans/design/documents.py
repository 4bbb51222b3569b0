"""Reference documents for Plan generation (seed 003 §2): extraction, then a digest.

``extract_design_documents`` reads the uploaded files with ``documents.extract_text``
(``.txt .md .pdf .docx .xlsx``) within one character budget shared by all files (seed:
~100,000 characters; PDF: the first pages only; XLSX: the first sheet's top-left range
only). A file that cannot be read never raises: it becomes a ``DesignDocument`` with
``failed=True`` and a Japanese warning naming the file and what to do. Embedded images
and encrypted content are never read; that is reported too.

``digest_documents`` turns the documents into the text the prompt sees (seed: ~4,000
characters): whitespace compressed, lines repeated within or across documents (page
headers/footers, boilerplate) kept once, a fair share of the budget per document, each
part headed by its file name. Nothing readable → ``NO_DOCUMENTS`` and a warning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from keiri_agent.documents import DocumentError, DocumentErrorCode, extract_text
from keiri_agent.documents.normalize import collapse_whitespace
from keiri_agent.plans.design.models import NO_DOCUMENTS, DesignDocument, DocumentDigest

DESIGN_SUFFIXES = (".txt", ".md", ".pdf", ".docx", ".xlsx")
"""What the 設計 page accepts as reference documents (seed 003 §2)."""
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".heic")
XLSX_MAX_ROWS = 200
"""XLSX: rows of the first sheet read (its top-left range, seed 003 §2)."""
XLSX_MAX_COLUMNS = 20
"""XLSX: columns of the first sheet read."""
HEADING = "### {name}"
"""How each document's part of the digest starts."""

_PDF_IMAGE = re.compile(rb"/Subtype\s*/Image")
_SUPPORTED_TEXT = "、".join(DESIGN_SUFFIXES)

_ERROR_TEXT: dict[str, tuple[str, str]] = {
    DocumentErrorCode.DOCUMENT_EMPTY: (
        "ファイルが空です",
        "保存し直してからもう一度アップロードしてください",
    ),
    DocumentErrorCode.DOCUMENT_TOO_LARGE: (
        "ファイルが大きすぎます",
        "必要なページだけに分けてアップロードしてください",
    ),
    DocumentErrorCode.DOCUMENT_ENCRYPTED: (
        "パスワードで保護されているため読めません（暗号化された内容は読み込みません）",
        "パスワードを外して保存し直したファイルをアップロードしてください",
    ),
    DocumentErrorCode.DOCUMENT_CORRUPT: (
        "ファイルが壊れているか、拡張子と中身の形式が合っていません",
        "元のアプリケーションで開いて保存し直してからアップロードしてください",
    ),
    DocumentErrorCode.DOCUMENT_NO_TEXT: (
        "文字が含まれていません（スキャンした画像だけの PDF など）",
        "OCR で文字を認識させるか、元の Word/Excel ファイルをアップロードしてください",
    ),
    DocumentErrorCode.DOCUMENT_ENCODING: (
        "文字コードを判別できません",
        "テキストエディタで UTF-8 として保存し直してください",
    ),
}


def _failed(name: str, problem: str, fix: str) -> DesignDocument:
    return DesignDocument(
        name=name, text="", failed=True, warnings=(f"{name}: {problem}。{fix}。",)
    )


def _image_note(name: str, data: bytes, suffix: str) -> str | None:
    """A warning when the file embeds images (they are never read)."""
    if suffix == ".pdf":
        found = bool(_PDF_IMAGE.search(data))
    elif suffix in (".docx", ".xlsx"):
        folder = b"word/media/" if suffix == ".docx" else b"xl/media/"
        found = folder in data  # zip entry names are stored uncompressed
    else:
        found = False
    if not found:
        return None
    return f"{name}: 埋め込まれた画像は読み込みません（文字だけを参考にします）。"


def _first_sheet(text_pages: tuple[tuple[int, str], ...]) -> tuple[str, bool]:
    """The first sheet's text cut to its top-left range; and whether anything was cut."""
    if not text_pages:
        return "", False
    lines = text_pages[0][1].split("\n")
    heading, rows = lines[0], lines[1:]
    cut = len(text_pages) > 1 or len(rows) > XLSX_MAX_ROWS
    kept = []
    for row in rows[:XLSX_MAX_ROWS]:
        cells = row.split("\t")
        if len(cells) > XLSX_MAX_COLUMNS:
            cut = True
        kept.append("\t".join(cells[:XLSX_MAX_COLUMNS]))
    if not any(row.strip() for row in kept):
        return "", cut
    return "\n".join([heading, *kept]), cut


def _extract_one(name: str, data: bytes, *, budget: int, max_pdf_pages: int) -> DesignDocument:
    suffix = PurePath(name).suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return _failed(
            name,
            "画像ファイルは参考資料として読み込みません",
            "内容を文字で伝えたい場合は PDF（文字入り）や Word に保存してアップロードしてください",
        )
    if suffix not in DESIGN_SUFFIXES:
        return _failed(
            name,
            f"この形式（{suffix or '拡張子なし'}）は読み込めません",
            f"{_SUPPORTED_TEXT} のいずれかに保存してアップロードしてください",
        )
    if budget <= 0:
        return DesignDocument(
            name=name,
            text="",
            truncated=True,
            warnings=(
                f"{name}: 参考資料の文字数の上限に達したため読み込みませんでした。"
                "重要な資料を先に指定してください。",
            ),
        )
    try:
        extracted = extract_text(data, name, max_pages=max_pdf_pages, max_chars=budget)
    except DocumentError as error:
        problem, fix = _ERROR_TEXT.get(error.code, _ERROR_TEXT[DocumentErrorCode.DOCUMENT_CORRUPT])
        return _failed(name, problem, fix)
    except Exception:  # a library failure extract_text did not foresee: never raise
        problem, fix = _ERROR_TEXT[DocumentErrorCode.DOCUMENT_CORRUPT]
        return _failed(name, problem, fix)
    warnings: list[str] = []
    text = extracted.text
    truncated = extracted.truncated
    if suffix == ".xlsx":
        text, cut = _first_sheet(extracted.pages)
        if cut:
            truncated = True
            warnings.append(
                f"{name}: 先頭シートの左上（{XLSX_MAX_ROWS} 行 × {XLSX_MAX_COLUMNS} 列）"
                "だけを読み込みました。"
            )
        if not text:
            return _failed(name, "先頭シートに値がありません", "先頭シートに内容を置いてください")
    elif truncated:
        if suffix == ".pdf" and len(extracted.pages) >= max_pdf_pages:
            warnings.append(f"{name}: 先頭 {max_pdf_pages} ページだけを読み込みました。")
        else:
            warnings.append(f"{name}: 長いため途中までを読み込みました。")
    image = _image_note(name, data, suffix)
    if image:
        warnings.append(image)
    return DesignDocument(name=name, text=text, truncated=truncated, warnings=tuple(warnings))


def extract_design_documents(
    files: Sequence[tuple[str, bytes]],
    *,
    max_chars: int = 100_000,
    max_pdf_pages: int = 20,
) -> list[DesignDocument]:
    """One ``DesignDocument`` per ``(name, data)`` file, in order; never raises.

    ``max_chars`` is shared: each file gets what the files before it left over.
    """
    documents: list[DesignDocument] = []
    remaining = max_chars
    for name, data in files:
        document = _extract_one(name, data, budget=remaining, max_pdf_pages=max_pdf_pages)
        remaining -= len(document.text)
        documents.append(document)
    return documents


def _paragraphs(text: str) -> list[str]:
    """Whitespace-compressed lines (tabs become spaces), blank lines dropped."""
    compressed = collapse_whitespace(text.replace("\t", " ").replace("\u3000", " "))
    return [line.strip() for line in compressed.split("\n") if line.strip()]


def digest_documents(
    documents: Sequence[DesignDocument], *, max_chars: int = 4_000
) -> DocumentDigest:
    """The documents as the prompt sees them (≤ ``max_chars`` characters).

    A line seen before (in this or an earlier document) is dropped, so page furniture
    and boilerplate appear once. The budget is shared fairly: a document that needs less
    than its share leaves the rest to the others. A document's part is headed by
    ``### <file name>``; a part cut short ends with ``…``.
    """
    warnings = [warning for document in documents for warning in document.warnings]
    seen: set[str] = set()
    parts: list[tuple[str, list[str]]] = []
    for document in documents:
        lines = []
        for line in _paragraphs(document.text):
            if line in seen:
                continue
            seen.add(line)
            lines.append(line)
        if lines:
            parts.append((document.name, lines))
    if not parts or max_chars <= 0:
        if not documents:  # none given: nothing to warn about
            return DocumentDigest(text=NO_DOCUMENTS)
        warnings.append(
            "参考資料から読み取れる文字がありませんでした。"
            "資料なしで生成します（必要なら文字を含むファイルを指定し直してください）。"
        )
        return DocumentDigest(
            text=NO_DOCUMENTS, documents=tuple(documents), warnings=tuple(warnings)
        )
    bodies = ["\n".join(lines) for _, lines in parts]
    headings = [HEADING.format(name=name) for name, _ in parts]
    separators = 2 * (len(parts) - 1)
    available = max(0, max_chars - separators - sum(len(h) + 1 for h in headings))
    shares = _fair_shares([len(body) for body in bodies], available)
    rendered = []
    for heading, body, share in zip(headings, bodies, shares, strict=True):
        if share < len(body):
            body = body[: max(0, share - 1)].rstrip() + "…"
        rendered.append(f"{heading}\n{body}")
    text = "\n\n".join(rendered)[:max_chars]
    return DocumentDigest(text=text, documents=tuple(documents), warnings=tuple(warnings))


def _fair_shares(sizes: Sequence[int], budget: int) -> list[int]:
    """Max-min fair split of ``budget`` over wants ``sizes`` (small wants are met in full)."""
    shares = [0] * len(sizes)
    pending = sorted(range(len(sizes)), key=lambda i: sizes[i])
    left = budget
    while pending:
        share = left // len(pending)
        index = pending[0]
        if sizes[index] <= share:
            shares[index] = sizes[index]
            left -= sizes[index]
            pending.pop(0)
            continue
        for index in pending:
            shares[index] = share
        break
    return shares


__all__ = [
    "DESIGN_SUFFIXES",
    "IMAGE_SUFFIXES",
    "XLSX_MAX_COLUMNS",
    "XLSX_MAX_ROWS",
    "digest_documents",
    "extract_design_documents",
]
