"""仕訳 rows as the import files of 弥生会計, freee会計, マネーフォワード クラウド会計, or a
plain 仕訳帳 CSV.

The input is a 仕訳帳 table, columns found by their headers
(:func:`~keiri_agent.accounting.columns.find_columns`): 伝票番号, 日付, 借方勘定科目,
借方補助科目, 借方金額, 貸方勘定科目, 貸方補助科目, 貸方金額, 摘要 — the rows
``accounting.match_payments`` proposes (:mod:`keiri_agent.accounting.journal`) — and,
when the user's table has them, 借方税区分/貸方税区分, 借方部門/貸方部門 and
借方税額/貸方税額. Rows with the same 伝票番号 are one slip (伝票); without that column
every row is a slip of its own. A row may leave one side empty (a compound slip's
extra debit or credit). Amounts are whole yen, 1 or more; every slip must balance
(its debits add up to its credits) and have one date. Anything else is an error that
names the row, the column or the slip: nothing is guessed or silently changed.

税区分 names differ per package, so each side's 税区分 is the row's own 借方税区分 /
貸方税区分 when given, else the 税区分表 entry of its account for the target package:
a table 勘定科目 → 弥生 / freee / マネーフォワード (a column per package) that the user
can extend or override; ``tax_categories.csv`` next to this module is the default. An
account with neither is an error naming it (a 税区分 is never guessed). The plain
仕訳帳 writes only the rows' own 税区分.

Layouts, from each vendor's published description (checked 2026; the search snippets
of the pages were read, not every page in full — see the notes per format):

- 弥生会計 (:data:`YAYOI`): 「仕訳データの項目と記述形式」 (弥生会計 サポート情報,
  https://support.yayoi-kk.co.jp/subcontents.html?page_id=18545): 25 items a line, no
  header line, comma separated; 識別フラグ 2000 = a 仕訳 that is not a 伝票, 2110 /
  2100 / 2101 = first / middle / last line of a multi-line 伝票; 取引日付 such as
  ``2019/07/01``. The general rules (one 仕訳 a line, a value holding a comma quoted
  with ``"``; a line starting ``#`` is a comment): 「インポートデータの記述形式」
  https://support.yayoi-kk.co.jp/subcontents.html?grade_id=Std&page_id=18586. 金額
  whole yen, no minus; a multi-line 伝票's line without a debit account carries
  借方金額 ``0`` (弥生会計 オンライン「インポートする際の制限事項」
  https://support.yayoi-kk.co.jp/faq_Subcontents.html?grade_id=Kaikei&page_id=27184).
  Items 13–25 (貸方部門 … 調整) and the values written there (タイプ 0 = 仕訳データ,
  3 = 振替伝票; 付箋 ``0``; 調整 ``no``) are as independent implementations of this
  format write them; the search tool did not return that part of the page. 税区分 in
  弥生's notation: 「インポートデータの税区分」
  https://support.yayoi-kk.co.jp/faq_Subcontents.html?page_id=1430 (税区分 and 税計算区分
  combined, e.g. ``課対仕入込10%``); Shift_JIS.
- freee会計 (:data:`FREEE`): 「その他の会計ソフトから仕訳データを移行する」
  https://support.freee.co.jp/hc/ja/articles/204847430 (汎用形式: a header line whose
  columns the user matches to freee's items on import; 日付 ``2015/04/01``; the same
  日付 and 伝票番号 make one multi-line 仕訳; 勘定科目, 金額, 税額 a column per side).
  freee has no 補助科目: the import screen maps the 補助科目 columns to 取引先 / 品目 /
  口座 (as its 弥生形式 page says:
  https://support.freee.co.jp/hc/ja/articles/202847920). 税区分 names:
  https://developer.freee.co.jp/news/1434 (``課対仕入10%``). Shift_JIS by default.
- マネーフォワード クラウド会計 (:data:`MONEYFORWARD`): 「仕訳帳」のインポート
  https://biz.moneyforward.com/support/tax-return/guide/import-books/ib01.html and the
  Plus guide https://biz.moneyforward.com/support/ac-plus/guide/journal2/import2.html
  (header line A–AA left as the template has it; 取引No, 取引日, 勘定科目, 金額
  required; same 取引日 + 取引No + balanced = one 複合仕訳; names must equal the
  registered 勘定科目 / 補助科目 / 税区分 / 部門). The 27 header names are the
  template's as implementations of it write them (the page shows the template as an
  image). 税区分 as MF abbreviates them (``課仕 10%``); an empty 借方インボイス is filled
  by MF from the 税区分. Shift_JIS by default (MF offers the template in Shift_JIS and
  UTF-8).
- 仕訳帳 (:data:`PLAIN`): this project's own layout, UTF-8 with BOM (Excel).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import InvalidOperation
from importlib.resources import files
from typing import Any

from keiri_agent.accounting.columns import Role, find_columns
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import decimal_value, parse_date

JOURNAL = "仕訳"
TAX_TABLE = "税区分表"

ENCODING_LABELS = {
    "cp932": "CP932（Shift_JIS）",
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8（BOM 付き）",
}

# --------------------------------------------------------------------------- formats


@dataclass(frozen=True)
class ExportFormat:
    """An import layout: its id (the block's ``format``), name, default encoding,
    whether the file starts with a header line, and its columns in order."""

    id: str
    name: str
    filename: str
    encoding: str
    header: bool
    columns: tuple[str, ...]
    taxed: bool
    """Whether every side needs a 税区分 (from the row or the 税区分表)."""


def _columns(text: str) -> tuple[str, ...]:
    return tuple(text.split())


YAYOI = ExportFormat(
    "yayoi",
    "弥生会計",
    "仕訳_弥生会計.csv",
    "cp932",
    False,
    _columns(
        "識別フラグ 伝票No. 決算 取引日付"
        " 借方勘定科目 借方補助科目 借方部門 借方税区分 借方金額 借方税金額"
        " 貸方勘定科目 貸方補助科目 貸方部門 貸方税区分 貸方金額 貸方税金額"
        " 摘要 番号 期日 タイプ 生成元 仕訳メモ 付箋1 付箋2 調整"
    ),
    True,
)
FREEE = ExportFormat(
    "freee",
    "freee会計",
    "仕訳_freee.csv",
    "cp932",
    True,
    _columns(
        "日付 伝票番号"
        " 借方勘定科目 借方補助科目 借方部門 借方税区分 借方金額 借方税額"
        " 貸方勘定科目 貸方補助科目 貸方部門 貸方税区分 貸方金額 貸方税額 摘要"
    ),
    True,
)
MONEYFORWARD = ExportFormat(
    "moneyforward",
    "マネーフォワード クラウド会計",
    "仕訳_マネーフォワード.csv",
    "cp932",
    True,
    _columns(
        "取引No 取引日"
        " 借方勘定科目 借方補助科目 借方部門 借方取引先"
        " 借方税区分 借方インボイス 借方金額(円) 借方税額"
        " 貸方勘定科目 貸方補助科目 貸方部門 貸方取引先"
        " 貸方税区分 貸方インボイス 貸方金額(円) 貸方税額"
        " 摘要 仕訳メモ タグ MF仕訳タイプ 決算整理仕訳 作成日時 作成者 最終更新日時 最終更新者"
    ),
    True,
)
PLAIN = ExportFormat(
    "journal",
    "仕訳帳",
    "仕訳帳.csv",
    "utf-8-sig",
    True,
    _columns(
        "伝票番号 日付"
        " 借方勘定科目 借方補助科目 借方部門 借方税区分 借方金額 借方税額"
        " 貸方勘定科目 貸方補助科目 貸方部門 貸方税区分 貸方金額 貸方税額 摘要"
    ),
    False,
)
FORMATS: dict[str, ExportFormat] = {f.id: f for f in (YAYOI, FREEE, MONEYFORWARD, PLAIN)}

# --------------------------------------------------------------------------- the journal


def _side_roles(side: str, label: str) -> tuple[Role, ...]:
    return (
        Role(f"{side}_account", f"{label}勘定科目", (f"{label}勘定科目", f"{label}科目"), True),
        Role(f"{side}_sub", f"{label}補助科目", (f"{label}補助科目", f"{label}補助")),
        Role(f"{side}_department", f"{label}部門", (f"{label}部門",)),
        Role(f"{side}_tax", f"{label}税区分", (f"{label}税区分",)),
        Role(f"{side}_amount", f"{label}金額", (f"{label}金額",), True),
        Role(f"{side}_tax_amount", f"{label}税額", (f"{label}税額", f"{label}税金額")),
    )


JOURNAL_ROLES: tuple[Role, ...] = (
    Role("slip", "伝票番号", ("伝票番号", "伝票No", "伝票NO", "取引No", "仕訳番号")),
    Role("date", "日付", ("日付", "取引日", "取引日付", "伝票日付", "計上日"), True),
    *_side_roles("debit", "借方"),
    *_side_roles("credit", "貸方"),
    Role("memo", "摘要", ("摘要",)),
)


@dataclass(frozen=True)
class Side:
    """One side of a row; ``account`` empty and ``amount`` None when the row has none."""

    account: str = ""
    sub: str = ""
    department: str = ""
    tax: str = ""
    amount: int | None = None
    tax_amount: int | None = None

    @property
    def present(self) -> bool:
        return bool(self.account)


@dataclass(frozen=True)
class EntryRow:
    """A row of the 仕訳帳: ``row`` is its 1-based number among the data rows."""

    row: int
    date: dt.date
    debit: Side
    credit: Side
    memo: str


@dataclass(frozen=True)
class Slip:
    """A 伝票: its number in the export and its rows, in the input's order."""

    number: int
    label: str
    """The 伝票番号 as the input wrote it (for messages)."""
    date: dt.date
    rows: tuple[EntryRow, ...]


def _error(message: str, hint: str | None = None, **details: Any) -> UserInputError:
    return UserInputError(message, hint=hint, details={"field": "journal", **details})


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and value != value:  # NaN: an empty spreadsheet cell
        return True
    return isinstance(value, str) and not value.strip()


def _text(value: Any) -> str:
    if _blank(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _yen(value: Any, row: int, column: str, *, minimum: int) -> int | None:
    """A whole-yen amount (None when blank); error naming the row and column."""
    if _blank(value):
        return None
    number = None if isinstance(value, bool) else decimal_value(value)
    try:
        whole = number is not None and number.is_finite() and number == number.to_integral_value()
    except InvalidOperation:
        whole = False
    if number is None or not whole:
        raise _error(
            f"{JOURNAL}の {row} 行目の {column} {value!r} を金額（円の整数）として読めません",
            hint="金額は 109340 や 1,234 のように円の整数で書いてください",
            row=row,
            column=column,
        )
    if number < minimum:
        least = "1 円以上" if minimum else "0 円以上"
        raise _error(
            f"{JOURNAL}の {row} 行目の {column} {value!r} は {least}の金額ではありません",
            hint="マイナスの金額は借方と貸方を入れ替えて、正の金額で書いてください",
            row=row,
            column=column,
        )
    return int(number)


def _date(value: Any, row: int, column: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if _blank(value):
        raise _error(f"{JOURNAL}の {row} 行目に日付がありません", row=row, column=column)
    try:
        return parse_date(str(value))
    except ValueError as error:
        raise _error(
            f"{JOURNAL}の {row} 行目の {column} {value!r} を日付として読めません（{error}）",
            hint="2026-11-10 や 2026/11/10 の形で書いてください",
            row=row,
            column=column,
        ) from None


def _side(
    record: Mapping[str, Any], found: Mapping[str, str], side: str, label: str, row: int
) -> Side:
    def cell(role: str) -> Any:
        header = found.get(f"{side}_{role}")
        return record.get(header) if header is not None else None

    account = _text(cell("account"))
    amount_header = found[f"{side}_amount"]
    amount = _yen(cell("amount"), row, amount_header, minimum=1)
    tax_header = found.get(f"{side}_tax_amount", f"{label}税額")
    tax_amount = _yen(cell("tax_amount"), row, tax_header, minimum=0)
    others = {
        "sub": _text(cell("sub")),
        "department": _text(cell("department")),
        "tax": _text(cell("tax")),
    }
    if account and amount is None:
        raise _error(
            f"{JOURNAL}の {row} 行目の{label}勘定科目「{account}」に{label}金額がありません",
            row=row,
            column=amount_header,
        )
    if not account and (amount is not None or tax_amount is not None or any(others.values())):
        raise _error(
            f"{JOURNAL}の {row} 行目は{label}の金額などがあるのに{label}勘定科目がありません",
            hint=f"{label}勘定科目を書くか、{label}側の値をすべて空にしてください",
            row=row,
            column=found[f"{side}_account"],
        )
    return Side(account, amount=amount, tax_amount=tax_amount, **others)


def _slip_numbers(labels: Sequence[str], as_written: bool) -> dict[str, int]:
    """Export number per 伝票番号: the numbers as written when all are whole numbers from
    1 to 999999 (弥生's 伝票No. has 6 digits; MF asks for 1, 2, 3 …), else 1, 2, 3 … in
    order of first appearance."""
    if as_written and all(label.isdecimal() and 0 < int(label) <= 999_999 for label in labels):
        return {label: int(label) for label in labels}
    return {label: number for number, label in enumerate(labels, start=1)}


def read_journal(
    records: Sequence[Mapping[str, Any]], columns: Mapping[str, str] | None = None
) -> list[Slip]:
    """The 仕訳帳 ``records`` as balanced slips, in order of first appearance.

    Raises:
        UserInputError: a required column is missing, or a row or slip is invalid.
    """
    if not records:
        return []
    headers = list(dict.fromkeys(str(key) for record in records for key in record))
    found = find_columns(headers, JOURNAL_ROLES, table=JOURNAL, overrides=columns)
    rows: list[tuple[str, EntryRow]] = []
    for number, record in enumerate(records, start=1):
        if all(_blank(value) for value in record.values()):
            continue
        if "slip" in found:
            key = _text(record.get(found["slip"]))
            if not key:
                raise _error(
                    f"{JOURNAL}の {number} 行目に伝票番号がありません",
                    hint="同じ伝票の行には同じ伝票番号を書いてください",
                    row=number,
                    column=found["slip"],
                )
        else:
            key = str(number)
        entry = EntryRow(
            number,
            _date(record.get(found["date"]), number, found["date"]),
            _side(record, found, "debit", "借方", number),
            _side(record, found, "credit", "貸方", number),
            _text(record.get(found["memo"])) if "memo" in found else "",
        )
        if not entry.debit.present and not entry.credit.present:
            raise _error(
                f"{JOURNAL}の {number} 行目に借方も貸方もありません",
                hint="空の行は消してください",
                row=number,
            )
        rows.append((key, entry))
    grouped: dict[str, list[EntryRow]] = {}
    for key, entry in rows:
        grouped.setdefault(key, []).append(entry)
    numbers = _slip_numbers(list(grouped), as_written="slip" in found)
    return [
        _slip(numbers[key], key if "slip" in found else str(numbers[key]), entries)
        for key, entries in grouped.items()
    ]


def _slip(number: int, key: str, entries: list[EntryRow]) -> Slip:
    first = entries[0]
    for entry in entries[1:]:
        if entry.date != first.date:
            raise _error(
                f"伝票 {key} の行の日付が違います（{first.row} 行目は {first.date:%Y/%m/%d}、"
                f"{entry.row} 行目は {entry.date:%Y/%m/%d}）",
                hint="1 つの伝票の行は同じ日付にしてください",
                slip=key,
                row=entry.row,
            )
    debit = sum(e.debit.amount or 0 for e in entries)
    credit = sum(e.credit.amount or 0 for e in entries)
    if debit != credit:
        rows = "、".join(str(e.row) for e in entries)
        raise _error(
            f"伝票 {key} の借方合計 {debit:,} 円と貸方合計 {credit:,} 円が一致しません"
            f"（{rows} 行目）",
            hint="貸借が一致するように金額を直すか、足りない行を加えてください",
            slip=key,
            debit=debit,
            credit=credit,
        )
    return Slip(number, key, first.date, tuple(entries))


# --------------------------------------------------------------------------- 税区分表

TAX_ROLES: tuple[Role, ...] = (
    Role("account", "勘定科目", ("勘定科目", "科目"), True),
    Role("yayoi", "弥生", ("弥生", "弥生会計", "yayoi")),
    Role("freee", "freee", ("freee", "freee会計")),
    Role(
        "moneyforward",
        "マネーフォワード",
        ("マネーフォワード", "マネーフォワードクラウド会計", "MF", "moneyforward"),
    ),
)
TAXED_FORMATS = tuple(role.name for role in TAX_ROLES[1:])

TaxTable = dict[str, dict[str, str]]
"""Format id → account key (:func:`account_key`) → 税区分."""


def account_key(account: str) -> str:
    """An account name as looked up in the 税区分表 (NFKC, spaces removed)."""
    return "".join(unicodedata.normalize("NFKC", account).split())


def read_tax_table(
    records: Sequence[Mapping[str, Any]], table: str = TAX_TABLE, field: str = "tax_categories"
) -> TaxTable:
    """A 税区分表 (勘定科目 and a column per package: 弥生 / freee / マネーフォワード).

    Empty cells say nothing (they neither set nor clear a 税区分).

    Raises:
        UserInputError: no 勘定科目 column, or no package column.
    """
    result: TaxTable = {name: {} for name in TAXED_FORMATS}
    if not records:
        return result
    headers = list(dict.fromkeys(str(key) for record in records for key in record))
    try:
        found = find_columns(headers, TAX_ROLES, table=table)
    except UserInputError as error:
        raise UserInputError(
            error.message,
            hint=f"{table}は 勘定科目 と 弥生 / freee / マネーフォワード の列の表にしてください",
            details={**(error.details or {}), "field": field},
        ) from None
    if not set(found) & set(TAXED_FORMATS):
        raise UserInputError(
            f"{table}に 弥生 / freee / マネーフォワード のどの列もありません",
            hint=f"{table}の列: {', '.join(headers)}。"
            "例: {勘定科目: 支払手数料, 弥生: 課対仕入込10%, freee: 課対仕入10%, "
            "マネーフォワード: 課仕 10%}",
            details={"field": field, "columns": headers},
        )
    for record in records:
        account = account_key(_text(record.get(found["account"])))
        if not account:
            continue
        for name in TAXED_FORMATS:
            value = _text(record.get(found[name])) if name in found else ""
            if value:
                result[name][account] = value
    return result


def default_tax_table() -> TaxTable:
    """The bundled 税区分表 (``tax_categories.csv``)."""
    text = files("keiri_agent.accounting").joinpath("tax_categories.csv").read_text("utf-8")
    return read_tax_table(list(csv.DictReader(io.StringIO(text))), "既定の税区分表")


def merged_tax_table(base: TaxTable, extra: TaxTable) -> TaxTable:
    """``base`` with ``extra``'s entries added or replacing the same account's."""
    return {name: {**base.get(name, {}), **extra.get(name, {})} for name in TAXED_FORMATS}


def _tax_of(side: Side, fmt: ExportFormat, table: TaxTable) -> str | None:
    if side.tax or not side.present or not fmt.taxed:
        return side.tax
    return table.get(fmt.id, {}).get(account_key(side.account))


def check_taxes(slips: Sequence[Slip], fmt: ExportFormat, table: TaxTable) -> None:
    """Error naming every account whose 税区分 neither the row nor the table gives."""
    missing: dict[str, None] = {}
    for slip in slips:
        for entry in slip.rows:
            for side in (entry.debit, entry.credit):
                if _tax_of(side, fmt, table) is None:
                    missing.setdefault(side.account, None)
    if missing:
        names = "、".join(f"「{name}」" for name in missing)
        first = next(iter(missing))
        column = {"yayoi": "弥生", "freee": "freee", "moneyforward": "マネーフォワード"}[fmt.id]
        raise UserInputError(
            f"勘定科目 {names} の{fmt.name}の税区分がわかりません"
            f"（税区分表になく、仕訳の 借方税区分 / 貸方税区分 も空です）",
            hint=f"tax_categories に {{勘定科目: {first}, {column}: （{fmt.name}の税区分名）}} "
            "の行を足すか、仕訳の 借方税区分 / 貸方税区分 の列に書いてください",
            details={"field": "tax_categories", "accounts": list(missing), "format": fmt.id},
        )


# --------------------------------------------------------------------------- writing

Line = list[str]
Renderer = Callable[[Slip, ExportFormat, TaxTable], list[tuple[EntryRow, Line]]]


def _amount(value: int | None) -> str:
    return "" if value is None else str(value)


def _slash(date: dt.date) -> str:
    return f"{date:%Y/%m/%d}"


def _sides(entry: EntryRow, fmt: ExportFormat, table: TaxTable) -> tuple[Side, str, Side, str]:
    return (
        entry.debit,
        _tax_of(entry.debit, fmt, table) or "",
        entry.credit,
        _tax_of(entry.credit, fmt, table) or "",
    )


def _yayoi_amount(side: Side) -> str:
    return _amount(side.amount) if side.present else "0"


def _yayoi(slip: Slip, fmt: ExportFormat, table: TaxTable) -> list[tuple[EntryRow, Line]]:
    # One row: a 仕訳 (2000, タイプ 0). More: a 振替伝票 (2110 … 2100 … 2101, タイプ 3),
    # where a side without an account carries the amount 0.
    count = len(slip.rows)
    lines = []
    for index, entry in enumerate(slip.rows):
        if count == 1:
            flag, kind = "2000", "0"
        else:
            flag = "2110" if index == 0 else "2101" if index == count - 1 else "2100"
            kind = "3"
        debit, debit_tax, credit, credit_tax = _sides(entry, fmt, table)
        lines.append(
            (
                entry,
                [
                    flag,
                    str(slip.number),
                    "",
                    _slash(slip.date),
                    debit.account,
                    debit.sub,
                    debit.department,
                    debit_tax,
                    _yayoi_amount(debit),
                    _amount(debit.tax_amount),
                    credit.account,
                    credit.sub,
                    credit.department,
                    credit_tax,
                    _yayoi_amount(credit),
                    _amount(credit.tax_amount),
                    entry.memo,
                    "",
                    "",
                    kind,
                    "",
                    "",
                    "0",
                    "0",
                    "no",
                ],
            )
        )
    return lines


def _side_cells(side: Side, tax: str) -> Line:
    return [side.account, side.sub, side.department, tax, _amount(side.amount)]


def _freee(slip: Slip, fmt: ExportFormat, table: TaxTable) -> list[tuple[EntryRow, Line]]:
    lines = []
    for entry in slip.rows:
        debit, debit_tax, credit, credit_tax = _sides(entry, fmt, table)
        lines.append(
            (
                entry,
                [
                    _slash(slip.date),
                    str(slip.number),
                    *_side_cells(debit, debit_tax),
                    _amount(debit.tax_amount),
                    *_side_cells(credit, credit_tax),
                    _amount(credit.tax_amount),
                    entry.memo,
                ],
            )
        )
    return lines


def _mf_side_cells(side: Side, tax: str) -> Line:
    # 勘定科目, 補助科目, 部門, 取引先, 税区分, インボイス, 金額(円), 税額: 取引先 and
    # インボイス are left empty (MF derives the インボイス区分 from the 税区分).
    return [
        side.account,
        side.sub,
        side.department,
        "",
        tax,
        "",
        _amount(side.amount),
        _amount(side.tax_amount),
    ]


def _moneyforward(slip: Slip, fmt: ExportFormat, table: TaxTable) -> list[tuple[EntryRow, Line]]:
    lines = []
    for entry in slip.rows:
        debit, debit_tax, credit, credit_tax = _sides(entry, fmt, table)
        lines.append(
            (
                entry,
                [
                    str(slip.number),
                    _slash(slip.date),
                    *_mf_side_cells(debit, debit_tax),
                    *_mf_side_cells(credit, credit_tax),
                    entry.memo,
                    *[""] * 8,  # 仕訳メモ … 最終更新者
                ],
            )
        )
    return lines


def _plain(slip: Slip, fmt: ExportFormat, table: TaxTable) -> list[tuple[EntryRow, Line]]:
    return [
        (
            entry,
            [
                slip.label,
                _slash(slip.date),
                *_side_cells(entry.debit, entry.debit.tax),
                _amount(entry.debit.tax_amount),
                *_side_cells(entry.credit, entry.credit.tax),
                _amount(entry.credit.tax_amount),
                entry.memo,
            ],
        )
        for entry in slip.rows
    ]


RENDERERS: dict[str, Renderer] = {
    YAYOI.id: _yayoi,
    FREEE.id: _freee,
    MONEYFORWARD.id: _moneyforward,
    PLAIN.id: _plain,
}


@dataclass(frozen=True)
class Export:
    """The file's bytes and what it holds."""

    data: bytes
    format: ExportFormat
    encoding: str
    slips: int
    rows: int


def export_journal(
    slips: Sequence[Slip], fmt: ExportFormat, table: TaxTable, encoding: str | None = None
) -> Export:
    """``slips`` as ``fmt``'s import file (CRLF line ends, ``"`` quoting as needed).

    Raises:
        UserInputError: an account without a 税区分, a 摘要 with a line break (弥生 reads
            one 仕訳 a line), or a character the encoding cannot hold.
    """
    encoding = encoding or fmt.encoding
    check_taxes(slips, fmt, table)
    rendered = [line for slip in slips for line in RENDERERS[fmt.id](slip, fmt, table)]
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    for entry, line in rendered:
        for column, cell in zip(fmt.columns, line, strict=True):
            if fmt is YAYOI and ("\n" in cell or "\r" in cell):
                raise _error(
                    f"{JOURNAL}の {entry.row} 行目の {column} に改行があります"
                    "（弥生会計は 1 行を 1 仕訳として読みます）",
                    hint="改行を空白などに置き換えてください",
                    row=entry.row,
                    column=column,
                )
            try:
                cell.encode(codec)
            except UnicodeEncodeError as error:
                char = cell[error.start : error.end]
                raise _error(
                    f"{JOURNAL}の {entry.row} 行目の {column} の文字 {char!r} は "
                    f"{ENCODING_LABELS[encoding]} で書けません",
                    hint="その文字を置き換えるか、取り込み先が読めるなら encoding: utf-8 に"
                    "してください",
                    row=entry.row,
                    column=column,
                ) from None
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    if fmt.header:
        writer.writerow(fmt.columns)
    writer.writerows(line for _, line in rendered)
    return Export(buffer.getvalue().encode(encoding), fmt, encoding, len(slips), len(rendered))
