"""Data analysis: upload a file, ask on a thread, fetch figures as PNG, download the report.

The same operations as ``keiri-agent analyze`` and the データ分析 page:
``AnalysisAgent.load_bytes`` / ``ask``, ``jsonforms.turn_json``,
``exports.report_zip``. A turn runs in a worker thread (the agent is synchronous).

State lives in the process that received the upload: the datasets are in the
analysis agent's registry (``ApiContext.analysis``) and the figures and reports of
the last ``KEPT_TURNS`` turns in memory (``RecentTurns``, oldest forgotten first:
its figure and report URLs then answer 404 — ask again). Threads themselves are
checkpointed in the workspace's database, so a thread continues on any process that
holds its dataset. A deployment with several workers must send one user to one
process (sticky sessions) for analysis; research, HelpDesk and Plans have no such
need.

A figure artifact carries ``url`` (``/api/analysis/artifacts/{turn_id}/{id}.png``)
instead of its bytes in base64.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import BaseModel, Field

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import ApiError, not_found
from keiri_agent.api.uploads import read_upload
from keiri_agent.services.exports import REPORT_FILE, report_zip
from keiri_agent.services.jsonforms import FIGURE_MEDIA_TYPE, turn_json

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import TurnResult
    from keiri_agent.agents.analysis.artifacts import Artifact

router = APIRouter(prefix="/api/analysis", tags=["analysis"])

Context = Annotated[ApiContext, Depends(get_context)]

KEPT_TURNS = 100
"""Turns whose figures and report this process keeps (in memory) for download."""
MAX_QUESTION_CHARS = 4000


class RecentTurns:
    """The last ``limit`` turns of this process, by turn id (thread-safe)."""

    def __init__(self, limit: int = KEPT_TURNS) -> None:
        self.limit = limit
        self._turns: OrderedDict[str, TurnResult] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, turn: TurnResult) -> None:
        with self._lock:
            self._turns[turn.turn_id] = turn
            while len(self._turns) > self.limit:
                self._turns.popitem(last=False)

    def get(self, turn_id: str) -> TurnResult:
        with self._lock:
            turn = self._turns.get(turn_id)
        if turn is None:
            raise not_found("分析の回答", "Analysis turn", turn_id)
        return turn


_TURNS_LOCK = threading.Lock()


def recent_turns(request: Request) -> RecentTurns:
    """FastAPI dependency: the app's ``RecentTurns`` (made on first use)."""
    state = request.app.state
    with _TURNS_LOCK:
        turns: RecentTurns | None = getattr(state, "analysis_turns", None)
        if turns is None:
            turns = state.analysis_turns = RecentTurns()
        return turns


Turns = Annotated[RecentTurns, Depends(recent_turns)]


def _figure_url(turn_id: str, artifact_id: str) -> str:
    return f"/api/analysis/artifacts/{turn_id}/{artifact_id}.png"


def turn_response(turn: TurnResult, dataset_id: str) -> dict[str, Any]:
    """``jsonforms.turn_json`` with ids, figure URLs instead of base64 and report URLs."""
    # pandas loads with the first answered turn, not with the server (an idle one stays lean)
    from keiri_agent.agents.analysis.formatting import display_table

    form = turn_json(turn)
    payloads = {a["artifact_id"]: a["payload"] for a in turn.artifacts}
    for artifact in form["artifacts"]:
        payload = payloads[artifact["artifact_id"]]
        if artifact["kind"] == "table" and isinstance(payload, Mapping):
            # machine names and values stay in columns/records; display is what people read
            artifact["display"] = display_table(payload)
        if artifact["kind"] == "figure":
            artifact.pop("base64", None)
            artifact["url"] = _figure_url(turn.turn_id, artifact["artifact_id"])
    report = f"/api/analysis/turns/{turn.turn_id}/report"
    has_report = turn.report_md is not None
    return {
        "turn_id": turn.turn_id,
        "dataset_id": dataset_id,
        **form,
        "report_url": report if has_report else None,
        "report_zip_url": f"{report}?format=zip" if has_report else None,
    }


# --------------------------------------------------------------------------- datasets


@router.post("/datasets", status_code=201)
async def upload_dataset(
    context: Context,
    file: Annotated[UploadFile, File(description="CSV, TSV or Excel (xlsx, xlsm)")],
    sheet: Annotated[
        str | None, Form(max_length=100, description="Excel sheet name or 0-based index")
    ] = None,
    keep_total_rows: Annotated[
        bool,
        Form(description="Keep 合計/小計 rows as data (by default they are excluded, noted)"),
    ] = False,
) -> dict[str, Any]:
    """Load a file; its ``dataset_id`` and summary (rows, columns with kinds, notes such as
    excluded total rows)."""
    name, data = await read_upload(file, context.settings)
    sheet_choice: str | int | None = (
        int(sheet) if sheet and sheet.isascii() and sheet.isdigit() else sheet or None
    )
    agent = await run_in_threadpool(lambda: context.analysis)
    dataset_id = await run_in_threadpool(
        agent.load_bytes, data, name, sheet=sheet_choice, keep_total_rows=keep_total_rows
    )
    return {"dataset_id": dataset_id, "summary": agent.registry.summary(dataset_id)}


@router.get("/datasets/{dataset_id}")
def dataset(dataset_id: str, context: Context) -> dict[str, Any]:
    """A loaded dataset's summary (404 when this process does not hold it)."""
    return {"dataset_id": dataset_id, "summary": context.analysis.registry.summary(dataset_id)}


# --------------------------------------------------------------------------- turns


class TurnRequest(BaseModel):
    dataset_id: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    thread_id: str | None = Field(default=None, min_length=1, max_length=200)
    """Continue a conversation (e.g. answer the agent's question); none: a new thread."""


@router.post("/turns")
def ask(body: TurnRequest, context: Context, turns: Turns) -> dict[str, Any]:
    """One turn: the reply, questions, artifacts (figures as PNG URLs), the report."""
    agent = context.analysis
    agent.registry.summary(body.dataset_id)  # 404 before any work when unknown
    turn = agent.ask(body.question, dataset_id=body.dataset_id, thread_id=body.thread_id)
    turns.add(turn)
    return turn_response(turn, body.dataset_id)


def _figure(turn: TurnResult, artifact_id: str) -> Artifact | None:
    for artifact in [*turn.artifacts, *turn.report_artifacts]:
        if (
            artifact["artifact_id"] == artifact_id
            and artifact["kind"] == "figure"
            and isinstance(artifact["payload"], bytes)
        ):
            return artifact
    return None


@router.get(
    "/artifacts/{turn_id}/{artifact_id}.png",
    response_class=Response,
    responses={200: {"content": {FIGURE_MEDIA_TYPE: {}}, "description": "The figure (PNG)"}},
)
def figure(turn_id: str, artifact_id: str, turns: Turns) -> Response:
    """A figure of a recent turn, as PNG."""
    artifact = _figure(turns.get(turn_id), artifact_id)
    if artifact is None:
        raise not_found("図", "Figure", artifact_id)
    payload = artifact["payload"]
    assert isinstance(payload, bytes)
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
def report(turn_id: str, turns: Turns, format: Literal["md", "zip"] = "md") -> Response:
    """The report of a recent turn: ``report.md``, or a ZIP with its figures."""
    turn = turns.get(turn_id)
    if turn.report_md is None:
        raise ApiError(
            404,
            "REPORT_NOT_FOUND",
            "この回答にはレポートがありません",
            "This turn has no report",
            "「レポートにまとめて」と依頼すると、その回答からレポートをダウンロードできます",
            "Ask for a report; that turn's report can then be downloaded",
            {"turn_id": turn_id},
        )
    if format == "zip":
        return Response(
            report_zip(turn.report_md, turn.report_artifacts),
            media_type="application/zip",
            headers={"Content-Disposition": 'attachment; filename="report.zip"'},
        )
    return Response(
        turn.report_md.encode("utf-8"),
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{REPORT_FILE}"'},
    )
