"""``csv.read`` and ``csv.write``: CSV files as Japanese offices save them.

``csv.read`` decodes with :mod:`keiri_agent.textcodec` (``auto``: a BOM decides, then
UTF-8, then CP932) or a named encoding (strict: no replacement characters). Each column
is typed as :mod:`keiri_agent.files.column_types` says (``"1,234"`` becomes 1234,
``2025/4/1`` becomes ``"2025-04-01"``, a code such as ``00123`` and any other text stays
exactly as written, ``=SUM(A1)`` included; ``types`` / ``infer_types`` change that); an
empty cell is null. Blank lines are skipped.
With ``header`` the first row (after ``skip_rows``) names the columns: an empty name
becomes ``列<n>`` and a repeated one gets ``_2``, ``_3``. A row shorter than the header
is padded with null; a longer one is an error unless the extra cells are empty (Excel's
trailing commas). Rows, columns and cells are bounded by the ``input_max_*`` settings;
one cell may hold at most 131,072 characters (Python's csv limit).

``csv.write`` writes records with ``\\r\\n`` line ends (as Excel does), null as an empty
cell, booleans as ``TRUE``/``FALSE``, lists and objects as JSON; cell text is written
unchanged. A character the chosen encoding cannot hold (``cp932`` has no emoji and few
rare kanji) is an error naming the row and column, never a silent ``?``.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import io
import json
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.files import bytes_input, from_user_error
from keiri_agent.blocks.records import (
    check_columns,
    columns_of,
    invalid,
    records_input,
    string_list,
    type_read_columns,
)
from keiri_agent.files.bounds import InputBoundsError, check_csv_text
from keiri_agent.files.header import unique_names
from keiri_agent.limits import current_input_limits
from keiri_agent.textcodec import TextDecodeError, decode_text

READ_ENCODINGS = ("auto", "utf-8", "cp932")
WRITE_ENCODINGS = ("utf-8-sig", "utf-8", "cp932")
_ENCODING_LABELS = {
    "utf-8-sig": "UTF-8（BOM 付き）",
    "utf-8": "UTF-8",
    "cp932": "CP932（Shift_JIS）",
}


def _choice(inputs: Mapping[str, Any], name: str, choices: tuple[str, ...], default: str) -> str:
    value = inputs.get(name)
    if value is None:
        return default
    if value not in choices:
        raise invalid(
            f"{name} に {value!r} は指定できません（{' / '.join(choices)} のどれか）",
            hint=f"{name}: {default} のように指定してください",
            field=name,
        )
    return str(value)


def _delimiter(inputs: Mapping[str, Any]) -> str:
    value = inputs.get("delimiter")
    if value is None:
        return ","
    if value == "\\t":
        return "\t"
    if not isinstance(value, str) or len(value) != 1 or value in '"\r\n':
        raise invalid(
            f"delimiter は 1 文字の区切り文字です（{value!r} は使えません）",
            hint='カンマなら ","、タブなら "\\t" を指定してください',
            field="delimiter",
        )
    return value


def _flag(inputs: Mapping[str, Any], name: str, default: bool) -> bool:
    value = inputs.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid(f"{name} は true か false で指定してください", field=name)
    return value


# --- csv.read --------------------------------------------------------------------------


def _decode(data: bytes, encoding: str) -> tuple[str, str, bool]:
    """(text, encoding used, had a BOM)."""
    bom = data.startswith(codecs.BOM_UTF8)
    if encoding == "auto":
        try:
            decoded = decode_text(data)
        except TextDecodeError as error:
            if error.reason == "binary":
                raise invalid(
                    "ファイルが CSV（テキスト）ではありません",
                    hint="Excel のブックなら excel.read_data を使うか、"
                    "Excel で「CSV」として保存し直してください",
                    field="file",
                ) from None
            raise invalid(
                "CSV の文字コードを判別できません（UTF-8 でも CP932（Shift_JIS）でもありません）",
                hint="Excel で「CSV UTF-8」として保存し直すか、encoding を指定してください",
                field="file",
            ) from None
        used = decoded.encoding
        bom = used in {"utf-8-sig", "utf-16"}
        return decoded.text, "utf-8" if used == "utf-8-sig" else used, bom
    codec = "utf-8-sig" if encoding == "utf-8" else encoding
    try:
        return data.decode(codec), encoding, bom and encoding == "utf-8"
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise invalid(
            f"CSV を {_ENCODING_LABELS[encoding]} として読めません（{line} 行目）",
            hint="encoding: auto にするか、正しい文字コードを指定してください",
            field="encoding",
            line=line,
        ) from None


def _rows(text: str, delimiter: str, skip_rows: int) -> list[list[str | None]]:
    limits = current_input_limits()
    try:
        check_csv_text(text, delimiter, limits, lines=skip_rows + 1)
    except InputBoundsError as error:
        raise from_user_error(error, "file") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows: list[list[str | None]] = []
    cells = 0
    try:
        for index, row in enumerate(reader):
            if index < skip_rows or not any(cell.strip() for cell in row):
                continue
            if len(row) > limits.max_columns:
                raise invalid(
                    f"{reader.line_num} 行目に {len(row):,} 列あり、列数の上限"
                    f"（{limits.max_columns:,} 列）を超えます",
                    hint="区切り文字が正しいか確認してください。上限は設定 "
                    "KEIRI_AGENT_INPUT_MAX_COLUMNS で変えられます",
                    field="file",
                )
            cells += len(row)
            if len(rows) >= limits.max_rows or cells > limits.max_cells:
                raise invalid(
                    f"CSV が大きすぎます（{limits.max_rows:,} 行・{limits.max_cells:,} セルまで）",
                    hint="必要な行だけを別の CSV に分けてください。上限は設定 "
                    "KEIRI_AGENT_INPUT_MAX_ROWS / KEIRI_AGENT_INPUT_MAX_CELLS で変えられます",
                    field="file",
                )
            rows.append([cell if cell != "" else None for cell in row])
    except csv.Error as error:
        raise invalid(
            f"CSV の {reader.line_num} 行目を読めません（{error}）",
            hint='1 つのセルは 131,072 文字まで、引用符 " は閉じてください。'
            "Excel で開いて保存し直すと直ることがあります",
            field="file",
            line=reader.line_num,
        ) from None
    return rows


class ReadBlock(ProcessingBlock):
    """``csv.read``: a CSV file as records, typed per column."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        data = bytes_input(inputs, "file")
        encoding = _choice(inputs, "encoding", READ_ENCODINGS, "auto")
        header = _flag(inputs, "header", True)
        delimiter = _delimiter(inputs)
        skip_rows = inputs.get("skip_rows") or 0
        if isinstance(skip_rows, bool) or not isinstance(skip_rows, int) or skip_rows < 0:
            raise invalid("skip_rows は 0 以上の整数です", field="skip_rows")
        given = inputs.get("columns")
        names = string_list(inputs, "columns", []) if given is not None else None
        text, used, bom = _decode(data, encoding)
        ctx.check_cancelled()
        rows = _rows(text, delimiter, skip_rows)
        if header:
            columns = unique_names(rows.pop(0)) if rows else list(names or [])
            if names is not None and rows:
                raise invalid(
                    "header: true のときは columns を指定しません（1 行目が列名になります）",
                    hint="列名を自分で付けるなら header: false にしてください",
                    field="columns",
                )
        else:
            width = max((len(row) for row in rows), default=0)
            columns = list(names) if names else [f"列{n}" for n in range(1, width + 1)]
            if len(set(columns)) != len(columns):
                raise invalid("columns に同じ列名が 2 回あります", field="columns")
        records = []
        for number, row in enumerate(rows, start=1):
            extra = row[len(columns) :]
            if any(cell is not None for cell in extra):
                raise invalid(
                    f"データの {number} 行目に列名より多い {len(row)} 個の値があります"
                    f"（列は {len(columns)} 個）",
                    hint="区切り文字や引用符が正しいか確認するか、header: false で読んでください",
                    field="file",
                    row=number,
                )
            records.append({c: row[i] if i < len(row) else None for i, c in enumerate(columns)})
        ctx.check_cancelled()
        type_read_columns(records, columns, inputs)
        return {
            "records": records,
            "columns": columns,
            "summary": {"rows": len(records), "encoding": used, "bom": bom},
        }


# --- csv.write -------------------------------------------------------------------------


def _cell_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return value
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


class WriteBlock(ProcessingBlock):
    """``csv.write``: records as CSV bytes."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        encoding = _choice(inputs, "encoding", WRITE_ENCODINGS, "utf-8-sig")
        header = _flag(inputs, "header", True)
        delimiter = _delimiter(inputs)
        if inputs.get("columns") is not None:
            columns = string_list(inputs, "columns", [])
            if len(set(columns)) != len(columns):
                raise invalid("columns に同じ列名が 2 回あります", field="columns")
            check_columns(columns, records, "columns")
        else:
            columns = columns_of(records)
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
        rows = [columns] if header else []
        for number, record in enumerate(records, start=1):
            if number % 10_000 == 0:
                ctx.check_cancelled()
            rows.append([_cell_text(record.get(column)) for column in columns])
        codec = "utf-8" if encoding == "utf-8-sig" else encoding
        for index, row in enumerate(rows):
            for column, cell in zip(columns, row, strict=True):
                try:
                    cell.encode(codec)
                except UnicodeEncodeError as error:
                    row_number = index + (0 if header else 1)
                    where = "見出し" if header and index == 0 else f"{row_number} 行目"
                    raise invalid(
                        f"{where}の列 {column!r} の文字 {cell[error.start : error.end]!r} は "
                        f"{_ENCODING_LABELS[encoding]} で書けません",
                        hint="encoding: utf-8-sig（Excel で開ける UTF-8）にするか、"
                        "その文字を置き換えてください",
                        field="records",
                        row=row_number,
                        column=column,
                    ) from None
            writer.writerow(row)
        data = buffer.getvalue().encode(encoding)
        return {"csv": data, "summary": {"rows": len(records), "encoding": encoding}}
