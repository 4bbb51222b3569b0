"""A 支払予定表 read as the transfers of a 総合振込 file, every row checked first.

Columns are found by their headers (:data:`SCHEDULE_ROLES`). Each row becomes a
:class:`~keiri_agent.accounting.zengin_transfers.Transfer` only when everything a bank
would reject is right: the bank and branch codes exist in the code list
(:mod:`~keiri_agent.accounting.bank_codes`) and agree with the names the table gives,
the 預金種目 is one the format knows, the account number has at most 7 digits, the
受取人名 can be written in the 全銀 character set, the amount is a whole positive number
of yen. Every problem of every row is collected, so a user fixes the table once;
:func:`read_schedule` raises them together. A code missing from the table is filled in
from a name only when the name names exactly one bank or branch, and the row says so.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.accounting import bank_codes
from keiri_agent.accounting.columns import Role, find_columns
from keiri_agent.accounting.zengin_transfers import (
    MAX_AMOUNT,
    Account,
    Transfer,
    zengin_text,
)
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import date_value, decimal_value

SCHEDULE = "支払予定表"
NAME_SIZE = 30
"""受取人名 is C(30)."""
MAX_PROBLEMS_SHOWN = 20

SCHEDULE_ROLES = (
    Role(
        "payee",
        "支払先",
        ("支払先名", "支払先", "取引先名", "仕入先名", "取引先", "仕入先", "相手先"),
    ),
    Role(
        "kana",
        "受取人名（カナ）",
        (
            "受取人名",
            "受取人カナ",
            "口座名義カナ",
            "口座名義",
            "振込先名義",
            "名義カナ",
            "名義",
            "受取人",
            "フリガナ",
            "カナ",
        ),
        required=True,
    ),
    Role("bank_code", "銀行コード", ("銀行コード", "金融機関コード", "銀行番号", "金融機関番号")),
    Role("bank_name", "銀行名", ("銀行名", "金融機関名", "銀行", "金融機関")),
    Role("branch_code", "支店コード", ("支店コード", "支店番号", "店番", "店舗コード")),
    Role("branch_name", "支店名", ("支店名", "支店", "店舗名")),
    Role(
        "account_type",
        "預金種目",
        ("預金種目", "預金種別", "口座種別", "口座種目", "種目", "種別", "科目"),
        required=True,
    ),
    Role("number", "口座番号", ("口座番号", "口座NO", "口座"), required=True),
    Role("amount", "支払金額", ("支払金額", "振込金額", "支払額", "振込額", "金額"), required=True),
    Role("customer_code", "顧客コード", ("顧客コード",)),
    Role("date", "支払日", ("支払日", "振込日", "支払予定日", "振込指定日", "支払期日")),
)
"""The columns of a 支払予定表, by the words tables head them with."""

_TYPE_WORDS = {
    "1": ("1", "普通", "普通預金", "総合", "総合口座", "普"),
    "2": ("2", "当座", "当座預金", "当"),
    "4": ("4", "貯蓄", "貯蓄預金"),
    "9": ("9", "その他"),
}


@dataclass
class ScheduleRow:
    """One row of the table, with its transfer when it is fit for the file."""

    row: int
    payee: str
    date: dt.date | None
    transfer: Transfer | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""
    """Why the row is not transferred although nothing is wrong (金額 0, another day)."""


def _text(value: Any) -> str:
    return "" if value is None else unicodedata.normalize("NFKC", str(value)).strip()


def _digits(value: Any, size: int, label: str, problems: list[str]) -> str:
    text = _text(value).replace("-", "").replace(" ", "")
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    if not text:
        problems.append(f"{label}が空欄です")
        return ""
    if not text.isdigit() or len(text) > size:
        problems.append(f"{label} {text!r} は {size} 桁までの数字で書いてください")
        return ""
    return text.zfill(size)


def account_type_code(value: Any) -> str | None:
    """The 預金種目 code of 普通 / 当座 / 貯蓄 / その他 or their codes, else None."""
    text = _text(value)
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    for code, words in _TYPE_WORDS.items():
        if text in words:
            return code
    return None


def read_account(
    values: Mapping[str, Any], problems: list[str], notes: list[str]
) -> Account | None:
    """An account from role → value (bank_code, bank_name, branch_code, branch_name,
    account_type, number), checked against the code list; None when a problem was
    found (appended to ``problems``)."""
    found = len(problems)
    bank = _bank(values, problems, notes)
    branch = _branch(bank, values, problems, notes) if bank else None
    type_code = account_type_code(values.get("account_type"))
    if type_code is None:
        given = _text(values.get("account_type")) or "空欄"
        problems.append(f"預金種目 {given!r} がわかりません（普通・当座・貯蓄・その他 のいずれか）")
    number = _digits(values.get("number"), 7, "口座番号", problems)
    if len(problems) > found or bank is None or branch is None or type_code is None:
        return None
    return Account(
        bank.code,
        _kana_name(bank.kana, 15),
        branch.code,
        _kana_name(branch.kana, 15),
        type_code,
        number,
    )


def _kana_name(kana: str, size: int) -> str:
    try:
        return zengin_text(kana)[:size]
    except ValueError:  # the list's kana is always katakana; never block a row on it
        return ""


def _bank(
    values: Mapping[str, Any], problems: list[str], notes: list[str]
) -> bank_codes.Place | None:
    name = _text(values.get("bank_name"))
    if _text(values.get("bank_code")):
        code = _digits(values.get("bank_code"), 4, "銀行コード", problems)
        if not code:
            return None
        found = bank_codes.bank(code)
        if found is None:
            problems.append(
                f"銀行コード {code} は金融機関コードの一覧"
                f"（zengin-code {bank_codes.list_version()}）にありません"
            )
            return None
        if name and not bank_codes.same_bank(name, found):
            problems.append(f"銀行コード {code} は「{found.name}」です（表の銀行名は「{name}」）")
            return None
        return found
    if not name:
        problems.append("銀行コードも銀行名もありません")
        return None
    named = bank_codes.banks_named(name)
    if len(named) != 1:
        problems.append(
            f"銀行名「{name}」から銀行コードを決められません"
            f"（一覧に {len(named)} 件）。銀行コードを書いてください"
        )
        return None
    notes.append(f"銀行名から銀行コード {named[0].code} を補いました")
    return named[0]


def _branch(
    bank: bank_codes.Place,
    values: Mapping[str, Any],
    problems: list[str],
    notes: list[str],
) -> bank_codes.Place | None:
    name = _text(values.get("branch_name"))
    if _text(values.get("branch_code")):
        code = _digits(values.get("branch_code"), 3, "支店コード", problems)
        if not code:
            return None
        found = bank_codes.branch(bank.code, code)
        if found is None:
            problems.append(
                f"支店コード {code} は「{bank.name}」の支店の一覧"
                f"（zengin-code {bank_codes.list_version()}）にありません"
            )
            return None
        if name and not bank_codes.same_branch(name, found):
            problems.append(
                f"支店コード {code} は「{bank.name}」の「{found.name}」です"
                f"（表の支店名は「{name}」）"
            )
            return None
        return found
    if not name:
        problems.append("支店コードも支店名もありません")
        return None
    named = bank_codes.branches_named(bank.code, name)
    if len(named) != 1:
        problems.append(
            f"支店名「{name}」から「{bank.name}」の支店コードを決められません"
            f"（一覧に {len(named)} 件）。支店コードを書いてください"
        )
        return None
    notes.append(f"支店名から支店コード {named[0].code} を補いました")
    return named[0]


def kana_name(value: Any, size: int, label: str, problems: list[str], notes: list[str]) -> str:
    """A name in the 全銀 character set, cut to ``size`` (noted), or "" with a problem."""
    text = _text(value)
    if not text:
        problems.append(f"{label}が空欄です")
        return ""
    try:
        converted = zengin_text(text)
    except ValueError as error:
        problems.append(
            f"{label}「{text}」の「{error}」は振込データに使えません"
            "（カナ・英大文字・数字・スペース・( ) - . / で書いてください。"
            "株式会社は ｶ) や (ｶ と書きます）"
        )
        return ""
    if len(converted) > size:
        notes.append(f"{label}を {size} 文字に切り詰めました（全銀形式の上限）")
        converted = converted[:size]
    return converted


def _amount(value: Any, problems: list[str]) -> int | None:
    number = decimal_value(value)
    if number is None:
        problems.append(f"支払金額 {_text(value) or '空欄'!r} を金額として読めません")
        return None
    if number != number.to_integral_value() or number < 0:
        problems.append(f"支払金額 {number} は 0 以上の円単位の整数で書いてください")
        return None
    if number > MAX_AMOUNT:
        problems.append(f"支払金額 {number} は 1 件の振込の上限（10 桁）を超えています")
        return None
    return int(number)


def read_schedule(
    records: Sequence[Mapping[str, Any]],
    transfer_date: dt.date | None,
    overrides: Mapping[str, str] | None = None,
) -> tuple[list[ScheduleRow], dt.date]:
    """Every non-blank row of the table and the day the file transfers on.

    Rows dated another day than ``transfer_date`` and rows of 0 yen are kept, skipped.
    Without ``transfer_date`` the table's 支払日 decides when all its rows share one.

    Raises:
        UserInputError: a column is missing, the day cannot be decided, or any row has
            a problem (all of them listed, up to 20).
    """
    if not records:
        raise UserInputError(f"{SCHEDULE}に行がありません", hint="支払う明細の表をつないでください")
    headers = [str(name) for name in records[0]]
    columns = find_columns(
        headers, SCHEDULE_ROLES, table=SCHEDULE, overrides=overrides, option="columns"
    )
    rows = [
        _row(number, record, columns)
        for number, record in enumerate(records, start=1)
        if any(_text(value) for value in record.values())
    ]
    day = transfer_date or _only_date(rows)
    for row in rows:
        if row.date is not None and row.date != day:
            row.skipped = f"支払日が {row.date.isoformat()}（振込指定日と違う）"
        elif row.transfer is not None and row.transfer.amount == 0:
            row.skipped = "支払金額が 0 円"
    wrong = [row for row in rows if row.problems and not row.skipped]
    if wrong:
        lines = [f"{row.row} 行目: {'、'.join(row.problems)}" for row in wrong]
        shown = "\n".join(lines[:MAX_PROBLEMS_SHOWN])
        more = len(lines) - MAX_PROBLEMS_SHOWN
        raise UserInputError(
            f"{SCHEDULE}の {len(wrong)} 行に振込データにできない箇所があります:\n{shown}"
            + (f"\n（ほか {more} 行）" if more > 0 else ""),
            hint="表を直してからもう一度実行してください（どの行も、銀行に送る前に確かめています）",
            details={"table": SCHEDULE, "rows": [row.row for row in wrong]},
        )
    if not any(row.transfer and not row.skipped for row in rows):
        raise UserInputError(
            f"{SCHEDULE}に {day.isoformat()} に振り込む行がありません",
            hint="振込指定日（transfer_date）と表の支払日を確かめてください",
            details={"table": SCHEDULE, "date": day.isoformat()},
        )
    return rows, day


def _only_date(rows: Sequence[ScheduleRow]) -> dt.date:
    dates = sorted({row.date for row in rows if row.date is not None})
    if len(dates) == 1:
        return dates[0]
    found = "、".join(day.isoformat() for day in dates[:10]) or "（支払日の列がありません）"
    raise UserInputError(
        "振込指定日が決まりません",
        hint=f"transfer_date に振込指定日を書いてください（表の支払日: {found}）",
        details={"table": SCHEDULE, "dates": [day.isoformat() for day in dates]},
    )


def _row(number: int, record: Mapping[str, Any], columns: Mapping[str, str]) -> ScheduleRow:
    values = {role: record.get(header) for role, header in columns.items()}
    problems: list[str] = []
    notes: list[str] = []
    raw_date = values.get("date")
    date = date_value(raw_date) if _text(raw_date) else None
    if _text(raw_date) and date is None:
        problems.append(f"支払日 {_text(raw_date)!r} を日付として読めません")
    payee = _text(values.get("payee"))
    account = read_account(values, problems, notes)
    name = kana_name(values.get("kana"), NAME_SIZE, "受取人名", problems, notes)
    amount = _amount(values.get("amount"), problems)
    code = _text(values.get("customer_code"))
    if code and (not code.isdigit() or len(code) > 10):
        problems.append(f"顧客コード {code!r} は 10 桁までの数字で書いてください")
    transfer = None
    if not problems and account is not None and amount is not None:
        transfer = Transfer(account, name, amount, code)
    return ScheduleRow(number, payee or name, date, transfer, problems, notes)
