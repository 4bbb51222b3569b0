"""Offline answers over every attempt, the most specific term, fact-bearing quotes."""

from __future__ import annotations

from keiri_agent.agents.helpdesk.models import SearchOutput, ToolResult
from keiri_agent.agents.helpdesk.offline import reflect, subtask_answer
from keiri_agent.agents.helpdesk.offline.quotes import lead_sentence, trim
from keiri_agent.agents.helpdesk.offline.specificity import most_specific, units
from keiri_agent.agents.helpdesk.offline.terms import PreparedText
from keiri_agent.agents.helpdesk.offline_reasoner import OfflineReasoner
from keiri_agent.agents.helpdesk.reasoner import SubtaskStep
from keiri_agent.agents.helpdesk.state import subtask_step

GOOD = SearchOutput(
    file_name="manual.pdf",
    page=4,
    heading="5.2 リモート接続",
    content="社外から接続するときは、VPNクライアントとワンタイムコードが必要です。",
    score=2.0,
)
OTHER = SearchOutput(
    file_name="manual.pdf",
    page=9,
    heading="8. 帳票",
    content="帳票は月次で出力されます。",
    score=1.0,
)


def _result(*outputs: SearchOutput) -> ToolResult:
    return ToolResult(tool_name="search_manual", args="{}", results=list(outputs))


def test_offline_answer_keeps_a_passage_found_in_an_earlier_attempt() -> None:
    reasoner = OfflineReasoner([])
    step = SubtaskStep(
        question="社外から接続するときにVPNは必要ですか",
        plan=[],
        subtask="社外から接続するときにVPNは必要ですか",
        attempt=2,
        messages=[],
        results=[_result(OTHER)],
        earlier_results=[_result(GOOD)],
    )
    answer = reasoner.answer_subtask(step)
    assert "VPNクライアントとワンタイムコード" in answer.answer
    assert answer.sources == ["manual.pdf p.4 「5.2 リモート接続」"]
    assert reasoner.reflect(step).result.is_completed


def test_subtask_step_carries_the_earlier_attempts_results() -> None:
    state = {
        "question": "q",
        "subtask": "q",
        "challenge_count": 2,
        "tool_results": [[_result(GOOD)], [], [_result(OTHER)]],
    }
    step = subtask_step(state, searched=True)  # type: ignore[arg-type]
    assert [r.results for r in step.results] == [[OTHER]]
    assert [r.results for r in step.earlier_results] == [[GOOD]]
    assert subtask_step(state).earlier_results == []  # type: ignore[arg-type]


# ------------------------------------------------------------- the most specific noun

LEAVE = SearchOutput(
    file_name="manual.pdf",
    page=3,
    heading="2. 申請の基本",
    content="申請は申請画面から行います。育児中の社員は時短勤務を申請できます。",
    score=2.0,
)


def test_part_whose_compound_noun_no_passage_names_is_not_in_the_documents() -> None:
    text, sources = subtask_answer("育児休業の申請はどうやって出せばいいですか", [LEAVE])
    assert "資料には記載がありません" in text
    assert "「育児休業」についての記述は見つかりませんでした" in text
    assert "資料によると" not in text
    assert sources == []  # pointed to, never quoted as if it answered
    assert "manual.pdf p.3 「2. 申請の基本」" in text
    reflection = reflect("育児休業の申請はどうやって出せばいいですか", [LEAVE], 0)
    assert not reflection.is_completed
    assert "育児休業" in reflection.advice


def test_part_whose_compound_noun_is_named_is_answered() -> None:
    passage = LEAVE.model_copy(update={"content": "育児休業は申請画面から申請します。"})
    text, _ = subtask_answer("育児休業の申請はどうやって出せばいいですか", [passage])
    assert text.startswith("資料によると")
    assert "記載がありません" not in text


def test_most_specific_units_are_nouns_not_verbs_numbers_or_relational_words() -> None:
    assert units("育児休業の申請", ["育児", "休業", "申請"]) == [("育児", "休業"), ("申請",)]
    assert most_specific("育児休業の申請", ["育児", "休業", "申請"]) == [("育児", "休業")]
    # 「以外」 relates, it is no part of a compound; verbs and numbers are never the topic
    assert units("トークン以外に何が要る", ["トークン", "以外", "要る"]) == [
        ("トークン",),
        ("要る",),
    ]
    assert most_specific("30万円をずっと任せる", ["300000", "円", "ずっと", "任せる"]) == []


def test_general_synonyms_for_stopping_and_seals() -> None:
    assert PreparedText.of("夜間はサーバーを停止します。").has("止まる")
    assert PreparedText.of("課長の押印が必要です。").has("判子")
    assert PreparedText.of("テレワークのときは").has("在宅勤務")


def test_general_synonyms_for_reminders_and_leaving_the_company() -> None:
    assert PreparedText.of("3日後にリマインドが送られます。").has("催促")
    assert PreparedText.of("退職日の前日までに返却してください。").has("辞める")


# ------------------------------------------------------------------------ quotes


def test_lead_sentence_prefers_a_statement_to_a_heading_line() -> None:
    quote = "3.2 倉庫の入館カード\n入館カードは総務課の窓口で受け取ります。"
    assert lead_sentence([quote], ["入館", "カード"]) == "入館カードは総務課の窓口で受け取ります。"


def test_lead_sentence_prefers_the_faq_answer_to_its_question() -> None:
    quote = (
        "Q: 社用車の予約はいつまでにすればよいですか。\n"
        "A: 利用日の2営業日前までに社用車を予約してください。"
    )
    lead = lead_sentence([quote], ["社用車", "予約"])
    assert lead == "利用日の2営業日前までに社用車を予約してください。"


def test_trim_prefers_the_sentence_that_states_the_fact() -> None:
    general = (
        "社用車の予約は、" + "部署の管理担当者と相談のうえで計画的に行い、" * 7 + "ご協力ください。"
    )
    fact = "社用車の予約は、利用日の2営業日前までに「車両予約」画面で行います。"
    quote = trim(general + fact, ["社用車", "予約"])
    assert "2営業日前まで" in quote
    assert "「車両予約」" in quote


def test_trim_adds_the_next_sentence_when_it_states_the_fact() -> None:
    content = (
        "会議室の利用料について。社用車の予約の期限は次のとおりです。利用日の2営業日前までです。"
    )
    quote = trim(content, ["社用車", "予約"])
    assert quote == "社用車の予約の期限は次のとおりです。利用日の2営業日前までです。"


def test_long_section_quote_keeps_its_later_sentence_with_the_key_terms() -> None:
    intro = "この章では車両の管理について説明します。" * 16
    content = intro + "\n社用車の予約は、利用日の2営業日前までに行います。"
    quote = trim(content, ["社用車", "予約"], section=True)
    assert quote.startswith("この章では")
    assert quote.endswith("社用車の予約は、利用日の2営業日前までに行います。")
    assert len(quote) <= 330


def test_a_long_sentence_is_never_cut_inside_a_word() -> None:
    sentence = "社用車の予約は" + "あ" * 150 + "、" + "お振込手数料" * 10 + "です"
    quote = trim(sentence, ["社用車", "予約"])
    assert quote.endswith("…")
    assert quote[-2] in "あ、"  # cut at the clause boundary, not inside 「振込」
    head = "社用車の予約" + "ルール手数料" * 60
    quote = trim(head, ["社用車"], section=True)
    assert quote.endswith(("ルール…", "手数料…"))  # at a word boundary, never 「…手数」


def test_a_name_is_the_most_specific_term() -> None:
    question = "Can I pay with PayPay and have the payments imported automatically?"
    terms = ["pay", "paypay", "payments", "imported", "automatically"]
    assert most_specific(question, terms) == [("paypay",)]
    assert most_specific("How do I reset the VPN when abroad?", ["reset", "vpn", "abroad"]) == [
        ("vpn",)
    ]
    # after an article or possessive, English words apart name one thing (「VPNトークン」)
    assert most_specific(
        "How do I reset my VPN token when abroad?", ["reset", "vpn", "token", "abroad"]
    ) == [("vpn", "token")]
    assert most_specific(
        "Suicaの乗車履歴から交通費を作れますか", ["suica", "乗車", "履歴", "交通", "費", "作る"]
    ) == [("suica",)]
    card = SearchOutput(
        file_name="m.pdf", page=2, content="Card payments are imported automatically every night."
    )
    text, _ = subtask_answer(question, [card])
    assert "the documents do not say" in text
    assert 'nothing about "paypay" was found' in text


def test_a_noun_of_how_many_or_when_is_not_what_the_question_is_about() -> None:
    """「全員」「半年分」「途中」 (Sudachi's 副詞可能 nouns) say how many or when: the
    question is about 「予約」, and a passage that never says 「全員」 may answer it."""
    assert most_specific(
        "1件の予約にまとめて全員入れられますか", ["1", "予約", "全員", "入れる"]
    ) == [("予約",)]
    found = most_specific("半年分の繰り返し予約", ["半年", "分", "繰り返し", "予約"])
    assert found and ("半年", "分") not in found
    # nor a part of a compound: 「今月残業」 is this month's overtime, not a kind of overtime
    assert ("今月", "残業") not in units("今月残業が40時間いきそう", ["今月", "残業", "40", "時間"])
    assert most_specific("毎月自動で実行できますか", ["毎月", "自動", "実行"]) == [("自動",)]
