"""Deciding the next step of a turn: the ``Reasoner`` protocol and its two implementations.

``decision`` (``Decision``, ``ReasonInput``, ``ActionRecord``, ``Reasoner``),
``llm_reasoner`` (a chat model with structured output, prompts in ``prompts``) and
``offline`` (rules for Japanese/English requests, used without an LLM).
"""

from keiri_agent.agents.analysis.reasoning.decision import (
    ActionRecord,
    Decision,
    NextAction,
    Reasoner,
    ReasonInput,
)
from keiri_agent.agents.analysis.reasoning.llm_reasoner import LLMReasoner
from keiri_agent.agents.analysis.reasoning.offline import OfflineReasoner

__all__ = [
    "ActionRecord",
    "Decision",
    "LLMReasoner",
    "NextAction",
    "OfflineReasoner",
    "ReasonInput",
    "Reasoner",
]
