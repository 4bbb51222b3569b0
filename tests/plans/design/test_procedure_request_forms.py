"""read_procedure on request forms, chat messages and mails: who asks, why and by when is
context; the output may be named first; numbered steps keep their order (the tests' own
wording, not a benchmark set's)."""

from __future__ import annotations

from keiri_agent.plans.design.procedure_rules import read_procedure


def _kinds(text: str) -> list[str]:
    procedure = read_procedure(text)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    return [step.kind for step in procedure.steps]


def test_a_sheet_said_with_an_equals_sign_is_the_sheet_name() -> None:
    procedure = read_procedure(
        "入力=出荷明細.csv\n条件=倉庫 が「第二」\n出力=倉庫別.xlsx（シート名=第二倉庫）"
    )
    assert [(o.file_name, o.sheet) for o in procedure.outputs] == [("倉庫別.xlsx", "第二倉庫")]


def test_a_file_named_alone_above_and_pointed_at_is_the_output() -> None:
    procedure = read_procedure(
        "[部門別交際費.xlsx]\n1) 経費明細_上期.csv を読み込む\n2) 勘定科目 が「交際費」の行だけ\n"
        "3) 部門 ごとに 金額 を合計\n4) 上記ファイル名で出力"
    )
    assert [i.holds for i in procedure.inputs] == ["経費明細_上期"]
    assert [o.file_name for o in procedure.outputs] == ["部門別交際費.xlsx"]


def test_a_file_asked_to_be_made_before_its_source_is_the_output() -> None:
    for text in (
        "高額立替.csv の作成をお願いします。立替精算.xlsx から 金額 が3万円以上の行を抜き出して"
        "ください。",
        "高額立替.csv を作りたくて。立替精算.xlsx の 金額 が3万円以上の行だけでお願いします",
        "高額立替.csv お願いしたいです！元は 立替精算.xlsx で、金額 が3万円以上の行だけ。",
    ):
        procedure = read_procedure(text)
        assert [i.holds for i in procedure.inputs] == ["立替精算"], text
        assert [o.file_name for o in procedure.outputs] == ["高額立替.csv"], text


def test_columns_said_with_a_request_are_the_columns_kept() -> None:
    procedure = read_procedure(
        "貸出記録.csv の 状態 が「延滞」の行だけで、"
        "列は 貸出番号・氏名・返却予定日 でお願いします。延滞者.xlsx に"
    )
    assert [(s.kind, s.columns) for s in procedure.steps if s.kind == "select"] == [
        ("select", ["貸出番号", "氏名", "返却予定日"])
    ]
    procedure = read_procedure(
        "会員.csv、会員番号 で重複消して、会員番号・氏名・入会日 だけにしたのを 会員_整理.csv で"
    )
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["会員番号", "氏名", "入会日"]
    ]


def test_a_chat_mention_is_no_column() -> None:
    assert _kinds("@高橋さん 来場者.csv の 区分 が「招待」の行だけ 招待客.xlsx にしてください") == [
        "filter"
    ]


def test_fields_of_a_request_form_are_context() -> None:
    text = (
        "作業依頼書\n件名：9月分 交通費の部署別集計\n依頼者：総務課 木村\n"
        "目的：予算会議（10月3日）で部署ごとの使用状況を示すため\n"
        "背景：8月に申請が急増しました。原因を調べています。\n期限：10月1日\n"
        "対象データ：交通費精算_9月.csv\n処理内容：\n1. 精算区分 が「取消」の行は除く\n"
        "2. 部署 ごとに 金額 を合計\n出力：Excel「部署別交通費_9月.xlsx」"
    )
    assert _kinds(text) == ["filter", "aggregate"]


def test_a_field_key_that_names_a_column_with_one_value_keeps_rows() -> None:
    procedure = read_procedure(
        "設定:\n入力: 注文.xlsx\n条件: 用途 = 贈答\n並び: 注文日 昇順\n出力: 贈答注文.csv"
    )
    conditions = [(c.column, c.value) for s in procedure.steps for c in s.conditions]
    assert conditions == [("用途", "贈答")]
    procedure = read_procedure("入力: 注文.xlsx\n用途: 贈答\n並び: 注文日 昇順\n出力: 贈答注文.csv")
    assert [gap.source for gap in procedure.gaps] == ["用途: 贈答"]  # a condition or a purpose?


def test_a_deadline_said_in_a_mail_is_no_condition() -> None:
    for deadline in (
        "11月20日までにいただけると助かります。",
        "期限は11月20日(水)です。",
        "今月中にお願いします。",
        "急ぎではありませんが、よろしくお願いします。",
    ):
        text = "受講記録.csv の 受講状況 が「未受講」の行だけ 未受講者.xlsx に出してください。"
        text += deadline
        assert _kinds(text) == ["filter"], deadline


def test_a_date_before_a_request_for_rows_stays_a_condition() -> None:
    procedure = read_procedure("申請.csv の 申請日 が 2024年11月20日までの行を 申請一覧.xlsx に")
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("申請日", "<=", "2024-11-20")
    ]


def test_numbered_steps_of_a_form_keep_each_condition_where_it_was_said() -> None:
    text = (
        "対象データ：稼働.xlsx、要員マスタ.csv\n処理内容：\n1. 状態 が「取消」の行を除く\n"
        "2. 要員ID ごとに 時間 を合計\n3. 要員マスタ を 要員ID で結合し、上限時間 を付与\n"
        "4. 超過 = 時間 - 上限時間 を計算\n5. 超過 が0より大きい行のみ残す\n出力：超過者.xlsx"
    )
    procedure = read_procedure(text)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    said = [
        (s.kind, [(c.column, c.op) for c in s.conditions]) if s.kind == "filter" else (s.kind,)
        for s in procedure.steps
    ]
    assert said == [
        ("filter", [("状態", "!=")]),
        ("aggregate",),
        ("join",),
        ("compute",),
        ("filter", [("超過", ">")]),
    ]


def test_a_step_verb_before_a_noun_is_no_okurigana() -> None:
    procedure = read_procedure(
        "受注.csv と 得意先マスタ.xlsx を 得意先コード で結合し担当営業を付けて、"
        "担当営業 ごとに 受注額 を合計。受注集計.xlsx に"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.group_by for s in procedure.steps if s.kind == "aggregate"] == [["担当営業"]]


def test_the_request_told_as_news_is_context() -> None:
    text = (
        "部長から、2学期の部活動費を部活ごとにまとめてほしいとの依頼がありました。\n"
        "部活動費_2学期.csv の 部活名 ごとに 金額 を合計して 部活別.xlsx に出してください。"
    )
    assert _kinds(text) == ["aggregate"]


def test_what_happens_after_and_what_for_are_context() -> None:
    for said in (
        "来週の職員会議で共有する予定です。",
        "結果は取引先に提出する必要があります。",
        "年末の挨拶状の発送に向けて、",
    ):
        text = f"{said}顧客.csv の 区分 が「法人」の行だけ 法人顧客.xlsx に出してください。"
        assert _kinds(text) == ["filter"], said


def test_who_asked_is_no_approver() -> None:
    text = (
        "課長から来月の会議で使いたいと言われたので、売上.csv を 店舗 ごとに 売上額 を合計して"
        "店舗別.xlsx にお願いします。"
    )
    assert _kinds(text) == ["aggregate"]


def test_how_many_files_are_stacked_is_no_condition() -> None:
    for said in ("3か月分のファイルを縦につなげて", "3店舗の日報を1本にまとめて"):
        text = f"日報_A.csv、日報_B.csv、日報_C.csv、{said}、日付 の古い順に 日報_全店.csv に"
        assert _kinds(text) == ["concat", "sort"], said


def test_a_meeting_date_in_brackets_is_no_condition() -> None:
    text = (
        "理事会(11月20日開催)の資料です。会費.csv の 会員区分 ごとに 会費 を合計して"
        "会費集計.xlsx に出してください。"
    )
    assert _kinds(text) == ["aggregate"]


def test_a_reason_said_with_a_noun_and_nanode_is_no_column() -> None:
    text = "支払_A社.csv と 支払_B社.csv、同じ様式なので1本にまとめて 支払_全社.csv にしてください"
    assert _kinds(text) == ["concat"]


def test_columns_whose_spaces_and_widths_vary_are_normalized() -> None:
    procedure = read_procedure(
        "会員名簿.xlsx の 氏名 と 住所、全角半角とかスペースがバラバラなので揃えて "
        "会員名簿_整形.xlsx に"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.kind, s.columns) for s in procedure.steps] == [("normalize", ["氏名", "住所"])]


def test_a_value_not_in_a_column_said_casually() -> None:
    procedure = read_procedure("職員.xlsx から 資格 に「准」って入ってない人だけ 正職員.xlsx で")
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("資格", "not_contains", "准")
    ]


def test_once_before_an_approval_is_no_column() -> None:
    text = (
        "経費.csv を 部門 ごとに 金額 を合計して、書き出す前に一回こっちで承認させてください。"
        "集計.xlsx で"
    )
    assert _kinds(text) == ["aggregate", "approval"]


def test_comparisons_written_in_kana() -> None:
    procedure = read_procedure(
        "機器.xlsx の 導入年 が2010いかの 機器だけ ぬきだして 古い機器.xlsx に"
    )
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("導入年", "<=", 2010)
    ]


def test_dakedo_is_a_conjunction_not_a_restriction() -> None:
    text = "在庫.xlsx なんだけど、数量 が10を超えてる 品目だけにして CSVでよろしく"
    procedure = read_procedure(text)
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(c.column, c.op) for s in procedure.steps for c in s.conditions] == [("数量", ">")]


def test_settings_on_one_line_parted_by_slashes() -> None:
    procedure = read_procedure(
        "対象ファイル：寄付.csv／条件：区分が「法人」または「団体」、摘要に「記念」を含む／"
        "集計：区分ごとに 金額 の合計／出力：CSV（寄付集計.csv）"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    conditions = {(c.column, c.op, str(c.value)) for s in procedure.steps for c in s.conditions}
    assert conditions == {("区分", "in", "['法人', '団体']"), ("摘要", "contains", "記念")}
    assert [o.file_name for o in procedure.outputs] == ["寄付集計.csv"]


def test_a_phone_number_in_a_signature_is_no_value() -> None:
    for signature in ("TEL 0467-31-2208", "045-222-9013", "電話：03-3321-0099（内線 12）"):
        text = (
            "お疲れさまです。\n会費.csv の 会員種別 が「賛助」の行だけ 賛助会員.xlsx に"
            f"出してください。\n\n総務課 岡田\n{signature}"
        )
        assert _kinds(text) == ["filter"], signature


def test_the_lines_of_a_quoted_mail_are_read_as_lines() -> None:
    procedure = read_procedure(
        "部長からの転送です。\n\n> 受付簿_6月.csv から、区分が「新規」の行だけ抜き出して、\n"
        "> 担当者ごとに件数を出してほしい。\n> 結果は 新規受付_担当別.xlsx にしておいて。\n\n"
        "よろしくお願いします。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [i.holds for i in procedure.inputs] == ["受付簿_6月"]
    assert [o.file_name for o in procedure.outputs] == ["新規受付_担当別.xlsx"]


def test_a_heading_tejun_is_no_order() -> None:
    assert _kinds(
        "■対象：寄付.csv\n■手順\n・金額が1万円以上の行を抽出\n・区分ごとに金額を合計\n■出力：寄付集計.xlsx"
    ) == ["filter", "aggregate"]
    procedure = read_procedure(
        "【対象】寄付.csv\n【手順】\n1. 金額が1万円以上の行を抽出\n2. 寄付日の古い順に並べる\n"
        "【出力】高額寄付.csv"
    )
    assert [s.by for s in procedure.steps if s.kind == "sort"] == [["寄付日"]]


def test_a_condition_in_brackets_after_its_column() -> None:
    for said, expected in (
        ("・顧客コード（空欄の行は除く）", [("顧客コード", "not_null", None)]),
        ("・支払方法（「現金」以外）", [("支払方法", "!=", "現金")]),
        (
            "・請求日（2025-04-01〜2025-04-30）",
            [("請求日", ">=", "2025-04-01"), ("請求日", "<=", "2025-04-30")],
        ),
    ):
        procedure = read_procedure(f"■対象：請求.csv\n■条件\n{said}\n■出力：請求_抽出.csv")
        assert not procedure.gaps, [gap.message for gap in procedure.gaps]
        conditions = [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions]
        assert conditions == expected, said


def test_a_sign_said_in_brackets_stays_a_sign() -> None:
    procedure = read_procedure("損益.csv で 利益 がマイナス（0未満）の店舗だけ 赤字店舗.csv に")
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("利益", "<", 0)
    ]


def test_a_table_pasted_as_text_is_read_as_settings() -> None:
    procedure = read_procedure(
        "会員.csv から、以下の条件で抽出してください。\n| 列 | 条件 |\n|---|---|\n"
        "| 会員種別 | 法人 |\n| 状態 | 退会 以外 |\n| 年会費 | 50000 以上 |\n出力は 法人会員.xlsx"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    conditions = {(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions}
    assert conditions == {
        ("会員種別", "==", "法人"),
        ("状態", "!=", "退会"),
        ("年会費", ">=", 50000),
    }


def test_a_comparison_with_no_number_is_asked_never_dropped() -> None:
    for text in (
        "購買.xlsx から以下の条件で抽出。\n| 列 | 条件 |\n|---|---|\n| 単価 | 高めのもの |\n"
        "| 区分 | 国内 |\n出力：高単価品.xlsx",
        "購買.xlsx から 単価 が高めのもので、区分 が「国内」の行を 高単価品.xlsx に",
    ):
        procedure = read_procedure(text)
        assert any("高め" in gap.message for gap in procedure.gaps), text


def test_a_value_not_contained_said_fukumanai() -> None:
    procedure = read_procedure("日報.csv から 備考 に「試運転」を含まない行だけ 日報_本番.csv に")
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("備考", "not_contains", "試運転")
    ]


def test_a_setting_not_to_look_at_asks_nothing() -> None:
    text = (
        "対象ファイル：注文.xlsx／出荷.csv\n突合キー：注文番号\n金額：金額 は1円でも違えば差異\n"
        "日付：見なくてよい\n出力：注文出荷突合.xlsx"
    )
    assert _kinds(text) == ["reconcile"]


def test_a_step_said_as_when_another_runs() -> None:
    text = (
        "・対象：未収金.xlsx\n・出力：未収上位.xlsx\n"
        "・手順：未収額 の大きい順に並べて上位10件。"
        "※並べる前に、未収額 が0の行は除いておいてください。"
    )
    assert _kinds(text) == ["filter", "sort"]


def test_a_condition_said_before_the_total_keeps_rows() -> None:
    procedure = read_procedure(
        "請求_1.csv、請求_2.csv（同じ形式）を縦につないで、利用者番号 ごとの 未収額 合計を多い順に"
        "並べて 未収一覧.xlsx にしたいです。"
        "合計する前に 未収額 が0より大きい行だけに絞ってください。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [o.file_name for o in procedure.outputs] == ["未収一覧.xlsx"]
    assert len(procedure.inputs) == 2
    kinds = [s.kind for s in procedure.steps]
    assert kinds.index("filter") < kinds.index("aggregate")


def test_a_forwarded_request_names_no_approver() -> None:
    text = (
        "店長からの依頼を転送します。\n\n> 売上.csv を 店舗 ごとに 売上額 を合計して "
        "店舗別.xlsx にしてほしい。\n\n担当 大西"
    )
    assert _kinds(text) == ["aggregate"]


def test_the_amount_compared_by_a_reconciliation_is_a_word_it_read() -> None:
    procedure = read_procedure(
        "出荷.xlsx と 請求.csv を伝票番号で突き合わせ、運賃を照合したいです。"
        "運賃は±50円までの差は許容。結果は 照合結果.xlsx で"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    (reconcile,) = procedure.steps
    assert (reconcile.amount_column, reconcile.tolerance) == ("運賃", 50)


def test_a_formula_named_with_to_suru() -> None:
    procedure = read_procedure(
        "■対象：報酬.xlsx\n■計算：支払額 × 0.1021 を「源泉額」とする\n■出力：CSV"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.expressions for s in procedure.steps] == [{"源泉額": "支払額 * 0.1021"}]


def test_columns_named_in_quotes_as_a_manual_writes_them() -> None:
    procedure = read_procedure(
        "【月次処理】\n手順1：「予約台帳.xlsx」を開く。\n手順2：「予約状況」が「取消」の行を除く。\n"
        "手順3：「担当者」ごとに「売上額」を合計する。\n手順4：CSV「担当別.csv」で保存する。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("予約状況", "!=", "取消")
    ]
    assert [s.group_by for s in procedure.steps if s.kind == "aggregate"] == [["担当者"]]
    procedure = read_procedure(
        "「在庫.xlsx」の「品名」に「限定」を含む行を抽出し、"
        "「品番」「品名」「在庫数」の3列を残して CSV で"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["品番", "品名", "在庫数"]
    ]


def test_monthly_files_named_as_a_range_across_a_year() -> None:
    procedure = read_procedure(
        "「売上_2024-11.csv」〜「売上_2025-02.csv」の4か月分を1つにまとめて 売上_冬.csv に"
    )
    assert [i.holds for i in procedure.inputs] == [
        "売上_2024-11",
        "売上_2024-12",
        "売上_2025-01",
        "売上_2025-02",
    ]


def test_the_first_rows_of_a_sort_kept_by_a_counted_noun() -> None:
    procedure = read_procedure(
        "売上.csv を 分類 ごとに 売上金額 を合計し、売上金額 の合計が多い順に上位5分類を残す。"
        "上位分類.xlsx に出力する。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.by, s.limit) for s in procedure.steps if s.kind == "sort"] == [(["売上金額"], 5)]


def test_the_speakers_of_a_pasted_chat_are_no_part_of_the_request() -> None:
    procedure = read_procedure(
        "山口: 会員名簿.xlsx から「会員区分」が「休会」の人だけ抜いてCSVにしてもらえる？\n"
        "井上: 了解です、ファイル名は 休会者.csv でいいですか？\n山口: それでOK"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(c.column, c.value) for s in procedure.steps for c in s.conditions] == [
        ("会員区分", "休会")
    ]


def test_settings_keys_are_no_speakers() -> None:
    procedure = read_procedure("対象: 会費.csv\n条件: 区分 が「法人」\n出力: 法人会費.csv")
    assert [(c.column, c.value) for s in procedure.steps for c in s.conditions] == [
        ("区分", "法人")
    ]
    assert [o.file_name for o in procedure.outputs] == ["法人会費.csv"]


def test_an_english_column_with_its_japanese_gloss() -> None:
    procedure = read_procedure(
        "fees.csv の billing_date（請求日）が 2024-04-01 〜 2024-09-30 の行だけ、"
        "client_code（顧問先コード）ごとに fee_amount（報酬額）の合計を出して Excel で"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.group_by, s.metrics) for s in procedure.steps if s.kind == "aggregate"] == [
        (["client_code"], {"fee_amount": ["sum"]})
    ]
    assert {c.column for s in procedure.steps for c in s.conditions} == {"billing_date"}


def test_an_order_turned_round_by_a_later_message() -> None:
    procedure = read_procedure(
        "中川: 売上_3月.csv、店舗 ごとに 売上額 の合計出して、多い順に並べてほしい\n"
        "中川: さっきの、並びは逆で。少ない順がいい\n森: 了解、CSVで出します"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.by, s.descending) for s in procedure.steps if s.kind == "sort"] == [
        (["売上額"], False)
    ]


def test_spaces_and_widths_said_about_columns_listed_before() -> None:
    for text in (
        "「名簿.xlsx」の「氏名」「電話番号」について、全角・半角とスペースを統一する。CSVで保存",
        "「精算.csv」を読み込む。「精算者」の全角・半角、スペースのゆれを統一する。Excelで保存",
    ):
        assert _kinds(text) == ["normalize"], text


def test_notes_that_state_how_things_are_are_context() -> None:
    for note in (
        "注意：金額は税抜で入力済みのため、税計算は不要です。",
        "※ 手順1（データのダウンロード）は済んでいる前提です。",
        "※ 取消分はすでに台帳から除いてあります。",
    ):
        text = (
            "【月次処理】\n手順1：「売上.csv」を開く。\n手順2：「店舗」ごとに「金額」を合計する。\n"
            f"手順3：「店舗別.xlsx」に出力する。\n{note}"
        )
        assert _kinds(text) == ["aggregate"], note


def test_a_note_that_drops_rows_is_read() -> None:
    procedure = read_procedure(
        "【月次処理】\n手順1：「売上.csv」を開く。\n手順2：「店舗」ごとに「金額」を合計する。\n"
        "手順3：「店舗別.xlsx」に出力する。\n※ 区分が「返品」の行は含めません。"
    )
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("区分", "!=", "返品")
    ]


def test_a_formula_in_quotes_for_a_column_in_quotes() -> None:
    procedure = read_procedure(
        "手順1：「発注.csv」を読み込む。\n手順2：「発注金額」を「数量 × 単価」で計算する。\n"
        "手順3：「品目」ごとに「数量」と「発注金額」を合計する。\n手順4：「品目別.xlsx」に出力する。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.expressions for s in procedure.steps if s.kind == "compute"] == [
        {"発注金額": "数量 * 単価"}
    ]
    assert [s.metrics for s in procedure.steps if s.kind == "aggregate"] == [
        {"数量": ["sum"], "発注金額": ["sum"]}
    ]


def test_a_file_named_beside_the_key_is_no_key() -> None:
    procedure = read_procedure(
        "「受講.csv」を読み込み、「講座マスタ.xlsx」と「講座コード」で結合し、「講座名」を付ける。"
        "「受講一覧.xlsx」に出力する。"
    )
    assert [s.keys for s in procedure.steps if s.kind == "join"] == [["講座コード"]]


def test_rows_left_out_said_politely_are_dropped_never_kept() -> None:
    for said in ("含めません", "含まないこと", "対象にしません", "入れません", "出力しません"):
        procedure = read_procedure(
            f"売上.csv の 区分 が「返品」の行は{said}。店舗 ごとに 金額 を合計して 店舗別.xlsx に"
        )
        assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
            ("区分", "!=", "返品")
        ], said


def test_words_of_a_new_staff_memo_are_no_conditions() -> None:
    text = (
        "〇〇さんへ（今日からお願いする集計の手順です）\n1. 日報.csv を開いてください。\n"
        "2. 区分 が「試験」の行は除いてください。練習分なので集計に入りません。\n"
        "3. 担当 ごとに 件数 を数えてください。これが所長に上がる数字なので、丁寧にお願いします。\n"
        "4. 担当別件数.xlsx に保存。"
    )
    assert _kinds(text) == ["filter", "aggregate"]


def test_a_heading_ending_in_tejun_is_no_order() -> None:
    procedure = read_procedure(
        "新しく入った方へ：検針データのチェック手順\n"
        "・検針.csv の 使用量 が 100 以上の行だけ残します。\n"
        "・使用量 の大きい順に並べてください。\n・高使用量.csv に書き出してください。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.by, s.descending) for s in procedure.steps if s.kind == "sort"] == [
        (["使用量"], True)
    ]


def test_a_request_made_of_the_writer_is_context() -> None:
    text = (
        "部長から経費の見直しを求められておりまして、ご協力をお願いします。"
        "経費.csv を 部門 ごとに 金額 を合計して 部門別.xlsx に出してください。"
    )
    assert _kinds(text) == ["aggregate"]


def test_the_first_rows_counted_in_vehicles() -> None:
    procedure = read_procedure(
        "日報.csv を 車両番号 ごとに 燃費 の平均を出して、"
        "平均が低い順に5台、CSVで出力してください。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.descending, s.limit) for s in procedure.steps if s.kind == "sort"] == [(False, 5)]


def test_a_word_before_writing_is_an_approval() -> None:
    text = (
        "請求.xlsx の 状態 が「取消」の行は除いて、請求一覧.csv に。"
        "書き出す前に一声かけてください。"
    )
    assert _kinds(text) == ["filter", "approval"]


def test_the_state_column_of_a_file_named_short() -> None:
    procedure = read_procedure(
        "請求一覧_団体.xlsx を使います。請求一覧 の 状態 が「取消」の行は除きます。"
        "結果は 請求_有効.csv に。"
    )
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("状態", "!=", "取消")
    ]


def test_a_terse_one_liner() -> None:
    procedure = read_procedure("受注.csv 納期2025-01-20以前 かつ 種別がA・B → 急ぎ.csv")
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("納期", "<=", "2025-01-20"),
        ("種別", "in", ["A", "B"]),
    ]
    procedure = read_procedure(
        "精算.csv 単価空欄は除外、数量×単価で「金額」列追加→精算_金額付.xlsx"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(c.column, c.op) for s in procedure.steps for c in s.conditions] == [
        ("単価", "not_null")
    ]


def test_the_top_groups_of_the_only_total() -> None:
    procedure = read_procedure("売上.csv 商品名ごと数量合計 上位10件 エクセルで")
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.by, s.descending, s.limit) for s in procedure.steps if s.kind == "sort"] == [
        (["数量"], True, 10)
    ]


def test_the_first_rows_with_two_totals_are_asked() -> None:
    procedure = read_procedure("売上.csv 商品名ごと数量と金額の合計 上位10件 エクセルで")
    assert any("上位10件" in gap.message for gap in procedure.gaps)


def test_a_note_line_is_no_column() -> None:
    text = (
        "【日次処理】\n手順1：「受付.csv」を読み込む。\n"
        "手順2：「重量kg」が 30 を超える行を抽出する。\n"
        "手順3：「重量超過.csv」で保存する。\n注意：重量の単位は kg です。"
    )
    assert _kinds(text) == ["filter"]


def test_what_one_row_stands_for_is_no_condition() -> None:
    text = (
        "① 販売.csv を使います。\n② 公演名 ごとに 販売金額 の合計と枚数（行数）を出してください。"
        "1行＝1枚です。\n③ エクセルで保存。"
    )
    assert _kinds(text) == ["aggregate"]


def test_a_note_after_numbered_steps_keeps_rows_from_the_start() -> None:
    procedure = read_procedure(
        "手順1：「通関.csv」を読み込む。\n手順2：申告区分が「許可」の行だけ残す。\n"
        "手順3：国名ごとに原価を合計する。\n手順4：「国別原価.xlsx」に出力する。\n"
        "※ 申告区分が「予備」のものは今回は含めません。"
    )
    kinds = [s.kind for s in procedure.steps]
    assert kinds == ["filter", "aggregate"], kinds


def test_columns_kept_said_before_the_file_written() -> None:
    procedure = read_procedure(
        "台帳.xlsx の 状態 が「休止」以外で、"
        "番号・住所・設置日 だけを 稼働中.csv に出してください。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["番号", "住所", "設置日"]
    ]


def test_a_terse_normalization_of_widths_and_spaces() -> None:
    assert _kinds("配車.csv 営業所名の全角半角・空白ゆれ直してCSVで") == ["normalize"]


def test_an_exclusion_in_a_checklist_drops_the_rows_never_keeps_them() -> None:
    for box in ("☐", "☑", "✓", ""):
        procedure = read_procedure(
            f"{box} 対象：出品.csv\n{box} 除外：在庫数 が 0 の行\n{box} 出力：CSV（出品_整理.csv）"
        )
        assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
            ("在庫数", "!=", 0)
        ], box
    procedure = read_procedure("対象：出品.csv、除外：在庫数 が 0 の行、出力：CSV")
    assert [(c.column, c.op) for s in procedure.steps for c in s.conditions] == [("在庫数", "!=")]


def test_a_count_of_doubled_rows_is_no_value_contained() -> None:
    procedure = read_procedure(
        "参加者.xlsx、おなじ会員番号が２回入ってるのあるから会員番号で重複けしてエクセルで"
    )
    assert not any(c.op == "contains" for s in procedure.steps for c in s.conditions)


def test_a_stiff_formal_letter() -> None:
    procedure = read_procedure(
        "延長保育料集計の件\n下記の通り御依頼申し上げます。\n"
        "一、対象ファイル：保育料請求.xlsx 及び 園児マスタ.xlsx\n"
        "一、園児番号 にて園児マスタと照合し、園名 を付与すること\n"
        "一、延長保育時間 に 単価 を乗じ、延長保育料 の列を新設すること\n"
        "一、園名 ごとに 延長保育料 の合計を算出し、合計の多い順に並べること\n"
        "一、出力は Excel とすること\n以上、宜しく御願い申し上げます。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == ["join", "compute", "aggregate", "sort"]
    assert [s.keys for s in procedure.steps if s.kind == "join"] == [["園児番号"]]
    assert [s.expressions for s in procedure.steps if s.kind == "compute"] == [
        {"延長保育料": "延長保育時間 * 単価"}
    ]
    procedure = read_procedure(
        "原価率算出の件\n店舗別売上原価.xlsx に於いて、原価 を 売上 で除し 原価率 の列を新設の上、"
        "Excelにて御提出願います。宜しく御願い申し上げます。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.expressions for s in procedure.steps] == [{"原価率": "原価 / 売上"}]


def test_values_listed_before_gaitou_are_no_rule() -> None:
    procedure = read_procedure(
        "仕入明細.xlsx より、仕入区分 が「小麦粉」「バター」に該当する行を抽出し、"
        "CSVにて御提出願います。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("仕入区分", "in", ["小麦粉", "バター"])
    ]


def test_registering_into_another_system_is_refused_never_dropped() -> None:
    procedure = read_procedure(
        "入金.csv を日付・取引先・金額の列だけ残したら、そのまま会計ソフトに仕訳として登録まで"
        "済ませてください。"
    )
    assert any(gap.kind == "unsupported_action" for gap in procedure.gaps)


def test_keys_said_between_duplicates_and_the_verb() -> None:
    procedure = read_procedure(
        "条件：\n・重複は 申請番号 で除く\n出力：CSV\nファイル：給付台帳.xlsx"
    )
    assert [s.keys for s in procedure.steps if s.kind == "dedupe"] == [["申請番号"]]


def test_a_closing_day_and_same_as_last_month_are_context() -> None:
    assert _kinds("1/15〆の出荷_0115.csv、店舗名ごとに出荷数の合計だして多い順で。CSVで") == [
        "aggregate",
        "sort",
    ]
    assert _kinds(
        "先月と同じ要領で、会費.csv を 支部 ごとに 会費 を合計して 支部別.xlsx に出してください。"
    ) == ["aggregate"]


def test_double_brackets_units_and_formulas_in_quotes() -> None:
    procedure = read_procedure(
        "作業伝票.xlsx について。『工程区分』が「後加工」以外の行を対象に、"
        "『実作業時間（h）』−『見積作業時間（h）』で『超過時間（h）』という列を追加し、"
        "『担当者』ごとに『超過時間（h）』の合計を出してください。"
        "課長の確認が取れてからExcelに書き出す形でお願いします。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == ["compute", "filter", "aggregate", "approval"]
    assert [s.expressions for s in procedure.steps if s.kind == "compute"] == [
        {"超過時間": "実作業時間 - 見積作業時間"}
    ]


def test_a_checklist_with_step_keys_and_or_between_values() -> None:
    procedure = read_procedure(
        "☐ 対象：出品.csv\n☐ 前処理：書名 の全角・半角、スペースの揺れをそろえる\n"
        "☐ 対象店舗：店舗コード が S01・S02 のもの\n☐ 条件：判定 が「要修理」or「要交換」\n"
        "☐ 出力：CSV（出品_整理.csv）"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    conditions = {(c.column, c.op, str(c.value)) for s in procedure.steps for c in s.conditions}
    assert conditions == {
        ("店舗コード", "in", "['S01', 'S02']"),
        ("判定", "in", "['要修理', '要交換']"),
    }
    assert procedure.steps[0].kind == "normalize"


def test_values_joined_by_formal_or_words() -> None:
    for word in ("又は", "及び"):
        procedure = read_procedure(
            f"名簿.xlsx につき、雇用形態 が「パート」{word}「嘱託」の者を抽出して"
            "CSVにて御提出願います。"
        )
        assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
            ("雇用形態", "in", ["パート", "嘱託"])
        ], word


def test_no_difference_allowed_said_in_words() -> None:
    for said in ("金額の差は1円も許容しません。", "差額の許容はございません（0円）。"):
        procedure = read_procedure(
            f"請求.csv と 入金.csv を 会員番号 で突き合わせ、合わないものをExcelで。{said}"
        )
        assert not procedure.gaps, [gap.message for gap in procedure.gaps]
        assert [s.tolerance for s in procedure.steps] == [0], said


def test_the_metric_of_a_column_said_as_the_topic() -> None:
    procedure = read_procedure(
        "工数.csv、プロジェクト ごとに 労務費 を合計、単価は平均も見たい。Excelで"
    )
    assert [s.metrics for s in procedure.steps] == [{"労務費": ["sum"], "単価": ["mean"]}]


def test_two_conditions_listed_before_one_exclusion_both_drop() -> None:
    procedure = read_procedure(
        "売掛金残高.csv から、残高が0円の得意先と、区分が「社内」の得意先は入れないで、"
        "残高の多い順に 売掛金一覧.xlsx"
    )
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("残高", "!=", 0),
        ("区分", "!=", "社内"),
    ]


def test_a_gloss_between_a_value_and_igai_keeps_the_condition() -> None:
    procedure = read_procedure(
        "売上.csv から 得意先コードが「C999」（社内取引）以外の行について、"
        "得意先コードと売上日で重複を除き a.xlsx に"
    )
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("得意先コード", "!=", "C999")
    ]


def test_a_period_is_no_column() -> None:
    procedure = read_procedure(
        "経費.csv の 2024年度（2024年4月1日〜2025年3月31日）以外の行は外して、"
        "費目別に金額を合計して a.xlsx に"
    )
    assert procedure.gaps
    assert not any(c.column == "2024年度" for s in procedure.steps for c in s.conditions)


def test_a_column_added_after_the_columns_kept_is_kept() -> None:
    procedure = read_procedure(
        "在庫.csv で 倉庫・品目コード・在庫数・単価の列だけ残し、"
        "在庫金額＝在庫数×単価 の列を追加して 在庫評価.xlsx に"
    )
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["倉庫", "品目コード", "在庫数", "単価", "在庫金額"]
    ]
    procedure = read_procedure(
        "在庫.csv で 在庫金額＝在庫数×単価 の列を追加して、倉庫・品目コード・在庫数の列だけ残して"
        " 在庫評価.xlsx に"
    )
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["倉庫", "品目コード", "在庫数"]
    ]


def test_an_extension_number_is_no_condition() -> None:
    text = (
        "入力：予約.xlsx\n条件1：施設区分 = 屋内プール\n出力：CSV（プール予約.csv）\n"
        "不明点あれば内線2145まで。"
    )
    procedure = read_procedure(text)
    assert [(c.column, c.value) for s in procedure.steps for c in s.conditions] == [
        ("施設区分", "屋内プール")
    ]


def test_the_key_of_duplicates_said_in_brackets() -> None:
    procedure = read_procedure(
        "候補者リスト.csv の重複（メールアドレス が同じもの）を消してCSVで返してください"
    )
    assert [s.keys for s in procedure.steps if s.kind == "dedupe"] == [["メールアドレス"]]


def test_a_file_name_ending_in_three_kana() -> None:
    procedure = read_procedure(
        "精算.xlsx を 費目 ごとに 金額 を合計。"
        "会長のOKをもらってから 祭り精算まとめ.xlsx に書き出し"
    )
    assert [o.file_name for o in procedure.outputs] == ["祭り精算まとめ.xlsx"]


def test_a_count_named_by_the_writer_and_sorted_by_that_name() -> None:
    for said in ("予約件数（行数）と 利用料金 の合計。", "予約件数 と 利用料金 の合計を出して、"):
        procedure = read_procedure(f"予約.xlsx、施設名 ごとに {said}予約件数の多い順。Excelで")
        assert [(s.kind, s.count_name, s.by) for s in procedure.steps] == [
            ("aggregate", "予約件数", []),
            ("sort", None, ["予約件数"]),
        ], said


def test_a_people_column_sorted_with_no_group_is_no_count() -> None:
    procedure = read_procedure(
        "受注.csv、先に 予約番号 で重複を消して、次に 開催日 が 2025-05-01 以降のものに絞り、"
        "人数 の多い順に並べ、最後に 予約番号・顧客名・開催日・人数 の4列だけ残してCSVに。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert "aggregate" not in [s.kind for s in procedure.steps]
    assert [s.by for s in procedure.steps if s.kind == "sort"] == [["人数"]]


def test_a_people_column_kept_in_a_numbered_step_before_the_total() -> None:
    procedure = read_procedure(
        "1. 宴会.csv を読み込む\n2. 人数 が 50 以上 の案件だけ残す\n"
        "3. 会場区分 ごとに 受注金額 の合計を出す\n4. 宴会集計.xlsx に出力"
    )
    assert [s.kind for s in procedure.steps] == ["filter", "aggregate"]
    assert [(c.column, c.op) for s in procedure.steps for c in s.conditions] == [("人数", ">=")]


def test_an_income_column_compared_with_an_amount() -> None:
    procedure = read_procedure("求人.xlsx の 想定年収 が 600万円未満 の行を 求人_抽出.xlsx に")
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("想定年収", "<", 6000000)
    ]


def test_a_master_looked_up_with_hiku_and_a_stop_before_writing() -> None:
    procedure = read_procedure(
        "各位\n傾向を調べてほしいと委託元から依頼がありました。以下お願いします。\n"
        "1) 票_10月.csv と 票_11月.csv を縦につなげる\n"
        "2) 担当チーム をキーに チームマスタ.csv から チームリーダー名 を引く\n"
        "3) 担当チーム、チームリーダー名 ごとに件数\n4) 書き出す前に一度止めてください\n"
        "5) 集計.xlsx に出力"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.kind for s in procedure.steps] == ["concat", "join", "aggregate", "approval"]


def test_a_master_stacked_with_no_join_is_asked() -> None:
    procedure = read_procedure(
        "票_10月.csv と 票_11月.csv と チームマスタ.csv を縦につなげて、"
        "担当チーム ごとに件数を 集計.xlsx に"
    )
    assert any("チームマスタ.csv" in gap.message for gap in procedure.gaps)


def test_the_first_rows_said_before_the_columns_kept() -> None:
    procedure = read_procedure(
        "在庫.xlsx、在庫金額 の高い順に上位20件、"
        "商品コード・商品名・在庫金額 の列でExcelに出してください。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [s.columns for s in procedure.steps if s.kind == "select"] == [
        ["商品コード", "商品名", "在庫金額"]
    ]
    assert [s.limit for s in procedure.steps if s.kind == "sort"] == [20]


def test_a_file_asked_to_be_made_and_an_approval_placed() -> None:
    procedure = read_procedure(
        "返品.csv から 検品結果 が「良品」のものだけ抜いて、商品コード と 数量 の2列で "
        "在庫戻し対象.xlsx を作成してください。ただし、書き出す前に必ず店長の承認をはさむこと。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [o.file_name for o in procedure.outputs] == ["在庫戻し対象.xlsx"]
    assert "approval" in [s.kind for s in procedure.steps]


def test_a_request_quoted_from_a_boss() -> None:
    procedure = read_procedure(
        "部長から転送です：「請求予定.csv を 請求金額 の大きい順に並べ替えて、"
        "請求予定_並替.xlsx に書き出すこと」とのことなので対応お願いします。"
    )
    assert not procedure.gaps, [gap.message for gap in procedure.gaps]
    assert [(s.kind, s.by) for s in procedure.steps] == [("sort", ["請求金額"])]


def test_rows_said_to_be_kept_too_are_no_condition() -> None:
    procedure = read_procedure(
        "在籍者.csvと通級記録.csvを児童番号で左結合し、通級回数が空欄の児童も残したまま、"
        "児童番号順に並べて通級状況一覧.xlsxに出力してください。"
    )
    assert not [c for s in procedure.steps for c in s.conditions]


def test_a_frequency_per_month_is_no_column() -> None:
    procedure = read_procedure(
        "利用記録.csv から 利用回数が月8回以上の園児を抽出して、多利用者.xlsxに出力してください。"
    )
    assert not any(c.column == "月" for s in procedure.steps for c in s.conditions)


def test_a_running_total_compared_after_the_total() -> None:
    procedure = read_procedure(
        "参加記録.csvから、参加時間を合計してボランティアID別の累計時間を出し、"
        "累計が20時間に満たない人は対象外にして、表彰候補.xlsxに出力してください。"
    )
    assert [s.kind for s in procedure.steps] == ["aggregate", "filter"]
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("参加時間", ">=", 20)  # after the total: the Plan compares 参加時間_sum
    ]


def test_the_column_said_in_brackets_after_its_condition() -> None:
    procedure = read_procedure(
        "・ファイル：健診結果.csv\n・対象：40歳以上（年齢列）\n・BMIが25以上の人を抽出（BMI列）\n"
        "・出力先：要指導者.csv"
    )
    assert [(c.column, c.op, c.value) for s in procedure.steps for c in s.conditions] == [
        ("年齢", ">=", 40),
        ("BMI", ">=", 25),
    ]


def test_a_reconciliation_told_to_leave_out_the_matched_rows() -> None:
    procedure = read_procedure(
        "運賃請求書.xlsxと運送会社からの明細.csvを伝票番号で突き合わせて、金額の差があるものを"
        "運賃差異.xlsxに出力してください。一致したものは出さなくていいです。"
    )
    assert [s.parts for s in procedure.steps if s.kind == "reconcile"] == [
        ["differences", "unmatched_left", "unmatched_right"]
    ]
