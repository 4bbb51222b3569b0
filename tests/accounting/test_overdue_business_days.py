"""未入金請求's days overdue count from the business day a due date falls on (民法 142):
a due date on a Sunday, a national holiday or the company's 年末年始 moves to the next
business day. Dates checked against the 2026/2027 calendar (内閣府の祝日一覧)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.payment_matching import MatchPaymentsBlock
from keiri_agent.config import Settings

CUSTOMERS = [{"得意先コード": "C01", "得意先名": "株式会社あおば商事", "カナ": "アオバショウジ"}]


def open_rows(due: str, as_of: str) -> dict[str, Any]:
    invoices = [{"請求書番号": "A1", "得意先コード": "C01", "請求額": 55_000, "支払期限": due}]
    bank = [{"日付": as_of, "摘要": "利息", "入金金額": 12}]
    ctx = BlockContext("t", "t", "match", Settings(_env_file=None), logging.getLogger("t"))  # type: ignore[call-arg]
    inputs = {"bank": bank, "invoices": invoices, "customers": CUSTOMERS, "as_of": as_of}
    (row,) = MatchPaymentsBlock().run(inputs, ctx)["open_invoices"]
    return row


@pytest.mark.parametrize(
    ("due", "as_of", "business_due", "overdue"),
    [
        ("2026-05-29", "2026-06-01", "2026-05-29", 3),  # a Friday: as it is
        ("2026-05-31", "2026-06-01", "2026-06-01", 0),  # a Sunday: paid Monday, not late
        ("2026-05-31", "2026-06-03", "2026-06-01", 2),
        ("2026-05-03", "2026-05-08", "2026-05-07", 1),  # 憲法記念日 … 振替休日 (5/6)
        ("2026-12-31", "2027-01-05", "2027-01-04", 1),  # 年末年始 (company closed 12-29 … 1-3)
        ("2028-02-29", "2028-03-01", "2028-02-29", 1),  # a leap day that is a Tuesday
    ],
)
def test_days_overdue_count_from_the_business_day(
    due: str, as_of: str, business_due: str, overdue: int
) -> None:
    row = open_rows(due, as_of)
    assert (row["支払期限"], row["期限（営業日）"], row["延滞日数"]) == (due, business_due, overdue)
