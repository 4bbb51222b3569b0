"""Design drafts over HTTP: what a person is designing on the web 設計 page, kept in the
workspace (``services.plan_drafts``) so that a reload finds the instruction, the answers
and the generated Plan again.

    GET  /api/plans/drafts             the caller's drafts, the most recent first
    GET  /api/plans/drafts/{draft_id}  one draft and its Plan's steps in words (``outline``)
    PUT  /api/plans/drafts/{draft_id}  create it (the caller's) or change it (its owner
                                       or 管理者); fields left out keep their value

A draft is its owner's (``people.ownership``, kind ``design``): others see it only with
a role that oversees designs (管理者). Registered before ``routes.plans``, whose
``/{plan_id:path}`` would otherwise take these paths.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.security import caller, permit
from keiri_agent.people.roles import Person
from keiri_agent.services.plan_drafts import (
    MAX_ANSWERS,
    MAX_INSTRUCTION_CHARS,
    MAX_TITLE_CHARS,
    Draft,
    DraftChanges,
    PlanDrafts,
    check_draft_id,
    plan_outline,
)
from keiri_agent.workspace import Workspace

router = APIRouter(prefix="/api/plans/drafts", tags=["plans"])

Context = Annotated[ApiContext, Depends(get_context)]
KIND = "design"


class DraftBody(BaseModel):
    """What a save changes; a field left out (null) keeps the draft's value."""

    instruction: str | None = Field(default=None, max_length=MAX_INSTRUCTION_CHARS)
    answers: dict[str, Any] | None = Field(default=None, max_length=MAX_ANSWERS)
    """Answers to the generator's questions (requirement id → value)."""
    questions: list[dict[str, Any]] | None = Field(default=None, max_length=MAX_ANSWERS)
    """The questions asked so far for ``generated_instruction`` (the requirements)."""
    generated_instruction: str | None = Field(default=None, max_length=MAX_INSTRUCTION_CHARS)
    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    """The Plan's name: written into the YAML as its ``title``."""
    yaml: str | None = None
    result: dict[str, Any] | None = None
    """The last generation's result (``POST /api/plans/generate``), as shown."""
    clear_result: bool = False
    registered: dict[str, Any] | None = None
    """What ``POST /api/plans/register`` answered, once the Plan is registered."""
    clear_registered: bool = False


def _drafts(context: ApiContext) -> PlanDrafts:
    settings = context.settings
    return PlanDrafts(Workspace.from_settings(settings), keep_days=settings.storage.retention_days)


def _shown(draft: Draft) -> dict[str, Any]:
    return {**draft.to_dict(), "outline": plan_outline(draft.yaml)}


@router.get("")
def list_drafts(context: Context, person: Annotated[Person, Depends(caller)]) -> dict[str, Any]:
    """The caller's own drafts, the most recently changed first."""
    return {"drafts": [draft.summary() for draft in _drafts(context).of(person.login)]}


@router.get("/{draft_id}")
def show_draft(
    draft_id: str, context: Context, person: Annotated[Person, Depends(caller)]
) -> dict[str, Any]:
    """The draft with its Plan's steps in words (``outline``: null when there is no
    Plan yet, or its YAML does not load)."""
    draft = _drafts(context).get(check_draft_id(draft_id))
    context.ownership.check_see(person, draft.owner, KIND, draft_id)
    return _shown(draft)


@router.put("/{draft_id}")
def save_draft(
    draft_id: str,
    body: DraftBody,
    context: Context,
    person: Annotated[Person, Depends(permit("design"))],
) -> dict[str, Any]:
    """Create the draft (the caller's) or change it (its owner or 管理者)."""
    drafts = _drafts(context)
    existing = drafts.find(check_draft_id(draft_id))
    if existing is not None:
        context.ownership.check_see(person, existing.owner, KIND, draft_id)
        context.ownership.check_act(person, existing.owner, KIND, draft_id)
    changes = DraftChanges(**body.model_dump())
    return _shown(drafts.save(draft_id, person.login, changes))
