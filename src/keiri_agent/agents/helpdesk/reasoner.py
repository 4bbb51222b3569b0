"""What the HelpDesk agent decides at each step, and what it decides on.

Both reasoners implement :class:`HelpDeskReasoner`: :class:`LLMReasoner`
(``llm_reasoner.py``, the chat model with the prompts of ``prompts.py``) and
:class:`OfflineReasoner` (``offline_reasoner.py``, the rules of ``offline/``). The agent
picks one when it is built; the graph (``agent.py``) calls the protocol and is the same
whichever runs.

A subtask's ``messages`` are the reasoner's own conversation: each step receives it
and returns the next one. The graph only adds the ``ToolMessage`` results of the tool
calls a selection ends with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from langchain_core.messages import BaseMessage, ToolCall

from keiri_agent.agents.helpdesk.models import ReflectionResult, Subtask, ToolResult


@dataclass(frozen=True)
class SubtaskStep:
    """One step of one subtask's loop, as a reasoner sees it."""

    question: str
    plan: Sequence[str]
    subtask: str
    attempt: int
    """0-based: how many attempts ended before this one."""
    messages: Sequence[BaseMessage]
    advice: str = ""
    """The last reflection's advice ("" on the first attempt)."""
    results: Sequence[ToolResult] = ()
    """This attempt's search results (answer and reflection steps)."""
    earlier_results: Sequence[ToolResult] = ()
    """The search results of the attempts before this one (answer and reflection steps)."""


@dataclass(frozen=True)
class ToolSelection:
    """The searches to run. Without ``tool_calls`` the attempt failed (no tool was called)
    and ``fallback_answer`` holds the text written instead, if any."""

    messages: list[BaseMessage]
    tool_calls: list[ToolCall]
    fallback_answer: str = ""


@dataclass(frozen=True)
class SubtaskAnswer:
    """A subtask's answer; ``[i]`` in ``answer`` refers to ``sources[i-1]``."""

    answer: str
    sources: list[str]
    messages: list[BaseMessage]


@dataclass(frozen=True)
class Reflection:
    """The judgement of a subtask's answer."""

    result: ReflectionResult
    messages: list[BaseMessage]


class HelpDeskReasoner(Protocol):
    """Makes the HelpDesk agent's decisions (seed 001 §4)."""

    @property
    def offline(self) -> bool:
        """True when the decisions are rules, not a language model (shown to the user)."""
        ...

    def plan(self, question: str) -> list[str]:
        """The subtasks that answer ``question`` (§4.1; the graph cleans them)."""
        ...

    def select_tools(self, step: SubtaskStep) -> ToolSelection:
        """The searches for one attempt (§4.2); a retry follows ``step.advice``."""
        ...

    def answer_subtask(self, step: SubtaskStep) -> SubtaskAnswer:
        """The subtask's answer from ``step.results`` (the offline rules add
        ``step.earlier_results``), citing them (§4.4)."""
        ...

    def reflect(self, step: SubtaskStep) -> Reflection:
        """Whether the answer is complete, with advice for the next attempt (§4.5)."""
        ...

    def final_answer(
        self, question: str, subtasks: Sequence[Subtask], sources: Sequence[str]
    ) -> str:
        """The answer to ``question`` from the subtasks' answers, ``[i]`` = ``sources[i-1]``
        (§4.6; the graph adds the 見つからなかった点 and 出典 sections when missing)."""
        ...
