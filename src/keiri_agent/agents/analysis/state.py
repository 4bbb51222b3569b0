"""The graph state (seed 000 ``AgentState``) plus two per-turn bookkeeping fields."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from langchain_core.messages import BaseMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from keiri_agent.agents.analysis.artifacts import Artifact


class AgentState(TypedDict, total=False):
    """Seed 000's AgentState. Large DataFrames are never stored here, only ``dataset_id``.

    Added to the seed's fields:
    ``turn_actions`` — the actions run in the current user turn (reset by each turn's
    input), so ``reason`` knows what it already did for this request;
    ``action_history`` — every action of the conversation (for a report that sums up
    earlier turns and its 再現要約); each action records ``turn``, the ordinal (from 1)
    of the request it answered, so a reopened conversation draws each turn's artifacts;
    ``step_count`` — graph steps taken in this turn, for the runaway-loop cap;
    ``request`` — the request the reasoner acted on (the report's 依頼), when it says.
    """

    messages: Annotated[Sequence[BaseMessage], add_messages]
    logs: Annotated[list[str], operator.add]

    dataset_id: str | None
    dataset_summary: dict[str, Any] | None

    next_action: Literal["ask", "act", "out_of_scope", "finalize"] | None
    rationale: str | None
    clarifying_questions: list[str]
    assumptions: list[str]

    analysis_spec: dict[str, Any] | None
    plot_spec: dict[str, Any] | None

    artifacts: list[Artifact]
    last_error: str | None

    final_report_md: str | None
    request: str | None

    turn_actions: list[dict[str, Any]]
    action_history: Annotated[list[dict[str, Any]], operator.add]
    step_count: int
