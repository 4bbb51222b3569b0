"""Bank statements as lines: date, deposit, withdrawal, payer (入出金明細).

Three kinds of file are read (``read_statement``):

- the CSV (or Excel) download of an internet-banking service, whatever its layout:
  columns are found by their headers (``BANK_ROLES``; 入金金額 / お預り金額 / 入金額,
  or one お取引金額 column with an 入払区分, or signed amounts), the header below any
  preamble lines (account, period);
- the 全銀協 fixed-length formats of 200-byte records (``zengin`` module):
  入出金取引明細 (種別 03) and 振込入金通知 (種別 01);
- records a Plan has already read (``lines_from_records``).

The payer (振込依頼人名) is its own column when the bank has one; otherwise it is
taken from the description (摘要: 「振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ」) without the transaction word in
front, or from the お取引内容 column when the 摘要 holds nothing more. A deposit that
is not a customer's payment (interest, a tax refund, a closed time deposit, a transfer
of ours returned) is marked (``BankLine.bank_entry``); a CSV download's account holder
(口座名義 above the header) is kept to recognise the company's own transfers.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from keiri_agent.accounting import zengin
from keiri_agent.accounting.bank_lines import BankLine, Statement
from keiri_agent.accounting.columns import Role, find_columns, header_key, header_row
from keiri_agent.accounting.tables import file_bytes, read_table, table_rows
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import date_value, decimal_value

TABLE = "入金明細"

BANK_ROLES = (
    Role(
        "date",
        "日付",
        (
            "取引日",
            "お取引日",
            "日付",
            "年月日",
            "勘定日",
            "取扱日",
            "入金日",
            "取引年月日",
            "起算日",
        ),
        required=True,
    ),
    Role(
        "deposit",
        "入金額",
        (
            "入金金額",
            "入金額",
            "お預り金額",
            "お預入金額",
            "預入金額",
            "預り金額",
            "受入金額",
            "お預入れ",
            "お預り",
            "入金",
        ),
    ),
    Role(
        "withdrawal",
        "出金額",
        (
            "出金金額",
            "出金額",
            "お引出金額",
            "お引出し金額",
            "引出金額",
            "お支払金額",
            "支払金額",
            "払出金額",
            "お引出し",
            "出金",
        ),
    ),
    Role("amount", "取引金額", ("取引金額", "お取引金額", "金額")),
    Role("direction", "入出金の区分", ("入払区分", "入出金区分", "入出区分", "入出金", "区分")),
    Role(
        "payer",
        "振込依頼人名",
        (
            "振込依頼人名",
            "依頼人名",
            "振込人名",
            "振込依頼人",
            "お振込人",
            "振込名義",
            "依頼人",
            "名義",
        ),
    ),
    Role("kind", "お取引内容", ("お取引内容", "取引内容", "取引名", "お取引", "取引")),
    Role("text", "摘要", ("摘要", "摘要内容", "内容", "明細", "備考")),
    Role("balance", "残高", ("残高", "差引残高", "取引後残高", "現在高")),
)
"""The columns of a bank's CSV, by the words banks head them with."""

_DEPOSIT_WORDS = ("入金", "入", "預入", "預り", "お預入れ", "お預り", "受入", "1")
_WITHDRAWAL_WORDS = ("出金", "出", "払", "払出", "引出", "お引出し", "支払", "2")


def _halfwidth_table() -> dict[str, str]:
    """Full-width katakana → half-width (the form banks print), voiced ones included."""
    table: dict[str, str] = {}
    for code in range(0xFF66, 0xFF9E):
        half = chr(code)
        table.setdefault(unicodedata.normalize("NFKC", half), half)
        for mark in ("\uff9e", "\uff9f"):
            voiced = unicodedata.normalize("NFKC", half + mark)
            if len(voiced) == 1:
                table.setdefault(voiced, half + mark)
    return table


_HALFWIDTH = _halfwidth_table()


def halfwidth_kana(text: str) -> str:
    """``text`` with full-width katakana as half-width (ヤマダ → ﾔﾏﾀﾞ)."""
    return "".join(_HALFWIDTH.get(char, char) for char in text)


_TRANSFER_WORDS = (
    "振込入金",
    "振込み",
    "振込",
    "電信振込",
    "テレ振込",
    "他行振込",
    "当行振込",
    "ネット振込",
    "フリコミ",
    "フリコミニユウキン",
    "デンシン",
    "テレフリ",
    "振替入金",
)
"""Words a bank writes before the payer in a description (振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ)."""
_BANK_ENTRY_WORDS = (
    "利息",
    "決算利息",
    "預金利息",
    "受取利息",
    "お利息",
    "リソク",
    "ケツサンリソク",
    "還付",
    "カンプキン",
    "定期預金",
    "テイキヨキン",
    "解約",
    "カイヤク",
    "組戻",
    "クミモドシ",
    "資金返却",
    "返却",
    "ヘンキヤク",
    "返金",
    "ヘンキン",
    "返還",
    "ヘンカン",
    "カンプ",
    "仮払",
    "カリバライ",
    "保険金",
    "ホケンキン",
    "税務署",
    "ゼイムシヨ",
    "助成金",
    "ジヨセイキン",
    "補助金",
    "ホジヨキン",
    "給付金",
    "キユウフキン",
)
"""Deposits that are not a customer's payment: interest the bank pays, tax refunds
(還付金), a time deposit closed into the account (定期預金の解約), a transfer of ours
coming back (組戻し・資金返却), money refunded or returned to us (返金, 敷金返還), an
employee settling an advance (仮払精算), an insurance payout (保険金), the tax office,
public grants (助成金・補助金・給付金)."""


def _alternatives(words: Sequence[str]) -> str:
    forms = {form for word in words for form in (word, halfwidth_kana(word))}
    return "|".join(sorted(map(re.escape, forms), key=len, reverse=True))


_TRANSFER_PREFIX = re.compile(rf"^\s*(?:{_alternatives(_TRANSFER_WORDS)})[\s　:：]*")


def _unvoiced(text: str) -> str:
    """``text`` in full-width kana without voicing marks (ｶﾝﾌｷﾝ = ｶﾝﾌﾟｷﾝ = カンフキン):
    banks and the people keying a transfer drop them."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    return "".join(char for char in decomposed if char not in "\u3099\u309a")


_BANK_ENTRY = re.compile(
    "|".join(sorted({re.escape(_unvoiced(w)) for w in _BANK_ENTRY_WORDS}, key=len, reverse=True))
)


def is_bank_entry(text: str) -> bool:
    """Whether a line's words (摘要, EDI, remitter) say it is no customer's payment."""
    return bool(_BANK_ENTRY.search(_unvoiced(text)))


def payer_from_text(text: str) -> str:
    """The payer in a description: the text without the transaction word in front."""
    return _TRANSFER_PREFIX.sub("", text, count=1).strip()


def _payer_described(described: Sequence[str]) -> str:
    """The payer of a line without a payer column: from the 摘要, else from the
    お取引内容 — whichever holds more than the transaction word (one bank writes
    「振込入金」 in お取引内容 and the payer in 摘要, another 「振込 ﾔﾏﾀﾞ」 in one column)."""
    for part in reversed(described):
        payer = payer_from_text(part)
        if payer and payer_from_text(payer) == payer:
            return payer
    return ""


_HOLDER_LABELS = ("口座名義", "名義人", "口座名", "名義", "お名前")


def account_holder(rows: Sequence[Sequence[Any]]) -> str:
    """The account holder a download names above its header (「口座名義,ｶ)ﾅﾆﾜ…」), or ""."""
    header = header_row(rows, BANK_ROLES)
    for row in rows[: header or 0]:
        cells = [str(cell).strip() for cell in row if cell is not None and str(cell).strip()]
        for label, value in itertools.pairwise(cells):
            key = header_key(label)
            if any(key == header_key(word) for word in _HOLDER_LABELS):
                return value
    return ""


def read_statement(value: Any, overrides: Mapping[str, str] | None = None) -> Statement:
    """A bank statement (file bytes, an upload, or records) as lines."""
    data = file_bytes(value)
    if data is not None:
        if zengin.is_zengin(data):
            lines = [_zengin_entry(line) for line in zengin.read_transactions(data)]
            return Statement(lines, "zengin", {}, holder=zengin.account_name(data))
        records = read_table(data, TABLE, BANK_ROLES)
        kind = "excel" if data.startswith(b"PK\x03\x04") else "csv"
        statement = lines_from_records(records, overrides, kind)
        return dataclasses.replace(statement, holder=account_holder(table_rows(data, TABLE)))
    if isinstance(value, list) and all(isinstance(row, Mapping) for row in value):
        return lines_from_records(value, overrides, "records")
    raise UserInputError(
        "入金明細には銀行の CSV・Excel・全銀形式のファイルか、"
        "表（レコードのリスト）を渡してください",
        hint="インターネットバンキングからダウンロードした入出金明細のファイルをつないでください",
        details={"table": TABLE},
    )


def _zengin_entry(line: BankLine) -> BankLine:
    """A 全銀 line marked as the bank's own entry by its 摘要 (ﾘｿｸ, ｶｲﾔｸ, …), or a 振替
    (取引区分 14) in with no remitter: money moved between the holder's own accounts."""
    book_transfer = line.record.get("取引区分") == zengin.BOOK_TRANSFER_KIND and not line.payer
    entry = is_bank_entry(f"{line.text} {line.payer}")
    if line.deposit > 0 and (entry or book_transfer):
        return dataclasses.replace(line, bank_entry=True)
    return line


def lines_from_records(
    records: Sequence[Mapping[str, Any]],
    overrides: Mapping[str, str] | None = None,
    kind: str = "records",
) -> Statement:
    """Statement lines from records whose columns are found by their headers."""
    if not records:
        raise UserInputError(
            "入金明細に行がありません", hint="期間を確かめて明細を出力し直してください"
        )
    records = _joined_dates(records)
    headers = [str(name) for name in records[0]]
    columns = find_columns(
        headers, BANK_ROLES, table=TABLE, overrides=overrides, option="columns.bank"
    )
    if "direction" in columns and not _directions_readable(records, columns["direction"]):
        del columns["direction"]  # e.g. 取引区分 holding 振込 / ATM: not a direction
    if "deposit" not in columns and "amount" not in columns:
        raise UserInputError(
            "入金明細に「入金額」の列が見つかりません",
            hint=(
                f"入金明細の列: {', '.join(headers)}。入金額の列名を columns.bank の deposit に、"
                "または金額の列を amount（入出金の区分の列を direction）に指定してください"
            ),
            details={"table": TABLE, "role": "deposit", "columns": headers},
        )
    described = _described_columns(headers, columns)
    lines = []
    for row, record in enumerate(records, start=1):
        lines.append(_line(row, record, columns, described))
    return Statement(lines, kind, columns)


_DESCRIPTION_ENDINGS = ("摘要", "内容")


def _described_columns(headers: Sequence[str], columns: Mapping[str, str]) -> list[str]:
    """The columns describing a line, in order: the kind of transaction, then every
    摘要・内容 column as the file orders them (one bank writes 「振込１」 in 摘要 and the
    payer in 摘要内容, another the payer in 摘要)."""
    kind = columns.get("kind")
    found = [kind] if kind else []
    for header in headers:
        key = header_key(header)
        if header != kind and (header == columns.get("text") or key.endswith(_DESCRIPTION_ENDINGS)):
            found.append(header)
    return found


_DATE_PART = re.compile(r"^(?P<stem>.*?)[\s(（]*(?P<part>年|月|日)[\s)）]*$")
JOINED_DATE = "日付"
"""The column a date given in three columns (操作日(年), 操作日(月), 操作日(日)) is read into."""


def _joined_dates(records: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """Records with a date given in three columns — year, month, day (PayPay銀行:
    「操作日(年)」「操作日(月)」「操作日(日)」) — joined into one ``日付`` column."""
    headers = [str(name) for name in records[0]]
    if any(header_key(h) == header_key(JOINED_DATE) for h in headers):
        return records
    parts: dict[str, dict[str, str]] = {}
    for header in headers:
        found = _DATE_PART.match(header)
        if found:
            parts.setdefault(found.group("stem"), {})[found.group("part")] = header
    stem = next((s for s, found in parts.items() if len(found) == 3), None)
    if stem is None:
        return records
    year, month, day = (parts[stem][part] for part in ("年", "月", "日"))
    joined = []
    for record in records:
        pieces = [_text(record.get(column)) for column in (year, month, day)]
        date = "/".join(pieces) if all(pieces) else None
        joined.append({JOINED_DATE: date, **record})
    return joined


def _directions_readable(records: Sequence[Mapping[str, Any]], column: str) -> bool:
    values = {_text(record.get(column)) for record in records} - {""}
    return bool(values) and all(_direction(value) is not None for value in values)


def _direction(value: str) -> str | None:
    text = unicodedata.normalize("NFKC", value).strip()
    if any(text == word or text.startswith(word) for word in _DEPOSIT_WORDS):
        return "deposit"
    if any(text == word or text.startswith(word) for word in _WITHDRAWAL_WORDS):
        return "withdrawal"
    return None


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _amount(value: Any, row: int, label: str) -> Decimal:
    if value is None or (isinstance(value, str) and not value.strip()):
        return Decimal(0)
    number = decimal_value(value)
    if number is None:
        raise UserInputError(
            f"入金明細の {row} 行目の{label} {value!r} を金額として読めません",
            hint="金額の列に数字以外（注記など）が入っていないか確かめてください",
            details={"table": TABLE, "row": row, "value": str(value)[:100]},
        )
    return number


def _line(
    row: int, record: Mapping[str, Any], columns: Mapping[str, str], described_columns: list[str]
) -> BankLine:
    deposit = withdrawal = Decimal(0)
    if "deposit" in columns:
        deposit = _amount(record.get(columns["deposit"]), row, "入金額")
    if "withdrawal" in columns:
        withdrawal = _amount(record.get(columns["withdrawal"]), row, "出金額")
    if "deposit" not in columns and "amount" in columns:
        amount = _amount(record.get(columns["amount"]), row, "金額")
        direction = _direction(_text(record.get(columns.get("direction", ""))))
        if direction == "withdrawal" or (direction is None and amount < 0):
            withdrawal = abs(amount)
        else:
            deposit = abs(amount)
    if deposit < 0:  # a correction written as a negative deposit
        deposit, withdrawal = Decimal(0), withdrawal - deposit
    raw_date = record.get(columns["date"])
    date = date_value(raw_date)
    if date is None and _text(raw_date):
        raise UserInputError(
            f"入金明細の {row} 行目の日付 {raw_date!r} を日付として読めません",
            hint="日付は 2026/11/30・2026-11-30・2026年11月30日・令和8年11月30日 の形で"
            "書いてください",
            details={"table": TABLE, "row": row, "value": str(raw_date)[:100]},
        )
    described = [_text(record.get(column)) for column in described_columns]
    text = " ".join(part for part in described if part)
    payer = _text(record.get(columns["payer"])) if "payer" in columns else ""
    if not payer and deposit > 0:
        payer = _payer_described(described)
    bank_entry = deposit > 0 and is_bank_entry(text)
    return BankLine(row, date, deposit, withdrawal, payer, text, bank_entry, dict(record))
