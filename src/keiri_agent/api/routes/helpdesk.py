"""HelpDesk: ask a question (answer JSON, or its progress as SSE), and manage a
knowledge base (status, upload manuals or FAQ CSVs, index the bundled sample, remove).

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
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Path, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import not_found
from keiri_agent.api.uploads import read_upload
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event, utc_timestamp
from keiri_agent.services.jobs import Job
from keiri_agent.services.jsonforms import helpdesk_answer_json, index_reports_json, json_value

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.models import AgentResult

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/helpdesk", tags=["helpdesk"])

Context = Annotated[ApiContext, Depends(get_context)]
Collection = Literal["manual", "qa"]
"""``manual``: manuals (PDF, Markdown, DOCX, TXT, XLSX); ``qa``: FAQ CSVs."""

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


def _wants_stream(body: AskRequest, request: Request) -> bool:
    return body.stream or sse.MEDIA_TYPE in request.headers.get("accept", "")


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
    if not _wants_stream(body, request):
        await asyncio.to_thread(job.wait)
        return helpdesk_answer_json(job.result())
    # the response starts with the first event: a failure before it (an empty knowledge
    # base) is answered with its own status instead of a stream holding only an error
    first = await asyncio.to_thread(job.next_events, 0, None)
    if not first and job.error is not None:
        job.result()  # re-raises: rendered by api.errors
    heartbeat = context.settings.api_heartbeat_s
    return sse.stream(_ask_events(job, first, heartbeat), heartbeat)


async def _ask_events(
    job: Job[AgentResult], first: list[Event], heartbeat_s: float
) -> AsyncIterator[Event | None]:
    """The job's events as they arrive, then ``result`` (the answer JSON) or ``error``,
    numbered next. Not ``answer``: the agent's own last event is already called so
    (answer text and sources only)."""
    batch, position, last = first, 0, None
    while True:
        for event in batch:
            yield event
            last = event
        position += len(batch)
        if job.done and position >= len(job.events()):
            break
        batch = await asyncio.to_thread(job.next_events, position, heartbeat_s)
        if not batch:
            yield None  # nothing new: lets sse.stream send a heartbeat
    seq = last.seq + 1 if last is not None else 1
    run_id = last.run_id if last is not None else ""
    try:
        result = job.result()
    except KeiriAgentError as error:
        payload = {"error": json_value(error.to_dict())}
        kind = "error"
    except Exception:  # logged here; the client gets the API's generic error
        log.exception("helpdesk ask failed")
        payload = {
            "error": {
                "code": "INTERNAL_ERROR",
                "message": "サーバーで予期しないエラーが発生しました",
                "hint": "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください",
                "details": {},
            }
        }
        kind = "error"
    else:
        payload, kind, run_id = helpdesk_answer_json(result), "result", result.run_id
    yield Event("helpdesk", kind, run_id, seq, utc_timestamp(), payload)


# --------------------------------------------------------------------------- knowledge base


@router.get("/kb/{kb}")
def knowledge_base_status(kb: KbName, context: Context) -> dict[str, Any]:
    """What is indexed: per collection its numbers (``stats``), its ``documents`` and how
    it is searched (``retrievers``: keyword / vector / hybrid and why not vectors)."""
    from keiri_agent.services.knowledge import knowledge_status

    return {"kb": kb, **knowledge_status(context.helpdesk(kb))}


@router.post("/kb/{kb}/documents")
async def upload_documents(
    kb: KbName,
    context: Context,
    files: Annotated[list[UploadFile], File(description="Manual files, or FAQ CSVs for qa")],
    collection: Annotated[Collection, Form()] = "manual",
) -> dict[str, Any]:
    """Index uploaded manuals (``collection=manual``) or FAQ CSVs (``qa``); changed
    documents only. The report per collection lists added, updated, unchanged and
    failed documents (a failed one: ``failed`` with its reason; the others are indexed)."""
    from keiri_agent.services.knowledge import index_knowledge

    desk = await run_in_threadpool(context.helpdesk, kb)
    uploads = [await read_upload(file, context.settings) for file in files]
    manuals, faqs = (uploads, []) if collection == "manual" else ([], uploads)
    reports = await run_in_threadpool(
        lambda: index_knowledge(desk, uploads=manuals, qa_uploads=faqs)
    )
    return index_reports_json(reports)


@router.post("/kb/{kb}/sample")
def index_sample(kb: KbName, context: Context) -> dict[str, Any]:
    """Index the bundled XYZ system manual and FAQ into the knowledge base."""
    from keiri_agent.services.knowledge import index_knowledge

    return index_reports_json(index_knowledge(context.helpdesk(kb), sample=True))


@router.delete("/kb/{kb}/documents/{name}")
def remove_document(
    kb: KbName, name: str, context: Context, collection: Collection = "manual"
) -> dict[str, Any]:
    """Remove a document (by its name, as the status lists it) from a collection."""
    report = context.helpdesk(kb).remove([name], collection)
    if not report.removed:
        raise not_found("文書", "Document", name)
    return report.to_dict()
