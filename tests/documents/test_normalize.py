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
    assert normalize_pages(pages) == [
        "売上の推移明細は別表1を参照",
        "費用の内訳明細は別表2を参照",
        "今後の見通し明細は別表3を参照",
        "付録明細は別表4を参照",
        "最後のページ以上",
    ]


def test_normalize_text_splits_pages_on_form_feeds() -> None:
    text = "- 1 -\n請求書\n\x0c- 2 -\n明細\n\x0c- 3 -\nXYZ システム 利用料 3 回"
    assert normalize_text(text) == "請求書\n\n明細\n\nXYZシステム 利用料3回"
