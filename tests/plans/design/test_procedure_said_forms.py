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


def test_an_output_named_last_with_he_or_ni_is_the_result() -> None:
    procedure = read_procedure("会費.csv を地区ごとに会費を合計して、地区別_会費.xlsx へ。")
    assert [o.file_name for o in procedure.outputs] == ["地区別_会費.xlsx"]
    assert not procedure.gaps
    procedure = read_procedure("会費.csv で地区が「東町」の行だけ、東町会費.csv に。")
    assert [o.file_name for o in procedure.outputs] == ["東町会費.csv"]
    assert len(procedure.inputs) == 1 and not procedure.gaps


def test_an_output_named_after_hozonsaki() -> None:
    procedure = read_procedure(
        "・会費.xlsx\n・地区ごとに会費を合計\n・保存先：会費集計_R7.xlsx の「集計」シート"
    )
    assert [(o.file_name, o.sheet) for o in procedure.outputs] == [("会費集計_R7.xlsx", "集計")]
    assert not procedure.gaps


def test_a_column_name_order_sorts_by_that_column() -> None:
    assert ("sort", (["講師"], False)) in _steps(
        "授業.csv を講師ごとにコマ数を合計して、講師の名前順で Excel に"
    )


def test_an_order_said_before_a_comma() -> None:
    assert ("sort", (["受付番号"], False)) in _steps(
        "相談記録.csv で区分が「継続」の行だけ、受付番号順、CSVで 継続.csv に。"
    )


def test_a_settings_block_said_with_equals_and_numbered_files() -> None:
    procedure = read_procedure(
        "設定:\nファイル1 = 注文.xlsx\nファイル2 = 出荷.csv\n突合キー = 注文番号\n"
        "金額列 = 金額\n許容差 = 100円\n出力 = 注文出荷差異.xlsx"
    )
    assert [i.holds for i in procedure.inputs] == ["注文", "出荷"]
    (reconcile,) = procedure.steps
    assert (reconcile.kind, reconcile.keys, reconcile.tolerance) == ("reconcile", ["注文番号"], 100)
    assert [o.file_name for o in procedure.outputs] == ["注文出荷差異.xlsx"] and not procedure.gaps


def test_a_settings_line_of_values_keeps_those_rows() -> None:
    procedure = read_procedure(
        "設定:\n入力ファイル: 出荷.csv\n期間（出荷日）: 2025-04-01 〜 2025-04-30\n"
        "品目: 白菜、大根、人参 の3つ\n集計単位: 農家 × 品目\n集計項目: 出荷量 の合計\n"
        "出力: 出荷集計.xlsx"
    )
    (keep, total) = procedure.steps
    conditions = {(c.column, c.op, str(c.value)) for c in keep.conditions}
    assert conditions == {
        ("出荷日", ">=", "2025-04-01"),
        ("出荷日", "<=", "2025-04-30"),
        ("品目", "in", "['白菜', '大根', '人参']"),
    }
    assert total.group_by == ["農家", "品目"] and not procedure.gaps


def test_a_settings_key_line_is_no_condition() -> None:
    procedure = read_procedure(
        "設定:\n入力ファイル: 注文.xlsx\n入力ファイル: 出荷.csv\n照合キー: 注文番号\n"
        "許容差: 0円\n出力: 差異.xlsx"
    )
    assert [s.kind for s in procedure.steps] == ["reconcile"]


def test_a_short_era_date() -> None:
    assert _steps("申請.xlsx から申請日が R7.4.1 以降の行を CSV に") == [
        ("filter", [("申請日", ">=", "2025-04-01")])
    ]


def test_a_number_inside_a_quoted_value_is_that_value() -> None:
    assert _steps("成績.xlsx で学年が「小6」の行だけ CSV に") == [
        ("filter", [("学年", "==", "小6")])
    ]


def test_a_purpose_said_with_ni_tsukau_is_no_column() -> None:
    assert ("sort", (["走行距離"], True)) in _steps(
        "運行.csv を車両ごとに走行距離を合計。整備の段取りに使うから走行距離の多い順で。Excelで"
    )


def test_an_approval_before_handing_on_or_settling() -> None:
    for said in (
        "振込処理に回す前に課長の承認を挟むこと",
        "支払を確定する前に課長の承認を挟むこと",
    ):
        procedure = read_procedure(f"支払.xlsx で状態が「承認待ち」の行だけ。{said}。Excelで")
        assert "approval" in [s.kind for s in procedure.steps] and not procedure.gaps, said


def test_a_value_named_in_a_reason_is_no_condition() -> None:
    procedure = read_procedure(
        "申込.csv で、受講料が3千円未満のは見学だけの申込なので除いて、教室ごとの件数を Excel に"
    )
    (keep, _total) = procedure.steps
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [("受講料", ">=", 3000)]


def test_a_file_name_with_okurigana_before_an_underscore_is_whole() -> None:
    procedure = read_procedure("会員.csv を地区ごとに件数を出して、申込み_4月分.xlsx で保存して")
    assert [o.file_name for o in procedure.outputs] == ["申込み_4月分.xlsx"]


def test_an_exclusion_said_in_a_remark_in_parentheses_is_read() -> None:
    procedure = read_procedure(
        "会費.csv で未納額が0より大きい人を出してください。"
        "（退会した人は 会員区分 が「退会」になっているので、それは除いてください）Excelで"
    )
    (keep,) = procedure.steps
    assert {(c.column, c.op, c.value) for c in keep.conditions} == {
        ("未納額", ">", 0),
        ("会員区分", "!=", "退会"),
    }
    assert not procedure.gaps


def test_a_remark_in_parentheses_asking_to_exclude_is_named_when_not_read() -> None:
    procedure = read_procedure(
        "会費.csv で未納額が0より大きい人を Excel に。"
        "（OBの方は記念会員なので対象外にしてください）"
    )
    assert procedure.gaps


def test_an_approval_said_as_waiting_for_it() -> None:
    for said in (
        "照合できなかったものは、確定する前に私の確認待ちにしておいてください",
        "不一致のものは部長の確認が済むまで支払に回さないよう、承認待ちにしておいてください",
        "連絡は照合結果を所長に見ていただいてからにしたいので、承認待ちで止めておいてください",
    ):
        procedure = read_procedure(
            f"請求.xlsx と 入金.csv を 請求番号 で照合してください。{said}。結果は 照合.xlsx に。"
        )
        assert [s.kind for s in procedure.steps] == ["reconcile", "approval"], said
        assert not procedure.gaps, (said, procedure.gaps)


def test_a_persons_own_task_and_the_file_alone_ask_nothing() -> None:
    procedure = read_procedure(
        "案内状の準備です（発送は事務長がやるのでデータだけで大丈夫です）。"
        "名簿.csv で地区が「東町」の行だけ、案内.xlsx に出力"
    )
    assert [s.kind for s in procedure.steps] == ["filter"] and not procedure.gaps


def test_a_condition_before_katsu_and_a_contains_condition() -> None:
    (keep,) = [
        s
        for s in read_procedure(
            "模試.xlsx で、学年が「中2」かつ コース に「選抜」を含む生徒について、CSVで"
        ).steps
    ]
    assert {(c.column, c.op, c.value) for c in keep.conditions} == {
        ("学年", "==", "中2"),
        ("コース", "contains", "選抜"),
    }


def test_saiyasu_is_the_minimum() -> None:
    assert _steps("相場.csv で、品目ごとに単価の平均・最高・最安を出して Excel に") == [
        ("aggregate", (["品目"], {"単価": ["mean", "max", "min"]}))
    ]


def test_files_of_one_layout_gathered_as_both() -> None:
    procedure = read_procedure(
        "申込データが代理店2社から来ています（申込_東.csv、申込_西.csv、列は同じ）。"
        "両方をまとめて、申込日の早い順で 申込_統合.xlsx に出力。"
    )
    assert [s.kind for s in procedure.steps] == ["concat", "sort"] and not procedure.gaps


def test_an_output_named_after_namae_wa() -> None:
    procedure = read_procedure(
        "未収.xlsx、未収額が1万円以上の人だけCSVで出しといて。名前は 督促.csv で"
    )
    assert [o.file_name for o in procedure.outputs] == ["督促.csv"] and not procedure.gaps


def test_a_generic_word_said_as_a_column_with_a_quoted_value() -> None:
    assert ("filter", [("結果", "==", "合格")]) in _steps(
        "進路.csv で 結果 が「合格」の行だけにして、高校ごとに人数を数え、合格.xlsx に。"
    )


def test_columns_said_mixed_in_the_last_sentence_are_normalised() -> None:
    procedure = read_procedure(
        "出荷.csv を使います。船名が「第３丸」「第3丸」みたいに全角半角バラバラなので揃えてから、"
        "船名ごとに 数量 を合計して 集計.xlsx へ"
    )
    assert (procedure.steps[0].kind, procedure.steps[0].columns) == ("normalize", ["船名"])
    assert not procedure.gaps


def test_wakai_jun_is_ascending() -> None:
    assert ("sort", (["車両番号"], False)) in _steps(
        "給油.xlsx で車両番号ごとに給油量を合計してCSVで。車両番号の若い順でおねがい"
    )


def test_no_tolerance_said_of_a_column_names_the_amount_compared() -> None:
    procedure = read_procedure(
        "月末締めで、レジ.csv と 会計.xlsx を会計番号で照合して、"
        "請求額が1円でも違うものは差異として出してください。Excelで"
    )
    (reconcile,) = procedure.steps
    assert (reconcile.amount_column, reconcile.tolerance) == ("請求額", 0) and not procedure.gaps


def test_an_approval_said_as_having_it_seen() -> None:
    procedure = read_procedure(
        "販売.csv で金額が3万円以上の行だけにしといて。"
        "保存前に院長に見てもらうから、確認とれたらExcelで保存で"
    )
    assert [s.kind for s in procedure.steps] == ["filter", "approval"] and not procedure.gaps


def test_an_input_sheet_said_as_quoted_sheet_in_parentheses() -> None:
    procedure = read_procedure("出荷.xlsx（「5月」シート）で、銘柄ごとに本数を合計してCSVに")
    assert [(i.holds, i.sheet) for i in procedure.inputs] == [("出荷", "5月")]


def test_a_settings_line_with_a_comparison() -> None:
    procedure = read_procedure(
        "設定：\nファイル＝仕込.csv\n精米歩合＝６０以下\n並び順＝仕込日の新しい順\n出力＝Excel"
    )
    (keep, _order) = procedure.steps
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [("精米歩合", "<=", 60)]


def test_a_date_window_between_two_columns_is_no_condition() -> None:
    procedure = read_procedure(
        "入金.csv と 請求.xlsx を契約番号で照合。"
        "入金日が請求日の前後3日以内なら同じとみなす。Excelで"
    )
    assert [s.kind for s in procedure.steps] == ["reconcile"]
    assert procedure.steps[0].date_window_days == 3


def test_metrics_listed_for_several_columns_apply_to_each() -> None:
    assert _steps("給油.xlsx で車番ごとに給油量と燃料代の合計・平均を出してCSVで") == [
        ("aggregate", (["車番"], {"給油量": ["sum", "mean"], "燃料代": ["sum", "mean"]}))
    ]


def test_a_denied_exact_amount_keeps_the_other_rows() -> None:
    assert _steps("会費.csvで納入額が3000円ちょうどでない行を、要確認.csvへ出力") == [
        ("filter", [("納入額", "!=", 3000)])
    ]


def test_a_condition_before_a_comma_and_katsu_is_kept() -> None:
    assert _steps("経費.csvで、部門が総務部、かつ金額が1万円超の行を抜き出してExcelに") == [
        ("filter", [("金額", ">", 10000), ("部門", "==", "総務部")])
    ]


def test_a_condition_before_a_comma_and_katsu_is_named_when_not_read() -> None:
    procedure = read_procedure("経費.csvで、部門が総務部、かつ承認済みの行を抜き出してExcelに")
    assert any("総務部" in gap.message for gap in procedure.gaps)


def test_a_file_name_with_hiragana_after_an_underscore_is_whole() -> None:
    procedure = read_procedure("出荷.csvで業者が「ヤマト」以外の行を、出荷_その他業者.xlsxへ出力。")
    assert [o.file_name for o in procedure.outputs] == ["出荷_その他業者.xlsx"]


def test_a_comparison_with_another_column_is_named() -> None:
    procedure = read_procedure("在庫.csvで在庫数が発注点以下の品番だけ、発注.xlsxに出力")
    assert not [s for s in procedure.steps if s.kind == "filter"]
    assert [g.kind for g in procedure.gaps] == ["unsupported_action"]


def test_spaces_trimmed_from_a_column_are_a_normalisation_not_a_condition() -> None:
    assert _steps(
        "請求.csvの取引先名の前後の空白を除去して、取引先名で重複を削除し、一覧.csvに"
    ) == [
        ("normalize", None),
        ("dedupe", None),
    ]


def test_a_group_said_short_of_a_name_column_is_asked() -> None:
    procedure = read_procedure(
        "社員.csvの部署名を正規化してから部署ごとの人数を数え、人数.xlsxに保存。"
    )
    assert any("部署名" in gap.message for gap in procedure.gaps)


def test_the_base_and_the_kind_of_a_join() -> None:
    base = read_procedure(
        "顧客.csvと注文.csvを顧客IDで結合（注文側を基準に左結合）して、注文_顧客.xlsxに出して"
    )
    (join,) = base.steps
    assert (join.input, join.how) == ("in2", "left") and not base.gaps
    inner = read_procedure(
        "明細.csvと仕入先マスタ.csvを仕入先コードで内部結合して、結果.xlsxに出して"
    )
    assert inner.steps[0].how == "inner" and not inner.gaps


def test_the_amount_compared_as_a_key_with_a_tolerance_is_asked() -> None:
    procedure = read_procedure(
        "銀行.csvと仕訳.csvを、日付と金額で照合（金額の差は10円まで許容）して、照合.xlsxに"
    )
    assert procedure.gaps


def test_a_key_list_stops_before_the_amount_of_a_tolerance() -> None:
    procedure = read_procedure(
        "請求.csvと配送.csvを突き合わせて。キーは送り状番号、運賃の差は100円まで許容。Excelで"
    )
    (reconcile,) = procedure.steps
    assert (reconcile.keys, reconcile.amount_column) == (["送り状番号"], "運賃")


def test_a_condition_on_the_difference_a_reconciliation_finds_is_named() -> None:
    procedure = read_procedure(
        "前月.csvと当月.csvを口座番号で突き合わせて、残高の差額が5万円以上のものを変動.xlsxへ"
    )
    assert [g.kind for g in procedure.gaps] == ["unsupported_action"]


def test_a_file_name_beginning_with_hiragana() -> None:
    procedure = read_procedure("名簿.xlsxでクラスが「ゆり」の園児だけ残して、ゆり組名簿.xlsxに出力")
    assert [o.file_name for o in procedure.outputs] == ["ゆり組名簿.xlsx"]


def test_a_verb_before_a_file_name_is_no_part_of_it() -> None:
    procedure = read_procedure(
        "行事費.csvで費目ごとに件数を出して、件数が少ない順に並べ集計.xlsxに保存"
    )
    assert [o.file_name for o in procedure.outputs] == ["集計.xlsx"]


def test_duplicates_kept_when_said_so() -> None:
    procedure = read_procedure(
        "在庫.xlsxを、品番で重複を除かずに品番ごとの在庫数を合計して合計.xlsxに"
    )
    assert [s.kind for s in procedure.steps] == ["aggregate"] and not procedure.gaps


def test_a_group_said_short_of_a_column_a_join_brings_is_asked() -> None:
    procedure = read_procedure(
        "精算.csvと台帳.csvを組合員コードで結合して、地区名を付けたうえで地区ごとに精算額を合計し、"
        "地区別.xlsxに"
    )
    assert any("地区名" in gap.message for gap in procedure.gaps)


def test_a_ratio_said_in_percent_is_a_fraction() -> None:
    procedure = read_procedure(
        "原価.csvで、原価÷売価の原価率列を追加し、原価率が35%を超える行を高.xlsxに"
    )
    (compute, keep) = procedure.steps
    assert list(compute.expressions) == ["原価率"]
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [("原価率", ">", 0.35)]


def test_a_sheet_line_after_the_input_file_of_a_settings_block() -> None:
    procedure = read_procedure(
        "設定:\n入力ファイル = 出荷.xlsx\nシート = 集計用\n"
        "集計 = 農家ごとに出荷量の合計\n出力 = 集計.xlsx"
    )
    assert [(i.holds, i.sheet) for i in procedure.inputs] == [("出荷", "集計用")]
    assert [o.sheet for o in procedure.outputs] == [None]


def test_one_side_of_a_reconciliation() -> None:
    procedure = read_procedure(
        "銀行.csvと会計.csvを伝票番号で照合し、会計にあって銀行にない取引を未記帳.xlsxに書き出して"
    )
    assert procedure.steps[0].parts == ["unmatched_right"] and not procedure.gaps
    unnamed = read_procedure(
        "A.csvとB.csvを番号で照合して、現場にあって台帳にない物件を結果.xlsxに"
    )
    assert unnamed.gaps


def test_a_formula_over_totals_runs_after_the_aggregation() -> None:
    procedure = read_procedure(
        "POS.csvを店舗別に集計して、売上合計と客数合計を出し、売上合計を客数合計で割った"
        "客単価の列を追加して、客単価.xlsxに"
    )
    assert [s.kind for s in procedure.steps] == ["aggregate", "compute"] and not procedure.gaps


def test_a_step_word_before_a_kept_list_is_no_column() -> None:
    procedure = read_procedure(
        "報告.csvのうち、原因欄が空欄のものを抽出、報告日と機械番号と担当者だけ残して未記入.csvに出力"
    )
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["報告日", "機械番号", "担当者"]
    ]


def test_columns_counted_with_no_verb_are_kept() -> None:
    assert ("select", ["職員番号", "氏名", "所属"]) in _steps(
        "手当.csv、手当が未入力の職員だけ出してください。職員番号・氏名・所属の3列、所属順。CSVで。"
    )


def test_a_settings_line_of_columns_keeps_them() -> None:
    procedure = read_procedure(
        "・ファイル: 候補.csv\n・条件: 年収が400万円以下\n・列: 番号, 氏名, 年収\n・出力: 候補.xlsx"
    )
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [["番号", "氏名", "年収"]]


def test_a_left_join_keeps_the_first_file_said() -> None:
    procedure = read_procedure(
        "会員マスタ.xlsxと会費入金.csvを会員番号で左結合して、入金日が空欄の会員を未入金.csvに"
    )
    join = next(s for s in procedure.steps if s.kind == "join")
    assert join.input == "in1"


def test_one_side_said_with_ga_nai() -> None:
    procedure = read_procedure(
        "入荷予定.csvと入荷実績.csvを番号で突き合わせて、予定にあるが実績がないものを未入荷.csvに保存"
    )
    assert procedure.steps[0].parts == ["unmatched_left"]


def test_spaces_made_full_width_are_named() -> None:
    procedure = read_procedure(
        "台帳.csvの氏名のスペースの揺れを統一して（全角スペースに統一）、整理.xlsxにしてください"
    )
    assert [g.kind for g in procedure.gaps] == ["unsupported_action"]


def test_tsukiawasete_ketsugou_is_a_join() -> None:
    procedure = read_procedure(
        "シフト.xlsx と 勤怠.csv を従業員番号で突き合わせて結合し、"
        "残業時間が1時間を超える人をExcelに"
    )
    assert [s.kind for s in procedure.steps] == ["join", "filter"] and not procedure.gaps


def test_a_quoted_value_dropped_for_a_reason_asks_its_column() -> None:
    procedure = read_procedure(
        "客室.xlsx、部屋タイプごとに稼働率の平均。「離れ」は別管理なので除いて。CSVで"
    )
    (keep, _total) = procedure.steps
    assert [(c.column, c.op, c.value) for c in keep.conditions] == [(None, "!=", "離れ")]
    assert not procedure.gaps


def test_a_condition_restated_in_an_aside_is_one_condition() -> None:
    assert _steps("支払.csv：支払額5万円未満は対象外にして（＝50,000円以上だけ残す）。CSVで") == [
        ("filter", [("支払額", ">=", 50000)])
    ]


def test_a_kept_list_never_starts_inside_a_word() -> None:
    assert ("select", ["翻訳者名", "支払日", "支払額"]) in _steps(
        "明細.csv：翻訳者名の昇順、列は翻訳者名・支払日・支払額だけ。CSVで出して。"
    )


def test_files_said_as_a_range_are_each_read() -> None:
    procedure = read_procedure(
        "売上_2024_Q1.csv 〜 売上_2024_Q4.csv の4ファイルを1つにまとめてExcelに"
    )
    assert [i.holds for i in procedure.inputs] == [f"売上_2024_Q{n}" for n in range(1, 5)]
    assert [s.kind for s in procedure.steps] == ["concat"] and not procedure.gaps
    unread = read_procedure("売上_A.csv 〜 売上_C.csv を縦につなげてExcelに")
    assert unread.gaps


def test_an_output_named_after_its_format() -> None:
    procedure = read_procedure(
        "設定:\n入力ファイル: 台帳.xlsx\n突合キー: 契約番号\n"
        "出力: Excel 消込_11月.xlsx（シート名: 結果）"
    )
    assert [o.file_name for o in procedure.outputs] == ["消込_11月.xlsx"]


def test_a_file_after_an_arrow_that_is_joined_is_read() -> None:
    procedure = read_procedure(
        "奉納金.xlsx → 氏子台帳.xlsx と氏子番号でつなぐ → 地区ごとに金額の合計 → Excel"
    )
    assert len(procedure.inputs) == 2 and not procedure.gaps


def test_a_group_to_look_at_that_only_orders() -> None:
    assert _steps("在庫.csv、仕入先ごとに見たいので仕入先で並べ替え（昇順）。Excelで") == [
        ("sort", (["仕入先"], False))
    ]


def test_a_file_name_with_san() -> None:
    procedure = read_procedure(
        "受注.csvで金額の大きい順にExcelに（ファイル名：木村さん担当_12月.xlsx）"
    )
    assert [o.file_name for o in procedure.outputs] == ["木村さん担当_12月.xlsx"]


def test_a_column_then_a_date_range_with_a_space() -> None:
    assert ("filter", [("利用日", ">=", "2025-07-20"), ("利用日", "<=", "2025-08-31")]) in _steps(
        "申込.xlsx → 利用日 2025/7/20〜2025/8/31 → 団体名ごとに人数を合計 → 集計.xlsx"
    )


def test_numbered_settings_keys() -> None:
    procedure = read_procedure(
        "＜設定＞\n入力1: 査定.xlsx\n入力2: 支払予定.csv\n照合キー: 業者コード\n"
        "条件1: 区分 が「外注」\n出力: 照合.xlsx"
    )
    assert [i.holds for i in procedure.inputs] == ["査定", "支払予定"]
    assert not [g for g in procedure.gaps if "数値" in g.message]


def test_a_heading_line_is_no_condition() -> None:
    procedure = read_procedure(
        "処理内容：支払の集計\n対象ファイル：支払明細.xlsx\n集計キー：翻訳者ID\n集計値：支払額の合計"
        "\n出力形式：Excel"
    )
    assert [s.kind for s in procedure.steps] == ["aggregate"]


def test_a_count_word_used_in_a_formula_is_a_column() -> None:
    assert ("aggregate", (["団体名"], {"人数": ["sum"], "利用料": ["sum"]})) in _steps(
        "申込.xlsx → 利用料 ＝ 人数 × 200 → 団体名ごとに人数・利用料を合計 → 集計.xlsx"
    )


def test_data_fetched_from_a_screen_before_a_comma_is_refused() -> None:
    procedure = read_procedure(
        "予約サイトの管理画面から今月の口コミ落として、評価の低い順に並べといて"
    )
    assert [g.kind for g in procedure.gaps] == ["missing_source"]


def test_a_line_opening_with_an_arrow_makes_no_step_of_the_line_before() -> None:
    procedure = read_procedure(
        "・上期分：申請_上期.csv\n・下期分：申請_下期.csv\n"
        "→ 2つをつなげて、申請番号で重複カット → 年間.xlsx で保存"
    )
    assert [s.kind for s in procedure.steps] == ["concat", "dedupe"] and not procedure.gaps


def test_each_row_and_before_output_ask_nothing() -> None:
    procedure = read_procedure(
        "報酬.xlsx：各行で 報酬額 = 時間 × 単価 を計算 → 依頼者別に報酬額を合計 → "
        "Excel「報酬.xlsx」"
    )
    assert not procedure.gaps
    approved = read_procedure("経費.csv で金額が1万円以上の行だけ。出力前に所長承認。Excelで")
    assert "approval" in [s.kind for s in approved.steps] and not approved.gaps


def test_a_date_pair_in_an_arrow_chain_and_an_exact_match_only() -> None:
    procedure = read_procedure(
        "入金.csv と 請求.xlsx → 保護者番号で照合 → 金額はぴったり一致のみOK → "
        "入金日と請求日のずれは前後5日まで → 照合.xlsx に出力"
    )
    (reconcile,) = procedure.steps
    assert (reconcile.date_column, reconcile.right_date_column, reconcile.date_window_days) == (
        "入金日",
        "請求日",
        5,
    )
    assert reconcile.tolerance == 0 and not procedure.gaps


def test_spaces_and_widths_made_uniform_then_a_key_after_sonogo() -> None:
    procedure = read_procedure(
        "依頼者.csv の氏名とフリガナのスペース・全半角を統一し、その後フリガナと生年月日が同じ行を"
        "1つにまとめてください。CSVで"
    )
    assert [(s.kind, s.columns or s.keys) for s in procedure.steps] == [
        ("normalize", ["氏名", "フリガナ"]),
        ("dedupe", ["フリガナ", "生年月日"]),
    ]


def test_a_total_sorted_by_its_column_adds_no_count() -> None:
    assert _steps(
        "予約.xlsxから、ツアー名ごとに参加人数を合計し、参加人数の多い順に並べてExcelに"
    ) == [
        ("aggregate", (["ツアー名"], {"参加人数": ["sum"]})),
        ("sort", (["参加人数"], True)),
    ]


def test_a_total_said_as_column_and_metric_is_filtered_after_the_aggregation() -> None:
    steps = _steps(
        "物販.csvで、区分ごとに売上金額の合計を出し、売上金額合計が3万円未満の区分は除いてExcelに"
    )
    assert steps == [
        ("aggregate", (["区分"], {"売上金額": ["sum"]})),
        ("filter", [("売上金額_sum", ">=", 30000)]),
    ]


def test_a_file_name_beginning_with_sonota() -> None:
    procedure = read_procedure("購買.csvで仕入先が「A医科」以外の行を、その他仕入先.csvへ。")
    assert [o.file_name for o in procedure.outputs] == ["その他仕入先.csv"]


def test_no_tolerance_said_of_the_difference_of_a_column() -> None:
    procedure = read_procedure(
        "請求.csvと入金.csvを請求番号で突き合わせ、金額の差額が1円でもあれば不一致として入金差異.xlsxに"
    )
    (reconcile,) = procedure.steps
    assert (reconcile.amount_column, reconcile.tolerance) == ("金額", 0)


def test_two_adjacent_files_of_a_range_are_just_those_two() -> None:
    procedure = read_procedure("売上_1.csv 〜 売上_2.csv を縦につなげてExcelに")
    assert [i.holds for i in procedure.inputs] == ["売上_1", "売上_2"] and not procedure.gaps
