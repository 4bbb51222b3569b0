"""Deep research (seed 004): start a run, stream its events (SSE, resumable), read its
final state, list and delete a session's notes. Runs execute in the server's worker
threads (``services.research_runs``), never inside a request."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from keiri_agent.api import sse
from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import not_found
from keiri_agent.api.owned import acted_run, continued_subject, seen_run, seen_subject
from keiri_agent.api.run_answers import INDEX_RESPONSES, start_and_answer, wants_stream
from keiri_agent.api.run_starts import count_run_start
from keiri_agent.api.security import caller, permit
from keiri_agent.people.roles import Person
from keiri_agent.runs.index_kind import RESEARCH_INDEX
from keiri_agent.services.research_runs import MAX_QUESTION_CHARS, RunRecord

router = APIRouter(prefix="/api/research", tags=["research"])

Context = Annotated[ApiContext, Depends(get_context)]
Caller = Annotated[Person, Depends(caller)]
Researcher = Annotated[Person, Depends(permit("run"))]


class ResearchRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    session_id: str | None = Field(default=None, max_length=128)
    """Continue a session (its notes are reused); empty: a new session."""
    kb: list[str] = Field(default_factory=list, max_length=20)
    """Knowledge bases to search (``GET /api/research/knowledge-bases``); empty: every
    indexed one but the sample; the sample (``research``): the sample alone."""


class ResearchRun(BaseModel):
    run_id: str
    session_id: str
    question: str
    kb_names: list[str]
    owner: str
    """The login of who started it."""
    status: str
    """queued, running, success, failed or cancelled."""
    result: dict[str, Any] | None
    """The report, numbered sources, notes and limitations once it succeeded."""
    error: dict[str, Any] | None
    last_event_id: int
    created_at: str
    updated_at: str
    events_url: str


def run_json(record: RunRecord) -> ResearchRun:
    return ResearchRun(**record.to_dict(), events_url=f"/api/research/{record.run_id}/events")


def _record(context: ApiContext, run_id: str, person: Person) -> RunRecord:
    seen_run(context, person, run_id)
    record = context.research_runs.get(run_id)
    if record is None:
        raise not_found("調査", "Research run", run_id)
    return record


@router.post(
    "",
    response_model=ResearchRun,
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[Depends(count_run_start)],
)
def start_research(body: ResearchRequest, context: Context, person: Researcher) -> ResearchRun:
    """Start a research run; follow it at ``events_url``. Continuing a session is for
    whoever started it (or 管理者)."""
    if body.session_id:
        continued_subject(context, person, "research", body.session_id)
    record = context.research_runs.start(
        body.question, session_id=body.session_id, kb_names=body.kb, owner=person.login
    )
    return run_json(record)


@router.post("/sample", responses=INDEX_RESPONSES)
async def index_research_sample(
    context: Context,
    request: Request,
    person: Annotated[Person, Depends(permit("design"))],
    stream: bool = False,
) -> Any:
    """Index the bundled research corpus (a fictional company's documents) into the
    knowledge base ``research`` (changed files only). A run searches it only when ``kb``
    names it, and then nothing else (what ``keiri-agent research --sample`` does). With
    ``stream=true`` (or ``Accept: text/event-stream``): its progress as SSE, then
    ``result`` holding the same JSON."""
    from keiri_agent.services.research import SAMPLE_KB

    return await start_and_answer(
        context,
        RESEARCH_INDEX,
        subject=SAMPLE_KB,
        title="サンプル資料の登録",
        inputs={},
        streaming=wants_stream(stream, request.headers.get("accept", "")),
        owner=person.login,
    )


class KnowledgeBaseItem(BaseModel):
    name: str
    """What ``kb`` takes."""
    label: str
    """How a page shows it (the sample: in words, not its name)."""
    sample: bool
    """The bundled sample corpus: searched only when chosen, and then alone."""


class SampleInfo(BaseModel):
    name: str
    label: str
    notice: str
    """What a page says when the sample is chosen."""
    indexed: bool


class KnowledgeBases(BaseModel):
    knowledge_bases: list[KnowledgeBaseItem]
    """The indexed knowledge bases, by name; none chosen = every one but the sample."""
    sample: SampleInfo


@router.get("/knowledge-bases", response_model=KnowledgeBases)
def knowledge_bases(context: Context) -> KnowledgeBases:
    """The knowledge bases a run can search (``kb``), and the bundled sample."""
    from keiri_agent.services.research import SAMPLE_KB, SAMPLE_NOTICE, SAMPLE_SOURCE_NAME

    choices = context.research.knowledge_bases()
    return KnowledgeBases(
        knowledge_bases=[
            KnowledgeBaseItem(name=choice.name, label=choice.label, sample=choice.sample)
            for choice in choices
        ],
        sample=SampleInfo(
            name=SAMPLE_KB,
            label=SAMPLE_SOURCE_NAME,
            notice=SAMPLE_NOTICE,
            indexed=any(choice.sample for choice in choices),
        ),
    )


@router.get("/sessions/{session_id}/notes")
def session_notes(session_id: str, context: Context, person: Caller) -> dict[str, Any]:
    """The notes of a session, in step order."""
    from keiri_agent.services.jsonforms import research_note_json

    seen_subject(context, person, "research", session_id)
    notes = context.research.notes(session_id)
    return {"session_id": session_id, "notes": [research_note_json(note) for note in notes]}


@router.delete("/sessions/{session_id}/notes")
def delete_session_notes(session_id: str, context: Context, person: Researcher) -> dict[str, Any]:
    """Delete every note of a session (its owner or 管理者)."""
    continued_subject(context, person, "research", session_id)
    return {"session_id": session_id, "deleted": context.research.delete_session(session_id)}


@router.get("/sessions")
def sessions(context: Context, person: Caller) -> dict[str, Any]:
    """Sessions with notes the caller may see, newest first, with who started each."""
    found = []
    for session_id, count, last in context.research.sessions():
        owner = context.runs.subject_owner("research", session_id) or ""
        if context.ownership.may_see(person, owner, "research"):
            found.append(
                {
                    "session_id": session_id,
                    "owner": owner,
                    "notes": count,
                    "last_note_at": last.isoformat(),
                }
            )
    return {"sessions": found}


@router.get("/{run_id}", response_model=ResearchRun)
def research_run(run_id: str, context: Context, person: Caller) -> ResearchRun:
    """A run's state; its result once it succeeded."""
    return run_json(_record(context, run_id, person))


@router.post("/{run_id}/cancel", response_model=ResearchRun)
def cancel_research(run_id: str, context: Context, person: Researcher) -> ResearchRun:
    """Ask a run to stop (it ends with a ``cancelled`` event); its owner or 管理者."""
    _record(context, run_id, person)
    acted_run(context, person, run_id)
    record = context.research_runs.cancel(run_id)
    assert record is not None
    return run_json(record)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses=sse.RESPONSES,
)
def research_events(
    run_id: str,
    request: Request,
    context: Context,
    person: Caller,
    last_event_id: sse.LastEventIdQuery = None,
) -> StreamingResponse:
    """The run's events as SSE; ``Last-Event-ID`` (header or query) resumes after it."""
    _record(context, run_id, person)
    after = sse.last_event_id(request, last_event_id)
    events = context.research_runs.follow(run_id, after)
    return sse.stream(events, context.settings.api.api_heartbeat_s)
