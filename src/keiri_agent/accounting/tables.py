"""Tables the accounting blocks read: a CSV or Excel file, or records already read.

``read_table(data, table)`` reads a file's first sheet or its CSV text (UTF-8 with or
without BOM, or CP932) into records, with the header found below any title rows (a
bank's download starts with the account number and the period) by the project's one
header detector (``files.header``). ``records_of(value, table)`` accepts either such a
file or a list of records (what ``table.read`` / ``csv.read`` give), so a Plan can
feed the accounting blocks with files or with tables it prepared.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from keiri_agent.accounting.columns import Role, header_row
from keiri_agent.errors import UserInputError
from keiri_agent.files.bounds import InputBoundsError, check_csv_text
from keiri_agent.files.header import detect_header_row, is_filled, unique_names
from keiri_agent.limits import current_input_limits
from keiri_agent.textcodec import TextDecodeError, decode_text

ZIP_MAGIC = b"PK\x03\x04"


def file_bytes(value: Any) -> bytes | None:
    """The bytes of a file input (bytes, or an upload ``{name, data}``), else None."""
    if isinstance(value, Mapping) and "data" in value:
        value = value["data"]
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value if isinstance(value, bytes) else None


def records_of(value: Any, table: str, roles: Sequence[Role] = ()) -> list[dict[str, Any]]:
    """``value`` as records: a CSV/Excel file is read, a list of records is checked.

    Raises:
        UserInputError: neither a file nor a list of records, or an unreadable file.
    """
    data = file_bytes(value)
    if data is not None:
        return read_table(data, table, roles)
    if isinstance(value, list) and all(isinstance(row, Mapping) for row in value):
        return [dict(row) for row in value]
    raise UserInputError(
        f"{table}には CSV・Excel ファイルか、表（レコードのリスト）を渡してください",
        hint="ファイル入力の回答か、table.read で読んだ表をつないでください",
        details={"table": table},
    )


def read_table(data: bytes, table: str, roles: Sequence[Role] = ()) -> list[dict[str, Any]]:
    """A CSV or Excel file as records. The header is the row whose cells name the most
    of ``roles`` (``columns.header_row``: below any lines a download starts with — the
    account, the period, the holder), else the row ``files.header`` detects."""
    rows = table_rows(data, table)
    header = header_row(rows, roles) if roles else None
    if header is None:
        header = detect_header_row(rows)
    if header is None:
        raise UserInputError(
            f"{table}の見出し行（列名の行）が見つかりません",
            hint="1 行目（タイトル行があればその下）に列名を書いた CSV か Excel にしてください",
            details={"table": table},
        )
    names = unique_names(rows[header])
    records = []
    for row in rows[header + 1 :]:
        if not any(is_filled(cell) for cell in row):
            continue
        records.append({name: row[i] if i < len(row) else None for i, name in enumerate(names)})
    return records


def table_rows(data: bytes, table: str) -> list[list[Any]]:
    """The rows of a CSV (text cells) or of an Excel file's first sheet (typed cells),
    every row from the first, blank cells as None."""
    if data.startswith(ZIP_MAGIC):
        from keiri_agent.files.excel import read_sheet

        sheet = read_sheet(data, header=None)
        return [[None if cell == "" else cell for cell in row.values()] for row in sheet.records]
    return csv_rows(data, table)


def decoded(data: bytes, table: str) -> str:
    """``data`` as text (UTF-8, UTF-8 with BOM or CP932)."""
    try:
        return decode_text(data).text
    except TextDecodeError as error:
        if error.reason == "binary":
            raise UserInputError(
                f"{table}のファイルが CSV（テキスト）でも Excel のブックでもありません",
                hint="銀行や会計ソフトから CSV か Excel（.xlsx）で出力し直してください",
                details={"table": table},
            ) from None
        raise UserInputError(
            f"{table}の文字コードを判別できません（UTF-8 でも Shift_JIS でもありません）",
            hint="Excel で「CSV UTF-8」として保存し直してください",
            details={"table": table},
        ) from None


def csv_rows(data: bytes, table: str) -> list[list[str | None]]:
    """The CSV's rows as text cells (empty cells as None), within the input limits."""
    text = decoded(data, table)
    limits = current_input_limits()
    try:
        check_csv_text(text, ",", limits, lines=20)
    except InputBoundsError as error:
        raise UserInputError(error.message, hint=error.hint, details={"table": table}) from None
    rows: list[list[str | None]] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            if len(rows) >= limits.max_rows:
                raise UserInputError(
                    f"{table}が大きすぎます（{limits.max_rows:,} 行まで）",
                    hint="期間を分けて出力してください",
                    details={"table": table},
                )
            rows.append([cell.strip() or None for cell in row])
    except csv.Error as error:
        raise UserInputError(
            f"{table}の CSV の {reader.line_num} 行目を読めません（{error}）",
            hint="Excel で開いて CSV として保存し直してください",
            details={"table": table, "line": reader.line_num},
        ) from None
    return rows
