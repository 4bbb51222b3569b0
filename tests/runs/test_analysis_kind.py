"""Analysis turns as runs (``runs.analysis_kind``): inputs checked before a run
starts; a turn executed by a process whose agent never saw the upload loads the saved
copy from the workspace, emits the agent's steps then ``result``, keeps its figures
and report in the workspace and links the conversation to the file; a copy gone
before the turn ran fails the run as not found. Offline reasoner only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path
from keiri_agent.errors import UnknownDatasetError, UserInputError, error_category
from keiri_agent.runs import analysis_kind
from keiri_agent.runs.service import RunService, Timing
from keiri_agent.runs.store import RunStore
from keiri_agent.services.analysis_turns import AnalysisTurns
from keiri_agent.services.container import Services
from keiri_agent.services.saved_datasets import LoadedDatasets, SavedDatasets
from keiri_agent.storage.migrate import upgrade
from keiri_agent.workspace import Workspace

QUESTION = "地域別の売上の合計を棒グラフで見せて"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, provider="offline")


@pytest.fixture
def process(settings: Settings) -> Iterator[Services]:
    """The services of one process (its own analysis agent and registry)."""
    services = Services(settings)
    yield services
    services.close()


def _service(settings: Settings, services: Services) -> RunService:
    engine = sqlalchemy.create_engine(f"sqlite:///{settings.storage.home / 'runs-test.db'}")
    upgrade(engine)
    kinds = {analysis_kind.KIND: analysis_kind.AnalysisKind(services)}
    return RunService(RunStore(engine), kinds, timing=Timing(poll_interval_s=0.05))


def _uploaded(settings: Settings) -> str:
    """The sample CSV uploaded by another process (its own agent, then closed)."""
    uploader = Services(settings)
    try:
        data = sample_data_path().read_bytes()
        return LoadedDatasets.of(uploader.analysis).upload(
            data, "sales.csv", sheet=None, keep_total_rows=False
        )
    finally:
        uploader.close()


def test_a_turn_runs_in_a_process_that_never_saw_the_upload(
    settings: Settings, process: Services
) -> None:
    ref = _uploaded(settings)
    service = _service(settings, process)
    inputs = analysis_kind.turn_inputs(settings, ref, f"  {QUESTION} ", None)
    run = service.start(analysis_kind.KIND, subject="s", title="t", inputs=inputs)
    service.execute(run.run_id)

    final = service.require(run.run_id)
    events = service.store.events_after(run.run_id, 0)
    assert final.status == "success", final.error
    assert inputs["question"] == QUESTION and inputs["thread_id"]
    assert [e.kind for e in events][-1] == "result"
    assert {"reason", "act", "report"} <= {e.kind for e in events}
    assert all(e.source == "analysis" for e in events)
    result = final.result
    assert result is not None and events[-1].payload == result
    assert result["dataset_id"] == ref and result["thread_id"] == inputs["thread_id"]
    figures = [a for a in result["artifacts"] if a["kind"] == "figure"]
    assert figures and figures[0]["url"].startswith(f"/api/analysis/artifacts/{result['turn_id']}/")
    stored = AnalysisTurns.from_settings(settings).load(result["turn_id"])
    assert stored is not None and stored.figure(figures[0]["artifact_id"])
    assert stored.report_md() == result["report_md"]
    saved = SavedDatasets(Workspace.from_settings(settings))
    assert saved.ref_of(inputs["thread_id"]) == ref, "the conversation is linked to its file"
    assert len(process.analysis.registry) == 1

    again = analysis_kind.turn_inputs(settings, ref, "それを関東だけで", inputs["thread_id"])
    second = service.start(analysis_kind.KIND, subject="s", title="t", inputs=again)
    service.execute(second.run_id)
    assert service.require(second.run_id).status == "success"
    assert len(process.analysis.registry) == 1, "the dataset is loaded once per process"


@pytest.mark.parametrize(
    ("dataset", "question", "thread_id", "error", "category"),
    [
        ("0123456789abcdef", QUESTION, None, UnknownDatasetError, "not_found"),
        ("../../etc", QUESTION, None, UnknownDatasetError, "not_found"),
        ("ds_nope", QUESTION, None, UnknownDatasetError, "not_found"),
        ("REF", "   ", None, UserInputError, "input"),
        ("REF", "あ" * 4001, None, UserInputError, "input"),
        ("REF", QUESTION, "t" * 201, UserInputError, "input"),
    ],
)
def test_a_bad_turn_is_refused_before_any_run_starts(
    settings: Settings,
    dataset: str,
    question: str,
    thread_id: str | None,
    error: type[Exception],
    category: str,
) -> None:
    ref = SavedDatasets(Workspace.from_settings(settings)).save(
        b"a,b\n1,2\n", "x.csv", sheet=None, keep_total_rows=False
    )
    with pytest.raises(error) as raised:
        analysis_kind.turn_inputs(settings, dataset.replace("REF", ref), question, thread_id)
    assert error_category(raised.value) == category  # type: ignore[arg-type]
    assert raised.value.args[0] and not raised.value.args[0].isascii(), "said in Japanese"


def test_a_copy_gone_before_the_turn_ran_fails_the_run_as_not_found(
    settings: Settings, process: Services
) -> None:
    ref = _uploaded(settings)
    service = _service(settings, process)
    run = service.start(
        analysis_kind.KIND,
        subject="s",
        title="t",
        inputs=analysis_kind.turn_inputs(settings, ref, QUESTION, None),
    )
    for path in (settings.storage.home / ".keiri" / "datasets" / ref).iterdir():
        path.unlink()
    service.execute(run.run_id)

    final = service.require(run.run_id)
    assert final.status == "failed" and final.error is not None
    assert final.error["code"] == "UNKNOWN_DATASET" and final.error["category"] == "not_found"
    assert "見つかりません" in final.error["message"]
