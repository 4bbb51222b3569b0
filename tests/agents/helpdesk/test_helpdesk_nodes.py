"""Each HelpDeskAgent method on its own: normal, error and boundary cases (seed §14.1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from helpdesk_support import FixedSearcher
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Send

from keiri_agent.agents.helpdesk import (
    HelpDeskAgent,
    HelpDeskAgentPrompts,
    ReflectionResult,
    SearchOutput,
    Subtask,
    SubtaskPlan,
    ToolResult,
    default_tools,
)
from keiri_agent.agents.helpdesk.citations import (
    cited_numbers,
    ensure_answer_sections,
    number_sources,
    renumber_citations,
)
from keiri_agent.agents.helpdesk.claims import UNSUPPORTED_MARK
from keiri_agent.agents.helpdesk.llm_reasoner import drop_tool_messages
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, LLMError, UserInputError
from keiri_agent.llm.testing import ScriptedChatModel
from keiri_agent.search.models import PAGE_STARTS, Chunk, Hit, Source

CHUNKS = [
    Chunk("m#1", "パスワードは8文字以上です。", Source("manual.pdf", 3, "2.1 パスワード")),
    Chunk("m#2", "ロックは管理者が解除します。", Source("manual.pdf", 4, "2.2 ロック")),
]


def make_agent(
    replies: Sequence[Any] = (), **kwargs: Any
) -> tuple[HelpDeskAgent, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies))
    tools = default_tools(FixedSearcher(CHUNKS), FixedSearcher(CHUNKS, "vector"))
    return HelpDeskAgent(Settings(), tools=tools, chat_model=model, **kwargs), model


def sub_state(**values: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "question": "パスワードとロックについて",
        "plan": ["パスワードの条件", "ロックの解除"],
        "subtask": "パスワードの条件",
        "messages": [],
        "challenge_count": 0,
        "tool_results": [],
        "reflection_results": [],
        "subtask_answer": "",
        "is_completed": False,
    }
    state.update(values)
    return state


def output(name: str, content: str, page: int | None = None) -> SearchOutput:
    return SearchOutput(file_name=name, content=content, page=page)


# --------------------------------------------------------------------------- create_plan


def test_create_plan_returns_the_models_subtasks_cleaned() -> None:
    agent, model = make_agent([SubtaskPlan(subtasks=[" パスワード ", "", "ロック", "パスワード"])])
    assert agent.create_plan({"question": "パスワードとロック"}) == {
        "plan": ["パスワード", "ロック"]
    }
    assert isinstance(model.calls[0][0], SystemMessage)
    assert "パスワードとロック" in model.prompts[0]


def test_create_plan_falls_back_to_the_question_when_the_plan_is_empty() -> None:
    agent, _ = make_agent([SubtaskPlan(subtasks=[])])
    assert agent.create_plan({"question": "ログインできない"}) == {"plan": ["ログインできない"]}


def test_create_plan_reasks_when_the_structured_output_is_invalid() -> None:
    agent, model = make_agent([{"subtasks": "not a list"}, SubtaskPlan(subtasks=["A"])])
    assert agent.create_plan({"question": "質問"}) == {"plan": ["A"]}
    assert len(model.calls) == 2


def test_create_plan_raises_llm_error_when_every_reply_is_invalid() -> None:
    agent, _ = make_agent([{"subtasks": 1}] * 3)
    with pytest.raises(LLMError, match="正しい形の回答（SubtaskPlan）"):
        agent.create_plan({"question": "質問"})


@pytest.mark.parametrize("question", ["", "   "])
def test_empty_question_is_a_user_input_error(question: str) -> None:
    agent, model = make_agent()
    with pytest.raises(UserInputError):
        agent.create_plan({"question": question})
    with pytest.raises(UserInputError):
        agent.run_agent(question)
    assert model.calls == []


# --------------------------------------------------------------------------- routing


def test_should_continue_exec_subtasks_sends_one_task_per_subtask() -> None:
    agent, _ = make_agent()
    sends = agent._should_continue_exec_subtasks({"question": "Q", "plan": ["a", "b", "c"]})
    assert sends == [
        Send("execute_subtasks", {"question": "Q", "plan": ["a", "b", "c"], "current_step": i})
        for i in range(3)
    ]


@pytest.mark.parametrize(
    ("completed", "count", "expected"),
    [(False, 0, "continue"), (False, 2, "continue"), (False, 3, "end"), (True, 1, "end")],
)
def test_should_continue_exec_subtask_flow(completed: bool, count: int, expected: str) -> None:
    agent, _ = make_agent()
    state = sub_state(is_completed=completed, challenge_count=count)
    assert agent._should_continue_exec_subtask_flow(state) == expected  # type: ignore[arg-type]


# --------------------------------------------------------------------------- select / execute


def test_select_tools_first_attempt_binds_the_tools() -> None:
    reply = AIMessage(
        content="", tool_calls=[{"name": "search_xyz_qa", "args": {"query": "x"}, "id": "1"}]
    )
    agent, model = make_agent([reply])
    update = agent.select_tools(sub_state())  # type: ignore[arg-type]
    assert update["tool_call_missing"] is False
    assert [type(m) for m in update["messages"]] == [SystemMessage, HumanMessage, AIMessage]
    assert model.tool_names == [["search_xyz_manual", "search_xyz_qa"]]
    assert "パスワードの条件" in model.prompts[0] and "ロックの解除" in model.prompts[0]


def test_select_tools_without_a_tool_call_marks_the_attempt() -> None:
    agent, _ = make_agent(["8文字です"])
    update = agent.select_tools(sub_state())  # type: ignore[arg-type]
    assert update["tool_call_missing"] is True
    assert update["fallback_answer"] == "8文字です"
    assert not any(isinstance(m, AIMessage) for m in update["messages"])


def test_execute_tools_numbers_passages_and_answers_every_call() -> None:
    agent, _ = make_agent()
    last = AIMessage(
        content="",
        tool_calls=[
            {"name": "search_xyz_manual", "args": {"query": "パスワード ロック"}, "id": "a"},
            {"name": "search_xyz_qa", "args": {"query": "ロック"}, "id": "b"},
            {"name": "search_unknown", "args": {"query": "x"}, "id": "c"},
            {"name": "search_xyz_qa", "args": {}, "id": "d"},
        ],
    )
    update = agent.execute_tools(sub_state(messages=[last]))  # type: ignore[arg-type]
    tool_messages = update["messages"][1:]
    assert [m.tool_call_id for m in tool_messages] == ["a", "b", "c", "d"]
    assert "[1] manual.pdf p.3 「2.1 パスワード」" in tool_messages[0].content
    assert "[2] manual.pdf p.4 「2.2 ロック」" in tool_messages[0].content
    assert tool_messages[1].content.startswith("[2] manual.pdf p.4")  # same source, same number
    assert (
        "search_unknown" in tool_messages[2].content and "search_xyz_qa" in tool_messages[2].content
    )
    assert "query" in tool_messages[3].content
    (results,) = update["tool_results"]
    assert [len(r.results) for r in results] == [2, 1, 0, 0]
    assert results[0].args == '{"query": "パスワード ロック"}'


def test_execute_tools_without_a_tool_call_records_an_empty_attempt() -> None:
    agent, _ = make_agent()
    update = agent.execute_tools(sub_state(messages=[HumanMessage("x")], tool_call_missing=True))  # type: ignore[arg-type]
    assert update == {"tool_results": [[]]}


def test_execute_tools_shows_the_keyword_note() -> None:
    model = ScriptedChatModel()
    tools = default_tools(FixedSearcher(CHUNKS), FixedSearcher(CHUNKS, "keyword"))
    agent = HelpDeskAgent(Settings(), tools=tools, chat_model=model)
    last = AIMessage(
        content="", tool_calls=[{"name": "search_xyz_qa", "args": {"query": "ロック"}, "id": "a"}]
    )
    update = agent.execute_tools(sub_state(messages=[last]))  # type: ignore[arg-type]
    assert "キーワード検索" in update["messages"][-1].content
    assert update["tool_results"][0][0].results[0].retriever == "keyword"


# --------------------------------------------------------------------------- answer / reflect


def test_create_subtask_answer_cites_the_sources_it_used() -> None:
    results = [
        ToolResult(
            tool_name="search_xyz_manual",
            args="{}",
            results=[output("a.pdf", "A", 1), output("b.pdf", "B", 2), output("c.pdf", "C")],
        )
    ]
    agent, model = make_agent(["Bです [2]。Cも [3][2]。"])
    update = agent.create_subtask_answer(sub_state(tool_results=[results]))  # type: ignore[arg-type]
    assert update["subtask_answer"] == "Bです [1]。Cも [2][1]。"
    assert update["sources"] == ["b.pdf p.2", "c.pdf"]
    assert "[1] a.pdf p.1\n[2] b.pdf p.2\n[3] c.pdf" in model.prompts[0]
    assert isinstance(update["messages"][-1], AIMessage)


def test_create_subtask_answer_without_citations_lists_no_source() -> None:
    """A passage the answer does not cite is not presented as its source."""
    results = [ToolResult(tool_name="t", args="{}", results=[output("a.pdf", "A", 1)])]
    agent, _ = make_agent(["Aです。"])
    update = agent.create_subtask_answer(sub_state(tool_results=[results]))  # type: ignore[arg-type]
    assert update["sources"] == []


def test_reflect_subtask_records_the_judgement_and_counts_the_attempt() -> None:
    agent, _ = make_agent([ReflectionResult(advice="FAQも検索", is_completed=False)])
    update = agent.reflect_subtask(sub_state(subtask_answer="不明"))  # type: ignore[arg-type]
    assert update["challenge_count"] == 1 and update["is_completed"] is False
    assert update["reflection_results"][0].advice == "FAQも検索"
    assert "FAQも検索" in update["messages"][-1].content
    assert "subtask_answer" not in update


def test_reflect_subtask_at_the_cap_says_nothing_sufficient_was_found() -> None:
    agent, _ = make_agent([ReflectionResult(advice="別の語", is_completed=False)])
    state = sub_state(challenge_count=2, subtask_answer="一部だけ [1]", tool_results=[[], []])
    update = agent.reflect_subtask(state)  # type: ignore[arg-type]
    assert update["challenge_count"] == 3
    assert update["subtask_answer"].startswith("「パスワードの条件」について、3回検索しましたが")
    assert "一部だけ [1]" in update["subtask_answer"]


def test_create_answer_renumbers_citations_across_subtasks() -> None:
    def found(*names: str) -> list[list[ToolResult]]:
        """One attempt's results: a passage per source name, each saying 「まとめ」."""
        passages = [output(name, f"{name}のまとめです。") for name in names]
        return [[ToolResult(tool_name="t", args="{}", results=passages)]]

    subtasks = [
        Subtask(
            task_name="a",
            tool_results=found("A", "B"),
            reflection_results=[],
            is_completed=True,
            subtask_answer="x [1][2]",
            challenge_count=1,
            sources=["A", "B"],
        ),
        Subtask(
            task_name="b",
            tool_results=found("B", "C"),
            reflection_results=[],
            is_completed=False,
            subtask_answer="y [1][2]",
            challenge_count=3,
            sources=["B", "C"],
        ),
    ]
    agent, model = make_agent(["まとめ [1][3][9]。"])
    update = agent.create_answer(
        {"question": "Q", "plan": ["a", "b"], "subtask_results": list(reversed(subtasks))}
    )
    prompt = model.prompts[0]
    assert prompt.index("サブタスク1: a") < prompt.index("サブタスク2: b")
    assert "x [1][2]" in prompt and "y [2][3]" in prompt
    answer = update["last_answer"]
    assert answer.startswith("まとめ [1][3]。")
    assert "## 見つからなかった点\n- 「b」" in answer
    assert answer.endswith("## 出典\n[1] A\n[2] B\n[3] C")


def test_create_answer_marks_a_joined_claim_its_sources_do_not_say() -> None:
    """The joined answer is checked like each part: 「承認は部長が行います [1]」 is not what
    source 1 says, so it is marked and cites nothing."""
    passage = output("manual.pdf", "経費の締め日は毎月25日です。", page=3)
    subtask = Subtask(
        task_name="締め日",
        tool_results=[[ToolResult(tool_name="t", args="{}", results=[passage])]],
        reflection_results=[],
        is_completed=True,
        subtask_answer="締め日は毎月25日です [1]。",
        challenge_count=1,
        sources=[passage.citation()],
    )
    agent, _ = make_agent(["経費の締め日は毎月25日です [1]。承認は部長が行います [1]。"])
    answer = agent.create_answer(
        {"question": "締め日は？", "plan": ["締め日"], "subtask_results": [subtask]}
    )["last_answer"]
    assert answer.startswith(
        f"経費の締め日は毎月25日です [1]。承認は部長が行います{UNSUPPORTED_MARK}。"
    )


# --------------------------------------------------------------------------- helpers


def test_drop_tool_messages_keeps_only_text() -> None:
    messages = [
        SystemMessage("s"),
        HumanMessage("h"),
        AIMessage(content="", tool_calls=[{"name": "t", "args": {}, "id": "1"}]),
        ToolMessage(content="r", tool_call_id="1"),
        AIMessage(content="answer"),
    ]
    assert drop_tool_messages(messages) == [messages[0], messages[1], messages[4]]


def test_citation_helpers() -> None:
    assert cited_numbers("a [2] b [1, 3] c [2]") == [2, 1, 3]
    assert renumber_citations("a [2] b [1、3] c [4]", {2: 1, 3: 2}) == "a [1] b [2] c "
    numbered = number_sources(
        [
            ToolResult(
                tool_name="t",
                args="",
                results=[output("a", "x"), output("a", "y"), output("b", "z")],
            )
        ]
    )
    assert [(n.number, n.citation, len(n.passages)) for n in numbered] == [(1, "a", 2), (2, "b", 1)]


def test_a_passage_running_onto_the_next_page_is_numbered_with_both_pages() -> None:
    chunk = Chunk(
        "m.pdf#0",
        "承認は経理部です。\n保管は7年です。",
        Source("m.pdf", page=3),
        {PAGE_STARTS: "0:3,10:4"},
    )
    one_page = Chunk("m.pdf#1", "差し戻しは申請者へ通知されます。", Source("m.pdf", page=4))
    result = ToolResult(
        tool_name="t",
        args="",
        results=[SearchOutput.from_hit(Hit(c, 1.0, "keyword")) for c in (chunk, one_page)],
    )
    assert [n.citation for n in number_sources([result])] == ["m.pdf p.3–4", "m.pdf p.4"]


def test_ensure_answer_sections_keeps_existing_sections() -> None:
    text = "答え\n\n### 見つからなかった点\n- b\n\n### 出典\n1. A"
    assert ensure_answer_sections(text, ["A"], ["b"]) == text
    assert (
        ensure_answer_sections("答え", [], [])
        == "答え\n\n## 出典\n（検索結果から引用できる出典はありませんでした）"
    )


# --------------------------------------------------------------------------- construction


def test_constructor_rejects_bad_configuration() -> None:
    model = ScriptedChatModel()
    with pytest.raises(ConfigurationError, match="検索先が 1 つもありません"):
        HelpDeskAgent(Settings(), tools=[], chat_model=model)
    tools = default_tools(FixedSearcher(CHUNKS), FixedSearcher(CHUNKS))
    with pytest.raises(ConfigurationError, match="が重複しています"):
        HelpDeskAgent(Settings(), tools=[tools[0], tools[0]], chat_model=model)
    with pytest.raises(ConfigurationError):
        HelpDeskAgent(Settings(), tools=tools, chat_model=model, max_challenge_count=0)
    with pytest.raises(ConfigurationError, match="API キーがありません"):
        HelpDeskAgent(Settings(provider="openai"), tools=tools)


def test_custom_prompts_reach_the_model() -> None:
    prompts = HelpDeskAgentPrompts(planner_user_prompt="独自の計画依頼: {question}")
    agent, model = make_agent([SubtaskPlan(subtasks=["a"])], prompts=prompts)
    agent.create_plan({"question": "質問X"})
    assert "独自の計画依頼: 質問X" in model.prompts[0]


def test_full_width_and_range_markers_are_read_and_renumbered() -> None:
    text = "条件は12文字以上です［1］。解除はメールで［２、３］、または管理者へ[4-5]。"
    assert cited_numbers(text) == [1, 2, 3, 4, 5]
    renumbered = renumber_citations(text, {1: 7, 2: 8, 4: 9})
    assert renumbered == "条件は12文字以上です[7]。解除はメールで[8]、または管理者へ[9]。"
    assert cited_numbers("［10〜100］") == [10, 100]  # not a range of 91 sources


def test_sections_added_to_an_english_answer_are_english_and_a_sources_heading_counts() -> None:
    added = ensure_answer_sections("Passwords need 8 characters [1].", ["guide.pdf p.3"], ["emoji"])
    assert "## Not found" in added and "## Sources\n[1] guide.pdf p.3" in added
    assert "出典" not in added and "見つからなかった点" not in added
    written = "Passwords need 8 characters [1].\n\n## Sources\n[1] guide.pdf p.3"
    assert ensure_answer_sections(written, ["guide.pdf p.3"], []) == written
