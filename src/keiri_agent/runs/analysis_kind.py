"""Analysis turns as a kind of run: a question on a saved dataset, answered by the
process's analysis agent wherever the run executes (seed 000).

Inputs: ``dataset`` (the saved copy's reference, ``services.saved_datasets``),
``question`` and ``thread_id`` (chosen when the run starts, so every attempt continues
the same conversation). The executing process loads the dataset from the workspace
when its agent has not loaded that reference yet (``LoadedDatasets``), asks
(``AnalysisAgent.ask``: one event per graph step — ``reason``, ``act``,
``out_of_scope``, ``report``, payloads in ``agents.analysis.progress``), links the
conversation to the dataset, keeps the turn's figures and report in the workspace
(``services.analysis_turns``) and ends with a ``result`` event holding the turn JSON
(``analysis_turns.turn_result_json``), which is also the run's result.

An attempt that follows a lost one asks again (the conversation may then hold the
question twice). A turn is not stopped midway: a cancel asked while it runs lets it
finish (its result is kept); a queued turn is cancelled at once.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from keiri_agent.errors import ExecutionError, UserInputError
from keiri_agent.events import Event, EventSource, utc_timestamp
from keiri_agent.runs.records import Run, checked_question
from keiri_agent.runs.service import Outcome, RunContext
from keiri_agent.services.saved_datasets import SavedDatasets, unknown_dataset
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import AnalysisAgent
    from keiri_agent.config import Settings

log = logging.getLogger(__name__)

KIND = "analysis"
MAX_THREAD_CHARS = 200


def turn_inputs(
    settings: Settings, dataset: str, question: str, thread_id: str | None
) -> dict[str, Any]:
    """The inputs of a turn, checked now (a 400 or 404 for the caller, not a failed
    run): a question, a dataset reference that names a saved copy, and the thread
    (a new one when none is given)."""
    question = checked_question(question, hint="知りたいことを文章で入力してください")
    if thread_id is not None and not 0 < len(thread_id) <= MAX_THREAD_CHARS:
        raise UserInputError(
            f"会話 ID（thread_id）は 1〜{MAX_THREAD_CHARS} 文字で指定してください",
            hint="新しい会話を始めるときは thread_id を省略してください",
        )
    if not SavedDatasets(Workspace.from_settings(settings)).exists(dataset):
        raise unknown_dataset(dataset)
    return {"dataset": dataset, "question": question, "thread_id": thread_id or uuid.uuid4().hex}


class ProcessAnalysis(Protocol):
    """What the kind uses of the process's services (``services.container.Services``)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def analysis(self) -> AnalysisAgent: ...


class AnalysisKind:
    """Answers analysis turns with the process's analysis agent."""

    source: EventSource = "analysis"

    def __init__(self, services: ProcessAnalysis) -> None:
        self.services = services

    def execute(self, run: Run, context: RunContext) -> Outcome:
        from keiri_agent.services.analysis_turns import AnalysisTurns, turn_result_json
        from keiri_agent.services.saved_datasets import LoadedDatasets

        settings = self.services.settings
        dataset = str(run.inputs.get("dataset") or "")
        question = str(run.inputs.get("question") or "")
        thread_id = str(run.inputs.get("thread_id") or "") or None
        agent = self.services.analysis
        loaded = LoadedDatasets.of(agent)
        dataset_id = loaded.dataset_id(dataset)
        turn = agent.ask(
            question, dataset_id=dataset_id, thread_id=thread_id, on_event=context.on_event
        )
        try:
            loaded.saved.link(turn.thread_id, dataset)
        except OSError as error:  # only a page reload cannot bring the file back
            log.warning("cannot link analysis thread to its file: %s", error.strerror)
        try:
            AnalysisTurns.from_settings(settings).save(turn)
        except OSError as error:
            raise ExecutionError(
                "分析の結果（図・レポート）を作業フォルダーに保存できませんでした",
                hint="作業フォルダー（KEIRI_AGENT_HOME）の空き容量と権限を確認してから、"
                "もう一度質問してください",
                code="ANALYSIS_TURN_NOT_SAVED",
                details={"turn_id": turn.turn_id, "reason": error.strerror or type(error).__name__},
            ) from error
        result = turn_result_json(turn, dataset)
        context.on_event(Event(self.source, "result", run.run_id, 0, utc_timestamp(), result))
        return Outcome("success", result=result)
