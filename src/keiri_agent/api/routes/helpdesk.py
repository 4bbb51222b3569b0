"""HelpDesk: ask a question (answer JSON, or its progress as SSE), and manage a
knowledge base (status, upload manuals or FAQs, index the bundled sample, remove).

The same operations as ``keiri-agent helpdesk`` and the ヘルプデスク page:
``HelpDesk.ask``, ``services.knowledge.index_knowledge`` / ``knowledge_status``,
``HelpDesk.remove``; answers in ``jsonforms.helpdesk_answer_json``. An ask runs in a
worker thread (``services.jobs.Job``), never on the event loop. Knowledge-base names
are checked by ``KnowledgeBase`` (letters, digits, ``_`` and ``-``: a name never
leads out of ``.keiri/knowledge``); document names are only looked up in the
manifest, never opened as paths; uploads are written by ``index_knowledge`` under
their safe base names into a temporary folder.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Path, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import not_found
from keiri_agent.api.job_stream import INDEX_RESPONSES, indexing_job, stream_job, wants_stream
from keiri_agent.api.uploads import read_upload
from keiri_agent.services.jobs import Job
from keiri_agent.services.jsonforms import helpdesk_answer_json, index_reports_json

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.models import AgentResult
    from keiri_agent.search.knowledge_base import IndexReport, ProgressCallback

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/helpdesk", tags=["helpdesk"])

Context = Annotated[ApiContext, Depends(get_context)]
Collection = Literal["manual", "qa"]
"""``manual``: manuals (PDF, Markdown, DOCX, TXT, XLSX); ``qa``: FAQs (CSV, XLSX)."""

MAX_QUESTION_CHARS = 4000
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
async def ask(body: AskRequest, request: Request, context: Context) -> Any:
    """Answer a question: plan, search each part in parallel, check, cite sources."""
    desk = await run_in_threadpool(context.helpdesk, body.kb)
    question = body.question
    job: Job[AgentResult] = Job(
        lambda emit: desk.ask(question, on_event=emit), name="helpdesk-ask"
    ).start()
    if not wants_stream(body.stream, request.headers.get("accept", "")):
        await asyncio.to_thread(job.wait)
        return helpdesk_answer_json(job.result())
    # not ``answer``: the agent's own last event is already called so (text and sources)
    return await stream_job(
        job,
        context.settings.api.api_heartbeat_s,
        source="helpdesk",
        result_json=helpdesk_answer_json,
        run_id=lambda result: result.run_id,
    )


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
    files: Annotated[
        list[UploadFile], File(description="Manual files, or FAQ files (CSV, XLSX) for qa")
    ],
    collection: Annotated[Collection, Form()] = "manual",
    stream: bool = False,
) -> Any:
    """Index uploaded manuals (``collection=manual``) or FAQs (``qa``); changed
    documents only. The report per collection lists added, updated, unchanged and
    failed documents (a failed one: ``failed`` with its reason; the others are indexed)."""
    from keiri_agent.services.knowledge import index_knowledge

    desk = await run_in_threadpool(context.helpdesk, kb)
    uploads = [await read_upload(file, context.settings) for file in files]
    manuals, faqs = (uploads, []) if collection == "manual" else ([], uploads)
    return await _indexed(
        lambda on_progress: index_knowledge(
            desk, uploads=manuals, qa_uploads=faqs, on_progress=on_progress
        ),
        wants_stream(stream, request.headers.get("accept", "")),
        context,
    )


@router.post("/kb/{kb}/sample", responses=INDEX_RESPONSES)
async def index_sample(kb: KbName, context: Context, request: Request, stream: bool = False) -> Any:
    """Index the bundled XYZ system manual and FAQ into the knowledge base."""
    from keiri_agent.services.knowledge import index_knowledge

    desk = await run_in_threadpool(context.helpdesk, kb)
    return await _indexed(
        lambda on_progress: index_knowledge(desk, sample=True, on_progress=on_progress),
        wants_stream(stream, request.headers.get("accept", "")),
        context,
    )


async def _indexed(
    index: Callable[[ProgressCallback], dict[str, IndexReport]],
    streaming: bool,
    context: ApiContext,
) -> Any:
    """Run ``index`` in a worker: its reports as JSON, or its progress as SSE."""
    job = indexing_job("helpdesk", index)
    if not streaming:
        await asyncio.to_thread(job.wait)
        return index_reports_json(job.result())
    return await stream_job(
        job, context.settings.api.api_heartbeat_s, source="helpdesk", result_json=index_reports_json
    )


@router.delete("/kb/{kb}/documents/{name}")
def remove_document(
    kb: KbName, name: str, context: Context, collection: Collection = "manual"
) -> dict[str, Any]:
    """Remove a document (by its name, as the status lists it) from a collection."""
    report = context.helpdesk(kb).remove([name], collection)
    if not report.removed:
        raise not_found("文書", "Document", name)
    return report.to_dict()
