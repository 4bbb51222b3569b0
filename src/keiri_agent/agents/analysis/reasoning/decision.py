"""What ``reason`` decides each step, and what it is given to decide on.

Both reasoners (the LLM one and the offline rules) implement ``Reasoner``:
``decide(ReasonInput) -> Decision``. The graph stays the same whichever runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from keiri_agent.agents.analysis.artifacts import Artifact

NextAction = Literal["ask", "act", "out_of_scope", "finalize"]


class Decision(BaseModel):
    """The structured output of ``reason`` (seed 000, reason node outputs)."""

    next_action: NextAction = Field(
        description="ask: a question is needed; act: run analysis_spec/plot_spec; "
        "out_of_scope: the request cannot be served; finalize: the request is answered."
    )
    rationale: str = Field(description="One short sentence: why this action.")
    clarifying_questions: list[str] = Field(
        default_factory=list, description="Questions for the user when next_action is ask."
    )
    assumptions: list[str] = Field(
        default_factory=list, description="Assumptions made (stated in the report)."
    )
    analysis_spec: dict[str, Any] | None = Field(
        default=None, description="An analysis spec to run (act), or null."
    )
    plot_spec: dict[str, Any] | None = Field(
        default=None, description="A plot spec to run (act), or null."
    )
    # Set by the offline reasoner (not asked of the LLM): the request this decision is about,
    # so the report's 依頼 names it once, without earlier turns' text.
    request: SkipJsonSchema[str | None] = None


@dataclass(frozen=True)
class ActionRecord:
    """One action run in the current user turn (what ``act`` did)."""

    spec: dict[str, Any]
    ok: bool
    artifact_ids: tuple[str, ...] = ()
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class ReasonInput:
    """The state ``reason`` reads (seed: messages, dataset_id, dataset_summary, artifacts,
    last_error), plus the actions already run in this turn and the previous request's."""

    messages: Sequence[BaseMessage]
    dataset_id: str | None
    dataset_summary: dict[str, Any] | None
    artifacts: Sequence[Artifact] = ()
    last_error: str | None = None
    turn_actions: Sequence[ActionRecord] = field(default_factory=tuple)
    previous_specs: Sequence[dict[str, Any]] = field(default_factory=tuple)
    """The specs that answered the previous request (its successful actions), which a
    follow-up such as 「それを営業部だけで」 edits."""


class Reasoner(Protocol):
    """Decides the next step of the agent."""

    def decide(self, state: ReasonInput) -> Decision: ...
