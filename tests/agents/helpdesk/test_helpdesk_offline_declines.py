"""Offline answers decline questions about topics the passages do not speak of.

Made-up passages; each case was answered (or only called "related") before its rule.
"""

from __future__ import annotations

from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.agents.helpdesk.offline import reflect, subtask_answer
from keiri_agent.agents.helpdesk.offline.specificity import aspects, is_action, most_specific
from keiri_agent.agents.helpdesk.offline.terms import PreparedText, key_terms
from keiri_agent.search.tokenize import content_words, is_verbal_noun

DECLINE = "資料には記載がありません"


def _passage(content: str, heading: str = "3. 購買") -> SearchOutput:
    return SearchOutput(file_name="guide.pdf", page=7, heading=heading, content=content, score=1.0)


# ------------------------------------------------------- a thing, not an action, is the topic


def test_verbal_nouns_name_actions_not_things() -> None:
    assert is_verbal_noun("発注")
    assert is_verbal_noun("修正")
    assert not is_verbal_noun("名札")
    assert not is_verbal_noun("倉庫")
    assert is_action(("登録", "申請"))
    assert not is_action(("固定", "資産"))


def test_the_thing_asked_about_outranks_the_action_done_to_it() -> None:
    question = "名札の発注はどうすればよいですか"
    assert most_specific(question, key_terms(question)) == [("名札",)]


def test_a_question_about_a_thing_no_passage_names_is_declined_though_its_action_is() -> None:
    question = "名札の発注はどうすればよいですか"
    passage = _passage("発注は購買画面から行います。承認後に業者へ送られます。")
    text, _ = subtask_answer(question, [passage])
    assert DECLINE in text
    assert "「名札」についての記述は見つかりませんでした" in text
    assert not reflect(question, [passage], 0).is_completed


def test_the_thing_named_with_its_action_is_answered() -> None:
    question = "名札の発注はどうすればよいですか"
    passage = _passage("名札の発注は購買画面から行います。")
    text, _ = subtask_answer(question, [passage])
    assert text.startswith("資料によると")


# ------------------------------------------------- a compound is named within one sentence


def test_a_compound_whose_parts_are_scattered_over_a_passage_is_not_named() -> None:
    question = "出張報告書の様式はどこにありますか"
    passage = _passage(
        "出張の前に申請してください。報告は月末までに行います。申込書は総務課にあります。"
    )
    text, _ = subtask_answer(question, [passage])
    assert DECLINE in text
    assert "「出張報告書」についての記述は見つかりませんでした" in text


def test_a_compound_whose_parts_share_a_sentence_is_named() -> None:
    question = "出張報告書の様式はどこにありますか"
    passage = _passage("出張の報告書は、様式集から書式を選んで作成します。")
    text, _ = subtask_answer(question, [passage])
    assert DECLINE not in text


# ---------------------------------------------------------------- compound verbs stay whole


def test_a_compound_verb_is_one_key_term() -> None:
    assert content_words("申請を取り下げたい") == ["申請", "取り下げる"]
    assert content_words("立て替えた費用") == ["立て替える", "費用"]
    assert key_terms("出した申請を取り下げたい") == ["申請", "取り下げる"]


def test_a_compound_verb_matches_its_noun_form_not_its_second_half() -> None:
    assert PreparedText.of("申請の取り下げは詳細画面で行います。").has("取り下げる")
    assert PreparedText.of("差し戻された申請は修正できます。").has("差し戻す")
    assert not PreparedText.of("単価を下げる交渉をします。").has("取り下げる")


# ------------------------------------------------- a katakana word inside a longer katakana word


def test_a_katakana_term_does_not_match_inside_a_longer_katakana_word() -> None:
    assert not PreparedText.of("30分操作しないとログアウトされます。").has("ログ")
    assert PreparedText.of("操作ログは管理画面に保存されます。").has("ログ")
    assert PreparedText.of("ICカードリーダーで読み取ります。").has("カード")


def test_a_question_about_a_katakana_topic_found_only_inside_another_word_is_declined() -> None:
    question = "操作ログはどこで確認できますか"
    passage = _passage("30分操作しないと自動的にログアウトされます。", heading="2. ログイン")
    text, _ = subtask_answer(question, [passage])
    assert "資料によると" not in text
    assert DECLINE in text


# ------------------------------------------- the asked aspect must be named beside the topic


def test_the_aspect_tied_to_the_topic_is_found() -> None:
    question = "社用スマホの月額上限はいくらですか"
    terms = key_terms(question)
    (topic,) = most_specific(question, terms)
    assert [a.unit for a in aspects(question, terms, topic) if a.linked]


def test_an_aspect_named_nowhere_near_the_topic_is_declined() -> None:
    question = "ロッカーの暗証番号を変えたい"
    passages = [
        _passage("ロッカーは総務部が割り当てます。", "5. 備品"),
        _passage("入館システムの暗証番号は毎年変更します。", "2. 入館"),
    ]
    text, _ = subtask_answer(question, passages)
    assert DECLINE in text
    assert not reflect(question, passages, 0).is_completed


def test_an_aspect_named_beside_the_topic_is_answered() -> None:
    question = "ロッカーの鍵の返却期限はいつですか"
    passages = [_passage("ロッカーの鍵の返却期限は退職日の翌営業日です。", "5. 備品")]
    text, _ = subtask_answer(question, passages)
    assert DECLINE not in text
    assert reflect(question, passages, 0).is_completed


def test_a_redo_is_not_answered_by_the_action_alone() -> None:
    question = "入館カードを再発行してもらうにはどうすればよいですか"
    passages = [_passage("入館カードは入社日に総務部が発行します。", "2. 入館")]
    text, _ = subtask_answer(question, passages)
    assert DECLINE in text
    assert "再発行" in text
    named = [_passage("入館カードを紛失したときは総務部が再発行します。", "2. 入館")]
    assert DECLINE not in subtask_answer(question, named)[0]


def test_a_related_answer_says_plainly_what_is_not_written() -> None:
    question = "社用携帯の通話料の上限"
    passages = [
        _passage("社用携帯は総務部が貸与します。", "5. 備品"),
        _passage("社用携帯の通話料は会社が負担します。", "5. 備品"),
    ]
    text, sources = subtask_answer(question, passages)
    # declined, the related passage pointed to but not quoted (never both answered and declined)
    assert "記載がありません" in text
    assert "という語は次の箇所に出てきます" in text
    assert sources == [] and "【" not in text


def test_a_one_character_noun_beside_the_topic_is_no_aspect() -> None:
    """「紙の領収書」: 「紙」 is too short to say what is asked (as for the topic itself);
    the passage on keeping 領収書 answers."""
    question = "紙の領収書は精算後に捨ててもいいですか"
    terms = key_terms(question)
    (topic,) = most_specific(question, terms)
    assert all(len("".join(a.unit)) >= 2 for a in aspects(question, terms, topic))
    rule = _passage("領収書の原本は、精算の承認後1か月間保管してから捨ててください。", "3. 領収書")
    assert DECLINE not in subtask_answer(question, [rule])[0]


def test_a_number_matches_only_the_whole_number() -> None:
    assert PreparedText.of("2文字以上").has("2")
    assert not PreparedText.of("12文字以上").has("2")
    assert not PreparedText.of("2.1 パスワードの条件").has("2")


def test_an_aspect_after_a_latin_name_and_a_space_is_tied_to_it() -> None:
    """「Procura の導入費用」: the space before the particle does not untie 導入費用."""
    question = "Procura の導入費用"
    terms = key_terms(question)
    (topic,) = most_specific(question, terms)
    assert [a.unit for a in aspects(question, terms, topic) if a.linked] == [("導入", "費用")]
    passage = _passage("Procura では、費用を計上する予算科目を申請に指定します。")
    assert DECLINE in subtask_answer(question, [passage])[0]
