"""``OfflineReasoner``: the HelpDesk agent's decisions made by the rules of ``offline/``.

Used when no LLM is configured (provider ``offline`` and no injected chat model). It
splits the question by rules, searches every tool with the same query (key terms, then
synonyms and what the reflection found missing), quotes the best passages with their
citations and judges an answer by the key terms the quotes cover, over the passages of
every attempt so far. Its conversation is only the tool calls of the current attempt.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, ToolCall

from keiri_agent.agents.helpdesk.models import SearchOutput, Subtask
from keiri_agent.agents.helpdesk.offline import (
    DEFAULT_VOCABULARY,
    Vocabulary,
    final_answer,
    reflect,
    reformulate,
    split_question,
    subtask_answer,
)
from keiri_agent.agents.helpdesk.reasoner import (
    Reflection,
    SubtaskAnswer,
    SubtaskStep,
    ToolSelection,
)
from keiri_agent.agents.helpdesk.tools import SearchTool
from keiri_agent.search.similarity import Similarity


class OfflineReasoner:
    """The HelpDesk decisions of the offline rules (no model, deterministic).

    Args:
        tools: The search tools; every attempt calls each of them with one query.
        vocabulary: The system name (not a key term) and the synonym groups of the
            knowledge base.
        similarity: With embeddings configured, how close passages are in meaning to a
            part (``search.similarity``): a quote must also be among the closest.
    """

    offline = True

    def __init__(
        self,
        tools: Sequence[SearchTool],
        vocabulary: Vocabulary = DEFAULT_VOCABULARY,
        similarity: Similarity | None = None,
    ) -> None:
        self.tool_names = [tool.name for tool in tools]
        self.vocabulary = vocabulary
        self.similarity = similarity

    def plan(self, question: str) -> list[str]:
        return split_question(question, self.vocabulary)

    def select_tools(self, step: SubtaskStep) -> ToolSelection:
        query = reformulate(step.subtask, step.attempt, step.advice, self.vocabulary)
        calls = [
            ToolCall(
                name=name,
                args={"query": query},
                id=f"offline_{step.attempt}_{index}",
                type="tool_call",
            )
            for index, name in enumerate(self.tool_names)
        ]
        return ToolSelection([AIMessage(content="", tool_calls=calls)], calls)

    def answer_subtask(self, step: SubtaskStep) -> SubtaskAnswer:
        answer, sources = subtask_answer(
            step.subtask,
            _passages(step),
            self.vocabulary,
            tools=self.tool_names,
            similarity=self.similarity,
        )
        return SubtaskAnswer(answer, list(sources), list(step.messages))

    def reflect(self, step: SubtaskStep) -> Reflection:
        result = reflect(
            step.subtask,
            _passages(step),
            step.attempt,
            self.vocabulary,
            similarity=self.similarity,
        )
        return Reflection(result, list(step.messages))

    def final_answer(
        self, question: str, subtasks: Sequence[Subtask], sources: Sequence[str]
    ) -> str:
        return final_answer(question, list(subtasks))


def _passages(step: SubtaskStep) -> list[SearchOutput]:
    """The passages of every attempt so far, this attempt's first.

    A later attempt searches only what was missing: a passage found earlier that covers
    the rest must still be quoted and judged (the rules pick the best of all of them).
    """
    attempts = [*step.results, *step.earlier_results]
    return [output for result in attempts for output in result.results]
