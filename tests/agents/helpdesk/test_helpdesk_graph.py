"""The whole HelpDesk graph with a scripted chat model: answers, retries, citations, events."""

from __future__ import annotations

import threading
import time
from typing import Any

from helpdesk_support import FixedSearcher
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from keiri_agent.agents.helpdesk import (
    NO_TOOL_CALL_ADVICE,
    HelpDeskAgent,
    Plan,
    ReflectionResult,
    default_tools,
)
from keiri_agent.agents.helpdesk.agent import UNGROUNDED_LABEL
from keiri_agent.config import Settings
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


def agent_with(replies: list[Any], **kwargs: Any) -> tuple[HelpDeskAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies, **{k: v for k, v in kwargs.items() if k == "delay_s"})
    options = {k: v for k, v in kwargs.items() if k != "delay_s"}
    return HelpDeskAgent(Settings(), tools=tools(), chat_model=model, **options), model


def test_one_subtask_answered_with_citations_and_sources_section() -> None:
    agent, model = agent_with(
        [
            Plan(subtasks=["パスワードの条件"]),
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
            Plan(subtasks=["ロック"]),
            call("search_xyz_manual", "パスワード ロック"),
            "ロックされます [2]。存在しない番号 [7]。",
            ReflectionResult(advice="", is_completed=True),
            "ロックされます [1]。",
        ]
    )
    result = agent.run_agent("ロックの条件")
    (subtask,) = result.subtasks
    assert subtask.sources == ["manual.pdf p.4 「2.2 ロック」"]
    assert subtask.subtask_answer == "ロックされます [1]。存在しない番号 。"


def test_subtask_retried_until_the_cap_is_listed_as_unanswered() -> None:
    replies: list[Any] = [Plan(subtasks=["請求書の再発行"])]
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
            Plan(subtasks=["ロック解除"]),
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
            Plan(subtasks=["パスワードの条件"]),
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
            Plan(subtasks=["パスワードの条件"]),
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
            Plan(subtasks=["パスワードの条件"]),
            call("search_xyz_qa", "ロック"),
            "管理者に依頼 [1]。",
            ReflectionResult(advice="", is_completed=True),
            "管理者に依頼 [1]。",
        ]
    )
    events: list[dict[str, Any]] = []
    result = agent.run_agent("パスワードの条件", on_event=events.append)

    assert [e["type"] for e in events] == [
        "plan",
        "tool_results",
        "subtask_answer",
        "reflection",
        "subtask_done",
        "answer",
    ]
    assert events[0]["subtasks"] == ["パスワードの条件"]
    tool_event = events[1]
    assert tool_event["attempt"] == 1 and tool_event["subtask"] == "パスワードの条件"
    assert tool_event["results"][0]["tool_name"] == "search_xyz_qa"
    assert "キーワード検索" in tool_event["results"][0]["note"]
    assert events[4]["subtask"]["sources"] == ["faq.csv 行2"]
    assert events[-1]["answer"] == result.answer


class RoutingChatModel(BaseChatModel):
    """Answers by what was asked (plan, search, answer, reflection), valid for any subtask.

    Every call sleeps ``delay_s`` and the model records how many calls overlapped.
    """

    delay_s: float = 0.3
    subtasks: list[str] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _in_flight: int = PrivateAttr(default=0)
    _peak: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "routing"

    @property
    def peak(self) -> int:
        return self._peak

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        with self._lock:
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
        try:
            time.sleep(self.delay_s)
        finally:
            with self._lock:
                self._in_flight -= 1
        names = [tool["function"]["name"] for tool in kwargs.get("tools") or []]
        if "Plan" in names:
            message = self._call("Plan", {"subtasks": self.subtasks})
        elif "ReflectionResult" in names:
            message = self._call("ReflectionResult", {"advice": "", "is_completed": True})
        elif names:
            message = self._call("search_xyz_manual", {"query": "パスワード"})
        else:
            message = AIMessage(content="8文字以上です [1]。")
        return ChatResult(generations=[ChatGeneration(message=message)])

    @staticmethod
    def _call(name: str, args: dict[str, Any]) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": name}])


def test_subtasks_run_in_parallel_threads() -> None:
    subtasks = ["パスワード1", "パスワード2", "パスワード3", "パスワード4"]
    parallel = RoutingChatModel(subtasks=subtasks, delay_s=0.3)
    agent = HelpDeskAgent(Settings(), tools=tools(), chat_model=parallel)
    started = time.perf_counter()
    result = agent.run_agent("パスワードについて")
    elapsed = time.perf_counter() - started

    # 1 plan + 4 subtasks x 3 calls + 1 answer, 0.3 s each: 4.2 s one after another,
    # about 1.5 s when the subtasks overlap.
    assert [s.task_name for s in result.subtasks] == subtasks
    assert all(s.is_completed for s in result.subtasks)
    assert parallel.peak >= 2
    assert elapsed < 2.8


def test_max_parallel_subtasks_one_runs_one_at_a_time() -> None:
    subtasks = ["パスワード1", "パスワード2", "パスワード3"]
    model = RoutingChatModel(subtasks=subtasks, delay_s=0.05)
    agent = HelpDeskAgent(Settings(), tools=tools(), chat_model=model, max_parallel_subtasks=1)
    result = agent.run_agent("パスワードについて")
    assert len(result.subtasks) == 3
    assert model.peak == 1


def test_offline_mode_searches_each_part_with_both_tools() -> None:
    agent = HelpDeskAgent(Settings(provider="offline"), tools=tools())
    assert agent.offline is True
    events: list[dict[str, Any]] = []
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
    assert events[0]["type"] == "plan" and events[-1]["type"] == "answer"
