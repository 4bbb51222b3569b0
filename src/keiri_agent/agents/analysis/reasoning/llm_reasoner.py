"""The LLM reasoner: structured output of the seed's reason fields."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from keiri_agent.agents.analysis.datasets.summary import prompt_summary
from keiri_agent.agents.analysis.messages import pending_request
from keiri_agent.agents.analysis.ops.specs import analysis_spec_json_schema, plot_spec_json_schema
from keiri_agent.agents.analysis.reasoning.decision import Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.prompts import (
    REASON_CONTEXT,
    REASON_SYSTEM,
    compact_vocabulary,
)
from keiri_agent.llm.structured import invoke_structured, render_prompt

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

HISTORY_MESSAGES = 20


FACTS_CHARS = 1500
"""A text artifact's facts are shown up to this many characters (a wide dataset's overview
would otherwise repeat every column in every later call)."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LLMReasoner:
    """Asks the chat model for a ``Decision`` given the conversation and the state."""

    def __init__(
        self, chat_model: BaseChatModel, *, method: str = "function_calling", reasks: int = 2
    ) -> None:
        self.chat_model = chat_model
        self.method = method
        self.reasks = reasks
        analysis_schema = analysis_spec_json_schema()
        self._system = render_prompt(
            REASON_SYSTEM,
            analysis_vocabulary=compact_vocabulary(analysis_schema),
            plot_vocabulary=compact_vocabulary(
                plot_spec_json_schema(), known=frozenset(analysis_schema.get("$defs", {}))
            ),
        )

    def prompt(self, state: ReasonInput) -> list[BaseMessage]:
        """The messages sent to the model for this state (system, context, history)."""
        artifacts = [
            {k: a[k] for k in ("artifact_id", "kind", "title", "description")}
            | ({"facts": _clip(str(a["payload"]), FACTS_CHARS)} if a["kind"] == "text" else {})
            for a in state.artifacts
        ]
        specs = [record.spec for record in state.turn_actions]
        focus = " ".join(
            [pending_request(state.messages), _json(specs) if specs else "", state.last_error or ""]
        )
        context = render_prompt(
            REASON_CONTEXT,
            dataset_summary=_json(prompt_summary(state.dataset_summary, focus))
            if state.dataset_summary
            else "none",
            artifacts=_json(artifacts[-30:]) if artifacts else "none",
            turn_actions=_json(
                [
                    {"spec": r.spec, "ok": r.ok, "error": r.error, "artifact_ids": r.artifact_ids}
                    for r in state.turn_actions
                ]
            )
            if state.turn_actions
            else "none",
            last_error=state.last_error or "none",
            previous_specs=_json(list(state.previous_specs)) if state.previous_specs else "none",
        )
        history = list(state.messages)[-HISTORY_MESSAGES:]
        return [SystemMessage(self._system), HumanMessage(context), *history]

    def decide(self, state: ReasonInput) -> Decision:
        """One structured-output call (re-asked when the output does not validate)."""
        decision = invoke_structured(
            self.chat_model, Decision, self.prompt(state), method=self.method, reasks=self.reasks
        )
        assert isinstance(decision, Decision)
        return decision
