"""The one text decoder: BOMs, UTF-8, CP932, and binary data refused."""

from __future__ import annotations

import codecs
import unicodedata

import pytest

from keiri_agent.textcodec import TextDecodeError, decode_text, looks_binary

TEXT = "勘定科目,金額\r\n旅費,1,234\r\n①㈱\r\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (TEXT.encode("utf-8-sig"), "utf-8-sig"),
        (TEXT.encode("utf-16"), "utf-16"),  # with the platform's BOM
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16"),
        (TEXT.encode("cp932"), "cp932"),
        (b"", "utf-8"),
    ],
)
def test_decodes_each_encoding(data: bytes, encoding: str) -> None:
    decoded = decode_text(data)
    assert decoded.text == ("" if not data else TEXT)
    assert decoded.encoding == encoding


def test_utf8_is_preferred_over_cp932() -> None:
    # valid in both: UTF-8 wins (CP932 would read it as mojibake)
    assert decode_text("売上".encode()).encoding == "utf-8"


@pytest.mark.parametrize(
    "data",
    [
        b"abc\x00\x01def",
        bytes(range(256)) * 4,
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"a\x01b\x02c\x03d\x04e",  # control characters without NUL
    ],
)
def test_binary_data_is_refused(data: bytes) -> None:
    with pytest.raises(TextDecodeError) as info:
        decode_text(data)
    assert info.value.reason == "binary"


@pytest.mark.parametrize(
    ("data", "tried"),
    [
        (b"\x81\x20\xff\xfe\x80abc", ("utf-8", "cp932")),
        (codecs.BOM_UTF8 + b"\xff\xfe\x80", ("utf-8-sig",)),  # the BOM decides: no fallback
    ],
)
def test_undecodable_text(data: bytes, tried: tuple[str, ...]) -> None:
    with pytest.raises(TextDecodeError) as info:
        decode_text(data)
    assert info.value.reason == "encoding"
    assert info.value.tried == tried


def test_detect_bom_off_reads_bom_bytes_as_text() -> None:
    # ZIP entry names carry no BOM: bytes FF FE are not UTF-16 there
    with pytest.raises(TextDecodeError):
        decode_text(b"\xff\xfea\x00", detect_bom=False)
    assert decode_text("請求書".encode("cp932"), detect_bom=False).text == "請求書"


def test_a_few_control_characters_are_text() -> None:
    assert not looks_binary("page 1\fpage 2\x1b")  # a form feed and an escape: still text
    assert looks_binary("x\x00")


def test_the_control_characters_counted_are_exactly_unicode_category_cc() -> None:
    """Every Cc character but tab, CR and LF counts (NUL by its own rule); nothing else does."""
    counted = "".join(ch for ch in map(chr, range(0x3000)) if looks_binary(f"a{ch * 3}"))
    expected = "".join(
        ch
        for ch in map(chr, range(0x3000))
        if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n"
    )
    assert counted == expected


def test_a_text_is_binary_only_beyond_one_percent_of_control_characters() -> None:
    text = "a" * 9_700 + "\x1b" * 97
    assert not looks_binary(text)
    assert looks_binary(text + "\x1b" * 2)
