"""Open invoices and the customer master, read from tables by their headers.

``read_customers(records)`` → :class:`~keiri_agent.accounting.payer_names.Customer`
(得意先コード, 得意先名, カナ, 振込名義/別名: several names split at ; 、 / and line
breaks). ``read_invoices(records, customers)`` → :class:`Invoice` (請求書番号, 得意先,
請求額, 残高 when the list has one, 支払期限, 請求日); an invoice names its customer by
code, or by a name the master holds. Every unreadable cell is an error naming the
table, the row and the column; an invoice whose customer is not in the master is an
error too (its payments could never be matched).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from keiri_agent.accounting.columns import Role, find_columns
from keiri_agent.accounting.payer_names import Customer
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import date_value, decimal_value

CUSTOMERS = "取引先マスタ"
INVOICES = "請求一覧"

_CODE_WORDS = (
    "得意先コード",
    "取引先コード",
    "顧客コード",
    "得意先CD",
    "取引先CD",
    "得意先ID",
    "顧客ID",
    "取引先ID",
)
"""How lists head the customer's code (the master adds a bare コード)."""

CUSTOMER_ROLES = (
    Role(
        "code",
        "得意先コード",
        (*_CODE_WORDS, "コード"),
    ),
    Role(
        "name",
        "得意先名",
        ("得意先名", "取引先名", "顧客名", "会社名", "名称", "得意先", "取引先"),
        required=True,
    ),
    Role("kana", "カナ", ("フリガナ", "ふりがな", "カナ", "ヨミ", "読み", "読みがな", "よみ")),
    Role(
        "aliases", "振込名義", ("振込名義", "振込依頼人名", "振込人名", "口座名義", "別名", "名義")
    ),
)
INVOICE_ROLES = (
    Role(
        "id",
        "請求書番号",
        (
            "請求書番号",
            "請求番号",
            "請求書NO",
            "請求NO",
            "請求書ID",
            "請求ID",
            "伝票番号",
            "番号",
            "NO",
        ),
        required=True,
    ),
    Role(
        "customer_code",
        "得意先コード",
        _CODE_WORDS,
    ),
    Role(
        "customer_name",
        "得意先名",
        ("得意先名", "取引先名", "顧客名", "請求先", "会社名", "得意先", "取引先"),
    ),
    Role(
        "amount",
        "請求額",
        ("請求金額", "請求額", "税込金額", "請求合計", "合計金額", "金額"),
        required=True,
    ),
    Role("balance", "未入金額", ("未入金額", "請求残高", "未収金額", "未回収額", "残額", "残高")),
    Role(
        "due",
        "支払期限",
        (
            "支払期限",
            "支払期日",
            "入金期日",
            "入金予定日",
            "回収予定日",
            "支払予定日",
            "期日",
            "期限",
        ),
    ),
    Role("issued", "請求日", ("請求日", "発行日", "請求年月日", "計上日", "売上日")),
)

_ALIAS_SEPARATORS = re.compile(r"[;；、/／|\n]+")


@dataclass(frozen=True)
class Invoice:
    """An open invoice: ``balance`` is what is still to be paid (``amount`` when the
    list has no balance column)."""

    id: str
    customer: Customer
    amount: Decimal
    balance: Decimal
    due: dt.date | None
    issued: dt.date | None
    row: int


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _name_key(name: str) -> str:
    return re.sub(r"\s", "", unicodedata.normalize("NFKC", name))


def read_customers(
    records: Sequence[Mapping[str, Any]], overrides: Mapping[str, str] | None = None
) -> list[Customer]:
    """The customer master (rows without a name are skipped)."""
    if not records:
        raise UserInputError("取引先マスタに行がありません", hint="得意先の一覧をつないでください")
    headers = [str(name) for name in records[0]]
    columns = find_columns(
        headers, CUSTOMER_ROLES, table=CUSTOMERS, overrides=overrides, option="columns.customers"
    )
    customers: list[Customer] = []
    seen: set[str] = set()
    for row, record in enumerate(records, start=1):
        name = _text(record.get(columns["name"]))
        if not name:
            continue
        code = _text(record.get(columns["code"])) if "code" in columns else ""
        code = code or name
        if code in seen:
            raise UserInputError(
                f"取引先マスタの {row} 行目の得意先コード {code!r} が重複しています",
                hint="同じ得意先は 1 行にまとめてください（振込名義は別名の列に ; 区切りで）",
                details={"table": CUSTOMERS, "row": row, "code": code},
            )
        seen.add(code)
        kana = _text(record.get(columns["kana"])) if "kana" in columns else ""
        aliases_text = _text(record.get(columns["aliases"])) if "aliases" in columns else ""
        aliases = tuple(a.strip() for a in _ALIAS_SEPARATORS.split(aliases_text) if a.strip())
        customers.append(Customer(code, name, kana, aliases))
    return customers


def read_invoices(
    records: Sequence[Mapping[str, Any]],
    customers: Sequence[Customer],
    overrides: Mapping[str, str] | None = None,
) -> list[Invoice]:
    """The open invoices (a balance of 0 is a paid invoice, left out)."""
    if not records:
        return []
    headers = [str(name) for name in records[0]]
    columns = find_columns(
        headers, INVOICE_ROLES, table=INVOICES, overrides=overrides, option="columns.invoices"
    )
    if "customer_code" not in columns and "customer_name" not in columns:
        raise UserInputError(
            "請求一覧に得意先（コードか名前）の列が見つかりません",
            hint=f"請求一覧の列: {', '.join(headers)}。"
            "columns.invoices の customer_code か customer_name に列名を指定してください",
            details={"table": INVOICES, "role": "customer_code", "columns": headers},
        )
    by_code = {customer.id: customer for customer in customers}
    by_name = {_name_key(customer.name): customer for customer in customers}
    invoices: list[Invoice] = []
    seen: set[str] = set()
    for row, record in enumerate(records, start=1):
        invoice_id = _text(record.get(columns["id"]))
        if not invoice_id:
            continue
        if invoice_id in seen:
            raise UserInputError(
                f"請求一覧の {row} 行目の請求書番号 {invoice_id!r} が重複しています",
                hint="請求書番号は 1 件に 1 つにしてください",
                details={"table": INVOICES, "row": row, "invoice": invoice_id},
            )
        seen.add(invoice_id)
        customer = _customer_of(record, columns, by_code, by_name, row, invoice_id)
        amount = _money(record.get(columns["amount"]), row, "請求額")
        balance = amount
        if "balance" in columns and _text(record.get(columns["balance"])):
            balance = _money(record.get(columns["balance"]), row, "未入金額")
        if balance <= 0:
            continue
        due = _date(record, columns, "due", row)
        issued = _date(record, columns, "issued", row)
        invoices.append(Invoice(invoice_id, customer, amount, balance, due, issued, row))
    return invoices


def _customer_of(
    record: Mapping[str, Any],
    columns: Mapping[str, str],
    by_code: Mapping[str, Customer],
    by_name: Mapping[str, Customer],
    row: int,
    invoice_id: str,
) -> Customer:
    code = _text(record.get(columns["customer_code"])) if "customer_code" in columns else ""
    name = _text(record.get(columns["customer_name"])) if "customer_name" in columns else ""
    found = by_code.get(code) if code else None
    if found is None and name:
        found = by_name.get(_name_key(name))
    if found is None:
        shown = code or name or "（空）"
        raise UserInputError(
            f"請求一覧の {row} 行目（{invoice_id}）の得意先 {shown!r} が取引先マスタにありません",
            hint="取引先マスタにこの得意先を追加するか、請求一覧の得意先コードを確かめてください",
            details={"table": INVOICES, "row": row, "invoice": invoice_id, "customer": shown},
        )
    return found


def _money(value: Any, row: int, label: str) -> Decimal:
    number = decimal_value(value)
    if number is None:
        raise UserInputError(
            f"請求一覧の {row} 行目の{label} {value!r} を金額として読めません",
            hint="金額は 110000・110,000・¥110,000 の形で書いてください",
            details={"table": INVOICES, "row": row, "value": str(value)[:100]},
        )
    return number


def _date(
    record: Mapping[str, Any], columns: Mapping[str, str], role: str, row: int
) -> dt.date | None:
    if role not in columns:
        return None
    raw = record.get(columns[role])
    if not _text(raw):
        return None
    date = date_value(raw)
    if date is None:
        label = "支払期限" if role == "due" else "請求日"
        raise UserInputError(
            f"請求一覧の {row} 行目の{label} {raw!r} を日付として読めません",
            hint="日付は 2026/11/30・2026-11-30・2026年11月30日 の形で書いてください",
            details={"table": INVOICES, "row": row, "value": str(raw)[:100]},
        )
    return date
