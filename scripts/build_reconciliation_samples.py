"""Build the sample data of the Plan 請求書と入金の照合 (invoice_payment_matching).

Usage::

    uv run python scripts/build_reconciliation_samples.py

Writes ``src/keiri_agent/samples/reconciliation/請求一覧.csv`` (CP932 with CRLF, as a
Japanese accounting package exports it) and ``入金明細.xlsx`` (a bank statement sheet with
a title row above the header). All names are fictional. The cases the Plan must handle:

- INV-2025-041 / -046: two invoices to the same customer, each paid exactly (one-to-one);
- INV-2025-042: paid with the transfer fee (440 円) deducted, within the tolerance;
- INV-2025-043: a partial payment (a difference);
- INV-2025-044: paid in full, the bank name written in half-width kana with spaces;
- INV-2025-045: not paid yet (unmatched invoice);
- a transfer from an unknown payer (unmatched payment).

Both files are reproducible: the CSV is plain text and the workbook has fixed document
properties and zip timestamps.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import zipfile
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "keiri_agent" / "samples" / "reconciliation"
FIXED = dt.datetime(2025, 6, 2, 9, 0, 0)
STAMP = FIXED.strftime("%Y-%m-%dT%H:%M:%SZ")

INVOICE_HEADER = ["請求番号", "取引先", "振込名義カナ", "請求日", "支払期日", "請求額"]
INVOICES = [
    ["INV-2025-041", "株式会社あおば", "カ)アオバ", "2025/04/30", "2025/05/31", "110,000"],
    [
        "INV-2025-042",
        "みなと印刷株式会社",
        "ミナトインサツ(カ",
        "2025/04/30",
        "2025/05/31",
        "33,000",
    ],
    [
        "INV-2025-043",
        "北斗物産株式会社",
        "ホクトブツサン(カ",
        "2025/04/30",
        "2025/05/31",
        "550,000",
    ],
    [
        "INV-2025-044",
        "有限会社さくら設計",
        "ユ)サクラセツケイ",
        "2025/05/10",
        "2025/06/10",
        "88,000",
    ],
    [
        "INV-2025-045",
        "株式会社ミドリ商会",
        "カ)ミドリシヨウカイ",
        "2025/05/15",
        "2025/06/15",
        "27,500",
    ],
    ["INV-2025-046", "株式会社あおば", "カ)アオバ", "2025/05/31", "2025/06/30", "22,000"],
]
PAYMENT_HEADER = ["入金日", "振込依頼人", "入金額", "摘要"]
PAYMENTS = [
    [dt.date(2025, 5, 30), "ｶ)ｱｵﾊﾞ", 110000, "振込"],
    [dt.date(2025, 6, 2), "ﾐﾅﾄｲﾝｻﾂ(ｶ", 32560, "振込"],
    [dt.date(2025, 6, 2), "ﾎｸﾄﾌﾞﾂｻﾝ(ｶ", 300000, "振込"],
    [dt.date(2025, 6, 9), " ﾕ)ｻｸﾗｾﾂｹｲ ", 88000, "振込"],
    [dt.date(2025, 6, 5), "ﾔﾏﾀﾞ ﾀﾛｳ", 15000, "振込"],
    [dt.date(2025, 6, 27), "ｶ)ｱｵﾊﾞ", 22000, "振込"],
]


def invoice_csv() -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(INVOICE_HEADER)
    writer.writerows(INVOICES)
    return buffer.getvalue().encode("cp932")


def payments_workbook() -> bytes:
    wb = Workbook()
    ws = wb.active
    ws.title = "入金明細"
    ws.append(["入金明細（2025年5月〜6月） 普通預金 1234567"])
    ws.append(PAYMENT_HEADER)
    for cell in ws[2]:
        cell.font = Font(bold=True)
    for row in PAYMENTS:
        ws.append(row)
    for cell in ws["A"][2:]:
        cell.number_format = "yyyy/mm/dd"
    wb.properties.created = FIXED
    wb.properties.modified = FIXED
    raw = io.BytesIO()
    wb.save(raw)
    return _fixed_zip(raw.getvalue())


def _fixed_zip(data: bytes) -> bytes:
    """The same package dated FIXED throughout (openpyxl stamps the current time)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            entry = zipfile.ZipInfo(info.filename, date_time=FIXED.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":  # openpyxl stamps "modified" on save
                content = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>" + STAMP.encode(), content
                )
            target.writestr(entry, content)
    return out.getvalue()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "請求一覧.csv").write_bytes(invoice_csv())
    (OUT / "入金明細.xlsx").write_bytes(payments_workbook())
    print(f"wrote {OUT / '請求一覧.csv'} and {OUT / '入金明細.xlsx'}")


if __name__ == "__main__":
    main()
