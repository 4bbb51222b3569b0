"""The graph states of the HelpDesk agent (seed 001 §3.1), as LangGraph TypedDicts.

``AgentState`` is the main graph's state; ``subtask_results`` is merged with
``operator.add`` so the parallel subtask branches (one ``Send`` each) append
their ``Subtask`` without overwriting each other.

``AgentSubGraphState`` is the state of one subtask's loop
(select_tools → execute_tools → create_subtask_answer → reflect_subtask).
``messages`` holds LangChain messages (the seed's ``ChatCompletionMessageParam``)
and is replaced as a whole by the node that changes it, as in the seed.

Added to the seed's fields (all optional):

* ``AgentSubGraphState.sources`` — the citations of the current answer, where
  ``[i]`` in ``subtask_answer`` refers to ``sources[i-1]``;
* ``AgentSubGraphState.tool_call_missing`` — the model's last tool-selection reply
  had no tool call (the attempt fails and is retried with advice);
* ``AgentSubGraphState.fallback_answer`` — the text the model wrote instead of a
  tool call, kept to show as an answer *not* grounded in sources;
* ``AgentSubGraphState.current_step`` — the subtask's index in the plan.

:func:`subtask_step` is what a reasoner sees of a subtask's state.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated

from langchain_core.messages import BaseMessage
from typing_extensions import TypedDict

from keiri_agent.agents.helpdesk.models import ReflectionResult, Subtask, ToolResult
from keiri_agent.agents.helpdesk.reasoner import SubtaskStep


class AgentState(TypedDict, total=False):
    """The main graph's state (seed 001 ``AgentState``)."""

    question: str
    plan: list[str]
    current_step: int
    subtask_results: Annotated[Sequence[Subtask], operator.add]
    last_answer: str


class AgentSubGraphState(TypedDict, total=False):
    """One subtask's loop state (seed 001 ``AgentSubGraphState``, plus the fields above)."""

    question: str
    plan: list[str]
    subtask: str
    current_step: int
    is_completed: bool
    messages: list[BaseMessage]
    challenge_count: int
    tool_results: Annotated[Sequence[Sequence[ToolResult]], operator.add]
    reflection_results: Annotated[Sequence[ReflectionResult], operator.add]
    subtask_answer: str
    sources: list[str]
    tool_call_missing: bool
    fallback_answer: str


def subtask_step(state: AgentSubGraphState, *, searched: bool = False) -> SubtaskStep:
    """What a reasoner sees of a subtask's state; ``searched``: with this attempt's results."""
    return SubtaskStep(
        question=state["question"],
        plan=list(state.get("plan") or []),
        subtask=state["subtask"],
        attempt=state.get("challenge_count") or 0,
        messages=list(state.get("messages") or []),
        advice=last_advice(state),
        results=attempt_results(state) if searched else [],
        earlier_results=earlier_results(state) if searched else [],
    )


def attempt_results(state: AgentSubGraphState) -> list[ToolResult]:
    """The search results of the current (last) attempt."""
    attempts = list(state.get("tool_results") or [])
    return list(attempts[-1]) if attempts else []


def earlier_results(state: AgentSubGraphState) -> list[ToolResult]:
    """The search results of the attempts before the current one, oldest first."""
    attempts = list(state.get("tool_results") or [])[:-1]
    return [result for attempt in attempts for result in attempt]


def searched_before(state: AgentSubGraphState) -> bool:
    """True when an attempt before the current one called a tool."""
    return any(attempt for attempt in list(state.get("tool_results") or [])[:-1])


def last_advice(state: AgentSubGraphState) -> str:
    """The advice of the last reflection ("" before the first)."""
    reflections = list(state.get("reflection_results") or [])
    return reflections[-1].advice if reflections else ""
