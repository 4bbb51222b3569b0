"""The 全銀協 総合振込 file (全銀協制定ファイルフォーマット【総合振込】): write and read.

A file is one header record, a data record per transfer, a trailer and an end record,
120 bytes each in JIS (JIS X 0201: ASCII and half-width katakana, one byte per
character; the same bytes in Shift_JIS), optionally each followed by CR LF (122 bytes).
Numbers (N) are right-aligned and zero-filled; text (C) is left-aligned and
space-filled, in the 全銀 character set (:func:`zengin_text`).

- Header (データ区分 1): 種別コード 2 (``21`` 総合振込), コード区分 1 (``0`` JIS),
  振込依頼人コード 10 (委託者コード, from the bank), 振込依頼人名 40, 振込指定日 4 (MMDD),
  仕向銀行番号 4, 仕向銀行名 15, 仕向支店番号 3, 仕向支店名 15, 預金種目 1, 口座番号 7,
  ダミー 17.
- Data (2): 被仕向銀行番号 4, 被仕向銀行名 15, 被仕向支店番号 3, 被仕向支店名 15,
  手形交換所番号 4 (unused: 0), 預金種目 1 (1 普通, 2 当座, 4 貯蓄, 9 その他), 口座番号 7,
  受取人名 30, 振込金額 10, 新規コード 1 (0), 顧客コード1 10, 顧客コード2 10,
  振込指定区分 1 (7 電信), 識別表示 1 (space), ダミー 7.
- Trailer (8): 合計件数 6, 合計金額 12, ダミー 101. End (9): ダミー 119.

Sources: 群馬銀行「全銀協制定ファイルフォーマット【総合振込】」(expydoc.com/doc/11700435),
三菱UFJ銀行 Web21「ファイルレイアウト 総合振込（全銀形式）」. The character set: 全銀協's
rules for 口座名義 as the banks publish them (half-width upper-case katakana without
small letters, ﾞ ﾟ, A–Z, 0–9, space and ``( ) - . /``).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass

from keiri_agent.accounting.bank_statements import halfwidth_kana

RECORD = 120
KIND = "21"
"""種別コード of 総合振込."""
ACCOUNT_TYPES = {"1": "普通", "2": "当座", "4": "貯蓄", "9": "その他"}
"""預金種目 codes and their names."""
MAX_AMOUNT = 9_999_999_999
"""振込金額 is N(10)."""
MAX_TOTAL = 999_999_999_999
"""合計金額 is N(12)."""
MAX_COUNT = 999_999
"""合計件数 is N(6)."""

_ALLOWED = re.compile(r"[0-9A-Z ()\-./\uff66\uff71-\uff9f]*")
"""The 全銀 character set (ｦ, ｱ…ﾝ, ﾞ, ﾟ: no small kana ｧ…ｯ, no ｰ)."""
_SMALL_HALF = str.maketrans("ｧｨｩｪｫｬｭｮｯ", "ｱｲｳｴｵﾔﾕﾖﾂ")
_SMALL_FULL = str.maketrans("ァィゥェォャュョッヮヵヶ", "アイウエオヤユヨツワカケ")
_DASHES = str.maketrans(dict.fromkeys("ー－‐‑‒–—―−ｰ", "-"))


@dataclass(frozen=True)
class Account:
    """A bank account as a 全銀 record names it: codes, kana names, type, number."""

    bank_code: str
    bank_name: str
    branch_code: str
    branch_name: str
    account_type: str
    number: str


@dataclass(frozen=True)
class Remitter:
    """The header: who pays (委託者コード, 依頼人名), from which account, on which day."""

    code: str
    name: str
    transfer_date: dt.date
    account: Account


@dataclass(frozen=True)
class Transfer:
    """One data record: to which account, to whom, how much."""

    account: Account
    name: str
    amount: int
    customer_code1: str = ""
    customer_code2: str = ""


@dataclass(frozen=True)
class TransferFile:
    """A whole 総合振込 file as read back."""

    remitter: Remitter
    transfers: list[Transfer]
    count: int
    total: int


def zengin_text(text: str) -> str:
    """``text`` in the 全銀 character set: NFKC, hiragana as katakana, small kana as
    large (ｼﾖｳｼﾞ), dashes and the long-vowel mark as ``-``, letters upper-case,
    katakana half-width.

    Raises:
        ValueError: a character with no 全銀 form (kanji, ・, ＆, …); its text is the
            character.
    """
    normalized = unicodedata.normalize("NFKC", text).upper().translate(_DASHES)
    katakana = "".join(
        chr(ord(char) + 0x60) if "\u3041" <= char <= "\u3096" else char for char in normalized
    )
    converted = halfwidth_kana(katakana.translate(_SMALL_FULL)).translate(_SMALL_HALF)
    converted = converted.replace("\u3000", " ")
    for char in converted:
        if not _ALLOWED.fullmatch(char):
            raise ValueError(char)
    return converted


def _number(value: int | str, size: int) -> str:
    text = str(value)
    if not text.isdigit() or len(text) > size:
        raise ValueError(f"{value!r} does not fit N({size})")
    return text.zfill(size)


def _text(value: str, size: int) -> str:
    if len(value) > size or not _ALLOWED.fullmatch(value):
        raise ValueError(f"{value!r} does not fit C({size})")
    return value.ljust(size)


def _record(*fields: str) -> bytes:
    data = "".join(fields).encode("cp932")
    if len(data) != RECORD:
        raise ValueError(f"a record of {len(data)} bytes")
    return data


def write_transfer_file(
    remitter: Remitter, transfers: list[Transfer], *, line_breaks: bool = True
) -> bytes:
    """The 総合振込 file's bytes. Every field must already fit (``zengin_text``, codes
    of the right length): a field that does not is a ``ValueError``, never cut here."""
    account = remitter.account
    header = _record(
        "1",
        KIND,
        "0",
        _number(remitter.code, 10),
        _text(remitter.name, 40),
        remitter.transfer_date.strftime("%m%d"),
        _number(account.bank_code, 4),
        _text(account.bank_name, 15),
        _number(account.branch_code, 3),
        _text(account.branch_name, 15),
        _number(account.account_type, 1),
        _number(account.number, 7),
        " " * 17,
    )
    data = [
        _record(
            "2",
            _number(t.account.bank_code, 4),
            _text(t.account.bank_name, 15),
            _number(t.account.branch_code, 3),
            _text(t.account.branch_name, 15),
            "0000",
            _number(t.account.account_type, 1),
            _number(t.account.number, 7),
            _text(t.name, 30),
            _number(t.amount, 10),
            "0",
            _number(t.customer_code1 or 0, 10),
            _number(t.customer_code2 or 0, 10),
            "7",
            " ",
            " " * 7,
        )
        for t in transfers
    ]
    total = sum(t.amount for t in transfers)
    trailer = _record("8", _number(len(transfers), 6), _number(total, 12), " " * 101)
    end = _record("9", " " * 119)
    separator = b"\r\n" if line_breaks else b""
    return b"".join(record + separator for record in (header, *data, trailer, end))


def _records(data: bytes) -> list[bytes]:
    if b"\n" in data:
        return [line.rstrip(b"\r") for line in data.split(b"\n") if line.strip(b"\r\x1a")]
    return [data[i : i + RECORD] for i in range(0, len(data.rstrip(b"\x1a")), RECORD)]


def _slice(record: bytes, start: int, size: int) -> str:
    return record[start : start + size].decode("cp932")


def read_transfer_file(data: bytes, *, year: int) -> TransferFile:
    """A 総合振込 file back as written (for checking a file before it goes to the bank);
    the header's MMDD is read as a day of ``year`` (the file carries no year).

    Raises:
        ValueError: not a well-formed 総合振込 file (what is wrong, in English).
    """
    records = _records(data)
    if any(len(record) != RECORD for record in records):
        raise ValueError("every record must be 120 bytes")
    kinds = "".join(chr(record[0]) for record in records)
    if not re.fullmatch(r"12*89", kinds):
        raise ValueError(f"record order {kinds!r}, expected 1, 2…, 8, 9")
    header, *body, trailer, _end = records
    if _slice(header, 1, 2) != KIND:
        raise ValueError("not a 総合振込 file (種別コード is not 21)")
    remitter = Remitter(
        code=_slice(header, 4, 10),
        name=_slice(header, 14, 40).rstrip(),
        transfer_date=dt.date(year, int(_slice(header, 54, 2)), int(_slice(header, 56, 2))),
        account=Account(
            bank_code=_slice(header, 58, 4),
            bank_name=_slice(header, 62, 15).rstrip(),
            branch_code=_slice(header, 77, 3),
            branch_name=_slice(header, 80, 15).rstrip(),
            account_type=_slice(header, 95, 1),
            number=_slice(header, 96, 7),
        ),
    )
    transfers = [
        Transfer(
            account=Account(
                bank_code=_slice(record, 1, 4),
                bank_name=_slice(record, 5, 15).rstrip(),
                branch_code=_slice(record, 20, 3),
                branch_name=_slice(record, 23, 15).rstrip(),
                account_type=_slice(record, 42, 1),
                number=_slice(record, 43, 7),
            ),
            name=_slice(record, 50, 30).rstrip(),
            amount=int(_slice(record, 80, 10)),
            customer_code1=_slice(record, 91, 10).lstrip("0"),
            customer_code2=_slice(record, 101, 10).lstrip("0"),
        )
        for record in body
    ]
    count, total = int(_slice(trailer, 1, 6)), int(_slice(trailer, 7, 12))
    if count != len(transfers) or total != sum(t.amount for t in transfers):
        raise ValueError("the trailer's count or total does not match the data records")
    return TransferFile(remitter, transfers, count, total)
