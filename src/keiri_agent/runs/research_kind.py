"""Research runs (seed 004) as a kind of run: the question, its session and the
knowledge bases it searches, executed by the deep-research agent.

An attempt that follows a lost one asks the same question in the same session: the
steps that had finished are the session's notes, which the agent reuses (no new
search or summary), so research continues from its last finished step.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from keiri_agent.events import EventSource
from keiri_agent.runs.records import Run, checked_question
from keiri_agent.runs.service import Outcome, RunContext
from keiri_agent.services.research import ResearchService

KIND = "research"
CANCEL_POLL_S = 0.2
"""How often a running research attempt looks at its cancel flag."""


def research_inputs(question: str, session_id: str | None, kb_names: list[str]) -> dict[str, Any]:
    """The inputs of a research run, checked now (a 400 for the caller, not a failed
    run): the question, its session (a new one when none) and the knowledge bases."""
    from keiri_agent.agents.research.agent import new_session_id
    from keiri_agent.agents.research.notes import checked_session_id

    question = checked_question(question, hint="調べたい内容を文章で入力してください")
    session_id = checked_session_id(session_id) or new_session_id()
    names = [name for name in kb_names if name]
    return {"question": question, "session_id": session_id, "kb_names": names}


class ResearchKind:
    """Executes research runs with one ``ResearchService``."""

    source: EventSource = "research"

    def __init__(self, service: ResearchService) -> None:
        self.service = service

    def execute(self, run: Run, context: RunContext) -> Outcome:
        return asyncio.run(self._execute(run, context))

    async def _execute(self, run: Run, context: RunContext) -> Outcome:
        from keiri_agent.services.jsonforms import research_result_json

        inputs = run.inputs
        agent = self.service.agent(list(inputs.get("kb_names") or []) or None)
        task = asyncio.create_task(
            agent.aresearch(
                str(inputs.get("question") or ""),
                session_id=inputs.get("session_id"),
                on_event=context.on_event,
                run_id=run.run_id,
            )
        )
        watcher = asyncio.create_task(_cancel_when_set(context.cancel_event, task))
        try:
            result = await task
        except asyncio.CancelledError:
            return Outcome("cancelled")
        finally:
            watcher.cancel()
        return Outcome("success", result=research_result_json(result))


async def _cancel_when_set(flag: threading.Event, task: asyncio.Task[Any]) -> None:
    while not task.done():
        if flag.is_set():
            task.cancel()
            return
        await asyncio.sleep(CANCEL_POLL_S)
