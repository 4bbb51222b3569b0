"""Text extraction from uploaded documents (txt/md/csv/pdf/docx/xlsx) and its normalisation."""

from keiri_agent.documents.errors import DocumentError, DocumentErrorCode
from keiri_agent.documents.extract import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_PAGES,
    SUPPORTED_SUFFIXES,
    ExtractedText,
    extract_text,
)
from keiri_agent.documents.normalize import normalize_pages, normalize_text

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_PAGES",
    "SUPPORTED_SUFFIXES",
    "DocumentError",
    "DocumentErrorCode",
    "ExtractedText",
    "extract_text",
    "normalize_pages",
    "normalize_text",
]
