"""A bank statement's lines, whatever file they came from (``bank_statements``, ``zengin``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class BankLine:
    """One line of a statement. ``row``: 1-based among the data rows; ``deposit`` and
    ``withdrawal`` in yen (0 when none); ``payer`` the remitter as the bank printed it
    (empty when the line has none); ``bank_entry``: a deposit by the bank itself
    (interest); ``record``: the line as read."""

    row: int
    date: dt.date | None
    deposit: Decimal
    withdrawal: Decimal
    payer: str
    text: str = ""
    bank_entry: bool = False
    record: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Statement:
    """The lines of a statement, the file's format, the columns used (role → header)
    and the account holder the download names (empty when it names none)."""

    lines: list[BankLine]
    format: str
    columns: dict[str, str]
    holder: str = ""
