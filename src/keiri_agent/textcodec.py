"""Text file bytes → ``str`` the way Japanese offices save them: the one decoder of the project.

Used by the analysis loader (CSV/TSV), ``documents`` (``.txt``/``.md``/``.csv``), the
knowledge base's FAQ files, ZIP entry names (``files.archive``) and the CLI's
``--spec``/``--inputs``/answers files. Each caller turns :class:`TextDecodeError`
into its own error (what the user sees differs: a dataset, a document, a CLI file).

Order, every step strict (no replacement characters):

1. A byte-order mark decides: UTF-8 BOM → UTF-8, UTF-16 LE/BE BOM → UTF-16 (Excel's
   "Unicode text"). ``detect_bom=False`` skips this (ZIP entry names have no BOM).
2. Without a BOM, bytes holding NUL are binary, not text.
3. UTF-8, then CP932 (Shift_JIS as Windows and Excel write it, with the NEC/IBM
   extensions such as ``①`` and ``㈱``).
4. Text that decoded but holds many control characters (other than tab, CR, LF) is
   binary that happened to decode: more than 1% of its first 64 Ki characters, and
   at least 3, or any NUL.
"""

from __future__ import annotations

import codecs
import unicodedata
from dataclasses import dataclass
from typing import Literal

Encoding = Literal["utf-8-sig", "utf-16", "utf-8", "cp932"]

_BOMS: tuple[tuple[bytes, Encoding], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WITHOUT_BOM: tuple[Encoding, ...] = ("utf-8", "cp932")
_SCAN_CHARS = 65536


@dataclass(frozen=True)
class DecodedText:
    """The text and the encoding it was read with (``utf-8-sig`` means a UTF-8 BOM)."""

    text: str
    encoding: Encoding


class TextDecodeError(ValueError):
    """The bytes are not text in any encoding the decoder reads.

    ``reason`` is ``"binary"`` (NUL bytes or control characters: not a text file) or
    ``"encoding"`` (text, but neither UTF-8 nor CP932, or a BOM the rest contradicts);
    ``tried`` lists the encodings attempted.
    """

    def __init__(self, reason: Literal["binary", "encoding"], tried: tuple[str, ...]) -> None:
        super().__init__(
            "binary data, not text"
            if reason == "binary"
            else f"not text in any of {', '.join(tried)}"
        )
        self.reason: Literal["binary", "encoding"] = reason
        self.tried = tried


def looks_binary(text: str) -> bool:
    """True when decoded text holds a NUL or many other control characters (step 4)."""
    head = text[:_SCAN_CHARS]
    if "\x00" in head:
        return True
    controls = sum(1 for ch in head if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n")
    return controls > max(2, len(head) // 100)


def decode_text(data: bytes, *, detect_bom: bool = True) -> DecodedText:
    """Decode ``data`` as described in the module docstring.

    Raises:
        TextDecodeError: binary data, or text in no supported encoding.
    """
    if detect_bom:
        named = next((encoding for bom, encoding in _BOMS if data.startswith(bom)), None)
        if named is not None:  # the BOM names the encoding: nothing else to try
            return _checked(_strict(data, named), named, (named,))
    if b"\x00" in data:
        raise TextDecodeError("binary", _WITHOUT_BOM)
    for encoding in _WITHOUT_BOM:
        text = _strict(data, encoding)
        if text is not None:
            return _checked(text, encoding, _WITHOUT_BOM)
    raise TextDecodeError("encoding", _WITHOUT_BOM)


def _strict(data: bytes, encoding: Encoding) -> str | None:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None


def _checked(text: str | None, encoding: Encoding, tried: tuple[str, ...]) -> DecodedText:
    if text is None:
        raise TextDecodeError("encoding", tried)
    if looks_binary(text):
        raise TextDecodeError("binary", tried)
    return DecodedText(text, encoding)
