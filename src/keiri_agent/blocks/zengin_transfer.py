"""``accounting.zengin_transfer``: a 総合振込 file (全銀形式) from a 支払予定表.

Reads the table (a file or records; columns by their headers), checks every row
(:mod:`keiri_agent.accounting.payment_schedule`: codes against the bank code list,
names in the 全銀 character set, amounts), checks that the 振込指定日 is a business day
(national holidays and the company's closed days), and writes the file
(:mod:`keiri_agent.accounting.zengin_transfers`). The file is read back before it is
returned and must give the same transfers: a file that would not parse never leaves.
The block returns the file (``{name, data}``: 総合振込_YYYYMMDD.txt); sending it to the
bank is the user's step.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from keiri_agent.accounting.business_calendar import BusinessCalendar
from keiri_agent.accounting.payment_schedule import (
    SCHEDULE,
    SCHEDULE_ROLES,
    ScheduleRow,
    kana_name,
    read_account,
    read_schedule,
)
from keiri_agent.accounting.tables import records_of
from keiri_agent.accounting.zengin_transfers import (
    ACCOUNT_TYPES,
    MAX_COUNT,
    MAX_TOTAL,
    Remitter,
    read_transfer_file,
    write_transfer_file,
)
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import column_overrides, invalid
from keiri_agent.errors import UserInputError
from keiri_agent.files.cells import date_value

REMITTER_NAME_SIZE = 40
"""振込依頼人名 is C(40)."""


def _remitter(inputs: Mapping[str, Any], day: dt.date) -> Remitter:
    given = inputs.get("remitter")
    if not isinstance(given, Mapping):
        raise invalid(
            "remitter に振込元（委託者コード・依頼人名・銀行・支店・預金種目・口座番号）"
            "を書いてください",
            hint="委託者コードは銀行との契約で決まる 10 桁以内の番号です",
            field="remitter",
        )
    problems: list[str] = []
    notes: list[str] = []
    code = str(given.get("code") or "").strip()
    if not code.isdigit() or len(code) > 10:
        problems.append(f"委託者コード {code or '空欄'!r} は 10 桁までの数字で書いてください")
    name = kana_name(given.get("name"), REMITTER_NAME_SIZE, "依頼人名", problems, notes)
    account = read_account(given, problems, notes)
    if problems or account is None:
        raise invalid(
            f"振込元（remitter）に誤りがあります: {'、'.join(problems)}",
            hint="銀行から届いた総合振込の契約内容（委託者コード・引落口座）を確かめてください",
            field="remitter",
        )
    return Remitter(code.zfill(10), name, day, account)


def _transfer_date(inputs: Mapping[str, Any]) -> dt.date | None:
    given = inputs.get("transfer_date")
    if given in (None, ""):
        return None
    day = date_value(given)
    if day is None:
        raise invalid(
            f"transfer_date {given!r} を日付として読めません",
            hint="2026-11-30 の形で書いてください",
            field="transfer_date",
        )
    return day


def _check_business_day(day: dt.date, ctx: BlockContext) -> None:
    calendar = BusinessCalendar.from_setting(ctx.settings.plans.closed_days)
    why = calendar.why_closed(day)
    if why is None:
        return
    before = calendar.previous_business_day(day)
    after = calendar.next_business_day(day)
    raise invalid(
        f"振込指定日 {day.isoformat()} は{why}で、銀行の営業日ではありません",
        hint=f"前営業日 {before.isoformat()} か翌営業日 {after.isoformat()} にしてください",
        field="transfer_date",
    )


def transfer_row(row: ScheduleRow) -> dict[str, Any]:
    """How a row of the table went into the file (or why not)."""
    transfer = row.transfer
    account = transfer.account if transfer else None
    return {
        "行": row.row,
        "支払先": row.payee,
        "受取人名": transfer.name if transfer else None,
        "銀行コード": account.bank_code if account else None,
        "銀行名": account.bank_name if account else None,
        "支店コード": account.branch_code if account else None,
        "支店名": account.branch_name if account else None,
        "預金種目": ACCOUNT_TYPES[account.account_type] if account else None,
        "口座番号": account.number if account else None,
        "支払金額": transfer.amount if transfer else None,
        "備考": "、".join(row.notes + row.problems),
    }


class ZenginTransferBlock(ProcessingBlock):
    """``accounting.zengin_transfer``: see the module docstring."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        given_day = _transfer_date(inputs)
        if given_day is not None:
            _check_business_day(given_day, ctx)
        try:
            records = records_of(inputs.get("payments"), SCHEDULE, SCHEDULE_ROLES)
            rows, day = read_schedule(
                records,
                given_day,
                column_overrides(inputs, "kana: 口座名義カナ"),
            )
        except UserInputError as error:
            raise invalid(error.message, hint=error.hint, **(error.details or {})) from None
        _check_business_day(day, ctx)
        remitter = _remitter(inputs, day)
        included = [row for row in rows if row.transfer is not None and not row.skipped]
        transfers = [row.transfer for row in included if row.transfer is not None]
        total = sum(t.amount for t in transfers)
        if len(transfers) > MAX_COUNT or total > MAX_TOTAL:
            raise invalid(
                f"1 つのファイルの件数（{len(transfers)}）か合計金額（{total:,} 円）が"
                "全銀形式の上限を超えています",
                hint="支払予定表を分けて、ファイルを 2 つ以上作ってください",
                field="payments",
            )
        data = write_transfer_file(remitter, transfers, line_breaks=inputs.get("line_breaks", True))
        if read_transfer_file(data, year=day.year).transfers != transfers:  # never ship a bad file
            raise RuntimeError("the 総合振込 file does not read back as written")
        skipped = [{**transfer_row(row), "理由": row.skipped} for row in rows if row.skipped]
        return {
            "file": {"name": f"総合振込_{day:%Y%m%d}.txt", "data": data},
            "transfers": [transfer_row(row) for row in included],
            "skipped": skipped,
            "summary": {
                "振込指定日": day.isoformat(),
                "件数": len(transfers),
                "合計金額": total,
                "振込依頼人": remitter.name,
                "対象外の行": len(skipped),
            },
        }
