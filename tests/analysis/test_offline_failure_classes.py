"""Failure classes every blind set shares (issue 16, item 2), each shown on made-up data
of domains no other test or benchmark uses: a bicycle repair shop's tickets (English)
an office-equipment maintenance contract register and a quotation log (Japanese)."""

from __future__ import annotations

from offline_support import acted_spec, dataset_summary

ROWS = 600


REPAIRS = dataset_summary(
    ROWS,
    [
        ("ticketId", "text", ["T-0001", "T-0002"], ROWS),
        ("bikeBrand", "categorical", ["Giant", "Trek", "Brompton"], 3),
        ("serviceType", "categorical", ["Tune-up", "Puncture", "Overhaul"], 3),
        ("benchNo", "numeric", ["1", "2", "3"], 3),
        ("partsQty", "numeric", ["0", "4"], 8),
        ("labourAmt", "numeric", ["1500", "9000"], 120),
        ("discountPct", "numeric", ["0", "10"], 4),
    ],
    "ds_repairs",
)
CONTRACTS = dataset_summary(
    ROWS,
    [
        ("契約番号", "text", ["C-0001"], ROWS),
        ("契約区分", "categorical", ["保守", "リース", "レンタル"], 3),
        ("機器種別", "categorical", ["複合機", "プロジェクター", "電話機"], 3),
        ("所属", "categorical", ["総務課", "経理課", "営業一課"], 3),
        ("保守料（円）", "numeric", ["3000", "45000"], 200),
        ("契約年数", "numeric", ["1", "3", "5"], 3),
        ("訪問回数", "numeric", ["0", "2", "6"], 7),
        ("休日対応時間", "numeric", ["0", "12.5"], 60),
        ("保守開始日", "datetime", ["2024-04-01"], 300),
    ],
    "ds_contracts",
)

QUOTES = dataset_summary(
    ROWS,
    [
        ("見積番号", "text", ["Q-0001"], ROWS),
        ("見積日", "datetime", ["2025-04-01"], 200),
        ("書類種別", "categorical", ["見積", "受注", "納品"], 3),
        ("担当者", "categorical", ["佐藤", "鈴木", "高橋"], 3),
        ("得意先", "categorical", ["青空工業", "港町商会"], 40),
        ("見積額（円）", "numeric", ["12000", "880000"], 400),
        ("値引率（%）", "numeric", ["0", "5", "10"], 3),
    ],
    "ds_quotes",
)


def test_most_common_is_a_count_ranked_top_k() -> None:
    # before: a groupby of counts, or a sum of some numeric column
    for text, summary, group, top in [
        ("The three most common service types", REPAIRS, "serviceType", 3),
        ("the most common bike brand", REPAIRS, "bikeBrand", 1),
        ("一番多い機器種別は？", CONTRACTS, "機器種別", 1),
        ("よく契約している機器種別トップ3", CONTRACTS, "機器種別", 3),
    ]:
        spec = acted_spec(text, summary)
        assert spec["op"] == "share_ratio", (text, spec)
        assert (spec["group_col"], spec["value_col"], spec["top_k"]) == (group, None, top), text


def test_a_number_with_a_counter_unit_after_a_numeric_column_is_an_equality() -> None:
    # before: 「5年」 was read as a period and asked back as a date
    spec = acted_spec("契約年数が5年の契約について、保守料の合計を所属ごとに", CONTRACTS)
    assert spec["filters"] == [{"col": "契約年数", "op": "==", "value": 5}]
    assert spec["group_cols"] == ["所属"] and spec["metrics"] == {"保守料（円）": ["sum"]}
    spec = acted_spec("訪問回数が3回以上の契約で、機器種別ごとの保守料の平均", CONTRACTS)
    assert spec["filters"] == [{"col": "訪問回数", "op": ">=", "value": 3}]
    spec = acted_spec("訪問回数が2回の契約について所属別の保守料合計", CONTRACTS)
    assert spec["filters"] == [{"col": "訪問回数", "op": "==", "value": 2}]


def test_a_value_that_is_the_datas_word_for_its_rows_is_no_filter() -> None:
    # 見積 is a value of 書類種別 and starts 見積番号, 見積日, 見積額: the rows' own noun.
    # before: every one of these requests was silently filtered to 書類種別 = 見積
    for text, filters in [
        ("値引率が5の見積について、担当者別の見積額の平均", [("値引率（%）", 5)]),
        ("担当者ごとに見積の件数を数えて", []),
        ("見積ごとの見積額の最大値を担当者別に", []),
        ("書類種別が見積の行を担当者ごとに数えて", [("書類種別", "見積")]),
    ]:
        spec = acted_spec(text, QUOTES)
        assert [(f["col"], f["value"]) for f in spec["filters"]] == filters, (text, spec)


def test_everyday_japanese_words_name_the_column() -> None:
    # before: each of these asked which column to group by or aggregate
    for text, summary, group, metric in [
        ("保守料の合計を課ごとに見たい", CONTRACTS, "所属", "保守料（円）"),
        ("部署別に保守料の平均を出して", CONTRACTS, "所属", "保守料（円）"),
        ("機器の種類ごとの保守料合計", CONTRACTS, "機器種別", "保守料（円）"),
        ("お客様ごとの見積金額の合計", QUOTES, "得意先", "見積額（円）"),
    ]:
        spec = acted_spec(text, summary)
        assert spec["op"] == "groupby_agg", (text, spec)
        assert spec["group_cols"] == [group] and list(spec["metrics"]) == [metric], (text, spec)


def test_an_everyday_word_shared_by_two_columns_names_neither() -> None:
    from keiri_agent.agents.analysis.reasoning.offline.parser import everyday_terms

    alone = {pattern: column for pattern, column, _ in everyday_terms(["所属", "見積額（円）"])}
    assert alone["部署"] == "所属" and alone["見積金額"] == "見積額（円）"
    # 部署 and 課 would name 所属 and 管理部門 alike: neither is guessed
    both = {pattern for pattern, _, _ in everyday_terms(["所属", "管理部門"])}
    assert "部署" not in both and not any(p.startswith("課") for p in both)


def test_abbreviated_column_words_are_reached_from_ordinary_words() -> None:
    # before: "number" did not reach benchNo, and "quantity" alone named no column
    spec = acted_spec("average labour amount for bench number 2", REPAIRS)
    assert spec["filters"] == [{"col": "benchNo", "op": "==", "value": 2}]
    assert spec["metrics"] == {"labourAmt": ["mean"]}
    spec = acted_spec("total quantity by service type", REPAIRS)
    assert spec["group_cols"] == ["serviceType"] and spec["metrics"] == {"partsQty": ["sum"]}
    spec = acted_spec("total labour amount per bench number", REPAIRS)
    assert spec["group_cols"] == ["benchNo"] and spec["metrics"] == {"labourAmt": ["sum"]}
