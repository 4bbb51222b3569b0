"""file.parse_zip_2tier and document.extract_text: outputs, per-file errors, hostile ZIPs."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest
from block_harness import failure, make_context, run

from keiri_agent.blocks.base import BlockContext


@pytest.fixture
def ctx() -> BlockContext:
    return make_context()


def make_zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def set_encrypted_flag(data: bytes) -> bytes:
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (pos := out.find(signature, start)) >= 0:
            (flags,) = struct.unpack_from("<H", out, pos + offset)
            struct.pack_into("<H", out, pos + offset, flags | 0x1)
            start = pos + 4
    return bytes(out)


EVIDENCE = {
    "A社/請求書.txt": "請求書\n請求金額 12,000円\n".encode(),
    "A社/写真.jpg": b"\xff\xd8\xff\xe0 not really a jpeg",
    "B社/2024/メモ.md": "# メモ\n支払済み".encode("cp932"),
    "B社/空.txt": b"",
    "readme.txt": b"top level",
    "__MACOSX/A社/._請求書.txt": b"junk",
    "B社/old.zip": make_zip({"x.txt": b"x"}),
}


def test_zip_groups_files_text_and_per_file_errors(ctx: BlockContext) -> None:
    data = run("file.parse_zip_2tier", ctx, zip_bytes=make_zip(EVIDENCE))["evidence_data"]

    assert [g["name"] for g in data["groups"]] == ["", "A社", "B社"]
    by_path = {f["path"]: f for f in data["files"]}
    assert list(by_path) == [
        "readme.txt",
        "A社/写真.jpg",
        "A社/請求書.txt",
        "B社/2024/メモ.md",
        "B社/空.txt",
    ]
    invoice = by_path["A社/請求書.txt"]
    assert invoice == {
        "group": "A社",
        "path": "A社/請求書.txt",
        "name": "請求書.txt",
        "size": len(EVIDENCE["A社/請求書.txt"]),
        "text": "請求書\n請求金額 12,000円\n",
        "truncated": False,
        "error": None,
    }
    assert by_path["B社/2024/メモ.md"]["text"] == "# メモ\n支払済み"
    assert by_path["B社/2024/メモ.md"]["group"] == "B社"
    photo = by_path["A社/写真.jpg"]
    assert photo["text"] == "" and photo["error"]["code"] == "DOCUMENT_UNSUPPORTED"
    assert photo["error"]["hint"]
    assert by_path["B社/空.txt"]["error"]["code"] == "DOCUMENT_EMPTY"
    assert by_path["readme.txt"]["group"] == ""
    # the grouped view holds the same dicts as the flat list
    grouped = [f for g in data["groups"] for f in g["files"]]
    assert grouped == data["files"]
    reasons = {s["path"]: s["reason"] for s in data["skipped"]}
    assert reasons == {"__MACOSX/A社/._請求書.txt": "system_file", "B社/old.zip": "nested_archive"}


def test_per_file_chars_cuts_the_text(ctx: BlockContext) -> None:
    data = make_zip({"A/long.txt": ("あ" * 50).encode()})
    out = run("file.parse_zip_2tier", ctx, zip_bytes=data, per_file_chars=10)
    (entry,) = out["evidence_data"]["files"]
    assert entry["text"] == "あ" * 10 and entry["truncated"] is True


@pytest.mark.parametrize("name", ["../evil.txt", "A/../../evil.txt", "/etc/passwd"])
def test_zip_slip_is_a_clear_block_error(ctx: BlockContext, name: str) -> None:
    error = failure("file.parse_zip_2tier", ctx, zip_bytes=make_zip({name: b"x"}))
    assert error.details["error_code"] == "ARCHIVE_UNSAFE_PATH"
    assert error.details["entry"] == name
    assert error.details["field"] == "zip_bytes"
    assert "安全でないパス" in error.message
    assert error.hint and error.recoverable is True


def test_encrypted_not_a_zip_empty_and_bomb(ctx: BlockContext) -> None:
    encrypted = set_encrypted_flag(make_zip({"A/secret.txt": b"secret"}))
    cases = {
        encrypted: "ARCHIVE_ENCRYPTED_ENTRY",
        b"this is not a zip": "ARCHIVE_NOT_A_ZIP",
        b"": "ARCHIVE_EMPTY_FILE",
        make_zip({"A/zeros.txt": b"\0" * (5 * 1024 * 1024)}): "ARCHIVE_COMPRESSION_RATIO",
    }
    for data, code in cases.items():
        error = failure("file.parse_zip_2tier", ctx, zip_bytes=data)
        assert error.details["error_code"] == code
        assert error.recoverable is True


def test_zip_bytes_must_be_bytes(ctx: BlockContext) -> None:
    error = failure("file.parse_zip_2tier", ctx, zip_bytes="evidence.zip")
    assert "bytes" in error.message and error.details["field"] == "zip_bytes"
    # bytearray is accepted
    out = run("file.parse_zip_2tier", ctx, zip_bytes=bytearray(make_zip({"a.txt": b"a"})))
    assert out["evidence_data"]["files"][0]["text"] == "a"


def test_extract_text_of_one_file(ctx: BlockContext) -> None:
    out = run("document.extract_text", ctx, file="請求書\r\n金額".encode("cp932"), name="a.txt")
    assert out == {"text": "請求書\n金額", "pages": [], "truncated": False}
    cut = run("document.extract_text", ctx, file=b"abcdef", name="a.md", max_chars=3)
    assert cut["text"] == "abc" and cut["truncated"] is True


def test_extract_text_of_a_workbook_has_pages(ctx: BlockContext) -> None:
    from openpyxl import Workbook

    book = Workbook()
    assert book.active is not None
    book.active.title = "売上"
    book.active.append(["取引先", "金額"])
    book.active.append(["A社", 1200])
    buf = io.BytesIO()
    book.save(buf)
    out = run("document.extract_text", ctx, file=buf.getvalue(), name="売上.xlsx")
    assert "A社\t1200" in out["text"]
    assert out["pages"][0]["number"] == 1 and "A社" in out["pages"][0]["text"]


def test_extract_text_errors_keep_code_and_hint(ctx: BlockContext) -> None:
    error = failure("document.extract_text", ctx, file=b"GIF89a", name="logo.gif")
    assert error.details["error_code"] == "DOCUMENT_UNSUPPORTED"
    assert error.details["file"] == "logo.gif"
    assert error.hint and "アップロード" in error.hint
    corrupt = failure("document.extract_text", ctx, file=b"%PDF-broken", name="x.pdf")
    assert corrupt.details["error_code"] in {"DOCUMENT_CORRUPT", "DOCUMENT_NO_TEXT"}
    not_bytes = failure("document.extract_text", ctx, file=None, name="x.txt")
    assert not_bytes.details["field"] == "file"
