"""DatasetRegistry: formats, encodings, conversions, errors, summaries, threads."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.datasets import DatasetRegistry, excel_sheet_names
from keiri_agent.agents.analysis.datasets import registry as registry_module
from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path
from keiri_agent.errors import DatasetError, UnknownDatasetError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAMPLE_SALES = sample_data_path()
SUMMARY_KEYS = {"dataset_id", "name", "rows", "columns", "memory_mb"}
COLUMN_KEYS = {"name", "dtype", "kind", "missing", "unique", "examples"}
JA_CSV = "地域,売上,日付\n関東,1200,2025-01-31\n近畿,800,2025-02-01\n九州,,2025-02-02\n"


@pytest.fixture
def registry() -> DatasetRegistry:
    return DatasetRegistry(max_bytes=10 * 2**20)


def _xlsx(sheets: dict[str, list[list[object]]]) -> bytes:
    workbook = Workbook()
    for sheet in list(workbook.worksheets):
        workbook.remove(sheet)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _column(registry: DatasetRegistry, dataset_id: str, name: str) -> dict[str, Any]:
    return next(c for c in registry.summary(dataset_id)["columns"] if c["name"] == name)


# --- encodings and formats ---------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp932", "shift_jis", "utf-16"])
def test_csv_encodings(registry: DatasetRegistry, encoding: str) -> None:
    dataset_id = registry.load_bytes(JA_CSV.encode(encoding), "売上.csv")
    frame = registry.get(dataset_id)
    assert list(frame.columns) == ["地域", "売上", "日付"]
    assert frame["地域"].tolist() == ["関東", "近畿", "九州"]
    assert frame["売上"].iloc[0] == 1200
    assert dataset_id.startswith("ds_") and len(dataset_id) == 11


def test_cp932_sample_file(registry: DatasetRegistry) -> None:
    dataset_id = registry.load_path(EXAMPLES / "sales_cp932.csv")
    frame = registry.get(dataset_id)
    assert "地域" in frame.columns and "売上" in frame.columns
    assert set(frame["地域"]) <= {"北海道", "東北", "関東", "中部", "近畿", "中国", "四国", "九州"}
    assert (frame["売上"] == frame["数量"] * frame["単価"]).all()
    assert len(frame) == 200


def test_bundled_sales_sample(registry: DatasetRegistry) -> None:
    dataset_id = registry.load_path(SAMPLE_SALES)
    summary = registry.summary(dataset_id)
    assert 2900 <= summary["rows"] <= 3100
    frame = registry.get(dataset_id)
    assert pd.api.types.is_datetime64_any_dtype(frame["日付"])
    assert frame["日付"].min() >= pd.Timestamp("2024-01-01")
    assert frame["日付"].max() <= pd.Timestamp("2025-12-31")
    assert frame["値引額"].isna().sum() > 0 and frame["担当者"].isna().sum() > 0
    assert frame.duplicated().sum() >= 3
    assert _column(registry, dataset_id, "地域")["kind"] == "categorical"
    english = registry.get(registry.load_path(EXAMPLES / "sales_en.csv"))
    assert list(english.columns)[:3] == ["order_id", "date", "region"]


def test_tsv_and_txt(registry: DatasetRegistry) -> None:
    data = "地域\t売上\n関東\t1,200\n近畿\t800\n".encode()
    for name in ("data.tsv", "data.txt"):
        frame = registry.get(registry.load_bytes(data, name))
        assert list(frame.columns) == ["地域", "売上"]
        assert frame["売上"].tolist() == [1200, 800]


def test_csv_with_tabs_is_sniffed(registry: DatasetRegistry) -> None:
    frame = registry.get(registry.load_bytes(b"a\tb\n1\t2\n3\t4\n", "tabs.csv"))
    assert list(frame.columns) == ["a", "b"]
    assert frame["b"].sum() == 6


def test_xlsx_sheets(registry: DatasetRegistry) -> None:
    data = _xlsx(
        {
            "売上": [["地域", "売上"], ["関東", 100], ["近畿", 200]],
            "経費": [["科目", "金額"], ["旅費", 5], ["通信費", 7], ["会議費", 9]],
        }
    )
    assert excel_sheet_names(data) == ["売上", "経費"]
    first = registry.get(registry.load_bytes(data, "book.xlsx"))
    assert list(first.columns) == ["地域", "売上"] and len(first) == 2
    by_name = registry.get(registry.load_bytes(data, "book.xlsx", sheet="経費"))
    by_index = registry.get(registry.load_bytes(data, "book.xlsm", sheet=1))
    assert list(by_name.columns) == ["科目", "金額"] and by_name["金額"].sum() == 21
    pd.testing.assert_frame_equal(by_name, by_index)
    with pytest.raises(DatasetError, match="経費") as info:
        registry.load_bytes(data, "book.xlsx", sheet="経費2")
    assert info.value.details["sheets"] == ["売上", "経費"]
    with pytest.raises(DatasetError, match="シート番号 5 はありません"):
        registry.load_bytes(data, "book.xlsx", sheet=5)


def test_xlsx_garbage(registry: DatasetRegistry) -> None:
    with pytest.raises(DatasetError, match=r"Excel ブック（\.xlsx）として読み込めません"):
        registry.load_bytes(b"PK\x03\x04 not really a zip", "broken.xlsx")


# --- conversions -------------------------------------------------------------------


def test_dates_are_converted(registry: DatasetRegistry) -> None:
    csv = (
        "iso,slash,ja,stamp,mixed,code\n"
        "2025-01-31,2025/01/31,2025年1月31日,2025/01/31 10:30,2025-01-31,A1\n"
        "2025-02-01,2025/2/1,2025年2月1日,2025/02/01 11:00,not a date,B2\n"
        ",,,,,\n"
        "2025-12-01,2025/12/01,2025年12月1日,2025/12/01 09:05,2025-12-01,C3\n"
    )
    dataset_id = registry.load_bytes(csv.encode(), "dates.csv")
    frame = registry.get(dataset_id)
    for column in ("iso", "slash", "ja", "stamp"):
        assert pd.api.types.is_datetime64_any_dtype(frame[column]), column
        assert frame[column].iloc[0].date().isoformat() == "2025-01-31"
    assert frame["stamp"].iloc[0] == pd.Timestamp("2025-01-31 10:30")
    assert not pd.api.types.is_datetime64_any_dtype(frame["mixed"])
    assert len(frame) == 3  # the all-empty row is dropped
    info = _column(registry, dataset_id, "slash")
    assert info["kind"] == "datetime"
    assert info["examples"][0] == "2025-01-31"


def test_thousands_separators_become_numbers(registry: DatasetRegistry) -> None:
    csv = (
        "金額,円,符号,コード,混在\n"
        '"1,234",¥500,△1,007,"1,000"\n'
        '"12,345,678","￥1,200",100,008,abc\n'
    )
    frame = registry.get(registry.load_bytes(csv.encode(), "numbers.csv"))
    assert frame["金額"].tolist() == [1234, 12345678]
    assert frame["円"].tolist() == [500, 1200]
    assert frame["符号"].tolist() == [-1, 100]
    assert pd.api.types.is_numeric_dtype(frame["金額"])
    assert frame["コード"].tolist() == [7, 8]  # pandas' own parse (plain digits)
    assert not pd.api.types.is_numeric_dtype(frame["混在"])


def test_text_codes_with_leading_zeros_stay_text(registry: DatasetRegistry) -> None:
    data = _xlsx({"s": [["code", "n"], ["007", 1], ["010", 2]]})
    frame = registry.get(registry.load_bytes(data, "codes.xlsx"))
    assert frame["code"].tolist() == ["007", "010"]


def test_column_names_stripped_and_unique(registry: DatasetRegistry) -> None:
    frame = registry.get(registry.load_bytes(b" a ,a,b , ,c\n1,2,3,4,5\n", "cols.csv"))
    assert list(frame.columns) == ["a", "a_2", "b", "column_4", "c"]
    frame = registry.get(registry.add_frame(pd.DataFrame([[1, 2]], columns=["x ", " x"]), "f"))
    assert list(frame.columns) == ["x", "x_2"]


# --- errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "name", "pattern"),
    [
        (b"", "empty.csv", "空のファイル"),
        (b"   \r\n\n", "blank.csv", "空のファイル"),
        ("地域,売上\n".encode(), "header.csv", "データの行がありません"),
        (b"a,b\n", "header.tsv", "データの行がありません"),
        (bytes(range(256)) * 40, "garbage.csv", "文字として読めません"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50, "image.csv", "文字として読めません"),
        (b"%PDF-1.7\n...", "doc.csv", "PDF"),
        (b"a,b\n1,2\n3,4,5,6\n", "ragged.csv", "区切りの表として読めません"),
        (b"a,b\n1,2\n", "data.json", r"形式（\.json）は読み込めません"),
        (b"a,b\n1,2\n", "data.xls", "読み込める形式: .csv, .tsv, .txt, .xlsx, .xlsm"),
        (b"a,b\n1,2\n", "noext", "拡張子なし"),
    ],
)
def test_load_errors(registry: DatasetRegistry, data: bytes, name: str, pattern: str) -> None:
    with pytest.raises(DatasetError, match=pattern) as info:
        registry.load_bytes(data, name)
    assert info.value.hint  # every error says how to fix it
    for text in (info.value.message, info.value.hint):  # in Japanese, for the user
        assert re.search(r"[ぁ-んァ-ヶ一-龥]", text), text
    assert registry.ids() == []


def test_xlsx_header_only_and_empty_sheet(registry: DatasetRegistry) -> None:
    data = _xlsx({"header": [["a", "b"]], "empty": []})
    with pytest.raises(DatasetError, match="データの行がありません"):
        registry.load_bytes(data, "book.xlsx")
    with pytest.raises(DatasetError, match="空です"):
        registry.load_bytes(data, "book.xlsx", sheet="empty")


def test_oversized(tmp_path: Path) -> None:
    small = DatasetRegistry(max_bytes=100)
    data = b"a,b\n" + b"1,2\n" * 50
    with pytest.raises(DatasetError, match="上限") as info:
        small.load_bytes(data, "big.csv")
    assert "KEIRI_AGENT_MAX_UPLOAD_MB" in (info.value.hint or "")
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    with pytest.raises(DatasetError, match="上限"):
        small.load_path(path)


def test_limit_comes_from_the_settings_passed_down(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_MAX_UPLOAD_MB", "7")  # the environment is not read here
    with AnalysisAgent(Settings(home=tmp_path, max_upload_mb=3)) as agent:
        assert agent.registry.max_bytes == 3 * 2**20
    with pytest.raises(TypeError):
        DatasetRegistry()  # type: ignore[call-arg]  # the surface decides the limit


def test_missing_path(registry: DatasetRegistry, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="読めません"):
        registry.load_path(tmp_path / "nope.csv")


def test_unknown_dataset_lists_ids(registry: DatasetRegistry) -> None:
    with pytest.raises(UnknownDatasetError, match="no datasets are loaded"):
        registry.get("ds_00000000")
    first = registry.load_bytes(b"a\n1\n", "a.csv")
    second = registry.load_bytes(b"b\n2\n", "b.csv")
    with pytest.raises(UnknownDatasetError) as info:
        registry.summary("ds_missing")
    assert first in str(info.value) and second in str(info.value)
    assert info.value.details["registered"] == [first, second]


def test_remove_and_ids(registry: DatasetRegistry) -> None:
    first = registry.load_bytes(b"a\n1\n", "a.csv")
    second = registry.load_bytes(b"a\n1\n", "a.csv")
    assert first != second and registry.ids() == [first, second] and len(registry) == 2
    assert registry.remove(first) is True
    assert registry.remove(first) is False
    assert registry.ids() == [second] and first not in registry
    with pytest.raises(UnknownDatasetError):
        registry.get(first)


# --- summary -----------------------------------------------------------------------


def test_summary_contract(registry: DatasetRegistry) -> None:
    rows = 200
    frame = pd.DataFrame(
        {
            "amount": range(rows),
            "when": pd.date_range("2025-01-01", periods=rows, freq="D"),
            "region": ["関東", "近畿"] * (rows // 2),
            "memo": [f"note {i}" for i in range(rows)],
            "flag": [True, False] * (rows // 2),
        }
    )
    frame.loc[3, "region"] = None
    dataset_id = registry.add_frame(frame, "frame")
    summary = registry.summary(dataset_id)
    assert set(summary) == SUMMARY_KEYS
    assert summary["dataset_id"] == dataset_id and summary["name"] == "frame"
    assert summary["rows"] == rows and isinstance(summary["memory_mb"], float)
    kinds = {c["name"]: c["kind"] for c in summary["columns"]}
    assert kinds == {
        "amount": "numeric",
        "when": "datetime",
        "region": "categorical",
        "memo": "text",
        "flag": "boolean",
    }
    for column in summary["columns"]:
        # "values" for columns with few distinct values; "notes" only when loading changed data
        assert COLUMN_KEYS <= set(column) <= COLUMN_KEYS | {"values", "notes"}
        assert ("values" in column) == (column["unique"] <= 50)
        assert isinstance(column["dtype"], str)
        assert 1 <= len(column["examples"]) <= 3
        assert all(isinstance(example, str) for example in column["examples"])
    region = _column(registry, dataset_id, "region")
    assert region["missing"] == 1 and region["unique"] == 2
    assert _column(registry, dataset_id, "when")["examples"][0] == "2025-01-01"


def test_summary_is_cached_and_a_copy(
    registry: DatasetRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id = registry.load_bytes(JA_CSV.encode(), "s.csv")

    def no_more_summaries(*args: object) -> None:
        raise AssertionError("summary recomputed")

    monkeypatch.setattr(registry_module, "summarize", no_more_summaries)
    summary = registry.summary(dataset_id)
    summary["columns"].clear()
    assert registry.summary(dataset_id)["columns"]


def test_get_does_not_expose_the_stored_frame(registry: DatasetRegistry) -> None:
    dataset_id = registry.load_bytes(JA_CSV.encode(), "s.csv")
    frame = registry.get(dataset_id)
    frame["売上"] = 0
    del frame["地域"]
    fresh = registry.get(dataset_id)
    assert "地域" in fresh.columns and fresh["売上"].iloc[0] == 1200


def test_add_frame_rejects_empty(registry: DatasetRegistry) -> None:
    with pytest.raises(DatasetError, match="no rows"):
        registry.add_frame(pd.DataFrame({"a": []}), "empty")


# --- threads -----------------------------------------------------------------------


def test_concurrent_loads(registry: DatasetRegistry) -> None:
    errors: list[BaseException] = []
    ids: list[str] = []
    lock = threading.Lock()
    payload = (EXAMPLES / "sales_en.csv").read_bytes()

    def load(index: int) -> None:
        try:
            dataset_id = registry.load_bytes(payload, f"sales_{index}.csv")
            assert registry.summary(dataset_id)["rows"] == 500
            with lock:
                ids.append(dataset_id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(ids)) == len(threads) == len(registry.ids())
