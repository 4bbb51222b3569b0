"""``LLMReasoner``: the HelpDesk agent's decisions made by a chat model (seed 001 §4, §7).

Every step renders its prompt (``prompts.py``) and asks the model: the plan and the
reflection as structured output (:class:`SubtaskPlan`, :class:`ReflectionResult`), the
tool selection with the search tools bound, the answers as text with ``[n]`` citations.
A subtask's conversation grows step by step; a retry drops the earlier tool calls and
tool results (seed §12.2) and adds the reflection's advice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from keiri_agent.agents.helpdesk.citations import (
    cite,
    number_sources,
    renumber_citations,
    subtask_summary,
    unanswered_subtasks,
)
from keiri_agent.agents.helpdesk.claims import check_claims
from keiri_agent.agents.helpdesk.models import (
    ReflectionResult,
    SearchOutput,
    Subtask,
    SubtaskPlan,
)
from keiri_agent.agents.helpdesk.offline.terms import DEFAULT_VOCABULARY, Vocabulary
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.reasoner import (
    Reflection,
    SubtaskAnswer,
    SubtaskStep,
    ToolSelection,
)
from keiri_agent.agents.helpdesk.tools import SearchTool
from keiri_agent.config import Settings
from keiri_agent.errors import LLMError
from keiri_agent.llm.structured import invoke_structured, model_errors
from keiri_agent.search.similarity import Similarity

SchemaT = TypeVar("SchemaT", bound=BaseModel)


def drop_tool_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The history without tool calls and tool results (seed §12.2 token saving).

    Removes every ``ToolMessage`` and every ``AIMessage`` that carries tool calls
    (valid or malformed); keeps system and human messages and the model's text
    replies (previous subtask answers and reflections).
    """
    kept: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            continue
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            continue
        kept.append(message)
    return kept


class LLMReasoner:
    """The HelpDesk decisions of a chat model.

    Args:
        settings: Structured-output method and re-asks.
        chat_model: The model every step asks.
        tools: The search tools bound for the tool selection.
        prompts: The prompt texts.
    """

    offline = False

    def __init__(
        self,
        settings: Settings,
        chat_model: BaseChatModel,
        tools: Sequence[SearchTool],
        prompts: HelpDeskAgentPrompts,
        vocabulary: Vocabulary = DEFAULT_VOCABULARY,
        similarity: Similarity | None = None,
    ) -> None:
        self.settings = settings
        self.chat_model = chat_model
        self.prompts = prompts
        self.vocabulary = vocabulary
        self.similarity = similarity
        self._tool_model: Runnable[Any, BaseMessage] = chat_model.bind_tools(
            [tool.openai_schema() for tool in tools]
        )

    def plan(self, question: str) -> list[str]:
        messages = [
            SystemMessage(self.prompts.render("planner_system_prompt")),
            HumanMessage(self.prompts.render("planner_user_prompt", question=question)),
        ]
        return list(self._structured(SubtaskPlan, messages).subtasks)

    def select_tools(self, step: SubtaskStep) -> ToolSelection:
        """Ask with the tools bound; a reply without a tool call is returned without calls."""
        if step.attempt == 0:
            messages: list[BaseMessage] = [
                SystemMessage(
                    self.prompts.render(
                        "subtask_system_prompt",
                        question=step.question,
                        plan="\n".join(f"- {item}" for item in step.plan),
                        subtask=step.subtask,
                    )
                ),
                HumanMessage(
                    self.prompts.render("subtask_tool_selection_user_prompt", subtask=step.subtask)
                ),
            ]
        else:
            messages = drop_tool_messages(step.messages)
            messages.append(
                HumanMessage(
                    self.prompts.render("subtask_retry_user_prompt", advice=step.advice or "なし")
                )
            )
        response = _invoke(self._tool_model, messages, "select_tools")
        if isinstance(response, AIMessage) and response.tool_calls:
            return ToolSelection([*messages, response], list(response.tool_calls))
        return ToolSelection(messages, [], response.text.strip())

    def answer_subtask(self, step: SubtaskStep) -> SubtaskAnswer:
        numbered = number_sources(step.results)
        listed = "\n".join(f"[{item.number}] {item.citation}" for item in numbered)
        prompt = HumanMessage(
            self.prompts.render(
                "subtask_answer_user_prompt",
                subtask=step.subtask,
                sources=listed or "（なし: 検索結果は見つかりませんでした）",
            )
        )
        response = _invoke(self.chat_model, [*step.messages, prompt], "create_subtask_answer")
        reply = response.text.strip()
        # every cited sentence is checked against its passages: one they do not say is
        # marked and cites nothing (claims.py)
        checked = check_claims(
            reply,
            {item.number: item.passages for item in numbered},
            self.vocabulary,
            similarity=self.similarity,
        )
        answer, sources = cite(checked.text, numbered)
        return SubtaskAnswer(answer, sources, [*step.messages, AIMessage(content=reply)])

    def reflect(self, step: SubtaskStep) -> Reflection:
        prompt = HumanMessage(
            self.prompts.render("subtask_reflection_user_prompt", subtask=step.subtask)
        )
        reflection = self._structured(ReflectionResult, [*step.messages, prompt])
        verdict = "OK（完了）" if reflection.is_completed else "NG（未完了）"
        summary = f"評価: {verdict}\nアドバイス: {reflection.advice or 'なし'}"
        return Reflection(reflection, [*step.messages, prompt, AIMessage(content=summary)])

    def final_answer(
        self, question: str, subtasks: Sequence[Subtask], sources: Sequence[str]
    ) -> str:
        unanswered = unanswered_subtasks(subtasks)
        messages: list[BaseMessage] = [
            SystemMessage(self.prompts.render("final_answer_system_prompt")),
            HumanMessage(
                self.prompts.render(
                    "final_answer_user_prompt",
                    question=question,
                    subtask_results=subtask_summary(subtasks, sources),
                    unanswered="\n".join(f"- {name}" for name in unanswered) or "なし",
                )
            ),
        ]
        text = _invoke(self.chat_model, messages, "create_answer").text.strip()
        valid = {number: number for number in range(1, len(sources) + 1)}
        text = renumber_citations(text, valid)
        # the joined answer's claims are checked like each part's, against the passages
        # behind each source of the parts
        passages: dict[str, list[SearchOutput]] = {}
        for subtask in subtasks:
            for results in subtask.tool_results:
                for item in number_sources(results):
                    passages.setdefault(item.citation, []).extend(item.passages)
        by_number = {n: passages.get(source, []) for n, source in enumerate(sources, start=1)}
        return check_claims(text, by_number, self.vocabulary, similarity=self.similarity).text

    def _structured(self, schema: type[SchemaT], messages: list[BaseMessage]) -> SchemaT:
        return invoke_structured(
            self.chat_model,
            schema,
            messages,
            method=self.settings.llm.structured_output_method,
            reasks=self.settings.llm.structured_output_reasks,
        )


def _invoke(model: Runnable[Any, Any], messages: list[BaseMessage], step: str) -> BaseMessage:
    with model_errors(model):
        response = model.invoke(messages)
    if not isinstance(response, BaseMessage):
        raise LLMError(
            f"{step}: LLM の応答がメッセージではありません（{type(response).__name__}）",
            hint="設定の LLM モデル（設定ファイルか環境変数 KEIRI_AGENT_MODEL）が対話用のモデル"
            "か確かめてください",
        )
    return response
