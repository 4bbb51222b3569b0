"""``LLMResearchReasoner``: the planner, summariser, gap check and writer of a chat model.

* PlannerLLM — structured output :class:`PlanOutput` ``{needs_research, reason, queries}``,
  at most ``MAX_QUERIES`` queries kept (seed §2's prompt rule);
* SummarizerLLM — text bounded by ``summary_tokens`` (the model's ``max_tokens``);
* gap check — structured output :class:`GapOutput` ``{missing, queries}``;
* WriterLLM — ``REPORT_STYLE`` Markdown with 結論, sections and ``[n]`` citations.

Errors of the model (after the LLM layer's retries and re-asks) are ``LLMError``; the
graph fails the step they happen in, never the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field

from keiri_agent.agents.research.citations import sources_listing
from keiri_agent.agents.research.models import DocSnippet
from keiri_agent.agents.research.prompts import REPORT_STYLE, ResearchPrompts
from keiri_agent.agents.research.reasoner import (
    MAX_QUERIES,
    GapCheck,
    ResearchPlan,
    StepSummary,
)
from keiri_agent.config import Settings
from keiri_agent.errors import LLMError
from keiri_agent.llm.structured import ainvoke_structured, model_errors

SchemaT = TypeVar("SchemaT", bound=BaseModel)


class PlanOutput(BaseModel):
    """The planner's structured output."""

    needs_research: bool = Field(description="False when the question needs no research.")
    reason: str = Field(description="Why (no research needed) or what the plan aims at.")
    queries: list[str] = Field(
        default_factory=list, description=f"At most {MAX_QUERIES} distinct search queries."
    )


class GapOutput(BaseModel):
    """The knowledge-gap check's structured output."""

    missing: str = Field(default="", description="What is still missing (empty when nothing).")
    queries: list[str] = Field(default_factory=list, description="New queries that fill it.")


def clean_queries(queries: Sequence[str], limit: int, exclude: Sequence[str] = ()) -> list[str]:
    """Stripped, distinct queries not in ``exclude``, at most ``limit``."""
    seen = set(exclude)
    kept: list[str] = []
    for query in queries:
        text = " ".join(query.split())
        if text and text not in seen:
            seen.add(text)
            kept.append(text)
    return kept[: max(0, limit)]


def steps_text(steps: Sequence[StepSummary]) -> str:
    return "\n\n".join(f"### {step.query}\n{step.summary_md}" for step in steps) or "（なし）"


class LLMResearchReasoner:
    """The research decisions of a chat model.

    Args:
        settings: Structured-output method/re-asks and ``research_summary_tokens``.
        chat_model: The model every step asks.
        prompts: The prompt texts (default ``ResearchPrompts()``).
    """

    offline = False

    def __init__(
        self,
        settings: Settings,
        chat_model: BaseChatModel,
        prompts: ResearchPrompts | None = None,
    ) -> None:
        self.settings = settings
        self.chat_model = chat_model
        self.prompts = prompts or ResearchPrompts()
        self._summary_model: Runnable[Any, BaseMessage] = chat_model.bind(
            max_tokens=settings.research.research_summary_tokens
        )

    async def plan(self, question: str) -> ResearchPlan:
        output = await self._structured(
            PlanOutput,
            [
                SystemMessage(self.prompts.render("planner_system")),
                HumanMessage(self.prompts.render("planner_user", question=question)),
            ],
        )
        queries = clean_queries(output.queries, MAX_QUERIES) if output.needs_research else []
        return ResearchPlan(bool(queries), output.reason.strip(), queries)

    async def summarize(self, question: str, query: str, snippets: Sequence[DocSnippet]) -> str:
        listing = "\n\n".join(
            f"[{number}] {snippet.label()}\n{snippet.text}"
            for number, snippet in enumerate(snippets, start=1)
        )
        messages = [
            SystemMessage(
                self.prompts.render(
                    "summarizer_system",
                    summary_tokens=self.settings.research.research_summary_tokens,
                )
            ),
            HumanMessage(
                self.prompts.render(
                    "summarizer_user", question=question, query=query, snippets=listing
                )
            ),
        ]
        return await _text(self._summary_model, messages, "summarize")

    async def check_gaps(
        self, question: str, steps: Sequence[StepSummary], budget: int
    ) -> GapCheck:
        output = await self._structured(
            GapOutput,
            [
                SystemMessage(self.prompts.render("gap_system", budget=budget)),
                HumanMessage(
                    self.prompts.render("gap_user", question=question, steps=steps_text(steps))
                ),
            ],
        )
        asked = [step.query for step in steps]
        return GapCheck(output.missing.strip(), clean_queries(output.queries, budget, asked))

    async def write_report(
        self,
        question: str,
        steps: Sequence[StepSummary],
        sources: Sequence[DocSnippet],
        missing: Sequence[str],
    ) -> str:
        messages = [
            SystemMessage(self.prompts.render("writer_system", report_style=REPORT_STYLE)),
            HumanMessage(
                self.prompts.render(
                    "writer_user",
                    question=question,
                    steps=steps_text(steps),
                    sources=sources_listing(sources) or "（なし）",
                    missing="\n".join(f"- {item}" for item in missing) or "なし",
                )
            ),
        ]
        return await _text(self.chat_model, messages, "write_report")

    async def _structured(self, schema: type[SchemaT], messages: list[BaseMessage]) -> SchemaT:
        return await ainvoke_structured(
            self.chat_model,
            schema,
            messages,
            method=self.settings.llm.structured_output_method,
            reasks=self.settings.llm.structured_output_reasks,
        )


async def _text(model: Runnable[Any, Any], messages: list[BaseMessage], step: str) -> str:
    with model_errors(model):
        response = await model.ainvoke(messages)
    if not isinstance(response, BaseMessage):
        raise LLMError(
            f"{step}: LLM の応答がメッセージではありません（{type(response).__name__}）",
            hint="設定の LLM モデル（設定ファイルか環境変数 KEIRI_AGENT_MODEL）が対話用のモデル"
            "か確かめてください",
        )
    return response.text.strip()
