"""HelpDesk asks as a kind of run: a question and the knowledge base it searches,
answered by the HelpDesk agent (seed 001).

The run's events are the agent's (plan, searches, answer), then ``result`` holding
the answer JSON (``jsonforms.helpdesk_answer_json``), which is also the run's result.
An attempt that follows a lost one asks again: an answer has no side effect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from keiri_agent.events import Event, EventSource, utc_timestamp
from keiri_agent.runs.records import Run, checked_question
from keiri_agent.runs.service import Outcome, RunContext

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.desk import HelpDesk

KIND = "helpdesk"


def ask_inputs(question: str, kb: str) -> dict[str, Any]:
    """The inputs of an ask, checked now (a 400 for the caller, not a failed run)."""
    from keiri_agent.search.knowledge_base import check_name

    question = checked_question(question, hint="知りたいことを文章で入力してください")
    check_name(kb, "ナレッジベース")
    return {"question": question, "kb": kb}


class HelpDeskKind:
    """Answers HelpDesk asks with the process's HelpDesk per knowledge base (``desk``:
    knowledge-base name → its HelpDesk)."""

    source: EventSource = "helpdesk"

    def __init__(self, desk: Callable[[str], HelpDesk]) -> None:
        self.desk = desk

    def execute(self, run: Run, context: RunContext) -> Outcome:
        from keiri_agent.services.jsonforms import helpdesk_answer_json

        desk = self.desk(str(run.inputs.get("kb") or "helpdesk"))
        question = str(run.inputs.get("question") or "")
        result = desk.ask(question, on_event=context.on_event, run_id=run.run_id)
        answer = helpdesk_answer_json(result)
        context.on_event(Event(self.source, "result", run.run_id, 0, utc_timestamp(), answer))
        return Outcome("success", result=answer)
