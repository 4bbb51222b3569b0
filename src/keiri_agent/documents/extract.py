"""``extract_text``: one uploaded file (bytes and its name) → ``ExtractedText``.

Supported: ``.txt``/``.md``/``.csv`` (UTF-8, UTF-8 with BOM, UTF-16 with BOM, CP932 — decoded
strictly), ``.pdf`` (first ``max_pages`` pages, pdfminer.six, /ActualText preferred),
``.docx`` (paragraphs and tables; table rows tab-separated) and ``.xlsx`` (every sheet as
``## name`` followed by its used range as tab-separated rows).

Every failure is a ``DocumentError`` naming the file and how to fix it (codes in
``DocumentErrorCode``); no library exception escapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from keiri_agent import textcodec
from keiri_agent.documents.errors import DocumentError, DocumentErrorCode
from keiri_agent.documents.normalize import (
    join_pages,
    normalize_pages,
    normalize_text,
    unify_newlines,
)

DEFAULT_MAX_PAGES = 20
"""PDF pages read per file (seed 003 §2: 'PDF は先頭 20 ページ')."""
DEFAULT_MAX_CHARS = 100_000
"""Characters kept per file (seed 003: up to ~100,000 characters extracted)."""
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
"""Largest input accepted (50 MiB)."""

TEXT_SUFFIXES = (".txt", ".md", ".csv")
SUPPORTED_SUFFIXES = (*TEXT_SUFFIXES, ".pdf", ".docx", ".xlsx")


@dataclass(frozen=True)
class ExtractedText:
    """The text of one file.

    ``kind`` is the suffix without the dot (``"pdf"``, ``"md"``, ...). ``pages`` holds
    (page number, text) for PDFs and (sheet number, text) for workbooks, else is empty.
    ``truncated`` is True when pages or characters were cut by the limits.
    """

    name: str
    kind: str
    text: str
    pages: tuple[tuple[int, str], ...] = ()
    truncated: bool = False
    warnings: tuple[str, ...] = field(default=())


def decode_text(data: bytes, name: str) -> tuple[str, str]:
    """(text, encoding name) by ``keiri_agent.textcodec``; failures as ``DocumentError``."""
    try:
        decoded = textcodec.decode_text(data)
    except textcodec.TextDecodeError as exc:
        if exc.reason == "binary":
            raise DocumentError(
                DocumentErrorCode.DOCUMENT_CORRUPT,
                name,
                "テキストではなくバイナリデータのファイルです",
                hint="選んだファイルが正しいか確認してください。"
                "テキストは UTF-8 で保存してください。",
                details={"kind": "text"},
            ) from None
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_ENCODING,
            name,
            "文字コードが UTF-8 でも Shift_JIS（CP932）でもないため読めません",
            hint="メモ帳などで開き、文字コードを「UTF-8」にして保存し直してください。",
            details={"tried": ["utf-8-sig", "utf-16", "utf-8", "cp932"]},
        ) from None
    return decoded.text, decoded.encoding


def _check_input(data: bytes, name: str, max_bytes: int) -> str:
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_UNSUPPORTED,
            name,
            f"'{suffix or '（拡張子なし）'}' 形式のファイルには対応していません",
            hint="対応している形式（"
            + "、".join(SUPPORTED_SUFFIXES)
            + "）でアップロードしてください。それ以外は先に PDF で保存してください。",
            details={"suffix": suffix, "supported": list(SUPPORTED_SUFFIXES)},
        )
    if not data:
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_EMPTY,
            name,
            "ファイルが空です（0 バイト）",
            hint="保存やアップロードに失敗した可能性があります。保存し直してもう一度アップロードしてください。",
        )
    if len(data) > max_bytes:
        raise DocumentError(
            DocumentErrorCode.DOCUMENT_TOO_LARGE,
            name,
            f"ファイルが {len(data) / 1_048_576:.1f} MiB あり、上限の "
            f"{max_bytes / 1_048_576:.1f} MiB を超えています",
            hint="小さなファイルに分けるか、必要なページだけを保存してアップロードしてください。",
            details={"bytes": len(data), "max_bytes": max_bytes},
        )
    return suffix[1:]


def _no_text(name: str, kind: str) -> DocumentError:
    return DocumentError(
        DocumentErrorCode.DOCUMENT_NO_TEXT,
        name,
        "ファイルに文字が含まれていません",
        hint="選んだファイルが正しいか、中身が空でないかを確認してください。",
        details={"kind": kind},
    )


def extract_text(
    data: bytes,
    name: str,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    normalize: bool = True,
) -> ExtractedText:
    """Extract the text of one file; raise ``DocumentError`` when that is not possible.

    With ``normalize`` (default) PDF text goes through ``normalize_pages`` and DOCX text
    through ``normalize_text`` without line joining (NFKC, radicals, spaces); text, CSV and XLSX
    keep their content and only get their newlines unified.
    """
    kind = _check_input(data, name, max_bytes)
    warnings: list[str] = []
    pages: list[tuple[int, str]] = []
    truncated = False
    if kind == "pdf":
        from keiri_agent.documents.pdf import read_pdf  # pdfminer: only for a PDF

        pages, pdf_warnings = read_pdf(data, name, max_pages)
        warnings += pdf_warnings
        truncated = any(
            "ページだけを読み込みました" in w or "を読めませんでした" in w for w in pdf_warnings
        )
        if normalize:
            texts = normalize_pages([text for _, text in pages])
            pages = [(number, text) for (number, _), text in zip(pages, texts, strict=True)]
        text = join_pages([page for _, page in pages])
    elif kind == "docx":
        from keiri_agent.documents.office import read_docx

        text, docx_warnings = read_docx(data, name, max_chars)
        warnings += docx_warnings
        text = normalize_text(text, join_lines=False) if normalize else text
    elif kind == "xlsx":
        from keiri_agent.documents.office import read_xlsx

        text, pages, xlsx_warnings = read_xlsx(data, name, max_chars)
        warnings += xlsx_warnings
        truncated = bool(xlsx_warnings)
    else:
        text, encoding = decode_text(data, name)
        text = unify_newlines(text)
        if encoding == "cp932":
            warnings.append("Shift_JIS（CP932）として読み込みました")
    if not text.strip():
        raise _no_text(name, kind)
    if len(text) > max_chars:
        text = text[:max_chars]
        truncated = True
        warnings.append(f"文字数が多いため、先頭の {max_chars:,} 文字までを読み込みました")
    return ExtractedText(
        name=name,
        kind=kind,
        text=text,
        pages=tuple(pages),
        truncated=truncated,
        warnings=tuple(warnings),
    )
