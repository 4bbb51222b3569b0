"""read_procedure on forms office staff write that the rules once missed: each either read
with its parameters or named as not understood, never dropped (the tests' own wording)."""

from __future__ import annotations

from keiri_agent.plans.design.procedure import COUNT_ALL
from keiri_agent.plans.design.procedure_rules import read_procedure


def _steps(text: str) -> list[tuple[str, object]]:
    procedure = read_procedure(text)
    assert not procedure.gaps, procedure.gaps
    out: list[tuple[str, object]] = []
    for step in procedure.steps:
        if step.kind == "filter":
            out.append(("filter", [(c.column, c.op, c.value) for c in step.conditions]))
        elif step.kind == "sort":
            out.append(("sort", (step.by, step.descending)))
        elif step.kind == "select":
            out.append(("select", step.columns))
        elif step.kind == "aggregate":
            out.append(("aggregate", (step.group_by, step.metrics)))
        else:
            out.append((step.kind, None))
    return out


def test_an_order_said_as_column_jun_de_is_ascending() -> None:
    assert _steps("会員名簿.xlsx を 会員番号順で、Excelにして") == [("sort", (["会員番号"], False))]
    assert ("sort", (["学年"], False)) in _steps(
        "成績.csv で科目が「数学」の行だけ、学年順で、CSVに。"
    )


def test_a_count_named_kaisuu_counts_rows() -> None:
    assert _steps("点検記録.csv を号機ごとに停止時間の合計と停止回数を出して Excel に") == [
        ("aggregate", (["号機"], {"停止時間": ["sum"], COUNT_ALL: ["count"]}))
    ]


def test_a_column_of_counts_ending_in_kaisuu_is_summed() -> None:
    assert _steps("練習記録.csv を部員ごとに参加回数の合計を出して Excel に") == [
        ("aggregate", (["部員"], {"参加回数": ["sum"]}))
    ]


def test_saikougaku_is_the_maximum_of_the_column_before_it() -> None:
    assert _steps("買取.xlsx を店舗ごとに査定額の平均・最高額・件数にして Excel に") == [
        ("aggregate", (["店舗"], {"査定額": ["mean", "max"], COUNT_ALL: ["count"]}))
    ]


def test_kept_columns_listed_with_slashes_or_before_the_format() -> None:
    assert ("select", ["品名", "数量", "単価"]) in _steps(
        "仕入.csv から仕入先が「丸山商店」の行の品名／数量／単価 の3項目のみ残してExcelに"
    )
    assert ("select", ["会員番号", "氏名", "電話番号"]) in _steps(
        "会員.xlsx で地区が「北区」の人の会員番号・氏名・電話番号だけExcelにしてください"
    )


def test_a_step_of_an_arrow_chain_that_is_only_a_condition_keeps_those_rows() -> None:
    assert _steps("車両.xlsx ＞ 営業所が本社か港支店 ＞ 車検日の早い順 ＞ CSV") == [
        ("filter", [("営業所", "in", ["本社", "港支店"])]),
        ("sort", (["車検日"], False)),
    ]


def test_a_chain_step_said_as_a_topic_is_named_not_dropped() -> None:
    procedure = read_procedure("車両.xlsx → 営業所は本社 → CSV")
    assert not [s for s in procedure.steps if s.kind == "filter"]
    assert any("営業所" in gap.message for gap in procedure.gaps)


def test_a_person_checking_in_a_chain_is_no_condition() -> None:
    procedure = read_procedure("車両.xlsx → 所長が確認 → CSV")
    assert not [s for s in procedure.steps if s.kind == "filter"]
