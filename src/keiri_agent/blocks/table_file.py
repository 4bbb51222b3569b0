"""``table.read``: a table file that may be CSV or Excel, decided by its content.

A generated Plan whose instruction did not say which format a table comes in asks
for "a CSV or Excel file"; this block reads either: an XLSX/XLSM (a ZIP container,
``PK\\x03\\x04``) through ``excel.read_data``, anything else through ``csv.read``, with
the same column typing (``types`` / ``infer_types``) either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks import csv_files, excel
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.files import bytes_input

ZIP_MAGIC = b"PK\x03\x04"
SHARED = ("types", "infer_types")
CSV_ONLY = ("encoding", "delimiter", "skip_rows")
EXCEL_ONLY = ("sheet",)


class ReadBlock(ProcessingBlock):
    """``table.read``: CSV or Excel records, by the file's first bytes."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        data = bytes_input(inputs, "file")
        if data.startswith(ZIP_MAGIC):
            given = {k: inputs[k] for k in (*SHARED, *EXCEL_ONLY) if k in inputs}
            result = excel.ReadDataBlock().run({**given, "workbook": data}, ctx)
            return {"records": result["records"], "columns": result["columns"], "format": "excel"}
        given = {k: inputs[k] for k in (*SHARED, *CSV_ONLY) if k in inputs}
        result = csv_files.ReadBlock().run({**given, "file": data}, ctx)
        return {"records": result["records"], "columns": result["columns"], "format": "csv"}
