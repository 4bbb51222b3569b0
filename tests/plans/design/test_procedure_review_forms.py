"""read_procedure on forms a by-hand review and two blind sets found read wrongly: a
condition inverted or dropped, a column taken from the wrong word, an output read as an
input, an unnamed source or a vague choice built anyway. Each is now read with its
parameters or asked / refused (the tests' own wording)."""

from __future__ import annotations

from keiri_agent.plans.design.procedure import Procedure
from keiri_agent.plans.design.procedure_rules import read_procedure


def _conditions(procedure: Procedure) -> list[tuple[object, str, object]]:
    return [
        (c.column, c.op, c.value)
        for step in procedure.steps
        if step.kind == "filter"
        for c in step.conditions
    ]


def test_a_unit_in_square_brackets_or_a_date_format_is_no_part_of_the_column() -> None:
    procedure = read_procedure(
        "管理台帳.xlsx から『滞納月数［か月］』が3以上の住戸だけ抜き出してExcelで保存"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("滞納月数", ">=", 3)]
    procedure = read_procedure(
        "受注伝票.xlsx の『納品日(YYYY/MM/DD)』が2024/12/01から2024/12/31までの行だけに"
        "絞ってExcelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("納品日", ">=", "2024-12-01"),
        ("納品日", "<=", "2024-12-31"),
    ]


def test_a_settings_block_naming_the_saved_file_before_the_input() -> None:
    procedure = read_procedure(
        "保存名：キャンセル一覧_11月.csv\n抽出条件：予約状態が「キャンセル」\n対象ファイル：予約台帳_11月.xlsx"
    )
    assert not procedure.gaps, procedure.gaps
    assert [item.source for item in procedure.inputs] == ["予約台帳_11月.xlsx"]
    assert [o.file_name for o in procedure.outputs] == ["キャンセル一覧_11月.csv"]
    assert _conditions(procedure) == [("予約状態", "==", "キャンセル")]


def test_an_output_under_a_heading_line_of_a_ticket() -> None:
    """The file under 「■出力先」 is written, never stacked with the files read."""
    procedure = read_procedure(
        "■やること\n・日報_4月.csv と 日報_5月.csv を縦につなげる\n・「区分」が「試食」の行は除く\n"
        "■出力先\n・エリア別売上.xlsx（シート名「4-5月」）"
    )
    assert not procedure.gaps, procedure.gaps
    assert [item.source for item in procedure.inputs] == ["日報_4月.csv", "日報_5月.csv"]
    assert [(o.file_name, o.sheet) for o in procedure.outputs] == [("エリア別売上.xlsx", "4-5月")]


def test_both_ends_of_a_range_survive_a_dedupe_said_after_it() -> None:
    procedure = read_procedure(
        "スクール生名簿.csvを読み、年齢が6歳以上12歳以下の子どもだけを残し、"
        "保護者電話番号で重複を除いてから、キッズ連絡先.csvに出力してください。"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("年齢", ">=", 6), ("年齢", "<=", 12)]
    dedupe = next(step for step in procedure.steps if step.kind == "dedupe")
    assert dedupe.keys == ["保護者電話番号"] and dedupe.keep == "first"


def test_rows_not_to_be_included_are_dropped() -> None:
    procedure = read_procedure(
        "公演アンケート.xlsxを読み、満足度が3未満の回答だけを取り出してCSVにしてください。"
        "自由記述が空の回答は含めなくて結構です。"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("満足度", "<", 3), ("自由記述", "not_null", None)]


def test_a_state_glossed_by_its_condition_and_negated() -> None:
    procedure = read_procedure(
        "入塾問い合わせ.csvを読み、入塾済み（入塾フラグ=1）でないものを媒体ごとに件数を集計してExcelに"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("入塾フラグ", "!=", 1)]


def test_the_kana_of_a_column_normalizes_that_column() -> None:
    procedure = read_procedure(
        "乗船名簿.csvで、乗客氏名のカナを正規化してから、予約番号と乗客氏名で重複を除いてCSVで出力"
    )
    assert not procedure.gaps, procedure.gaps
    normalize = next(step for step in procedure.steps if step.kind == "normalize")
    assert normalize.columns == ["乗客氏名"]


def test_a_condition_said_again_in_brackets_after_the_rows_word() -> None:
    procedure = read_procedure(
        "受講生名簿.xlsx で「受講時間」が20に届いてない人（20未満）を出して、Excelで保存"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("受講時間", "<", 20)]


def test_differences_wanted_in_a_named_sheet_with_nothing_compared_are_asked() -> None:
    procedure = read_procedure(
        "在庫一覧.xlsxと出荷予定.csvを商品コードで照合して、差異のあるものを在庫差異.xlsxのシート「差異」に出してください。"
    )
    reconcile = next(step for step in procedure.steps if step.kind == "reconcile")
    assert reconcile.missing == ["amount_column"]


def test_one_side_and_the_differences_asked_together() -> None:
    procedure = read_procedure(
        "墓地管理料請求.csvと入金明細.csvを、区画番号をキーに照合してください。請求があるのに入金のないもの、"
        "金額が一致しないものを管理料照合結果.xlsxのシート「不一致」に出力。"
    )
    assert not procedure.gaps, procedure.gaps
    reconcile = next(step for step in procedure.steps if step.kind == "reconcile")
    assert reconcile.parts == ["unmatched_left", "differences"]
    assert reconcile.amount_column == "金額"


def test_an_action_said_as_a_noun_at_the_end_of_a_line_is_not_dropped() -> None:
    procedure = read_procedure(
        "■やること\n・番組アンケート.csv から重要そうな意見をピックアップ\n■出力先\n・重要意見.xlsx"
    )
    assert [gap.kind for gap in procedure.gaps] == ["unsupported_action"]


def test_a_choice_left_to_the_product_is_refused() -> None:
    procedure = read_procedure(
        "成績.xlsx から成績が伸び悩んでいる生徒を抽出、基準はいい感じに。Excelで"
    )
    assert any("基準はいい感じに" in gap.message for gap in procedure.gaps), procedure.gaps


def test_the_usual_table_never_named_is_asked_for() -> None:
    procedure = read_procedure(
        "対象：いつもの観覧者データ\n集計単位：番組ごと\n集計内容：観覧者数の合計\n保存名：番組別観覧者.xlsx"
    )
    assert [gap.kind for gap in procedure.gaps] == ["missing_source"]
    assert "いつもの観覧者データ" in procedure.gaps[0].message


def test_a_value_corrected_aloud_is_the_corrected_one() -> None:
    procedure = read_procedure(
        "売上.csv で「売上金額」が大きい順に上位5件、いや10件ください。エクセルで。"
    )
    assert not procedure.gaps, procedure.gaps
    (sort,) = procedure.steps
    assert (sort.by, sort.descending, sort.limit) == (["売上金額"], True, 10)
    procedure = read_procedure(
        "給油機.csv で「売上」が3万、いや5万円未満の給油機だけ出して。CSVで。"
    )
    assert _conditions(procedure) == [("売上", "<", 50000)] and not procedure.gaps
    procedure = read_procedure(
        "注文履歴.csv で同じ注文番号、じゃなくて同じ「顧客番号」のは1行にして。CSVで"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.keys for step in procedure.steps] == [["顧客番号"]]


def test_the_end_of_a_month_and_a_second_date_without_its_year() -> None:
    procedure = read_procedure("会員.csv から「有効期限」が2024年2月末まで、の人を出して。CSVで")
    assert _conditions(procedure) == [("有効期限", "<=", "2024-02-29")] and not procedure.gaps
    procedure = read_procedure(
        "検査.xlsx で「予定日」が2025年2月中（2025年2月1日〜2月28日）の人を出したい。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("予定日", ">=", "2025-02-01"),
        ("予定日", "<=", "2025-02-28"),
    ]


def test_columns_kept_listed_in_quotes_or_after_retsu_wa() -> None:
    for said in ("列は「会員番号」「氏名」「期限」で。", "列は 会員番号・氏名・期限 だけ。"):
        procedure = read_procedure(
            f"会員.csv から「期限」が2025年4月30日以前の人を出して。{said}CSVで"
        )
        assert not procedure.gaps, (said, procedure.gaps)
        select = next(step for step in procedure.steps if step.kind == "select")
        assert select.columns == ["会員番号", "氏名", "期限"]


def test_a_value_added_after_the_condition() -> None:
    procedure = read_procedure(
        "点検.csv の、「結果」が「要整備」のやつ、あ、あと「要観察」も、それ出して。CSVで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("結果", "in", ["要整備", "要観察"])]


def test_names_in_backticks_and_double_quotes() -> None:
    procedure = read_procedure(
        '`members.csv` から `Plan` が "月額" で `Status` が "在籍" の会員だけ抜き出してExcelに'
    )
    assert not procedure.gaps, procedure.gaps
    assert sorted(_conditions(procedure), key=str) == [
        ("Plan", "==", "月額"),
        ("Status", "==", "在籍"),
    ]
    procedure = read_procedure(
        "patients.xlsx の 「OwnerID」 で「owners.csv」から 「OwnerName」 と 「Phone」 を"
        "引いてください。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.keys for step in procedure.steps if step.kind == "join"] == [["OwnerID"]]


def test_a_noun_describing_the_file_named_right_after_it() -> None:
    procedure = read_procedure(
        "集乳記録『集乳日報.csv』で「農家コード」ごとに「乳量」の合計を出して。Excelで"
    )
    assert not procedure.gaps, procedure.gaps


def test_a_dedupe_key_said_of_the_rows() -> None:
    procedure = read_procedure("顧客.xlsx で `Phone` が同じ行の重複を除き、CSVで出して")
    assert not procedure.gaps, procedure.gaps
    assert [step.keys for step in procedure.steps] == [["Phone"]]


def test_a_request_heading_the_numbered_steps_below() -> None:
    procedure = read_procedure(
        "以下の通り抽出願います。\n① 対象：リフト券販売.csv\n"
        "② 「券種」ごとの「販売額」の合計\n③ Excel出力"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.kind for step in procedure.steps] == ["aggregate"]


def test_a_master_joined_to_a_file_named_before_it_is_read_not_written() -> None:
    procedure = read_procedure(
        "『POS売上.csv』に『書籍マスタ.xlsx』を「ISBN」でつなげて「出版社」を付け、"
        "『出版社別.xlsx』に保存してください。"
    )
    assert not procedure.gaps, procedure.gaps
    assert [item.source for item in procedure.inputs] == ["POS売上.csv", "書籍マスタ.xlsx"]
    assert [o.file_name for o in procedure.outputs] == ["出版社別.xlsx"]


def test_files_of_one_layout_joined_are_stacked_and_a_later_master_joined() -> None:
    procedure = read_procedure(
        "① 振替_上期.csv と 振替_下期.csv を結合（同一レイアウト）\n"
        "② 「会員番号」で『会員マスタ.xlsx』の「クラス名」を付与\n③ Excelで出力"
    )
    assert not procedure.gaps, procedure.gaps
    assert [(step.kind, step.keys) for step in procedure.steps] == [
        ("concat", []),
        ("join", ["会員番号"]),
    ]


def test_settings_lines_with_an_amount_a_formula_and_an_approval() -> None:
    procedure = read_procedure(
        "対象：寮費請求.xlsx\n保存名：高額請求.xlsx\n抽出条件：請求額が50,000円超\n"
        "計算列：税込額=請求額×1.1\n承認：出力前に店長確認"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [("請求額", ">", 50000)]
    assert [step.kind for step in procedure.steps] == ["compute", "filter", "approval"]


def test_numbers_in_kanji_before_a_counter() -> None:
    procedure = read_procedure(
        "講座.csv から「受講者数」が三十名未満の回を抽出し、「講座名」ごとに件数を数えて。Excelで"
    )
    assert ("受講者数", "<", 30) in _conditions(procedure) and not procedure.gaps
    procedure = read_procedure(
        "採蜜.csv を「蜜源」ごとに「金額」を合計し、合計の大きい順に上位五つ。Excelで"
    )
    (sort,) = [step for step in procedure.steps if step.kind == "sort"]
    assert sort.limit == 5 and not procedure.gaps
    procedure = read_procedure(
        "料飲売上.xlsx に「一人当たり単価」という列を足して。計算は 売上額 ÷ 人数 で。Excelで"
    )
    assert [list(step.expressions) for step in procedure.steps] == [["一人当たり単価"]]


def test_a_period_named_then_dated_then_its_column() -> None:
    procedure = read_procedure(
        "月謝入金.csv から、上期（2024年4月1日〜2024年9月30日）に 入金日 がある分を対象に、"
        "教室 ごとの 入金額 の合計を出して Excel へ。"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("入金日", ">=", "2024-04-01"),
        ("入金日", "<=", "2024-09-30"),
    ]


def test_steps_said_with_their_parameters_in_brackets_after_arrows() -> None:
    procedure = read_procedure(
        "競り結果.csv\n⇒ 絞り込み（魚種 が まぐろ・ぶり・まだい のいずれか）\n"
        "⇒ 絞り込み（落札単価 が空欄でないもの）\n"
        "⇒ 集計（買受人名 ごとに 落札金額 を合計）\n⇒ Excel"
    )
    assert not procedure.gaps, procedure.gaps
    assert sorted(_conditions(procedure), key=str) == [
        ("落札単価", "not_null", None),
        ("魚種", "in", ["まぐろ", "ぶり", "まだい"]),
    ]
    (aggregate,) = [step for step in procedure.steps if step.kind == "aggregate"]
    assert aggregate.group_by == ["買受人名"]


def test_a_narrowing_whose_condition_is_not_read_is_asked_beside_other_filters() -> None:
    procedure = read_procedure(
        "競り.csv\n⇒ 絞り込み（落札単価 が空欄でないもの）\n"
        "⇒ 絞り込み（魚種 は 大物 ばかり）\n⇒ Excel"
    )
    assert any("大物" in gap.message for gap in procedure.gaps), procedure.gaps


def test_the_row_kept_by_a_dedupe_chosen_by_a_column() -> None:
    procedure = read_procedure(
        "予防接種記録.csvから、飼い主ID＋ペット名で重複を除去（最新の接種日を残す）して、CSVに出力"
    )
    assert not procedure.gaps, procedure.gaps
    (dedupe,) = procedure.steps
    assert (dedupe.keys, dedupe.by, dedupe.keep) == (["飼い主ID", "ペット名"], ["接種日"], "last")


def test_rows_left_out_with_no_condition_read_are_asked() -> None:
    for said in ("解約済みの契約は含めなくていいです。", "キャンセル分は入れないで。"):
        procedure = read_procedure(f"契約一覧.xlsx を保険料の多い順に並べてExcelに出力。{said}")
        assert any(said.rstrip("。") in gap.message for gap in procedure.gaps), (
            said,
            procedure.gaps,
        )


def test_a_verb_before_the_output_file_is_no_part_of_its_name() -> None:
    procedure = read_procedure("組合員.csvから、学部別に人数を数えて学部別組合員数.csvに出力")
    assert [o.file_name for o in procedure.outputs] == ["学部別組合員数.csv"]


def test_rows_sorted_by_a_count_column_are_not_counted() -> None:
    procedure = read_procedure(
        "打合せ記録.csvから、打合せ回数が3回以上のカップルを抽出し、打合せ回数の多い順に並べてExcelに"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.kind for step in procedure.steps] == ["filter", "sort"]


def test_the_column_of_both_files_said_mixed_is_normalized() -> None:
    procedure = read_procedure(
        "「仕入.csv」と「請求.xlsx」を照合します。両ファイルの「仕入先名」に表記ゆれがあるため、"
        "先にそろえてください。「伝票番号」で突き合わせ、「金額」の差は1,000円までを許容。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.columns for step in procedure.steps if step.kind == "normalize"] == [["仕入先名"]]
    procedure = read_procedure(
        "「原材料仕入.csv」の「仕入先名」に全角・半角やスペースの表記ゆれがあるので統一し、"
        "「仕入先名」ごとに「仕入金額」の合計を出してExcelに"
    )
    assert [step.columns for step in procedure.steps if step.kind == "normalize"] == [["仕入先名"]]


def test_an_effect_said_as_a_noun_at_the_end_is_refused() -> None:
    procedure = read_procedure("会員.csv　更新月=2025-07 の会員　更新案内メール 一斉送信")
    assert [gap.kind for gap in procedure.gaps] == ["unsupported_action"]


def test_news_around_the_request_is_no_condition() -> None:
    procedure = read_procedure(
        "スタッフ各位\nお疲れさまです。年始の初売りは1月4日10時開店です。今年も整理券を100枚用意します。\n"
        "お願いです。「下取車台帳.csv」から「売却日」が2024-07-01から2024-12-31までの行だけを"
        "取り出してCSVで保存してください。\n1月の棚卸しは1月27日の閉店後です。"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == [
        ("売却日", ">=", "2024-07-01"),
        ("売却日", "<=", "2024-12-31"),
    ]


def test_steps_said_as_loanwords() -> None:
    procedure = read_procedure(
        "券販売.csv を 券種 でグルーピングして 販売枚数 を合計、販売枚数 の多い順にソートして"
        "上位5件を Excel でアウトプットしてください。"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.kind for step in procedure.steps] == ["aggregate", "sort"]
    procedure = read_procedure(
        "会員台帳.xlsx で 退会日 が空欄の行だけフィルター、会員番号 でユニーク化、"
        "氏名・入会日 の列だけセレクトして CSV でエクスポートしてください。"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.kind for step in procedure.steps] == ["filter", "dedupe", "select"]
    procedure = read_procedure(
        "予約サイトからのエクスポート booking_export.csv の status が 「ok」 の行をCSVで"
    )
    assert [item.source for item in procedure.inputs] == ["booking_export.csv"]


def test_units_after_an_underscore_and_okurigana_mari_belong_to_the_name() -> None:
    procedure = read_procedure(
        "熟成庫ログ.csv で 温度_℃ が 15 を超えていて、塩分濃度_% が 11以上の行をCSVに"
    )
    assert not procedure.gaps, procedure.gaps
    assert sorted(_conditions(procedure), key=str) == [
        ("塩分濃度_%", ">=", 11),
        ("温度_°C", ">", 15),
    ]
    procedure = read_procedure("製造ロット.csv で 歩留まり率 が 0.9 未満の行をExcelに")
    assert _conditions(procedure) == [("歩留まり率", "<", 0.9)] and not procedure.gaps


def test_an_output_named_in_quotes_inside_brackets_after_its_format() -> None:
    procedure = read_procedure(
        "記録.csv を参加費の多い順に並べる。出力：Excel（「講師別実績_上位3.xlsx」）"
    )
    assert [item.source for item in procedure.inputs] == ["記録.csv"]
    assert [o.file_name for o in procedure.outputs] == ["講師別実績_上位3.xlsx"]


def test_a_formula_named_after_it_and_columns_listed_with_slashes() -> None:
    procedure = read_procedure(
        "出演者.xlsx で、源泉徴収額は 出演料 × 0.1021 で「源泉税額」という列にしてください。Excelで"
    )
    assert [step.expressions for step in procedure.steps] == [{"源泉税額": "出演料 * 0.1021"}]
    procedure = read_procedure(
        "エントリー.csv を登録日の古い順に並べ、出力は 番号／氏名／所属 の3列、Excelで"
    )
    assert [(step.kind, step.columns) for step in procedure.steps if step.kind != "sort"] == [
        ("select", ["番号", "氏名", "所属"])
    ]


def test_a_condition_ending_in_mono_de_is_kept_beside_an_excluded_one() -> None:
    procedure = read_procedure(
        "販売.csv を使って、席種が一等席のもので、販売チャネルが招待のものは除き、"
        "公演日ごとに枚数を合計してExcelに"
    )
    assert _conditions(procedure) == [("席種", "==", "一等席"), ("販売チャネル", "!=", "招待")]


def test_both_one_side_parts_and_differences_and_a_look_before_writing() -> None:
    procedure = read_procedure(
        "『台帳.xlsx』と『通帳.csv』を受付番号で突き合わせ、金額（どちらも列名は「金額」）が1円でも違うもの・"
        "片方にしかないものを洗い出してください。結果は 照合.xlsx の「差異一覧」シートに。"
        "書き出す前に一度私に見せてください。"
    )
    assert not procedure.gaps, procedure.gaps
    reconcile, approval = procedure.steps
    assert reconcile.parts == ["differences", "unmatched_left", "unmatched_right"]
    assert approval.kind == "approval"


def test_a_reason_in_brackets_is_no_condition() -> None:
    procedure = read_procedure(
        "点検記録.csv と 部品単価表.xlsx を使う。「部品番号」をキーに部品単価表の「単価」を付ける"
        "（点検記録には単価が入っていないので）。Excelで"
    )
    assert not procedure.gaps, procedure.gaps
    assert _conditions(procedure) == []


def test_how_a_join_keeps_rows_is_no_key_and_an_outer_join_is_refused() -> None:
    procedure = read_procedure(
        "申込.csvと入金.csvを結合して（キー：申込番号、内部結合）、クラス名ごとに出演料の合計をExcelに"
    )
    (join, _) = procedure.steps
    assert (join.keys, join.how) == (["申込番号"], "inner") and not procedure.gaps
    procedure = read_procedure(
        "見積.csvと発注.csvを工事番号で結合（外部結合、どちらかにしかない行も残す）してExcelに"
    )
    assert [gap.kind for gap in procedure.gaps] == ["unsupported_action"]


def test_spaces_removed_from_a_column_normalize_it() -> None:
    procedure = read_procedure(
        "契約.xlsx の契約者名の空白を除去してから、契約者名で重複除去してCSVに"
    )
    assert not procedure.gaps, procedure.gaps
    assert [(step.kind, step.columns) for step in procedure.steps] == [
        ("normalize", ["契約者名"]),
        ("dedupe", []),
    ]
    assert _conditions(procedure) == []


def test_the_latest_row_said_with_mottomo() -> None:
    procedure = read_procedure(
        "加入申込.csvを、申込番号で重複除去してください（受付日時が最も遅い行を残す）。CSVで"
    )
    (dedupe,) = procedure.steps
    assert (dedupe.by, dedupe.keep) == (["受付日時"], "last") and not procedure.gaps


def test_a_count_named_and_used_in_a_later_formula_keeps_its_name() -> None:
    procedure = read_procedure(
        "教室申込.csv を教室名ごとに申込件数を数える（列名は「申込件数」）。定員マスタ.xlsx と"
        "教室名で結合して定員を付ける。空き枠 = 定員 − 申込件数 を計算。Excelに"
    )
    (aggregate,) = [step for step in procedure.steps if step.kind == "aggregate"]
    assert aggregate.count_name == "申込件数"


def test_the_table_so_far_referred_back_to() -> None:
    procedure = read_procedure(
        "「帽子受注.xlsx」で「受注日」が2024-07-01から2024-09-30までの行に絞ってください。"
        "その結果を「色」ごとの件数に集計して、さっきの表をExcelで出してほしいです。"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.kind for step in procedure.steps] == ["filter", "aggregate"]
    procedure = read_procedure(
        "売上.xlsx から、地域が関東でかつ売上金額が100万円以上のデータを抽出してExcelに"
    )
    assert ("売上金額", ">=", 1000000) in _conditions(procedure) and not procedure.gaps


def test_kana_orders_a_unit_with_a_rate_and_a_range_of_dates() -> None:
    procedure = read_procedure(
        "火葬場予約.csv の『待機日数』がながい順に並べて、上から20件だけエクセルでちょうだい"
    )
    (sort,) = procedure.steps
    assert (sort.by, sort.descending, sort.limit) == (["待機日数"], True, 20)
    procedure = read_procedure(
        "出力先：一覧.csv\n元データ：放流記録.csv\n"
        "抽出：放流量(m3/s) 300超、かつ 日付が 2024-06-01〜2024-09-30 の範囲"
    )
    assert not procedure.gaps, procedure.gaps
    assert sorted(_conditions(procedure), key=str) == [
        ("放流量", ">", 300),
        ("日付", "<=", "2024-09-30"),
        ("日付", ">=", "2024-06-01"),
    ]


def test_a_lookup_said_in_kana_and_an_approval_taken_before_writing() -> None:
    procedure = read_procedure(
        "艇庫利用簿.csv に艇マスタ.xlsx から艇番号で艇種を引っぱって、艇種ごとに件数をCSVで"
    )
    join = procedure.steps[0]
    assert (join.kind, join.keys) == ("join", ["艇番号"])
    procedure = read_procedure("申込.csv を申込番号の順に並べてExcelで。出す前に会長の確認とってね")
    assert [step.kind for step in procedure.steps] == ["sort", "approval"]


def test_files_made_one_and_an_output_format_in_brackets() -> None:
    procedure = read_procedure(
        "完走記録（完走記録_フル.csv／完走記録_ハーフ.csv、列は同じ）をひとつにして、"
        "年代ごとに人数を数えてExcelに"
    )
    assert not procedure.gaps, procedure.gaps
    assert [step.kind for step in procedure.steps] == ["concat", "aggregate"]
    procedure = read_procedure(
        "1. 速記案件台帳.xlsx を開く\n2. 「担当速記者」が空欄の案件だけ残す\n"
        "3. 『未割当』というシートに出力（Excel）"
    )
    assert not procedure.gaps, procedure.gaps
    assert [item.source for item in procedure.inputs] == ["速記案件台帳.xlsx"]
    assert [(o.format, o.sheet) for o in procedure.outputs] == [("excel", "未割当")]


def test_a_count_of_rows_kept_is_no_column_to_sort_by() -> None:
    procedure = read_procedure(
        "顧客.csv で申請番号が同じ行は最初の1件だけ残すかたちで重複を除いてCSVで"
    )
    (dedupe,) = procedure.steps
    assert (dedupe.by, dedupe.keep) == ([], "first")


def test_a_statement_with_a_bare_number_stays_a_question() -> None:
    for said in ("支店コードは101です。", "予算は5万円です。"):
        procedure = read_procedure(f"売上.csv を店舗ごとに金額を合計してExcelに。{said}")
        assert procedure.gaps, said


def test_loanword_columns_are_not_read_as_steps() -> None:
    procedure = read_procedure("セレクトショップ売上.csv で マージン率 が 0.3 未満の行をCSVに")
    assert [item.source for item in procedure.inputs] == ["セレクトショップ売上.csv"]
    assert _conditions(procedure) == [("マージン率", "<", 0.3)] and not procedure.gaps
