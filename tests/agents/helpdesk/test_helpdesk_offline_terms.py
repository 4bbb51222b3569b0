"""Offline key terms on made-up text: words not substrings, standalone parts, the
system name from settings, synonym groups as data (built in and per knowledge base)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.agents.helpdesk.offline import (
    STOP_TERMS,
    Vocabulary,
    key_terms,
    load_synonym_groups,
    reflect,
    reformulate,
    split_question,
    subtask_answer,
    synonyms,
)
from keiri_agent.agents.helpdesk.offline.terms import PreparedText, parse_synonym_groups
from keiri_agent.errors import UserInputError


def _passage(content: str) -> SearchOutput:
    return SearchOutput(file_name="guide.pdf", page=4, heading="", content=content, score=1.0)


# ----------------------------------------------------------------------------- words


def test_a_one_character_term_matches_a_word_not_part_of_a_compound() -> None:
    assert not PreparedText.of("申請方法は画面の案内に従ってください。").has("法")
    assert not PreparedText.of("税法上の扱いは経理部に確認してください。").has("法")
    assert PreparedText.of("法の改正により様式が変わりました。").has("法")


def test_a_negative_prefix_stays_on_its_word() -> None:
    assert key_terms("回線が不安定なときの対処") == ["回線", "不安定", "対処"]
    assert key_terms("未承認の伝票を探したい") == ["未承認", "伝票", "探す"]
    assert not PreparedText.of("回線が不安定になることがあります。").has("安定")
    assert not PreparedText.of("未承認の伝票は一覧に出ません。").has("承認")
    assert PreparedText.of("承認者が伝票を確認します。").has("承認")
    assert PreparedText.of("回線が不安定になることがあります。").has("不安定")


def test_reflection_does_not_count_a_term_cut_out_of_a_longer_word() -> None:
    passages = [_passage("申請方法の詳細は別紙を参照してください。")]
    assert not reflect("法の詳細", passages, 0).is_completed


# ----------------------------------------------------------------------------- parts


def test_a_time_word_before_a_comma_is_no_part_of_its_own() -> None:
    assert split_question("現在、伝票の登録ができません。") == ["現在、伝票の登録ができません"]
    assert split_question("今、締め処理を取り消したい") == ["今、締め処理を取り消したい"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "出張報告が差し戻されました。この場合、どこを直せばよいですか？",
            "出張報告が差し戻されました。この場合、どこを直せばよいですか？",
        ),
        (
            "備品の購入を申請しました。それは誰が承認しますか",
            "備品の購入を申請しました。それは誰が承認しますか",
        ),
        (
            "My travel claim was rejected. In that case, what should I change?",
            "My travel claim was rejected. In that case, what should I change?",
        ),
    ],
)
def test_a_follow_up_that_refers_back_keeps_its_context(question: str, expected: str) -> None:
    assert split_question(question) == [expected]


def test_a_follow_up_without_reference_is_still_its_own_part() -> None:
    assert split_question("伝票の締め日を教えて。備品の購入手順も知りたい。") == [
        "伝票の締め日を教えて",
        "備品の購入手順も知りたい",
    ]


def test_question_and_verb_fillers_are_stop_terms() -> None:
    assert key_terms("どのような対応を取ればよいと考えますか") == ["対応"]
    assert key_terms("このような場合はどう考えたらいいですか") == []
    assert key_terms("伝票を取ったあと、どう考えればよいですか") == ["伝票"]


# ----------------------------------------------------------------------------- system name


def test_no_system_name_is_hard_coded() -> None:
    assert "xyz" not in STOP_TERMS
    assert "xyz" in key_terms("XYZの伝票")


@pytest.mark.parametrize(
    ("system_name", "question", "expected"),
    [
        ("Kintai Cloud", "Kintai Cloudで打刻を修正したい", ["打刻", "修正"]),
        ("Kintai Cloud", "How do I fix a punch in kintai cloud?", ["fix", "punch"]),
        ("勤怠ナビ", "勤怠ナビシステムで打刻を修正したい", ["打刻", "修正"]),
        ("勤怠ナビシステム", "勤怠ナビで打刻を修正したい", ["打刻", "修正"]),
        ("ABC", "ABCシステムの締め日", ["締め日"]),
    ],
)
def test_the_configured_system_name_is_not_a_key_term(
    system_name: str, question: str, expected: list[str]
) -> None:
    assert key_terms(question, Vocabulary.build(system_name=system_name)) == expected


def test_the_system_name_is_removed_as_a_word_only() -> None:
    vocabulary = Vocabulary.build(system_name="ABC")
    assert "abcd" in key_terms("ABCDの伝票", vocabulary)


def test_a_part_that_is_only_the_system_name_joins_its_neighbour() -> None:
    vocabulary = Vocabulary.build(system_name="勤怠ナビ")
    assert split_question("勤怠ナビ、打刻の修正方法を教えて", vocabulary) == [
        "勤怠ナビ、打刻の修正方法を教えて"
    ]


# ----------------------------------------------------------------------------- synonyms


def test_the_built_in_groups_are_general_vocabulary() -> None:
    assert "暗証番号" in synonyms("パスワード")
    assert "invoice" in synonyms("請求書")


def test_a_knowledge_base_file_extends_the_groups(tmp_path: Path) -> None:
    file = tmp_path / "synonyms.txt"
    file.write_text(
        "# 社内用語\n\n打刻, タイムカード, clock in  # 勤怠\n伺い書 うかがいしょ 決裁書\n",
        encoding="utf-8",
    )
    groups = load_synonym_groups(file)
    assert groups == (("打刻", "タイムカード", "clock in"), ("伺い書", "うかがいしょ", "決裁書"))
    vocabulary = Vocabulary.build(synonym_groups=groups)
    assert synonyms("伺い書", vocabulary) == ("うかがいしょ", "決裁書")
    assert synonyms("伺い書") == ()  # not built in
    assert "タイムカード" in synonyms("打刻", vocabulary)
    assert PreparedText.of("決裁書を回す", vocabulary).has("伺い書")
    assert "決裁書" in reformulate("伺い書の回し方", 1, "", vocabulary).split()


def test_a_missing_knowledge_base_file_adds_nothing(tmp_path: Path) -> None:
    assert load_synonym_groups(tmp_path / "synonyms.txt") == ()


@pytest.mark.parametrize("line", ["打刻", "打刻, 打刻", "打刻,,  "])
def test_a_line_without_two_terms_is_a_japanese_error_naming_file_and_line(line: str) -> None:
    with pytest.raises(UserInputError) as error:
        parse_synonym_groups(f"稟議, 決裁書\n{line}\n", "kb/synonyms.txt")
    assert "kb/synonyms.txt の 2 行目" in error.value.message
    assert error.value.hint and "カンマ" in error.value.hint


def test_a_file_that_is_not_utf8_is_a_japanese_error(tmp_path: Path) -> None:
    file = tmp_path / "synonyms.txt"
    file.write_bytes("打刻, タイムカード".encode("cp932"))
    with pytest.raises(UserInputError, match="同義語ファイル"):
        load_synonym_groups(file)


def test_a_filler_phrase_does_not_stop_its_content_word() -> None:
    assert key_terms("問題が発生した") == ["問題", "発生"]


def test_a_date_is_one_key_term_and_another_year_does_not_answer_it() -> None:
    assert key_terms("2025年4月から何が変わる？") == ["2025年4月", "変わる"]
    assert key_terms("４月１日以降の申請は？")[0] == "4月1日"  # full-width digits too
    old = SearchOutput(
        file_name="notice.pdf",
        page=1,
        content="2024年4月から、交通費の精算方法が変わりました。",
    )
    new = SearchOutput(
        file_name="notice.pdf",
        page=2,
        content="2025年4月から、出張旅費の日当が変わります。",
    )
    answer, sources = subtask_answer("2025年4月から何が変わる？", [old])
    assert "資料には記載がありません" in answer and sources == []
    answer, sources = subtask_answer("2025年4月から何が変わる？", [old, new])
    assert "出張旅費の日当" in answer and "p.2" in sources[0]


def test_everyday_words_find_the_manuals_words() -> None:
    """The general lexicon (``synonyms_general.txt``) is built in beside ``synonyms.txt``."""
    assert "スマートフォン" in synonyms("スマホ")
    assert "廃棄" in synonyms("捨てる")
    assert PreparedText.of("領収書の原本は1か月保管した後に廃棄してください。").has("捨てる")
