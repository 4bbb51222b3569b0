"""Data analysis: upload a file, ask on a thread, fetch figures as PNG, download the report.

The same operations as ``keiri-agent analyze`` and the データ分析 page:
``AnalysisAgent.load_bytes`` / ``ask``, ``jsonforms.turn_json``,
``exports.report_zip``. Nothing a later request needs stays in the process that
answered, so any server process or ``keiri-agent worker`` serves any request (no
sticky sessions):

- an upload is loaded (checked, summarised) and saved in the workspace
  (``services.saved_datasets``); its ``dataset_id`` is the saved copy's reference,
  which every process loads from the workspace on first use (``LoadedDatasets``);
- a turn is a run of the run service (``runs.analysis_kind``), executed by this
  process's threads or a worker; the request waits for its result (JSON), or with
  ``stream`` (or ``Accept: text/event-stream``) follows its events as SSE
  (``api.run_answers``);
- the figures and the report of each turn are kept in the workspace
  (``services.analysis_turns``) for ``retention_days``; a turn that is not there
  (never was, pruned, damaged) answers 404.

Threads are checkpointed in the workspace's database, so a thread continues on any
process; ``GET /threads/{thread_id}`` reads one back (its file and its turns, from the
run service: ``services.analysis_threads``) for a page reopened after a reload. A
figure artifact carries ``url`` (``/api/analysis/artifacts/{turn_id}/{id}.png``)
instead of its bytes in base64.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Path, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import BaseModel, Field

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import ApiError, not_found
from keiri_agent.api.owned import continued_subject, seen_dataset, seen_subject
from keiri_agent.api.run_answers import start_and_answer, wants_stream
from keiri_agent.api.security import caller, permit
from keiri_agent.api.uploads import read_upload
from keiri_agent.people.roles import Person
from keiri_agent.runs import analysis_kind
from keiri_agent.runs.records import MAX_QUESTION_CHARS
from keiri_agent.services.analysis_threads import thread_json
from keiri_agent.services.analysis_turns import AnalysisTurns, StoredTurn
from keiri_agent.services.exports import REPORT_FILE, report_zip
from keiri_agent.services.jsonforms import FIGURE_MEDIA_TYPE
from keiri_agent.services.saved_datasets import LoadedDatasets, SavedDatasets
from keiri_agent.workspace import Workspace

router = APIRouter(prefix="/api/analysis", tags=["analysis"])

Context = Annotated[ApiContext, Depends(get_context)]
Caller = Annotated[Person, Depends(caller)]
Analyst = Annotated[Person, Depends(permit("run"))]


def _turn(context: ApiContext, turn_id: str, person: Person) -> StoredTurn:
    """The stored turn, when ``person`` may see its conversation."""
    turn = AnalysisTurns.from_settings(context.settings).load(turn_id)
    if turn is None:
        raise not_found("分析の回答", "Analysis turn", turn_id)
    seen_subject(context, person, analysis_kind.KIND, turn.thread_id)
    return turn


# --------------------------------------------------------------------------- datasets


@router.post("/datasets", status_code=201)
async def upload_dataset(
    context: Context,
    person: Analyst,
    file: Annotated[UploadFile, File(description="CSV, TSV or Excel (xlsx, xlsm)")],
    sheet: Annotated[
        str | None, Form(max_length=100, description="Excel sheet name or 0-based index")
    ] = None,
    keep_total_rows: Annotated[
        bool,
        Form(description="Keep 合計/小計 rows as data (by default they are excluded, noted)"),
    ] = False,
) -> dict[str, Any]:
    """Load a file and save it in the workspace; its ``dataset_id`` (the saved copy's
    reference, valid in every server process) and summary (rows, columns with kinds,
    notes such as excluded total rows). The file is the uploader's (others reach it
    through a role or team sharing); the upload, with its SHA-256, is audited."""
    name, data = await read_upload(file, context.settings)
    sheet_choice: str | int | None = (
        int(sheet) if sheet and sheet.isascii() and sheet.isdigit() else sheet or None
    )

    def load() -> dict[str, Any]:
        loaded = LoadedDatasets.of(context.analysis)
        ref = loaded.upload(data, name, sheet=sheet_choice, keep_total_rows=keep_total_rows)
        loaded.saved.add_owner(ref, person.login)
        context.audit.append(
            person.login,
            "file_uploaded",
            ref,
            {
                "purpose": "analysis",
                "files": [{"name": name, "sha256": hashlib.sha256(data).hexdigest()}],
            },
        )
        return {"dataset_id": ref, "summary": loaded.summary(ref)}

    return await run_in_threadpool(load)


@router.get("/datasets/{dataset_id}")
def dataset(dataset_id: str, context: Context, person: Caller) -> dict[str, Any]:
    """A saved dataset's summary (loaded from the workspace by a process that has not
    loaded it yet)."""
    seen_dataset(context, person, dataset_id)
    loaded = LoadedDatasets.of(context.analysis)
    return {"dataset_id": dataset_id, "summary": loaded.summary(dataset_id)}


# --------------------------------------------------------------------------- turns


class TurnRequest(BaseModel):
    dataset_id: str = Field(min_length=1, max_length=200)
    """The ``dataset_id`` an upload returned."""
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    thread_id: str | None = Field(
        default=None, min_length=1, max_length=analysis_kind.MAX_THREAD_CHARS
    )
    """Continue a conversation (e.g. answer the agent's question); none: a new thread."""
    stream: bool = False
    """True (or ``Accept: text/event-stream``): the run's events as SSE, then ``result``."""


@router.post(
    "/turns",
    responses={
        200: {
            "description": "The turn (JSON), or with stream the run's events as SSE (one "
            "per graph step: reason, act, out_of_scope, report) ending with a `result` "
            "event holding the turn JSON (or `failed` holding the error)",
            "content": {"application/json": {}, sse.MEDIA_TYPE: {}},
        }
    },
)
async def ask(body: TurnRequest, request: Request, context: Context, person: Analyst) -> Any:
    """One turn: the reply, questions, artifacts (figures as PNG URLs), the report. A
    conversation is continued only by who started it (or 管理者), on a file they may see."""
    await run_in_threadpool(seen_dataset, context, person, body.dataset_id)
    if body.thread_id:
        await run_in_threadpool(
            continued_subject, context, person, analysis_kind.KIND, body.thread_id
        )
    inputs = await run_in_threadpool(
        analysis_kind.turn_inputs,
        context.settings,
        body.dataset_id,
        body.question,
        body.thread_id,
    )
    return await start_and_answer(
        context,
        analysis_kind.KIND,
        subject=inputs["thread_id"],
        title=inputs["question"],
        inputs=inputs,
        streaming=wants_stream(body.stream, request.headers.get("accept", "")),
        owner=person.login,
    )


@router.get("/threads/{thread_id}")
def thread(
    thread_id: Annotated[str, Path(max_length=analysis_kind.MAX_THREAD_CHARS)],
    context: Context,
    person: Caller,
) -> dict[str, Any]:
    """A conversation read back: its file's ``dataset_id`` and its turns, oldest first
    (each its question, status, and once settled the turn JSON or the error; a running
    one is followed at ``/api/runs/{run_id}/events``). Seen by who started it, and by
    whom ownership lets see it; 404 ``ANALYSIS_THREAD_NOT_FOUND`` for one without turns."""
    seen_subject(context, person, analysis_kind.KIND, thread_id)
    saved = SavedDatasets(Workspace.from_settings(context.settings))
    return thread_json(context.runs, saved, thread_id)


@router.get(
    "/artifacts/{turn_id}/{artifact_id}.png",
    response_class=Response,
    responses={200: {"content": {FIGURE_MEDIA_TYPE: {}}, "description": "The figure (PNG)"}},
)
def figure(turn_id: str, artifact_id: str, context: Context, person: Caller) -> Response:
    """A figure of a turn (kept for ``retention_days``), as PNG."""
    payload = _turn(context, turn_id, person).figure(artifact_id)
    if payload is None:
        raise not_found("図", "Figure", artifact_id)
    return Response(payload, media_type=FIGURE_MEDIA_TYPE)


@router.get(
    "/turns/{turn_id}/report",
    response_class=Response,
    responses={
        200: {
            "content": {"text/markdown": {}, "application/zip": {}},
            "description": "report.md, or with format=zip report.md and figures/*.png",
        }
    },
)
def report(
    turn_id: str, context: Context, person: Caller, format: Literal["md", "zip"] = "md"
) -> Response:
    """The report of a turn: ``report.md``, or a ZIP with its figures."""
    turn = _turn(context, turn_id, person)
    if not turn.has_report:
        raise ApiError(
            404,
            "REPORT_NOT_FOUND",
            "この回答にはレポートがありません",
            "This turn has no report",
            "「レポートにまとめて」と依頼すると、その回答からレポートをダウンロードできます",
            "Ask for a report; that turn's report can then be downloaded",
            {"turn_id": turn_id},
        )
    report_md = turn.report_md()
    cited = turn.report_artifacts() if format == "zip" else []
    if report_md is None or cited is None:  # a file of the kept turn is gone
        raise not_found("分析の回答", "Analysis turn", turn_id)
    if format == "zip":
        return Response(
            report_zip(report_md, cited),
            media_type="application/zip",
            headers={"Content-Disposition": 'attachment; filename="report.zip"'},
        )
    return Response(
        report_md.encode("utf-8"),
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{REPORT_FILE}"'},
    )
