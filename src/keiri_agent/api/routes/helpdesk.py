"""HelpDesk: ask a question (answer JSON, or its progress as SSE), and manage a
knowledge base (status, upload manuals or FAQs, index the bundled sample, remove).

The same operations as ``keiri-agent helpdesk`` and the ヘルプデスク page:
``HelpDesk.ask``, ``services.knowledge.index_knowledge`` / ``knowledge_status``,
``HelpDesk.remove``; answers in ``jsonforms.helpdesk_answer_json``. An ask and an
indexing are runs of the run service (``runs.helpdesk_kind``, ``runs.index_kind``),
executed by this process's threads or a worker, never on the event loop; uploads are
staged in the workspace for the worker (``services.staged_uploads``). Knowledge-base names
are checked by ``KnowledgeBase`` (letters, digits, ``_`` and ``-``: a name never
leads out of ``.keiri/knowledge``); document names are only looked up in the
manifest, never opened as paths; uploads are written by ``index_knowledge`` under
their safe base names into a temporary folder.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Path, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import not_found
from keiri_agent.api.run_answers import (
    INDEX_RESPONSES,
    answer_run,
    start_and_answer,
    wants_stream,
)
from keiri_agent.api.security import caller, permit
from keiri_agent.api.uploads import read_upload
from keiri_agent.people.roles import Person
from keiri_agent.runs import helpdesk_kind, index_kind
from keiri_agent.runs.records import MAX_QUESTION_CHARS, iso
from keiri_agent.runs.service import new_run_id
from keiri_agent.services.staged_uploads import StagedUploads, Upload
from keiri_agent.workspace import Workspace

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/helpdesk", tags=["helpdesk"])

Context = Annotated[ApiContext, Depends(get_context)]
Asker = Annotated[Person, Depends(permit("run"))]
Designer = Annotated[Person, Depends(permit("design"))]
Collection = Literal["manual", "qa"]
"""``manual``: manuals (PDF, Markdown, DOCX, TXT, XLSX); ``qa``: FAQs (CSV, XLSX)."""

KbName = Annotated[
    str, Path(description="Knowledge base name: letters, digits, '_' and '-' (at most 64)")
]


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    kb: str = Field(default="helpdesk", min_length=1, max_length=64)
    """The knowledge base to search (one per system)."""
    stream: bool = False
    """True (or ``Accept: text/event-stream``): the run's events as SSE, then ``result``."""


@router.post(
    "/ask",
    responses={
        200: {
            "description": "The answer (JSON), or with stream the run's events as SSE "
            "ending with a `result` event holding the answer JSON (or `error`)",
            "content": {"application/json": {}, sse.MEDIA_TYPE: {}},
        }
    },
)
async def ask(body: AskRequest, request: Request, context: Context, person: Asker) -> Any:
    """Answer a question: plan, search each part in parallel, check, cite sources (the
    answer, a run, is the asker's)."""
    inputs = helpdesk_kind.ask_inputs(body.question, body.kb)
    desk = await run_in_threadpool(context.helpdesk, inputs["kb"])
    await run_in_threadpool(desk.check_ready)  # a 400 now, not a failed run
    return await start_and_answer(
        context,
        helpdesk_kind.KIND,
        subject=inputs["kb"],
        title=inputs["question"],
        inputs=inputs,
        streaming=wants_stream(body.stream, request.headers.get("accept", "")),
        owner=person.login,
    )


@router.get("/answers")
def recent_answers(
    context: Context,
    person: Annotated[Person, Depends(caller)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """The caller's recent questions (and those their role shows), newest first: the
    answer's ``run_id`` (``GET /api/runs/{run_id}`` gives it again), the question, the
    knowledge base, the status and when it was asked."""
    ownership = context.ownership
    found = [
        run
        for run in context.runs.store.find(kind=helpdesk_kind.KIND, limit=max(limit * 10, 200))
        if ownership.may_see(person, run.owner, helpdesk_kind.KIND)
    ][:limit]
    return {
        "answers": [
            {
                "run_id": run.run_id,
                "question": run.title,
                "kb": run.subject,
                "status": run.status,
                "asked_at": iso(run.created_at),
                "asked_by": run.owner,
            }
            for run in found
        ]
    }


# --------------------------------------------------------------------------- knowledge base


@router.get("/kb/{kb}")
def knowledge_base_status(kb: KbName, context: Context) -> dict[str, Any]:
    """What is indexed: per collection its numbers (``stats``), its ``documents`` and how
    it is searched (``retrievers``: keyword / vector / hybrid and why not vectors)."""
    from keiri_agent.services.knowledge import knowledge_status

    return {"kb": kb, **knowledge_status(context.helpdesk(kb))}


@router.post("/kb/{kb}/documents", responses=INDEX_RESPONSES)
async def upload_documents(
    kb: KbName,
    context: Context,
    request: Request,
    person: Designer,
    files: Annotated[
        list[UploadFile], File(description="Manual files, or FAQ files (CSV, XLSX) for qa")
    ],
    collection: Annotated[Collection, Form()] = "manual",
    stream: bool = False,
) -> Any:
    """Index uploaded manuals (``collection=manual``) or FAQs (``qa``); changed
    documents only. The report per collection lists added, updated, unchanged and
    failed documents (a failed one: ``failed`` with its reason; the others are indexed).
    The upload (names and SHA-256) is written to the audit trail."""
    uploads = [await read_upload(file, context.settings) for file in files]
    streaming = wants_stream(stream, request.headers.get("accept", ""))
    return await _index(context, kb, collection, uploads, streaming, person)


@router.post("/kb/{kb}/sample", responses=INDEX_RESPONSES)
async def index_sample(
    kb: KbName, context: Context, request: Request, person: Designer, stream: bool = False
) -> Any:
    """Index the bundled XYZ system manual and FAQ into the knowledge base."""
    streaming = wants_stream(stream, request.headers.get("accept", ""))
    return await _index(context, kb, "manual", [], streaming, person)


async def _index(
    context: ApiContext,
    kb: str,
    collection: Collection,
    uploads: list[Upload],
    streaming: bool,
    person: Person,
) -> Any:
    """Index ``uploads`` (none: the bundled sample) as a run of ``person``: its reports
    as JSON, or its progress as SSE."""
    from keiri_agent.search.knowledge_base import check_name

    check_name(kb, "ナレッジベース")
    if uploads:
        await run_in_threadpool(
            context.audit.append,
            person.login,
            "file_uploaded",
            kb,
            {"purpose": "knowledge_base", "collection": collection, "files": _digests(uploads)},
        )
    run_id = new_run_id()
    staged = StagedUploads(Workspace.from_settings(context.settings))
    inputs = {
        "kb": kb,
        "collection": collection,
        "sample": not uploads,
        "files": await run_in_threadpool(staged.stage, run_id, uploads),
    }
    try:
        run = await run_in_threadpool(
            context.runs.start,
            index_kind.HELPDESK_INDEX,
            subject=kb,
            title=f"資料の登録（{kb}）",
            inputs=inputs,
            owner=person.login,
            run_id=run_id,
        )
    except BaseException:
        staged.discard(run_id)
        raise
    return await answer_run(context, run, streaming)


def _digests(uploads: list[Upload]) -> list[dict[str, str]]:
    return [{"name": name, "sha256": hashlib.sha256(data).hexdigest()} for name, data in uploads]


@router.delete("/kb/{kb}/documents/{name}", dependencies=[Depends(permit("design"))])
def remove_document(
    kb: KbName, name: str, context: Context, collection: Collection = "manual"
) -> dict[str, Any]:
    """Remove a document (by its name, as the status lists it) from a collection."""
    report = context.helpdesk(kb).remove([name], collection)
    if not report.removed:
        raise not_found("文書", "Document", name)
    return report.to_dict()
