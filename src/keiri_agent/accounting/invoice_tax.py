"""インボイス制度（適格請求書等保存方式）: each invoice's tax by rate and its 記載事項 checked.

An invoice list (one row per invoice) is read by its headers (:mod:`.columns`):
請求書番号, 発行者, 登録番号, 交付年月日, 受領者, the 対価 and 消費税額 of each rate
(10 %, 8 % 軽減税率, 0 % 非課税・免税), 合計 and 消費税額合計. An optional line-items
table (請求書番号, 品目, 金額, 税率 or a 軽減税率 mark) gives the 対価 of each rate as
the sum of the invoice's lines instead.

The rules checked, per invoice:

- **Tax once per rate.** The 消費税額等 of an 適格請求書 is computed once per rate per
  invoice: the 対価 of the rate summed first, then ``税抜 × 10 %`` (or ``税込 ×
  10/110``; 8 % and 8/108 for 軽減税率), then rounded once (消費税法施行令 第70条の10;
  国税庁「消費税の仕入税額控除制度における適格請求書等保存方式に関するQ&A」,
  適格請求書に記載する消費税額等の端数処理: 一の適格請求書につき、税率ごとに1回の端数処理
  を行う。切上げ・切捨て・四捨五入など端数処理の方法は任意). Rounding per line and
  summing is not allowed; a stated tax that equals that sum but not the once-per-rate
  figure is reported as such. The rounding is ``rounding`` (切り捨て, 四捨五入,
  切り上げ; towards / away from zero for a negative 対価). A stated tax that another of
  the three methods explains is 要確認 (the issuer may round that way), not 要修正.
- **税抜 or 税込.** Whether the 対価 include tax is ``prices``; with ``自動`` it is read
  from the amount columns' headers (税込・内税 / 税抜・税別・外税・本体) and else from
  the invoice's 合計 (合計 = 対価 + 税 → 税抜, 合計 = 対価 → 税込) — only when exactly
  one of the two fits. Otherwise nothing is guessed: a finding gives the tax under
  either reading and asks for ``prices``.
- **記載事項** (消費税法 第57条の4 第1項): the issuer's name and 登録番号 (T + 13
  digits with the 国税庁 check digit — ``blocks.registration_number``'s check, passed
  in as ``registration`` because this layer sits below the blocks), the date
  (交付年月日 / 取引年月日), the 対価 and the tax of every rate the invoice has, and the
  recipient (受領者). A wrong 登録番号 is 要修正; a missing one is 要確認 (an issuer
  that is not registered issues no 適格請求書 at all). A blank cell is a finding for
  that invoice; a column the list does not have is one finding for the whole list
  (nothing could be checked), never one per invoice — for a rate's columns only when
  an invoice has that rate.
- **合計**: the stated 合計 equals the 対価 plus (for 税抜) the tax of every rate (a
  blank tax counted at its correct figure); a 消費税額合計 equals the taxes.
- **明細**: with lines, a stated 対価 of a rate must equal the sum of its lines; an
  invoice without lines is checked on its stated 対価 (and said so); lines of a
  請求書番号 the list does not have are a finding.
- **税率**: a line's rate is its 税率 cell (10 %, 8 %, 0 %/非課税/免税/不課税; 0.1,
  標準, 軽減 …), else its 軽減税率 mark column, else a mark in the 品目 (※, ＊, (軽)),
  else 10 % (an unmarked line is 標準税率: 軽減税率 items must be marked; a blank
  税率 cell taken so is a finding). Any other rate (5 %, 3 % …) is a finding and the
  line is left out of the figures (the 合計 is then not checked).

Results are findings (請求書番号, 項目, 内容, 重要度 要修正/要確認), never errors.
Errors (:class:`~keiri_agent.errors.UserInputError`) are only for input that
prevents checking: no 請求書番号 column, an amount cell that is no number (naming
the row and the column), no 対価 at all, a duplicated 請求書番号 when lines are
given (its lines could belong to either).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_UP, ROUND_UP, Decimal
from typing import Any

from keiri_agent.accounting.columns import Role, find_columns, header_key
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import date_value, decimal_value, nfkc

INVOICES = "請求書一覧"
LINES = "請求明細"

STANDARD, REDUCED, EXEMPT = 10, 8, 0
TAXED_RATES = (STANDARD, REDUCED)
"""Rates in per cent; 0 is 非課税・免税・不課税 (no tax, part of the 合計)."""
RATE_NAMES = {STANDARD: "10%", REDUCED: "8%（軽減税率）", EXEMPT: "非課税・免税"}

ROUNDINGS = {"切り捨て": ROUND_DOWN, "四捨五入": ROUND_HALF_UP, "切り上げ": ROUND_UP}
PRICES = ("自動", "税抜", "税込")
EXCLUDED, INCLUDED = "税抜", "税込"

FIX = "要修正"
CHECK = "要確認"
WHOLE_LIST = "（全件）"
"""The 請求書番号 of a finding about the whole list (a column it does not have)."""

_ID_WORDS = (
    "請求書番号",
    "請求番号",
    "請求書NO",
    "請求NO",
    "請求書ID",
    "請求ID",
    "伝票番号",
    "書類番号",
)


def _rate_words(rate: int, *words: str) -> tuple[str, ...]:
    return tuple(word.format(rate) for word in words)


_BASE_WORDS = (
    "{}%対象額",
    "{}%対象",
    "{}%対象金額",
    "{}%対象額合計",
    "{}%対価",
    "{}%対価の額",
    "{}%税抜金額",
    "{}%税込金額",
    "{}%税抜額",
    "{}%税込額",
    "{}%金額",
    "{}%小計",
    "対象額{}%",
    "対価{}%",
    "税抜金額{}%",
    "税込金額{}%",
)
_TAX_WORDS = (
    "{}%消費税額",
    "{}%消費税",
    "{}%消費税等",
    "{}%税額",
    "消費税額{}%",
    "消費税{}%",
    "税額{}%",
)

INVOICE_ROLES = (
    Role("id", "請求書番号", _ID_WORDS, required=True),
    Role(
        "issuer",
        "発行者",
        (
            "発行者",
            "発行者名",
            "発行事業者",
            "発行事業者名",
            "発行元",
            "請求元",
            "取引先名",
            "取引先",
            "仕入先名",
            "仕入先",
        ),
    ),
    Role(
        "registration",
        "登録番号",
        ("登録番号", "適格請求書発行事業者登録番号", "インボイス登録番号", "事業者登録番号"),
    ),
    Role(
        "issued",
        "交付年月日",
        (
            "交付年月日",
            "交付日",
            "取引年月日",
            "取引日",
            "請求日",
            "請求年月日",
            "発行日",
            "発行年月日",
            "日付",
        ),
    ),
    Role(
        "recipient",
        "受領者",
        ("受領者", "受領者名", "宛先", "宛名", "請求先", "交付先", "得意先名", "得意先", "顧客名"),
    ),
    Role("base_10", "10%対象額", (*_rate_words(10, *_BASE_WORDS), "標準税率対象額")),
    Role("tax_10", "10%消費税額", (*_rate_words(10, *_TAX_WORDS), "標準税率消費税額")),
    Role(
        "base_8",
        "8%対象額",
        (*_rate_words(8, *_BASE_WORDS), "軽減税率対象額", "軽減対象額", "軽減税率対象"),
    ),
    Role("tax_8", "8%消費税額", (*_rate_words(8, *_TAX_WORDS), "軽減税率消費税額")),
    Role(
        "base_0",
        "非課税・免税の額",
        ("非課税額", "非課税対象額", "非課税", "免税額", "免税", "不課税", "対象外"),
    ),
    Role(
        "total",
        "合計",
        (
            "合計",
            "合計金額",
            "請求金額",
            "請求額",
            "請求合計",
            "税込合計",
            "総額",
            "総合計",
            "御請求金額",
            "ご請求金額",
        ),
    ),
    Role(
        "tax_total",
        "消費税額合計",
        (
            "消費税額合計",
            "消費税合計",
            "消費税等合計",
            "税額合計",
            "消費税額",
            "消費税",
            "消費税等",
        ),
    ),
)
LINE_ROLES = (
    Role("id", "請求書番号", _ID_WORDS, required=True),
    Role(
        "item",
        "品目",
        ("品目", "品名", "商品名", "商品", "摘要", "内容", "明細", "取引内容", "サービス名"),
    ),
    Role(
        "amount",
        "金額",
        ("金額", "税抜金額", "税込金額", "対価", "小計", "売上金額", "価格"),
        required=True,
    ),
    Role("rate", "税率", ("税率", "消費税率", "適用税率", "税率区分", "税区分", "課税区分")),
    Role(
        "reduced",
        "軽減税率の印",
        ("軽減税率", "軽減", "軽減対象", "軽減税率対象", "軽減区分", "軽減マーク"),
    ),
)

_BASE_ROLES = {STANDARD: "base_10", REDUCED: "base_8", EXEMPT: "base_0"}
_TAX_ROLES = {STANDARD: "tax_10", REDUCED: "tax_8"}
_NOTED_ROLES = ("issuer", "registration", "issued", "recipient")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_ZERO_WORDS = ("非課税", "免税", "不課税", "対象外", "輸出")
_ITEM_MARK_RE = re.compile(r"[※*]|[(\[【]軽(?:減)?[)\]】]")
_MARKED = {"※", "*", "○", "◯", "〇", "✓", "✔", "1", "TRUE", "YES", "Y", "はい", "軽", "軽減"}
_MARKED |= {"軽減税率", "対象", "軽減対象"}
_UNMARKED = {"0", "FALSE", "NO", "N", "いいえ", "-", "ー", "×", "✕", "非対象", "標準"}


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class InvoiceRow:
    """One invoice as its list states it. Amounts are None when the cell is blank or
    the list has no such column (``InvoiceTable.columns`` tells which)."""

    id: str
    row: int
    issuer: str
    registration: Any
    issued: Any
    recipient: str
    bases: Mapping[int, Decimal | None]
    taxes: Mapping[int, Decimal | None]
    total: Decimal | None
    tax_total: Decimal | None


@dataclass(frozen=True)
class InvoiceTable:
    """The invoice list: its rows, the column of each role, the 税抜/税込 its amount
    headers say (None: they say nothing or disagree), rows without a 請求書番号, and
    every header."""

    rows: list[InvoiceRow]
    columns: Mapping[str, str]
    basis: str | None = None
    skipped: list[int] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Line:
    """One line item. ``rate`` is 10, 8, 0, or None for a rate that is none of them;
    ``rate_from`` says where it came from (税率 / 軽減税率の印 / 品目の印 / 印なし /
    税率が空欄)."""

    invoice: str
    row: int
    item: str
    amount: Decimal
    rate: int | None
    rate_text: str
    rate_from: str


@dataclass(frozen=True)
class LineTable:
    lines: list[Line]
    columns: Mapping[str, str]
    basis: str | None = None


def _blank(value: Any) -> bool:
    if value is None or (isinstance(value, float) and value != value):
        return True
    return isinstance(value, str) and not value.strip()


def _text(value: Any) -> str:
    return "" if _blank(value) else str(value).strip()


def _amount(
    record: Mapping[str, Any], columns: Mapping[str, str], role: str, table: str, row: int
) -> Decimal | None:
    if role not in columns:
        return None
    raw = record.get(columns[role])
    if _blank(raw):
        return None
    number = decimal_value(raw)
    if number is None:
        raise UserInputError(
            f"{table}の {row} 行目の「{columns[role]}」{raw!r} を金額として読めません",
            hint="金額は 12345・12,345・¥12,345 の形で書いてください（記載がなければ空欄に）",
            details={"table": table, "row": row, "column": columns[role], "value": str(raw)[:100]},
        )
    return number


def basis_of_header(header: str) -> str | None:
    """税込 or 税抜 when an amount column's header says so, else None."""
    key = header_key(header)
    if "税込" in key or "内税" in key:
        return INCLUDED
    if any(word in key for word in ("税抜", "税別", "外税", "本体")):
        return EXCLUDED
    return None


def _headers_basis(headers: Sequence[str]) -> str | None:
    said = {basis for header in headers if (basis := basis_of_header(header))}
    return said.pop() if len(said) == 1 else None


def read_invoices(
    records: Sequence[Mapping[str, Any]], overrides: Mapping[str, str] | None = None
) -> InvoiceTable:
    """The invoice list (rows without a 請求書番号 are skipped and counted).

    Raises:
        UserInputError: no rows, no 請求書番号 column, an unreadable amount.
    """
    if not records:
        raise UserInputError(
            "請求書一覧に請求書がありません",
            hint="1 行に 1 枚の請求書を書いた一覧（CSV・Excel・表）をつないでください",
            details={"table": INVOICES},
        )
    headers = [str(name) for name in records[0]]
    columns = find_columns(
        headers, INVOICE_ROLES, table=INVOICES, overrides=overrides, option="columns.invoices"
    )
    rows: list[InvoiceRow] = []
    skipped: list[int] = []
    for row, record in enumerate(records, start=1):
        invoice_id = _text(record.get(columns["id"]))
        if not invoice_id:
            skipped.append(row)
            continue

        def cell(role: str, record: Mapping[str, Any] = record) -> Any:
            return record.get(columns[role]) if role in columns else None

        def amount(role: str, record: Mapping[str, Any] = record, row: int = row) -> Any:
            return _amount(record, columns, role, INVOICES, row)

        rows.append(
            InvoiceRow(
                id=invoice_id,
                row=row,
                issuer=_text(cell("issuer")),
                registration=None if _blank(cell("registration")) else cell("registration"),
                issued=None if _blank(cell("issued")) else cell("issued"),
                recipient=_text(cell("recipient")),
                bases={rate: amount(role) for rate, role in _BASE_ROLES.items()},
                taxes={rate: amount(role) for rate, role in _TAX_ROLES.items()},
                total=amount("total"),
                tax_total=amount("tax_total"),
            )
        )
    amount_headers = [columns[r] for r in ("base_10", "base_8") if r in columns]
    return InvoiceTable(rows, columns, _headers_basis(amount_headers), skipped, headers)


def rate_of(value: Any) -> int | None:
    """A 税率 cell as 10, 8 or 0 (per cent: ``10%`` ``0.1`` ``軽減8%`` ``標準`` ``非課税``),
    or None for any other rate (``5%``, a contradiction such as ``10%軽減``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        number = Decimal(str(value))
        return _known_rate(number * 100 if 0 < number < 1 else number)
    text = nfkc(str(value)).replace(" ", "")
    if any(word in text for word in _ZERO_WORDS):
        return EXEMPT
    numbers = _NUMBER_RE.findall(text)
    if len(numbers) == 1:
        number = Decimal(numbers[0])
        rate = _known_rate(number * 100 if "%" not in text and 0 < number < 1 else number)
        return None if "軽減" in text and rate != REDUCED else rate
    if not numbers and "軽減" in text:
        return REDUCED
    if not numbers and "標準" in text:
        return STANDARD
    return None


def _known_rate(percent: Decimal) -> int | None:
    return next((rate for rate in (STANDARD, REDUCED, EXEMPT) if percent == rate), None)


def _mark_rate(value: Any) -> int | None:
    """A 軽減税率 mark cell: marked → 8, unmarked → 10, a rate → that rate."""
    if isinstance(value, bool):
        return REDUCED if value else STANDARD
    key = nfkc(str(value)).upper()
    if key in _MARKED:
        return REDUCED
    if key in _UNMARKED:
        return STANDARD
    rate = rate_of(value)
    return rate if rate in TAXED_RATES else None


def _line_rate(
    record: Mapping[str, Any], columns: Mapping[str, str], item: str
) -> tuple[int | None, str, str]:
    """(rate, the cell as written, where the rate came from)."""
    rate_cell = record.get(columns["rate"]) if "rate" in columns else None
    if not _blank(rate_cell):
        return rate_of(rate_cell), _text(rate_cell), "税率"
    mark = record.get(columns["reduced"]) if "reduced" in columns else None
    if not _blank(mark):
        return _mark_rate(mark), _text(mark), "軽減税率の印"
    if _ITEM_MARK_RE.search(nfkc(item)):
        return REDUCED, "", "品目の印"
    if "rate" in columns and "reduced" not in columns:
        return STANDARD, "", "税率が空欄"
    return STANDARD, "", "印なし"


def read_lines(
    records: Sequence[Mapping[str, Any]], overrides: Mapping[str, str] | None = None
) -> LineTable:
    """The line items (rows without an amount are text lines, skipped).

    Raises:
        UserInputError: no 請求書番号 or 金額 column, an unreadable amount, a line with
            an amount and no 請求書番号.
    """
    if not records:
        return LineTable([], {})
    headers = [str(name) for name in records[0]]
    columns = find_columns(
        headers, LINE_ROLES, table=LINES, overrides=overrides, option="columns.lines"
    )
    lines: list[Line] = []
    for row, record in enumerate(records, start=1):
        amount = _amount(record, columns, "amount", LINES, row)
        if amount is None:
            continue
        invoice_id = _text(record.get(columns["id"]))
        if not invoice_id:
            raise UserInputError(
                f"請求明細の {row} 行目に請求書番号がありません（金額 {yen(amount)}）",
                hint="明細の各行に、どの請求書の明細かを「請求書番号」の列で書いてください",
                details={"table": LINES, "row": row, "column": columns["id"]},
            )
        item = _text(record.get(columns["item"])) if "item" in columns else ""
        rate, written, source = _line_rate(record, columns, item)
        lines.append(Line(invoice_id, row, item, amount, rate, written, source))
    return LineTable(lines, columns, basis_of_header(columns["amount"]))


# --------------------------------------------------------------------------- figures


def exact_tax(base: Decimal, rate: int, basis: str) -> Decimal:
    """The unrounded tax: ``base × rate/100`` (税抜) or ``base × rate/(100+rate)`` (税込)."""
    return base * rate / Decimal(100 if basis == EXCLUDED else 100 + rate)


def tax_once(base: Decimal, rate: int, basis: str, rounding: str) -> Decimal:
    """The tax of a rate's summed 対価, rounded once (whole yen)."""
    return exact_tax(base, rate, basis).quantize(Decimal(1), rounding=ROUNDINGS[rounding])


def _plain(value: Decimal) -> Decimal:
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value


def yen(value: Decimal) -> str:
    """``12,345円`` (decimals kept as written)."""
    return f"{_plain(value):,f}円"


def _diff(value: Decimal) -> str:
    return f"{_plain(value):+,f}円"


def _exact_text(value: Decimal) -> str:
    shown = value.quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    if shown == value:
        return yen(value)
    return f"{shown:,f}…円"


def formula(base: Decimal, rate: int, basis: str, rounding: str) -> str:
    """How the tax is computed, in words: ``10%対象 12,345円（税抜）× 10% = 1,234.5円
    → 切り捨てで 1,234円``."""
    factor = f"{rate}%" if basis == EXCLUDED else f"{rate}/{100 + rate}"
    exact = exact_tax(base, rate, basis)
    return (
        f"{rate}%対象 {yen(base)}（{basis}）× {factor} = {_exact_text(exact)}"
        f" → {rounding}で {yen(tax_once(base, rate, basis, rounding))}"
    )


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Finding:
    """What is wrong with an invoice (or the whole list), in plain Japanese."""

    invoice: str
    row: int | None
    item: str
    text: str
    severity: str


@dataclass
class Checked:
    """One invoice checked: the 対価 and tax of each rate as computed (``bases`` from
    the lines when there are lines), how 税抜/税込 was decided, its findings."""

    invoice: InvoiceRow
    bases: dict[int, Decimal]
    basis: str | None
    basis_from: str
    taxes: dict[int, Decimal] = field(default_factory=dict)
    total: Decimal | None = None
    lines: int = 0
    findings: list[Finding] = field(default_factory=list)

    def add(self, item: str, text: str, severity: str) -> None:
        self.findings.append(Finding(self.invoice.id, self.invoice.row, item, text, severity))

    @property
    def verdict(self) -> str:
        return "OK" if not self.findings else CHECK


@dataclass(frozen=True)
class CheckResult:
    invoices: list[Checked]
    findings: list[Finding]
    """Every finding: those about the whole list, then each invoice's, then lines
    whose 請求書番号 is not in the list."""
    skipped: list[int]
    lines: int


RegistrationCheck = Callable[[Any], str | None]
"""Why a 登録番号 is invalid (a Japanese sentence), or None."""


def check_invoices(
    table: InvoiceTable,
    lines: LineTable | None = None,
    *,
    registration: RegistrationCheck,
    prices: str = "自動",
    rounding: str = "切り捨て",
) -> CheckResult:
    """Check every invoice of ``table`` (see the module docstring).

    Raises:
        UserInputError: an unknown ``prices`` or ``rounding``; no 対価 column and no
            lines; a 請求書番号 listed twice when there are lines.
    """
    _check_options(prices, rounding)
    if lines is None and not any(role in table.columns for role in _BASE_ROLES.values()):
        raise UserInputError(
            "請求書一覧に税率ごとの対価の額（10%対象額・8%対象額）の列が見つかりません",
            hint=f"請求書一覧の列: {', '.join(table.headers)}。"
            "列名を columns.invoices の base_10・base_8 に指定するか、"
            "請求明細（lines）を渡して明細から計算してください",
            details={"table": INVOICES, "role": "base_10"},
        )
    by_invoice: dict[str, list[Line]] = {}
    if lines is not None:
        _refuse_duplicates(table)
        for line in lines.lines:
            by_invoice.setdefault(line.invoice, []).append(line)
    said = {b for b in (table.basis, lines.basis if lines else None) if b is not None}
    header_basis = said.pop() if len(said) == 1 else None
    checked = [
        _check_one(
            invoice,
            table,
            None if lines is None else by_invoice.get(invoice.id, []),
            registration=registration,
            prices=prices,
            header_basis=header_basis,
            rounding=rounding,
        )
        for invoice in table.rows
    ]
    known = {invoice.id for invoice in table.rows}
    stray = [line for line in (lines.lines if lines else []) if line.invoice not in known]
    findings = [
        *_list_findings(table, checked),
        *(finding for one in checked for finding in one.findings),
        *_stray_findings(stray),
    ]
    return CheckResult(checked, findings, table.skipped, len(lines.lines) if lines else 0)


def _check_options(prices: str, rounding: str) -> None:
    if prices not in PRICES:
        raise UserInputError(
            f"prices {prices!r} は使えません",
            hint="税抜・税込・自動（列名か合計から判別）のどれかを指定してください",
            details={"field": "prices"},
        )
    if rounding not in ROUNDINGS:
        raise UserInputError(
            f"rounding {rounding!r} は使えません",
            hint="切り捨て・四捨五入・切り上げのどれかを指定してください",
            details={"field": "rounding"},
        )


def _refuse_duplicates(table: InvoiceTable) -> None:
    first: dict[str, int] = {}
    for invoice in table.rows:
        if invoice.id in first:
            raise UserInputError(
                f"請求書一覧の {first[invoice.id]} 行目と {invoice.row} 行目の請求書番号 "
                f"{invoice.id!r} が同じため、請求明細がどちらの明細か決められません",
                hint="請求書番号を 1 枚に 1 つにしてください（発行者ごとに番号が重なるときは、"
                "発行者の略称を付けるなどして区別してください）",
                details={"table": INVOICES, "row": invoice.row, "invoice": invoice.id},
            )
        first[invoice.id] = invoice.row


def _check_one(
    invoice: InvoiceRow,
    table: InvoiceTable,
    lines: list[Line] | None,
    *,
    registration: RegistrationCheck,
    prices: str,
    header_basis: str | None,
    rounding: str,
) -> Checked:
    one = Checked(invoice, {}, None, "")
    _check_noted(one, table.columns, registration)
    per_rate: dict[int, list[Line]] = {}
    if lines:
        one.lines = len(lines)
        per_rate = _bases_from_lines(one, lines, table.columns)
    else:
        if lines is not None:
            one.add(
                "明細",
                "請求明細にこの請求書の明細がありません。請求書一覧に記載の対象額で計算しました",
                CHECK,
            )
        _bases_from_list(one, table.columns)
    unknown_rates = any(line.rate is None for line in lines or [])
    one.basis, one.basis_from = _basis(one, prices, header_basis, rounding, unknown_rates)
    _check_taxes(one, table.columns, per_rate, rounding)
    _check_total(one, unknown_rates=unknown_rates)
    _check_tax_total(one)
    return one


def _check_noted(one: Checked, columns: Mapping[str, str], registration: RegistrationCheck) -> None:
    """The 記載事項 other than the figures: issuer, 登録番号, date, recipient."""
    invoice = one.invoice
    if "issuer" in columns and not invoice.issuer:
        one.add(
            "発行者",
            "発行者（適格請求書発行事業者）の氏名又は名称が空欄です。記載が必要です",
            FIX,
        )
    if "registration" in columns:
        if invoice.registration is None:
            one.add(
                "登録番号",
                "登録番号（T + 13桁）の記載がありません。発行者が適格請求書発行事業者か"
                "国税庁の公表サイトで確かめ、登録番号を記載してください"
                "（受け取った請求書なら発行者に記載を依頼してください）",
                CHECK,
            )
        elif problem := registration(invoice.registration):
            one.add(
                "登録番号", f"登録番号 {_text(invoice.registration)} は誤りです: {problem}", FIX
            )
    if "issued" in columns:
        if invoice.issued is None:
            one.add("交付年月日", "交付年月日（取引年月日）が空欄です。記載が必要です", FIX)
        elif date_value(invoice.issued) is None:
            one.add(
                "交付年月日",
                f"交付年月日 {_text(invoice.issued)!r} を日付として読めません"
                "（2026-11-30・2026年11月30日・令和8年11月30日 の形で書いてください）",
                CHECK,
            )
    if "recipient" in columns and not invoice.recipient:
        one.add("受領者", "受領者（請求書の宛先）の氏名又は名称が空欄です。記載が必要です", FIX)


def _bases_from_list(one: Checked, columns: Mapping[str, str]) -> None:
    """The 対価 of each rate as the list states them (a tax with no 対価: a finding)."""
    invoice = one.invoice
    for rate in _BASE_ROLES:
        base = invoice.bases.get(rate)
        if base is not None and base != 0:
            one.bases[rate] = base
    for rate in TAXED_RATES:
        tax = invoice.taxes.get(rate)
        if rate not in one.bases and tax and _BASE_ROLES[rate] in columns:
            one.add(
                f"{rate}%対象額",
                f"{RATE_NAMES[rate]}の消費税額 {yen(tax)}の記載がありますが、"
                f"{rate}%対象の対価の額（税率ごとに合計した額）が空欄です。記載が必要です",
                FIX,
            )


def _bases_from_lines(
    one: Checked, lines: list[Line], columns: Mapping[str, str]
) -> dict[int, list[Line]]:
    """The 対価 of each rate summed from the lines, compared with what the list states."""
    per_rate: dict[int, list[Line]] = {}
    for line in lines:
        if line.rate is None:
            one.add(
                "税率",
                f"請求明細 {line.row} 行目（{line.item or '品目なし'}・{yen(line.amount)}）の"
                f"税率「{line.rate_text}」は 10%・8%（軽減税率）・0%（非課税・免税）の"
                "どれでもありません。この明細を除いて計算し、合計は確かめていません",
                CHECK,
            )
            continue
        if line.rate_from == "税率が空欄":
            one.add(
                "税率",
                f"請求明細 {line.row} 行目（{line.item or '品目なし'}）の税率が空欄です。"
                "軽減税率の印もないため 10% として計算しました",
                CHECK,
            )
        per_rate.setdefault(line.rate, []).append(line)
    for rate, rate_lines in per_rate.items():
        total = sum((line.amount for line in rate_lines), Decimal(0))
        if total != 0:
            one.bases[rate] = total
    for rate, role in _BASE_ROLES.items():
        if role in columns:
            _compare_stated_base(one, rate, one.invoice.bases.get(rate))
    for rate in TAXED_RATES:
        tax = one.invoice.taxes.get(rate)
        if rate not in one.bases and tax and not one.invoice.bases.get(rate):
            one.add(
                f"{rate}%消費税額",
                f"{RATE_NAMES[rate]}の消費税額 {yen(tax)}の記載がありますが、"
                f"請求明細に{RATE_NAMES[rate]}の明細がありません",
                FIX,
            )
    return per_rate


def _compare_stated_base(one: Checked, rate: int, stated: Decimal | None) -> None:
    summed = one.bases.get(rate)
    label = "非課税・免税の額" if rate == EXEMPT else f"{rate}%対象額"
    if summed is None:
        if stated:
            one.add(
                label,
                f"{label}として {yen(stated)}の記載がありますが、請求明細に"
                f"{RATE_NAMES[rate]}の明細がありません",
                FIX,
            )
    elif stated is None:
        one.add(
            label,
            f"{label}（税率ごとに合計した対価の額）が空欄です。明細の合計は {yen(summed)}です",
            FIX,
        )
    elif stated != summed:
        one.add(
            label,
            f"{label}の記載 {yen(stated)}が明細の合計 {yen(summed)}と違います"
            f"（差 {_diff(stated - summed)}）。正しくは {yen(summed)}です",
            FIX,
        )


def _taxed(one: Checked) -> list[int]:
    """The taxed rates the invoice has (a 対価, or a stated tax)."""
    return [r for r in TAXED_RATES if r in one.bases or one.invoice.taxes.get(r)]


def _basis(
    one: Checked, prices: str, header_basis: str | None, rounding: str, unknown_rates: bool
) -> tuple[str | None, str]:
    """税抜 or 税込 and how it was decided (None: it could not be told)."""
    if prices != "自動":
        return prices, "指定"
    if header_basis is not None:
        return header_basis, "列名"
    rates = [r for r in _taxed(one) if r in one.bases]
    if not rates:
        return None, "課税の対価なし"
    total = one.invoice.total
    if total is None:
        return None, "合計の記載なし"
    if unknown_rates:
        return None, "税率不明の明細あり"
    summed = sum(one.bases.values(), Decimal(0))
    taxes = sum(
        (_stated_or(one, r, tax_once(one.bases[r], r, EXCLUDED, rounding)) for r in rates),
        Decimal(0),
    )
    fits = {EXCLUDED: total == summed + taxes, INCLUDED: total == summed}
    if fits[EXCLUDED] != fits[INCLUDED]:
        return (EXCLUDED if fits[EXCLUDED] else INCLUDED), "合計から判定"
    return None, "合計と合わない" if not any(fits.values()) else "税額が 0"


def _stated_or(one: Checked, rate: int, computed: Decimal) -> Decimal:
    stated = one.invoice.taxes.get(rate)
    return computed if stated is None else stated


def _check_taxes(
    one: Checked, columns: Mapping[str, str], per_rate: Mapping[int, list[Line]], rounding: str
) -> None:
    for rate in _taxed(one):
        base = one.bases.get(rate)
        if base is None:
            continue
        if one.basis is None:
            if not _same_either_way(one, rate, base, rounding):
                _unknown_basis(one, rate, base, rounding)
                continue
            one.taxes[rate] = tax_once(base, rate, EXCLUDED, rounding)
            basis = EXCLUDED
        else:
            basis = one.basis
            one.taxes[rate] = tax_once(base, rate, basis, rounding)
        if _TAX_ROLES[rate] in columns:
            _compare_tax(one, rate, base, basis, rounding, per_rate.get(rate, []))


def _same_either_way(one: Checked, rate: int, base: Decimal, rounding: str) -> bool:
    return tax_once(base, rate, EXCLUDED, rounding) == tax_once(base, rate, INCLUDED, rounding)


def _unknown_basis(one: Checked, rate: int, base: Decimal, rounding: str) -> None:
    why = {
        "合計の記載なし": "合計の記載がないため",
        "合計と合わない": "合計が税抜・税込どちらの計算とも合わないため",
        "税額が 0": "税額が 0 で合計からは決められないため",
        "税率不明の明細あり": "税率の分からない明細があり合計からは決められないため",
    }.get(one.basis_from, "")
    excluded = tax_once(base, rate, EXCLUDED, rounding)
    included = tax_once(base, rate, INCLUDED, rounding)
    stated = one.invoice.taxes.get(rate)
    text = (
        f"{why}{rate}%対象 {yen(base)}が税抜か税込か判別できず、消費税額を確かめていません。"
        f"税抜なら {yen(excluded)}、税込なら {yen(included)}です"
    )
    if stated is not None:
        text += f"（記載は {yen(stated)}"
        if stated in (excluded, included):
            text += f"。{EXCLUDED if stated == excluded else INCLUDED}として計算した額と一致します"
        text += "）"
    one.add(
        "対象額の扱い（税抜・税込）", text + "。prices に 税抜 か 税込 を指定してください", CHECK
    )


def _compare_tax(
    one: Checked, rate: int, base: Decimal, basis: str, rounding: str, lines: list[Line]
) -> None:
    computed = one.taxes[rate]
    stated = one.invoice.taxes.get(rate)
    how = formula(base, rate, basis, rounding)
    if stated is None:
        one.add(
            f"{rate}%消費税額",
            f"{RATE_NAMES[rate]}の消費税額が空欄です。記載が必要です。正しくは {yen(computed)}"
            f"（{how}）",
            FIX,
        )
        return
    if stated == computed:
        return
    per_line = _per_line_rounding(stated, rate, basis, rounding, lines)
    if per_line is not None:
        mode, parts = per_line
        one.add(
            "端数処理",
            f"{RATE_NAMES[rate]}の消費税額 {yen(stated)}は、明細ごとに端数処理（{mode}）した"
            "税額の合計"
            f"（{' + '.join(f'{p:,f}' for p in parts)}）です。端数処理は 1 枚の請求書につき"
            f"税率ごとに 1 回です。正しくは {yen(computed)}"
            f"（{how}、差 {_diff(stated - computed)}）",
            FIX,
        )
        return
    other = next(
        (
            mode
            for mode in ROUNDINGS
            if mode != rounding and tax_once(base, rate, basis, mode) == stated
        ),
        None,
    )
    if other is not None:
        one.add(
            f"{rate}%消費税額",
            f"{RATE_NAMES[rate]}の消費税額 {yen(stated)}は{rounding}の {yen(computed)}と"
            f"違いますが、{other}なら一致します（{formula(base, rate, basis, other)}）。"
            "端数処理の方法は発行者が選べます。発行者が"
            f"{other}なら正しい額です（rounding: {other} で確かめられます）",
            CHECK,
        )
        return
    one.add(
        f"{rate}%消費税額",
        f"{RATE_NAMES[rate]}の消費税額が合いません。記載 {yen(stated)}、正しくは {yen(computed)}"
        f"（{how}）。差 {_diff(stated - computed)}",
        FIX,
    )


def _per_line_rounding(
    stated: Decimal, rate: int, basis: str, rounding: str, lines: list[Line]
) -> tuple[str, list[Decimal]] | None:
    """The rounding (this one first) whose per-line taxes sum to ``stated``, if any."""
    if len(lines) < 2:
        return None
    for mode in (rounding, *(m for m in ROUNDINGS if m != rounding)):
        parts = [tax_once(line.amount, rate, basis, mode) for line in lines]
        if sum(parts, Decimal(0)) == stated:
            return mode, parts
    return None


def _check_total(one: Checked, *, unknown_rates: bool) -> None:
    """合計 = the 対価 plus (税抜) the stated tax of every rate; ``one.total`` is the
    correct 合計 (with the computed tax)."""
    rates = _taxed(one)
    if any(r not in one.bases or r not in one.taxes for r in rates):
        return  # no 対価, or 税抜/税込 unknown: nothing to add up
    if rates and one.basis is None:
        return
    summed = sum(one.bases.values(), Decimal(0))
    if one.basis == INCLUDED or not rates:
        one.total = stated_sum = summed
    else:
        one.total = summed + sum((one.taxes[r] for r in rates), Decimal(0))
        stated_sum = summed + sum((_stated_or(one, r, one.taxes[r]) for r in rates), Decimal(0))
    stated = one.invoice.total
    if stated is None or unknown_rates or stated == stated_sum:
        return
    what = "対価" if one.basis == INCLUDED or not rates else "対価と消費税額"
    text = (
        f"合計が合いません。記載 {yen(stated)}、税率ごとの{what}を足すと {yen(stated_sum)}"
        f"（差 {_diff(stated - stated_sum)}）"
    )
    if one.total != stated_sum:
        text += f"。正しい消費税額で計算した合計は {yen(one.total)}です"
    one.add("合計", text, FIX)


def _check_tax_total(one: Checked) -> None:
    """消費税額合計 = the stated (or, when blank, computed) tax of every rate."""
    rates = _taxed(one)
    stated = one.invoice.tax_total
    if stated is None or any(r not in one.taxes for r in rates):
        return
    summed = sum((_stated_or(one, r, one.taxes[r]) for r in rates), Decimal(0))
    if stated != summed:
        one.add(
            "消費税額合計",
            f"消費税額合計 {yen(stated)}が税率ごとの消費税額の合計 {yen(summed)}と違います"
            f"（差 {_diff(stated - summed)}）",
            FIX,
        )


def _list_findings(table: InvoiceTable, checked: list[Checked]) -> list[Finding]:
    """A column the list lacks: one finding for the whole list."""
    findings = []
    labels = {role.name: role.label for role in INVOICE_ROLES}
    missing = [role for role in _NOTED_ROLES if role not in table.columns]
    for rate in TAXED_RATES:
        if any(rate in _taxed(one) for one in checked):
            missing += [r for r in (_BASE_ROLES[rate], _TAX_ROLES[rate]) if r not in table.columns]
    for role in missing:
        findings.append(
            Finding(
                WHOLE_LIST,
                None,
                labels[role],
                f"請求書一覧に「{labels[role]}」の列がないため、記載があるかを確かめていません"
                f"（列名が違うときは columns.invoices の {role} に列名を指定してください）",
                CHECK,
            )
        )
    return findings


def _stray_findings(lines: list[Line]) -> list[Finding]:
    rows: dict[str, list[int]] = {}
    for line in lines:
        rows.setdefault(line.invoice, []).append(line.row)
    return [
        Finding(
            invoice,
            None,
            "明細",
            f"請求明細の {'・'.join(map(str, numbers))} 行目の請求書番号 {invoice} は"
            "請求書一覧にありません（計算に入れていません）",
            CHECK,
        )
        for invoice, numbers in rows.items()
    ]


def issued_text(value: Any) -> str | None:
    """交付年月日 as ISO text when it reads as a date, else as written."""
    if value is None:
        return None
    date = date_value(value)
    return date.isoformat() if isinstance(date, dt.date) else _text(value)
