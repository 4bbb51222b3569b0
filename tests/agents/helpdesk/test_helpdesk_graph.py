"""The whole HelpDesk graph with a scripted chat model: answers, retries, citations, events."""

from __future__ import annotations

import json
from typing import Any

from helpdesk_support import FixedSearcher
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from keiri_agent.agents.helpdesk import (
    NO_TOOL_CALL_ADVICE,
    HelpDeskAgent,
    ReflectionResult,
    SubtaskPlan,
    default_tools,
)
from keiri_agent.agents.helpdesk.agent import UNGROUNDED_LABEL
from keiri_agent.agents.helpdesk.claims import UNSUPPORTED_MARK
from keiri_agent.config import Settings
from keiri_agent.events import Event
from keiri_agent.llm.testing import ScriptedChatModel
from keiri_agent.search.models import Chunk, Source

MANUAL = [
    Chunk(
        "m#1",
        "パスワードの条件: 8文字以上で、英字と数字を含めてください。",
        Source("manual.pdf", 3, "2.1 パスワード"),
    ),
    Chunk(
        "m#2",
        "5回続けてログインに失敗するとアカウントがロックされます。",
        Source("manual.pdf", 4, "2.2 ロック"),
    ),
]
FAQ = [
    Chunk(
        "q#1",
        "Q: ロックを解除するには? A: 管理者に解除を依頼してください。",
        Source("faq.csv", row=2),
    ),
]


def tools() -> list[Any]:
    return default_tools(FixedSearcher(MANUAL), FixedSearcher(FAQ))


def call(name: str, query: str, call_id: str = "c1") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": {"query": query}, "id": call_id}]
    )


def agent_with(replies: list[Any]) -> tuple[HelpDeskAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies)
    return HelpDeskAgent(Settings(), tools=tools(), chat_model=model), model


def test_one_subtask_answered_with_citations_and_sources_section() -> None:
    agent, model = agent_with(
        [
            SubtaskPlan(subtasks=["パスワードの条件"]),
            AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "search_xyz_manual",
                        "args": {"query": "パスワード ロック"},
                        "id": "a",
                    },
                ],
            ),
            "8文字以上で英字と数字が必要です [1]。",
            ReflectionResult(advice="", is_completed=True),
            "パスワードは8文字以上です [1]。",
        ]
    )
    result = agent.run_agent("パスワードの条件は?")

    assert model.remaining == 0
    assert result.plan.subtasks == ["パスワードの条件"]
    (subtask,) = result.subtasks
    assert subtask.is_completed and subtask.challenge_count == 1
    assert subtask.sources == ["manual.pdf p.3 「2.1 パスワード」"]
    assert result.sources == ["manual.pdf p.3 「2.1 パスワード」"]
    assert result.unanswered == []
    assert "## 出典\n[1] manual.pdf p.3 「2.1 パスワード」" in result.answer
    assert "見つからなかった点" not in result.answer
    # the answer prompt showed numbered passages with their citations
    answer_prompt = model.prompts[2]
    assert "[1] manual.pdf p.3 「2.1 パスワード」" in answer_prompt
    assert "[2] manual.pdf p.4 「2.2 ロック」" in answer_prompt
    assert result.offline is False


def test_cited_numbers_are_renumbered_to_the_sources_used() -> None:
    agent, _ = agent_with(
        [
            SubtaskPlan(subtasks=["ロック"]),
            call("search_xyz_manual", "パスワード ロック"),
            "ロックされます [2]。存在しない番号 [7]。",
            ReflectionResult(advice="", is_completed=True),
            "ロックされます [1]。",
        ]
    )
    result = agent.run_agent("ロックの条件")
    (subtask,) = result.subtasks
    assert subtask.sources == ["manual.pdf p.4 「2.2 ロック」"]
    # a sentence citing a number no passage has is not confirmed by any: marked
    assert subtask.subtask_answer == f"ロックされます [1]。存在しない番号{UNSUPPORTED_MARK}。"


def test_subtask_retried_until_the_cap_is_listed_as_unanswered() -> None:
    replies: list[Any] = [SubtaskPlan(subtasks=["請求書の再発行"])]
    for attempt in range(3):
        replies += [
            call("search_xyz_qa", f"請求書{attempt}", f"c{attempt}"),
            "資料には見つかりませんでした。",
            ReflectionResult(advice=f"別の語で検索 {attempt}", is_completed=False),
        ]
    replies.append("請求書の再発行については分かりませんでした。")
    agent, model = agent_with(replies)

    result = agent.run_agent("請求書を再発行したい")

    assert model.remaining == 0
    (subtask,) = result.subtasks
    assert subtask.is_completed is False
    assert subtask.challenge_count == 3
    assert len(subtask.tool_results) == 3 and len(subtask.reflection_results) == 3
    assert "3回検索しましたが十分な回答が見つかりませんでした" in subtask.subtask_answer
    assert result.unanswered == ["請求書の再発行"]
    assert "## 見つからなかった点\n- 「請求書の再発行」" in result.answer


def test_retry_history_drops_tool_calls_and_tool_results() -> None:
    agent, model = agent_with(
        [
            SubtaskPlan(subtasks=["ロック解除"]),
            call("search_xyz_manual", "ロック", "first"),
            "ロックの条件しか分かりません [1]。",
            ReflectionResult(advice="FAQで「解除」を検索してください", is_completed=False),
            call("search_xyz_qa", "解除", "second"),
            "管理者に依頼します [1]。",
            ReflectionResult(advice="", is_completed=True),
            "管理者に解除を依頼してください [1]。",
        ]
    )
    result = agent.run_agent("ロックを解除したい")

    first_answer_call, retry_call = model.calls[2], model.calls[4]
    assert any(isinstance(m, ToolMessage) for m in first_answer_call)  # the filter has work to do
    assert not any(isinstance(m, ToolMessage) for m in retry_call)
    assert not any(isinstance(m, AIMessage) and m.tool_calls for m in retry_call)
    assert any(
        isinstance(m, AIMessage) and "ロックの条件しか分かりません" in m.text for m in retry_call
    )
    assert isinstance(retry_call[-1], HumanMessage)
    assert "FAQで「解除」を検索してください" in retry_call[-1].text
    (subtask,) = result.subtasks
    assert subtask.is_completed and subtask.challenge_count == 2
    assert subtask.sources == ["faq.csv 行2"]


def test_reply_without_tool_call_is_retried_with_advice_and_never_crashes() -> None:
    agent, model = agent_with(
        [
            SubtaskPlan(subtasks=["パスワードの条件"]),
            "たぶん8文字以上です。",
            "検索しなくても分かります。",
            "8文字だと思います。",
            "パスワードの条件は確認できませんでした。",
        ]
    )
    result = agent.run_agent("パスワードの条件は?")

    assert model.remaining == 0  # no answer/reflection calls for attempts without search
    (subtask,) = result.subtasks
    assert subtask.is_completed is False and subtask.challenge_count == 3
    assert [r.advice for r in subtask.reflection_results] == [NO_TOOL_CALL_ADVICE] * 3
    assert "検索ツールを呼び出せなかった" in subtask.subtask_answer
    assert UNGROUNDED_LABEL in subtask.subtask_answer
    assert "8文字だと思います。" in subtask.subtask_answer
    assert subtask.sources == []
    assert NO_TOOL_CALL_ADVICE in model.prompts[2]  # the retry carried the advice
    assert result.unanswered == ["パスワードの条件"]
    assert "見つからなかった点" in result.answer


def test_reply_without_tool_call_then_a_search_completes() -> None:
    agent, _ = agent_with(
        [
            SubtaskPlan(subtasks=["パスワードの条件"]),
            "8文字です。",
            call("search_xyz_manual", "パスワード"),
            "8文字以上です [1]。",
            ReflectionResult(advice="", is_completed=True),
            "8文字以上です [1]。",
        ]
    )
    (subtask,) = agent.run_agent("パスワードの条件").subtasks
    assert subtask.is_completed and subtask.challenge_count == 2
    assert subtask.subtask_answer == "8文字以上です [1]。"
    assert subtask.tool_results[0] == []


def test_events_arrive_in_order_with_their_payloads() -> None:
    agent, _ = agent_with(
        [
            SubtaskPlan(subtasks=["パスワードの条件"]),
            call("search_xyz_qa", "ロック"),
            "管理者に依頼 [1]。",
            ReflectionResult(advice="", is_completed=True),
            "管理者に依頼 [1]。",
        ]
    )
    events: list[Event] = []
    result = agent.run_agent("パスワードの条件", on_event=events.append)

    assert [e.kind for e in events] == [
        "plan",
        "tool_results",
        "subtask_answer",
        "reflection",
        "subtask_done",
        "answer",
    ]
    assert {e.source for e in events} == {"helpdesk"}
    assert {e.run_id for e in events} == {result.run_id}
    assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6]
    assert events[0].payload["subtasks"] == ["パスワードの条件"]
    tool_event = events[1].payload
    assert tool_event["attempt"] == 1 and tool_event["subtask"] == "パスワードの条件"
    assert tool_event["results"][0]["tool_name"] == "search_xyz_qa"
    assert "キーワード検索" in tool_event["results"][0]["note"]
    assert events[4].payload["subtask"]["sources"] == ["faq.csv 行2"]
    assert events[-1].payload["answer"] == result.answer
    for event in events:  # plain JSON values only
        assert json.loads(json.dumps(event.to_dict(), ensure_ascii=False)) == event.to_dict()


def routed(messages: list[BaseMessage], tools: list[str], subtasks: list[str]) -> Any:
    """A reply valid for any call of any subtask (plan, search, answer, reflection)."""
    if "SubtaskPlan" in tools:
        return SubtaskPlan(subtasks=subtasks)
    if "ReflectionResult" in tools:
        return ReflectionResult(advice="", is_completed=True)
    if tools:
        return call("search_xyz_manual", "パスワード")
    return "8文字以上です [1]。"


def searching(messages: list[BaseMessage], tools: list[str]) -> bool:
    """A subtask's tool selection (the calls that may overlap; the plan comes before)."""
    return bool(tools) and not {"SubtaskPlan", "ReflectionResult"} & set(tools)


def routing_model(subtasks: list[str], **options: Any) -> ScriptedChatModel:
    return ScriptedChatModel(
        respond=lambda messages, tools: routed(messages, tools, subtasks),
        wait_if=searching,
        **options,
    )


def test_subtasks_run_in_parallel_threads() -> None:
    subtasks = ["パスワード1", "パスワード2", "パスワード3", "パスワード4"]
    model = routing_model(subtasks, wait_for_concurrent=4)
    agent = HelpDeskAgent(Settings(), tools=tools(), chat_model=model)
    events: list[Event] = []
    result = agent.run_agent("パスワードについて", on_event=events.append)

    assert [s.task_name for s in result.subtasks] == subtasks
    assert all(s.is_completed for s in result.subtasks)
    assert model.peak_in_flight == 4  # the four subtasks asked the model at the same time
    # events of parallel subtasks, from several threads: numbered once each, in order
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert {e.run_id for e in events} == {result.run_id}
    assert [e.kind for e in events].count("subtask_done") == 4


def test_max_parallel_subtasks_one_runs_one_at_a_time() -> None:
    subtasks = ["パスワード1", "パスワード2", "パスワード3"]
    model = routing_model(subtasks, wait_for_concurrent=2, wait_timeout_s=0.5)
    agent = HelpDeskAgent(Settings(), tools=tools(), chat_model=model, max_parallel_subtasks=1)
    result = agent.run_agent("パスワードについて")
    assert len(result.subtasks) == 3
    assert model.peak_in_flight == 1


def test_each_run_has_its_own_run_id() -> None:
    agent = HelpDeskAgent(Settings(), tools=tools(), chat_model=routing_model(["パスワード"]))
    first = agent.run_agent("パスワード")
    second = agent.run_agent("パスワード")
    assert first.run_id != second.run_id and first.run_id.startswith("helpdesk_")


def test_offline_mode_searches_each_part_with_both_tools() -> None:
    agent = HelpDeskAgent(Settings(provider="offline"), tools=tools())
    assert agent.offline is True
    events: list[Event] = []
    result = agent.run_agent(
        "パスワードの条件と、ロックされた時の解除方法を教えて", on_event=events.append
    )

    assert result.offline is True
    assert len(result.plan.subtasks) == 2
    for subtask in result.subtasks:
        first = subtask.tool_results[0]
        assert [r.tool_name for r in first] == ["search_xyz_manual", "search_xyz_qa"]
        assert first[0].args == first[1].args
    assert "オフライン" in result.answer
    assert "出典" in result.answer
    assert "manual.pdf p.3 「2.1 パスワード」" in result.sources
    assert events[0].kind == "plan" and events[-1].kind == "answer"
    assert events[0].payload["offline"] is True


def _unanswered_run(final_reply: str) -> str:
    replies: list[Any] = [SubtaskPlan(subtasks=["請求書の再発行"])]
    for attempt in range(3):
        replies += [
            call("search_xyz_qa", f"請求書{attempt}", f"c{attempt}"),
            "資料には見つかりませんでした。",
            ReflectionResult(advice=f"別の語で検索 {attempt}", is_completed=False),
        ]
    replies.append(final_reply)
    agent, model = agent_with(replies)
    result = agent.run_agent("請求書を再発行したい")
    assert model.remaining == 0 and result.unanswered == ["請求書の再発行"]
    return result.answer


def test_a_not_found_section_the_model_titled_its_own_way_is_not_added_twice() -> None:
    for heading in ("### 見つからなかった事項", "**分からなかった点**", "## Not found"):
        answer = _unanswered_run(f"再発行の手順は資料にありません。\n\n{heading}\n- 請求書の再発行")
        assert answer.count(heading) == 1, answer
        assert "見つからなかった点" not in answer, answer  # no second section appended
        assert "## 出典" in answer
