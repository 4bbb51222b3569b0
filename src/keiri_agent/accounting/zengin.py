"""The 全銀協 fixed-length file formats (全銀フォーマット): 200-byte records in JIS/Shift_JIS.

A file is a header record (データ区分 1), data records (2), a trailer (8) and an end
record (9), with or without CR LF between records. Numbers are right-aligned and
zero-filled; text is half-width katakana, upper-case letters and digits, left-aligned
and space-filled. Dates are YYMMDD in the Japanese era (和暦).

Read here (種別コード in the header):

- ``03`` 入出金取引明細: data record — 照会番号 8, 勘定日 6, 預入・払出日 6, 入払区分 1
  (1 入金, 2 出金), 取引区分 2, 取引金額 12, うち他店券金額 12, 交換呈示日 6, 不渡返還日 6,
  手形・小切手区分 1, 手形・小切手番号 7, 僚店番号 3, 振込依頼人コード 10, 振込依頼人名
  または契約者番号 48, 仕向銀行名 15, 仕向店名 15, 摘要内容 20, EDI 情報 20, ダミー 1;
- ``01`` 振込入金通知: data record — 照会番号 6, 勘定日 6, 起算日 6, 金額 10, うち他店券
  金額 10, 振込依頼人コード 10, 振込依頼人名 48, 仕向銀行名 15, 仕向店名 15, 取消区分 1,
  EDI 情報 20, ダミー 52.

(Layouts as published by the banks for the 全銀協 standard formats, e.g. 阿波銀行
「振込入金通知（全銀協制定フォーマット）」.)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal

from keiri_agent.accounting.bank_lines import BankLine
from keiri_agent.errors import UserInputError

RECORD = 200
TRANSACTIONS = "03"
"""種別コード of 入出金取引明細."""
TRANSFER_NOTICE = "01"
"""種別コード of 振込入金通知."""
_KINDS = (TRANSACTIONS, TRANSFER_NOTICE)

_FIELDS: dict[str, dict[str, tuple[int, int]]] = {
    TRANSACTIONS: {
        "reference": (1, 8),
        "date": (9, 6),
        "direction": (21, 1),
        "kind": (22, 2),
        "amount": (24, 12),
        "payer": (81, 48),
        "bank": (129, 15),
        "branch": (144, 15),
        "text": (159, 20),
        "edi": (179, 20),
    },
    TRANSFER_NOTICE: {
        "reference": (1, 6),
        "date": (7, 6),
        "amount": (19, 10),
        "payer": (49, 48),
        "bank": (97, 15),
        "branch": (112, 15),
        "cancelled": (127, 1),
        "edi": (128, 20),
    },
}
_HOLDER: dict[str, tuple[int, int]] = {TRANSACTIONS: (73, 40), TRANSFER_NOTICE: (67, 40)}
"""口座名 in the header record: after 預金種目 and 口座番号 (N10 in 03, after a ダミー N3 —
some banks' 03 files give the number in 7 digits; N7 in 01)."""
TRANSFER_KIND = "11"
"""取引区分 of a 振込 in 入出金取引明細 (10 現金, 14 振替, 18 その他, 19 訂正)."""
BOOK_TRANSFER_KIND = "14"
_ERA_START = {"令和": 2018, "平成": 1988}


def records(data: bytes) -> list[bytes]:
    """The 200-byte records of a 全銀 file (line breaks between records allowed)."""
    if b"\n" in data or b"\r" in data:
        lines = [line for line in data.replace(b"\r\n", b"\n").split(b"\n") if line.strip()]
        if all(len(line) == RECORD for line in lines):
            return lines
        data = b"".join(line.rstrip(b"\r") for line in lines)
    return [data[i : i + RECORD] for i in range(0, len(data), RECORD)]


def is_zengin(data: bytes) -> bool:
    """True for a 全銀 入出金取引明細 or 振込入金通知 file."""
    found = records(data[: RECORD * 4 + 8])
    return (
        bool(found)
        and len(found[0]) == RECORD
        and found[0][:1] == b"1"
        and (found[0][1:3].decode("ascii", "replace") in _KINDS)
    )


def _field(record: bytes, place: tuple[int, int]) -> str:
    start, size = place
    return record[start : start + size].decode("cp932", errors="replace").strip()


def wareki_date(text: str, today: dt.date | None = None) -> dt.date | None:
    """A YYMMDD date in the era (令和, else 平成 for a date too far in the future),
    None for 000000 or blanks."""
    if not text.strip("0 "):
        return None
    if len(text) != 6 or not text.isdigit():
        raise ValueError(f"not a YYMMDD date: {text!r}")
    year, month, day = int(text[:2]), int(text[2:4]), int(text[4:])
    today = today or dt.date.today()
    for era in ("令和", "平成"):
        try:
            date = dt.date(_ERA_START[era] + year, month, day)
        except ValueError:
            continue
        if date <= today.replace(year=today.year + 1) or era == "平成":
            return date
    raise ValueError(f"not a date: {text!r}")


def account_name(data: bytes) -> str:
    """The account holder (口座名) the header record names, or ""."""
    found = records(data)
    kind = found[0][1:3].decode("ascii", "replace") if found else ""
    if kind not in _HOLDER or len(found[0]) != RECORD:
        return ""
    start, size = _HOLDER[kind]
    if kind == TRANSACTIONS and not found[0][70:73].isdigit():
        start = 70  # 口座番号 N7: the name follows three bytes earlier
    return _field(found[0], (start, size))


def read_transactions(data: bytes) -> list[BankLine]:
    """The data records of a 入出金取引明細 or 振込入金通知 file as statement lines."""
    found = records(data)
    kind = found[0][1:3].decode("ascii", "replace")
    fields = _FIELDS[kind]
    lines: list[BankLine] = []
    for number, record in enumerate(found, start=1):
        if len(record) != RECORD:
            raise UserInputError(
                f"全銀形式のファイルの {number} 件目のレコードが {len(record)} バイトです"
                "（200 バイトのはず）",
                hint="銀行からファイルをダウンロードし直してください（途中で切れているか、形式が違います）",
                details={"record": number, "length": len(record)},
            )
        if record[:1] != b"2":
            continue
        lines.append(_line(len(lines) + 1, number, record, kind, fields))
    return _cancellations_applied(lines)


def _cancellations_applied(lines: list[BankLine]) -> list[BankLine]:
    """A 取消 record (取消区分 1) takes back an earlier notice of the same amount from the
    same remitter: that deposit never stays in the account either."""
    result = list(lines)
    for cancel in lines:
        if cancel.record.get("取消区分") != "1":
            continue
        original = next(
            (
                index
                for index, line in enumerate(result)
                if line.row < cancel.row
                and line.deposit == cancel.record["金額"]
                and line.payer == cancel.payer
                and not line.record.get("取消")
            ),
            None,
        )
        if original is not None:
            taken = result[original]
            record = {**taken.record, "取消": f"照会番号 {cancel.record['照会番号']} で取消"}
            result[original] = dataclasses.replace(taken, deposit=Decimal(0), record=record)
    return result


def _line(
    row: int, number: int, record: bytes, kind: str, fields: dict[str, tuple[int, int]]
) -> BankLine:
    values = {name: _field(record, place) for name, place in fields.items()}
    try:
        amount = Decimal(int(values["amount"] or "0"))
        date = wareki_date(values["date"])
    except ValueError:
        raise UserInputError(
            f"全銀形式のファイルの {number} 件目のレコードの金額か日付が読めません",
            hint="銀行からファイルをダウンロードし直してください",
            details={"record": number},
        ) from None
    deposit, withdrawal = amount, Decimal(0)
    if kind == TRANSACTIONS and values["direction"] == "2":
        deposit, withdrawal = Decimal(0), amount
    if values.get("cancelled") == "1":  # a cancelled notice moves no money
        deposit = Decimal(0)
    text = " ".join(part for part in (values.get("text", ""), values["edi"]) if part)
    record_view = {
        "照会番号": values["reference"],
        "勘定日": date.isoformat() if date else None,
        "入金額": int(deposit),
        "出金額": int(withdrawal),
        "振込依頼人名": values["payer"],
        "仕向銀行名": values["bank"],
        "仕向店名": values["branch"],
        "摘要": values.get("text", ""),
        "EDI情報": values["edi"],
    }
    if kind == TRANSACTIONS:
        record_view["取引区分"] = values["kind"]
    else:
        record_view.update(取消区分=values["cancelled"], 金額=int(amount))
    return BankLine(row, date, deposit, withdrawal, values["payer"], text, False, record_view)
