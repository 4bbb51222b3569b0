"""DatasetRegistry on files as Japanese offices export them.

Full-width and accounting-style numbers, blank-looking cells, title rows above the
header, and the ``values`` list the offline reasoner matches category words against.
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook

from keiri_agent.agents.analysis.datasets import CATEGORICAL_MAX_UNIQUE, DatasetRegistry


@pytest.fixture
def registry() -> DatasetRegistry:
    return DatasetRegistry(max_bytes=10 * 2**20)


def _load(
    registry: DatasetRegistry, text: str, name: str = "t.csv", encoding: str = "cp932"
) -> str:
    return registry.load_bytes(text.encode(encoding), name)


def _xlsx(rows: list[list[object]]) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _column(registry: DatasetRegistry, dataset_id: str, name: str) -> dict[str, Any]:
    return next(c for c in registry.summary(dataset_id)["columns"] if c["name"] == name)


# --- 1. numbers typed the Japanese way ---------------------------------------------


def test_full_width_digits_are_numbers_cp932(registry: DatasetRegistry) -> None:
    csv = '取引先,金額,数量\n㈱山田,"１,２３４",１２\n①商店,"2,000",3\nＡＢＣ,"￥３００",４\n'
    dataset_id = _load(registry, csv)
    frame = registry.get(dataset_id)
    assert frame["金額"].tolist() == [1234, 2000, 300]
    assert frame["数量"].tolist() == [12, 3, 4]
    assert pd.api.types.is_numeric_dtype(frame["金額"])
    assert frame["取引先"].tolist() == ["㈱山田", "①商店", "ＡＢＣ"]  # text keeps its characters
    assert _column(registry, dataset_id, "金額")["kind"] == "numeric"


@pytest.mark.parametrize(
    ("minus", "encoding"),
    [("\u2212", "utf-8"), ("\uff0d", "cp932"), ("\uff0d", "utf-8-sig"), ("\u2013", "utf-8")],
)
def test_unicode_minus_signs(registry: DatasetRegistry, minus: str, encoding: str) -> None:
    csv = f'科目,金額\n売上,"1,000"\n返品,{minus}500\n値引,"{minus}1,200円"\n'
    frame = registry.get(_load(registry, csv, encoding=encoding))
    assert frame["金額"].tolist() == [1000, -500, -1200]


def test_accounting_negatives(registry: DatasetRegistry) -> None:
    csv = (
        "科目,金額,前期\n"
        '売上,"1,234",△100\n'
        '返品,(500),"▲2,000"\n'
        '値引,（１，５００）,"(￥300)"\n'
        '雑費,"￥(70)",50\n'
    )
    frame = registry.get(_load(registry, csv))
    assert frame["金額"].tolist() == [1234, -500, -1500, -70]
    assert frame["前期"].tolist() == [-100, -2000, -300, 50]


def test_cp932_half_width_yen(registry: DatasetRegistry) -> None:
    # Excel writes a half-width yen sign as byte 0x5C, which CP932 decodes as a backslash
    data = "科目,金額\n売上,".encode("cp932") + b'"\\1,234"\n' + "返品,".encode("cp932")
    data += b"\\-500\n"
    frame = registry.get(registry.load_bytes(data, "yen.csv"))
    assert frame["金額"].tolist() == [1234, -500]


def test_space_only_cells_are_missing(registry: DatasetRegistry) -> None:
    csv = '日付,金額,備考\n2024/4/1,1000,a\n2024/4/2,,b\n2024/4/3," ",\u3000\n2024/4/4,"2,500",c\n'
    dataset_id = _load(registry, csv)
    frame = registry.get(dataset_id)
    assert pd.api.types.is_numeric_dtype(frame["金額"])
    assert frame["金額"].iloc[[0, 3]].tolist() == [1000, 2500]
    assert frame["金額"].isna().tolist() == [False, True, True, False]
    assert frame["備考"].isna().tolist() == [False, False, True, False]  # U+3000 only
    assert _column(registry, dataset_id, "金額")["missing"] == 2


def test_plain_digits_with_a_blank_cell_are_numbers(registry: DatasetRegistry) -> None:
    frame = registry.get(_load(registry, "科目,金額\n売上,1000\n雑費, \n"))
    assert pd.api.types.is_numeric_dtype(frame["金額"])
    assert frame["金額"].iloc[0] == 1000


def test_codes_stay_text(registry: DatasetRegistry) -> None:
    csv = 'コード,部門,全角コード,金額\n001,A01,００１,"１,０００"\n010,B02,０１０,２００\n'
    frame = registry.get(_load(registry, csv))
    assert frame["金額"].tolist() == [1000, 200]
    assert frame["部門"].tolist() == ["A01", "B02"]
    assert frame["全角コード"].tolist() == ["００１", "０１０"]
    data = _xlsx([["コード", "金額"], ["007", "１,０００"], ["010", 2000]])
    excel = registry.get(registry.load_bytes(data, "codes.xlsx"))
    assert excel["コード"].tolist() == ["007", "010"]
    assert excel["金額"].tolist() == [1000, 2000]  # text and number cells mixed


def test_mostly_numeric_column_converts_with_a_note(registry: DatasetRegistry) -> None:
    amounts = [f'"{(i + 1) * 1000:,}"' for i in range(39)]
    lines = ["科目,金額"] + [f"経費,{amount}" for amount in amounts] + ["経費,不明"]
    dataset_id = _load(registry, "\n".join(lines) + "\n")
    frame = registry.get(dataset_id)
    assert pd.api.types.is_numeric_dtype(frame["金額"])
    assert frame["金額"].iloc[0] == 1000 and frame["金額"].iloc[38] == 39000
    assert pd.isna(frame["金額"].iloc[39])
    info = _column(registry, dataset_id, "金額")
    assert info["missing"] == 1
    assert any("1件" in note and "不明" in note for note in info["notes"])
    assert "notes" not in _column(registry, dataset_id, "科目")
    # below 95% numbers the column stays text, untouched
    lines = ["科目,金額"] + [f"経費,{amount}" for amount in amounts[:9]] + ["経費,不明"]
    frame = registry.get(_load(registry, "\n".join(lines) + "\n"))
    assert frame["金額"].iloc[0] == "1,000" and frame["金額"].iloc[9] == "不明"


def test_full_width_dates(registry: DatasetRegistry) -> None:
    csv = (
        "日付,和暦風,金額\n"
        "２０２４／４／１,2024年４月１日,1\n"
        "２０２４／４／１０,２０２４年4月10日,2\n"
    )
    frame = registry.get(_load(registry, csv))
    for column in ("日付", "和暦風"):
        assert pd.api.types.is_datetime64_any_dtype(frame[column]), column
        assert frame[column].tolist() == [pd.Timestamp("2024-04-01"), pd.Timestamp("2024-04-10")]


# --- 2. title rows above the header ------------------------------------------------

TITLED = (
    "売上明細表,,\n"
    "出力日 2024/5/1,,\n"
    "取引日,勘定科目,金額\n"
    '2024/4/1,売上,"1,000"\n'
    '2024/4/2,売上,"2,000"\n'
    "2024/4/3,雑費,500\n"
)


@pytest.mark.parametrize("encoding", ["cp932", "utf-8-sig"])
def test_csv_title_rows_are_skipped(registry: DatasetRegistry, encoding: str) -> None:
    dataset_id = _load(registry, TITLED, encoding=encoding)
    frame = registry.get(dataset_id)
    assert list(frame.columns) == ["取引日", "勘定科目", "金額"]
    assert len(frame) == 3
    assert pd.api.types.is_datetime64_any_dtype(frame["取引日"])
    assert frame["金額"].tolist() == [1000, 2000, 500]
    notes = registry.summary(dataset_id)["notes"]
    assert any(note.startswith("先頭の2行（タイトル）を飛ばしました") for note in notes)
    assert "売上明細表" in notes[0]


def test_title_rows_without_trailing_delimiters(registry: DatasetRegistry) -> None:
    text = "部門別経費一覧\n\n部門\t科目\t金額\n営業部\t旅費交通費\t1,200\n管理部\t通信費\t800\n"
    for name in ("keihi.tsv", "keihi.txt", "keihi.csv"):
        dataset_id = _load(registry, text, name=name)
        frame = registry.get(dataset_id)
        assert list(frame.columns) == ["部門", "科目", "金額"], name
        assert frame["金額"].tolist() == [1200, 800]
        assert registry.summary(dataset_id)["notes"][0].startswith("先頭の2行（タイトル）")


def test_xlsx_title_rows_are_skipped(registry: DatasetRegistry) -> None:
    data = _xlsx(
        [
            ["経費明細 2024年度"],
            [None, None, "作成: 経理部"],
            ["日付", "科目", "金額"],
            [pd.Timestamp("2024-04-01").to_pydatetime(), "旅費交通費", 1200],
            [pd.Timestamp("2024-04-02").to_pydatetime(), "接待交際費", 5000],
        ]
    )
    dataset_id = registry.load_bytes(data, "keihi.xlsx")
    frame = registry.get(dataset_id)
    assert list(frame.columns) == ["日付", "科目", "金額"]
    assert frame["金額"].tolist() == [1200, 5000]
    assert pd.api.types.is_datetime64_any_dtype(frame["日付"])
    assert registry.summary(dataset_id)["notes"][0].startswith(
        "先頭の2行（タイトル）を飛ばしました"
    )
    # a sheet whose first row is the header loads as before, without notes
    plain = registry.load_bytes(_xlsx([["a", "b"], [1, 2], [3, 4]]), "plain.xlsx")
    assert list(registry.get(plain).columns) == ["a", "b"]
    assert "notes" not in registry.summary(plain)


def test_header_guess_is_conservative(registry: DatasetRegistry) -> None:
    # a title row is still skipped ...
    titled = _load(registry, "経費,,\n部門,科目,金額\n営業部,旅費,1\n")
    assert list(registry.get(titled).columns) == ["部門", "科目", "金額"]
    # ... but a header with a blank name is not mistaken for a title row
    blank_name = registry.get(_load(registry, "地域,,売上\n関東,x,100\n近畿,y,200\n"))
    assert list(blank_name.columns) == ["地域", "column_2", "売上"]
    # nor is a first data row taken for the header when the header is short
    numbers = registry.get(_load(registry, "a,,c\n1,2,3\n4,5,6\n"))
    assert list(numbers.columns) == ["a", "column_2", "c"] and len(numbers) == 2


# --- 3. all values of a category column in the summary ------------------------------


def test_values_list_every_category(registry: DatasetRegistry) -> None:
    accounts = ["旅費交通費"] * 5 + ["消耗品費"] * 3 + ["通信費"] * 3 + ["接待交際費"]
    lines = ["日付,勘定科目,金額,摘要"] + [
        f"2024/4/{i + 1},{account},{(i + 1) * 100},摘要{i}" for i, account in enumerate(accounts)
    ]
    dataset_id = _load(registry, "\n".join(lines) + "\n")
    info = _column(registry, dataset_id, "勘定科目")
    assert "接待交際費" not in info["examples"]
    assert info["values"] == ["旅費交通費", "消耗品費", "通信費", "接待交際費"]
    dates = _column(registry, dataset_id, "日付")
    assert dates["values"][0] == "2024-04-01"  # formatted like examples
    assert set(_column(registry, dataset_id, "金額")["values"]) == {
        str((i + 1) * 100) for i in range(12)
    }


def test_values_only_for_few_distinct(registry: DatasetRegistry) -> None:
    rows = CATEGORICAL_MAX_UNIQUE + 10
    frame = pd.DataFrame(
        {
            "many": [f"v{i}" for i in range(rows)],
            "few": ["A", "B"] * (rows // 2),
            "amount": [float(i % 3) for i in range(rows)],
        }
    )
    frame.loc[0, "few"] = None
    dataset_id = registry.add_frame(frame, "frame")
    assert "values" not in _column(registry, dataset_id, "many")
    assert _column(registry, dataset_id, "few")["values"] == ["B", "A"]
    assert _column(registry, dataset_id, "amount")["values"] == ["0", "1", "2"]
