"""Indexing a knowledge base as a kind of run: uploaded manuals or FAQs, or a bundled
sample, indexed by a worker that reads the workspace.

Two kinds, one per agent (their events carry its source): ``helpdesk_index`` (a
HelpDesk knowledge base: uploads of a collection, or the bundled XYZ sample) and
``research_index`` (the bundled research corpus). Events: ``index_started`` at once,
``index_progress`` per file (and per embedded batch of a long one: ``done``,
``total``, ``document``), then ``result`` holding the reports, which are also the
run's result. Uploaded files are staged in the workspace (``services.staged_uploads``)
and deleted once the run has ended. Indexing again after a lost attempt only redoes
the files whose content changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from keiri_agent.events import EventEmitter, EventSource
from keiri_agent.runs.records import Run
from keiri_agent.runs.service import Outcome, RunContext
from keiri_agent.services.staged_uploads import StagedUploads
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.desk import HelpDesk
    from keiri_agent.config import Settings
    from keiri_agent.search.knowledge_base import ProgressCallback
    from keiri_agent.services.research import ResearchService

HELPDESK_INDEX = "helpdesk_index"
RESEARCH_INDEX = "research_index"


def _indexed(
    source: EventSource,
    run: Run,
    context: RunContext,
    index: Callable[[ProgressCallback], dict[str, Any]],
) -> Outcome:
    emitter = EventEmitter(source, run.run_id, context.on_event)
    emitter.emit("index_started", {})

    def on_progress(done: int, total: int, document: str) -> None:
        emitter.emit("index_progress", {"done": done, "total": total, "document": document})

    reports = index(on_progress)
    emitter.emit("result", reports)
    return Outcome("success", result=reports)


class HelpDeskIndexKind:
    """Indexes a HelpDesk knowledge base: inputs ``kb``, ``collection`` (``manual`` or
    ``qa``), ``files`` (the staged uploads' manifest) and ``sample``."""

    source: EventSource = "helpdesk"

    def __init__(self, settings: Settings, desk: Callable[[str], HelpDesk]) -> None:
        self.settings = settings
        self.desk = desk

    def execute(self, run: Run, context: RunContext) -> Outcome:
        from keiri_agent.services.jsonforms import index_reports_json
        from keiri_agent.services.knowledge import index_knowledge

        inputs = run.inputs
        staged = StagedUploads(Workspace.from_settings(self.settings))
        try:
            uploads = staged.load(run.run_id, list(inputs.get("files") or []))
            manuals, faqs = (uploads, []) if inputs.get("collection") != "qa" else ([], uploads)
            desk = self.desk(str(inputs.get("kb") or "helpdesk"))
            return _indexed(
                self.source,
                run,
                context,
                lambda on_progress: index_reports_json(
                    index_knowledge(
                        desk,
                        uploads=manuals,
                        qa_uploads=faqs,
                        sample=bool(inputs.get("sample")),
                        on_progress=on_progress,
                    )
                ),
            )
        finally:
            staged.discard(run.run_id)


class ResearchIndexKind:
    """Indexes the bundled research corpus into the knowledge base ``research``."""

    source: EventSource = "research"

    def __init__(self, research: ResearchService) -> None:
        self.research = research

    def execute(self, run: Run, context: RunContext) -> Outcome:
        from keiri_agent.services.research import SAMPLE_KB

        research = self.research
        return _indexed(
            self.source,
            run,
            context,
            lambda on_progress: {
                "kb": SAMPLE_KB,
                "report": research.index_sample(on_progress).to_dict(),
            },
        )
