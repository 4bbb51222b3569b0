"""read_procedure: the requirement model by rules, and the guards that name what was not
understood instead of dropping it (wording here is the tests' own, not a benchmark's)."""

from __future__ import annotations

import pytest

from keiri_agent.plans.design.procedure import COUNT_ALL, checklist
from keiri_agent.plans.design.procedure_rules import amount_value, read_procedure


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5,000円", 5000),
        ("5万", 50000),
        ("1万5千円", 15000),
        ("1.5万円", 15000),
        ("3億円", 3 * 10**8),
    ],
)
def test_amounts_as_offices_write_them(text: str, value: int) -> None:
    assert amount_value(text) == value


def test_full_width_threshold_and_group() -> None:
    procedure = read_procedure(
        "売上.csv の金額が５万円以上の行を担当者別に金額を合計してExcelに出力"
    )
    (keep, total) = procedure.steps
    assert (keep.conditions[0].column, keep.conditions[0].op, keep.conditions[0].value) == (
        "金額",
        ">=",
        50000,
    )
    assert total.group_by == ["担当者"] and total.metrics == {"金額": ["sum"]}
    assert procedure.outputs[0].format == "excel" and not procedure.gaps


def test_a_value_is_not_taken_for_an_amount_column() -> None:
    # 交際費 reads as an account (a value), not as the column holding the amount
    procedure = read_procedure("経費.csv から交際費が5,000円を超える明細を抽出してCSVで出力")
    conditions = procedure.steps[0].conditions
    assert [(c.column, c.op, c.value) for c in conditions] == [
        (None, "==", "交際費"),
        (None, ">", 5000),
    ]
    assert procedure.steps[0].missing == ["conditions.0.column", "conditions.1.column"]


def test_a_date_range_keeps_its_column() -> None:
    procedure = read_procedure("仕訳.csv の計上日が2025/4/1以降、2025年6月30日以前の行をCSVで出力")
    conditions = procedure.steps[0].conditions
    assert [(c.column, c.op, c.value) for c in conditions] == [
        ("計上日", ">=", "2025-04-01"),
        ("計上日", "<=", "2025-06-30"),
    ]


def test_lines_and_bullets_are_clauses() -> None:
    procedure = read_procedure("・読むファイル：売上.csv\n・店舗ごとに 売上額 の合計\n・CSVで出力")
    assert procedure.steps[0].group_by == ["店舗"] and not procedure.gaps


def test_count_rows_and_sum_in_one_list() -> None:
    procedure = read_procedure("経費.csv を申請者ごとに件数と金額の合計を出してExcelに出力")
    assert procedure.steps[0].metrics == {COUNT_ALL: ["count"], "金額": ["sum"]}


def test_a_rule_quoted_in_the_instruction_gives_the_threshold() -> None:
    procedure = read_procedure(
        "規程「1件あたり10,000円を超える会議費は事前申請」に照らして、会議費.csv から"
        "金額が基準を超える行を抽出してCSVで出力"
    )
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.op, condition.value) == ("金額", ">", 10000)
    assert not procedure.gaps


def test_a_reference_document_gives_the_threshold_of_the_rule_it_names() -> None:
    documents = ["会議費は1人あたり5,000円以下とする。交際費は1件20,000円を超える場合は事前承認。"]
    procedure = read_procedure(
        "経費.csv から勘定科目が交際費のもののうち、金額が社内規程の基準を超える明細をCSVで出力",
        documents,
    )
    conditions = {(c.column, c.op, c.value) for c in procedure.steps[0].conditions}
    assert conditions == {("勘定科目", "==", "交際費"), ("金額", ">", 20000)}


def test_two_rules_that_fit_equally_are_not_guessed() -> None:
    documents = ["通信費の上限は5,000円。交通費の上限は20,000円。"]
    procedure = read_procedure("経費.csv から金額が規程の上限を超える明細をCSVで出力", documents)
    assert any("規程が複数" in gap.message for gap in procedure.gaps)


def test_a_threshold_nobody_stated_is_a_gap() -> None:
    procedure = read_procedure("経費.csv から金額が基準を超える明細をCSVで出力")
    assert any("基準の金額" in gap.message for gap in procedure.gaps)


@pytest.mark.parametrize(
    ("instruction", "quoted"),
    [
        ("経費.csv を部門別に金額を合計して、部長にメールで送信して", "送信"),
        ("経費.csv から金額が3万円の行と、部門が営業部の行をCSVで出力して、5日後に再実行", "5日"),
        ("請求.csv の店舗コードが S012 か S013 の行と、その前後だけ残してCSVで出力", "前後"),
        ("請求.csv と 入金.csv をCSVで出力", "入金.csv"),
        ("売上.csv を前年と比較してExcelに出力", "比較"),
        ("売上.xlsx を商品ごとに売上金額を合計して、前年と比べた伸び率も出して", "伸び率"),
    ],
)
def test_what_is_not_understood_is_named(instruction: str, quoted: str) -> None:
    procedure = read_procedure(instruction)
    assert procedure.gaps, checklist(procedure)
    assert any(quoted in gap.message for gap in procedure.gaps), [g.message for g in procedure.gaps]


def test_polite_and_reason_wording_is_not_a_step() -> None:
    procedure = read_procedure(
        "お疲れさまです。取込で二重に入ったので、申請番号が同じ行は最初の1件だけ残して"
        "重複を除いていただけると助かります。結果はCSVで保存をお願いします。"
    )
    assert not procedure.gaps, [g.message for g in procedure.gaps]
    assert procedure.steps[0].kind == "dedupe" and procedure.steps[0].keys == ["申請番号"]


def test_an_exclusion_keeps_the_other_rows() -> None:
    procedure = read_procedure("請求.csv のうち請求額が0円の行は除外してCSVで出力")
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.op, condition.value) == ("請求額", "!=", 0)


def test_a_code_is_a_value_not_a_number() -> None:
    procedure = read_procedure("請求.csv の店舗コードが S012 の行だけ残してCSVで出力")
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.op, condition.value) == ("店舗コード", "==", "S012")


@pytest.mark.parametrize(
    "instruction",
    [
        "経費.csv を部門別に金額を合計して、課長に確認してもらってからExcelに出力",
        "経費.csv を部門別に金額を合計して、部長のチェックを受けてからExcelに出力",
        "経費.csv を部門別に金額を合計して、承認後にExcelに出力",
    ],
)
def test_an_approval_in_any_wording_guards_the_output(instruction: str) -> None:
    procedure = read_procedure(instruction)
    assert [step.kind for step in procedure.steps] == ["aggregate", "approval"]
    assert not procedure.gaps


def test_a_person_with_no_approval_read_is_named() -> None:
    procedure = read_procedure("経費.csv を部門別に金額を合計して、課長に見てもらってExcelに出力")
    assert any("課長に何をしてもらうか" in gap.message for gap in procedure.gaps)


def test_a_column_named_after_approval_is_no_approval() -> None:
    procedure = read_procedure("経費精算.csv で承認日が空欄になっているものを一覧にしてCSVで出力")
    assert [step.kind for step in procedure.steps] == ["filter"]
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.op) == ("承認日", "is_null")


def test_the_compared_column_named_by_its_role_is_no_filter() -> None:
    procedure = read_procedure(
        "請求.csv と 入金.csv を請求番号で照合して、金額は賃料の列で比較、金額差の許容はなしで。"
        "Excelで出力"
    )
    (step,) = procedure.steps
    assert (step.kind, step.amount_column, step.tolerance) == ("reconcile", "賃料", 0.0)


@pytest.mark.parametrize(
    "instruction",
    [
        "漢字" * 2000,
        "経費.csv の" + "部門・" * 1300 + "別に合計",
        "経費.csv を" + "部門と" * 1300 + "で重複を除く",
        "金額が" * 1300,
        "経費.csv の" + "金額×単価" * 600,
    ],
)
def test_a_long_or_repetitive_instruction_is_read_in_bounded_work(instruction: str) -> None:
    # What is tested is that it returns: before the bounds each of these backtracked for
    # minutes (nested, unbounded repetitions). The instruction limit is 4,000 characters.
    procedure = read_procedure(instruction[:4000])
    assert procedure.model_dump() == read_procedure(instruction[:4000]).model_dump()


def test_reading_in_many_threads_at_once_gives_the_same_model() -> None:
    # Sudachi tokenizers are not thread-safe; the API designs in worker threads
    from concurrent.futures import ThreadPoolExecutor

    instructions = [
        "経費.csv の金額が5万円以上の行を部門別に合計してExcelに出力",
        "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力",
    ] * 16
    alone = [read_procedure(text).model_dump() for text in instructions]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda text: read_procedure(text).model_dump(), instructions))
    assert together == alone


def _kinds(procedure) -> list[str]:  # type: ignore[no-untyped-def]
    return [step.kind for step in procedure.steps]


@pytest.mark.parametrize(
    ("instruction", "by"),
    [
        ("売上.csv を店舗ごとに売上金額を合計して、金額の大きい順に並べてCSVで", ["売上金額"]),
        ("売上.csv を店舗ごとに売上金額を合計して、合計の多い順に並べてCSVで", ["売上金額"]),
        ("点検.csv を設備ごとに温度の平均と最大を出し、最大が高い順にCSVで", ["温度_max"]),
    ],
)
def test_a_sort_after_a_total_names_its_result(instruction: str, by: list[str]) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[-1].kind == "sort" and procedure.steps[-1].by == by
    assert not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "metrics"),
    [
        ("経費.csv の金額の合計だけ出して。部門別は不要です", {"金額": ["sum"]}),
        (
            "経費.csv の 金額 の総額と、全部で何件あるかだけ教えて",
            {"金額": ["sum"], COUNT_ALL: ["count"]},
        ),
        ("立替.csv の 精算額 列、全部足した合計だけ欲しい", {"精算額": ["sum"]}),
    ],
)
def test_one_total_for_the_whole_table(instruction: str, metrics: dict[str, list[str]]) -> None:
    procedure = read_procedure(instruction)
    assert _kinds(procedure) == ["aggregate"], checklist(procedure)
    assert procedure.steps[0].group_by == [] and procedure.steps[0].metrics == metrics
    assert not procedure.gaps


def test_a_bare_total_uses_the_one_amount_column_named() -> None:
    procedure = read_procedure("受注.csv で受注額が10万円以上のものを担当者ごとに合計してExcelで")
    assert procedure.steps[-1].metrics == {"受注額": ["sum"]} and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "keys", "keep"),
    [
        ("名簿.csv で会員IDが同じ行は最後の1件を残して、ほかは消してください", ["会員ID"], "last"),
        ("顧客.xlsx、顧客ID がダブっている行は先頭を残して消して", ["顧客ID"], "first"),
        ("伝票.csv で同じ伝票番号が複数行あるときは一番上の行を残してCSVで", ["伝票番号"], "first"),
    ],
)
def test_a_dedupe_said_by_its_rows(instruction: str, keys: list[str], keep: str) -> None:
    procedure = read_procedure(instruction)
    (dedupe,) = procedure.steps
    assert (dedupe.kind, dedupe.keys, dedupe.keep) == ("dedupe", keys, keep)
    assert not procedure.gaps


def test_many_rows_of_one_key_is_no_count() -> None:
    procedure = read_procedure("レジ.csv、同じ 伝票番号 が何行もあるので 伝票番号 で重複を除いて")
    assert _kinds(procedure) == ["dedupe"]


@pytest.mark.parametrize(
    ("instruction", "columns"),
    [
        (
            "店舗.csv の 店舗名 と 住所 に全角と半角が混ざっているので、揃えてからCSVで",
            ["店舗名", "住所"],
        ),
        (
            "入金.csv の 入金日 が「2024/4/1」「令和6年4月2日」などバラバラなので、日付を揃えて",
            ["入金日"],
        ),
        (
            "請求.csv は請求額が「1,000円」みたいに文字で入っています。"
            "数値に直してから担当ごとに請求額を合計",
            ["請求額"],
        ),
    ],
)
def test_columns_written_in_mixed_ways_are_normalised(instruction: str, columns: list[str]) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[0].kind == "normalize" and procedure.steps[0].columns == columns
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


@pytest.mark.parametrize(
    ("instruction", "condition"),
    [
        ("受付.csv で メモ 欄に何か入力されている行だけ抽出", ("メモ", "not_null", None)),
        ("検収.csv で 検収日 が入力済みのものだけCSVで", ("検収日", "not_null", None)),
        ("振込.csv で 摘要 に「振替」という文字が入っている行だけ", ("摘要", "contains", "振替")),
    ],
)
def test_filled_and_containing_in_everyday_words(
    instruction: str, condition: tuple[str, str, str | None]
) -> None:
    procedure = read_procedure(instruction)
    (keep,) = procedure.steps
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [condition]


@pytest.mark.parametrize(
    "instruction",
    [
        "経費.csv の金額を部門ごとに合計して、予算との差異も出しておいてください",
        "売上.csv を得意先ごとに売上額を合計して、その結果を会計ソフトに登録しておいてください",
    ],
)
def test_a_result_or_action_beyond_the_blocks_is_named(instruction: str) -> None:
    assert read_procedure(instruction).gaps


def test_circled_and_plain_step_numbers_are_no_values() -> None:
    procedure = read_procedure(
        "①配送.csv を読み込む ②距離 が 300 を超える便に絞る ③運転手 別に 距離 を合計"
    )
    assert _kinds(procedure) == ["filter", "aggregate"] and not procedure.gaps
    assert procedure.steps[0].conditions[0].column == "距離"
    listed = read_procedure(
        "配送.csv について\n1 区分 が「冷凍」のものだけ\n2 運転手 ごとに 距離 を合計"
    )
    assert _kinds(listed) == ["filter", "aggregate"] and not listed.gaps


def test_a_title_saying_total_is_no_total_of_its_own() -> None:
    procedure = read_procedure(
        "【月次】燃料費の集計\n・入力：給油.csv\n・車両ごとに 給油額 の合計\n・出力はExcel"
    )
    (total,) = procedure.steps
    assert total.metrics == {"給油額": ["sum"]} and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "by", "descending"),
    [
        (
            "料金.csv：店舗・月 別に 料金 を合計して、店舗→月 の順で昇順ソート",
            ["店舗", "月"],
            False,
        ),
        (
            "勤怠.csv で部署ごとに残業時間の平均を出して、平均が多い部署から順に並べて",
            ["残業時間"],
            True,
        ),
        ("台帳.xlsx の 取得価額 が30万円以上の行を 部門名 の順に並べて", ["部門名"], False),
    ],
)
def test_sorts_in_everyday_words(instruction: str, by: list[str], descending: bool) -> None:
    procedure = read_procedure(instruction)
    sort = procedure.steps[-1]
    assert (sort.kind, sort.by, sort.descending) == ("sort", by, descending)
    assert not procedure.gaps


@pytest.mark.parametrize(
    "instruction",
    [
        "車両.csv から価格が100万円以上の車両だけ抽出してCSVで",
        "会費.csv のうち、入金日 が空欄になっている会員を抽出して",
        "取引.csv から区分が「要確認」の取引先の伝票だけ抜き出して",
    ],
)
def test_the_rows_named_after_a_condition_are_no_value(instruction: str) -> None:
    procedure = read_procedure(instruction)
    (keep,) = procedure.steps
    assert len(keep.conditions) == 1 and keep.conditions[0].column is not None
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


def test_a_noun_another_step_names_as_a_column_is_compared_in() -> None:
    procedure = read_procedure(
        "注文.xlsx で 数量 × 単価 の 小計 列を作って、小計 が3万円以上の注文だけ残して"
    )
    keep = procedure.steps[-1]
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [("小計", ">=", 30000)]
    assert keep.missing == []
    # with no other step naming it, 交際費 may be a value of an account column: asked
    asked = read_procedure("経費.csv から交際費が5,000円を超える明細を抽出してCSVで出力")
    assert asked.steps[0].missing == ["conditions.0.column", "conditions.1.column"]


def test_group_names_said_with_their_suffix() -> None:
    both = read_procedure("原価.xlsx を工事番号別・費目別に 原価金額 を合計して")
    assert both.steps[0].group_by == ["工事番号", "費目"]
    kind = read_procedure("請求.csv を 診療月と保険種別の組み合わせごとに 点数 を合計して")
    assert kind.steps[0].group_by == ["診療月", "保険種別"]


def test_a_files_description_is_no_grouping_and_a_count_of_rows_is_no_column() -> None:
    procedure = read_procedure("店舗ごとの売上一覧（Excel）について、店舗名ごとの申込件数を数えて")
    (total,) = procedure.steps
    assert total.group_by == ["店舗名"] and total.metrics == {COUNT_ALL: ["count"]}


@pytest.mark.parametrize(
    ("instruction", "keys", "amount", "right_amount"),
    [
        (
            "入金.csv と 予定.xlsx を突合。"
            "照合キーは 依頼人名、金額は 入金額 で比較し、差額100円以内なら一致",
            ["依頼人名"],
            "入金額",
            None,
        ),
        (
            "請求.xlsx と入金.csv を照合。"
            "キーは請求番号、金額は請求額同士で比べて、差額が100円以内なら一致",
            ["請求番号"],
            "請求額",
            None,
        ),
        (
            "自社.xlsx と先方.csv を、取引先コードと伝票番号の2つをキーに照合して。"
            "金額は残高の列で比較",
            ["取引先コード", "伝票番号"],
            "残高",
            None,
        ),
        (
            "部品のチェックです。"
            "先方.csv と 当社.xlsx を 発注番号 で照合し、請求金額 の差が100円以内なら一致扱い",
            ["発注番号"],
            "請求金額",
            None,
        ),
    ],
)
def test_reconcile_keys_and_amount_in_everyday_words(
    instruction: str, keys: list[str], amount: str, right_amount: str | None
) -> None:
    procedure = read_procedure(instruction)
    (match,) = procedure.steps
    assert (match.kind, match.keys, match.amount_column) == ("reconcile", keys, amount)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


def test_two_date_columns_compared_one_in_each_table() -> None:
    procedure = read_procedure(
        "入金.csv と 台帳.xlsx を取引先コードでひも付けて照合。入金日と予定日のズレは前後3日まで"
    )
    (match,) = procedure.steps
    assert (match.date_column, match.right_date_column, match.date_window_days) == (
        "入金日",
        "予定日",
        3,
    )
    assert "「入金日」と「予定日」の日付差 3 日まで" in checklist(procedure)[-1]


def test_a_topic_remark_is_no_filter_and_names_the_compared_amount() -> None:
    procedure = read_procedure(
        "仕入先から届いた請求.xlsx と計上.csv を 伝票番号 で突き合わせて。"
        "税込金額 は端数処理の違いがあるので1円までの差は許容します。Excelで"
    )
    assert _kinds(procedure) == ["reconcile"] and not procedure.gaps
    assert (procedure.steps[0].amount_column, procedure.steps[0].tolerance) == ("税込金額", 1.0)


def test_a_format_in_parentheses_after_the_request_is_the_output() -> None:
    procedure = read_procedure("保全.csv を設備名 別に 部品費 を合計して出してください（Excel）。")
    assert [o.format for o in procedure.outputs] == ["excel"]
    # after a file's name it is that file's format, not an output
    named = read_procedure("入金明細（CSV）と売掛金一覧（Excel）を取引先コードで突き合わせて")
    assert [i.format for i in named.inputs] == ["csv", "excel"] and not named.outputs


def test_a_title_line_is_no_step() -> None:
    procedure = read_procedure(
        "【依頼】取引先別の発注額集計\n・発注明細.xlsx\n・仕入先名 ごとに 発注金額 を合計\n・CSVで"
    )
    (total,) = procedure.steps
    assert total.group_by == ["仕入先名"] and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "columns"),
    [
        (
            "名簿.csv の 氏名カナ と 電話番号 が全角・半角ごちゃまぜなので、"
            "この2列を正規化してCSVで",
            ["氏名カナ", "電話番号"],
        ),
        (
            "台帳.csv は 取引日 が「2024/4/1」「R6.4.1」などバラバラで、"
            "金額 も「1,234円」のように文字で入っています。"
            "この2列を正規化して",
            ["取引日", "金額"],
        ),
        ("明細.csv の 金額と車両番号の列を正規化してからCSVで", ["金額", "車両番号"]),
    ],
)
def test_columns_pointed_back_at_are_the_ones_named(instruction: str, columns: list[str]) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[0].columns == columns and not procedure.gaps


def test_a_column_only_pointed_at_is_asked() -> None:
    procedure = read_procedure("顧客.csv の この列を正規化してCSVで")
    assert any("どの列のことか" in gap.message for gap in procedure.gaps)


def test_a_whole_table_total_of_the_columns_named_as_the_topic() -> None:
    procedure = read_procedure(
        "報酬.xlsx の 支払金額 と 源泉税額 について、全体の合計を1行で出して。Excelで"
    )
    (total,) = procedure.steps
    assert total.group_by == [] and total.metrics == {"支払金額": ["sum"], "源泉税額": ["sum"]}


@pytest.mark.parametrize(
    ("instruction", "condition"),
    [
        ("POS.csv 返品区分=1 の行だけ csvで", ("返品区分", "==", 1)),
        ("工事.csv：工事区分＝公共、金額の大きい順に並べて", ("工事区分", "==", "公共")),
        ('sales.csv → Region == "East" だけ → csv', ("Region", "==", "East")),
        ("工事.csv から請負金額５千万円以上の行だけ", ("請負金額", ">=", 50_000_000)),
    ],
)
def test_conditions_in_signs_months_and_large_units(
    instruction: str, condition: tuple[str, str, object]
) -> None:
    procedure = read_procedure(instruction)
    keep = procedure.steps[0]
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [condition]
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


def test_a_column_named_with_classification_is_no_llm_step() -> None:
    procedure = read_procedure("発注.csv を資材分類ごとに発注金額を集計してExcelで")
    (total,) = procedure.steps
    assert total.group_by == ["資材分類"] and total.metrics == {"発注金額": ["sum"]}
    assert not procedure.needs_llm and not procedure.gaps


def test_metrics_said_before_their_column() -> None:
    procedure = read_procedure("仕入.csv から車種別の平均仕入価格と、最低・最高の仕入価格を出して")
    (total,) = procedure.steps
    assert total.metrics == {"仕入価格": ["mean", "min", "max"]} and not procedure.gaps


def test_a_column_name_cut_short_is_asked() -> None:
    procedure = read_procedure("見積.csv を見積もり番号ごとに金額を合計して")
    assert any("だけを列名として読みました" in gap.message for gap in procedure.gaps)


def test_a_result_asked_with_teach_is_checked_for_unread_nouns() -> None:
    procedure = read_procedure(
        "支出.xlsx を 科目 別に 支出額 で集計して、予算をオーバーしている科目を教えて"
    )
    assert procedure.gaps


def test_every_column_said_to_be_made_uniform_is_normalised_once() -> None:
    procedure = read_procedure(
        "料金.xlsxの金額欄が「12,500円」みたいな文字で入ってるので数値に直して、"
        "作業日も日付の形式に揃えてから、作業日の古い順に並べ替えてExcelで"
    )
    assert _kinds(procedure) == ["normalize", "sort"] and not procedure.gaps
    assert sorted(procedure.steps[0].columns) == ["作業日", "金額"]


def test_a_column_added_by_a_formula_said_as_a_named_column() -> None:
    procedure = read_procedure("勤務.csvに「支給額」という列を 勤務時間 × 時給 で追加して、CSVで")
    assert procedure.steps[0].expressions == {"支給額": "勤務時間 * 時給"} and not procedure.gaps


def test_a_sort_with_its_direction_in_parentheses() -> None:
    procedure = read_procedure("給油.csv を給油日順（新しい順）に並べてCSVで")
    assert (procedure.steps[0].by, procedure.steps[0].descending) == (["給油日"], True)


def test_a_month_as_a_value_is_named_not_guessed() -> None:
    # a column of dates, or of months written 2024/6, would keep no row: asked instead
    procedure = read_procedure(
        "成約.csv から成約月が 2024-06 かつ 手数料が80万円以上の案件を抜き出して"
    )
    assert any("2024" in gap.message for gap in procedure.gaps)


def test_a_qualifier_between_column_and_amount() -> None:
    procedure = read_procedure("契約.xlsx から、保険料が月額１万円以上の契約だけを抜き出して")
    assert [(c.column, c.op, c.value) for c in procedure.steps[0].conditions] == [
        ("保険料", ">=", 10000)
    ]


def test_joining_two_files_of_one_kind_stacks_them() -> None:
    procedure = read_procedure(
        "本社分の取引先.csvと支店分の取引先.csvを結合し、取引先番号で重複を除いてExcelで"
    )
    assert _kinds(procedure) == ["concat", "dedupe"] and not procedure.gaps


@pytest.mark.parametrize(
    "instruction",
    [
        "規程第3条に「1件あたり3万円を超える交際費は部長の承認を要する」とあります。"
        "経費.csv のうち、金額がこの基準を超えるものを抽出してExcelで",
        "規約で「1回5万円以上の支出は理事長の承認を要する」と定めています。"
        "支出.csv から、支出額がこれに該当するものを抽出してExcelで",
    ],
)
def test_a_quoted_rule_gives_the_threshold_and_asks_no_approval(instruction: str) -> None:
    procedure = read_procedure(instruction)
    assert _kinds(procedure) == ["filter"], checklist(procedure)
    (condition,) = procedure.steps[0].conditions
    assert condition.value in (30000, 50000) and condition.op in (">", ">=")
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


@pytest.mark.parametrize(
    ("instruction", "keep"),
    [
        ("在庫.csv、伝票番号がダブってる行消して。最初の行残しでOK。CSVで", "first"),
        ("棚卸.xlsx、ロケーションと品番で重複を消して（最後のカウントを採用）、Excelで", "last"),
        ("応募.csv、メールアドレスで重複を除いて（一番最後の応募を残す）、CSVで", "last"),
    ],
)
def test_which_row_a_dedupe_keeps_in_other_words(instruction: str, keep: str) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[0].kind == "dedupe" and procedure.steps[0].keep == keep
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


@pytest.mark.parametrize(
    ("instruction", "amount", "tolerance"),
    [
        (
            "明細.csvと計上.xlsxを証券番号で照合して。手数料額を比較して、1円でもズレていれば差異",
            "手数料額",
            0.0,
        ),
        (
            "明細(CSV)と命令(Excel)を照合。照合キーは支払先コード、比較する金額は支払金額とします",
            "支払金額",
            None,
        ),
    ],
)
def test_the_compared_amount_in_more_words(
    instruction: str, amount: str, tolerance: float | None
) -> None:
    procedure = read_procedure(instruction)
    (match,) = procedure.steps
    assert (match.amount_column, match.tolerance) == (amount, tolerance)


def test_a_join_said_by_attaching_a_masters_columns() -> None:
    procedure = read_procedure(
        "勤怠.csvに、社員マスタ.csvの店舗名と雇用区分を社員番号で付けてください。CSVで"
    )
    (join,) = procedure.steps
    assert (join.kind, join.keys, join.fields) == ("join", ["社員番号"], ["店舗名", "雇用区分"])


@pytest.mark.parametrize(
    ("instruction", "expressions"),
    [
        (
            "日報.csvに「作業時間 × 時給」で労務費って列を足して、CSVで",
            {"労務費": "作業時間 * 時給"},
        ),
        (
            "単価.xlsx で、請求単価から支払単価を引いた額を「粗利単価」として計算して",
            {"粗利単価": "請求単価 - 支払単価"},
        ),
    ],
)
def test_computed_columns_in_more_words(instruction: str, expressions: dict[str, str]) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[0].expressions == expressions and not procedure.gaps


def test_a_reason_and_a_purpose_ask_for_nothing() -> None:
    procedure = read_procedure(
        "応募.csv、同じアドレスで何回も応募してくる人がいるので、アドレスで重複を除いて、"
        "本部提出用のCSVを作ってください"
    )
    assert _kinds(procedure) == ["dedupe"] and not procedure.gaps


def test_kind_columns_are_no_grouping_but_kinds_are() -> None:
    column = read_procedure("利用者.csv から保険種別が「医療保険」か「公費」の人だけ抜いてCSVで")
    assert _kinds(column) == ["filter"] and not column.gaps
    grouped = read_procedure("車両.csv を車種別に台数を数えてCSVで")
    assert grouped.steps[0].group_by == ["車種"]


def test_groupings_said_in_two_sentences() -> None:
    # a summary sentence and the step: the sentence that totals a column says the grouping
    summary = read_procedure(
        "営業担当別の粗利を出したいです。売上.csvを担当者ごとに粗利を合計してExcelで"
    )
    assert summary.steps[0].group_by == ["担当者"] and not summary.gaps
    # neither sentence totals a column: asked, never both groupings guessed
    asked = read_procedure("売上.csvを部門別にお願いします。店舗ごとにも。金額を合計してExcelで")
    assert any("別々の文" in gap.message for gap in asked.gaps)


def test_a_count_keeps_the_name_the_instruction_gives_it() -> None:
    procedure = read_procedure(
        "1. 訪問.csv を読み込む\n2. 担当ごとに訪問件数を数える\n3. 訪問件数の多い順に並べる"
    )
    total, order = procedure.steps
    assert total.count_name == "訪問件数" and order.by == ["訪問件数"]
    assert "訪問件数" in checklist(procedure)[1]


@pytest.mark.parametrize(
    "instruction",
    [
        "支出.csv 助成金名別 支出額合計 助成金名の昇順 Excel",
        "参加.csvで、参加者ごとの参加時間を合計して、多い順に並べたExcelがほしいです",
        "作業.csv、作業日・現場名・作業者の3列だけにしてCSVでちょうだい",
    ],
)
def test_outputs_asked_in_terse_or_casual_words(instruction: str) -> None:
    procedure = read_procedure(instruction)
    assert len(procedure.outputs) == 1 and not procedure.gaps, [g.message for g in procedure.gaps]
    # an input named at the end is no output
    assert not read_procedure("・部門ごとに金額を合計\n・入力：経費CSV").outputs


def test_stacking_files_when_only_one_is_named_is_asked() -> None:
    procedure = read_procedure(
        "A園とB園の材料費.csv（2ファイルあります）を1つにまとめて、月ごとに金額を合計"
    )
    assert any(gap.kind == "missing_source" for gap in procedure.gaps)


def test_a_reconcile_key_said_after_a_heading_sentence() -> None:
    procedure = read_procedure(
        "入金消込の件です。通帳.csv と 予定表.xlsx を取引先名で照合してください。Excelで"
    )
    assert procedure.steps[0].keys == ["取引先名"] and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "condition"),
    [
        (
            "仕入.csv に 粗利 = 売価 - 原価 の列を足して、粗利 がマイナス（0未満）の品目だけCSVで",
            ("粗利", "<", 0),
        ),
        (
            "申込.csv から 方面 が 北海道・沖縄・九州 のどれかになってるものだけ残して",
            ("方面", "in", ["北海道", "沖縄", "九州"]),
        ),
    ],
)
def test_signs_and_one_of_in_everyday_words(
    instruction: str, condition: tuple[str, str, object]
) -> None:
    procedure = read_procedure(instruction)
    keep = procedure.steps[-1]
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [condition]
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


def test_a_quoted_rule_is_not_read_as_steps_of_its_own() -> None:
    procedure = read_procedure(
        "経理規程第12条に「1件10万円以上の物品購入は固定資産計上の検討対象とする」とあります。"
        "購入明細.csv から購入金額が10万円以上のものを抜き出して、部署別に件数を出してExcelに"
    )
    keep = procedure.steps[0]
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [("購入金額", ">=", 100000)]
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


def test_columns_to_output_listed_after_a_label() -> None:
    procedure = read_procedure("・対象：利用者.csv\n・出す列は 利用者番号・氏名・請求額\n・CSVで")
    assert procedure.steps[0].columns == ["利用者番号", "氏名", "請求額"] and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "condition"),
    [
        (
            "番組.csv：番組名別に制作費を合計 → 合計が50万円超のものだけ残す → 制作費の降順",
            ("制作費", ">", 500000),
        ),
        ("取引.csv を取引先ごとに件数を数えて、件数が3件以上の取引先だけCSVで", ("件数", ">=", 3)),
    ],
)
def test_a_condition_on_a_total_keeps_groups_after_the_aggregation(
    instruction: str, condition: tuple[str, str, object]
) -> None:
    procedure = read_procedure(instruction)
    kinds = _kinds(procedure)
    assert kinds.index("filter") == kinds.index("aggregate") + 1, kinds
    keep = procedure.steps[kinds.index("filter")]
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [condition]
    assert not procedure.gaps


def test_two_output_formats_are_asked_and_a_file_name_before_につき_is_an_input() -> None:
    procedure = read_procedure(
        "執行データ（shikko.xlsx）につきまして、番号が同じ行は最初の行を残して除いてください。"
        "CSVでの出力をお願いします。"
    )
    assert [i.format for i in procedure.inputs] == ["excel"]
    assert [o.format for o in procedure.outputs] == ["csv"] and not procedure.gaps
    both = read_procedure(
        "経費.csv を部門ごとに金額を合計してExcelに出力。集計.csv というファイル名でCSV保存"
    )
    assert any("出力の形式が2つ" in gap.message for gap in both.gaps)


def test_a_compound_with_a_reconcile_word_is_no_reconcile() -> None:
    procedure = read_procedure(
        "口座振替.csv のうち、届出印照合日が空欄になっているレコードを抽出してExcelで"
    )
    assert _kinds(procedure) == ["filter"] and not procedure.gaps


def test_step_numbers_written_as_手順() -> None:
    procedure = read_procedure(
        "【作業手順】\n手順1:振込.csv を読み込む\n手順2:振込金額が100万円を超えるものに絞り込む"
    )
    assert _kinds(procedure) == ["filter"] and not procedure.gaps


def test_judging_by_a_column_is_no_llm_step() -> None:
    procedure = read_procedure(
        "経費.xlsx から精算額が3万円以上のものを精算額で判定して抽出してください"
    )
    assert not procedure.needs_llm and _kinds(procedure) == ["filter"]


def test_a_generic_column_word_named_by_its_owner() -> None:
    procedure = read_procedure("交付.csv から廃棄物の種類が「廃プラスチック類」の行だけに絞る")
    assert [(c.column, c.value) for c in procedure.steps[0].conditions] == [
        ("廃棄物の種類", "廃プラスチック類")
    ]


def test_a_noun_with_化_is_an_action_word() -> None:
    procedure = read_procedure(
        "納品.csv ですが、取引先 の表記が全角・半角でぶれているので正規化したうえで、"
        "取引先 別に 納品金額 の合計を出してExcelに"
    )
    assert _kinds(procedure) == ["normalize", "aggregate"] and not procedure.gaps
    assert procedure.steps[0].columns == ["取引先"]


def test_output_columns_listed_as_items() -> None:
    procedure = read_procedure(
        "名簿.csv のうち、資格取得日が未入力の職員を洗い出したいです。\n"
        "出力項目は 社員番号、氏名、所属園 の３つで、CSVでお願いします。"
    )
    assert _kinds(procedure) == ["filter", "select"] and not procedure.gaps
    assert procedure.steps[1].columns == ["社員番号", "氏名", "所属園"]


def test_a_hyphenated_latin_word_is_no_formula_and_an_unknown_action_is_named() -> None:
    procedure = read_procedure(
        "算定基礎届の内容を e-Gov で電子申請しておいてください。データは算定基礎.xlsx です"
    )
    assert not procedure.steps
    assert any(gap.kind == "unsupported_action" for gap in procedure.gaps)


def test_units_counts_listed_and_honorific_names() -> None:
    books = read_procedure("返本.csv から、発行部数が３万部超の書籍を抜いてExcelで")
    assert [(c.column, c.op, c.value) for c in books.steps[0].conditions] == [
        ("発行部数", ">", 30000)
    ]
    rentals = read_procedure(
        "明細.csv を担当別にレンタル件数と月額料金の合計を出す。月額料金の合計が大きい順。Excelで"
    )
    total, order = rentals.steps
    assert total.metrics == {COUNT_ALL: ["count"], "月額料金": ["sum"]} and order.by == ["月額料金"]
    customers = read_procedure("顧客.csv、お客様番号で重複消して最初の行だけ残してCSVで")
    assert customers.steps[0].keys == ["お客様番号"]


def test_findings_of_the_last_fresh_sets() -> None:
    # the file is no dedupe key; the rows that share keys say them
    orders = read_procedure(
        "受注データの重複除去をお願いします。\n・入力：受注データ.csv\n"
        "・得意先コードと品番が同じ行は重複扱い、最初の1件だけ残す\n・CSVで"
    )
    assert orders.steps[0].keys == ["得意先コード", "品番"]
    # a number written with a thousands separator in a formula
    allowance = read_procedure("出張.csv に日当の列を足して。日当＝出張日数×３，０００円ね。CSVで")
    assert allowance.steps[0].expressions == {"日当": "出張日数 * 3000"}
    # the column compared with a rule referred to by 同条
    rule = read_procedure(
        "社内規程第12条「1件あたり10万円以上の交際費は事前稟議を要する」に基づき、"
        "明細.xlsxから金額が同条の基準に該当する行を抽出してExcelで"
    )
    assert [(c.column, c.value) for c in rule.steps[0].conditions] == [("金額", 100000)]
    # 「Excelのシート名は…」 names the output, not a fourth input
    quarter = read_procedure(
        "明細_1月.csv、明細_2月.csv を1つにまとめ、科目別に金額を合計してください。"
        "Excelのシート名は「集計」でお願いします。"
    )
    assert len(quarter.inputs) == 2 and [o.sheet for o in quarter.outputs] == ["集計"]


def test_a_word_document_is_an_output_and_pdf_is_named_as_not_buildable() -> None:
    word = read_procedure("経費.csv を部門ごとに金額を合計して、その結果をWord文書にしてください")
    assert [o.format for o in word.outputs] == ["docx"] and not word.gaps
    named = read_procedure(
        "研修.csv を部署ごとに受講料を合計して、Wordの報告書（研修費報告.docx）にまとめて"
    )
    assert [(o.format, o.file_name) for o in named.outputs] == [("docx", "研修費報告.docx")]
    pdf = read_procedure("経費.csv を部門ごとに金額を合計してPDFにして")
    assert any(gap.kind == "unsupported_action" for gap in pdf.gaps)


@pytest.mark.parametrize(
    ("instruction", "inputs", "output"),
    [
        (
            "外注費.csv、プロジェクト名別に支払額の合計ちょうだい。Excelで！",
            1,
            ("excel", None, None),
        ),
        (
            "前期.csv と後期.csv を1つにまとめ、購入日の古い順に並べて、"
            "Excelファイル「通年.xlsx」のシート「通年」に出力してください",
            2,
            ("excel", "通年.xlsx", "通年"),
        ),
        (
            "手順1：渋谷店.csv、新宿店.csv を1つの表にまとめる。\n"
            "手順2：「店舗別.xlsx」としてExcelに出力する。",
            2,
            ("excel", "店舗別.xlsx", None),
        ),
    ],
)
def test_an_output_named_after_the_files_is_never_an_input(
    instruction: str, inputs: int, output: tuple[str, str | None, str | None]
) -> None:
    procedure = read_procedure(instruction)
    assert len(procedure.inputs) == inputs
    assert [(o.format, o.file_name, o.sheet) for o in procedure.outputs] == [output]
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


def test_what_is_taken_back_asks_for_nothing() -> None:
    procedure = read_procedure(
        "原価.csv を部品番号 別に 加工費 の合計を出して、"
        "加工費合計の大きい順…じゃなくて 部品番号 順（昇順）でCSVください"
    )
    assert procedure.steps[-1].by == ["部品番号"] and procedure.steps[-1].descending is False


def test_a_master_matched_to_attach_a_column_is_a_join() -> None:
    procedure = read_procedure(
        "1. 工事台帳.xlsx を読み込む\n"
        "2. 担当者マスタ.csv を担当者コードで突き合わせて、営業所を台帳に付ける"
    )
    assert procedure.steps[0].kind == "join" and procedure.steps[0].keys == ["担当者コード"]


def test_a_latin_column_name_of_two_words() -> None:
    procedure = read_procedure(
        "Invoice.xlsx から Invoice No、取引先、金額の列だけ残したCSVをください"
    )
    assert procedure.steps[0].columns == ["Invoice No", "取引先", "金額"]


def test_a_condition_on_what_was_totalled_keeps_groups_after_it() -> None:
    procedure = read_procedure(
        "・勤怠.csv を読み込む\n・現場名別、スタッフ番号別に実働時間を合計\n"
        "・合計した実働時間が１６０時間以上の人だけ残す\n・Excelで出力"
    )
    assert _kinds(procedure) == ["aggregate", "filter"]
    assert [(c.column, c.value) for c in procedure.steps[1].conditions] == [("実働時間", 160)]


def test_more_everyday_findings() -> None:
    sheet = read_procedure(
        "発注（hatchu.xlsx、シート「発注」）で、発注額が１０万円を超える行をCSVで"
    )
    assert sheet.inputs[0].sheet == "発注" and not sheet.gaps
    differs = read_procedure(
        "POS.csv と会計.xlsx を伝票番号で照合して、売上金額に差異があるものを出して"
    )
    assert differs.steps[0].amount_column == "売上金額"
    each = read_procedure("仕入.csv、仕入金額と関税額それぞれの総合計だけ出してほしい。CSVで")
    assert each.steps[0].metrics == {"仕入金額": ["sum"], "関税額": ["sum"]} and not each.gaps
    people = read_procedure("予約.csv を予約日ごとに人数を合計してCSVで")
    assert people.steps[0].metrics == {"人数": ["sum"]}


def test_yet_more_everyday_findings() -> None:
    listed = read_procedure(
        "在庫.xlsx から在庫数が10未満の商品を抜き出して、"
        "品番・商品名・在庫数だけで大丈夫です。CSVで"
    )
    assert listed.steps[-1].columns == ["品番", "商品名", "在庫数"] and not listed.gaps
    unit = read_procedure("水揚げ.csv を魚種名ごとに水揚げ量(kg)と金額を合計してExcelで")
    assert unit.steps[0].metrics == {"水揚げ量": ["sum"], "金額": ["sum"]} and not unit.gaps
    approval = read_procedure(
        "値引.xlsx で値引率が0.2を超える行を抽出→課長に確認してもらう→OKが出たらCSVで出力"
    )
    assert "approval" in _kinds(approval) and not approval.gaps
    formula = read_procedure("輸入.xlsx の「外貨金額 × 為替レート」で円換算額を計算して、CSVで")
    assert formula.steps[0].expressions == {"円換算額": "外貨金額 * 為替レート"}


def test_the_input_sheet_is_never_taken_for_the_output_sheet() -> None:
    procedure = read_procedure(
        "① 入出庫明細.xlsx のシート「明細」を開く\n② 品目 別に 数量 を合計\n"
        "③ シート名「品目別出庫数」でExcel保存"
    )
    assert procedure.inputs[0].sheet == "明細"
    assert [o.sheet for o in procedure.outputs] == ["品目別出庫数"]


@pytest.mark.parametrize(
    ("instruction", "expressions"),
    [
        (
            "給与.xlsx に、基本給と手当を足した「総支給額」の列を作ってExcelで",
            {"総支給額": "基本給 + 手当"},
        ),
        (
            "有給.xlsx で付与日数から取得日数を引いた「残日数」を計算してCSVで",
            {"残日数": "付与日数 - 取得日数"},
        ),
        ("売上.csv の金額を数量で割った単価の列を追加してCSVで", {"単価": "金額 / 数量"}),
        ("見積.csv の単価に1.1をかけた「税込単価」の列を追加してCSVで", {"税込単価": "単価 * 1.1"}),
    ],
)
def test_formulas_said_in_words(instruction: str, expressions: dict[str, str]) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[0].expressions == expressions and not procedure.gaps


def test_a_formula_whose_particles_do_not_fit_its_verb_is_no_formula() -> None:
    # 「AからBを足す」 names no formula: nothing is computed from it
    procedure = read_procedure("売上.csv の金額から手数料を足した「合計」の列を作ってCSVで")
    assert "compute" not in _kinds(procedure)


def test_one_unnamed_file_of_each_listed_source_is_stacked() -> None:
    procedure = read_procedure(
        "新宿店・渋谷店・池袋店から来た販売日報CSV（3ファイル、列は同じ）を縦に結合し、"
        "機種名ごとに販売台数を合計してCSVで"
    )
    assert [item.holds for item in procedure.inputs] == [
        "新宿店の販売日報",
        "渋谷店の販売日報",
        "池袋店の販売日報",
    ]
    assert _kinds(procedure) == ["concat", "aggregate"] and not procedure.gaps
    listed_after = read_procedure("社員名簿CSV（本社分と子会社分）を1つに結合してCSVで")
    assert len(listed_after.inputs) == 2 and _kinds(listed_after) == ["concat"]


def test_a_stated_file_count_that_disagrees_with_the_list_is_not_guessed() -> None:
    procedure = read_procedure("新宿店・渋谷店から来た日報CSV（3ファイル）を縦に結合してCSVで")
    assert len(procedure.inputs) == 1 and procedure.gaps


def test_named_files_gathered_are_stacked() -> None:
    procedure = read_procedure(
        "本館_売上.csv と 別館_売上.csv をまとめて、日付ごとに売上を合計してExcelで"
    )
    assert _kinds(procedure) == ["concat", "aggregate"] and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "file_name", "sheet"),
    [
        (
            "受注.csv を担当者ごとに金額を合計し、Excelで「担当者別.xlsx」として出力",
            "担当者別.xlsx",
            None,
        ),
        (
            "受注.csv を担当者ごとに金額を合計\n(5) 「集計.xlsx」、シート名「担当者」でExcel出力",
            "集計.xlsx",
            "担当者",
        ),
        (
            "受注.csv を担当者ごとに金額を合計し、「集計.xlsx」のシート「担当者」に出力",
            "集計.xlsx",
            "担当者",
        ),
    ],
)
def test_named_outputs_said_around_their_format(
    instruction: str, file_name: str, sheet: str | None
) -> None:
    procedure = read_procedure(instruction)
    (output,) = procedure.outputs
    assert (output.file_name, output.sheet) == (file_name, sheet)
    assert len(procedure.inputs) == 1 and not procedure.gaps


def test_a_period_between_two_dates_keeps_both_ends() -> None:
    procedure = read_procedure("出荷.csv、出荷日が2024/5/1〜2024/5/31のやつだけにしてCSVで")
    (step,) = procedure.steps
    assert [(c.column, c.op, c.value) for c in step.conditions] == [
        ("出荷日", ">=", "2024-05-01"),
        ("出荷日", "<=", "2024-05-31"),
    ]
    assert not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "op", "value"),
    [
        ("経費.xlsx の区分が「役員」でない行だけにしてCSVで", "!=", "役員"),
        ("入荷予定.csv、倉庫コードがW02のだけでCSVちょうだい", "==", "W02"),
    ],
)
def test_conditions_said_with_a_short_tail(instruction: str, op: str, value: str) -> None:
    procedure = read_procedure(instruction)
    (step,) = procedure.steps
    assert [(c.op, c.value) for c in step.conditions] == [(op, value)] and not procedure.gaps


def test_a_remark_about_this_year_is_no_condition() -> None:
    procedure = read_procedure(
        "今年は天候不順で出荷量が例年より少なく、部会でも話題になっております。"
        "出荷.xlsx から品目が「きゅうり」の行だけを取り出してExcelで"
    )
    (step,) = procedure.steps
    assert [c.column for c in step.conditions] == ["品目"] and not procedure.gaps


def test_a_remark_with_a_request_is_still_read() -> None:
    # background is dropped only when it asks nothing: a request in it is never lost
    procedure = read_procedure(
        "いつも営業部で集計しています。経費.csv を部門別に金額を合計してExcelで"
    )
    assert _kinds(procedure) == ["aggregate"]
    asked = read_procedure("郵送費の関係で対象を絞りたいです。寄付者.xlsx をCSVで出して")
    assert asked.gaps


@pytest.mark.parametrize(
    ("instruction", "metrics"),
    [
        ("稼働.csv を顧客ごとに売上足してExcelで", {"売上": ["sum"]}),
        ("出荷.xlsx を生産者コードごとに「出荷数量」列を足し上げてExcelで", {"出荷数量": ["sum"]}),
        ("処方.xlsx を薬効分類ごとに処方数量を集計してCSVで", {"処方数量": ["sum"]}),
        ("清掃.csv を担当者ごとに「清掃時間」（分）の平均を出してCSVで", {"清掃時間": ["mean"]}),
    ],
)
def test_totals_in_more_words(instruction: str, metrics: dict[str, list[str]]) -> None:
    procedure = read_procedure(instruction)
    assert procedure.steps[-1].metrics == metrics and not procedure.gaps


def test_a_column_added_is_no_total() -> None:
    procedure = read_procedure(
        "日報.csvに「作業時間 × 時給」で労務費って列を足して、圃場ごとの労務費の合計を出してExcelで"
    )
    assert procedure.steps[-1].metrics == {"労務費": ["sum"]} and not procedure.gaps


def test_both_tables_columns_stated_name_the_compared_amount_and_date() -> None:
    procedure = read_procedure(
        "請求.csv と入金.csv を販売店コードで突き合わせてください。"
        "どちらのファイルにも販売店コード・金額・日付の列があります。"
        "660円までの金額差は一致扱い、日付は5日以内のずれならOK。Excelで"
    )
    (step,) = procedure.steps
    assert (step.amount_column, step.date_column, step.tolerance, step.date_window_days) == (
        "金額",
        "日付",
        660,
        5,
    )
    assert not procedure.gaps


def test_dedupe_said_by_the_rows_that_share_a_key() -> None:
    procedure = read_procedure(
        "顧客リスト.xlsxの重複を消したいです。電話番号が同じお客様は最初の1件だけ残してください。CSVで"
    )
    (step,) = procedure.steps
    assert (step.keys, step.keep) == (["電話番号"], "first") and not procedure.gaps
    pointed = read_procedure(
        "名簿.csv の氏名カナと生年月日を正規化してから、その2列で重複を削除し、"
        "後から登録された行（最後の行）を残してください。CSVで"
    )
    assert (pointed.steps[-1].keys, pointed.steps[-1].keep) == (["氏名カナ", "生年月日"], "last")
    assert not pointed.gaps


def test_a_recent_period_nobody_stated_is_asked() -> None:
    procedure = read_procedure("最近入塾した生徒の一覧を生徒名簿.csv から作ってExcelで")
    assert any("最近" in gap.message for gap in procedure.gaps)


def test_a_verbal_noun_describing_a_file_asks_nothing() -> None:
    procedure = read_procedure(
        "銀行からダウンロードした入金明細.csv を取引先ごとに入金額を合計してExcelで"
    )
    assert _kinds(procedure) == ["aggregate"] and not procedure.gaps


def test_a_negation_glued_to_the_value_is_read() -> None:
    procedure = read_procedure(
        "給油売上.csv、油種が灯油以外のデータで店舗別に販売数量を合計。CSVで"
    )
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.op, condition.value) == ("油種", "!=", "灯油")


def test_orders_in_more_words_and_an_unread_order_is_named() -> None:
    procedure = read_procedure("作業日報.csv を担当者ごとに作業時間を合計→作業時間の長い順→CSV")
    assert (procedure.steps[-1].kind, procedure.steps[-1].descending) == ("sort", True)
    unread = read_procedure("作業日報.csv を担当者ごとに作業時間を合計、作業時間のえらい順でCSV")
    assert any("えらい順" in gap.message for gap in unread.gaps)


def test_a_dedupe_said_with_dabu() -> None:
    procedure = read_procedure(
        "依頼者リスト.csv の依頼者番号のダブりを消して、"
        "依頼者番号・氏名・電話番号の列だけにしてCSVで"
    )
    assert _kinds(procedure) == ["dedupe", "select"] and procedure.steps[0].keys == ["依頼者番号"]


@pytest.mark.parametrize(
    ("instruction", "column", "value"),
    [
        ("成績.xlsx の学年列が2の生徒だけにしてExcelで", "学年", 2),
        ("貸切予約.xlsx、キャンセルフラグが1のやつ除外してExcelよろ", "キャンセルフラグ", 1),
    ],
)
def test_a_column_equal_to_a_code_number(instruction: str, column: str, value: int) -> None:
    procedure = read_procedure(instruction)
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.value) == (column, value) and not procedure.gaps


def test_a_period_of_days_in_one_year() -> None:
    procedure = read_procedure(
        "ヒヤリハット.xlsx から、発生日が2024年の4/1〜4/30のものを抜き出してCSVで"
    )
    assert [c.value for c in procedure.steps[0].conditions] == ["2024-04-01", "2024-04-30"]
    assert not procedure.gaps


def test_a_comma_in_parentheses_ends_no_clause() -> None:
    procedure = read_procedure(
        "顧客名簿.csv の住所の表記ゆれ（全角・半角、ハイフンの違いなど）を統一してCSVで出力"
    )
    assert _kinds(procedure) == ["normalize"] and not procedure.gaps


def test_unnamed_files_listed_inside_the_parentheses() -> None:
    procedure = read_procedure(
        "各店のPOSデータ（本店・駅前店・モール店の3ファイル、いずれもCSV）を縦に結合し、"
        "商品名ごとに販売数を合計してExcelで"
    )
    assert [item.holds for item in procedure.inputs] == [
        "本店のPOSデータ",
        "駅前店のPOSデータ",
        "モール店のPOSデータ",
    ]
    assert not procedure.gaps


def test_the_description_of_named_files_asks_nothing() -> None:
    procedure = read_procedure(
        "推薦入試と一般入試の出願者リスト（出願者_推薦.xlsx、出願者_一般.xlsx）を一つにまとめ、"
        "CSVで出力"
    )
    assert _kinds(procedure) == ["concat"] and not procedure.gaps


def test_an_approver_and_a_word_report() -> None:
    procedure = read_procedure(
        "期日管理表.xlsx から、期日が2024/10/1以降の案件を抽出し、"
        "担当弁護士の確認を挟んでからWordで出してください。"
    )
    assert _kinds(procedure) == ["filter", "approval"]
    assert [o.format for o in procedure.outputs] == ["docx"] and not procedure.gaps


def test_a_summary_grouping_yields_to_the_full_one() -> None:
    procedure = read_procedure(
        "営業店別の渉外活動件数を集計したく、ご相談です。渉外活動記録.xlsx から、"
        "活動区分が「訪問」と「電話」のものを対象に、営業店・担当者ごとに何件あるか数えてください。"
        "Excelで"
    )
    aggregate = procedure.steps[-1]
    assert aggregate.group_by == ["営業店", "担当者"] and aggregate.metrics == {
        COUNT_ALL: ["count"]
    }
    assert procedure.steps[0].conditions[0].value == ["訪問", "電話"] and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "tolerance", "window"),
    [
        (
            "供給記録.xlsx と請求.csv を船名コードで突合。金額の差は100円まで許容、"
            "日付のずれは認めません（0日）。Excelで",
            100,
            0,
        ),
        (
            "発注.csv と 納品.csv を発注番号で照合して、数量の差異をチェック。"
            "数量の差は0（完全一致）。結果はExcelで",
            0,
            None,
        ),
    ],
)
def test_exact_matches_said_in_words(
    instruction: str, tolerance: float, window: int | None
) -> None:
    procedure = read_procedure(instruction)
    (step,) = procedure.steps
    assert (step.tolerance, step.date_window_days) == (tolerance, window) and not procedure.gaps


def test_a_column_named_with_a_metric_word_is_sorted_not_totalled() -> None:
    # 「見積総額の高い順」 with no grouping: the rows sorted by the column 見積総額, never a
    # total of the whole table (one row) sorted
    procedure = read_procedure("見積明細.csv を見積総額の高い順に並べてCSVで")
    assert _kinds(procedure) == ["sort"] and procedure.steps[0].by == ["見積総額"]
    computed = read_procedure(
        "通関費用.xlsx で関税額＋消費税額で「諸掛合計」列を作り、"
        "諸掛合計が10万円を超える案件だけにして、諸掛合計の大きい順に並べてExcelに出力"
    )
    assert _kinds(computed) == ["compute", "filter", "sort"]
    assert computed.steps[-1].by == ["諸掛合計"]


def test_a_year_and_later_is_a_number_compared() -> None:
    procedure = read_procedure("在庫車両.xlsx から年式が２０１５年以降の車だけ抜き出してExcelに")
    condition = procedure.steps[0].conditions[0]
    assert (condition.column, condition.op, condition.value) == ("年式", ">=", 2015)


def test_a_condition_is_never_given_the_column_of_the_one_before() -> None:
    procedure = read_procedure(
        "来場者.csv から、来場日が令和7年8月1日以降、かつ希望予算が3,000万円以上の方を抽出してCSVで"
    )
    assert [(c.column, c.op) for c in procedure.steps[0].conditions] == [
        ("来場日", ">="),
        ("希望予算", ">="),
    ]


def test_a_formula_with_parentheses() -> None:
    procedure = read_procedure(
        "区画一覧.csv に「坪単価」列を追加。坪単価＝販売価格÷（土地面積÷3.3058）で計算し、CSVで出力"
    )
    assert procedure.steps[0].expressions == {"坪単価": "販売価格 / (土地面積 / 3.3058)"}
    wrapped = read_procedure("外注費.csv に 税込 列を追加（税込 = 金額 * 1.1）してCSVで")
    assert wrapped.steps[0].expressions == {"税込": "金額 * 1.1"}


def test_a_period_whose_end_omits_the_year() -> None:
    procedure = read_procedure(
        "入港予定表.xlsx より、入港予定日が 2025年7月1日〜7月15日 の本船のみ抽出しCSVで"
    )
    assert [c.value for c in procedure.steps[0].conditions] == ["2025-07-01", "2025-07-15"]


@pytest.mark.parametrize(
    ("instruction", "keys", "keep"),
    [
        ("顧客.csv を 顧客コード で重複除去してCSVで", ["顧客コード"], "first"),
        ("取引先.csv、取引先コードかぶってる行は最後のだけ残してcsvで", ["取引先コード"], "last"),
        (
            "受付.csv で受付日・氏名・電話番号の3つが同じ行は1行だけ残して、CSVで",
            ["受付日", "氏名", "電話番号"],
            "first",
        ),
        ("申込.csvの申込番号の重複を最後の行を残して消して、CSVで", ["申込番号"], "last"),
        ("在籍.csv、社員番号の重複は後の行を残して消して。CSVで", ["社員番号"], "last"),
    ],
)
def test_a_dedupe_said_in_chat_words(instruction: str, keys: list[str], keep: str) -> None:
    procedure = read_procedure(instruction)
    assert _kinds(procedure) == ["dedupe"] and not procedure.gaps
    assert (procedure.steps[0].keys, procedure.steps[0].keep) == (keys, keep)


def test_a_date_window_is_never_an_amount_tolerance() -> None:
    procedure = read_procedure(
        "支払.csv と 請求.xlsx を 伝票番号 で照合。金額は「支払額」列を使い、"
        "日付のずれは3日まで許容。Excelで"
    )
    (step,) = procedure.steps
    assert (step.amount_column, step.tolerance, step.date_window_days) == ("支払額", None, 3)


def test_a_tolerance_in_dollars_and_a_window_said_as_allowed() -> None:
    procedure = read_procedure(
        "請求一覧.xlsx と 支払予定.csv を取引番号で突合してください。"
        "為替の関係で2ドルまでの差は許容、日付は2日ずれてもOKです。Excelで"
    )
    (step,) = procedure.steps
    assert (step.tolerance, step.date_window_days) == (2, 2) and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "file_name", "sheet"),
    [
        (
            "台帳.xlsxのうち区分が「完成」のものを抽出して、完成分.csvというCSVで出力",
            "完成分.csv",
            None,
        ),
        (
            "台帳.csv から金額が30万円以上を抽出し、高額.xlsx というExcelファイルにして",
            "高額.xlsx",
            None,
        ),
        (
            "実績.xlsx を担当者ごとに件数集計。Excel、ファイル名は 担当別.xlsx です。",
            "担当別.xlsx",
            None,
        ),
        ("実績.xlsx を担当者ごとに件数集計し、担当別.xlsx（Excel）として出力", "担当別.xlsx", None),
        (
            "■対象：実績.csv\n■集計：担当者 別に 件数\n■出力：担当別.xlsx（シート名 Q1）",
            "担当別.xlsx",
            "Q1",
        ),
    ],
)
def test_the_output_file_said_with_its_format(
    instruction: str, file_name: str, sheet: str | None
) -> None:
    procedure = read_procedure(instruction)
    assert [(o.file_name, o.sheet) for o in procedure.outputs] == [(file_name, sheet)]
    assert len(procedure.inputs) == 1 and not procedure.gaps


def test_a_column_added_with_its_formula_in_parentheses() -> None:
    procedure = read_procedure(
        "奨学金.xlsx に「減免後授業料」列を追加（年間授業料 − 奨学金額）。Excelで出力。"
    )
    assert procedure.steps[0].expressions == {"減免後授業料": "年間授業料 - 奨学金額"}


def test_a_formula_is_not_taken_for_columns_a_join_brings() -> None:
    procedure = read_procedure(
        "出来高.xlsx と 台帳.xlsx を「工事番号」で結合し、"
        "出来高率＝累計出来高÷請負金額 の列を追加して、Excelで出力"
    )
    assert _kinds(procedure) == ["join", "compute"]
    assert procedure.steps[0].fields == []
    assert procedure.steps[1].expressions == {"出来高率": "累計出来高 / 請負金額"}


def test_a_formula_that_names_no_column_is_asked() -> None:
    procedure = read_procedure("見積.csv で単価×数量を出してExcelに")
    assert [gap.kind for gap in procedure.gaps] == ["not_understood"]
    assert "単価×数量" in procedure.gaps[0].message


@pytest.mark.parametrize(
    ("instruction", "condition"),
    [
        (
            "手順1 納付.csv を読み込む\n手順2 「入金日」が空欄の行を抽出\n手順3 CSVで出力",
            ("入金日", "is_null", None),
        ),
        ("実績.csv の等級「秀」だけで、品目ごとに単価の平均。Excelで", ("等級", "==", "秀")),
        (
            "入金.csv のうち、摘要に「授業料」を含み、金額の大きい順に。CSVで",
            ("摘要", "contains", "授業料"),
        ),
        ("工事台帳.xlsx\n→ 着工日 ２０２４/４/１以降\n→ CSV", ("着工日", ">=", "2024-04-01")),
    ],
)
def test_conditions_said_tersely(instruction: str, condition: tuple[object, ...]) -> None:
    procedure = read_procedure(instruction)
    (first,) = procedure.steps[0].conditions
    assert (first.column, first.op, first.value) == condition and not procedure.gaps


def test_tables_joined_by_a_key_with_tsunagu() -> None:
    procedure = read_procedure("名簿.xlsx と 申請.csv を学籍番号でつないで、CSVで出力")
    assert _kinds(procedure) == ["join"] and procedure.steps[0].keys == ["学籍番号"]
    assert not procedure.gaps


def test_a_unit_in_parentheses_is_no_part_of_the_name_and_a_quoted_name_no_action() -> None:
    procedure = read_procedure(
        "漏水.xlsx で区域名別に「推定漏水量」列（単位：㎥/日）の合計と"
        "「単価（円/kg）」の平均。Excelで"
    )
    assert _kinds(procedure) == ["aggregate"]
    assert procedure.steps[0].metrics == {"推定漏水量": ["sum"], "単価": ["mean"]}


def test_the_count_beside_a_metric_counts_rows() -> None:
    procedure = read_procedure("出荷.csv を品目ごとに単価の平均と件数を出して。Excelで")
    assert procedure.steps[0].metrics == {"単価": ["mean"], COUNT_ALL: ["count"]}


def test_a_tie_break_in_parentheses_and_a_key_said_short() -> None:
    tie = read_procedure("支払.xlsx を支払予定日が早い順（同日は業者名順）に並べ、CSVで出力")
    assert tie.steps[0].by == ["支払予定日", "業者名"] and not tie.gaps
    short = read_procedure(
        "台帳.xlsx から認定有効期間終了日が2025/8/31以前の人を抽出し、終了日の早い順に並べてCSVで"
    )  # 終了日 may be a column of its own: asked, never guessed
    assert short.steps[-1].by == ["終了日"]
    assert any("「認定有効期間終了日」" in gap.message for gap in short.gaps)


def test_data_to_be_fetched_from_a_system_is_refused() -> None:
    procedure = read_procedure(
        "基幹システムから先月分の購買データを落としてきて、組合員別に購買金額を合計しておいてください。"
    )
    assert "missing_source" in [gap.kind for gap in procedure.gaps]
    exported = read_procedure(
        "基幹システムから落とした購買.csv を組合員別に購買金額を合計してExcelで"
    )
    assert not exported.gaps


@pytest.mark.parametrize(
    ("instruction", "by"),
    [
        ("納付.csv を学年、クラスの順で昇順に並べ替えてCSVで", ["学年", "クラス"]),
        ("名簿.xlsx を担当者の五十音順（昇順）で並べてExcelで", ["担当者"]),
    ],
)
def test_orders_said_as_a_list_or_in_kana_order(instruction: str, by: list[str]) -> None:
    procedure = read_procedure(instruction)
    assert [(s.kind, s.by, s.descending) for s in procedure.steps] == [("sort", by, False)]
    assert not procedure.gaps


def test_words_of_context_ask_for_nothing() -> None:
    also = read_procedure(
        "注文.csv で注文番号が同じものは1件にして、"
        "あわせて品名の表記ゆれ（全角/半角、スペース）も直した上でExcelに出してください。"
    )
    assert _kinds(also) == ["normalize", "dedupe"] and not also.gaps
    state = read_procedure(
        "名簿が本部用（名簿_本部.xlsx）と支所用（名簿_支所.xlsx）の2つに分かれてしまっていて困っています。"
        "縦に結合して社員番号の重複を削除し、Excelで出力"
    )
    assert _kinds(state) == ["concat", "dedupe"] and not state.gaps
    practice = read_procedure(
        "毎月、利用者ごとの報酬の合計を確認しています。"
        "実績.csv について、利用者番号ごとに請求額を合計したものをCSVで作っていただけますか。"
    )
    assert [(s.group_by, s.metrics) for s in practice.steps] == [
        (["利用者番号"], {"請求額": ["sum"]})
    ]
    assert not practice.gaps


def test_a_step_referred_back_to_asks_for_nothing_more() -> None:
    procedure = read_procedure(
        "台帳.xlsx で要介護度が「要介護3」の人だけに絞れますか？"
        "絞ったあと地区ごとの人数を出して、CSVでほしいです。"
    )
    assert _kinds(procedure) == ["filter", "aggregate"] and not procedure.gaps


def test_condition_lines_pointed_at_by_the_request() -> None:
    procedure = read_procedure(
        "出荷.csv\n品目：トマト、ミニトマト\n出荷量（ｋｇ）：１００以上\n上記条件で抽出し、CSV出力"
    )
    conditions = [(c.column, c.op, c.value) for c in procedure.steps[0].conditions]
    assert sorted(conditions, key=str) == sorted(
        [("出荷量", ">=", 100), ("品目", "in", ["トマト", "ミニトマト"])], key=str
    )
    assert not procedure.gaps
    unpointed = read_procedure("出荷.csv\n品目：トマト\n出荷量の合計を出してCSV出力")
    assert "filter" not in _kinds(unpointed)


@pytest.mark.parametrize(
    "instruction",
    [
        "A.xlsx と B.csv → 業者コードで突合 → 金額は「支払額」、差額1千円までは一致扱い → Excelで",
        "・元：A.xlsx\n・先：B.csv\n・キー：業者コード\n・照合する金額：支払額（差額1000円まで）\n・出力：Excel",
    ],
)
def test_the_amount_compared_said_by_its_role(instruction: str) -> None:
    (step,) = read_procedure(instruction).steps
    assert (step.keys, step.amount_column, step.tolerance) == (["業者コード"], "支払額", 1000)


def test_a_key_with_a_slash_is_one_name() -> None:
    (step,) = read_procedure("請求.xlsx と 支払.csv を B/L番号 で突合してExcelで").steps
    assert step.keys == ["B/L番号"]


def test_columns_kept_said_with_nokosu() -> None:
    procedure = read_procedure("申込.csv の学籍番号・氏名・クラスの列を残してCSVにしてください")
    assert [(s.kind, s.columns) for s in procedure.steps] == [
        ("select", ["学籍番号", "氏名", "クラス"])
    ]


def test_the_soonest_first_and_units_or_tax_notes_in_parentheses() -> None:
    soon = read_procedure("受注.xlsx 納期が近い順に並べ替えてエクセルで")
    assert [(s.by, s.descending) for s in soon.steps] == [(["納期"], False)] and not soon.gaps
    unit = read_procedure(
        "在庫.xlsx で在庫数（連）が２０以下、費用（税込）が1万円以上の用紙。CSVで"
    )
    columns = [c.column for c in unit.steps[0].conditions]
    assert columns == ["在庫数", "費用"] and not unit.gaps


def test_a_formula_said_beside_its_column() -> None:
    after = read_procedure(
        "日報.csvに「燃費」という列を作ってもらえますか（走行距離÷給油量）。CSVで"
    )
    assert after.steps[0].expressions == {"燃費": "走行距離 / 給油量"} and not after.gaps
    apart = read_procedure(
        "返還.xlsx に「返還額」の列を足してください。計算は 敷金 − 修繕費 です。Excelで"
    )
    assert apart.steps[0].expressions == {"返還額": "敷金 - 修繕費"} and not apart.gaps


def test_kept_columns_listed_with_slashes_are_no_formula() -> None:
    procedure = read_procedure("修繕.xlsx\n・残す列は 物件名／部屋番号／費用\n・CSVで出力")
    assert [(s.kind, s.columns) for s in procedure.steps] == [
        ("select", ["物件名", "部屋番号", "費用"])
    ]


def test_wishes_told_as_context_and_a_filter_said_before_its_verb() -> None:
    wish = read_procedure(
        "経費の見直しを進めており、まずは車両ごとの実態を把握したいと考えています。"
        "給油.xlsx のうち燃料種別が軽油のものに限定し、車両番号ごとに給油金額を合計してください。"
        "Excelで"
    )
    assert _kinds(wish) == ["filter", "aggregate"] and not wish.gaps
    assert wish.steps[1].group_by == ["車両番号"]
    reason = read_procedure(
        "受注金額500千円以上の案件だけ確認したいので、受注.xlsxから絞り込んでExcelに出力してください。"
    )
    assert _kinds(reason) == ["filter"] and not reason.gaps


def test_a_file_named_for_its_month_and_a_file_name_with_okurigana() -> None:
    month = read_procedure("令和7年3月分の入金.csvです。号棟ごとの未収額の合計を出してCSVで")
    assert _kinds(month) == ["aggregate"] and not month.gaps
    named = read_procedure("検品.csv で検品者が空欄の行を、「検品漏れ.csv」というCSVで出して")
    assert [o.file_name for o in named.outputs] == ["検品漏れ.csv"] and len(named.inputs) == 1


def test_not_equal_sign_and_keys_joined_with_plus() -> None:
    sign = read_procedure("勤怠.xlsx：勤務区分≠公休の行のみ → csv")
    (condition,) = sign.steps[0].conditions
    assert (condition.column, condition.op, condition.value) == ("勤務区分", "!=", "公休")
    plus = read_procedure("名簿.xlsx でオーナー名＋電話番号が同じ行を1件にまとめて。Excelで")
    assert plus.steps[0].keys == ["オーナー名", "電話番号"]


def test_an_amount_column_compared_between_both_files() -> None:
    (step,) = read_procedure(
        "発注.xlsx と 請求.csv を発注番号で照合し、"
        "両方にある「外注費」の列を比べてください。Excelで"
    ).steps
    assert step.amount_column == "外注費"


def test_a_threshold_before_a_dedupe_is_kept_and_the_order_is_the_instructions() -> None:
    procedure = read_procedure("寄付.csv → 寄付金額 10,000円以上 → 寄付者IDで重複削除 → xlsx")
    assert _kinds(procedure) == ["filter", "dedupe"]
    (condition,) = procedure.steps[0].conditions
    assert (condition.column, condition.op, condition.value) == ("寄付金額", ">=", 10000)
    later = read_procedure("寄付.csv を寄付者IDで重複削除してから寄付金額が1万円以上の行をxlsxで")
    assert _kinds(later) == ["dedupe", "filter"]


def test_a_group_key_said_short_after_the_full_name_is_asked() -> None:
    procedure = read_procedure(
        "販売チャネル の表記がバラバラなので正規化してから、チャネルごとの件数を出して。CSVで"
    )
    assert any("「販売チャネル」" in gap.message for gap in procedure.gaps)
    own = read_procedure(
        "売上.csvで、上位部門が「営業本部」の行だけ、部門ごとに金額を合計。Excelで"
    )
    assert own.steps[-1].group_by == ["部門"] and own.gaps  # 部門 is no 上位部門: asked


def test_a_photo_of_papers_is_a_document_read_by_a_model() -> None:
    procedure = read_procedure(
        "宿泊者名簿（手書きを撮った画像）から氏名・国籍を読み取って、国籍が日本以外の人だけエクセルに"
    )
    assert procedure.inputs[0].format == "pdf" and _kinds(procedure)[0] == "extract"


def test_a_period_ending_in_month_and_day() -> None:
    procedure = read_procedure("予約.csv でチェックイン日が2025/8/1～8/31のものをxlsxで")
    conditions = [(c.op, c.value) for c in procedure.steps[0].conditions]
    assert conditions == [(">=", "2025-08-01"), ("<=", "2025-08-31")] and not procedure.gaps


def test_a_computed_column_after_a_join_and_a_title_naming_the_step() -> None:
    joined = read_procedure(
        "「勤怠.csv」と「単価.xlsx」をスタッフIDで結合し、"
        "実働時間(h)×請求単価(円)で「請求額」という列を追加してください。Excelで"
    )
    assert _kinds(joined) == ["join", "compute"] and not joined.gaps
    assert joined.steps[1].expressions == {"請求額": "実働時間 * 請求単価"}
    titled = read_procedure(
        "精算の突合手順\n1. 予約.csv と 精算.xlsx を読み込む\n"
        "2. 予約番号をキーに突合。金額は両方にある「宿泊料金」で比べる\n"
        "3. 差額が100円以内なら一致扱い\n4. Excelで保存"
    )
    (step,) = titled.steps
    assert (step.kind, step.keys, step.amount_column, step.tolerance) == (
        "reconcile",
        ["予約番号"],
        "宿泊料金",
        100,
    )


def test_what_is_going_to_happen_and_a_signature_ask_for_nothing() -> None:
    procedure = read_procedure(
        "来月から部門別の点検を月次で回すことになり、その準備のお願いです。"
        "経費.csv を部門ごとに金額を合計してExcelで。\n経理課 田村\n内線 2214"
    )
    assert _kinds(procedure) == ["aggregate"] and not procedure.gaps


def test_a_column_made_with_tsukuru_and_its_formula_in_parentheses() -> None:
    procedure = read_procedure(
        "管理表.xlsx に「未執行額」列をつくりたいです（採択額 − 執行済額）。Excelで"
    )
    assert procedure.steps[0].expressions == {"未執行額": "採択額 - 執行済額"}


def test_a_noun_with_okurigana_and_latin_letters_is_one_name() -> None:
    (step,) = read_procedure("予約.csv で予約日・飼い主IDの2つが同じ行は1行だけ残して、CSVで").steps
    assert step.keys == ["予約日", "飼い主ID"]


def test_a_mail_subject_signature_and_notation_words_ask_for_nothing() -> None:
    procedure = read_procedure(
        "件名：漏水調査の集計について\n\n各位\n\n漏水.xlsx を用い、区域名別に件数を出すこと。"
        "地区名と業者名の表記（全角半角、大文字小文字など）を統一すること。\n"
        "結果はExcel形式にて提出願います。\n\n給水課　係長　田村"
    )
    assert _kinds(procedure) == ["normalize", "aggregate"] and not procedure.gaps
    assert procedure.steps[0].columns == ["地区名", "業者名"]
    assert procedure.outputs[0].format == "excel"


def test_a_file_returned_and_a_file_read_with_a_word_like_return() -> None:
    returned = read_procedure(
        "寄港.xlsx と 港コード.csv を港名で結合し、"
        "港コード・港名の列だけ残してExcelで返却してください"
    )
    assert _kinds(returned) == ["join", "select"] and not returned.gaps
    read = read_procedure(
        "貸出台帳.xlsx で返却日が入っているものについて、部署ごとの件数をお願いします。"
    )
    assert read.outputs == [] and [i.source for i in read.inputs] == ["貸出台帳.xlsx"]


def test_stacked_said_twice_and_a_column_made_with_its_formula_after_retsu() -> None:
    stacked = read_procedure(
        "北.xlsx、南.xlsx、東.xlsx を1つの表に縦結合したうえで、"
        "受付日が2025/4/1以降のものだけ。Excelで"
    )
    assert _kinds(stacked) == ["concat", "filter"] and not stacked.gaps
    formula = read_procedure(
        "検針.csv の「使用量比」列を 今回使用水量 ÷ 前回使用水量 で計算してCSVで"
    )
    assert formula.steps[0].expressions == {"使用量比": "今回使用水量 / 前回使用水量"}


def test_columns_kept_said_with_ni_suru() -> None:
    procedure = read_procedure("出庫.csv\n1）施行番号、品名、出庫数 の3列にする\n2）Excelで保存")
    assert [(s.kind, s.columns) for s in procedure.steps] == [
        ("select", ["施行番号", "品名", "出庫数"])
    ]


def test_the_result_file_named_after_its_format_is_no_input() -> None:
    procedure = read_procedure(
        "台帳_本店.xlsx、台帳_支店.xlsx を1つにまとめたい。施行番号で重複を消して。"
        "エクセル１ファイルで「台帳_全社.xlsx」。"
    )
    assert [i.source for i in procedure.inputs] == ["台帳_本店.xlsx", "台帳_支店.xlsx"]
    assert [o.file_name for o in procedure.outputs] == ["台帳_全社.xlsx"]


def test_a_payment_asked_for_is_refused() -> None:
    procedure = read_procedure(
        "供花注文.csv の金額を花店名ごとに合計して、そのまま振込まで済ませておいてもらえますか。"
    )
    assert "unsupported_action" in [gap.kind for gap in procedure.gaps]


def test_a_settings_block_is_read_as_the_sentences_it_stands_for() -> None:
    procedure = read_procedure(
        "【設定】\n入力ファイル：返品.csv\n対象期間：2025年4月1日～2025年9月30日（返品日）\n"
        "除外：返品理由が「期限切れ」のもの\n集計単位：得意先コード、商品コード\n"
        "集計値：返品数量の合計、返品金額の合計\n並び順：返品金額 降順\n出力形式：CSV"
    )
    filtered, totalled, ordered = procedure.steps
    assert [(c.column, c.op, c.value) for c in filtered.conditions] == [
        ("返品日", ">=", "2025-04-01"),
        ("返品日", "<=", "2025-09-30"),
        ("返品理由", "!=", "期限切れ"),
    ]
    assert totalled.group_by == ["得意先コード", "商品コード"]
    assert totalled.metrics == {"返品数量": ["sum"], "返品金額": ["sum"]}
    assert (ordered.by, ordered.descending) == (["返品金額"], True)
    assert procedure.outputs[0].format == "csv" and not procedure.gaps


def test_words_of_a_first_time_user_ask_for_nothing() -> None:
    procedure = read_procedure(
        "すみません、こういうツールは初めてで…。申込.xlsx に同じ人が何回も申し込んでいて"
        "重複しているんですが、会員番号が同じ行を1つにまとめて、Excelで出してもらえますか。"
    )
    assert _kinds(procedure) == ["dedupe"] and not procedure.gaps


def test_a_column_said_with_tte_and_the_output_format_said_before_its_name() -> None:
    computed = read_procedure(
        "受注.csv に 単価×数量 で「受注金額」って列を足してエクセルで出して～"
    )
    assert computed.steps[0].expressions == {"受注金額": "単価 * 数量"} and not computed.gaps
    named = read_procedure(
        "記録.csv で指導員ごとの評価の平均って出せます？ "
        "エクセルでほしいです、ファイル名は 評価.xlsx で。"
    )
    assert [i.source for i in named.inputs] == ["記録.csv"] and not named.gaps
    assert [o.file_name for o in named.outputs] == ["評価.xlsx"]


def test_conditions_with_a_per_unit_amount_an_adverb_a_space_and_plus_minus() -> None:
    per_kg = read_procedure("競り.xlsx のうち落札単価が1kgあたり3,000円を超えるものをExcelで")
    assert [(c.column, c.op, c.value) for c in per_kg.steps[0].conditions] == [
        ("落札単価", ">", 3000)
    ]
    still = read_procedure("名簿.xlsx で在籍状況がまだ「在籍」の人を、期限が近い順でcsvに")
    assert still.steps[0].conditions[0].value == "在籍" and not still.gaps
    blank = read_procedure("名簿.xlsx、担当指導員 空欄の人のみ。入所日順(新→古)。csv。")
    assert [(c.column, c.op) for c in blank.steps[0].conditions] == [("担当指導員", "is_null")]
    assert (blank.steps[1].by, blank.steps[1].descending) == (["入所日"], True)
    tolerance = read_procedure(
        "競り.xlsx と 入金.csv を買受人コードで突合。±1千円までは許容。CSVで"
    )
    assert tolerance.steps[0].tolerance == 1000


def test_units_and_tax_together_in_parentheses() -> None:
    procedure = read_procedure("台帳.xlsx を担当者別に、件数と施行金額（税込・円）の合計。Excelで")
    assert procedure.steps[0].metrics == {COUNT_ALL: ["count"], "施行金額": ["sum"]}


def test_what_is_done_today_is_context_not_the_step() -> None:
    procedure = read_procedure(
        "お疲れ様です。毎月末、得意先ごとの請求と入金を目視で突き合わせており、"
        "時間がかかっているためご相談させてください。"
        "添付の「請求.csv」と「入金.csv」を、得意先コードと請求番号をキーにして"
        "照合していただけますでしょうか。結果はExcelで。"
    )
    assert [(s.kind, s.keys) for s in procedure.steps] == [
        ("reconcile", ["得意先コード", "請求番号"])
    ]
    assert not procedure.gaps


def test_how_a_file_was_made_describes_it() -> None:
    stacked = read_procedure(
        "本館と別館で別々に出している売上CSV（honkan.csv と bekkan.csv）を縦に1本にまとめて、"
        "品目ごとに金額を合計してExcelで"
    )
    assert _kinds(stacked) == ["concat", "aggregate"] and not stacked.gaps
    kept = read_procedure(
        "一覧.xlsx で通貨がUSDのものを、請求日の新しい順に並べ、"
        "取引先、金額、請求日の列だけ残したCSVをください"
    )
    assert _kinds(kept) == ["filter", "select", "sort"]


def test_undecided_said_blank_in_parentheses_keeps_the_blank_rows() -> None:
    procedure = read_procedure(
        "手配表.xlsx で、担当ガイドが未定（空欄）のツアーを出発日の早い順でExcelに"
    )
    (condition,) = procedure.steps[0].conditions
    assert (condition.column, condition.op) == ("担当ガイド", "is_null")


def test_a_question_how_many_is_read_or_named_never_dropped() -> None:
    procedure = read_procedure(
        "手配表.xlsx で、担当者が保留扱いのツアーってどれくらいある？Excelにして"
    )
    assert procedure.gaps


def test_columns_said_as_what_is_needed() -> None:
    procedure = read_procedure(
        "予約.xlsx から見積金額が30万円以上を拾って。"
        "必要なのは団体名、人数、見積金額の3項目。CSVに。"
    )
    assert _kinds(procedure) == ["filter", "select"]
    assert procedure.steps[1].columns == ["団体名", "人数", "見積金額"]


def test_an_approval_said_twice_and_the_output_it_gates() -> None:
    procedure = read_procedure(
        "精算表を作る前に課長の承認を挟みたいです。"
        "精算.csv を添乗員コードごとに立替金額を合計して、"
        "エクセルで出力。ただし出力は営業課長がOKしてから。"
    )
    assert _kinds(procedure) == ["aggregate", "approval"] and not procedure.gaps


def test_a_grouping_said_short_in_a_summary_and_in_full_as_grouped() -> None:
    procedure = read_procedure(
        "コース別・月別の平均乗車率を見たいです。運行.xlsx をコース名と運行月でグループ化して、"
        "乗車率(%)の平均を出してください。Excelで。"
    )
    assert procedure.steps[0].group_by == ["コース名", "運行月"] and not procedure.gaps


def test_one_row_each_and_notation_words() -> None:
    procedure = read_procedure(
        "得意先.csv の医院名と電話番号の全角半角・スペースの揺れを揃えてから、"
        "医院名＋電話番号で重複を消して、1件ずつにしてください。CSVで"
    )
    assert _kinds(procedure) == ["normalize", "dedupe"] and not procedure.gaps


def test_a_wish_told_before_asking_for_advice_is_context() -> None:
    procedure = read_procedure(
        "お疲れ様です。来月のツアー別の予約状況をまとめたく、ご相談です。\n"
        "添付の「予約.xlsx」について、ツアーコードごとに予約人数を合計してください。Excelで。"
    )
    assert [s.group_by for s in procedure.steps] == [["ツアーコード"]] and not procedure.gaps


def test_how_many_values_were_listed_is_no_threshold() -> None:
    procedure = read_procedure(
        "利用.csv から、クラスが「ひよこ」「うさぎ」「きりん」の3クラスのもので、"
        "保育料が3,000円以上の園児を出してください。CSVで"
    )
    columns = [(c.column, c.op) for c in procedure.steps[0].conditions]
    assert sorted(columns) == [("クラス", "in"), ("保育料", ">=")] and not procedure.gaps


def test_a_column_whose_name_ends_like_a_file_word_with_a_quoted_value() -> None:
    procedure = read_procedure("振替.csv で振替結果が「不能」の行だけにして、Excelで")
    (condition,) = procedure.steps[0].conditions
    assert (condition.column, condition.value) == ("振替結果", "不能")


def test_formulas_in_parentheses_named_after_and_said_with_mo() -> None:
    procedure = read_procedure(
        "収支.xlsx の（参加費 − 宿泊原価 − バス原価）を「粗利」として計算、"
        "さらに 粗利 ÷ 参加費 で「粗利率」も。Excelで"
    )
    assert [s.expressions for s in procedure.steps] == [
        {"粗利": "参加費 - 宿泊原価 - バス原価"},
        {"粗利率": "粗利 / 参加費"},
    ]
    assert not procedure.gaps


def test_the_first_and_last_date_per_group() -> None:
    procedure = read_procedure(
        "教習記録.xlsx から、教習生番号ごとに最初の教習日と最後の教習日、"
        "あと時限数の合計を出して。CSVで"
    )
    assert procedure.steps[0].metrics == {"教習日": ["min", "max"], "時限数": ["sum"]}
    assert not procedure.gaps


def test_a_result_referred_back_to_and_a_master_attached_by_a_key() -> None:
    procedure = read_procedure(
        "返品.csv から返品理由が「破損」のものを抜き出してください。"
        "抜き出したものに、商品マスタ.xlsx を商品コードで付けてほしいです。Excelで"
    )
    assert _kinds(procedure) == ["join", "filter"] and not procedure.gaps
    assert procedure.steps[0].keys == ["商品コード"]


def test_a_column_just_computed_totalled_per_group_and_the_group_keyed_by_a_column() -> None:
    procedure = read_procedure(
        "競り.csv の落札単価と数量をかけて金額を出して、"
        "それを買受人ごとに足す、みたいなことってできますか。"
        "新しい列の名前は「金額」、買受人は買受人コードでまとめてください。CSVで"
    )
    assert [(s.kind, s.group_by, s.metrics) for s in procedure.steps][1] == (
        "aggregate",
        ["買受人コード"],
        {"金額": ["sum"]},
    )


def test_a_file_described_per_group_is_no_grouping() -> None:
    procedure = read_procedure(
        "教習生ごとの請求データ（請求.xlsx）と入金データ（入金.csv）を教習生番号で照合して。Excelで"
    )
    assert _kinds(procedure) == ["reconcile"] and not procedure.gaps


def test_a_list_alone_is_kept_columns_when_one_is_a_column_elsewhere() -> None:
    kept = read_procedure("名簿.xlsx、入所日順(古→新)。教習生番号・氏名・入所日・車種だけ。csv。")
    assert [(s.kind, s.columns) for s in kept.steps if s.kind == "select"] == [
        ("select", ["教習生番号", "氏名", "入所日", "車種"])
    ]
    values = read_procedure("売上.xlsx、東京・大阪・福岡だけ。csv。")
    assert "select" not in _kinds(values)


def test_a_side_of_a_table_names_no_column_and_the_output_said_by_its_name() -> None:
    procedure = read_procedure(
        "得意先マスタ.xlsx・受注明細.csv 受注明細側の得意先名にゆれあり → 得意先名をそろえる → "
        "得意先名で結合 → xlsx、名前は 名寄せ.xlsx"
    )
    assert procedure.steps[0].columns == ["得意先名"]
    assert [o.file_name for o in procedure.outputs] == ["名寄せ.xlsx"] and not procedure.gaps


@pytest.mark.parametrize(
    ("instruction", "groups", "metrics"),
    [
        (
            "利用.xlsxの請求額、居室タイプ別に合計してエクセルで",
            ["居室タイプ"],
            {"請求額": ["sum"]},
        ),
        ("交通費.csv の交通費、総額だけ出してもらえる？", [], {"交通費": ["sum"]}),
        (
            "客単価.csvで店舗別に客単価の平均・最小・最大出してCSVで",
            ["店舗"],
            {"客単価": ["mean", "min", "max"]},
        ),
        (
            "模試.xlsx から、クラス別に得点の平均・最高点・最低点を出して。Excelで",
            ["クラス"],
            {"得点": ["mean", "max", "min"]},
        ),
    ],
)
def test_the_measured_column_said_as_a_topic_or_with_a_list_of_metrics(
    instruction: str, groups: list[str], metrics: dict[str, list[str]]
) -> None:
    procedure = read_procedure(instruction)
    assert [(s.group_by, s.metrics) for s in procedure.steps] == [(groups, metrics)]
    assert not procedure.gaps


def test_a_small_code_number_at_a_clause_end_and_a_dedupe_keyed_per_column() -> None:
    code = read_procedure("成績.xlsx から学年が2、かつ出席率が80未満の学生をCSVで")
    assert ("学年", "==", 2) in [(c.column, c.op, c.value) for c in code.steps[0].conditions]
    per = read_procedure("名簿.xlsx、会員番号ごとに最後の行を残す形で重複を削除し、Excelで")
    assert [(s.kind, s.keys, s.keep) for s in per.steps] == [("dedupe", ["会員番号"], "last")]


def test_a_step_said_as_a_noun_is_read_or_named_never_dropped() -> None:
    extracted = read_procedure(
        "出荷.xlsx から、品目区分が 野菜・果物 のうち何か のものを抽出、出荷日昇順のExcelに。"
    )
    assert extracted.gaps or any(s.kind == "filter" for s in extracted.steps)
    ordered = read_procedure("実績.xlsx で、担当者で並べ替え（昇順）してCSVに出力して下さい。")
    assert [(s.kind, s.by) for s in ordered.steps] == [("sort", ["担当者"])]
    pointed = read_procedure("成績.xlsx から以下を抽出\n・学年が2\n・CSVで出力")
    assert not pointed.gaps


def test_settings_lines_for_a_reconciliation() -> None:
    procedure = read_procedure(
        "照合してください。\n・入出金.csv\n・台帳.xlsx\n突合キー＝案件番号\n金額列＝金額\n"
        "金額の許容差＝0円\n日付のずれ＝5日以内\n結果はExcelで"
    )
    (step,) = procedure.steps
    assert (step.keys, step.amount_column, step.tolerance, step.date_window_days) == (
        ["案件番号"],
        "金額",
        0,
        5,
    )


def test_groups_said_with_tani_and_de_matomete_and_a_count_of_people() -> None:
    procedure = read_procedure(
        "区域ごとに、部数の合計と読者数を出したい。ファイル→明細.xlsx。区域コードでまとめてください、Excelで"
    )
    (step,) = procedure.steps
    assert step.group_by == ["区域コード"] and step.metrics == {
        "部数": ["sum"],
        COUNT_ALL: ["count"],
    }
    unit = read_procedure("作業.csv、物件コード単位で作業時間（分）の平均。CSVで")
    assert unit.steps[0].group_by == ["物件コード"]


@pytest.mark.parametrize(
    ("instruction", "by", "descending"),
    [
        ("明細.csv の精算日が空の行を、受領日の古いものから順にエクセルで", ["受領日"], False),
        ("申込.csv を申込日順（古い→新しい）でCSV", ["申込日"], False),
        (
            "作業.xlsx を作業日と物件コードで並べて（どちらも昇順）、CSVで",
            ["作業日", "物件コード"],
            False,
        ),
    ],
)
def test_more_ways_to_say_an_order(instruction: str, by: list[str], descending: bool) -> None:
    procedure = read_procedure(instruction)
    (ordered,) = [s for s in procedure.steps if s.kind == "sort"]
    assert (ordered.by, ordered.descending) == (by, descending) and not procedure.gaps


def test_an_order_no_rule_read_is_named_and_other_jun_words_are_not() -> None:
    unread = read_procedure("名簿.xlsx、入所日順（新旧）。csv。")
    assert "sort" not in [s.kind for s in unread.steps] and unread.gaps
    words = read_procedure(
        "今年は天候不順で出荷量が例年より少なく、部会でも話題になっております。"
        "以下の順で処理をお願いします。\n1. 出荷.csv を品目別に数量を合計\n2. Excelで"
    )
    assert not words.gaps


def test_keys_said_outright_and_columns_kept_by_count() -> None:
    keyed = read_procedure("請求.csv と 実績.xlsx を、作業番号をキーにして金額で照合。Excelで")
    assert keyed.steps[0].keys == ["作業番号"]
    shared = read_procedure(
        "案件.xlsx と 報酬.csv、案件番号が共通なのでそれで結合してください。"
        "結合後は案件番号・依頼者名・請求額の3つを残し、CSVで"
    )
    assert [(s.kind, s.keys or s.columns) for s in shared.steps] == [
        ("join", ["案件番号"]),
        ("select", ["案件番号", "依頼者名", "請求額"]),
    ]
    assert not shared.gaps


def test_a_restated_exclusion_keeps_the_condition_and_a_code_with_digits() -> None:
    kept = read_procedure(
        "退去立会日 が入っている物件だけ（空白は除外）、予定表.xlsx から抜き出したい。Excelで"
    )
    (condition,) = kept.steps[0].conditions
    assert (condition.column, condition.op) == ("退去立会日", "not_null")
    code = read_procedure(
        "対象：台帳.xlsx\n条件：配達区域 ＝ 北3区\n並び：開始日（新しい順）\n形式：CSV"
    )
    assert ("配達区域", "==", "北3区") in [
        (c.column, c.op, c.value) for s in code.steps for c in s.conditions
    ]


# The review of this session's rules: each instruction below was read wrongly and reported
# success (or crashed) by an earlier version of these rules.


def test_an_exclusion_after_an_arrow_keeps_the_other_rows() -> None:
    procedure = read_procedure("売上.csv → 金額が0円の行 → 削除 → 部門別に金額を合計 → xlsx")
    assert [(c.column, c.op, c.value) for c in procedure.steps[0].conditions] == [("金額", "!=", 0)]


def test_a_value_and_everything_else() -> None:
    for text in (
        "顧客.csvのうち、ステータスが「完了」のもの以外を抽出してCSVで",
        "顧客.csvのうち、ステータスがすでに「完了」になっているもの以外を抽出してCSVで",
    ):
        (condition,) = read_procedure(text).steps[0].conditions
        assert (condition.column, condition.op, condition.value) == ("ステータス", "!=", "完了")


def test_the_newer_row_kept_said_in_other_words() -> None:
    for text in (
        "申込.csv の申込者IDの重複は新しいほうを残して削除してCSVで",
        "申込.csv の申込者IDの重複は後に登録された行を残して削除。CSVで",
    ):
        assert read_procedure(text).steps[0].keep == "last"


def test_a_request_said_like_what_is_done_every_month_is_read() -> None:
    procedure = read_procedure(
        "いつも担当者ごとに売上金額を合計しています。今月分の売上.csvでも同様にお願いします。Excelで"
    )
    assert [(s.group_by, s.metrics) for s in procedure.steps] == [
        (["担当者"], {"売上金額": ["sum"]})
    ]
    excluded = read_procedure(
        "今月から返品分は除外することになりました。売上.csvを店舗別に合計。Excelで"
    )
    assert excluded.gaps
    filtered = read_procedure(
        "金額が1万円以上のものに絞った売上.csvを、店舗別に金額を合計してExcelで"
    )
    assert [s.kind for s in filtered.steps] == ["filter", "aggregate"]


def test_a_dedupe_said_to_run_before_the_filter() -> None:
    procedure = read_procedure(
        "会員.csvから、ステータスが「有効」の会員だけ抽出してください。"
        "なお、抽出の前に会員番号の重複は最新の行を残して削除しておいてください。CSVで"
    )
    assert [s.kind for s in procedure.steps] == ["dedupe", "filter"]


def test_numbers_with_separators_and_lists_are_never_cut() -> None:
    price = read_procedure("商品.csvで、単価が1,980円、かつ在庫が10個以上のものをCSVで")
    assert ("単価", "==", 1) not in [(c.column, c.op, c.value) for c in price.steps[0].conditions]
    assert price.gaps
    grades = read_procedure("名簿.csv で学年が1、2年の生徒をCSVで")
    assert grades.gaps and not any(c.value == 1 for s in grades.steps for c in s.conditions)
    listed = read_procedure("勤怠.xlsx で勤務区分≠公休または有休の行をcsvで")
    assert listed.gaps
    filled = read_procedure("勤怠.xlsx で担当≠空欄の行だけcsvで")
    assert [(c.column, c.op) for c in filled.steps[0].conditions] == [("担当", "not_null")]
    amount = read_procedure("明細.csv で金額 != 1,000 の行をCSVで")
    assert [(c.op, c.value) for c in amount.steps[0].conditions] == [("!=", 1000)]


def test_a_qualified_topic_and_a_date_range_into_the_next_year() -> None:
    topic = read_procedure("経費.xlsx。営業部の交通費、担当者ごとに合計してください。")
    assert not any(s.metrics == {"交通費": ["sum"]} for s in topic.steps)
    crossing = read_procedure("予約.csv でチェックイン日が2025/12/20～1/10のものをxlsxで")
    assert [c.value for c in crossing.steps[0].conditions] == ["2025-12-20", "2026-01-10"]
    impossible = read_procedure("売上.csv の日付が2025/2/30以降の行をCSVで")
    assert "2025/2/30" in impossible.gaps[0].message and not impossible.steps


def test_settings_lines_that_say_nothing_or_a_bare_exclusion() -> None:
    bare = read_procedure(
        "【設定】\n対象：経費.csv\n除外：仮払い\n集計単位：部門\n集計値：金額の合計\n出力形式：Excel"
    )
    assert bare.gaps  # 仮払い is no condition the rules can read: asked
    none = read_procedure(
        "対象：売上.csv\n条件：なし\n集計単位：支店\n集計値：請求額\n出力形式：CSV"
    )
    assert [(s.group_by, s.metrics) for s in none.steps] == [(["支店"], {"請求額": ["sum"]})]
    assert not none.gaps


def test_a_signature_after_above_is_no_condition_and_files_keep_their_roles() -> None:
    signed = read_procedure(
        "売上.csvの部門ごとの金額を合計してExcelで出してください。依頼者。部署：営業部。"
        "氏名：山田。以上、上記のとおりお願いします。"
    )
    assert [s.kind for s in signed.steps] == ["aggregate"]
    arrived = read_procedure(
        "「売上明細.csv」というCSVで届いたデータを、店舗別に金額を合計してExcelで"
    )
    assert "売上明細.csv" not in [o.file_name for o in arrived.outputs]
    second = read_procedure(
        "請求.csv と、銀行からダウンロードしたCSVを請求番号で照合して、結果は差異.csv で"
    )
    assert len(second.inputs) == 2 and [s.kind for s in second.steps] == ["reconcile"]


def test_a_grain_or_a_display_unit_is_no_group_key() -> None:
    grain = read_procedure("売上.csvを月別に金額を合計。月は売上日で集計して。Excelで")
    assert grain.steps[0].group_by != ["売上日"]
    unit = read_procedure("売上.csvを部門別に金額を合計して、金額は千円単位で表示して。Excelで")
    assert unit.steps[0].group_by == ["部門"]


def test_a_fetch_refusal_is_only_for_a_request_to_fetch() -> None:
    procedure = read_procedure(
        "販売管理システムからダウンロードしてきた売上.csvを店舗別に金額を合計してExcelで"
    )
    assert not procedure.gaps


def test_a_column_said_to_hold_a_date_is_filled_not_the_word() -> None:
    procedure = read_procedure(
        "会員名簿.xlsx で退会日に日付が入っている人（空欄じゃない人）だけにしてCSVで"
    )
    (condition,) = procedure.steps[0].conditions
    assert (condition.column, condition.op) == ("退会日", "not_null")
    word = read_procedure("顧客.csv で備考に「返品」が入っている行をCSVで")
    assert [(c.op, c.value) for c in word.steps[0].conditions] == [("contains", "返品")]


def test_blank_negated_keeps_the_filled_rows_and_the_next_condition() -> None:
    procedure = read_procedure(
        "予約台帳.csvのうち、キャンセル日が空欄でない行で、かつ区分が「初診」のものを"
        "抽出してください。CSVで出してください。"
    )
    assert [(c.column, c.op, c.value) for c in procedure.steps[0].conditions] == [
        ("キャンセル日", "not_null", None),
        ("区分", "==", "初診"),
    ]
    for said in ("空欄ではない", "未入力じゃない"):
        (condition,) = (
            read_procedure(f"台帳.csvのキャンセル日が{said}行をCSVで").steps[0].conditions
        )
        assert condition.op == "not_null"
    (blank,) = read_procedure("台帳.csvのキャンセル日が空欄の行をCSVで").steps[0].conditions
    assert blank.op == "is_null"


def test_quoted_values_said_mixed_in_a_column_normalize_that_column() -> None:
    procedure = read_procedure(
        "得意先リスト.xlsxの得意先名に「株式会社」と「(株)」、全角と半角が混ざっているので、"
        "表記を揃えてから得意先名で重複を削除してください。CSVで出力。"
    )
    assert [(s.kind, s.columns or s.keys) for s in procedure.steps] == [
        ("normalize", ["得意先名"]),
        ("dedupe", ["得意先名"]),
    ]


def test_a_file_name_without_extension_names_the_output_or_asks_its_format() -> None:
    named = read_procedure(
        "出荷実績.csvを地区ごとに販売金額を合計して、Excel出力、ファイル名は「地区別出荷実績」で。"
    )
    assert [o.file_name for o in named.outputs] == ["地区別出荷実績.xlsx"] and not named.gaps
    no_format = read_procedure("売上.csvを部門別に金額を合計、ファイル名は「部門別集計」で")
    assert no_format.gaps and "部門別集計" in no_format.gaps[0].message


def test_a_count_of_rows_named_by_the_writer_and_two_keys_said_as_a_unit() -> None:
    counted = read_procedure(
        "送迎記録.csvを利用者ごとに集計して、送迎回数（行数）と走行距離（km）の合計を出して。Excelで"
    )
    assert counted.steps[0].metrics == {"*": ["count"], "走行距離": ["sum"]}
    unit = read_procedure("売上明細.csvを得意先コードと商品区分の単位で売上金額を合計してExcelで")
    assert unit.steps[0].group_by == ["得意先コード", "商品区分"] and not unit.gaps
    display = read_procedure("売上.csvを千円の単位で表示して部門別に金額を合計")
    assert display.steps[0].group_by == ["部門"] and display.gaps  # a display unit: asked
    column = read_procedure("発注一覧.xlsxを業者ごと（協力業者列）の発注額合計をCSVで頼む")
    assert column.steps[0].group_by == ["協力業者"] and not column.gaps


def test_names_kept_said_without_the_word_column() -> None:
    for said in ("生産者番号・生産者名・数量だけにして", "生産者番号・生産者名・数量を残し"):
        procedure = read_procedure(f"集荷一覧.csvから、{said}、数量の多い順にExcel出力。")
        assert [s.columns for s in procedure.steps if s.kind == "select"] == [
            ["生産者番号", "生産者名", "数量"]
        ]


def test_an_approval_said_as_a_check_before_writing_or_a_pause() -> None:
    check = read_procedure(
        "売上.xlsxを担当医ごとに売上金額を合計して。Excelに書き出す前に、一度私に確認させて"
        "ください（院長に出す資料なので）。"
    )
    assert [s.kind for s in check.steps] == ["aggregate", "approval"] and not check.gaps
    pause = read_procedure(
        "退去者一覧.xlsxから退去日が2025年3月1日以降の方を抽出してください。ファイル出力の前に"
        "課長の承認をもらいたいので、一旦止めてください。出力はExcelで。"
    )
    assert [s.kind for s in pause.steps] == ["filter", "approval"] and not pause.gaps
    question = read_procedure("売上.csvを部門別に金額を合計してExcelで。1点確認させてください。")
    assert "approval" not in [s.kind for s in question.steps]


def test_a_sheet_named_after_a_quoted_file_name() -> None:
    procedure = read_procedure(
        "利用実績.csvを利用者番号ごとに自己負担額の合計を出し、Excel「実績.xlsx」シート「集計」で出力。"
    )
    assert [(o.file_name, o.sheet) for o in procedure.outputs] == [("実績.xlsx", "集計")]


def conditions_of(instruction: str) -> list[tuple[str | None, str, object]]:
    (step,) = [s for s in read_procedure(instruction).steps if s.kind == "filter"]
    return [(c.column, c.op, c.value) for c in step.conditions]


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        # rows said to be dropped, in each way an office writes it
        ("経費.csvで、区分が「仮払」の行は消して、残りをExcelに", [("区分", "!=", "仮払")]),
        ("経費.csvで、区分が「仮払」の行は抜いて、Excelで出力", [("区分", "!=", "仮払")]),
        ("経費.csvで、区分が「仮払」のデータは落としてからExcelで出力", [("区分", "!=", "仮払")]),
        (
            "売上.csvのステータスが「取消」の行は出力しないでください。CSVで",
            [("ステータス", "!=", "取消")],
        ),
        (
            "経費.csvで、金額が0円の明細は対象外として部門別に金額を合計しExcelで",
            [("金額", "!=", 0)],
        ),
        (
            "売上.csvの、金額が1000円未満のものは集計に入れないで、店舗別に金額を合計しExcelで",
            [("金額", ">=", 1000)],
        ),
        (
            "売上.csvから金額が10万円以上の行を抽出。ただし、取引先区分が「社内」のものは含めないでください。Excel出力。",
            [("金額", ">=", 100000), ("取引先区分", "!=", "社内")],
        ),
        (
            "売上.csvから、取引先が「A社」「B社」の行を除外してExcelで出力",
            [("取引先", "not_in", ["A社", "B社"])],
        ),
        (
            "請求.csvで、備考に「テスト」を含む行を除外して、Excel出力",
            [("備考", "not_contains", "テスト")],
        ),
        (
            "経費.csvの摘要に「会議」が含まれていない明細を抽出してExcelで",
            [("摘要", "not_contains", "会議")],
        ),
        # conditions listed for one exclusion all drop (whatever rule read them first)
        (
            "請求.csvで、金額が0円の行と備考に「テスト」を含む行を除外して、Excel出力",
            [("備考", "not_contains", "テスト"), ("金額", "!=", 0)],
        ),
        (
            "在庫.csvから、在庫数が0のものと、廃番フラグが1のものを除いて、Excelで",
            [("在庫数", "!=", 0), ("廃番フラグ", "!=", 1)],
        ),
        # 「で、」 joins a kept condition to a dropped one: only the second is dropped
        (
            "広告費.csv、媒体 が「自社」以外で、出稿額 が２千円以下の細かいものは除外。CSVで",
            [("媒体", "!=", "自社"), ("出稿額", ">", 2000)],
        ),
        # a comparison said and then denied
        ("売上.csvで、金額が５万円を超えない行を抽出してCSV", [("金額", "<=", 50000)]),
        ("売上.csvで、金額が５万円以上でない行を抽出してCSV", [("金額", "<", 50000)]),
        ("売上.csvで、金額が5万円を超えないものを除外してExcelで", [("金額", ">", 50000)]),
        ("請求.csvで備考欄が空欄以外の行だけを抽出してExcelで", [("備考", "not_null", None)]),
        (
            "請求.csvから請求番号が空欄でなく、かつ金額が0円でない行を抽出してExcel",
            [("金額", "!=", 0), ("請求番号", "not_null", None)],
        ),
        # 「抜いて」 with を: pulled out (kept)
        ("返本.csv から、発行部数が３万部超の書籍を抜いてExcelで", [("発行部数", ">", 30000)]),
    ],
)
def test_rows_said_to_be_dropped_or_denied(
    instruction: str, expected: list[tuple[str | None, str, object]]
) -> None:
    assert sorted(map(repr, conditions_of(instruction))) == sorted(map(repr, expected))


@pytest.mark.parametrize(
    "instruction",
    [
        "勤怠.csvから、遅刻回数が3回以上または欠勤日数が2日以上の社員を抽出してExcelで出力",
        "売上.csvから、部門が「営業部」で金額が10万円以上、または部門が「企画部」で金額が5万円以上の行を抽出してExcelで",
        "請求.csvで請求金額が50万円を超えるものは部長承認が必要なので、承認を挟んでからExcelで出力してください",
        "売上.csvで、取引区分が「返品」のものは金額をマイナスとして扱い、商品別に金額を合計してExcelで",
        "売上.csvで、取引日が土日のものを除外してExcelに出力",
        "売上.csvで、金額が5万円前後の行を抽出してCSV",
        "経費.csvで金額が3千円未満で、金額が3千円以上の行をCSVで",
        "売上.csvから、取引日が令和6年12月1日〜1月31日の行を抽出してExcel",
        "経費.csvのうち、営業部の交通費について、社員別に金額を合計してExcelで",
        "売上.csvの上位10件をExcelで",
    ],
)
def test_conditions_no_and_filter_builds_are_asked(instruction: str) -> None:
    assert read_procedure(instruction).gaps


def test_a_date_heading_a_sentence_and_a_range_into_the_next_year() -> None:
    (condition,) = conditions_of(
        "経費.csvの金額を部門別に合計。対象は2025年4月1日以降の申請分です。"
    )
    assert condition[0] is None  # which date column is asked
    assert conditions_of("売上.csvから、取引日が2025年12月1日から1月31日までの行をExcelで") == [
        ("取引日", ">=", "2025-12-01"),
        ("取引日", "<=", "2026-01-31"),
    ]


def test_the_first_rows_after_the_sort_and_steps_said_in_sequence() -> None:
    for said, count in (("先頭100行", 100), ("上から3件だけ", 3), ("上位10件", 10)):
        (sort,) = read_procedure(f"売上.csvを金額の大きい順に並べて{said}をCSVで").steps
        assert (sort.by, sort.descending, sort.limit) == (["金額"], True, count)
    first = read_procedure(
        "請求.csvを請求番号で重複除去してから、入金.csvと請求番号で照合し、差異をExcelに出力"
    )
    assert [s.kind for s in first.steps] == ["dedupe", "reconcile"]


def test_what_is_not_wanted_is_not_built() -> None:
    (groups,) = read_procedure(
        "売上.csvを、担当者別ではなく支店別に、売上金額を合計してExcelで"
    ).steps
    assert groups.group_by == ["支店"]
    (metrics,) = read_procedure(
        "売上.csvの税込金額を部門別に合計してExcelで出力。税抜金額の合計は不要です。"
    ).steps
    assert metrics.metrics == {"税込金額": ["sum"]}


def test_rows_said_doubled_are_no_condition() -> None:
    procedure = read_procedure(
        "出荷実績.csvに同じ伝票番号の行が二重に入っているようです。伝票番号が同じものは最初の行"
        "だけ残して、CSVで出し直してください。"
    )
    assert [s.kind for s in procedure.steps] == ["dedupe"]


def test_metrics_and_orders_said_apart_and_what_used_to_be_done() -> None:
    apart = read_procedure(
        "売上.csvの金額を部門別に合計してExcelで出力。合計は税込金額でお願いします。"
    )
    assert apart.steps[0].metrics == {"税込金額": ["sum"]}
    again = read_procedure("経費.csvの部門別合計を出してください。金額の合計です。Excelで。")
    assert again.steps[0].metrics == {"金額": ["sum"]}
    overall = read_procedure(
        "売上.csvで、店舗ごとに金額の合計を出し、さらに全店舗の平均も出してExcelで"
    )
    assert overall.gaps
    order = read_procedure("売上.csvを担当者ごとに売上金額の合計を出してExcelで。担当者は昇順で。")
    assert [(s.kind, s.by, s.descending) for s in order.steps][-1] == ("sort", ["担当者"], False)
    past = read_procedure(
        "今月も経費の集計をお願いします。先月は部門ごとに金額を出していましたが、今月は勘定科目"
        "ごとにお願いします。添付の経費.csvから、金額の合計を勘定科目別に出してExcelにしてください。"
    )
    assert past.steps[0].group_by == ["勘定科目"]


def test_a_formula_said_as_a_noun_and_one_over_its_own_column() -> None:
    named = read_procedure(
        "給与.csvで基本給と手当の合計を「総支給額」として計算し、部署別に総支給額の平均を出して"
    )
    assert named.steps[0].expressions == {"総支給額": "基本給 + 手当"}
    itself = read_procedure("売上.csvで金額（税込）＝金額（税抜）×1.1を計算してExcelで出力")
    assert itself.gaps  # 金額 = 金額 * 1.1 would overwrite what it reads


def test_comparisons_in_symbols_amounts_with_thousands_and_settings_on_one_line() -> None:
    assert conditions_of(
        "設定:\n入力: 請求データ.csv\n抽出条件: 請求金額 >= 100000\n出力: CSV"
    ) == [("請求金額", ">=", 100000)]
    assert conditions_of("経費.csvで、条件：金額＞＝30000 の行をCSVで") == [("金額", ">=", 30000)]
    assert conditions_of("売上.csvで、金額が2千500円以上の取引を抽出してExcelで") == [
        ("金額", ">=", 2500)
    ]
    (reconcile,) = read_procedure(
        "銀行明細.csvと入金予定.csvを照合。キー：取引先コード、金額列：金額、許容差：0円、"
        "日付のずれ：3日。Excel出力。"
    ).steps
    assert (reconcile.keys, reconcile.amount_column, reconcile.tolerance) == (
        ["取引先コード"],
        "金額",
        0,
    )
    assert reconcile.date_window_days == 3


def test_a_condition_said_again_as_a_reason_and_a_range_of_days() -> None:
    assert conditions_of(
        "経費.csvで、金額が5万円以上の明細を抽出してExcelに出力。5万円以上は稟議が必要なため確認用です。"
    ) == [("金額", ">=", 50000)]
    assert conditions_of("売上.csvから、取引日が2025年4月1日〜30日の行を抽出してExcel") == [
        ("取引日", ">=", "2025-04-01"),
        ("取引日", "<=", "2025-04-30"),
    ]


def test_second_probe_misreads() -> None:
    returns = read_procedure(
        "売上明細.csvの数量がマイナスの行（返品）を除外して、商品別に数量を合計"
    )
    assert [(c.column, c.op, c.value) for c in returns.steps[0].conditions] == [("数量", ">=", 0)]
    assert conditions_of(
        "顧客.xlsxから都道府県が東京都・神奈川県・埼玉県以外の顧客を抽出してCSVで"
    ) == [
        ("都道府県", "!=", "東京都"),
        ("都道府県", "!=", "神奈川県"),
        ("都道府県", "!=", "埼玉県"),
    ]
    small_too = read_procedure(
        "経費精算一覧.xlsxの申請額を部署別に合計してください。なお、金額が1万円未満の少額経費も"
        "含めてください。"
    )
    assert [s.kind for s in small_too.steps] == ["aggregate"]
    (whole,) = read_procedure("発注書一覧.csvの重複行（全列が同じ）を削除してCSVで").steps
    assert whole.keys == []
    (notation,) = read_procedure("売上一覧.xlsxの金額列の△（マイナス）表記を数値に変換して").steps
    assert notation.columns == ["金額"]
    (by_person, _) = read_procedure(
        "売上.csvの担当者別売上合計を出して、合計500万円以上の担当者だけCSVで"
    ).steps
    assert by_person.metrics == {"売上": ["sum"]}


def test_a_duplicate_check_lists_the_repeated_rows() -> None:
    (listed,) = read_procedure(
        "請求書一覧.csvの請求書番号の重複をチェックして、重複している行を一覧で出してください。"
    ).steps
    assert (listed.keys, listed.duplicates_listed) == (["請求書番号"], True)
    (removed,) = read_procedure("顧客.csvの顧客番号の重複を削除してCSVで").steps
    assert not removed.duplicates_listed


def test_blind45_misreads() -> None:
    assert sorted(
        map(
            repr,
            conditions_of(
                "仕訳データ.csvより、勘定科目が交際費、金額５万円以上、日付が令和６年４月１日以降の"
                "仕訳を抽出し、金額の大きい順に並べてExcelで出してください。"
            ),
        )
    ) == sorted(
        map(
            repr,
            [("勘定科目", "==", "交際費"), ("金額", ">=", 50000), ("日付", ">=", "2024-04-01")],
        )
    )
    named = read_procedure(
        "売上.csv を得意先ごとに売上金額を合計して、「得意先別月次」というシート名でExcelに出して。"
    )
    assert [o.sheet for o in named.outputs] == ["得意先別月次"]
    fetched = read_procedure(
        "楽天トラベルの管理画面から今月の予約データを取ってきて、プラン別に件数を集計して"
    )
    assert fetched.gaps


def test_third_probe_misreads() -> None:
    assert sorted(
        map(
            repr,
            conditions_of(
                "支払データ.csv のうち、金額が1円未満のもの（端数処理エラー）と、支払先コードが"
                "空欄のものを除外してCSVで"
            ),
        )
    ) == sorted(map(repr, [("金額", ">=", 1), ("支払先コード", "not_null", None)]))
    (kept,) = read_procedure(
        "患者マスタ.csv を患者番号で重複削除して（後に出てくる行を残す）、CSVで出力"
    ).steps
    assert kept.keep == "last"
    (both,) = read_procedure(
        "科研費支出.csv の費目別に支出額を合計してもらえますか。研究者番号ごとにも分けてください。"
    ).steps
    assert both.group_by == ["費目", "研究者番号"]
    assert conditions_of(
        "経費精算.csv の申請日が令和7年1月〜3月のうち、科目が旅費交通費のものを抽出"
    ) == [
        ("申請日", ">=", "2025-01-01"),
        ("申請日", "<=", "2025-03-31"),
        ("科目", "==", "旅費交通費"),
    ]


def test_a_compared_column_that_is_no_amount_is_never_the_total() -> None:
    # before: 年齢 (compared with 3) was summed per クラス when the metric was not read
    (_, total) = read_procedure(
        "保育料.csv から年齢が3歳以上の園児を除外して、クラス別に合計"
    ).steps
    assert "年齢" not in total.metrics and total.missing
    (_, amount) = read_procedure(
        "売上.csv 売上額 10万以下は除いて、顧客名 ごとの合計ちょうだい"
    ).steps
    assert amount.metrics == {"売上額": ["sum"]}


def test_a_dedupe_told_to_ignore_how_keys_are_written() -> None:
    # before: 「全角半角の違いは同じとみなす」 was dropped: 「ＡＢＣ」 and 「ABC」 stayed two
    (loose,) = read_procedure(
        "スタッフ.csvをスタッフIDで重複除去、ただし全角半角の違いは同じとみなす。CSVで"
    ).steps
    assert loose.loose_match and loose.keys == ["スタッフID"]
    (strict,) = read_procedure("スタッフ.csvをスタッフIDで重複除去してCSVで").steps
    assert not strict.loose_match


def test_a_quoted_file_at_the_end_is_where_the_result_goes() -> None:
    # before: 「…、「集計.xlsx」へ」 was read as a second input and the instruction refused
    named = read_procedure(
        "物品購入.csv で単価が3万円以上の備品だけを取り出して、課別に件数を出して、「集計.xlsx」へ"
    )
    assert [(o.format, o.file_name) for o in named.outputs] == [("excel", "集計.xlsx")]
    assert len(named.inputs) == 1 and not named.gaps
    sheet = read_procedure(
        "未収金一覧.xlsx → 督促回数が3回以上 → 「督促対象.xlsx」の「対象者」シートへ"
    )
    assert [(o.file_name, o.sheet) for o in sheet.outputs] == [("督促対象.xlsx", "対象者")]
    read = read_procedure("「売上.xlsx」で部門別に金額を合計してCSVで")
    assert [i.source for i in read.inputs] == ["売上.xlsx"]


def test_a_month_range_with_a_month_that_does_not_exist_is_named() -> None:
    # before: 「2025年1月〜14月」 raised calendar.IllegalMonthError (a traceback)
    procedure = read_procedure("経費.csv の申請日が2025年1月〜14月の行をCSVで")
    assert not procedure.steps and "14月" in procedure.gaps[0].message
    across = read_procedure("経費.csv の申請日が2025年11月〜2月の行をCSVで")
    assert [c.value for c in across.steps[0].conditions] == ["2025-11-01", "2026-02-28"]


@pytest.mark.parametrize(
    "instruction",
    [
        # a 年度 named, then its dates in brackets
        "修繕履歴.xlsx の施工日が令和5年度（令和5年4月1日〜令和6年3月31日）で、"
        "費用が10万円以上の行を抽出してExcelで",
        # an era year restated in the western calendar
        "修繕履歴.xlsx の施工日が令和５年（2023年）4月1日から令和6年3月31日までで、"
        "費用が10万円以上の行を抽出してExcelで",
        # the period given first, then called 「この期間」
        "令和5年度（R5.4.1〜R6.3.31）の修繕の確認です。修繕履歴.xlsx の施工日がこの期間に入り、"
        "費用が10万円以上の行を抽出してExcelで",
    ],
)
def test_a_period_said_twice_is_read_once_by_its_dates(instruction: str) -> None:
    # before: each was refused: 「数値 1日 をどう使うか読み取れませんでした」
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert conditions_of(instruction) == [
        ("施工日", ">=", "2023-04-01"),
        ("施工日", "<=", "2024-03-31"),
        ("費用", ">=", 100000),
    ]


@pytest.mark.parametrize(
    "instruction",
    [
        # the two calendars name different years: which one is meant is asked
        "修繕履歴.xlsx の施工日が令和5年（2024年）4月1日から令和6年3月31日までの行を"
        "抽出してExcelで",
        # two periods: 「この期間」 could be either
        "対象は2024/4/1〜2024/6/30と2024/7/1〜2024/9/30です。修繕履歴.xlsx の施工日がこの期間の"
        "行を抽出してExcelで",
        # a 年度 without its dates: the months it covers are the company's own
        "修繕履歴.xlsx の施工日が令和5年度の行を抽出してExcelで",
    ],
)
def test_a_period_that_is_not_one_clear_range_is_asked(instruction: str) -> None:
    assert read_procedure(instruction).gaps


def test_a_settings_line_keeps_a_value_in_any_script() -> None:
    # before: 「品目：いちご」 (a value in hiragana) was dropped and the Plan ran on every 品目
    block = "設定\n入力ファイル：出荷実績.xlsx\n品目：いちご\n用途区分：お供え、贈答\n"
    assert conditions_of(block + "集計単位：出荷先\n集計値：箱数の合計\n出力：Excel") == [
        ("品目", "==", "いちご"),
        ("用途区分", "in", ["お供え", "贈答"]),
    ]


@pytest.mark.parametrize(
    "line",
    ["追加処理：分類ごとに作業時間を合計", "日付 = 見ない", "備考：先月ミスがあったので"],
)
def test_a_settings_line_that_is_no_value_is_no_condition(line: str) -> None:
    procedure = read_procedure(
        f"設定\n入力ファイル：出荷実績.xlsx\n{line}\n集計単位：出荷先\n集計値：箱数の合計\n出力：Excel"
    )
    assert not [s for s in procedure.steps if s.kind == "filter"], checklist(procedure)


def test_a_column_listed_as_the_files_own_is_no_metric_word() -> None:
    # before: the column 「count」 became a row count beside the total of amount
    (total,) = read_procedure(
        "sales.csv（列は store, date, amount, count）の store ごとに amount と count を"
        "それぞれ合計してCSVで"
    ).steps
    assert total.metrics == {"amount": ["sum"], "count": ["sum"]}
    (same,) = read_procedure("売上.csv の店舗ごとに金額と件数を合計してExcelで").steps
    assert same.metrics == {"金額": ["sum"], COUNT_ALL: ["count"]}  # no list: rows counted
    (kept,) = [
        s
        for s in read_procedure("売上.csv の金額が5万円以上の行で、列は店舗・日付・金額だけ").steps
        if s.kind == "select"
    ]
    assert kept.columns == ["店舗", "日付", "金額"]  # 「列は … だけ」 keeps the columns


def test_a_settings_line_nobody_reads_is_asked() -> None:
    # before: 「出荷区分：急ぎのもの」 was dropped and the Plan totalled every row
    procedure = read_procedure(
        "設定\n入力ファイル：出荷実績.xlsx\n出荷区分：急ぎのもの\n集計単位：出荷先\n"
        "集計値：箱数の合計\n出力：Excel"
    )
    assert any("出荷区分" in gap.message for gap in procedure.gaps), checklist(procedure)


@pytest.mark.parametrize("separator", ["\t", "\t\t", " → ", "→"])
def test_a_settings_block_parted_by_tabs_or_arrows(separator: str) -> None:
    # before: each line was one clause of words; 「作業区分 「車検」以外」 was not read
    lines = [
        ("ファイル", "整備実績.csv"),
        ("作業区分", "「車検」以外"),
        ("工賃", "3万円以上"),
        ("順番", "工賃の多い順、上位5件"),
        ("残す列", "入庫日、車両番号、工賃"),
        ("出力", "Excel"),
    ]
    text = "作業実績の抽出\n" + "\n".join(f"{key}{separator}{value}" for key, value in lines)
    procedure = read_procedure(text)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert sorted(conditions_of(text), key=str) == [
        ("作業区分", "!=", "車検"),
        ("工賃", ">=", 30000),
    ]
    (order,) = [s for s in procedure.steps if s.kind == "sort"]
    assert (order.by, order.descending, order.limit) == (["工賃"], True, 5)
    (kept,) = [s for s in procedure.steps if s.kind == "select"]
    assert kept.columns == ["入庫日", "車両番号", "工賃"]


def test_an_arrow_chain_is_not_a_settings_block() -> None:
    (step,) = read_procedure("売上.csv → 部門ごとに金額を合計 → Excel").steps
    assert step.group_by == ["部門"]


def test_a_settings_line_of_how_to_total() -> None:
    text = "設定\nファイル：注文.csv\nまとめ方：都道府県ごとに数量の合計と注文件数\n形式：Excel"
    (total,) = read_procedure(text).steps
    assert total.group_by == ["都道府県"]
    assert total.metrics == {"数量": ["sum"], COUNT_ALL: ["count"]}


def test_a_period_named_with_the_column_it_is_of() -> None:
    # before: 「令和6年度（令和6年4月1日〜令和7年3月31日、入庫日ベース）」 was refused
    text = (
        "令和6年度（令和6年4月1日〜令和7年3月31日、入庫日ベース）の伝票を整理します。"
        "作業伝票.csv から値引額が1万円以上の伝票だけ抜き出し、"
        "伝票番号の重複（二重入力分）を除いてExcelで"
    )
    procedure = read_procedure(text)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert conditions_of(text) == [
        ("入庫日", ">=", "2024-04-01"),
        ("入庫日", "<=", "2025-03-31"),
        ("値引額", ">=", 10000),
    ]
    (dedupe,) = [s for s in procedure.steps if s.kind == "dedupe"]  # before: dropped silently
    assert dedupe.keys == ["伝票番号"]


@pytest.mark.parametrize(
    "instruction",
    [
        "水揚げ.xlsx を組合員番号ごとに水揚げ金額を合計して、"
        "水揚げ金額の多い順で上位10名まで。Excelで",
        "水揚げ.xlsx → 組合員番号ごとに水揚げ金額の合計 → 水揚げ金額の多い順 → 10件だけ → Excel",
    ],
)
def test_how_many_rows_the_sort_keeps(instruction: str) -> None:
    # before: 「上位10名まで」 was a condition 「上位 <= 10」 on no column, 「→ 10件だけ」 dropped
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == ["aggregate", "sort"]
    assert procedure.steps[1].limit == 10


@pytest.mark.parametrize(
    ("instruction", "kind"),
    [
        ("カルテ一覧.xlsx の最終来院日 が 2023年12月31日以前 の行にしぼる。CSVで出力", "filter"),
        ("売上.csv を金額の大きい順にならべてCSVで", "sort"),
        ("名簿.xlsx で区分が「正」の人だけ。列は 番号・氏名・電話番号 の3つで、Excelで", "select"),
        ("売上.csv の金額が1万円以上の行を抽出して、課長の承認を受けてからExcelに出力", "approval"),
        (
            "a.csv と b.xlsx の照合をお願いします。key は student_id、金額は amount 列で。Excelに",
            "reconcile",
        ),
    ],
)
def test_a_step_said_in_everyday_words(instruction: str, kind: str) -> None:
    # before: each was refused or asked (a verb in kana, 「の3つで」, 「承認を受けてから」, key)
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert kind in [s.kind for s in procedure.steps], checklist(procedure)
    assert not any(s.missing for s in procedure.steps), checklist(procedure)


def test_a_month_said_with_its_days() -> None:
    assert conditions_of("受講者.xlsx から、受講日が令和7年3月中（3/1〜3/31）の人だけExcelで") == [
        ("受講日", ">=", "2025-03-01"),
        ("受講日", "<=", "2025-03-31"),
    ]


@pytest.mark.parametrize(
    "said",
    [
        "令和7年3月中（2/1〜3/31）",
        "2025年3月分（2025/4/1〜2025/4/30）",
        "令和6年度（令和5年4月1日〜令和6年3月31日）",
    ],
)
def test_a_period_whose_name_and_dates_disagree_is_asked(said: str) -> None:
    assert read_procedure(f"受講者.xlsx から、受講日が{said}の人だけExcelで").gaps


def test_a_settings_line_saving_to_a_file() -> None:
    procedure = read_procedure(
        "設定：\n・対象ファイル：台帳.xlsx\n・樹高が８以上\n・保存：剪定候補.csv"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert procedure.outputs[0].format == "csv"
    assert procedure.outputs[0].file_name == "剪定候補.csv"


def test_a_sentence_telling_what_the_steps_make_is_context() -> None:
    # before: 「冬期教室の空き状況を出したいです」 was asked about 「冬期教室」
    procedure = read_procedure(
        "冬期教室の空き状況を出したいです。\n1) 教室申込_冬期.csv を開く\n"
        "2) 教室名ごとに申込件数を数える\n3) 申込件数の少ない順に並べてExcelに出す"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]


@pytest.mark.parametrize(
    "wish",
    [
        "営業部の交通費をまとめたいです。",  # 営業部 said only here: maybe a condition
        "今月分の交通費をまとめたいです。",  # a period nobody dated
        "全店共通の取扱商品リストを作りたいです。",  # in every file: no step builds that
    ],
)
def test_a_wish_that_may_hold_a_condition_is_read(wish: str) -> None:
    procedure = read_procedure(wish + "経費.csv を費目ごとに金額を合計してExcelで")
    assert procedure.gaps, checklist(procedure)


def test_a_dedupe_key_said_in_brackets() -> None:
    # before: 「重複削除（キー：依頼番号）」 removed only rows equal in every column
    (dedupe, _) = read_procedure(
        "見積依頼.csv 重複削除（キー：依頼番号）→ 依頼日の古い順 → 結果.xlsx"
    ).steps
    assert dedupe.kind == "dedupe" and dedupe.keys == ["依頼番号"]


@pytest.mark.parametrize(
    "instruction",
    [
        "請求.csvで請求額が10万円以上の行を抽出し、請求番号・顧客名・請求額でExcel出力",
        "請求.csvで請求額が10万円以上の行だけにして、請求番号・顧客名・請求額を出力。結果.csv",
        "請求.csvから請求額が10万円以上の行を抽出。列は請求番号・顧客名・請求額。結果.csvで保存。",
    ],
)
def test_the_columns_kept_said_without_だけ(instruction: str) -> None:
    # before: the columns were dropped and every column was written
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (kept,) = [s for s in procedure.steps if s.kind == "select"]
    assert kept.columns == ["請求番号", "顧客名", "請求額"]


def test_what_a_reconciliation_compares_said_as_a_mismatch() -> None:
    # before: 「数量の不一致を…」 matched on the key only
    (step,) = read_procedure(
        "出荷指示.csv と 出荷実績.csv を 指示番号 で照合し、数量の不一致を出荷差異.csv に出力。"
    ).steps
    assert step.kind == "reconcile" and step.amount_column == "数量"


def test_a_bare_condition_nobody_reads_is_asked() -> None:
    # before: 「血液型がO型かA型」 was dropped and every 血液型 kept
    procedure = read_procedure(
        "献血協力者.csvで、前回献血日が2024年3月31日以前の人だけ、血液型がO型かA型。CSVで"
    )
    assert any("血液型" in gap.message for gap in procedure.gaps), checklist(procedure)


@pytest.mark.parametrize(
    ("instruction", "name"),
    [
        ("契約一覧.xlsxで契約終了日の早い順に並べて更新案内対象.xlsx", "更新案内対象.xlsx"),
        (
            "予約.csvで会議室ごとに件数を集計してExcelで出してください（利用状況.xlsx）",
            "利用状況.xlsx",
        ),
        (
            "名簿.csvから寄付金額が1万円以上の人を抽出。お礼状送付リスト.csvで保存。",
            "お礼状送付リスト.csv",
        ),
    ],
)
def test_a_file_named_last_is_the_result(instruction: str, name: str) -> None:
    # before: the last file was a second input nobody used (「お礼状…」 lost its お)
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [o.file_name for o in procedure.outputs] == [name]
    assert len(procedure.inputs) == 1


@pytest.mark.parametrize(
    ("instruction", "part"),
    [
        (
            "研修受講記録.csvと社員名簿.xlsxを社員番号で照合して、名簿にいるのに受講記録がない"
            "社員を出して。未受講者.xlsx",
            "unmatched_right",
        ),
        (
            "仕入先マスタ.xlsxと支払予定.csvを仕入先コードで突き合わせ、マスタにない仕入先コードの"
            "行を抽出してください。出力は未登録仕入先.csv",
            "unmatched_right",
        ),
    ],
)
def test_one_side_of_a_reconciliation_said_of_people_or_of_one_table(
    instruction: str, part: str
) -> None:
    # before: every part of the reconciliation was written (once the file named last was read)
    (step,) = read_procedure(instruction).steps
    assert step.kind == "reconcile" and step.parts == [part]


def test_the_columns_kept_after_a_colon() -> None:
    (_, kept, _) = read_procedure(
        "滞納者リスト.xlsxで、滞納月数が3以上の人を抽出して、滞納月数の多い順。"
        "列：部屋番号、氏名、滞納月数、滞納額。督促対象.xlsx"
    ).steps
    assert kept.kind == "select" and kept.columns == ["部屋番号", "氏名", "滞納月数", "滞納額"]


def test_a_file_name_opening_with_お_after_a_verb() -> None:
    procedure = read_procedure("宿泊客名簿.csvを部屋番号順に並べてお盆宿泊者.xlsx")
    assert [o.file_name for o in procedure.outputs] == ["お盆宿泊者.xlsx"]


@pytest.mark.parametrize(
    "instruction",
    [
        "研修記録.csv から研修名に「防止」を含む行を拾って。"
        "所属・職員名・研修名の３列で、所属順に。CSVで",
        "受注.xlsx から状態が「完了」以外のものを出してください。"
        "列は 所属・職員名・研修名 で。Excelで",
        "受注.xlsx で担当が「中村」の分だけ、所属・職員名・研修名 で出してください。Excelで。",
        "受注.xlsx → 担当が「中村」の人だけ → 所属・職員名・研修名 の３列 → CSV",
        "受注.xlsx で担当が「中村」の分を、所属・職員名・研修名 の列で、"
        "所属順に並べて 結果.xlsx にして",
    ],
)
def test_the_columns_kept_said_before_the_output(instruction: str) -> None:
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (kept,) = [s for s in procedure.steps if s.kind == "select"]
    assert kept.columns == ["所属", "職員名", "研修名"]


def test_an_order_said_with_its_column_and_count() -> None:
    # before: 「売上上位10商品」 asked which order the 10 were counted in
    (_, order) = read_procedure(
        "物販.csv → 商品名ごとに売上を合計 → 売上上位10商品 → Excelで"
    ).steps
    assert (order.kind, order.by, order.descending, order.limit) == ("sort", ["売上"], True, 10)


@pytest.mark.parametrize(
    "instruction",
    [
        "宿泊実績.csv で、サイズ区分（小型・中型・大型）ごとに宿泊料を合計してください。Excelで",
        "設定\n入力：POS.csv\n絞り込み：部門 = 精肉, 鮮魚（この２つだけ）\n"
        "集計：サイズ区分ごと / 宿泊料の合計\n出力：Excel",
        "会員.csv、会員番号で重複を消して（同じ人が２回登録してることがある）、サイズ区分ごとに"
        "宿泊料を合計してExcelに。",
    ],
)
def test_an_aside_that_lists_or_explains(instruction: str) -> None:
    # before: each was asked about a word or a number of its aside
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (total,) = [s for s in procedure.steps if s.kind == "aggregate"]
    assert total.group_by == ["サイズ区分"]


@pytest.mark.parametrize(
    "instruction",
    [
        "給油明細.csv から fuel_type が「軽油」のやつだけぬいて、"
        "member_no ごとに liters を合計しといてー。多いじゅんにならべてえくせるで！",
        "給油明細.csv、member_no ごとに liters を合計して〜。fuel_type が「灯油」のはぬいてね。"
        "liters おおきい順でエクセルでおねがい",
    ],
)
def test_steps_said_in_kana(instruction: str) -> None:
    # before: 「多いじゅんにならべて」 was dropped silently (no sort)
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == ["filter", "aggregate", "sort"]
    assert procedure.steps[2].by == ["liters"] and procedure.steps[2].descending


def test_a_group_column_named_with_項目_or_結果() -> None:
    # before: 「検査項目」 (ending in 項目) was dropped from the grouping silently
    (total,) = read_procedure("検査記録.csv の担当技師×検査項目で件数集計してExcelで").steps
    assert total.group_by == ["担当技師", "検査項目"]


def test_one_key_value_line_nobody_reads_is_asked() -> None:
    # before: 「・検査項目：OCT、視野検査 の2つ」 was dropped and every 検査項目 kept
    procedure = read_procedure(
        "検査実施記録.csv\n・検査項目：OCT、視野検査 の2つ\n"
        "・担当技師 が空欄の行は除外\n→ 件数.xlsx"
    )
    assert any("視野検査" in gap.message for gap in procedure.gaps), checklist(procedure)


def test_a_settings_block_parted_by_bars() -> None:
    (_, dedupe) = read_procedure(
        "入力 | 会員名簿.xlsx\n条件1 | 会員ランクが ゴールド または プラチナ\n"
        "重複 | 会員番号で重複を削除\n出力 | 送付先.csv"
    ).steps
    assert dedupe.kind == "dedupe" and dedupe.keys == ["会員番号"]


def test_a_normalised_column_said_as_another_columns_name_is_asked() -> None:
    # before: 「エリア名」 was normalised beside the grouping by 配達エリア (no such column)
    procedure = read_procedure(
        "灯油配達.csv を配達エリアごとに配達量の合計を出してください。エリア名が「ﾐﾅﾐ町」"
        "「ミナミ町」みたいに半角全角ばらばらなので、先にそろえてからでお願いします。Excelで"
    )
    assert any("配達エリア" in gap.message for gap in procedure.gaps), checklist(procedure)


@pytest.mark.parametrize(
    ("instruction", "columns"),
    [
        (
            "社員名簿.xlsxから部署が「営業部」の社員を抽出。社員番号、氏名、部署、入社年月日。Excelで",
            ["社員番号", "氏名", "部署", "入社年月日"],
        ),
        (
            "試薬在庫.xlsx から 使用期限 が 2025/3/31 より前のものを抽出、"
            "試薬名・ロット・使用期限。期限切れ試薬.xlsx",
            ["試薬名", "ロット", "使用期限"],
        ),
        (
            "残業時間.xlsxで、残業時間が45時間を超えた人を抽出して、部署・氏名・残業時間を、"
            "残業時間の多い順に。ファイル名は36協定確認.xlsx",
            ["部署", "氏名", "残業時間"],
        ),
    ],
)
def test_columns_said_alone_after_a_step_are_kept(instruction: str, columns: list[str]) -> None:
    # before: each list was dropped silently and every column written
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (kept,) = [s for s in procedure.steps if s.kind == "select"]
    assert kept.columns == columns


def test_fields_listed_before_読み取って_are_no_columns_kept() -> None:
    procedure = read_procedure(
        "スキャンしたJPGで受け取っています。氏名、勤務日、出勤時刻、退勤時刻を読み取って表にして。"
        "CSVで"
    )
    assert [s.kind for s in procedure.steps] == ["extract"]  # (a model is needed: refused later)


@pytest.mark.parametrize(
    ("said", "amount", "parts"),
    [
        ("金額差異を出してください", "金額", []),
        ("金額が変わった費目を出してください", "金額", []),
        ("両方にいる顧客を出してください", None, ["matched"]),
    ],
)
def test_what_a_reconciliation_shows_said_briefly(
    said: str, amount: str | None, parts: list[str]
) -> None:
    # before: each matched on the key only and wrote every part
    (step,) = read_procedure(f"A支店.csv と B支店.csv を顧客番号で照合し、{said}。Excelで").steps
    assert (step.amount_column, step.parts) == (amount, parts)


def test_a_year_compared_in_a_column_of_dates() -> None:
    # before: 「購入日が2015年以前」 compared the dates with the number 2,015
    assert conditions_of(
        "備品台帳.xlsxの購入日が2015年以前のもの（2015年を含む）を抽出してExcelで"
    ) == [("購入日", "<=", "2015-12-31")]
    assert conditions_of("備品台帳.xlsxの購入日が2015年以降のものを抽出してExcelで") == [
        ("購入日", ">=", "2015-01-01")
    ]


@pytest.mark.parametrize(
    "instruction",
    [
        "両替受付.xlsxの受付金額の合計を受付者ごとに出して。承認をもらってから保存。",
        "配送実績.xlsxの配送エリアごとに、遅延フラグが1の件数と全体の件数を出してください。Excelで",
    ],
)
def test_a_result_no_step_can_make_is_asked(instruction: str) -> None:
    # before: a plan with no saved file, and a count of delayed rows only, each looked done
    assert read_procedure(instruction).gaps


def test_a_file_name_with_two_kana_between_kanji() -> None:
    procedure = read_procedure(
        "ATM稼働記録.csvの障害区分ごとの件数を集計。出力=紙幣詰まり件数.xlsx"
    )
    assert [o.file_name for o in procedure.outputs] == ["紙幣詰まり件数.xlsx"]


def test_files_joined_with_つなげて_and_no_key_are_stacked() -> None:
    # before: 「A.xlsx と B.xlsx をつなげて」 asked to write 「縦につなげて」
    procedure = read_procedure(
        "修繕履歴_2020-2022.xlsx と 修繕履歴_2023-2024.xlsx（同じ様式）をつなげて、"
        "工事区分ごとに件数を出してください。出力は 検討資料.xlsx。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == ["concat", "aggregate"]


@pytest.mark.parametrize(
    ("instruction", "name", "formula"),
    [
        (
            "日報.csv の distance_km を fuel_l で割って「燃費」列をつくる。CSVで",
            "燃費",
            "distance_km / fuel_l",
        ),
        (
            "台帳.xlsx の容量（ml）×数量 を「移出量」という列にして、Excelで",
            "移出量",
            "容量 * 数量",
        ),
    ],
)
def test_a_computed_column_said_with_a_verb(instruction: str, name: str, formula: str) -> None:
    (step,) = read_procedure(instruction).steps
    assert step.kind == "compute" and step.expressions == {name: formula}


def test_a_sheet_named_right_after_the_format() -> None:
    procedure = read_procedure(
        "運行実績.csv を乗務員名ごとに走行距離の合計を出して。Excelでシート名は「5月」で。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert procedure.outputs[0].sheet == "5月"


def test_a_past_event_given_as_the_reason_is_no_condition() -> None:
    # before: 「予防注射が未確認の…ケースがありましたので」 became a condition 予防注射 == 未確認
    procedure = read_procedure(
        "お疲れ様です。\n先月、予防注射が未確認のワンちゃんをお預かりしてしまったケースが"
        "ありましたので、確認リストを作りたいと思います。\n台帳.xlsx から、種別が「犬」で、"
        "予防注射日 が空欄のペットを抽出して 要確認リスト.xlsx にしてください。\n―――\n"
        "ペットホテル わんにゃんハウス 店長 森"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert sorted((c.column, c.op) for c in procedure.steps[0].conditions) == [
        ("予防注射日", "is_null"),
        ("種別", "=="),
    ]


def test_columns_listed_with_slashes_and_a_drawn_out_ending() -> None:
    # before: 「…の4つだけでCSVにしといてくださいー」 was refused for its 「ー」
    procedure = read_procedure(
        "cl_history.csv から patient_id / name / tel / last_visit の4つだけで"
        "CSVにしといてくださいー"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (kept,) = procedure.steps
    assert kept.columns == ["patient_id", "name", "tel", "last_visit"]


@pytest.mark.parametrize(
    "instruction",
    [
        # a column compared with another column
        "1. 材料在庫.xlsxを読み込む\n2. 在庫数が発注点を下回っている行を抽出\n"
        "3. 発注候補.xlsxに保存",
        # the key said for another step
        "本店在庫.csvと支店在庫.csvを結合して、車台番号で重複を消してください。Excelで",
        # rows picked from a reconciliation, with no side or amount said
        "配食サービス利用者.csvと配達記録.csvを利用者IDで突き合わせて、配達がゼロだった利用者を抽出。"
        "Excelで",
        # 「キャンセル以外」 said before a condition on another column
        "宴会予約台帳.xlsxから、キャンセル以外で、支払状況が「未入金」のものを抽出してExcel保存",
    ],
)
def test_a_step_that_looked_done_but_was_not_is_asked(instruction: str) -> None:
    # before: each ended 「ok」 with a step missing or read from the wrong words
    procedure = read_procedure(instruction)
    assert procedure.gaps or any(s.missing for s in procedure.steps), checklist(procedure)


@pytest.mark.parametrize(
    ("instruction", "columns"),
    [
        (
            "サークル届出.xlsxの「顧問」欄が空欄の団体だけ抜き出して、"
            "団体名と代表者名で一覧にしてください。",
            ["団体名", "代表者名"],
        ),
        (
            "[入力] 点呼記録.csv\n[条件] アルコール検知 が 「有」\n"
            "[出力列] 日付, ドライバー名\n[出力] 結果.xlsx",
            ["日付", "ドライバー名"],
        ),
        (
            "車検満了日が令和7年1月〜3月の顧客を顧客台帳.csvから抽出して、"
            "氏名・電話番号・車検満了日をCSVで出力",
            ["氏名", "電話番号", "車検満了日"],
        ),
        (
            "Input file: meter.csv / Condition: usage_m3 is blank / "
            "Keep: customer_no, address / Output: missing.xlsx",
            ["customer_no", "address"],
        ),
    ],
)
def test_the_columns_kept_in_more_ways(instruction: str, columns: list[str]) -> None:
    # before: each wrote every column (and the English block dropped its condition too)
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (kept,) = [s for s in procedure.steps if s.kind == "select"]
    assert kept.columns == columns
    assert procedure.steps[0].kind == "filter"


def test_the_first_file_of_an_arrow_chain_is_read() -> None:
    # before: 「… → request_log.xlsx → …」 became the output, and the named result was dropped
    procedure = read_procedure(
        "リクエスト集計 → request_log.xlsx → 曲名ごとに件数 → 件数の多い順 → Excel（TOP20.xlsx）"
    )
    assert [i.holds for i in procedure.inputs] == ["request_log"]
    assert [o.file_name for o in procedure.outputs] == ["TOP20.xlsx"]


@pytest.mark.parametrize(
    ("instruction", "kinds"),
    [
        (
            "会員台帳.xlsx の契約状態が「滞納」のひとだけ出して、"
            "支部ごとに件数かぞえといて〜。Excelで",
            ["filter", "aggregate"],
        ),
        (
            "訪問実績.csv、担当看護師ごとの訪問時間のごうけい出して〜。エクセルでちょうだい",
            ["aggregate"],
        ),
        (
            "入荷記録.csvの魚種が さば のやつだけで、産地ごとに入荷重量の合計だしてー。csvでいいよ",
            ["filter", "aggregate"],
        ),
        (
            "走行記録.xlsx の走行距離（km）に単価２０円をかけて「交通費」列をつくり、"
            "スタッフ名ごとに交通費を合計してExcelで",
            ["compute", "aggregate"],
        ),
        ("shipments.csv を customer×product で qty_cs を合計、summary.csv に出力", ["aggregate"]),
        (
            "訪問予定表.xlsx を、訪問日→訪問開始時刻の順（早い順）に並べ直して、"
            "CSVで出してください。",
            ["sort"],
        ),
        (
            "利用者台帳.xlsx で「ケアマネ事業所」が入っていて、"
            "期限が2025年9月30日以前の利用者を抽出してExcelで",
            ["filter"],
        ),
    ],
)
def test_steps_said_casually(instruction: str, kinds: list[str]) -> None:
    # before: each was refused (kana words, a value set apart by spaces, a constant factor, …)
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == kinds


def test_a_formula_of_two_columns_then_a_total_is_no_grouping() -> None:
    (compute, total) = read_procedure(
        "明細.xlsx、数量×単価で金額を計算し、得意先ごとに金額を合計。Excelで"
    ).steps
    assert compute.kind == "compute" and total.group_by == ["得意先"]


@pytest.mark.parametrize(
    ("instruction", "condition"),
    [
        (
            "アンケート.csv の 年代 が 空欄 の行以外で、年代ごとの件数を出してExcelで",
            ("年代", "not_null", None),
        ),
        (
            "駐車場契約.xlsx 契約終了日 が 2025/3/31 以前 のもの以外 で 月額 の合計をExcelで",
            ("契約終了日", ">", "2025-03-31"),
        ),
        ("設備台帳.xlsx の設備種別が空調 のものを抽出してExcelで", ("設備種別", "==", "空調")),
    ],
)
def test_a_condition_is_kept_as_said(instruction: str, condition: tuple[str, str, object]) -> None:
    # before: 「…の行以外」 was dropped (the rows asked to be left out were kept) and
    # 「空調」 was read as 「空」 (blank)
    assert condition in conditions_of(instruction)


@pytest.mark.parametrize(
    "instruction",
    [
        "金型台帳.xlsx のショット数が保証ショット数の90%を超えている金型を抽出してExcelで",
        "貸出記録.csv の返却期限が今日より前のものを、会員番号・書名でExcelに",
        "商品券換金.csv 店舗ごとに換金額を合計、換金額が10万円未満の店は除く。Excelで",
        "収穫記録.xlsx、品種ごとの収穫量合計と、圃場ごとの合計、2つ作ってほしいです。Excelで",
        "PO_list.csv: keep rows where Status != Closed and Qty >= 500, sort by DueDate asc",
    ],
)
def test_what_the_rules_cannot_read_right_is_refused(instruction: str) -> None:
    # before: each ended 「ok」 doing something else (a share of another column read as 90,
    # 「今日」 dropped, a total's condition on the rows, one grouping by both, English words
    # read as column names)
    assert read_procedure(instruction).gaps


def test_more_steps_said_another_way() -> None:
    (dedupe, _, _) = read_procedure(
        "発注明細.xlsx、重複してる発注番号の行を消してから、仕入先ごとの金額合計→金額の大きい順。Excelで"
    ).steps
    assert dedupe.keys == ["発注番号"]
    (_, kept, _) = read_procedure(
        "入院患者一覧.xlsx の在院日数が30日以上の人、病棟・患者ID・氏名だけにして病棟順。Excelで"
    ).steps
    assert kept.columns == ["病棟", "患者ID", "氏名"]
    (_, kept, _) = read_procedure(
        "設定\n・入力：時間外実績.xlsx\n・条件：時間外が80時間以上\n・出力：氏名、部署、時間外\n"
        "・並び：時間外の降順\n・ファイル：要注意者.xlsx"
    ).steps
    assert kept.columns == ["氏名", "部署", "時間外"]
    (both,) = read_procedure(
        "蔵書一覧.xlsx と 棚卸結果.csv を登録番号で照合して、"
        "蔵書一覧にあるのに棚卸で見つからなかった本と、棚卸にあるのに蔵書一覧に無い本の両方を出して。"
        "Excelで"
    ).steps
    assert both.parts == ["unmatched_left", "unmatched_right"]


def test_a_settings_condition_of_two_parts_keeps_both() -> None:
    # before: 「工程＝研磨　かつ　作業時間＞＝120」 kept only 作業時間 (研磨 was in the file name)
    procedure = read_procedure(
        "【入力】加工日報.xlsx\n【条件】工程＝研磨　かつ　作業時間（分）＞＝120\n"
        "【出力列】日付、作業者\n【保存先】研磨長時間作業.xlsx"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert sorted((c.column, c.op, c.value) for c in procedure.steps[0].conditions) == [
        ("作業時間", ">=", 120),
        ("工程", "==", "研磨"),
    ]


@pytest.mark.parametrize(
    "instruction",
    [
        # rows of a reconciliation asked with 「出して」 and no side or amount
        "会員名簿.xlsx と 施行一覧.xlsx を会員番号で突き合わせて、会員なのに施行一覧の会員割引が"
        "空欄になっているものを出してください。Excelで",
    ],
)
def test_more_that_looked_done_is_asked(instruction: str) -> None:
    assert read_procedure(instruction).gaps


def test_company_forms_unified_with_the_spelling() -> None:
    # before: the aside 「（㈱／株式会社、全角スペースなど）」 was ignored (the Plan only folded
    # widths, so 「(株)ABC」 and 「株式会社ABC」 stayed two 得意先)
    (normalize, _) = read_procedure(
        "受注明細.xlsx の得意先名の表記ゆれ（㈱／株式会社、全角スペースなど）を揃えてから、"
        "得意先名ごとに金額を合計してExcelで"
    ).steps
    assert normalize.kind == "normalize" and normalize.company_forms
    assert normalize.columns == ["得意先名"]
    assert read_procedure(
        "職員名簿.xlsxの所属を「総務課」「総務」「総務部」→「総務課」に統一してExcelで"
    ).gaps


@pytest.mark.parametrize(
    "instruction",
    [
        "寄付金台帳.xlsxで金額が空欄か0の行を確認用に抽出してExcelで",  # either of two
        "来園者数.xlsxと売店売上.xlsxを日付で結合して、来園者1人あたり売上を出して。Excelで",
        "納品書.xlsxと発注書.xlsxを発注番号で突き合わせ、数量が違うもの・単価が違うものを一覧に。Excelで",
        "物品マスタ.xlsxのメーカー名の表記ゆれ（ＴＥＲＵＭＯ／テルモ株式会社）を「テルモ」に統一。Excelで",
    ],
)
def test_fifth_round_refusals(instruction: str) -> None:
    # before: each ended 「ok」 (AND of both, a join alone, one column compared, company forms)
    assert read_procedure(instruction).gaps


def test_fifth_round_readings() -> None:
    (keep, *_) = read_procedure(
        "【設定】\n入力：代理店別実績.xlsx\n条件：支社＝東京以外\n並び順：達成率 降順\n"
        "出力：地方実績.xlsx"
    ).steps
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [("支社", "!=", "東京")]
    (_, total) = read_procedure(
        "プロジェクト一覧.xlsxから、ステータスが「進行中」の案件を、担当者別に件数と設計料合計で"
        "集計してください。Excelで"
    ).steps
    assert total.metrics == {COUNT_ALL: ["count"], "設計料": ["sum"]}
    (_, total) = read_procedure(
        "月額保険料が5千円以上の契約のみ、年齢帯別に件数を出す"
        "（ファイル：契約一覧.xlsx、列：月額保険料, 年齢帯）"
    ).steps
    assert total.group_by == ["年齢帯"]
    (stacked, _) = read_procedure(
        "売店A.csvと売店B.csvをくっつけて、商品コードごとに販売数を合計。Excelで"
    ).steps
    assert stacked.kind == "concat"
    (step,) = read_procedure(
        "発注データ.xlsxと入荷データ.xlsxを発注番号で突き合わせて、発注数と入荷数が違うものを出して。Excelで"
    ).steps
    assert (step.amount_column, step.right_amount_column) == ("発注数", "入荷数")
    (total, _) = read_procedure(
        "8月の氷の出荷、船名ごとに出荷量(t)の合計だしといて。製氷出荷.csv。多い順 → 船別.xlsx"
    ).steps
    assert total.group_by == ["船名"]
    (normalize, _) = read_procedure(
        "仕入先一覧.csv の「仕入先名」が、（株）と株式会社、全角と半角がバラバラです。\n"
        "表記をそろえたうえで、仕入先名が同じものは1行にまとめてください。CSVで"
    ).steps
    assert normalize.columns == ["仕入先名"] and normalize.company_forms


@pytest.mark.parametrize(
    ("instruction", "kinds"),
    [
        ("運行記録.csvの料金が空欄の行をリストアップしてください。Excelで", ["filter"]),
        (
            "顧客マスタ.xlsxの重複けしたい。おなじ電話番号のは1件にして（さいしょの行を残す）。"
            "Excelで",
            ["dedupe"],
        ),
        (
            "運行ログ_1号車.csv, 運行ログ_2号車.csv, 運行ログ_3号車.csv を結合 → 日付順 → "
            "全車.xlsx",
            ["concat", "sort"],
        ),
        (
            "パート勤怠.xlsxから、店舗が本店を除き、勤務日数が20日以上の人を抽出してExcelで",
            ["filter"],
        ),
        (
            "レジ締め.xlsxで、現金過不足が0じゃない日を抜き出して、日付と担当者と過不足額を出して。"
            "Excelで",
            ["filter", "select"],
        ),
    ],
)
def test_fifth_round_everyday_words(instruction: str, kinds: list[str]) -> None:
    # before: each was refused (リストアップ, おなじ/さいしょ, 3 files 結合 and 「→ 日付順 →」,
    # 「XがYを除き」, 「AとBとCを出して」)
    procedure = read_procedure(instruction)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == kinds


def test_sixth_round_fixes() -> None:
    # before: the sheet was written to instead of read, the input became the output (its
    # 「確認」 read as 「出力の確認」), 「予約_じゃらん.csv」 became a file called CSV, and value
    # mappings in an aside were dropped
    (settings,) = read_procedure(
        "入力=見積一覧.xlsx\nシート=2024年度\n条件=見積金額 50万円以上\n出力=フォロー対象見積.xlsx"
    ).inputs
    assert settings.sheet == "2024年度"
    procedure = read_procedure(
        "年齢確認記録.csv で 確認方法 が空欄の行を抽出して → 年齢確認漏れ.csv"
    )
    assert [i.holds for i in procedure.inputs] == ["年齢確認記録"]
    assert [o.file_name for o in procedure.outputs] == ["年齢確認漏れ.csv"]
    procedure = read_procedure(
        "元データ → 予約_Airbnb.csv, 予約_じゃらん.csv, 予約_楽天.csv\n"
        "処理 → 3つを縦に結合、チェックイン日 昇順\n出力 → 全予約.xlsx"
    )
    assert [i.holds for i in procedure.inputs] == ["予約_Airbnb", "予約_じゃらん", "予約_楽天"]
    assert read_procedure(
        "配送業者名の表記がバラバラ（ヤマト/ｸﾛﾈｺﾔﾏﾄ → ヤマト運輸）なので 配送実績.csv の "
        "配送業者名 列を統一して、配送業者名別の件数を CSV へ。"
    ).gaps


def test_a_settings_period_with_its_column_in_brackets_stays_read() -> None:
    (keep, _) = read_procedure(
        "設定\n入力ファイル：返品伝票.csv\n対象期間：2025年4月1日～2025年9月30日（返品日）\n"
        "集計単位：得意先コード\n集計値：返品金額の合計"
    ).steps
    assert [(c.column, c.op) for c in keep.conditions] == [("返品日", ">="), ("返品日", "<=")]


def test_sixth_round_more_fixes() -> None:
    # before: 「当日」 was dropped with 「市外」 (the rows asked for were left out), columns said
    # before a file were dropped, 抽出 was a sort key, and a mapping beside (有) was dropped
    assert read_procedure(
        "配達伝票.xlsx：配達区分が「当日」、配達エリアが「市外」を除く → 当日配達.xlsx"
    ).gaps
    (_, kept) = read_procedure(
        "患者一覧.xlsx から 最終来院日 が 2024/6/30 以前 の患者を抽出、"
        "氏名・電話番号・最終来院日 で 休眠患者リスト.xlsx"
    ).steps
    assert kept.columns == ["氏名", "電話番号", "最終来院日"]
    (_, order) = read_procedure(
        "園バス利用者.xlsx：バスコースが「Aコース」以外の園児を抽出、"
        "バスコース→乗車順 の順で並べて 園バス_A以外.xlsx へ"
    ).steps
    assert order.by == ["バスコース", "乗車順"]
    assert read_procedure(
        "納入実績.xlsx の 納入業者名 の表記（(有)田中青果/田中青果 → 有限会社田中青果）を統一、"
        "納入業者名ごとに 納入金額 合計 → 業者別納入額.xlsx"
    ).gaps


def test_a_grouping_before_a_total_named_like_the_file() -> None:
    # before: 「月 ごとの 売上 合計」 was read as describing 施術メニュー別売上.xlsx: a grand total
    (_, total) = read_procedure(
        "施術メニュー別売上.xlsx で、メニュー名 に「矯正」を含む行だけ、"
        "月 ごとの 売上 合計 → 結果.xlsx"
    ).steps
    assert total.group_by == ["月"] and total.metrics == {"売上": ["sum"]}
