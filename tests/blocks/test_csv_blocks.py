"""csv.read / csv.write against pandas and hand-written bytes; hostile files."""

from __future__ import annotations

import codecs
import io

import pandas as pd
import pytest
from block_harness import failure, make_context, run

ROWS = [
    ["取引先", "請求額", "備考"],
    ["株式会社あおば", "110,000", "=SUM(A1:A3)"],
    ["ミナト印刷㈱", "33,000", ""],
    ["髙橋商店", "△500", "改行\nを含む"],
]


def csv_bytes(rows: list[list[str]], encoding: str, delimiter: str = ",") -> bytes:
    buffer = io.StringIO(newline="")
    import csv

    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode(encoding)


@pytest.mark.parametrize(
    ("encoding", "expected_encoding", "bom"),
    [("cp932", "cp932", False), ("utf-8", "utf-8", False), ("utf-8-sig", "utf-8", True)],
)
def test_read_matches_pandas_in_each_office_encoding(
    encoding: str, expected_encoding: str, bom: bool
) -> None:
    data = csv_bytes(ROWS, encoding)
    out = run("csv.read", make_context(), file=data, infer_types=False)
    frame = pd.read_csv(
        io.BytesIO(data), encoding="cp932" if encoding == "cp932" else "utf-8-sig", dtype=str
    )
    expected = [
        {k: (None if pd.isna(v) else v) for k, v in row.items()} for row in frame.to_dict("records")
    ]
    assert out["records"] == expected
    assert out["columns"] == ROWS[0]
    assert out["summary"] == {"rows": 3, "encoding": expected_encoding, "bom": bom}
    assert out["records"][0]["備考"] == "=SUM(A1:A3)"  # formula text stays text
    typed = run("csv.read", make_context(), file=data)["records"]
    assert [row["請求額"] for row in typed] == [110000, 33000, -500]
    assert [row["備考"] for row in typed] == [row["備考"] for row in expected]


def test_uploaded_file_mapping_named_encoding_and_options() -> None:
    data = "表題：請求一覧\r\nA社;100\r\nB社;200\r\n\r\n".encode("cp932")
    out = run(
        "csv.read",
        make_context(),
        file={"name": "a.csv", "data": data},
        encoding="cp932",
        header=False,
        columns=["取引先", "金額"],
        delimiter=";",
        skip_rows=1,
    )
    assert out["records"] == [{"取引先": "A社", "金額": 100}, {"取引先": "B社", "金額": 200}]
    assert out["summary"] == {"rows": 2, "encoding": "cp932", "bom": False}
    out = run("csv.read", make_context(), file=b"a\tb\r\n1\t2\r\n", delimiter="\t")
    assert out["records"] == [{"a": 1, "b": 2}]


def test_header_names_short_rows_and_trailing_commas() -> None:
    data = "取引先,,取引先,金額\r\nA社,x,y,100,,\r\nB社\r\n".encode()
    out = run("csv.read", make_context(), file=data)
    assert out["columns"] == ["取引先", "列2", "取引先_2", "金額"]
    assert out["records"] == [
        {"取引先": "A社", "列2": "x", "取引先_2": "y", "金額": 100},
        {"取引先": "B社", "列2": None, "取引先_2": None, "金額": None},
    ]
    error = failure("csv.read", make_context(), file=b"a,b\r\n1,2,3\r\n")
    assert "1 行目" in error.message and error.hint


def test_bad_encodings_and_binary_files_are_refused_in_japanese() -> None:
    error = failure("csv.read", make_context(), file=b"\x81\x00\x00binary")
    assert "CSV（テキスト）ではありません" in error.message
    error = failure("csv.read", make_context(), file=b"ok\r\n\x82\xff\x82\xff\r\n")
    assert "文字コード" in error.message
    error = failure("csv.read", make_context(), file="取引先\r\n".encode("cp932"), encoding="utf-8")
    assert "UTF-8 として読めません" in error.message and "1 行目" in error.message
    error = failure("csv.read", make_context(), file="名前", encoding="utf-8")
    assert "ファイルの中身" in error.message


def test_huge_cells_and_wide_lines_are_refused_not_crashes() -> None:
    huge = b"a,b\r\n1," + b"x" * 200_000 + b"\r\n"
    error = failure("csv.read", make_context(), file=huge)
    assert "2 行目" in error.message and "131,072" in (error.hint or "")
    wide = b"," * 5000 + b"\r\n"
    error = failure("csv.read", make_context(), file=wide)
    assert "列" in error.message


def test_write_round_trips_through_pandas_in_each_encoding() -> None:
    records = [
        {"取引先": "株式会社あおば", "金額": 110000, "入金済": True, "備考": "=1+1"},
        {"取引先": "髙橋商店", "金額": -500.5, "入金済": False, "備考": None},
    ]
    for encoding in ("utf-8-sig", "utf-8", "cp932"):
        out = run("csv.write", make_context(), records=records, encoding=encoding)
        data = out["csv"]
        assert data.startswith(codecs.BOM_UTF8) is (encoding == "utf-8-sig")
        frame = pd.read_csv(io.BytesIO(data), encoding=encoding, keep_default_na=False, dtype=str)
        assert frame.to_dict("records") == [
            {"取引先": "株式会社あおば", "金額": "110000", "入金済": "TRUE", "備考": "=1+1"},
            {"取引先": "髙橋商店", "金額": "-500.5", "入金済": "FALSE", "備考": ""},
        ]
        assert out["summary"] == {"rows": 2, "encoding": encoding}
    out = run(
        "csv.write",
        make_context(),
        records=records,
        columns=["金額", "取引先"],
        header=False,
        delimiter="\t",
        encoding="utf-8",
    )
    assert out["csv"] == "110000\t株式会社あおば\r\n-500.5\t髙橋商店\r\n".encode()


def test_write_then_read_gives_the_text_back() -> None:
    records = [{"a": '改行\nと"引用符"', "b": "1,234"}]
    written = run("csv.write", make_context(), records=records)["csv"]
    assert run("csv.read", make_context(), file=written, infer_types=False)["records"] == records
    assert run("csv.read", make_context(), file=written)["records"] == [{**records[0], "b": 1234}]


def test_cp932_unencodable_character_names_row_and_column() -> None:
    records = [{"取引先": "A社", "備考": "ok"}, {"取引先": "B社", "備考": "納品済み😀"}]
    error = failure("csv.write", make_context(), records=records, encoding="cp932")
    assert "2 行目" in error.message and "'備考'" in error.message and "😀" in error.message
    assert error.details["row"] == 2 and error.details["column"] == "備考"
    error = failure("csv.write", make_context(), records=records, columns=["不明"])
    assert "不明" in error.message
