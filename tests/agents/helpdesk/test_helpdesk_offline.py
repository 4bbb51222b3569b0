"""Offline HelpDesk rules: question splitting, queries, quoted answers, reflection, final answer."""

from __future__ import annotations

import pytest

from keiri_agent.agents.helpdesk.models import ReflectionResult, SearchOutput, Subtask
from keiri_agent.agents.helpdesk.offline import (
    MAX_PARTS,
    MAX_QUOTE_CHARS,
    OFFLINE_LABEL,
    Vocabulary,
    final_answer,
    key_terms,
    missing_from_advice,
    reflect,
    reformulate,
    split_question,
    subtask_answer,
    synonyms,
)
from keiri_agent.search.models import PAGE_STARTS, Chunk, Hit, Source

PASSWORD = SearchOutput(
    file_name="xyz_manual.pdf",
    page=3,
    heading="2.1 パスワード",
    content="パスワードは8文字以上で、英字と数字を含める必要があります。"
    "有効期限は90日です。画面右上のメニューから変更できます。",
    score=3.0,
)
LOCK_FAQ = SearchOutput(
    file_name="faq.csv",
    row=5,
    content="Q: アカウントがロックされました。A: 5回連続で失敗するとロックされます。"
    "30分後に自動で解除されます。",
    score=2.0,
    retriever="keyword",
)
APPLY = SearchOutput(
    file_name="xyz_manual.pdf",
    page=7,
    heading="4. 申請",
    content="経費の申請は月末までに行ってください。",
    score=1.0,
)


def make_subtask(name: str, answer: str, *, done: bool, sources: list[str] | None = None):
    return Subtask(
        task_name=name,
        tool_results=[],
        reflection_results=[],
        is_completed=done,
        subtask_answer=answer,
        challenge_count=1,
        sources=sources or [],
    )


# ----------------------------------------------------------------------------- split_question


def test_split_issue_example_carries_the_shared_predicate() -> None:
    assert split_question("パスワードの条件と、ロックされた時の解除方法を教えて") == [
        "パスワードの条件を教えて",
        "ロックされた時の解除方法を教えて",
    ]


def test_split_four_parts_with_mixed_separators() -> None:
    parts = split_question(
        "パスワードの有効期限と文字数の条件、ロック解除の方法および通知メールの設定を知りたい"
    )
    assert parts == [
        "パスワードの有効期限を知りたい",
        "文字数の条件を知りたい",
        "ロック解除の方法を知りたい",
        "通知メールの設定を知りたい",
    ]


@pytest.mark.parametrize(
    "question",
    [
        "承認と差戻しの違いを教えてください",
        "申請と承認を比較したい",
        "「承認待ち」と表示されるのはなぜですか",
        "Slackと連携する方法を教えて",
        "エラーE001が出た場合、対処方法を教えて",
        "ログインできないのですが、どうすればいいですか",
    ],
)
def test_split_keeps_comparisons_quotations_and_clauses_whole(question: str) -> None:
    assert split_question(question) == [question]


def test_split_comparison_next_to_another_part() -> None:
    assert split_question("パスワードの条件と、承認と差戻しの違いを教えて") == [
        "パスワードの条件を教えて",
        "承認と差戻しの違いを教えて",
    ]
    assert split_question("承認と差戻しの違いと、申請の期限を教えて") == [
        "承認と差戻しの違いを教えて",
        "申請の期限を教えて",
    ]


def test_split_sentences_and_connectors() -> None:
    assert split_question("パスワードの条件を教えて。また、ロックの解除方法も知りたいです。") == [
        "パスワードの条件を教えて",
        "ロックの解除方法も知りたいです",
    ]


def test_split_contentless_sentence_rejoins_the_previous_one() -> None:
    parts = split_question("XYZにログインできません。どうすればいいですか？")
    assert parts == ["XYZにログインできません。どうすればいいですか？"]


def test_split_について_parts_and_situations() -> None:
    assert split_question("パスワードの条件について、ロックの解除方法について教えて") == [
        "パスワードの条件について教えて",
        "ロックの解除方法について教えて",
    ]
    assert split_question("パスワードを忘れた時と、ロックされた時はどうすればいいですか") == [
        "パスワードを忘れた時はどうすればいいですか",
        "ロックされた時はどうすればいいですか",
    ]


def test_split_numbered_list_takes_the_request_of_the_preface() -> None:
    question = "以下を教えてください。\n1. パスワードの条件\n2. ロックの解除方法\n3) 申請の期限"
    assert split_question(question) == [
        "パスワードの条件を教えてください",
        "ロックの解除方法を教えてください",
        "申請の期限を教えてください",
    ]


def test_split_bulleted_list_without_preface() -> None:
    assert split_question("・パスワードの変更方法\n・通知メールの設定") == [
        "パスワードの変更方法",
        "通知メールの設定",
    ]


def test_split_english_questions() -> None:
    assert split_question("How do I reset my password and what are the password rules?") == [
        "How do I reset my password",
        "what are the password rules?",
    ]
    assert split_question("Tell me the password rules and the unlock procedure.") == [
        "Tell me the password rules",
        "Tell me the unlock procedure.",
    ]
    assert split_question("How do I unlock my account; where are the error codes listed?") == [
        "How do I unlock my account",
        "where are the error codes listed?",
    ]


def test_split_english_comparison_and_noun_pair_stay_whole() -> None:
    question = "What is the difference between approval and rejection?"
    assert split_question(question) == [question]
    assert split_question("Where do I change password and PIN settings?") == [
        "Where do I change password and PIN settings?"
    ]


def test_split_caps_at_max_parts_by_merging_the_tail() -> None:
    parts = split_question("パスワード、ロック、申請、承認、通知、エラーについて教えて")
    assert len(parts) == MAX_PARTS
    assert parts[0] == "パスワードについて教えて"
    assert parts[-1] == "通知について教えて。エラーについて教えて"


def test_split_question_without_content_is_one_part() -> None:
    assert split_question("  教えて  ") == ["教えて"]


def test_split_drops_duplicate_parts() -> None:
    assert split_question("パスワードの条件を教えて。パスワードの条件を教えて。") == [
        "パスワードの条件を教えて"
    ]


@pytest.mark.parametrize("question", ["", "   ", "\n\t "])
def test_split_empty_question_is_an_error(question: str) -> None:
    with pytest.raises(ValueError, match="question is empty"):
        split_question(question)


def test_split_is_deterministic() -> None:
    question = "経費精算や領収書の提出期限を知りたい"
    assert split_question(question) == split_question(question)
    assert split_question(question) == [
        "経費精算の提出期限を知りたい",
        "領収書の提出期限を知りたい",
    ]


# ----------------------------------------------------------------------------- key terms


def test_key_terms_drop_question_words_and_generic_terms() -> None:
    xyz = Vocabulary.build(system_name="XYZ")
    assert key_terms("XYZシステムでロックされた場合の解除方法を教えてください", xyz) == [
        "ロック",
        "解除",
    ]
    assert key_terms("How do I reset my password?") == ["reset", "password"]
    assert key_terms("どうすればいいですか") == []


# ----------------------------------------------------------------------------- reformulate


def test_reformulate_attempt_0_is_the_key_terms() -> None:
    assert reformulate("パスワードの条件と、ロックされた時の解除方法を教えて", 0, "") == (
        "パスワード 条件 ロック 解除"
    )


def test_reformulate_attempt_1_adds_synonyms_and_advice_terms() -> None:
    query = reformulate("ロックされた時の解除方法を教えて", 1, "不足: 通知。")
    words = query.split()
    assert words[:2] == ["ロック", "ロックアウト"]
    assert {"アカウントロック", "ロック解除", "unlock", "通知", "お知らせ", "メール"} <= set(words)
    assert len(words) == len(set(words))


def test_reformulate_attempt_2_uses_only_the_missing_terms() -> None:
    query = reformulate("ロックされた時の解除方法を教えて", 2, "不足: 解除。同義語で検索して")
    assert query.split() == ["解除", *synonyms("解除")]
    assert {"ロック解除", "unlock"} <= set(query.split())
    assert "ロック" not in query.split()  # found already: not searched again


def test_reformulate_attempt_2_without_missing_terms_falls_back_to_attempt_1() -> None:
    assert reformulate("パスワードの条件", 2, "") == reformulate("パスワードの条件", 1, "")
    assert "暗証番号" in reformulate("パスワードの条件", 2, "")


@pytest.mark.parametrize("attempt", [0, 1, 2, 3])
def test_reformulate_is_never_empty(attempt: int) -> None:
    assert reformulate("どうすればいいですか", attempt, "") == "どうすればいいですか"


def test_reformulate_rejects_blank_subtask_and_negative_attempt() -> None:
    with pytest.raises(ValueError, match="subtask is empty"):
        reformulate("  ", 0, "")
    with pytest.raises(ValueError, match="attempt"):
        reformulate("パスワード", -1, "")


def test_missing_from_advice_parses_reflect_format_and_quotes() -> None:
    assert missing_from_advice("不足: ロック, 解除。同義語を加えて") == ["ロック", "解除"]
    assert missing_from_advice("不足：ロック、ＰＷ") == ["ロック", "pw"]
    assert missing_from_advice("「期限」を別の語で探してください") == ["期限"]
    assert missing_from_advice("") == []


def test_synonyms_are_symmetric_within_a_group() -> None:
    assert "暗証番号" in synonyms("パスワード")
    assert "パスワード" in synonyms("暗証番号")
    assert synonyms("存在しない語") == ()


# ----------------------------------------------------------------------------- subtask_answer


def test_subtask_answer_without_results_says_nothing_was_found() -> None:
    text, sources = subtask_answer("申請の期限を教えて", [], tools=["search_manual", "search_faq"])
    assert text == (
        "「申請の期限を教えて」について、資料には記載がありません。"
        "検索した語: 申請、期限（search_manual、search_faq で検索）"
    )
    assert sources == []


def test_subtask_answer_one_result_is_trimmed_to_matching_sentences() -> None:
    text, sources = subtask_answer("パスワードの有効期限を教えて", [PASSWORD])
    assert sources == ["xyz_manual.pdf p.3 「2.1 パスワード」"]
    assert (
        "- パスワードは8文字以上で、英字と数字を含める必要があります。有効期限は90日です。" in text
    )
    assert "メニューから変更" not in text
    assert text.endswith("【xyz_manual.pdf p.3 「2.1 パスワード」】")


def test_subtask_answer_cites_the_page_the_quoted_sentence_is_on() -> None:
    text = "出張の申請は前日までに行います。\nタクシー代の領収書は原本を7年間保管します。"
    spanning = SearchOutput.from_hit(
        Hit(
            Chunk(
                "rules.pdf#2",
                text,
                Source("rules.pdf", page=3, heading="5. 経費"),
                {PAGE_STARTS: f"0:3,{text.index('タクシー')}:4"},
            ),
            2.0,
            "keyword",
        )
    )
    answer, sources = subtask_answer("タクシー代の領収書の保管について", [spanning])
    assert sources == ["rules.pdf p.4 「5. 経費」"]
    assert answer.endswith("【rules.pdf p.4 「5. 経費」】")
    assert spanning.citation("出張の申請は前日までに行います。") == "rules.pdf p.3 「5. 経費」"
    assert spanning.citation() == "rules.pdf p.3–4 「5. 経費」"  # the whole passage


def test_subtask_answer_many_results_prefers_most_terms_and_dedupes() -> None:
    duplicate = PASSWORD.model_copy(update={"content": "別の断片のパスワード", "score": 9.0})
    results = [APPLY, duplicate, LOCK_FAQ, PASSWORD]
    text, sources = subtask_answer("ロックされた時の解除方法を教えて", results)
    assert sources[0] == "faq.csv 行5"
    assert text.count("【") == len(sources)
    assert len(sources) == len(set(sources))
    assert "xyz_manual.pdf p.7 「4. 申請」" not in sources  # no key term in it


def test_subtask_answer_quotes_at_most_three_passages() -> None:
    results = [
        SearchOutput(file_name=f"m{i}.pdf", page=i, content=f"パスワードの規則{i}です。", score=i)
        for i in range(1, 6)
    ]
    text, sources = subtask_answer("パスワードの条件", results)
    assert sources == ["m5.pdf p.5", "m4.pdf p.4", "m3.pdf p.3"]
    assert text.count("\n- ") == 3


def test_subtask_answer_long_passage_is_cut_around_the_term() -> None:
    content = "前置き。" + "あ" * 300 + "ロック解除は管理者が行います。"
    text, _ = subtask_answer("ロックの解除", [SearchOutput(file_name="m.pdf", content=content)])
    quote = text.split("\n- ", 1)[1].split("【", 1)[0]
    assert len(quote) <= MAX_QUOTE_CHARS
    assert quote.startswith("…")
    assert quote.endswith("ロック解除は管理者が行います。")
    assert "前置き" not in quote


def test_subtask_answer_without_matching_passage_says_it_is_not_in_the_documents() -> None:
    text, sources = subtask_answer("ロックの解除方法", [APPLY])
    assert text.startswith("「ロックの解除方法」について、資料には記載がありません。")
    assert "検索した語: ロック、解除" in text
    assert sources == []


def test_subtask_answer_with_some_topic_terms_declines_and_quotes_nothing() -> None:
    text, sources = subtask_answer(
        "パスワードの条件",
        [SearchOutput(file_name="faq.csv", row=2, content="暗証番号は4桁です。")],
    )
    # the asked aspect (条件) is named nowhere: declined; the passage is pointed to, never
    # quoted (issue 29: a part is answered or declined, never both)
    assert "資料には記載がありません" in text
    assert "「条件」についての記述は見つかりませんでした" in text
    assert "「パスワード」という語は次の箇所に出てきます" in text
    assert "faq.csv 行2" in text
    assert "【" not in text and "暗証番号は4桁" not in text
    assert "資料によると" not in text
    assert sources == []


def test_subtask_answer_uses_synonyms() -> None:
    passage = SearchOutput(file_name="faq.csv", row=2, content="暗証番号の規則: 4桁の数字です。")
    text, sources = subtask_answer("パスワードの条件", [passage])
    assert text.startswith("資料によると、暗証番号の規則: 4桁の数字です。")
    assert sources == ["faq.csv 行2"]


# ----------------------------------------------------------------------------- reflect


def test_reflect_accepts_when_all_terms_are_covered() -> None:
    result = reflect("ロックされた時の解除方法を教えて", [LOCK_FAQ], 0)
    assert result == ReflectionResult(advice="", is_completed=True)


def test_reflect_rejects_with_parsable_advice() -> None:
    result = reflect("申請の期限を教えて", [PASSWORD], 0)
    assert not result.is_completed
    assert result.advice.startswith("不足: 申請。")
    assert missing_from_advice(result.advice) == ["申請"]
    assert "申請" in reformulate("申請の期限を教えて", 2, result.advice).split()


def test_reflect_two_thirds_rule_at_the_boundary() -> None:
    # 3 terms (パスワード, ロック, 通知): 2 covered is enough, 1 is not.
    subtask = "パスワードとロックと通知"
    two = SearchOutput(file_name="a.pdf", content="パスワードを間違えるとロックされます。")
    one = SearchOutput(file_name="b.pdf", content="パスワードは8文字以上です。")
    assert reflect(subtask, [two], 0).is_completed
    rejected = reflect(subtask, [one], 0)
    assert not rejected.is_completed
    assert missing_from_advice(rejected.advice) == ["ロック", "通知"]


def test_reflect_two_terms_need_both() -> None:
    assert not reflect("パスワードの有効期限", [APPLY], 0).is_completed
    assert reflect("パスワードの有効期限", [PASSWORD], 0).is_completed


def test_reflect_without_results_and_advice_by_attempt() -> None:
    first = reflect("申請の期限を教えて", [], 0)
    last = reflect("申請の期限を教えて", [], 2)
    assert not first.is_completed and not last.is_completed
    assert first.advice.startswith("検索結果がありませんでした。不足: 申請, 期限。")
    assert "同義語" in first.advice
    assert "記載がない可能性" in last.advice


def test_reflect_rejects_negative_attempt() -> None:
    with pytest.raises(ValueError, match="attempt"):
        reflect("申請の期限", [], -1)


# ----------------------------------------------------------------------------- final_answer


def test_final_answer_lists_sections_sources_and_missing_parts() -> None:
    answer, sources = subtask_answer("パスワードの有効期限を教えて", [PASSWORD])
    missing, _ = subtask_answer("申請の期限を教えて", [])
    text = final_answer(
        "パスワードの有効期限と申請の期限を教えて",
        [
            make_subtask("パスワードの有効期限を教えて", answer, done=True, sources=sources),
            make_subtask("申請の期限を教えて", missing, done=False),
        ],
    )
    lines = text.splitlines()
    assert lines[0] == OFFLINE_LABEL
    assert "### 1. パスワードの有効期限" in lines
    assert "### 2. 申請の期限" in lines
    assert lines.index("### 出典") < lines.index("### 見つからなかった点")
    assert "1. xyz_manual.pdf p.3 「2.1 パスワード」" in lines
    assert text.rstrip().endswith("- 申請の期限")


def test_final_answer_collects_distinct_citations_in_order() -> None:
    text = final_answer(
        "質問",
        [
            make_subtask("A", "a【faq.csv 行1】", done=True, sources=["m.pdf p.2"]),
            make_subtask("B", "b【m.pdf p.2】【faq.csv 行3】", done=True),
        ],
    )
    tail = text.split("### 出典", 1)[1].split()
    assert tail == ["1.", "m.pdf", "p.2", "2.", "faq.csv", "行1", "3.", "faq.csv", "行3"]
    assert "見つからなかった点" not in text


def test_final_answer_with_no_sources_and_blank_question() -> None:
    text = final_answer("質問", [])
    assert "該当する資料は見つかりませんでした。" in text
    with pytest.raises(ValueError, match="question is empty"):
        final_answer(" ", [])


def test_four_part_enumeration_with_koto_shikata_and_soreto_splits_into_four() -> None:
    question = (
        "パスワードのルール、アカウントがロックされたときの解除のしかた、"
        "通知メールが届かないときに確認すること、それとエラーE1023の意味をまとめて教えてください"
    )
    assert split_question(question) == [
        "パスワードのルールを教えてください",
        "アカウントがロックされたときの解除のしかたを教えてください",
        "通知メールが届かないときに確認することを教えてください",
        "エラーE1023の意味をまとめて教えてください",
    ]


def test_the_to_inside_koto_and_toki_is_not_a_separator() -> None:
    assert split_question("ロックされたときの対処を教えて") == ["ロックされたときの対処を教えて"]
    assert split_question(
        "二要素認証の設定のしかた、スマホをなくしたときの対処、それと二要素認証が入ったのはどのバージョンから？"
    ) == [
        "二要素認証の設定のしかた",
        "スマホをなくしたときの対処",
        "二要素認証が入ったのはどのバージョンから？",
    ]


def test_words_about_the_answer_form_are_not_key_terms() -> None:
    assert key_terms("エラーE1023の意味をまとめて教えてください") == ["エラー", "e1023"]


def test_an_faq_row_is_quoted_with_its_answer() -> None:
    faq = SearchOutput(
        file_name="faq.csv",
        content="Q: エラーE1023が表示されます。\nA: アカウントがロックされています。"
        "30分待つと解除されます。",
        row=46,
        heading="エラー",
    )
    answer, sources = subtask_answer("エラーE1023の意味を教えて", [faq])
    assert "30分待つと解除されます" in answer
    assert sources == ["faq.csv 行46 「エラー」"]


def test_a_section_is_quoted_from_its_start_with_its_lines_kept() -> None:
    section = SearchOutput(
        file_name="manual.pdf",
        content="2.2 パスワードの条件\n次の条件をすべて満たします。\n・長さは12文字以上です。\n"
        "・3種類以上の文字を使います。\n" + "補足の説明です。" * 60,
        page=4,
        heading="2. ログイン > 2.2 パスワードの条件",
    )
    answer, _ = subtask_answer("パスワードの条件を教えて", [section])
    assert "・長さは12文字以上です。  \n  ・3種類以上の文字を使います。" in answer
    assert "…【manual.pdf p.4" in answer  # cut at a sentence end within the limit
    quote = answer.split("- ", 1)[1].split("【", 1)[0]
    assert len(quote.replace("  \n  ", "")) <= 321


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        # issue 29: the splitter cut inside brackets
        ("交通費（電車、バス）の精算方法を教えて", ["交通費（電車、バス）の精算方法を教えて"]),
        ("「申請、承認」の流れを教えて", ["「申請、承認」の流れを教えて"]),
        # an end mark inside a quoted button name ends no sentence
        (
            "「保存!」ボタンの場所と、期限を教えて",
            ["「保存!」ボタンの場所を教えて", "期限を教えて"],
        ),
        (
            'What does "save, then submit" mean and how do I approve?',
            ['What does "save, then submit" mean', "how do I approve?"],
        ),
        # an unclosed bracket encloses nothing
        (
            "交通費（電車、バスの精算方法を教えて",
            ["交通費（電車を教えて", "バスの精算方法を教えて"],
        ),
    ],
)
def test_split_never_cuts_inside_brackets_or_quotes(question: str, parts: list[str]) -> None:
    assert split_question(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "ちょっと放置してたら勝手にログアウトされた。何分で切れるの？",
        "溜まった承認を一気に片付ける方法は？何件まで？",
        "The session timed out. After how many minutes?",
    ],
)
def test_a_sentence_asking_only_for_an_amount_stays_with_its_subject(question: str) -> None:
    assert len(split_question(question)) == 1


def test_an_adverbial_while_clause_is_not_a_part() -> None:
    assert split_question("長い休みの間、承認を誰かに任せられる？最長何日？") == [
        "長い休みの間、承認を誰かに任せられる。最長何日？"
    ]


def test_a_sentence_running_over_a_page_break_is_quoted_whole_with_both_pages() -> None:
    """The quote starts at the sentence start on p.3, not at the page break, and cites
    both pages it is on."""
    page3 = "3.4 交通費\n交通費は利用日から1か月以内に申請します。定期券の区間と重なる部分は、"
    page4 = "交通費として申請できません。"
    passage = SearchOutput(
        file_name="rules.pdf",
        page=3,
        heading="3.4 交通費",
        content=page3 + page4,
        page_starts=[(0, 3), (len(page3), 4)],
    )
    answer, sources = subtask_answer("定期券の区間と重なる交通費は申請できますか", [passage])
    assert "定期券の区間と重なる部分は、交通費として申請できません。" in answer
    assert sources == ["rules.pdf p.3–4 「3.4 交通費」"]


def test_the_situation_of_the_first_listed_noun_is_carried_to_the_others() -> None:
    assert split_question("取引先との契約を解除する場合の社内手続きと届出の期限は？") == [
        "取引先との契約を解除する場合の社内手続き",
        "取引先との契約を解除する場合の届出の期限は？",
    ]
    # a part naming its own situation keeps it
    assert split_question("パスワードの条件と、ロックされた時の解除方法を教えて") == [
        "パスワードの条件を教えて",
        "ロックされた時の解除方法を教えて",
    ]


def test_a_sentence_opening_with_soreto_adds_a_question() -> None:
    """「それと、」「それから、」 add a question; 「それは」 refers back to the one before."""
    assert split_question(
        "添付できる形式を教えてください。それと、ウイルスチェックはありますか？"
    ) == [
        "添付できる形式を教えてください",
        "ウイルスチェックはありますか？",
    ]
    assert split_question("申請が差し戻されました。それは誰が行いましたか？") == [
        "申請が差し戻されました。それは誰が行いましたか？"
    ]


def test_a_question_conditional_on_the_one_before_is_a_follow_up() -> None:
    assert split_question("まとめて差戻しできますか？できるなら一度に何件まで？") == [
        "まとめて差戻しできますか。できるなら一度に何件まで？"
    ]


def test_a_question_in_generic_words_only_asks_about_the_one_before() -> None:
    assert split_question("代理承認者を設定したいです。最長何日まで設定できますか？") == [
        "代理承認者を設定したいです。最長何日まで設定できますか？"
    ]
    assert split_question("代理承認者を登録したい。設定メニューはどこ？") == [
        "代理承認者を登録したい。設定メニューはどこ？"
    ]


def test_listed_bare_nouns_share_the_head_noun_of_the_next_part() -> None:
    assert split_question("交通費と宿泊費の上限を教えて") == [
        "交通費の上限を教えて",
        "宿泊費の上限を教えて",
    ]
    assert split_question("日当や宿泊費の上限は？") == ["日当の上限は？", "宿泊費の上限は？"]
    # a part with its own clause keeps its words
    assert split_question("パスワードの条件と、ロックされた時の解除方法を教えて") == [
        "パスワードの条件を教えて",
        "ロックされた時の解除方法を教えて",
    ]
    # the head of the next part that has one, not only the last part's: a bare system name
    # is no question of its own (it was answered with whatever passage named it)
    parts = split_question(
        "Procura とIDプロバイダーのシングルサインオン（SAML）およびSCIMによるユーザー自動連携の"
        "設定手順を調べてまとめてください。"
    )
    assert parts[0] == "Procuraのシングルサインオン（SAML）"
    assert "Procura" not in parts


def test_a_thousands_separator_is_no_list_comma() -> None:
    assert split_question("税込8,000円のマウスを買いたいんだけど、申請はいる？") == [
        "税込8,000円のマウスを買いたいんだけど、申請はいる？"
    ]
    assert split_question("1,000円と2,000円の違いは？") == ["1,000円と2,000円の違いは？"]


def test_a_listed_part_referring_to_the_one_before_stays_with_it() -> None:
    """「それを出力する手順」 is about the log: asked alone, it would be answered by any
    passage on exporting something."""
    assert split_question("ログイン履歴の保管期間と、それを出力する手順を教えて") == [
        "ログイン履歴の保管期間と、それを出力する手順を教えて"
    ]


def test_a_time_before_a_comma_or_a_wish_before_the_question_is_no_part_of_its_own() -> None:
    """「来週、」 says when (not a listed item); 「…を登録しておきたいです。」 says what the
    user wants to do before the question that follows it; 「氏名や会社名を残したい」 lists
    the objects of one verb."""
    assert split_question(
        "来週、取引先の方が2名来ます。事前に来訪の登録をしておきたいです。"
        "どのメニューから入れればいいですか？"
    ) == [
        "来週、取引先の方が2名来ます。事前に来訪の登録をしておきたいです。"
        "どのメニューから入れればいいですか？"
    ]
    assert split_question(
        "来客の氏名や会社名を2年残しておきたいんですが、保存期間は延ばせますか？"
    ) == ["来客の氏名や会社名を2年残しておきたいんですが、保存期間は延ばせますか？"]
    assert split_question("パスワードの条件、ロックの解除方法を教えて") == [
        "パスワードの条件を教えて",
        "ロックの解除方法を教えて",
    ]
    assert split_question("交通費や宿泊費を教えて") == ["交通費を教えて", "宿泊費を教えて"]
    # a topic said first is what each listed part asks about, not a part of its own
    assert split_question("減損の兆候がある資産について、減損の手順と会計処理を教えて") == [
        "減損の兆候がある資産について、減損の手順を教えて",
        "減損の兆候がある資産について、会計処理を教えて",
    ]
    assert split_question("経費精算について、交通費について教えて") == [
        "経費精算について教えて",
        "交通費について教えて",
    ]
    # 「AとBの連携」 asks how the two work together: one relation, not two parts
    assert split_question("タクシーの手配とGuestGateの連携方法を教えて") == [
        "タクシーの手配とGuestGateの連携方法を教えて"
    ]
    # what the verb after the comma is about, not a listed item
    assert split_question("間違えて消しちゃった資産、ゴミ箱から戻せますよね？") == [
        "間違えて消しちゃった資産、ゴミ箱から戻せますよね？"
    ]
    assert split_question("パスワードの条件、ロックの解除方法は？") == [
        "パスワードの条件",
        "ロックの解除方法は？",
    ]


def test_an_english_word_matches_the_katakana_a_manual_writes_it_in() -> None:
    assert "プリンター" in synonyms("printer")
    assert "プラン" in synonyms("plan")


def test_an_english_question_is_answered_in_english_and_a_japanese_one_in_japanese() -> None:
    """The product's own words follow the question's language; quotes stay as written."""
    rule = SearchOutput(
        file_name="guide.pdf",
        page=3,
        heading="2.1 パスワード",
        content="パスワードの文字数は8文字以上です。",
    )
    question = "What is the password length? Can I use emoji in it?"
    answered, sources = subtask_answer("What is the password length?", [rule])
    declined, _ = subtask_answer("Can I use emoji in it?", [rule])
    assert answered.startswith("According to the documents:") and sources
    assert "the documents do not say" in declined and "記載" not in declined
    parts = [
        make_subtask("What is the password length?", answered, done=True, sources=sources),
        make_subtask("Can I use emoji in it?", declined, done=False),
    ]
    text = final_answer(question, parts)
    assert "**Question**:" in text and "### Sources" in text and "### Not found" in text
    assert "パスワードの文字数は8文字以上です。" in text  # the quote as the document writes it
    assert not any(word in text for word in ("ご質問", "出典", "見つからなかった点", "オフライン"))
    japanese = final_answer("パスワードの長さは？", [parts[0]])
    assert "**ご質問**:" in japanese and "### 出典" in japanese


def test_the_frame_of_an_english_question_is_no_key_term() -> None:
    """ "How long", "what time", "too early", "anyone": how the question asks, not what."""
    assert key_terms("How long does the reset link stay valid?") == ["reset", "link", "valid"]
    assert key_terms("Does anyone get alerted, and at what time?") == ["alerted"]
    assert key_terms("Is it too early to create the booking?") == ["create", "booking"]
