"""HelpDesk end to end over the real sample knowledge base (keyword index, Qdrant, stub LLM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk import ReflectionResult, SubtaskPlan
from keiri_agent.agents.helpdesk.desk import (
    EXAMPLE_QUESTION,
    SAMPLE_DOCUMENTS,
    SAMPLE_FAQ,
    HelpDesk,
)
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.llm.testing import StubOpenAIServer, StubReply, StubToolCall


@pytest.fixture(scope="module")
def offline_desk(tmp_path_factory: pytest.TempPathFactory) -> HelpDesk:
    """The sample knowledge base indexed once (keyword only) for this module."""
    home = tmp_path_factory.mktemp("helpdesk_home")
    desk = HelpDesk(Settings(provider="offline", home=home))
    reports = desk.index_sample()
    assert all(report.ok for report in reports.values())
    return desk


def test_sample_index_lists_every_document(offline_desk: HelpDesk) -> None:
    kb = offline_desk.knowledge_base
    assert kb.collections() == ["manual", "qa"]
    assert sorted(kb.documents("manual")) == [
        "xyz_manual.pdf",
        "xyz_notifications.md",
        "xyz_release_notes.docx",
    ]
    assert kb.documents("qa")["xyz_faq.csv"]["chunks"] >= 40
    assert kb.vector("qa") is None  # offline: no embeddings, no vector index


def test_offline_example_question_is_answered_per_part_with_sources(
    offline_desk: HelpDesk,
) -> None:
    result = offline_desk.ask(EXAMPLE_QUESTION)

    assert result.offline is True
    assert result.plan.subtasks == ["パスワードの条件を教えて", "ロックされた時の解除方法を教えて"]
    assert [s.is_completed for s in result.subtasks] == [True, True]
    assert result.unanswered == []
    password, unlock = (subtask.subtask_answer for subtask in result.subtasks)
    assert "12文字以上" in password
    assert "ロック解除" in unlock or "解除" in unlock
    # the manual's unlocking section is cited, with its page and heading
    assert any("2.5 アカウントロックの解除" in source for source in result.sources)
    assert "xyz_manual.pdf p." in result.answer and "### 出典" in result.answer
    # the FAQ tool searched the keyword index and said so
    qa_results = [
        result
        for attempt in result.subtasks[0].tool_results
        for result in attempt
        if result.tool_name == "search_xyz_qa"
    ]
    assert qa_results and all(o.retriever == "keyword" for r in qa_results for o in r.results)


def test_question_outside_the_knowledge_base_says_what_was_not_found(
    offline_desk: HelpDesk,
) -> None:
    result = offline_desk.ask("給与明細の再発行方法を教えて")
    assert result.unanswered == ["給与明細の再発行方法を教えて"]
    assert result.subtasks[0].challenge_count == 3  # retried up to the cap
    assert "見つからなかった点" in result.answer


def test_empty_knowledge_base_is_a_clear_error(keiri_home: Path) -> None:
    desk = HelpDesk(Settings(provider="offline"))
    with pytest.raises(UserInputError) as caught:
        desk.ask(EXAMPLE_QUESTION)
    assert caught.value.code == "EMPTY_KNOWLEDGE_BASE"
    assert "helpdesk index --sample" in (caught.value.hint or "")
    with pytest.raises(UserInputError, match="登録する文書が指定されていません"):
        desk.index([])


def test_manual_only_knowledge_base_still_answers(keiri_home: Path) -> None:
    desk = HelpDesk(Settings(provider="offline"))
    desk.index([SAMPLE_DOCUMENTS / "xyz_notifications.md"])
    result = desk.ask("メール通知が届かない時の確認点は？")
    assert result.sources and result.sources[0].startswith("xyz_notifications.md")


def test_online_desk_indexes_faq_vectors_and_answers_through_the_stub_server(
    keiri_home: Path,
) -> None:
    """Embeddings, chat and Qdrant for real: the FAQ tool searches keyword + vectors
    (hybrid); manuals are not embedded when ``helpdesk_embed_manuals`` is off."""
    replies: list[StubReply] = [
        SubtaskPlan(subtasks=["アカウントロックの解除方法"]),
        StubToolCall("search_xyz_qa", {"query": "アカウントがロックされてしまいました。"}),
        "30分待つか、メールで解除します [1]。",
        ReflectionResult(advice="", is_completed=True),
        "30分待つか、ログイン画面からメールで解除できます [1]。",
    ]
    with StubOpenAIServer(replies) as server:
        settings = Settings(
            provider="openai-compatible",
            openai_api_base=server.base_url,
            model="stub-model",
            max_retries=0,
            helpdesk_embed_manuals=False,
        )
        desk = HelpDesk(settings)
        desk.index([SAMPLE_DOCUMENTS / "xyz_notifications.md"], qa=[SAMPLE_FAQ])
        assert desk.knowledge_base.vector("qa") is not None
        assert desk.knowledge_base.vector("manual") is None  # manuals are not embedded
        result = desk.ask("ロックされたらどうすればいい？")
        paths = [request.path for request in server.requests]

    assert "/v1/embeddings" in paths and paths.count("/v1/chat/completions") == 5
    (attempt,) = result.subtasks[0].tool_results
    (faq,) = attempt
    assert faq.tool_name == "search_xyz_qa"
    assert faq.results and all(output.retriever == "hybrid" for output in faq.results)
    # stub embeddings are hashes of the text: the FAQ row whose question is the query wins
    assert faq.results[0].file_name == "xyz_faq.csv"
    assert "アカウントがロックされてしまいました" in faq.results[0].content
    assert "xyz_faq.csv 行" in result.answer


def test_faq_indexed_offline_is_searched_by_keyword_until_reindexed_with_embeddings(
    keiri_home: Path,
) -> None:
    HelpDesk(Settings(provider="offline")).index(qa=[SAMPLE_FAQ])
    with StubOpenAIServer([]) as server:
        settings = Settings(
            provider="openai-compatible",
            openai_api_base=server.base_url,
            model="stub-model",
            max_retries=0,
        )
        desk = HelpDesk(settings)
        qa_tool = desk.tools()[1]
        # the FAQ has no vectors yet: keyword search, and the tool says so
        assert qa_tool.searcher.retriever == "keyword" and qa_tool.note
        report = desk.index(qa=[SAMPLE_FAQ])["qa"]
        assert report.updated == ["xyz_faq.csv"]  # not "unchanged": its vectors were missing
        assert desk.tools()[1].searcher.retriever == "hybrid"
        assert any(r.path == "/v1/embeddings" for r in server.requests)
