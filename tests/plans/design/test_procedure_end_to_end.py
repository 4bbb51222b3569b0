"""Generated Plans (offline rules) run end to end on made-up CP932 CSV / XLSX files.

Each instruction is generated as ``keiri-agent plan generate`` does offline, the Plan
runs through the real runner with the files as the upload answers, and the written
output is compared with values computed here independently from the same rows.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from keiri_agent.config import Settings
from keiri_agent.plans.design.coverage import check_coverage
from keiri_agent.plans.design.procedure_rules import read_procedure
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.run import PlanRunner
from keiri_agent.services.design import DesignRequest, DesignService

EXPENSES = [
    {
        "日付": "2025/4/3",
        "部門": "営業部",
        "勘定科目": "交際費",
        "金額": "￥12,000",
        "摘要": "タクシー代",
    },
    {"日付": "2025/4/5", "部門": "総務部", "勘定科目": "消耗品費", "金額": "3,300", "摘要": "文具"},
    {"日付": "2025/4/9", "部門": "営業部", "勘定科目": "交際費", "金額": "4,800", "摘要": "会食"},
    {
        "日付": "2025/4/12",
        "部門": "開発部",
        "勘定科目": "旅費交通費",
        "金額": "56,000",
        "摘要": "新幹線",
    },
    {
        "日付": "2025/4/20",
        "部門": "営業部",
        "勘定科目": "会議費",
        "金額": "8,000",
        "摘要": "タクシー相乗り",
    },
    {
        "日付": "2025/5/2",
        "部門": "総務部",
        "勘定科目": "交際費",
        "金額": "60,000",
        "摘要": "贈答品",
    },
    {"日付": "2025/5/8", "部門": "開発部", "勘定科目": "消耗品費", "金額": "", "摘要": "未精算"},
    {"日付": "2025/5/8", "部門": "開発部", "勘定科目": "消耗品費", "金額": "", "摘要": "未精算"},
]
INVOICES = [
    {"請求番号": "INV-001", "取引先": "山田商事", "請求額": 110000},
    {"請求番号": "INV-002", "取引先": "青葉物産", "請求額": 55000},
    {"請求番号": "INV-003", "取引先": "東和産業", "請求額": 33000},
]
PAYMENTS = [
    {"請求番号": "INV-001", "入金額": "110,000"},
    {"請求番号": "INV-002", "入金額": "54,340"},
    {"請求番号": "INV-009", "入金額": "9,900"},
]
MASTER = [
    {"部門": "営業部", "部門コード": "S01", "責任者": "佐藤"},
    {"部門": "総務部", "部門コード": "G01", "責任者": "鈴木"},
    {"部門": "開発部", "部門コード": "D01", "責任者": "高橋"},
]


def cp932_csv(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("cp932")


def xlsx(rows: list[dict[str, Any]], sheet: str = "Sheet1") -> bytes:
    book = openpyxl.Workbook()
    page = book.active
    assert page is not None
    page.title = sheet
    page.append(list(rows[0]))
    for row in rows:
        page.append(list(row.values()))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def amount(text: str) -> int:
    return int(text.replace("￥", "").replace(",", "")) if text else 0


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> DesignService:
    home = tmp_path_factory.mktemp("home")
    return DesignService(Settings(_env_file=None, provider="offline", home=home))  # type: ignore[call-arg]


def exported(
    service: DesignService, instruction: str, files: list[tuple[str, bytes]], tmp: Path
) -> Any:
    """Generate (verdict ok, every requirement covered), run with the files as the upload
    answers and an approval, and return the exported value."""
    result = service.generate(DesignRequest(instruction)).result
    assert result.verdict == "ok", (
        result.verdict,
        [g.message for g in result.gaps],
        result.yaml_text,
    )
    assert result.coverage is not None and result.coverage.ok, result.coverage.lines()
    plan = load_plan_text(result.yaml_text)
    uploads = {f"file_{n}": {"name": name, "data": data} for n, (name, data) in enumerate(files, 1)}
    answers: dict[str, Any] = {"upload_files": uploads, "approve": {"approved": True}}
    runner = PlanRunner(service.engine.catalog, Settings(_env_file=None), runs_dir=tmp, env={})  # type: ignore[call-arg]
    outcome = runner.start(plan, answers=answers)
    assert outcome.status == "success", outcome.errors
    node, alias = str(plan.exports[0].source).split(".", 1)
    return outcome.outputs[node][alias]


def run(
    service: DesignService, instruction: str, files: list[tuple[str, bytes]], tmp: Path
) -> list[dict[str, Any]]:
    """The exported table read back (the first sheet of a workbook, or the CSV)."""
    value = exported(service, instruction, files, tmp)
    if isinstance(value, bytes) and value.startswith(b"PK"):
        book = openpyxl.load_workbook(io.BytesIO(value))
        rows = list(book.worksheets[0].iter_rows(values_only=True))
        return [dict(zip(rows[0], row, strict=False)) for row in rows[1:]]
    if isinstance(value, bytes):
        text = value.decode("utf-8-sig")
        return [dict(row) for row in csv.DictReader(io.StringIO(text))]
    return list(value)


def test_filter_then_aggregate_to_excel(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv の金額が5,000円以上の行を部門別に金額を合計してExcelに出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    expected: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        if amount(row["金額"]) >= 5000:
            expected[row["部門"]] += amount(row["金額"])
    assert {r["部門"]: r["金額_sum"] for r in rows} == expected


def test_two_conditions_and_csv_output(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv から勘定科目が交際費で、かつ金額が1万円を超えるものを抽出してCSVで出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    expected = [r for r in EXPENSES if r["勘定科目"] == "交際費" and amount(r["金額"]) > 10000]
    assert [r["摘要"] for r in rows] == [r["摘要"] for r in expected]


def test_count_per_group_sorted(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv を部門別に件数を数えて、件数の多い順に並べてExcelに出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    counts: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        counts[row["部門"]] += 1
    assert [r["件数_sum"] for r in rows] == sorted(counts.values(), reverse=True)


def test_a_median_and_a_distinct_count_per_group(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv を部門ごとに、金額 の中央値と 勘定科目 のユニーク数を出してExcelで",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    amounts: dict[str, list[int]] = defaultdict(list)
    accounts: dict[str, set[str]] = defaultdict(set)
    for row in EXPENSES:
        if row["金額"]:
            amounts[row["部門"]].append(amount(row["金額"]))
        accounts[row["部門"]].add(row["勘定科目"])
    assert {r["部門"]: r["金額_median"] for r in rows} == {
        dept: statistics.median(values) for dept, values in amounts.items()
    }
    assert {r["部門"]: r["勘定科目_nunique"] for r in rows} == {
        dept: len(names) for dept, names in accounts.items()
    }


def test_one_total_for_the_whole_table(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv の 金額 の合計と、全部で何件あるかだけCSVで出して。部門別は不要です",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    assert len(rows) == 1
    assert float(rows[0]["金額_sum"]) == sum(amount(r["金額"]) for r in EXPENSES)
    assert float(rows[0]["件数_sum"]) == len(EXPENSES)


def test_sort_by_the_total_named_by_a_part_of_its_column(
    service: DesignService, tmp_path: Path
) -> None:
    rows = run(
        service,
        "経費.csv を勘定科目ごとに金額を合計して、合計の大きい順に並べてExcelで",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    totals: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        totals[row["勘定科目"]] += amount(row["金額"])
    assert [r["勘定科目"] for r in rows] == sorted(totals, key=lambda k: -totals[k])


def test_a_count_under_its_own_name_sorted_by_it(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "1. 経費.csv を読み込む\n2. 部門ごとに申請件数を数える\n"
        "3. 申請件数の多い順に並べる\n4. CSVで出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    counts: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        counts[row["部門"]] += 1
    assert [float(r["申請件数_sum"]) for r in rows] == sorted(counts.values(), reverse=True)


def test_groups_kept_by_their_total(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv を部門ごとに金額を合計して、合計が5万円以上の部門だけCSVで",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    totals: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        totals[row["部門"]] += amount(row["金額"])
    assert {r["部門"] for r in rows} == {k for k, v in totals.items() if v >= 50000}


def test_a_total_as_a_word_report(service: DesignService, tmp_path: Path) -> None:
    import docx

    value = exported(
        service,
        "経費.csv を部門ごとに金額を合計して、その結果をWordの報告書（部門別経費.docx）にまとめて",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    document = docx.Document(io.BytesIO(value))
    rows = [[cell.text for cell in row.cells] for row in document.tables[0].rows]
    totals: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        totals[row["部門"]] += amount(row["金額"])
    assert rows[0] == ["部門", "金額_sum"]
    assert {r[0]: int(float(r[1].replace(",", ""))) for r in rows[1:]} == totals


def test_contains_filter(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv の摘要に「タクシー」を含む行だけ抜き出してCSVで出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    assert [r["日付"] for r in rows] == ["2025-04-03", "2025-04-20"]


def test_excluded_values_and_words_drop_those_rows(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csvから、勘定科目が「交際費」「会議費」の行と摘要に「未精算」を含む行を除外して"
        "CSVで出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    kept = [
        r
        for r in EXPENSES
        if r["勘定科目"] not in ("交際費", "会議費") and "未精算" not in r["摘要"]
    ]
    assert [r["摘要"] for r in rows] == [r["摘要"] for r in kept] == ["文具", "新幹線"]


def test_a_denied_comparison_and_the_top_rows(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csvで、金額が5万円を超えない行を金額の大きい順に並べて上位3件をExcelで",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    small = sorted(
        (amount(r["金額"]) for r in EXPENSES if r["金額"] and amount(r["金額"]) <= 50000),
        reverse=True,
    )
    assert [r["金額"] for r in rows] == small[:3] == [12000, 8000, 4800]


def test_blank_cells_filter(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv で金額が空欄の行を洗い出してCSVで出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    assert len(rows) == sum(1 for r in EXPENSES if not r["金額"])


def test_dedupe_on_keys(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv を日付と摘要で重複を除いてCSVで出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    assert len(rows) == len({(r["日付"], r["摘要"]) for r in EXPENSES})


def test_a_duplicate_check_exports_the_repeated_rows(
    service: DesignService, tmp_path: Path
) -> None:
    rows = run(
        service,
        "経費.csv の日付と摘要の重複をチェックして、重複している行を一覧でCSVに出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    seen: set[tuple[str, str]] = set()
    repeated = []
    for row in EXPENSES:
        key = (row["日付"], row["摘要"])
        if key in seen:
            repeated.append(row["摘要"])
        seen.add(key)
    assert [r["摘要"] for r in rows] == repeated == ["未精算"]


def test_a_loose_dedupe_treats_full_and_half_width_as_one(
    service: DesignService, tmp_path: Path
) -> None:
    staff = [
        {"スタッフID": "ＡＢ１", "氏名": "佐藤"},
        {"スタッフID": "AB1", "氏名": "佐藤（重複）"},
        {"スタッフID": "CD2", "氏名": "鈴木"},
    ]
    rows = run(
        service,
        "スタッフ.csvをスタッフIDで重複除去、ただし全角半角の違いは同じとみなす。CSVで出力",
        [("スタッフ.csv", cp932_csv(staff))],
        tmp_path,
    )
    assert [r["氏名"] for r in rows] == ["佐藤", "鈴木"]


def test_date_range(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "経費.csv の日付が2025年4月10日以降のものを勘定科目別に金額を合計してExcelに出力",
        [("経費.csv", cp932_csv(EXPENSES))],
        tmp_path,
    )
    expected: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        month, day = (int(part) for part in row["日付"].split("/")[1:])
        if (month, day) >= (4, 10):
            expected[row["勘定科目"]] += amount(row["金額"])
    assert {r["勘定科目"]: r["金額_sum"] for r in rows} == expected


def test_join_master_then_aggregate(service: DesignService, tmp_path: Path) -> None:
    files = [("経費.csv", cp932_csv(EXPENSES)), ("部門マスタ.xlsx", xlsx(MASTER))]
    rows = run(
        service,
        "経費.csv に部門マスタ.xlsx を部門で結合して、責任者別に金額を合計してExcelに出力",
        files,
        tmp_path,
    )
    owners = {row["部門"]: row["責任者"] for row in MASTER}
    expected: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        expected[owners[row["部門"]]] += amount(row["金額"])
    assert {r["責任者"]: r["金額_sum"] for r in rows} == expected


def test_a_join_brings_only_the_columns_named(service: DesignService, tmp_path: Path) -> None:
    """「責任者を付けて」: the master's other columns (部門コード) stay out of the result."""
    files = [("経費.csv", cp932_csv(EXPENSES)), ("部門マスタ.xlsx", xlsx(MASTER))]
    rows = run(
        service,
        "経費.csv に部門マスタ.xlsx を部門で結合して責任者を付けてCSVで出力",
        files,
        tmp_path,
    )
    owners = {row["部門"]: row["責任者"] for row in MASTER}
    assert [(r["摘要"], r["責任者"]) for r in rows] == [
        (r["摘要"], owners[r["部門"]]) for r in EXPENSES
    ]
    assert "部門コード" not in rows[0]


def test_a_column_computed_before_a_join_feeds_the_join(
    service: DesignService, tmp_path: Path
) -> None:
    files = [("経費.csv", cp932_csv(EXPENSES)), ("部門マスタ.xlsx", xlsx(MASTER))]
    rows = run(
        service,
        "経費.csv の金額に1.1をかけた「税込額」の列を作り、部門マスタ.xlsx を部門で結合して、"
        "責任者別に税込額を合計してExcelに出力",
        files,
        tmp_path,
    )
    owners = {row["部門"]: row["責任者"] for row in MASTER}
    expected: dict[str, float] = defaultdict(float)
    for row in EXPENSES:
        expected[owners[row["部門"]]] += amount(row["金額"]) * 1.1
    assert {r["責任者"]: pytest.approx(r["税込額_sum"]) for r in rows} == expected


def test_a_formula_said_in_words(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "入金.csv で、入金額から100を引いた「手取額」の列を作って、"
        "手取額が5万円以上の行をCSVで出力",
        [("入金.csv", cp932_csv(PAYMENTS))],
        tmp_path,
    )
    assert [r["請求番号"] for r in rows] == [
        r["請求番号"] for r in PAYMENTS if amount(r["入金額"]) - 100 >= 50000
    ]


def test_unnamed_files_of_each_listed_source_are_stacked(
    service: DesignService, tmp_path: Path
) -> None:
    april, may = EXPENSES[:4], EXPENSES[4:]
    rows = run(
        service,
        "4月・5月の経費データ（月ごとにCSVが1つずつ）を縦につなげてから、部門ごとに金額を合計してCSVで",
        [("4月.csv", cp932_csv(april)), ("5月.csv", cp932_csv(may))],
        tmp_path,
    )
    expected: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        expected[row["部門"]] += amount(row["金額"])
    assert {r["部門"]: amount(str(r["金額_sum"])) for r in rows} == expected


def test_reconcile_writes_every_part(service: DesignService, tmp_path: Path) -> None:
    files = [("請求一覧.xlsx", xlsx(INVOICES)), ("入金明細.csv", cp932_csv(PAYMENTS))]
    instruction = "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力"
    book = openpyxl.load_workbook(io.BytesIO(exported(service, instruction, files, tmp_path)))
    sheets = {
        name: [row[0] for row in list(book[name].iter_rows(values_only=True))[1:]]
        for name in book.sheetnames
    }
    invoices = {row["請求番号"] for row in INVOICES}
    payments = {row["請求番号"] for row in PAYMENTS}
    assert set(sheets["一致"]) == invoices & payments
    assert (
        set(sheets["左のみ"]) == invoices - payments
        and set(sheets["右のみ"]) == payments - invoices
    )


def test_reconcile_to_csv_writes_one_file_per_part(service: DesignService, tmp_path: Path) -> None:
    """「一致しなかったもの」 are the rows of one side only: a CSV holds one table, so each
    part of the reconciliation is its own file (the differences alone would be empty)."""
    files = [("請求一覧.xlsx", xlsx(INVOICES)), ("入金明細.csv", cp932_csv(PAYMENTS))]
    instruction = "請求一覧.xlsx と入金明細.csv を請求番号で消し込みして、一致しなかったものをCSVで"
    result = service.generate(DesignRequest(instruction)).result
    assert result.verdict == "ok", [g.message for g in result.gaps]
    plan = load_plan_text(result.yaml_text)
    uploads = {f"file_{n}": {"name": name, "data": data} for n, (name, data) in enumerate(files, 1)}
    runner = PlanRunner(service.engine.catalog, Settings(_env_file=None), runs_dir=tmp_path, env={})  # type: ignore[call-arg]
    outcome = runner.start(plan, answers={"upload_files": uploads})
    assert outcome.status == "success", outcome.errors
    tables = {}
    for export in plan.exports:
        node, alias = str(export.source).split(".", 1)
        text = outcome.outputs[node][alias].decode("utf-8-sig")
        tables[export.name] = [row["請求番号"] for row in csv.DictReader(io.StringIO(text))]
    invoices = {row["請求番号"] for row in INVOICES}
    payments = {row["請求番号"] for row in PAYMENTS}
    assert set(tables["結果_左のみ"]) == invoices - payments
    assert set(tables["結果_右のみ"]) == payments - invoices


def test_reconcile_with_a_column_of_each_table_and_a_named_sheet(
    service: DesignService, tmp_path: Path
) -> None:
    billed = [
        {"請求番号": "A-1", "請求日": "2025/4/1", "請求額": 110000},
        {"請求番号": "A-2", "請求日": "2025/4/3", "請求額": 55000},
        {"請求番号": "A-3", "請求日": "2025/4/5", "請求額": 33000},
    ]
    paid = [
        {"請求番号": "A-1", "入金日": "2025/4/4", "入金額": "109,340"},  # fee deducted, in window
        {"請求番号": "A-2", "入金日": "2025/4/20", "入金額": "55,000"},  # too late
        {"請求番号": "A-3", "入金日": "2025/4/6", "入金額": "30,000"},  # short
    ]
    instruction = (
        "請求一覧.xlsx と入金明細.csv を請求番号で照合して、請求額と入金額の差が1,000円以内、"
        "請求日と入金日のずれは5日までなら一致。結果はExcelで、シート名は「差異一覧」"
    )
    files = [("請求一覧.xlsx", xlsx(billed)), ("入金明細.csv", cp932_csv(paid))]
    book = openpyxl.load_workbook(io.BytesIO(exported(service, instruction, files, tmp_path)))
    first_column = {
        name: [row[0] for row in list(book[name].iter_rows(values_only=True))[1:]]
        for name in book.sheetnames
    }
    assert first_column["一致"] == ["A-1"]
    assert sorted(first_column["差異一覧"]) == ["A-2", "A-3"]


def test_two_parts_of_a_reconciliation_asked_for_one_sheet(
    service: DesignService, tmp_path: Path
) -> None:
    """「入金のないもの、金額が一致しないものをシート「不一致」に」: both kinds of rows in the one
    sheet named, and no sheet nobody asked for."""
    files = [("請求一覧.xlsx", xlsx(INVOICES)), ("入金明細.csv", cp932_csv(PAYMENTS))]
    instruction = (
        "請求一覧.xlsx と入金明細.csv を請求番号をキーに照合して、請求額と入金額を比べてください。"
        "請求があるのに入金のないもの、金額が一致しないものを"
        "照合結果.xlsx のシート「不一致」に出力。"
    )
    book = openpyxl.load_workbook(io.BytesIO(exported(service, instruction, files, tmp_path)))
    assert book.sheetnames == ["不一致"]
    rows = list(book["不一致"].iter_rows(values_only=True))
    paid = {row["請求番号"]: amount(row["入金額"]) for row in PAYMENTS}
    expected = {
        row["請求番号"]
        for row in INVOICES
        if row["請求番号"] not in paid or paid[row["請求番号"]] != row["請求額"]
    }
    assert {row[0] for row in rows[1:]} == expected == {"INV-002", "INV-003"}


def test_a_dedupe_keeping_the_latest_row_of_a_date_column(
    service: DesignService, tmp_path: Path
) -> None:
    """「最新の接種日を残す」: the kept row is the latest by that column, wherever it stands."""
    shots = [
        {"飼い主ID": "A1", "ペット名": "ポチ", "接種日": "2025/12/1", "ワクチン": "狂犬病"},
        {"飼い主ID": "A1", "ペット名": "ポチ", "接種日": "2025/3/10", "ワクチン": "混合"},
        {"飼い主ID": "B2", "ペット名": "タマ", "接種日": "2024/11/5", "ワクチン": "混合"},
        {"飼い主ID": "B2", "ペット名": "タマ", "接種日": "2025/1/20", "ワクチン": "狂犬病"},
    ]
    rows = run(
        service,
        "予防接種記録.csvから、飼い主IDとペット名で重複を除去（最新の接種日を残す）して、CSVに出力",
        [("予防接種記録.csv", cp932_csv(shots))],
        tmp_path,
    )
    latest: dict[tuple[str, str], str] = {}
    for row in shots:
        key = (row["飼い主ID"], row["ペット名"])
        day = tuple(int(part) for part in row["接種日"].split("/"))
        if key not in latest or day > tuple(int(p) for p in latest[key].split("/")):
            latest[key] = row["接種日"]
    assert {(r["飼い主ID"], r["ペット名"]): r["ワクチン"] for r in rows} == {
        key: next(
            r["ワクチン"]
            for r in shots
            if (r["飼い主ID"], r["ペット名"]) == key and r["接種日"] == day
        )
        for key, day in latest.items()
    }


def test_computed_column_then_filter(service: DesignService, tmp_path: Path) -> None:
    rows = run(
        service,
        "請求一覧.xlsx の請求額に10%を上乗せした「税込額」列を追加して、"
        "税込額が10万円以上の行をCSVで出力",
        [("請求一覧.xlsx", xlsx(INVOICES))],
        tmp_path,
    )
    assert [r["請求番号"] for r in rows] == [
        r["請求番号"] for r in INVOICES if r["請求額"] * 1.1 >= 100000
    ]


def test_approval_gates_the_output(service: DesignService, tmp_path: Path) -> None:
    result = service.generate(
        DesignRequest("経費.csv を部門別に金額を合計して、承認してからExcelに出力")
    ).result
    assert result.verdict == "ok"
    plan = load_plan_text(result.yaml_text)
    writer = next(node for node in plan.graph if getattr(node, "block", "") == "excel.write")
    assert writer.when is not None and "approve.approved" in str(writer.when)
    runner = PlanRunner(service.engine.catalog, Settings(_env_file=None), runs_dir=tmp_path, env={})  # type: ignore[call-arg]
    upload = {"upload_files": {"file_1": {"name": "経費.csv", "data": cp932_csv(EXPENSES)}}}
    declined = runner.start(plan, answers={**upload, "approve": {"approved": False}})
    assert declined.outputs.get(writer.id, {}).get("workbook") is None


# --------------------------------------------------------------------------- honesty


@pytest.mark.parametrize(
    ("instruction", "kind"),
    [
        (
            "部門別の経費実績を予算と比較して、予算超過の部門を出して。実績は経費実績.csv",
            "unsupported_action",
        ),
        ("経費.csv を部門別に金額を合計して、経理部長にメールで送信して", "unsupported_action"),
        ("経費.csv から高額な経費を抽出してExcelに出力", "not_understood"),
        ("入出金明細.csv を帳簿と照合してExcelに出力", "missing_source"),
        ("領収書.pdf から日付と金額を読み取ってExcelにまとめて", "needs_llm"),
        ("明細.csv の取引先を「A」「B」「C」に分類してExcelに出力", "needs_llm"),
    ],
)
def test_parts_that_cannot_be_built_are_named_and_no_plan_is_made(
    service: DesignService, instruction: str, kind: str
) -> None:
    result = service.generate(DesignRequest(instruction)).result
    assert result.verdict == "cannot_build" and result.plan is None
    assert kind in {gap.kind for gap in result.gaps}, [g.model_dump() for g in result.gaps]
    assert all(gap.message for gap in result.gaps)


def test_unnamed_columns_are_asked_not_guessed(service: DesignService) -> None:
    result = service.generate(
        DesignRequest("経費精算CSVから交際費が5,000円を超える明細を抽出してExcelに出力")
    ).result
    assert result.verdict == "needs_answers"
    assert len(result.questions) == 2 and "交際費" in result.questions[0]["question"]


def test_coverage_finds_a_filter_that_does_not_feed_the_output() -> None:
    procedure = read_procedure("経費.csv の金額が5万円以上の行をExcelに出力")
    plan = {
        "graph": [
            {"id": "read", "block": "csv.read", "in": {"file": "${vars.f}"}},
            {
                "id": "keep",
                "block": "table.filter",
                "in": {
                    "records": "${read.records}",
                    "conditions": [{"col": "金額", "op": ">=", "value": 50000}],
                },
            },
            {
                "id": "write",
                "block": "excel.write",
                "in": {"workbook": None, "data": "${read.records}"},
            },
            {
                "id": "extra",
                "block": "table.sort",
                "in": {"records": "${read.records}", "by": ["金額"]},
            },
        ]
    }
    report = check_coverage(procedure, plan)
    assert not report.ok
    assert any(item.problem and "出力に使われていません" in item.problem for item in report.missing)
    assert report.unrelated == ["extra"]


def test_coverage_finds_a_wrong_parameter() -> None:
    procedure = read_procedure("経費.csv の金額が5万円以上の行をExcelに出力")
    plan = {
        "graph": [
            {"id": "read", "block": "csv.read", "in": {"file": "${vars.f}"}},
            {
                "id": "keep",
                "block": "table.filter",
                "in": {
                    "records": "${read.records}",
                    "conditions": [{"col": "金額", "op": ">=", "value": 100000}],
                },
            },
            {
                "id": "write",
                "block": "excel.write",
                "in": {"workbook": None, "data": "${keep.records}"},
            },
        ]
    }
    report = check_coverage(procedure, plan)
    assert [item.requirement for item in report.missing] == ["step:s1"]


def test_numbered_steps_run_in_the_order_written(service: DesignService, tmp_path: Path) -> None:
    """A total before a join and a column computed from both (the natural order would join
    first and compute a column the total then drops)."""
    lessons = [
        {"講師名": "田中", "授業区分": "通常", "コマ数": "3"},
        {"講師名": "田中", "授業区分": "振替", "コマ数": "1"},
        {"講師名": "佐藤", "授業区分": "通常", "コマ数": "2"},
        {"講師名": "田中", "授業区分": "通常", "コマ数": "2"},
        {"講師名": "佐藤", "授業区分": "欠席", "コマ数": "1"},
    ]
    rates = [{"講師名": "田中", "時給": 2000}, {"講師名": "佐藤", "時給": 3000}]
    rows = run(
        service,
        "1) 授業実績.csv を読み込み、授業区分 が「振替」「欠席」以外の行だけ残す\n"
        "2) 講師名 ごとに コマ数 を合計\n"
        "3) 講師マスタ.xlsx と 講師名 でつないで 時給 を持ってくる\n"
        "4) 支給額 ＝ コマ数 × 時給\n"
        "5) 支給額の多い順で 講師給与.xlsx に出力",
        [("授業実績.csv", cp932_csv(lessons)), ("講師マスタ.xlsx", xlsx(rates))],
        tmp_path,
    )
    assert [(r["講師名"], r["支給額"]) for r in rows] == [("田中", 10000), ("佐藤", 6000)]


def test_a_join_on_the_table_said_as_its_base_and_an_inner_join(
    service: DesignService, tmp_path: Path
) -> None:
    customers = [
        {"顧客ID": "C1", "顧客名": "山田商店"},
        {"顧客ID": "C2", "顧客名": "青葉物産"},
        {"顧客ID": "C3", "顧客名": "東和産業"},
    ]
    orders = [
        {"注文番号": "A-1", "顧客ID": "C2", "金額": "5,000"},
        {"注文番号": "A-2", "顧客ID": "C9", "金額": "7,000"},
    ]
    files = [("顧客.csv", cp932_csv(customers)), ("注文.csv", cp932_csv(orders))]
    based = run(
        service,
        "顧客.csvと注文.csvを顧客IDで結合（注文側を基準に左結合）して、注文_顧客.xlsxに出してください",
        files,
        tmp_path / "left",
    )
    assert [(r["注文番号"], r["顧客名"]) for r in based] == [("A-1", "青葉物産"), ("A-2", None)]
    inner = run(
        service,
        "注文.csvと顧客.csvを顧客IDで内部結合して、注文_顧客.xlsxに出してください",
        [files[1], files[0]],
        tmp_path / "inner",
    )
    assert [(r["注文番号"], r["顧客名"]) for r in inner] == [("A-1", "青葉物産")]


def test_a_formula_over_totals_and_one_side_of_a_reconciliation(
    service: DesignService, tmp_path: Path
) -> None:
    pos = [
        {"店舗": "本店", "売上": "10,000", "客数": "4"},
        {"店舗": "本店", "売上": "8,000", "客数": "2"},
        {"店舗": "駅前", "売上": "9,000", "客数": "3"},
    ]
    rows = run(
        service,
        "POSデータ.csvを店舗別に集計して、売上合計と客数合計を出し、売上合計を客数合計で割った"
        "客単価の列を追加して、客単価.xlsxに出してください。",
        [("POSデータ.csv", cp932_csv(pos))],
        tmp_path / "pos",
    )
    assert {r["店舗"]: r["客単価"] for r in rows} == {"本店": 3000, "駅前": 3000}
    rows = run(
        service,
        "請求.csvと入金.csvを請求番号で照合し、請求にあって入金にない行を未入金.xlsxに書き出して",
        [("請求.csv", cp932_csv(INVOICES)), ("入金.csv", cp932_csv(PAYMENTS))],
        tmp_path / "one_side",
    )
    assert [r["請求番号"] for r in rows] == ["INV-003"]


def test_monthly_files_stacked_then_joined_with_their_master(
    service: DesignService, tmp_path: Path
) -> None:
    """Three files: the two of one name are stacked, the master is joined to the stack (it
    was once stacked with them, and the join took the two monthly files)."""
    april = [row for row in EXPENSES if row["日付"].startswith("2025/4/")]
    may = [row for row in EXPENSES if row["日付"].startswith("2025/5/")]
    rows = run(
        service,
        "経費_4月.csv、経費_5月.csv（同じレイアウト）と 部門マスタ.csv があります。\n"
        "1) 2か月分のファイルを縦につなげる\n2) 摘要 が「未精算」の行は除く\n"
        "3) 部門マスタ を 部門 で結合して 責任者 を付ける\n4) 責任者 ごとに 金額 を合計\n"
        "5) 責任者別経費.xlsx に出力",
        [
            ("経費_4月.csv", cp932_csv(april)),
            ("経費_5月.csv", cp932_csv(may)),
            ("部門マスタ.csv", cp932_csv(MASTER)),
        ],
        tmp_path,
    )
    owner = {row["部門"]: row["責任者"] for row in MASTER}
    expected: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        if row["摘要"] != "未精算":
            expected[owner[row["部門"]]] += amount(row["金額"])
    assert {row["責任者"]: row["金額_sum"] for row in rows} == expected


def test_a_numbered_form_filters_rows_before_the_total_and_totals_after_it(
    service: DesignService, tmp_path: Path
) -> None:
    rows = run(
        service,
        "作業依頼書\n件名：部門別 経費超過の確認\n期限：6月5日\n"
        "対象データ：経費.csv、部門マスタ.csv\n処理内容：\n1. 摘要 が「未精算」の行を除く\n"
        "2. 部門 ごとに 金額 を合計\n3. 部門マスタ を 部門 で結合し 責任者 を付与\n"
        "4. 超過額 = 金額 - 30000 を計算\n5. 超過額 が0より大きい行のみ残す\n"
        "出力：Excel「経費超過.xlsx」",
        [("経費.csv", cp932_csv(EXPENSES)), ("部門マスタ.csv", cp932_csv(MASTER))],
        tmp_path,
    )
    totals: dict[str, int] = defaultdict(int)
    for row in EXPENSES:
        if row["摘要"] != "未精算":
            totals[row["部門"]] += amount(row["金額"])
    owner = {row["部門"]: row["責任者"] for row in MASTER}
    expected = {owner[d]: total - 30000 for d, total in totals.items() if total > 30000}
    assert {row["責任者"]: row["超過額"] for row in rows} == expected
