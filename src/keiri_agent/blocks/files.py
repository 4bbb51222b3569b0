"""Built-in file blocks: ``file.parse_zip_2tier`` and ``document.extract_text``.

They wrap :mod:`keiri_agent.files.archive` and :mod:`keiri_agent.documents`. File
contents travel through a Plan as ``bytes`` (run state stores them base64-tagged);
JSON Schema has no bytes type, so the block checks the type itself.

Errors: an ``ArchiveError`` (zip-slip, ZIP bomb, encrypted entry, not a ZIP, ...) or a
``DocumentError`` of ``document.extract_text`` becomes an ``INPUT_VALIDATION_FAILED``
BlockError (recoverable: fix the file and re-run) with the original code in
``details.error_code`` and the original hint. In ``file.parse_zip_2tier`` a file whose
text cannot be extracted does not fail the block: its ``error`` says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import invalid, kind_label
from keiri_agent.documents import DocumentError, extract_text
from keiri_agent.errors import BlockError, BlockErrorCode, UserInputError
from keiri_agent.files.archive import ArchiveError, ArchiveFile, read_zip_2tier


def bytes_input(inputs: Mapping[str, Any], name: str) -> bytes:
    """``inputs[name]`` as bytes; BlockError otherwise.

    Accepts bytes, bytearray, memoryview and an uploaded file as ``ui.interactive_input``
    collects it: ``{"name": ..., "data": bytes}``.
    """
    value = inputs.get(name)
    if isinstance(value, Mapping) and "data" in value:
        value = value["data"]
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if not isinstance(value, bytes):
        raise invalid(
            f"{name} にはファイルの中身を渡してください（渡されたのは {kind_label(value)}）",
            hint="ファイル名や文字列ではなく、アップロードしたファイル（ファイル入力の回答など）を"
            "つないでください",
            field=name,
        )
    return value


def positive_int(inputs: Mapping[str, Any], name: str, default: int) -> int:
    """``inputs[name]`` as an integer >= 1 (``default`` when absent or None)."""
    value = inputs.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid(
            f"{name} は 1 以上の整数で指定してください（指定されたのは {value!r}）",
            hint=f"例: {name}: {default}",
            field=name,
        )
    return value


def from_user_error(error: UserInputError, field: str) -> BlockError:
    """An INPUT_VALIDATION_FAILED BlockError carrying ``error``'s code, details and hint."""
    return BlockError(
        BlockErrorCode.INPUT_VALIDATION_FAILED,
        error.message,
        details={**error.details, "field": field, "error_code": error.code},
        hint=error.hint,
        recoverable=True,
    )


def _file_entry(file: ArchiveFile, max_pages: int, max_chars: int) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "group": file.group,
        "path": file.path,
        "name": file.name,
        "size": file.size,
        "text": "",
        "truncated": False,
        "error": None,
    }
    try:
        extracted = extract_text(file.data, file.name, max_pages=max_pages, max_chars=max_chars)
    except DocumentError as error:
        entry["error"] = {"code": error.code, "message": error.message, "hint": error.hint}
    else:
        entry["text"] = extracted.text
        entry["truncated"] = extracted.truncated
    return entry


class ParseZip2TierBlock(ProcessingBlock):
    """``file.parse_zip_2tier``: a ZIP of group folders → groups of files with their text."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        data = bytes_input(inputs, "zip_bytes")
        max_chars = positive_int(inputs, "per_file_chars", 1500)
        max_pages = positive_int(inputs, "max_pages", 20)
        try:
            archive = read_zip_2tier(data)
        except ArchiveError as error:
            raise from_user_error(error, "zip_bytes") from error
        groups = []
        flat = []
        for group in archive.groups:
            entries = []
            for file in group.files:
                ctx.check_cancelled()
                entry = _file_entry(file, max_pages, max_chars)
                entries.append(entry)
                flat.append(entry)
            groups.append({"name": group.name, "files": entries})
        skipped = [
            {"path": item.path, "reason": item.reason, "message": item.message}
            for item in archive.skipped
        ]
        return {"evidence_data": {"groups": groups, "files": flat, "skipped": skipped}}


class ExtractTextBlock(ProcessingBlock):
    """``document.extract_text``: the text of one file (txt/md/csv/pdf/docx/xlsx)."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        data = bytes_input(inputs, "file")
        name = inputs.get("name")
        if not isinstance(name, str) or not name.strip():
            raise invalid(
                "name にはファイル名を指定してください（拡張子で読み方を決めます）",
                hint="例: invoice.pdf",
                field="name",
            )
        max_pages = positive_int(inputs, "max_pages", 20)
        max_chars = positive_int(inputs, "max_chars", 100_000)
        try:
            extracted = extract_text(data, name, max_pages=max_pages, max_chars=max_chars)
        except DocumentError as error:
            raise from_user_error(error, "file") from error
        return {
            "text": extracted.text,
            "pages": [{"number": number, "text": text} for number, text in extracted.pages],
            "truncated": extracted.truncated,
        }
