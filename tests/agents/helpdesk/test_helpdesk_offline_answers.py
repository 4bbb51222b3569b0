"""Offline answers on made-up text: topic terms, quotes that keep their structure, answer shape."""

from __future__ import annotations

import pytest

from keiri_agent.agents.helpdesk.models import SearchOutput, Subtask
from keiri_agent.agents.helpdesk.offline import (
    OFFLINE_LABEL,
    final_answer,
    reflect,
    subtask_answer,
)
from keiri_agent.agents.helpdesk.offline.asks import (
    DAYS,
    MONEY,
    SHARE,
    asked_noun_en,
    asked_value,
)
from keiri_agent.agents.helpdesk.offline.queries import reformulate
from keiri_agent.agents.helpdesk.offline.specificity import (
    compounds,
    is_generic,
    topic_terms,
    weight,
)
from keiri_agent.agents.helpdesk.offline.split import split_question
from keiri_agent.agents.helpdesk.offline.terms import key_terms

SETTINGS = SearchOutput(
    file_name="guide.pdf",
    page=4,
    heading="3. 表示設定",
    content="データの表示設定は画面右上のメニューから変更できます。設定はすぐに反映されます。",
    score=5.0,
)
SUPPORT = SearchOutput(
    file_name="faq.csv",
    row=9,
    content="Q: サポートの受付時間は？ A: 平日9時から17時まで、サポート窓口で確認できます。",
    score=4.0,
)


def _quote(text: str) -> str:
    """The first quote of a subtask answer, its hard line breaks back to newlines."""
    return text.split("\n- ", 1)[1].split("【", 1)[0].replace("  \n  ", "\n")


def _part(name: str, answer: str, *, done: bool, sources: list[str] | None = None) -> Subtask:
    return Subtask(
        task_name=name,
        tool_results=[],
        reflection_results=[],
        is_completed=done,
        subtask_answer=answer,
        challenge_count=1,
        sources=sources or [],
    )


# ----------------------------------------------------------------------------- topic terms


def test_generic_terms_weigh_less_and_are_not_topic_terms() -> None:
    assert is_generic("設定") and is_generic("データ") and is_generic("Settings")
    assert not is_generic("監査")
    assert weight("監査") == weight("税") == 1.0 > weight("画面")
    assert topic_terms(["監査", "ログ", "設定", "データ"]) == ["監査", "ログ"]
    assert topic_terms(["設定", "画面"]) == ["設定", "画面"]


def test_passages_sharing_only_generic_terms_do_not_answer() -> None:
    question = "監査ログのデータ設定を教えてください"
    text, sources = subtask_answer(question, [SETTINGS, SUPPORT], tools=["search_manual"])
    assert "資料には記載がありません" in text
    assert "検索した語: 監査、ログ" in text and "search_manual" in text
    assert "次の記述があります" not in text and "【" not in text
    assert sources == []
    verdict = reflect("ログのデータ設定", [SETTINGS], 0)
    assert not verdict.is_completed
    assert verdict.advice.startswith("不足: ログ。")


def test_english_generic_terms_do_not_answer() -> None:
    passage = SearchOutput(file_name="en.pdf", page=2, content="Data settings are on the screen.")
    text, _ = subtask_answer("audit log data settings", [passage])
    assert "the documents do not say" in text  # answered in English
    assert not reflect("audit log data settings", [passage], 0).is_completed


@pytest.mark.parametrize(
    ("part", "content"),
    [
        ("パスワードの条件", "暗証番号は4桁です。"),  # one of two topic terms
        ("経費の申請期限と承認者", "経費の申請は月末までに行います。"),  # two of four
        ("ロックの解除方法", "ロック解除は管理者が行います。"),  # all
        ("監査ログの保存", "データの設定画面です。"),  # none
    ],
)
def test_a_part_is_presented_as_answered_exactly_when_the_reflection_accepts_it(
    part: str, content: str
) -> None:
    passages = [SearchOutput(file_name="m.pdf", page=1, content=content)]
    text, _ = subtask_answer(part, passages)
    presented = text.startswith("資料によると") or "次の記述があります" in text
    assert presented == reflect(part, passages, 0).is_completed


# ----------------------------------------------------------------------------- quotes


@pytest.mark.parametrize("marker", ["1. ", "1)", "（1）", "①", "・", "- "])
def test_quotes_keep_the_marker_of_a_numbered_or_bulleted_step(marker: str) -> None:
    second = marker.replace("1", "2").replace("①", "②")
    content = f"申請の流れ\n{marker}申請画面を開きます。\n{second}金額を入力して送信します。"
    text, _ = subtask_answer("金額の入力", [SearchOutput(file_name="m.pdf", content=content)])
    assert _quote(text) == f"{second}金額を入力して送信します。"


def test_quotes_keep_numbered_steps_and_label_value_lines_on_their_own_lines() -> None:
    content = "申請日：4月1日\n承認者：佐藤花子\n承認期限：申請から5営業日\n備考：なし"
    text, _ = subtask_answer("承認者と承認期限", [SearchOutput(file_name="m.pdf", content=content)])
    assert _quote(text) == "承認者：佐藤花子\n承認期限：申請から5営業日"
    steps = "1. 申請画面を開きます。\n2. 金額を入力します。\n3. 内容を確かめて送信します。"
    text, _ = subtask_answer("画面と金額", [SearchOutput(file_name="m.pdf", content=steps)])
    assert _quote(text) == "1. 申請画面を開きます。\n2. 金額を入力します。"


def test_a_line_wrapped_inside_a_word_is_quoted_from_the_sentence_start() -> None:
    content = (
        "経費の申請では、最初にメニューから申請画面を開\n"
        "き、金額を入力して送信します。\n"
        "送信後の取り消しはできません。"
    )
    text, _ = subtask_answer("金額の入力", [SearchOutput(file_name="m.pdf", content=content)])
    assert (
        _quote(text)
        == "経費の申請では、最初にメニューから申請画面を開き、金額を入力して送信します。"
    )


def test_a_long_sentence_is_cut_at_a_clause_boundary() -> None:
    sentence = (
        "本システムでは、"
        + "、".join(f"項目{n}番の入力欄に所定の値を記入し" for n in range(1, 12))
        + "、最後に監査記録を保存します。"
    )
    text, _ = subtask_answer("監査記録の保存", [SearchOutput(file_name="m.pdf", content=sentence)])
    assert _quote(text) == "…最後に監査記録を保存します。"
    text, _ = subtask_answer("項目1番の入力", [SearchOutput(file_name="m.pdf", content=sentence)])
    quote = _quote(text)
    assert quote.startswith("…項目1番の入力欄") and len(quote) <= 200
    assert quote.endswith("を記入し…")


# ----------------------------------------------------------------------------- answer shape


def test_an_answered_part_leads_with_its_most_relevant_quoted_sentence() -> None:
    passage = SearchOutput(
        file_name="m.pdf",
        page=2,
        content="Q: 仮払金の精算期限は？\nA: 仮払金は出張から戻って10日以内に精算します。",
        row=3,
    )
    text, _ = subtask_answer("仮払金の精算期限を教えて", [passage])
    assert text.splitlines()[0] == "資料によると、仮払金は出張から戻って10日以内に精算します。"


def test_a_single_part_answer_has_no_heading_and_repeats_no_question() -> None:
    question = "仮払金の精算期限を教えてください"
    text = final_answer(
        question,
        [_part(question, "資料によると、10日以内です。\n- 10日以内【m.pdf p.2】", done=True)],
    )
    assert text.splitlines()[0] == OFFLINE_LABEL
    assert text.count(question) == 1
    assert "### 1." not in text and "見つからなかった点" not in text


def test_parts_are_headed_by_their_own_short_label_and_answered_parts_are_not_missing() -> None:
    text = final_answer(
        "仮払金の精算期限と、監査ログの保存期間について教えてください",
        [
            _part("仮払金の精算期限を教えてください", "資料によると、10日以内です。", done=True),
            _part(
                "監査ログの保存期間について教えてください", "資料には記載がありません。", done=False
            ),
        ],
    )
    lines = text.splitlines()
    assert "### 1. 仮払金の精算期限" in lines and "### 2. 監査ログの保存期間" in lines
    missing = text.split("### 見つからなかった点", 1)[1]
    assert "- 監査ログの保存期間" in missing and "仮払金" not in missing


def test_an_faq_row_that_restates_the_question_leads_the_answer() -> None:
    """Made-up building-access documents: the manual's section about the card ranks higher
    in search, but the FAQ row asking the same question is the answer to lead with."""
    manual = SearchOutput(
        file_name="入館ガイド.pdf",
        content="入館カードの有効期限は1年です。期限の1か月前に総務部から更新のご案内を送ります。",
        page=3,
        heading="3. 入館カード > 3.2 入館カードの有効期限",
        score=9.0,
    )
    faq = SearchOutput(
        file_name="入館FAQ.csv",
        content="Q: 入館カードを紛失してしまいました。\nA: 総務部の窓口で再発行を申請してください。"
        "旧カードはその日のうちに無効にします。",
        row=4,
        heading="入館カード",
        score=4.0,
    )
    text, citations = subtask_answer("入館カードを紛失しました", [manual, faq])
    assert text.splitlines()[0].startswith("資料によると、総務部の窓口で再発行"), text
    assert citations[0].startswith("入館FAQ.csv")
    # a question that only shares the topic keeps the search order
    other, _ = subtask_answer("入館カードの期限はいつまで？", [manual, faq])
    assert other.splitlines()[0].startswith("資料によると、入館カードの有効期限は1年"), other


def test_compounds_are_found_at_every_place_they_are_written() -> None:
    assert compounds("国内出張の日当と海外出張の日当", ["国内", "出張", "日当", "海外"]) == [
        ("国内", "出張"),
        ("海外", "出張"),
    ]


def test_a_part_asking_for_a_count_is_answered_only_by_a_passage_stating_one() -> None:
    part = "パスワードを何回間違えるとアカウントがロックされますか"
    vague = SearchOutput(
        file_name="guide.pdf",
        page=5,
        heading="2.5 アカウントロック",
        content="パスワードを続けて間違えると、アカウントがロックされます。解除は管理者に依頼します。",
    )
    counted = SearchOutput(
        file_name="faq.csv",
        row=13,
        content="Q: ロックされました。 A: パスワードを5回続けて間違えるとロックされます。",
    )
    answer, sources = subtask_answer(part, [vague])
    assert "資料には記載がありません（「回数」についての記述は見つかりませんでした）" in answer
    assert sources == []
    assert not reflect(part, [vague], 0).is_completed
    answer, sources = subtask_answer(part, [vague, counted])
    assert "5回" in answer and sources == [counted.citation()]


def test_the_kind_of_value_asked_is_read_from_the_interrogative() -> None:
    assert asked_value("添付は何MBまで？").stated_in("上限は10MBです")  # type: ignore[union-attr]
    assert not asked_value("添付は何MBまで？").stated_in("容量の上限があります")  # type: ignore[union-attr]
    assert asked_value("申請は何営業日前まで？").stated_in("5営業日前までに")  # type: ignore[union-attr]
    assert asked_value("いくらまで使えますか").stated_in("5,000円以下")  # type: ignore[union-attr]
    assert asked_value("How many times can I fail?").stated_in("5回")  # type: ignore[union-attr]
    assert asked_value("いつ振り込まれますか") is None  # answered in too many forms
    assert asked_value("パスワードの条件は？") is None


def test_a_part_asking_to_do_what_no_passage_names_is_declined_naming_the_action() -> None:
    """The documents speak of the IC card reader, but not of buying one: 「購入」 (a noun
    naming an action) is named nowhere, so the part is declined, not answered from a
    passage on using the reader."""
    reader = SearchOutput(
        file_name="guide.pdf",
        page=8,
        heading="3.4 交通費の申請",
        content="交通系ICカードの利用履歴は、パソコンに接続したICカードリーダーで取り込めます。",
    )
    answer, sources = subtask_answer("ICカードリーダーはどこで購入できますか", [reader])
    assert "資料には記載がありません（「購入」についての記述は見つかりませんでした）" in answer
    assert sources == []
    answer, sources = subtask_answer("ICカードリーダーで利用履歴を取り込めますか", [reader])
    assert sources and "取り込めます" in answer


def test_a_section_quote_stops_at_the_next_numbered_heading() -> None:
    passage = SearchOutput(
        file_name="guide.pdf",
        page=8,
        heading="3.4 交通費の申請",
        content=(
            "3.4 交通費の申請\n交通費は、利用した日から1か月以内に申請してください。\n"
            "3.5 宿泊費の申請\n宿泊費は1泊12,000円までです。"
        ),
    )
    answer, sources = subtask_answer("交通費の申請", [passage])
    assert "1か月以内に申請してください" in answer and sources
    assert "宿泊費" not in answer


def test_the_counter_of_the_interrogative_is_no_key_term_but_finds_the_passages() -> None:
    part = "添付ファイルは何MBまで付けられますか"
    assert "mb" not in key_terms(part)
    assert "mb" in reformulate(part, 0, "").split()
    limit = SearchOutput(
        file_name="guide.pdf",
        page=3,
        heading="2.2 添付ファイル",
        content="添付ファイルは1件あたり20MBまでです。",
    )
    answer, sources = subtask_answer(part, [limit])
    assert "20MBまで" in answer and sources == [limit.citation()]


def test_a_part_is_judged_on_its_nouns_not_on_how_its_verbs_are_said() -> None:
    """「しくじる」「入れなくなる」 are everyday words for what the manual writes as 「間違える」
    「ロック」: the part's noun (「サインイン」) and the count it asks for decide."""
    part = "サインインを何回しくじると入れなくなりますか"
    rule = SearchOutput(
        file_name="guide.pdf",
        page=4,
        heading="1.3 サインインできないとき",
        content="サインイン時にパスワードを3回続けて間違えると、アカウントが15分間ロックされます。",
    )
    answer, sources = subtask_answer(part, [rule])
    assert "3回続けて間違える" in answer and sources == [rule.citation()]
    assert reflect(part, [rule], 0).is_completed


def test_the_asked_action_is_not_read_from_a_sentence_telling_what_happened() -> None:
    """The first sentence reports what was done (「申請を修正した。」); the part asks about
    the approval deadline, which the passage states without the word 「修正」."""
    part = "昨日、出張申請を修正した。承認の期限は何日？"
    rule = SearchOutput(
        file_name="guide.pdf",
        page=6,
        heading="4.1 承認期限",
        content="出張申請の承認期限は、申請日から5日以内です。",
    )
    answer, sources = subtask_answer(part, [rule])
    assert "5日以内" in answer and sources == [rule.citation()]
    asked = "出張申請を修正したい。承認の期限は何日？"  # the action asked: named nowhere
    assert "「修正」についての記述は見つかりませんでした" in subtask_answer(asked, [rule])[0]


def test_a_value_the_user_gives_is_matched_by_a_value_of_the_same_kind() -> None:
    """「15MBあるんですが」: the passage states the limit (「20MBまで」), not the user's figure."""
    part = "請求書のPDFが15MBあるんですが、そのまま添付できますか"
    limit = SearchOutput(
        file_name="guide.pdf",
        page=3,
        heading="2.2 添付ファイル",
        content="請求書などのPDFは、1ファイルあたり20MBまで添付できます。",
    )
    answer, sources = subtask_answer(part, [limit])
    assert "20MBまで" in answer and sources == [limit.citation()]
    unrelated = limit.model_copy(
        update={"content": "請求書のPDFは、添付する前に内容を確認してください。"}
    )
    assert subtask_answer(part, [unrelated])[1] == []  # states no size


def test_worth_after_a_counter_is_no_minutes() -> None:
    assert key_terms("相見積もりは何社分必要ですか") == ["見積もり"]
    assert key_terms("有給は何日分残っていますか") == ["有給", "残る"]


def test_the_situation_told_before_the_question_picks_the_passage_not_the_words() -> None:
    """The question's words (「相見積もり」) decide whether it is answered; the situation
    (「40万円のPCを買う」) chooses, among the passages that answer, the one that fits it."""
    part = "税込40万円のノートPCを購入する予定です。相見積もりは何社必要ですか？"
    assert split_question(part) == [part]
    rule = SearchOutput(
        file_name="guide.pdf",
        page=7,
        heading="3.4 相見積もり",
        content="税込30万円以上の購入では、相見積もりとして2社以上の見積書を添付します。",
    )
    other = SearchOutput(
        file_name="faq.csv",
        row=5,
        content="Q: 相見積もりの様式は？ A: 相見積もりは任意の様式で2社以上から取得します。",
        score=9.0,
    )
    answer, sources = subtask_answer(part, [other, rule])
    assert sources == [rule.citation()] and "2社以上" in answer


def test_an_english_question_finds_the_japanese_words_of_the_manual() -> None:
    """The built-in English ↔ Japanese groups, also for inflected words (browsers, fixed)."""
    notes = SearchOutput(
        file_name="notes.md",
        heading="v2.1.0 > 不具合修正",
        content="v2.1.0 の不具合修正: 対応ブラウザで申請一覧が表示されない不具合を修正しました。",
    )
    answer, sources = subtask_answer("Which bugs were fixed in v2.1.0?", [notes])
    assert sources == [notes.citation()] and "不具合を修正しました" in answer


def test_an_english_part_needs_one_passage_with_each_of_its_words() -> None:
    """「weekly」 named only by another passage does not make a weekly e-mail answered."""
    send = SearchOutput(file_name="notice.md", content="申請が承認されると、メールを送信します。")
    week = SearchOutput(
        file_name="guide.pdf", page=3, content="毎週日曜日はメンテナンスのため利用できません。"
    )
    answer, sources = subtask_answer("Can it send me a weekly email?", [send, week])
    assert sources == [] and "the documents do not say" in answer


def test_an_english_part_is_judged_by_the_rule_of_a_japanese_one() -> None:
    """Most of its words in one passage answer it, as for a Japanese part: 「one」 need not be
    written for "How many PDF files can I attach to one invoice?"."""
    rule = SearchOutput(
        file_name="manual.pdf",
        page=4,
        heading="4.3 請求書PDFの添付",
        content="請求書1件につき、PDFファイルを5ファイルまで添付できます。",
    )
    answer, sources = subtask_answer("How many PDF files can I attach to one invoice?", [rule])
    assert sources == [rule.citation()] and "5ファイルまで" in answer


def test_an_english_question_is_answered_only_by_a_passage_naming_what_it_asks_for() -> None:
    """「Which … model」: a passage on the printer that names no model does not answer it."""
    assert asked_noun_en("Which label printer model do we need for that?") == "model"
    assert asked_noun_en("What's the monthly per-user price of the Standard plan?") == "price"
    assert asked_noun_en("Can we log in with single sign-on?") == ""
    printing = SearchOutput(
        file_name="manual.docx",
        heading="4.3 ゲストカードを印刷する",
        content="ゲストカードはラベルプリンターで印刷します。用紙は専用のものを使います。",
    )
    answer, sources = subtask_answer("Which label printer model do we need for that?", [printing])
    assert sources == [] and 'nothing about "model" was found' in answer


def test_an_english_noun_tied_by_a_preposition_is_an_aspect_of_the_topic() -> None:
    """「support by phone on the Standard plan」: a passage on the Standard plan's mail support
    shares most of the words but says nothing about the phone."""
    mail = SearchOutput(
        file_name="manual.pdf",
        page=9,
        content="スタンダードプランでは、メールサポートを平日に受け付けています。",
    )
    answer, sources = subtask_answer("Can we get support by phone on the Standard plan?", [mail])
    assert sources == [] and "the documents do not say" in answer


def test_a_judgement_word_is_the_frame_of_a_question_not_its_subject() -> None:
    """「…しないとダメ？」「無理ですか」 ask whether something is required or possible, as
    「大丈夫？」 does: no passage has to say 「ダメ」. The lead sentence is the one stating the
    length asked for (「何文字」), not the first that names the password."""
    login = SearchOutput(
        file_name="manual.pdf",
        page=5,
        heading="2.1 ログイン",
        content=(
            "ブラウザでログイン画面を開き、ログインIDとパスワードを入力します。"
            "パスワードは10文字以上で、英大文字と数字を含める必要があります。"
        ),
    )
    answer, sources = subtask_answer("パスワードって何文字以上にしないとダメ？", [login])
    assert sources == [login.citation()]
    assert answer.startswith("資料によると、パスワードは10文字以上で")


def test_a_table_row_is_read_under_its_header_row() -> None:
    """「スタンダードプランの月額料金」: the row 「月額料金」 names the fee, the header row
    「スタンダード」 the plan and the heading 「料金プラン」: together they answer it."""
    table = SearchOutput(
        file_name="manual.docx",
        heading="11.2 料金プラン",
        content=(
            "項目\tスタンダード\tプロ\n月額料金(税抜)\t33,000円\t88,000円\n"
            "ユーザー数\t30名まで\t100名まで"
        ),
    )
    answer, sources = subtask_answer("スタンダードプランの月額料金を教えてください", [table])
    assert sources == [table.citation()] and "33,000円" in answer
    # the lead is the cell asked for: the row the question names, in the column it names
    assert answer.startswith("資料によると、月額料金(税抜)（スタンダード）: 33,000円")
    lines = SearchOutput(
        file_name="manual.docx",
        heading="11.2 料金プラン",
        content="スタンダードの利用者は30名までです。\n月額料金は見積もりによります。",
    )
    answer, sources = subtask_answer("スタンダードプランの月額料金を教えてください", [lines])
    assert sources == []  # two sentences apart are no table: the fee is not the plan's
    markdown = SearchOutput(
        file_name="notes.md",
        heading="料金プラン",
        content="| 項目 | スタンダード | プロ |\n|---|---|---|\n| 月額料金 | 33,000円 | 88,000円 |",
    )
    answer, sources = subtask_answer("スタンダードプランの月額料金を教えてください", [markdown])
    assert sources == [markdown.citation()] and "33,000円" in answer
    two = SearchOutput(
        file_name="manual.docx",
        heading="11.2 料金プラン",
        content=(
            "項目\tスタンダード\tプロ\nユーザー数\t30名まで\t100名まで\n\n"
            "オプション\tサポート\tストレージ\n月額料金(税抜)\t5,000円\t3,000円"
        ),
    )
    answer, sources = subtask_answer("スタンダードプランの月額料金を教えてください", [two])
    assert sources == []  # the fee row is under the second table's header, not the first's


def test_a_clause_telling_when_is_the_situation_not_the_question() -> None:
    """「個人の講師に講演料を払うとき、」 frames the question; 「源泉徴収の税率」 is asked."""
    part = "個人の講師に講演料を払うとき、源泉徴収の税率はいくらですか？"
    rule = SearchOutput(
        file_name="guide.pdf",
        page=10,
        heading="6.2 源泉徴収",
        content="報酬の支払では源泉徴収を行います。税率は100万円以下の部分について10.21%です。",
    )
    answer, sources = subtask_answer(part, [rule])
    assert "10.21%" in answer and sources == [rule.citation()]


def test_a_rate_asked_with_ikura_is_a_share_not_an_amount() -> None:
    assert asked_value("源泉徴収の税率はいくらですか") is SHARE
    assert asked_value("交通費はいくらまで") is MONEY
    assert asked_value("換算レートは何を使えばいい？") is None
    assert key_terms("源泉徴収の税率はいくらですか") == ["源泉", "徴収", "税率"]


def test_how_many_with_a_word_before_the_unit_asks_for_that_unit() -> None:
    assert asked_value("How many business days does an approver have?") is DAYS
    assert key_terms("How many business days does an approver have?") == ["approver"]


def test_a_count_asked_with_its_counter_needs_that_counter() -> None:
    """「何段」 is answered by 「3段」, not by a passage stating 「30件」."""
    part = "承認ルートは最大何段まで設定できますか"
    assert asked_value(part).counters == ("段",)  # type: ignore[union-attr]
    other = SearchOutput(
        file_name="guide.pdf",
        page=5,
        heading="4.1 承認ルート",
        content="承認ルートの設定では、最大30件の承認者を登録できます。",
    )
    answer, sources = subtask_answer(part, [other])
    assert sources == [] and "資料には記載がありません" in answer


def test_a_verbal_noun_with_suru_is_no_compound_verb() -> None:
    assert "差戻す" in key_terms("申請をまとめて差戻しすることはできますか")


def test_another_section_of_the_same_manual_is_quoted_only_as_much_about_the_part() -> None:
    """The manual's own headings say which section is about the part: a sibling section
    whose heading names fewer of its words is not quoted beside it."""
    about = SearchOutput(
        file_name="guide.pdf",
        page=8,
        heading="4.2 差戻しのコメント",
        content="差戻しのときはコメントの入力が必須です。コメントは申請者に通知されます。",
    )
    sibling = SearchOutput(
        file_name="guide.pdf",
        page=9,
        heading="4.3 承認の期限",
        content="差戻しされた申請は、必須のコメントを確認して修正し、再申請してください。",
    )
    _, sources = subtask_answer("差戻しのコメントは必須ですか", [about, sibling])
    assert sources == [about.citation()]


def test_a_passage_naming_the_topic_only_to_send_the_reader_elsewhere_ranks_below() -> None:
    """「代理承認については4.3を参照」 names 代理承認 without speaking of it."""
    reference = SearchOutput(
        file_name="guide.pdf",
        page=5,
        heading="2.3 代理申請者",
        content="代理申請者は最長6か月まで指定できます。代理承認については「4.3 代理承認」を参照。",
        score=9.0,
    )
    about = SearchOutput(
        file_name="guide.pdf",
        page=9,
        heading="4.3 不在時の設定",
        content="代理承認者は最長30日まで指定できます。",
    )
    answer, sources = subtask_answer("代理承認者は最長何日まで指定できますか", [reference, about])
    assert sources[0] == about.citation() and "最長30日" in answer


def test_a_second_faq_row_asking_about_something_else_is_not_quoted() -> None:
    """The FAQ row on 仮払金 mentions 精算 and 期限 in its answer; its question is not about
    the part's topic, so it is not quoted beside the manual's section."""
    rule = SearchOutput(
        file_name="guide.pdf",
        page=4,
        heading="3.1 経費精算の期限",
        content="経費精算の期限は、支払日の翌月10日です。",
    )
    other = SearchOutput(
        file_name="faq.csv",
        row=7,
        content="Q: 仮払金はいつ返しますか。\nA: 経費精算の期限までに、残額を返してください。",
    )
    _, sources = subtask_answer("経費精算の期限はいつですか", [rule, other])
    assert sources == [rule.citation()]


def test_rule_words_are_generic_like_method_words() -> None:
    """「計算ルール」 asks how it is calculated: a passage on the calculation answers it."""
    assert is_generic("ルール") and is_generic("仕組み")
    rule = SearchOutput(
        file_name="guide.pdf",
        page=11,
        heading="6.2 源泉徴収",
        content="源泉徴収税額は、税抜金額を基準に計算します。",
    )
    answer, sources = subtask_answer("源泉徴収税額の計算ルール", [rule])
    assert sources == [rule.citation()] and "税抜金額を基準に計算" in answer


def test_a_release_note_that_changed_the_quoted_value_is_quoted_beside_the_manual() -> None:
    """The manual says 10名; a later release made it 30名: the answer quotes both, so the
    manual's value is never given alone as current. A release note about another feature
    is not quoted."""
    manual = SearchOutput(
        file_name="manual.docx",
        heading="第3章 来訪予約 > 3.1 来訪予約を登録する",
        content="ホストは、受付画面から1件の来訪予約に来訪者を10名まで登録できます。",
    )
    changed = SearchOutput(
        file_name="release_notes.md",
        heading="リリースノート > Ver.2.4(2026年1月13日) > 変更",
        content="- 1件の来訪予約に登録できる来訪者の上限を、10名から30名に拡大しました。",
    )
    other = SearchOutput(
        file_name="release_notes.md",
        heading="リリースノート > Ver.2.3(2025年10月6日) > 変更",
        content="- CSV一括登録の最大行数を200行から1,000行に拡大しました。",
    )
    answer, sources = subtask_answer(
        "ホストは受付画面から1件の来訪予約に来訪者を何名まで登録できますか？",
        [manual, other, changed],
    )
    assert "10名まで" in answer and "10名から30名に拡大" in answer
    assert "1,000行" not in answer
    assert sources == [manual.citation(), changed.citation()]


def test_passages_that_each_say_part_of_it_do_not_answer_a_part_together() -> None:
    """「利用料を部署ごとに按分して請求書を分けられるか」: one passage on invoices, one on
    prices, one that splits something else. Side by side they cover the words, but none says
    an invoice can be split by department: declined, nothing quoted."""
    invoice = SearchOutput(
        file_name="faq.xlsx",
        row=2,
        heading="契約・料金",
        content="Q: 支払方法を教えてください。\nA: 請求書払いとカード払いに対応しています。",
    )
    split = SearchOutput(
        file_name="manual.docx",
        heading="3.1 来訪予約を登録する",
        content="来訪者が多い場合は、利用する拠点ごとに予約を分けて登録します。",
    )
    price = SearchOutput(
        file_name="manual.docx",
        heading="2.2 料金プラン",
        content="利用料は拠点ごとの月額制です。",
    )
    question = "利用料を部署ごとに按分して、請求書を分けてもらうことはできますか？"
    answer, sources = subtask_answer(question, [invoice, split, price])
    assert "記載がありません" in answer and sources == []


def test_how_many_things_is_answered_by_any_count_of_things_but_a_company_count_by_companies() -> (
    None
):
    templates = asked_value("督促テンプレートって何個まで作れますか？")
    assert templates is not None
    assert templates.stated_in("テンプレートは最大20件まで作成できます。")
    assert not templates.stated_in("テンプレートは自由に作成できます。")
    companies = asked_value("取引先は何社まで登録できますか？")
    assert companies is not None and not companies.stated_in("最大30件まで登録できます。")


def test_a_glossary_answers_only_a_question_about_a_meaning() -> None:
    """「1.3 用語」 names many words of the manual; it says what a word means, not how a
    limit, a deadline or a step works."""
    glossary = SearchOutput(
        file_name="manual.docx",
        heading="第1章 はじめに > 1.3 用語",
        content="来訪予約\t来訪日時・来訪者・ホスト・拠点を登録したもの。",
    )
    answer, sources = subtask_answer("来訪予約の登録にホストと拠点は必要ですか？", [glossary])
    assert "記載がありません" in answer and sources == []
    answer, sources = subtask_answer("来訪予約とは何ですか？", [glossary])
    assert "来訪日時" in answer and sources == [glossary.citation()]
    how_to = SearchOutput(
        file_name="manual.docx",
        heading="第5章 辞書 > 5.2 用語の登録方法",
        content="「辞書」>「用語の追加」で用語と読みを登録します。",
    )
    answer, sources = subtask_answer("辞書に用語を登録する方法は？", [how_to])
    assert sources == [how_to.citation()]  # a section about terms is no glossary
