"""Build the 経費精算チェック sample workbook (``samples/expenses/経費明細.xlsx``).

Usage::

    uv run python scripts/build_expense_samples.py

The rows are written the way offices type them: dates in 和暦 and 西暦 (one a real
date cell, one a day that does not exist), amounts as text (``¥2,300-``, full-width
``１２，０００円``, ``△500``) and numbers, registration numbers with full-width digits
and hyphens, and some that are wrong (check digit, 12 digits, no ``T``, blank). With
the limit 30,000 円, two rows are over it. The expectations are spelled out in
``tests/plans/test_sample_expense_check.py``.

The file is reproducible: fixed document properties and zip timestamps.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "src" / "keiri_agent" / "samples" / "expenses" / "経費明細.xlsx"
FIXED = dt.datetime(2023, 5, 1, 9, 0, 0)
STAMP = FIXED.strftime("%Y-%m-%dT%H:%M:%SZ").encode()

HEADER = ["日付", "申請者", "摘要", "取引先", "登録番号", "金額"]
ROWS: list[list[Any]] = [
    ["R5.4.3", "佐藤", "タクシー代", "ﾆｯﾎﾟﾝ交通", "T2011001012345", "¥2,300-"],
    ["令和5年4月10日", "鈴木", "会議用弁当", "山田弁当", "T8010401056789", "１２，０００円"],
    ["2023/4/12", "高橋", "出張宿泊費", "ホテル東京", "T9120001077778", 45000],
    [
        "2023年4月15日",
        "佐藤",
        "文房具",
        "文具のＡＢＣ",
        "ｔ２１８０－００１０－２４６８０",
        "3,980円",
    ],
    ["2023-04-20", "田中", "取引先接待", "料亭さくら", "T901110109876", "¥38,500"],
    [dt.datetime(2023, 4, 25), "鈴木", "文房具の返品", "文具のＡＢＣ", "T2180001024680", "△500"],
    ["令和5年2月30日", "高橋", "書籍代", "駅前書店", "9011101098765", "2,750"],
    ["R5.4.28", "田中", "新幹線", "JR東海", "T9011101098765", "28,000"],
    ["R5.4.30", "佐藤", "備品", "家電の店", None, 30000],
]


def build() -> bytes:
    """The workbook's bytes (the same on every run)."""
    wb = Workbook()
    ws = wb.active
    ws.title = "経費明細"
    ws.append(HEADER)
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for row in ROWS:
        ws.append(row)
    ws.cell(row=7, column=1).number_format = "yyyy/m/d"
    wb.properties.creator = "keiri-agent"
    wb.properties.created = FIXED
    wb.properties.modified = FIXED
    buffer = io.BytesIO()
    wb.save(buffer)
    return _fixed_timestamps(buffer.getvalue())


def _fixed_timestamps(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":  # openpyxl stamps "modified" on save
                content = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>" + STAMP, content)
            target.writestr(fixed, content)
    return out.getvalue()


def main() -> None:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(build())
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
