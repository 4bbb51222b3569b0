"""read_procedure on steps said in Excel's own words (ピボット, オートフィルタ, VLOOKUP, 重複の
削除, 貼り付け), and on what must never be dropped silently: a numbered step of which nothing
was read, keys and values in an aside, an approval said as 「出す前に確認したい」, labels
put into a column by reading free text (the tests' own wording)."""

from __future__ import annotations

from keiri_agent.plans.design.coverage import check_coverage
from keiri_agent.plans.design.procedure import COUNT_ALL, Procedure
from keiri_agent.plans.design.procedure_plan import plan_from_procedure
from keiri_agent.plans.design.procedure_rules import read_procedure


def _steps(procedure: Procedure, kind: str) -> list:
    return [step for step in procedure.steps if step.kind == kind]


def _conditions(procedure: Procedure) -> list[tuple[object, str, object]]:
    return [
        (c.column, c.op, c.value) for step in _steps(procedure, "filter") for c in step.conditions
    ]


def test_a_pivot_said_by_its_rows_and_values_is_a_grouped_count() -> None:
    procedure = read_procedure(
        "【手順】\n1. 窓口受付.csv を開く\n2. ピボット：行＝受付窓口、値＝件数（データの個数）\n"
        "【出力】窓口別件数.xlsx"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["受付窓口"]
    assert aggregate.metrics == {COUNT_ALL: ["count"]}


def test_a_pivot_in_parentheses_with_two_metrics_of_one_column() -> None:
    procedure = read_procedure(
        "1. 粗利明細.xlsx を読む\n2. ピボット（行：担当者／値：粗利（円）の合計と平均）\n"
        "3. CSVで出力"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["担当者"]
    assert aggregate.metrics == {"粗利": ["sum", "mean"]}


def test_an_autofilter_is_a_filter() -> None:
    procedure = read_procedure(
        "備品台帳.xlsx\n1. オートフィルタ：保管倉庫＝川崎\n2. 取得日の昇順に並べ替え\n3. CSVで出力"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("保管倉庫", "==", "川崎")]
    procedure = read_procedure(
        "備品台帳.xlsx をオートフィルタで「状態」が「廃棄」のものだけ表示して、Excelで保存"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("状態", "==", "廃棄")]


def test_a_vlookup_joins_the_master_on_its_search_key() -> None:
    procedure = read_procedure(
        "出勤簿.csv に、従業員マスタ.xlsx から「時給」を VLOOKUP で引いてくる"
        "（検索値：従業員番号）。Excelで出力"
    )
    assert not procedure.gaps, procedure.gaps
    (join,) = _steps(procedure, "join")
    assert join.keys == ["従業員番号"]
    assert join.fields == ["時給"]


def test_remove_duplicates_and_paste_below_and_into_another_book() -> None:
    procedure = read_procedure("会員名簿.xlsx を会員番号で重複の削除をして、CSVにしてください")
    assert not procedure.gaps, procedure.gaps
    assert [step.keys for step in _steps(procedure, "dedupe")] == [["会員番号"]]
    procedure = read_procedure(
        "1. 北店売上.xlsx と 南店売上.xlsx を1枚のシートに縦に貼り付け\n"
        "2. 別ブック（全店売上.xlsx）に貼り付け"
    )
    assert not procedure.gaps, procedure.gaps
    assert _steps(procedure, "concat")
    assert [o.file_name for o in procedure.outputs] == ["全店売上.xlsx"]


def test_a_numbered_step_of_which_nothing_was_read_is_asked() -> None:
    """「①…で重複をすっきりさせる」 read as nothing must not leave a Plan without it."""
    procedure = read_procedure(
        "成績一覧.xlsx の処理をお願いします。\n①生徒番号で重複をすっきりさせる\n"
        "②国語の降順で並べ替え\n③上位者.xlsx に保存"
    )
    assert any("生徒番号" in gap.message for gap in procedure.gaps), procedure.gaps


def test_keys_and_values_in_an_aside_are_parameters_not_remarks() -> None:
    procedure = read_procedure(
        "予約台帳.csv を月ごとに宿泊売上を合計（対象：チェックイン月）してExcelで保存"
    )
    assert any("チェックイン" in gap.message for gap in procedure.gaps), procedure.gaps
    procedure = read_procedure(  # the other pieces of the aside stay remarks
        "入金.csv と 請求.xlsx を顧客番号で照合し、請求額を比べてください"
        "（差額の許容なし＝0円、日付は見なくて大丈夫です）。Excelで出力"
    )
    assert not procedure.gaps, procedure.gaps


def test_an_approval_said_as_wanting_to_check_before_the_output() -> None:
    procedure = read_procedure(
        "残業実績.csv を課ごとに残業時間の合計を出して、Excelで。出す前に確認したいです"
    )
    assert not procedure.gaps, procedure.gaps
    assert _steps(procedure, "approval")


def test_labels_put_into_a_column_by_reading_free_text_are_a_classification() -> None:
    procedure = read_procedure(
        "窓口アンケート.xlsx の自由記述を読んで、要望／苦情／感謝のどれかを「分類」列に入れて"
        "Excelで"
    )
    (classify,) = _steps(procedure, "classify")
    assert classify.labels == ["要望", "苦情", "感謝"]
    procedure = read_procedure(
        "欠席連絡.csv の内容を読んで 病気／家庭の事情／その他 で「理由区分」をつけて、CSVで"
    )
    (classify,) = _steps(procedure, "classify")
    assert classify.labels == ["病気", "家庭の事情", "その他"]


def test_a_bare_narrowing_takes_the_conditions_said_beside_it() -> None:
    procedure = read_procedure(
        "修繕依頼.xlsxを絞り込んでCSVで出してください。（条件：対応区分＝外部業者、見積額＞＝3万）"
    )
    assert not procedure.gaps, procedure.gaps
    assert sorted(_conditions(procedure), key=str) == sorted(
        [("対応区分", "==", "外部業者"), ("見積額", ">=", 30000)], key=str
    )
    procedure = read_procedure(  # a narrowing that names something else is still asked
        "修繕依頼.xlsxの依頼元を絞り込んでCSVで出してください。（条件：対応区分＝外部業者）"
    )
    assert procedure.gaps


def test_a_settings_line_of_a_narrowing_ends_at_its_line() -> None:
    procedure = read_procedure("備品台帳.xlsx\n1. 絞り込み：保管倉庫＝川崎\n2. CSVで出力")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("保管倉庫", "==", "川崎")]
    assert [o.format for o in procedure.outputs] == ["csv"]


def test_the_count_of_an_identifier_is_the_row_count() -> None:
    procedure = read_procedure(
        "1. 面談記録.csv を読む\n2. ピボット：行＝面談者、値＝相談者ID のデータの個数\n"
        "3. Excelで保存"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["面談者"]
    assert aggregate.metrics == {COUNT_ALL: ["count"]}


def test_a_pivot_said_by_its_row_labels_and_values_in_its_own_sentence() -> None:
    procedure = read_procedure(
        "検針記録.xlsx でピボットテーブルを作ってほしいです。行ラベルに検針員、値に使用量（m3）の"
        "合計とデータの個数。Excelで。"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["検針員"]
    assert aggregate.metrics == {"使用量": ["sum"], COUNT_ALL: ["count"]}


def test_a_verbal_noun_listed_among_groups_is_a_group() -> None:
    """「学年×分類で」: 分類 is a column here, not the verb 分類する."""
    procedure = read_procedure("貸出記録.xlsx を学年×分類で貸出件数を出してください。Excelで")
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["学年", "分類"]


def test_a_month_compared_and_read_by_no_rule_is_asked() -> None:
    procedure = read_procedure(
        "社用車利用.csv を利用者ごとに走行距離を合計してCSVで。期間は今年度の4月以降、"
        "利用日で見てください。"
    )
    assert procedure.gaps
    assert not _conditions(procedure)


def test_the_kind_of_request_on_a_form_is_no_condition() -> None:
    procedure = read_procedure(
        "【依頼種別】データ抽出\n【対象ファイル】修繕履歴.csv\n【抽出条件】工事区分＝外壁\n"
        "【出力形式】Excel"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("工事区分", "==", "外壁")]


def test_a_whole_month_is_its_first_to_last_day() -> None:
    procedure = read_procedure("入庫記録.csv で、入庫日が令和6年2月中のものだけExcelで")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("入庫日", ">=", "2024-02-01"),
        ("入庫日", "<=", "2024-02-29"),
    ]
    # a month set apart by spaces was once compared as text, then asked: now its days
    procedure = read_procedure(
        "問合せ記録.xlsx の 問合せ日 が 令和7年1月 のものだけで、問合せ種別ごとの件数。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("問合せ日", ">=", "2025-01-01"),
        ("問合せ日", "<=", "2025-01-31"),
    ]


def test_a_blank_denied_with_naru_keeps_the_filled_rows() -> None:
    """「空欄になっていない」 was read as 「空欄」: the blank rows kept, silently."""
    procedure = read_procedure("面談票.xlsx で、特記事項が空欄になっていない行だけ抽出してExcelで")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("特記事項", "not_null", None)]


def test_a_column_filtered_then_the_value_kept() -> None:
    procedure = read_procedure("仕入明細.xlsx、仕入区分でフィルタかけて輸入だけにしてCSVでください")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("仕入区分", "==", "輸入")]


def test_a_column_added_then_its_formula_in_the_next_sentence() -> None:
    procedure = read_procedure(
        "請求明細.xlsx に「粗利」の列を足してください。中身は 売上額 − 原価 です。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    (compute,) = _steps(procedure, "compute")
    assert compute.expressions == {"粗利": "売上額 - 原価"}


def test_a_wish_said_as_the_reason_for_the_request_is_no_parameter() -> None:
    procedure = read_procedure(
        "来月の安全講習の案内を出す前に対象人数をつかみたくて、ご相談です。"
        "作業員名簿.csv を現場ごとに件数を数えてExcelでください。"
    )
    assert not procedure.gaps, procedure.gaps


def test_how_many_people_per_group_is_a_count() -> None:
    procedure = read_procedure(
        "お疲れさまです、総務の山田です。\n来月の安全講習の案内を出す前に人数をつかみたくて、"
        "ご相談です。\n作業員名簿.xlsx のうち、入場日が2024年4月1日以降の人だけにして、"
        "現場ごとに何人いるか数えてもらえますか。\nExcelでいただければ十分です。"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["現場"]
    assert aggregate.metrics == {COUNT_ALL: ["count"]}


def test_the_column_a_pivot_is_made_by_is_its_group() -> None:
    """「担当者でピボットして…の合計」 once became a total over the whole table."""
    procedure = read_procedure(
        "修理受付.csv を担当者でピボットして修理代の合計を出してください。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["担当者"]
    assert aggregate.metrics == {"修理代": ["sum"]}


def test_notation_words_name_no_column_to_make_uniform() -> None:
    """「メールアドレスの大文字小文字や前後の空白を揃えて」: メールアドレス is made uniform."""
    procedure = read_procedure(
        "会員名簿.csv のメールアドレスの大文字小文字や前後の空白を揃えてから、"
        "メールアドレスが同じ人は1件にしてください。CSVで。"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.columns for step in _steps(procedure, "normalize")] == [["メールアドレス"]]


def test_labels_put_into_a_named_column_after_reading_text_are_a_classification() -> None:
    procedure = read_procedure(
        "相談記録.xlsx、相談内容の文章を見て「区分」列に 年金／税金／その他 のどれかを"
        "入れてください。そのあと区分でピボットして件数を出して、Excelで"
    )
    (classify,) = _steps(procedure, "classify")
    assert classify.labels == ["年金", "税金", "その他"]


def test_a_comparison_said_in_the_progressive_before_the_rows() -> None:
    """「45を超えている人だけ」 once asked which column holds 「人」."""
    procedure = read_procedure("勤務表.csv の夜勤回数が8を超えている人だけにしてExcelで")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("夜勤回数", ">", 8)]
    procedure = read_procedure(
        "工事台帳.xlsx で粗利がマイナスになってる現場だけ出してください。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("粗利", "<", 0)]


def test_two_values_joined_by_to_without_quotes() -> None:
    procedure = read_procedure("会員一覧.csv、会員種別が正会員と賛助会員の行だけ残してCSVで")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("会員種別", "in", ["正会員", "賛助会員"])]


def test_a_sort_with_no_direction_is_ascending_as_in_a_spreadsheet() -> None:
    procedure = read_procedure("備品台帳.xlsx を設置場所と管理番号で並べ替えて、Excelで出して。")
    assert not procedure.gaps, procedure.gaps
    (sort,) = _steps(procedure, "sort")
    assert sort.by == ["設置場所", "管理番号"]
    assert not sort.descending
    procedure = read_procedure(  # a direction said after the verb is kept
        "備品台帳.xlsx を取得価額で並べ替え（降順）して、Excelで出して。"
    )
    (sort,) = _steps(procedure, "sort")
    assert sort.descending


def test_a_cross_tabulation_by_two_columns_is_a_grouping() -> None:
    procedure = read_procedure(
        "資材購買.xlsx を現場と資材名でクロス集計（ピボット）して購入数量を合計してほしいです。"
        "Excelで。"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["現場", "資材名"]
    assert aggregate.metrics == {"購入数量": ["sum"]}


def test_a_month_without_its_year_in_the_fiscal_year_said() -> None:
    """A 年度 runs from April to March: 10月 is in its first year, 2月 in the next."""
    procedure = read_procedure(
        "令和6年度の出納帳（出納帳_R6.csv）です。支払日が10月以降で、支払額が１万以上のものを"
        "抜き出してExcelでお願いします。"
    )
    assert not procedure.gaps, procedure.gaps
    assert ("支払日", ">=", "2024-10-01") in _conditions(procedure)
    procedure = read_procedure("2024年度の売上.csv で売上日が2月までの行だけExcelで")
    assert _conditions(procedure) == [("売上日", "<=", "2025-02-28")]


def test_remarks_that_ask_for_nothing() -> None:
    for instruction in (
        "発注明細.csv に「発注額」の列を足してください（単価×発注数量）。それだけです。CSVで。",
        "未収金一覧.csv から未収金額が1万円以上の行だけ、未収金額の大きい順に。"
        "会議資料に貼るのでExcelでいただけると助かります。",
        "今期の値引き状況を社長に報告したく、見積台帳.xlsx から値引率が15以上のものを"
        "抜き出してExcelにしてもらえますか。",
        "社員名簿.xlsx から、雇用形態でフィルタしてパートのみにしてください。Excelで",
    ):
        procedure = read_procedure(instruction)
        assert not procedure.gaps, (instruction, procedure.gaps)
        assert procedure.steps


def test_a_date_window_said_as_how_far_dates_may_drift() -> None:
    procedure = read_procedure(
        "納品.csv と 検収.xlsx を納品書番号で照合してください。金額は税抜金額で比較、"
        "日付は前後2日ずれていても同じとみなす。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    (reconcile,) = _steps(procedure, "reconcile")
    assert reconcile.date_window_days == 2


def test_whose_data_and_what_the_request_is_about_are_no_parameters() -> None:
    for instruction in (
        "貴社の「買掛金残高_2024年12月.csv」から仕入先コード・仕入先名・残高の3列だけを残したCSVを"
        "お願いします。",
        "監事監査の準備で、会計伝票.xlsx から金額が10万円以上の伝票を抜き出してExcelでください。",
    ):
        procedure = read_procedure(instruction)
        assert not procedure.gaps, (instruction, procedure.gaps)
        assert procedure.steps


def test_the_amount_said_as_the_word_kingaku_is_the_column_kingaku() -> None:
    """「金額は完全一致」 names the column 金額 (a file without it stops with the column named)."""
    procedure = read_procedure(
        "会費請求一覧.xlsx と 振込明細.csv の突き合わせをお願いします。キーは会員番号、"
        "金額は完全一致、日付の条件はなしで大丈夫です。Excelで結果をください。"
    )
    assert not procedure.gaps, procedure.gaps
    (reconcile,) = _steps(procedure, "reconcile")
    assert (reconcile.amount_column, reconcile.tolerance) == ("金額", 0)
    procedure = read_procedure(  # a column named for the role wins
        "会費請求一覧.xlsx と 振込明細.csv を会員番号で突き合わせ、金額は「請求額」で比べ、"
        "差は100円まで。Excelで"
    )
    (reconcile,) = _steps(procedure, "reconcile")
    assert reconcile.amount_column == "請求額"


def test_columns_kept_said_as_a_bare_list_or_counted_before_the_output() -> None:
    procedure = read_procedure("会員名簿.xlsx 退会日が空欄の人だけ 会員番号・氏名・会員種別 CSVで")
    assert not procedure.gaps, procedure.gaps
    assert [step.columns for step in _steps(procedure, "select")] == [
        ["会員番号", "氏名", "会員種別"]
    ]
    procedure = read_procedure(
        "請求.xlsx から教習生番号・氏名・請求総額の3列をExcelで出力してください"
    )
    assert not procedure.gaps, procedure.gaps
    assert not _steps(procedure, "aggregate")  # 請求総額 is a column kept, not a total
    assert [step.columns for step in _steps(procedure, "select")] == [
        ["教習生番号", "氏名", "請求総額"]
    ]


def test_rows_doubled_on_a_key_are_removed_and_a_removal_with_no_key_is_asked() -> None:
    """「社員番号で重複してる行を消して」 once built a Plan that copied the file as it was."""
    procedure = read_procedure(
        "会員マスタ.csv、会員番号で重複してる行があるので消してもらえますか？CSVのままでOKです"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.keys for step in _steps(procedure, "dedupe")] == [["会員番号"]]
    procedure = read_procedure("会員マスタ.csv、重複してる行を消してください。CSVで")
    assert procedure.gaps


def test_the_columns_a_file_is_said_to_hold_are_no_condition() -> None:
    """「…csv に 店舗名・時給・勤務時間 が入ってるんですが」 once kept only filled 勤務時間."""
    procedure = read_procedure(
        "勤務実績.csv に 店舗名・時給・勤務時間 が入ってるんですが、店舗名 ごとに 勤務時間 の"
        "合計を出してもらえますか。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert not _conditions(procedure)


def test_a_request_form_with_labelled_fields() -> None:
    procedure = read_procedure(
        "【依頼区分】データ抽出\n【対象ファイル】立替金_2024年11月.xlsx\n"
        "【依頼内容】立替額が30,000円以上の行だけ抽出し、精算日の早い順に並べ替えてください。\n"
        "【納品形式】Excel\n【希望納期】11/20"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("立替額", ">=", 30000)]


def test_a_column_filtered_then_its_range_after_an_arrow() -> None:
    procedure = read_procedure(
        "対象：入庫明細.xlsx\n① 入庫日 でフィルタ → 2024/4/1～2024/6/30\n"
        "② 倉庫 ごとに 数量 の合計\n③ Excelで保存"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("入庫日", ">=", "2024-04-01"),
        ("入庫日", "<=", "2024-06-30"),
    ]


def test_conditions_listed_above_then_pointed_at_with_their_count() -> None:
    procedure = read_procedure(
        "【品証】出荷検査.csv について\n・判定 が NG のもの\n・検査日 が 2024年10月1日以降\n"
        "上の2条件で絞って、ライン ごとの件数をCSVで出してください。"
    )
    assert not procedure.gaps, procedure.gaps
    assert len(_conditions(procedure)) == 2


def test_a_word_contained_said_with_haitteite() -> None:
    """「摘要 に「接待」が入っていて、かつ…」 was once read as 「接待」 being filled."""
    procedure = read_procedure(
        "仕訳.csv から、摘要 に「会食」が入っていて、かつ 金額 が３万超のものを拾って、"
        "部門コード 別に 金額 を合計してください。Excelで。"
    )
    assert not procedure.gaps, procedure.gaps
    assert ("摘要", "contains", "会食") in _conditions(procedure)


def test_a_column_named_kosuu_stays_a_column() -> None:
    procedure = read_procedure(
        "出荷明細.csv の 伝票番号・個数・重量 の3列だけにしてCSVで出してください"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.columns for step in _steps(procedure, "select")] == [["伝票番号", "個数", "重量"]]


def test_files_listed_in_brackets_with_a_remark_on_their_layout_are_stacked() -> None:
    procedure = read_procedure(
        "3拠点の出荷データ（ship_tokyo.csv / ship_osaka.csv / ship_fukuoka.csv、レイアウトは共通）"
        "をまとめて、品番 ごとの 出荷数 合計を出してExcelで下さい。"
    )
    assert not procedure.gaps, procedure.gaps
    assert len(procedure.inputs) == 3
    assert _steps(procedure, "concat")


def test_a_csv_asked_in_shift_jis_is_written_in_shift_jis() -> None:
    """「【出力形式】CSV（Shift_JIS）」 was once written as UTF-8 and reported done."""

    procedure = read_procedure(
        "【ファイル】出荷実績_5月.csv\n【条件】配送先都道府県が沖縄県以外\n"
        "【出力形式】CSV（Shift_JIS）"
    )
    assert not procedure.gaps, procedure.gaps
    assert [(o.format, o.encoding) for o in procedure.outputs] == [("csv", "cp932")]
    plan = plan_from_procedure(procedure, plan_id="shipments").plan
    (writer,) = [node for node in plan["graph"] if node["block"] == "csv.write"]
    assert writer["in"]["encoding"] == "cp932"
    procedure = read_procedure(  # the code of a file read is no parameter of the output
        "入金明細.csv（Shift_JIS）を読み込んで、金額が1万円以上の行だけCSVで"
    )
    assert [o.encoding for o in procedure.outputs] == [None]


def test_how_amounts_compare_is_no_amount_column_and_a_remark_on_a_month_no_filter() -> None:
    procedure = read_procedure(
        "家賃入金.csv と 契約一覧.xlsx を契約番号で突き合わせ、金額は完全一致で照合してExcelに"
    )
    (reconcile,) = _steps(procedure, "reconcile")
    assert reconcile.amount_column != "完全一致"
    procedure = read_procedure(
        "先月は赤字の店舗が多かったので、店舗別売上_1月.csv を店舗ごとに売上と経費を合計して"
        "Excelでまとめてください"
    )
    assert not procedure.gaps, procedure.gaps
    assert not _conditions(procedure)


def test_no_filter_said_outright_and_two_values_before_igai() -> None:
    procedure = read_procedure(
        "【ファイル】売上明細.csv\n【絞り込み】なし\n【集計】店舗ごとに売上を合計\n【出力】Excel"
    )
    assert not procedure.gaps, procedure.gaps
    assert not _conditions(procedure)
    procedure = read_procedure(
        "経費明細.csv から勘定科目が交際費と会議費以外の行を抽出してCSVで出力してください"
    )
    assert not procedure.gaps, procedure.gaps
    assert sorted(_conditions(procedure), key=str) == [
        ("勘定科目", "!=", "交際費"),
        ("勘定科目", "!=", "会議費"),
    ]


def test_columns_kept_said_just_before_the_output_format() -> None:
    procedure = read_procedure(  # two names after the rows were chosen, then the format
        "会員名簿.csv から 会員区分 が「退会」の行を除いて、会員番号と氏名だけExcelで"
    )
    assert not procedure.gaps, procedure.gaps
    (select,) = _steps(procedure, "select")
    assert select.columns == ["会員番号", "氏名"]
    procedure = read_procedure(  # a list, then 「を CSV に」 with no verb
        "在庫表.xlsx の在庫数が10以下の品目だけ残して 品番・品名・在庫数 をCSVに"
    )
    assert not procedure.gaps, procedure.gaps
    (select,) = _steps(procedure, "select")
    assert select.columns == ["品番", "品名", "在庫数"]
    procedure = read_procedure(  # 「列は A／B／C だけ」 on a memo line
        "- 備品台帳.xlsx を使う\n- 金額 10万円以上\n- 列は 備品番号／備品名／金額 だけ\n- Excel出力"
    )
    assert not procedure.gaps, procedure.gaps
    (select,) = _steps(procedure, "select")
    assert select.columns == ["備品番号", "備品名", "金額"]


def test_values_listed_as_the_only_ones_wanted_keep_those_rows() -> None:
    procedure = read_procedure(
        "売上記録.xlsx で、部門別に売上の合計を出してください。部門は「食品」「衣料」の2つだけで"
        "結構です。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("部門", "in", ["食品", "衣料"])]
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["部門"]


def test_a_remark_on_what_the_file_is_for_and_a_purpose_before_a_comma() -> None:
    procedure = read_procedure(
        "社員名簿.csv を社員番号で重複を除いてCSVにしてください。来月の研修で配布する資料です。"
    )
    assert not procedure.gaps, procedure.gaps
    procedure = read_procedure(
        "予算策定準備で、経費明細.xlsx から勘定科目が「旅費交通費」のものを抜いて、部署ごとに"
        "金額を合計したExcelを作ってください"
    )
    assert not procedure.gaps, procedure.gaps


def test_the_amount_compared_said_with_de_after_the_key() -> None:
    procedure = read_procedure(
        "請求一覧.csv と 入金一覧.csv を、請求番号をキーに請求金額で照合してExcelで出してください"
    )
    (reconcile,) = _steps(procedure, "reconcile")
    assert reconcile.keys == ["請求番号"]
    assert reconcile.amount_column == "請求金額"


def test_only_the_rows_with_a_difference_after_a_reconciliation() -> None:
    procedure = read_procedure(
        "売上台帳.csv と 入金記録.csv を取引番号で突き合わせて、金額を比べてください。"
        "50円までの差は一致扱い。差異があるものだけExcelで確認したいです"
    )
    assert not procedure.gaps, procedure.gaps
    (reconcile,) = _steps(procedure, "reconcile")
    assert reconcile.tolerance == 50
    assert "matched" not in reconcile.parts
    assert "differences" in reconcile.parts


def test_a_median_and_a_distinct_count_are_totals() -> None:
    procedure = read_procedure(
        "給与明細.csv から、部署ごとに 支給額 の合計と中央値を出してExcelにしてください"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.group_by == ["部署"]
    assert aggregate.metrics == {"支給額": ["sum", "median"]}
    procedure = read_procedure(
        "来店記録.xlsx から、店舗 ごとに 会員番号 のユニーク数を出してCSVにしてください"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.metrics == {"会員番号": ["nunique"]}


def test_notation_examples_in_parentheses_and_a_quoted_value_not_become() -> None:
    procedure = read_procedure(
        "顧客台帳.csv の 顧客名 と 住所 の書き方（全角・半角、スペースの有無など）が"
        "バラバラなので、まず表記を揃えてから、顧客名 で重複を削除してExcelで出してください"
    )
    assert not procedure.gaps, procedure.gaps
    (normalize,) = _steps(procedure, "normalize")
    assert normalize.columns == ["顧客名", "住所"]
    procedure = read_procedure(
        "会員一覧.xlsx の 会員区分 が「休会」になっていない人だけ、会員番号の昇順に並べてCSVで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("会員区分", "!=", "休会")]


def test_a_difference_over_an_amount_after_matching_is_the_tolerance() -> None:
    procedure = read_procedure(
        "売上台帳.xlsx と 入金台帳.xlsx を 伝票番号 で突き合わせて、入金額 の差が500円を"
        "超えるものと、片方にしかないものを洗い出してExcelで"
    )
    assert not procedure.gaps, procedure.gaps
    (reconcile,) = _steps(procedure, "reconcile")
    assert (reconcile.amount_column, reconcile.tolerance) == ("入金額", 500)
    assert not _steps(procedure, "filter")
    assert "differences" in reconcile.parts and "matched" not in reconcile.parts


def test_questions_and_answers_are_settings() -> None:
    procedure = read_procedure(
        "Q. 使うファイルは？→ 会員台帳.xlsx\nQ. 対象は？→ 会員種別が「正会員」「賛助会員」の人\n"
        "Q. 出す列は？→ 会員番号、氏名、会員種別\nQ. 形式は？\nA. CSV"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("会員種別", "in", ["正会員", "賛助会員"])]
    (select,) = _steps(procedure, "select")
    assert select.columns == ["会員番号", "氏名", "会員種別"]
    assert [o.format for o in procedure.outputs] == ["csv"]


def test_a_quoted_value_naming_duplicates_is_no_dedupe_and_days_of_a_fiscal_year() -> None:
    procedure = read_procedure(
        "申込一覧.csv から、取消理由が「二重申込」「重複入力」の行は除いて、コース ごとの件数を"
        "出してExcelにしてください"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("取消理由", "not_in", ["二重申込", "重複入力"])]
    procedure = read_procedure(
        "令和6年度の分です。支払台帳.xlsx から、支払日が2/1〜3/31 のものを抽出してCSVで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("支払日", ">=", "2025-02-01"),
        ("支払日", "<=", "2025-03-31"),
    ]


def test_a_column_in_backticks_or_quotes_with_a_bare_value() -> None:
    procedure = read_procedure(
        "accounts.csv から `status` が active のものだけ、`region` ごとに件数を数えてCSVで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("status", "==", "active")]
    procedure = read_procedure("会員.xlsx から「会員状態」が有効の行だけExcelで")
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("会員状態", "==", "有効")]


def test_an_approver_named_apart_from_the_requester_may_not_be_the_starter() -> None:
    procedure = read_procedure(
        "支払予定.xlsx から支払額が100万円以上の行を抽出し、上長の承認を得てからExcelに出力"
    )
    assert not procedure.gaps, procedure.gaps
    (approval,) = _steps(procedure, "approval")
    assert approval.approver == "上長"
    plan = plan_from_procedure(procedure, plan_id="large_payments").plan
    (gate,) = [node for node in plan["graph"] if node["id"] == "approve"]
    assert gate["in"]["approval"] == {"roles": ["approver"], "not_starter": True}
    coverage = check_coverage(procedure, plan)
    assert coverage.ok, coverage.lines()
    del gate["in"]["approval"]  # a plain confirm lets the requester approve themselves
    assert not check_coverage(procedure, plan).ok
    for said in ("出力する前に私に確認させてください", "担当者が確認してから出力してください"):
        procedure = read_procedure(
            f"支払予定.xlsx から支払額が100万円以上の行を抽出、{said}。Excelで"
        )
        (approval,) = _steps(procedure, "approval")
        assert approval.approver is None, said


def test_a_distinct_count_said_in_words_and_named_and_a_file_name_is_no_step() -> None:
    procedure = read_procedure(
        "講習申込.csv から、講習名ごとに受講者数（会員番号の異なる数）を集計し、受講者数の多い順に"
        "並べてCSVで出力してください"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.metrics == {"会員番号": ["nunique"]}
    (sort,) = _steps(procedure, "sort")
    assert (sort.by, sort.descending) == (["会員番号_nunique"], True)
    procedure = read_procedure(
        "名簿.csv から重複を除いてください。電話番号が同じ行は最初の行を残します。"
        "結果はCSV（名簿_重複除去.csv）で出力。"
    )
    assert not procedure.gaps, procedure.gaps
    assert len(_steps(procedure, "dedupe")) == 1


def test_the_format_then_the_file_and_its_sheet_in_parentheses() -> None:
    procedure = read_procedure(
        "売上.csv を店舗ごとに売上金額を合計し、Excel（店舗別売上.xlsx、シート名「4月」）に出力"
    )
    assert not procedure.gaps, procedure.gaps
    assert [(o.format, o.file_name, o.sheet) for o in procedure.outputs] == [
        ("excel", "店舗別売上.xlsx", "4月")
    ]
    assert [item.source for item in procedure.inputs] == ["売上.csv"]


def test_company_forms_said_as_an_arrow_after_the_verb_and_a_file_named_normalised() -> None:
    procedure = read_procedure(
        "得意先一覧.csv の「得意先名」の表記を揃え（㈱→株式会社など）、"
        "Excel（得意先一覧_正規化.xlsx）に出力してください。"
    )
    assert not procedure.gaps, procedure.gaps
    (normalize,) = _steps(procedure, "normalize")
    assert (normalize.columns, normalize.company_forms) == (["得意先名"], True)
    assert [o.file_name for o in procedure.outputs] == ["得意先一覧_正規化.xlsx"]


def test_a_handover_note_with_whom_to_ask_and_a_filter_said_by_the_tool() -> None:
    procedure = read_procedure(
        "佐藤さんへ 引き継ぎです。\n経費一覧.xlsxから部署が「営業部」の行だけを"
        "フィルタで抜き出して、Excelで保存してください。\n分からない点があれば田中主任に聞いてください。"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("部署", "==", "営業部")]


def test_mixed_columns_said_as_the_columns_then_how_and_a_suggestion_between_people() -> None:
    procedure = read_procedure(
        "会員名簿.csvの氏名カナと携帯番号の列、全角・半角やハイフンの有無がバラバラなので"
        "表記を統一してください。CSVでお願いします。来月またお茶でもしましょう。"
    )
    assert not procedure.gaps, procedure.gaps
    (normalize,) = _steps(procedure, "normalize")
    assert normalize.columns == ["氏名カナ", "携帯番号"]
    procedure = read_procedure(  # an action elsewhere said as 「…しましょう」 is still refused
        "会員名簿.csv を会員種別ごとに件数を数えてCSVで出力。結果は会計システムに登録しましょう。"
    )
    assert procedure.gaps


def test_unquoted_values_counted_and_files_piled_up() -> None:
    procedure = read_procedure(
        "仕入明細.csvから産地が北海道・ながの・あおもりの3か所だけを抜き出して、"
        "等級ごとに数量を合計してCSVで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("産地", "in", ["北海道", "ながの", "あおもり"])]
    procedure = read_procedure(
        "売上_1月.csv、売上_2月.csv を縦に積み上げて1つにまとめ、Excelで出力してください"
    )
    assert not procedure.gaps, procedure.gaps
    assert _steps(procedure, "concat")


def test_columns_announced_then_their_formulas_and_a_filter_by_dates_in_parentheses() -> None:
    procedure = read_procedure(
        "請求明細.xlsxに列を2つ追加してください。\n1.「消費税」＝税抜金額×0.1\n"
        "2.「税込金額」＝税抜金額＋消費税\nExcelで出力をお願いします。"
    )
    assert not procedure.gaps, procedure.gaps
    assert [list(s.expressions) for s in _steps(procedure, "compute")] == [
        ["消費税"],
        ["税込金額"],
    ]
    procedure = read_procedure(
        "入庫記録.csvを入庫日で5月分（2025-05-01〜2025-05-31）だけに絞って、CSVで出して"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("入庫日", ">=", "2025-05-01"),
        ("入庫日", "<=", "2025-05-31"),
    ]


def test_a_comparison_with_no_number_on_a_settings_line_is_asked() -> None:
    procedure = read_procedure(
        "【依頼内容】在庫の多い商品の抽出\n【対象ファイル】在庫一覧.csv\n【条件】在庫数が多い商品\n"
        "【出力形式】Excel"
    )
    assert procedure.gaps
    assert not _conditions(procedure)


def test_sub_steps_a_chat_without_stops_and_the_rows_named_before_no() -> None:
    procedure = read_procedure(
        "1. 車両一覧.csv を読み込む\n 1-1. 年式 が 2015 以下の車両に絞る\n"
        " 1-2. 価格 の高い順に並べ、上位5台だけ残す\n2. Excelで出力する"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("年式", "<=", 2015)]
    (sort,) = _steps(procedure, "sort")
    assert (sort.by, sort.descending, sort.limit) == (["価格"], True, 5)
    procedure = read_procedure(
        "お疲れさまです 来店記録.csv から店舗名が梅田店 難波店のだけ抜いて 日付の新しい順で csvで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("店舗名", "in", ["梅田店", "難波店"])]
    procedure = read_procedure(
        "【対象ファイル】受講者.xlsx\n【抽出条件】出席率が80未満の受講者\n【出力形式】CSV"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("出席率", "<", 80)]


def test_a_distinct_count_said_with_an_aside() -> None:
    procedure = read_procedure(
        "購買明細.csv を部署ごとにまとめ、取引先の数（重複なし）を数えてExcelで出してください"
    )
    assert not procedure.gaps, procedure.gaps
    (aggregate,) = _steps(procedure, "aggregate")
    assert aggregate.metrics["取引先"] == ["nunique"]


def test_a_join_key_said_with_kii_ni_shite_and_a_wish_to_understand() -> None:
    procedure = read_procedure(
        "受注一覧.csv に、顧客マスタ.xlsx の担当営業と業種を顧客番号をキーにして"
        "くっつけてください。Excelでお願いします。顧客ごとの傾向を把握したいです。"
    )
    assert not procedure.gaps, procedure.gaps
    (join,) = _steps(procedure, "join")
    assert join.keys == ["顧客番号"]
    procedure = read_procedure(  # a wish to act on another system is still refused
        "受注一覧.csv を顧客ごとに金額を合計してExcelで。会計システムに登録したいです。"
    )
    assert procedure.gaps


def test_review_round_six_silent_wrongs() -> None:
    procedure = read_procedure(  # each file's sheet, said once for all of them
        "売上_上期.xlsx、売上_下期.xlsx（いずれも「明細」シート）を縦につなげて年間売上.xlsx に出力"
    )
    assert not procedure.gaps, procedure.gaps
    assert [(i.source, i.sheet) for i in procedure.inputs] == [
        ("売上_上期.xlsx", "明細"),
        ("売上_下期.xlsx", "明細"),
    ]
    assert [o.sheet for o in procedure.outputs] == [None]
    procedure = read_procedure(  # the sort said first, with 「たうえで」, runs first
        "予約.csv を予約日の新しい順に並べたうえで、会員番号ごとに最初の行だけを残し（重複除去）、"
        "予約_最新.xlsx に出力してください"
    )
    assert [s.kind for s in procedure.steps] == ["sort", "dedupe"]
    procedure = read_procedure(  # rounding said beside the formula
        "請求明細.csv に、手数料＝請求額×0.035（1円未満切り捨て）の列を追加してExcelで"
    )
    assert not procedure.gaps, procedure.gaps
    (compute,) = _steps(procedure, "compute")
    assert compute.expressions == {"手数料": "floor(請求額 * 0.035)"}
    procedure = read_procedure(  # rounding no formula takes is asked, never dropped
        "請求明細.csv の金額が1万円以上の行だけ、小数点以下は四捨五入でExcelに"
    )
    assert procedure.gaps
    procedure = read_procedure(  # an approver named with a login in parentheses
        "経費.csv の金額が5万円以上の行を抽出し、出力前に部長の山田さん（ログイン名 yamada）の"
        "承認を取ってからExcelに出力"
    )
    (approval,) = _steps(procedure, "approval")
    assert approval.approver == "山田さん"
