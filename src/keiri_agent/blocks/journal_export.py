"""``accounting.export_journal``: 仕訳 rows as an accounting package's import file.

Reads the 仕訳帳 (records, or a CSV / Excel file; columns found by their headers, as
``accounting.match_payments`` writes its 仕訳案) and the optional 税区分表, and returns
the file for 弥生会計, freee会計, マネーフォワード クラウド会計 or a plain 仕訳帳 CSV as
bytes, the way ``csv.write`` returns its CSV. The layouts, their sources and the rules
(balanced slips, whole-yen amounts, no guessed 税区分) are in
:mod:`keiri_agent.accounting.journal_export`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.accounting.journal_export import (
    ENCODING_LABELS,
    FORMATS,
    JOURNAL,
    JOURNAL_ROLES,
    TAX_ROLES,
    TAX_TABLE,
    ExportFormat,
    default_tax_table,
    export_journal,
    merged_tax_table,
    read_journal,
    read_tax_table,
)
from keiri_agent.accounting.tables import records_of
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import column_overrides, invalid, unknown_choice_text
from keiri_agent.errors import BlockError, UserInputError


def _format(inputs: Mapping[str, Any]) -> ExportFormat:
    value = inputs.get("format")
    if not isinstance(value, str) or value not in FORMATS:
        names = "、".join(f"{f.id}（{f.name}）" for f in FORMATS.values())
        raise invalid(
            unknown_choice_text("形式", str(value), FORMATS),
            hint=f"format には {names} のどれかを書いてください",
            field="format",
        )
    return FORMATS[value]


def _encoding(inputs: Mapping[str, Any]) -> str | None:
    value = inputs.get("encoding")
    if value is None:
        return None
    if value not in ENCODING_LABELS:
        raise invalid(
            f"encoding に {value!r} は指定できません（{' / '.join(ENCODING_LABELS)} のどれか）",
            hint="省略すると形式ごとの文字コード（弥生・freee・マネーフォワードは cp932、"
            "仕訳帳は utf-8-sig）になります",
            field="encoding",
        )
    return str(value)


def _invalid(error: UserInputError, field: str) -> BlockError:
    details = {"field": field, **(error.details or {})}
    return invalid(error.message, hint=error.hint, **details)


class ExportJournalBlock(ProcessingBlock):
    """``accounting.export_journal``: see the module docstring."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        fmt = _format(inputs)
        encoding = _encoding(inputs)
        columns = column_overrides(inputs, "debit_amount: 借方金額(円)")
        try:
            records = records_of(inputs.get("journal"), JOURNAL, JOURNAL_ROLES)
            slips = read_journal(records, columns)
        except UserInputError as error:
            raise _invalid(error, "journal") from None
        table = default_tax_table()
        given = inputs.get("tax_categories")
        if given is not None:
            try:
                extra = read_tax_table(records_of(given, TAX_TABLE, TAX_ROLES))
            except UserInputError as error:
                raise _invalid(error, "tax_categories") from None
            table = merged_tax_table(table, extra)
        ctx.check_cancelled()
        try:
            export = export_journal(slips, fmt, table, encoding)
        except UserInputError as error:
            raise _invalid(error, "journal") from None
        return {
            "csv": export.data,
            "summary": {
                "format": fmt.id,
                "format_name": fmt.name,
                "filename": fmt.filename,
                "encoding": export.encoding,
                "header": fmt.header,
                "slips": export.slips,
                "rows": export.rows,
            },
        }
