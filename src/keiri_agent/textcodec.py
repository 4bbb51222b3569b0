"""Text file bytes → ``str`` the way Japanese offices save them: the one decoder of the project.

Used by the analysis loader (CSV/TSV), ``documents`` (``.txt``/``.md``/``.csv``), the
knowledge base's FAQ files, ZIP entry names (``files.archive``) and the CLI's
``--spec``/``--inputs``/answers files. Each caller turns :class:`TextDecodeError`
into its own error (what the user sees differs: a dataset, a document, a CLI file).

Order, every step strict (no replacement characters), decided on a bounded prefix
(the first :data:`PREFIX_BYTES`) and confirmed on the whole input: the reader given to
:func:`read_detected` decodes the whole input with the chosen encoding and a
``UnicodeDecodeError`` there moves on to the next candidate, exactly as decoding the
whole input up front would (a large CSV is thus never held as one decoded ``str``):

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
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Literal, TypeVar

Encoding = Literal["utf-8-sig", "utf-16", "utf-8", "cp932"]

_BOMS: tuple[tuple[bytes, Encoding], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WITHOUT_BOM: tuple[Encoding, ...] = ("utf-8", "cp932")
_SCAN_CHARS = 65536
PREFIX_BYTES = 1 << 20
"""Bytes the encoding is detected from (at least ``_SCAN_CHARS`` characters in any encoding)."""
_NUL_CHUNK = 1 << 20
_CONTROLS = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Unicode category Cc (U+0000–U+001F, U+007F–U+009F) without NUL, tab, LF and CR."""

T = TypeVar("T")


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
    limit = max(2, len(head) // 100)
    return any(count > limit for count, _ in enumerate(_CONTROLS.finditer(head), start=1))


def decode_text(data: bytes, *, detect_bom: bool = True) -> DecodedText:
    """Decode ``data`` as described in the module docstring.

    Raises:
        TextDecodeError: binary data, or text in no supported encoding.
    """
    text, encoding = read_detected(io.BytesIO(data), data.decode, detect_bom=detect_bom)
    return DecodedText(text, encoding)


def read_detected(
    stream: BinaryIO, read: Callable[[Encoding], T], *, detect_bom: bool = True
) -> tuple[T, Encoding]:
    """``read(encoding)`` with the encoding detected from ``stream``'s first bytes.

    ``stream`` is seekable and rewound before each ``read``; ``read`` consumes it (or
    the same input another way) decoding strictly, and raises ``UnicodeDecodeError``
    when the input is not in ``encoding``: the next candidate is then tried.

    Raises:
        TextDecodeError: binary data, or text in no supported encoding.
    """
    stream.seek(0)
    prefix = stream.read(PREFIX_BYTES)
    complete = not stream.read(1)
    named = None
    if detect_bom:
        named = next((encoding for bom, encoding in _BOMS if prefix.startswith(bom)), None)
    if named is not None:  # the BOM names the encoding: nothing else to try
        candidates: tuple[Encoding, ...] = (named,)
    elif b"\x00" in prefix or (not complete and _holds_nul(stream)):
        raise TextDecodeError("binary", _WITHOUT_BOM)
    else:
        candidates = _WITHOUT_BOM
    for encoding in candidates:
        head = _strict_prefix(prefix, encoding, final=complete)
        if head is None:
            continue
        if looks_binary(head):
            raise TextDecodeError("binary", candidates)
        stream.seek(0)
        try:
            return read(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise TextDecodeError("encoding", candidates)


def _holds_nul(stream: BinaryIO) -> bool:
    """A NUL byte anywhere in ``stream`` (read in chunks: no copy of the whole input)."""
    stream.seek(0)
    while chunk := stream.read(_NUL_CHUNK):
        if b"\x00" in chunk:
            return True
    return False


def _strict_prefix(prefix: bytes, encoding: Encoding, *, final: bool) -> str | None:
    """``prefix`` decoded strictly (a character cut at its end is fine unless ``final``)."""
    try:
        return codecs.getincrementaldecoder(encoding)("strict").decode(prefix, final=final)
    except UnicodeDecodeError:
        return None
