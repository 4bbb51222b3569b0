"""Each normalisation quirk of Japanese PDF text, with exact expected strings."""

from __future__ import annotations

import unicodedata

import pytest

from keiri_agent.documents.normalize import (
    RADICAL_SUPPLEMENT,
    collapse_whitespace,
    join_broken_lines,
    map_radical_supplement,
    nfkc,
    normalize_pages,
    normalize_text,
    page_joint,
    remove_cjk_latin_spaces,
    remove_page_furniture,
    unify_newlines,
)


def test_kangxi_radicals_are_fixed_by_nfkc() -> None:
    # ⼯ U+2F2F, ⽉ U+2F49, ⾦ U+2FA6 → 工, 月, 金
    assert nfkc("\u2f2f\u2f49\u2fa6") == "工月金"
    assert normalize_text("\u2f49\u672b\u6c7a\u7b97") == "月末決算"


def test_radical_supplement_is_left_alone_by_nfkc_and_mapped_by_the_table() -> None:
    text = "部\u2ed1 \u2ea0間 \u2ec4暦 \u2ed8色"
    assert nfkc(text) == text
    assert map_radical_supplement(text) == "部長 民間 西暦 青色"
    assert normalize_text("営業部\u2ed1") == "営業部長"


def test_radical_table_keys_are_supplement_radicals_and_values_kanji() -> None:
    for radical, kanji in RADICAL_SUPPLEMENT.items():
        assert 0x2E80 <= ord(radical) <= 0x2EFF
        assert unicodedata.name(radical).startswith("CJK RADICAL")
        assert unicodedata.name(kanji).startswith("CJK UNIFIED IDEOGRAPH")
    assert "\u2ecf" not in RADICAL_SUPPLEMENT  # ⻏: UCD maps it to 邑, deliberately left out


def test_full_width_ascii_becomes_half_width() -> None:
    assert normalize_text("ＡＢＣ　１２３") == "ABC 123"


def test_space_between_cjk_and_latin_or_digits_is_removed_both_ways() -> None:
    assert remove_cjk_latin_spaces("XYZ システム") == "XYZシステム"
    assert remove_cjk_latin_spaces("3 回") == "3回"
    assert remove_cjk_latin_spaces("第 3 回") == "第3回"
    assert remove_cjk_latin_spaces("経費 Excel VBA 入門") == "経費Excel VBA入門"


def test_space_after_a_leading_section_number_is_kept() -> None:
    text = "2.1 パスワードの条件\n本文 3 回まで 2.1 節"
    assert remove_cjk_latin_spaces(text) == "2.1 パスワードの条件\n本文3回まで2.1節"
    assert remove_cjk_latin_spaces("10.2.3 通知設定") == "10.2.3 通知設定"


def test_space_between_latin_words_and_between_kanji_words_is_kept() -> None:
    assert remove_cjk_latin_spaces("Excel VBA") == "Excel VBA"
    assert remove_cjk_latin_spaces("請求書 支払") == "請求書 支払"


def test_lines_broken_mid_word_are_joined_but_paragraphs_kept() -> None:
    text = "本書は経費精算の手\n順を説明します。\n\n次の段落\nです"
    assert join_broken_lines(text) == "本書は経費精算の手順を説明します。\n\n次の段落です"


def test_numbered_heading_is_not_joined_to_its_paragraph() -> None:
    text = "2.1 パスワードの条件\n情報セキュリティ規程に従\nいます。\n第3章 申請\n申請の手順"
    assert normalize_text(text) == (
        "2.1 パスワードの条件\n情報セキュリティ規程に従います。\n第3章 申請\n申請の手順"
    )
    # a long line that starts with a number is a sentence, not a heading: joined
    long_line = "3 回失敗するとアカウントはロックされ、管理者による解除が必要にな"
    expected = "3回失敗するとアカウントはロックされ、管理者による解除が必要になります。"
    assert normalize_text(long_line + "\nります。") == expected


def test_lines_are_not_joined_after_sentence_end_or_at_latin() -> None:
    assert join_broken_lines("完了。\n次へ") == "完了。\n次へ"
    assert join_broken_lines("合計\nXYZ") == "合計\nXYZ"
    assert join_broken_lines("Total\n合計") == "Total\n合計"


def test_whitespace_runs_collapse_and_tabs_stay() -> None:
    assert collapse_whitespace("a  b \t c\u3000d  \n\n\n\ne\t1") == "a b \t c d\n\ne\t1"
    assert normalize_text("  a   b  \n\n\n\nc ") == "a b\n\nc"


def test_newlines_and_control_characters_are_unified() -> None:
    assert unify_newlines("a\r\nb\rc\x00d\x0c") == "a\nb\ncd\x0c"


@pytest.mark.parametrize("marker", ["- 3 -", "3 / 10", "Page 3", "3ページ", "3", "— 3 —"])
def test_page_number_printed_first_on_a_page_is_removed(marker: str) -> None:
    pages = ["表紙", "目次", f"{marker}\n本文の続き\n内容"]
    assert remove_page_furniture(pages)[2] == "本文の続き\n内容"


def test_page_number_at_page_bottom_is_removed_and_other_numbers_kept() -> None:
    pages = ["売上 100\n1 / 2", "件数\n42\n2 / 2"]
    assert remove_page_furniture(pages) == ["売上 100", "件数\n42"]


def test_repeated_footer_on_most_pages_is_removed() -> None:
    bodies = ["売上の推移", "費用の内訳", "今後の見通し", "付録"]
    pages = [
        f"{body}\n明細は別表{n}を参照\n株式会社サンプル 社外秘 {n}"
        for n, body in enumerate(bodies, start=1)
    ] + ["最後のページ\n以上"]
    assert normalize_pages(pages) == [  # a heading over a longer line keeps its line
        "売上の推移\n明細は別表1を参照",
        "費用の内訳\n明細は別表2を参照",
        "今後の見通し\n明細は別表3を参照",
        "付録\n明細は別表4を参照",
        "最後のページ以上",
    ]


def test_a_header_and_footer_of_two_lines_each_are_removed() -> None:
    """「製品名 操作マニュアル」 over 「第4.2版」, and a document number over the page
    number and the publisher: every line of them goes, the body stays."""
    bodies = ["1. はじめに\n本書は操作方法を説明します。", "2. 操作\nログインします。", "3. 設定"]
    pages = [
        f"ツグミ 操作マニュアル\n第4.2版\n{body}\nTGM-M-0420\n- {n} -\n株式会社ツグミ"
        for n, body in enumerate([*bodies, "4. 付録\n上限値の一覧です。"], start=1)
    ]
    assert remove_page_furniture(pages) == [
        *bodies,
        "4. 付録\n上限値の一覧です。",
    ]


def test_normalize_text_splits_pages_on_form_feeds() -> None:
    text = "- 1 -\n請求書\n\x0c- 2 -\n明細\n\x0c- 3 -\nXYZ システム 利用料 3 回"
    assert normalize_text(text) == "請求書\n\n明細\n\nXYZシステム 利用料3回"


def test_a_word_or_sentence_split_over_a_page_break_is_joined() -> None:
    header, footer = "経費精算の手引き", "社外秘"
    pages = [
        f"{header}\n出張で発生した交通費は、領収書を添えて申請してください。\n"
        f"申請後に経理部が内容を確認し、承認された交通費の精\n{footer} 1",
        f"{header}\n算は月末までに行われます。\n{footer} 2",
        f"{header}\n3. 注意事項\n領収書は原本を提出してください。\n{footer} 3",
    ]
    assert normalize_text("\f".join(pages)) == (  # furniture is not glued in
        "出張で発生した交通費は、領収書を添えて申請してください。\n"
        "申請後に経理部が内容を確認し、承認された交通費の精算は月末までに行われます。\n\n"
        "3. 注意事項\n領収書は原本を提出してください。"
    )
    assert normalize_text("Claims go to the travel desk for reim-\fbursement.") == (
        "Claims go to the travel desk for reimbursement."
    )
    assert normalize_text("Claims go to the travel\fdesk within a week.") == (
        "Claims go to the travel desk within a week."
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Claims go to the travel desk.", "Taxi receipts are kept."),  # a sentence end
        ("申請の期限は次のとおりです：", "月末までに申請します。"),  # a label
        ("交通費の精算について説明します。申請の手順は次のと", "1. 申請画面を開きます。"),
        ("XYZシステム利用料 合計12,345円", "2ページ目の本文"),  # Latin/CJK: not joined
        ("Steps", "open the form"),  # a short last line
    ],
)
def test_a_page_that_does_not_continue_the_previous_one_stays_apart(
    before: str, after: str
) -> None:
    assert page_joint(before, after) == (0, "\n\n")


def test_a_short_label_line_is_not_glued_to_the_body_line_below() -> None:
    text = "パスワードの変更\n設定画面の「変更」ボタンから変更します。"
    assert normalize_text(text) == text
    # …and a sentence broken at the page's line width is still joined
    page = (
        "経費の申請は、月末までに申請画面から領収書の画像を添えて行\n"
        "います。承認者は申請の内容を確認し、差し戻すか承認します。\n"
        "承認された申請は翌月の給与と一緒に振り込まれます。"
    )
    assert normalize_text(page) == (
        "経費の申請は、月末までに申請画面から領収書の画像を添えて行います。"
        "承認者は申請の内容を確認し、差し戻すか承認します。\n"
        "承認された申請は翌月の給与と一緒に振り込まれます。"
    )


def test_labels_and_list_items_keep_their_lines() -> None:
    assert join_broken_lines("申請期限：\n毎月25日") == "申請期限：\n毎月25日"
    text = "次の書類を添付します\n・領収書の画像\n・出張報告書"
    assert join_broken_lines(text) == text
    numbered = "手順は次のとおりです\n1. 申請画面を開きます\n2. 内容を入力します"
    assert join_broken_lines(numbered) == numbered


def test_a_latin_cjk_wrap_at_full_width_is_joined() -> None:
    text = (
        "外部システムから経費データを取り込むときは、当社の公開している API\n"
        "リクエストの形式に合わせてください。"
    )
    assert normalize_text(text) == (
        "外部システムから経費データを取り込むときは、当社の公開しているAPIリクエストの"
        "形式に合わせてください。"
    )


def test_table_rows_are_not_joined_to_each_other_or_to_the_text_below() -> None:
    rows = (
        "区分\t上限\n"
        "一般会員の予約\t一度に三件まで予約できる会員の区分\n"
        "特別会員の予約\t一度に十件まで予約できる会員の区分\n"
        "予約の変更は、利用日の前日までに受付窓口で手続きしてください"
    )
    assert join_broken_lines(rows) == rows
