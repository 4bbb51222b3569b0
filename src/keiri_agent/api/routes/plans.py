"""Plans: list, show (YAML, summary, the inputs a run asks), validate, dry-run,
generate and register — the 設計 page's and ``keiri-agent plan`` commands' work over
the same ``PlanEngine`` and ``DesignService``. Runs are in ``routes.plan_runs``.

Plan ids are ids under ``designs/`` only (``services.plan_inputs.locate_plan_id``):
a path, ``..`` or a ``.yaml`` name is refused (400 PLAN_PATH) before any file is read.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import ApiError
from keiri_agent.api.security import permit
from keiri_agent.errors import UserInputError
from keiri_agent.people.roles import Person
from keiri_agent.plans.dsl.loader import check_plan_text, load_plan_file
from keiri_agent.plans.dsl.models import BlockNode, Plan
from keiri_agent.services.jsonforms import (
    dry_run_json,
    generated_plan_json,
    json_value,
    validation_json,
)
from keiri_agent.services.plan_diagram import plan_diagram
from keiri_agent.services.plan_inputs import asked_inputs, locate_plan_id, read_plan_text

router = APIRouter(prefix="/api/plans", tags=["plans"])

Context = Annotated[ApiContext, Depends(get_context)]

MAX_INSTRUCTION_CHARS = 4000


class PlanSource(BaseModel):
    """A registered plan (``plan_id``) or a plan's YAML text (``yaml``): exactly one."""

    plan_id: str | None = Field(default=None, max_length=300)
    yaml: str | None = Field(default=None)
    vars: dict[str, Any] = Field(default_factory=dict)
    """Values for the plan's vars (dry-run only)."""


class SampleFile(BaseModel):
    name: str = Field(min_length=1, max_length=255)
    """The file's name (its extension says CSV or Excel)."""
    base64: str
    """Its bytes in base64."""


class GenerateRequest(BaseModel):
    instruction: str = Field(min_length=1, max_length=MAX_INSTRUCTION_CHARS)
    templates: list[str] = Field(default_factory=list, max_length=20)
    mode: str = Field(default="hint", max_length=20)
    """How templates are used: ``hint`` (the model reads them) or ``compose``."""
    pinned: list[str] = Field(default_factory=list, max_length=50)
    """Blocks always offered to the model."""
    fallback: bool | None = None
    """Compose offline when the model fails; null: the server's setting."""
    plan_id: str | None = Field(default=None, max_length=200)
    answers: dict[str, Any] = Field(default_factory=dict, max_length=100)
    """Answers to the questions of an earlier generation of the same instruction
    (requirement id → value): the Design chat over the API, one request per turn."""
    samples: list[SampleFile] = Field(default_factory=list, max_length=5)
    """Sample CSV / Excel files like the ones the Plan will get: a question about a
    column offers their columns as choices (``plan design --sample``)."""


class RegisterRequest(BaseModel):
    yaml: str = Field(min_length=1)
    accept_major: bool = False
    """Register even when it changes what callers may rely on (a major version, removed
    vars or exports); otherwise 400 BREAKING_CHANGE listing the changes."""


def _summary(plan: Plan) -> dict[str, Any]:
    return {
        "id": plan.id,
        "title": plan.title,
        "version": plan.version,
        "description": plan.description,
        "nodes": [
            {
                "id": node.id,
                "title": node.title,
                "type": node.type,
                "block": node.block if isinstance(node, BlockNode) else None,
            }
            for node in plan.graph
        ],
        "exports": [export.name for export in plan.exports],
    }


def _plan(context: ApiContext, source: PlanSource) -> Plan:
    """The Plan a request names; 400 for text that is not a loadable plan."""
    _exactly_one(source)
    if source.plan_id is not None:
        return load_plan_file(locate_plan_id(context.plans.store, source.plan_id))
    loaded = check_plan_text(source.yaml or "")
    if loaded.plan is None:
        raise UserInputError(
            "Plan の YAML を読み込めません",
            code="PLAN_INVALID",
            hint="POST /api/plans/validate で問題の箇所を確認して直してください",
            details={"issues": [issue.to_dict() for issue in loaded.issues]},
        )
    return loaded.plan


def _exactly_one(source: PlanSource) -> None:
    if (source.plan_id is None) == (source.yaml is None):
        raise ApiError(
            400,
            "PLAN_SOURCE_REQUIRED",
            "plan_id か yaml のどちらか一方を指定してください",
            "Give exactly one of plan_id or yaml",
            "登録済みの Plan なら plan_id、編集中の Plan なら yaml に本文を入れます",
            "plan_id for a registered plan, yaml for a plan's text",
        )


@router.get("")
def list_plans(context: Context) -> dict[str, Any]:
    """The registered plans: each id with its files (versions), newest version's
    number, title (its id when it has none) and description (``error`` when that file
    does not load)."""
    store = context.plans.store
    grouped: dict[str, list[Any]] = {}
    for entry in store.list():
        grouped.setdefault(entry.plan_id, []).append(entry)
    plans = []
    for plan_id, entries in grouped.items():
        item: dict[str, Any] = {
            "plan_id": plan_id,
            "files": [
                {
                    "file_id": entry.file_id,
                    "registered_at": entry.registered_at.isoformat()
                    if entry.registered_at
                    else None,
                }
                for entry in entries
            ],
            "version": None,
            "title": plan_id,
            "description": None,
            "error": None,
        }
        try:
            plan = load_plan_file(locate_plan_id(store, plan_id))
            item.update(
                version=plan.version, title=plan.title or plan_id, description=plan.description
            )
        except UserInputError as error:
            item["error"] = json_value(error.to_dict())
        plans.append(item)
    return {"plans": plans}


@router.post("/validate")
def validate_plan(body: PlanSource, context: Context) -> dict[str, Any]:
    """Every problem of the plan (YAML, schema, plan rules), as ``plan validate --json``."""
    _exactly_one(body)
    if body.plan_id is not None:
        report = context.plans.check(locate_plan_id(context.plans.store, body.plan_id))
    else:
        report = context.plans.check(body.yaml or "")
    return validation_json(report)


@router.post("/dry-run")
def dry_run_plan(body: PlanSource, context: Context) -> dict[str, Any]:
    """The plan walked with declared samples only (no block runs), as ``plan dry-run
    --json``; 400 when the text does not load as a plan."""
    return dry_run_json(context.plans.dry_run(_plan(context, body), vars=body.vars))


@router.post("/generate", dependencies=[Depends(permit("design"))])
def generate_plan(body: GenerateRequest, context: Context) -> dict[str, Any]:
    """A generated, checked Plan (``plan generate --json``): its YAML, issues
    (``validation``), dry run, build requirements and ``verdict``; with ``answers`` the
    questions the same instruction leaves open are answered and the Plan judged again
    (``plan design --answers``); ``diagram``: its steps and their connections (null
    without a Plan)."""
    from keiri_agent.services.design import DesignRequest

    request = DesignRequest(
        instruction=body.instruction,
        templates=tuple(body.templates),
        apply_mode=body.mode,
        pinned=tuple(body.pinned),
        fallback=body.fallback,
        plan_id=body.plan_id,
        samples=[_sample(item, context) for item in body.samples],
    )
    generation = context.design.generate(request)
    result = generation.result
    if body.answers and result.verdict == "needs_answers":
        result = context.design.settle(request, result, body.answers)
    diagram = plan_diagram(result.plan) if result.plan is not None else None
    return {
        **generated_plan_json(result),
        "diagram": diagram,
        "seconds": round(generation.seconds, 3),
    }


def _sample(item: SampleFile, context: ApiContext) -> tuple[str, bytes]:
    """A sample file's name and bytes; 400 for base64 that does not decode or a file
    over the upload limit."""
    import base64
    import binascii

    try:
        data = base64.b64decode(item.base64, validate=True)
    except (binascii.Error, ValueError):
        raise UserInputError(
            f"見本のファイル「{item.name}」を読み取れません（base64 が正しくありません）",
            code="DESIGN_SAMPLE_INVALID",
            hint="ファイルの中身を base64 で送ってください",
            details={"name": item.name},
        ) from None
    limit_mb = context.settings.inputs.max_upload_mb
    if len(data) > limit_mb * 1024 * 1024:
        raise UserInputError(
            f"見本のファイル「{item.name}」が大きすぎます（上限 {limit_mb} MB）",
            code="DESIGN_SAMPLE_TOO_LARGE",
            hint="先頭の数十行だけを残した見本のファイルを送ってください（列の見出しが分かれば十分です）",
            details={"name": item.name, "limit_mb": limit_mb},
        )
    return item.name, data


@router.post("/register")
def register_plan(
    body: RegisterRequest,
    context: Context,
    person: Annotated[Person, Depends(permit("design"))],
) -> dict[str, Any]:
    """Save a valid Plan as a new version (``designs/<id>_<yyyymmddHHMM>.yaml``) with the
    ``warnings`` of what changed since the previous one; 400 DESIGN_NOT_VALID listing
    the errors, or BREAKING_CHANGE listing the changes callers may rely on (send
    ``accept_major`` to register anyway)."""
    design = context.design
    registered = design.register(body.yaml, accept_major=body.accept_major)
    plan = load_plan_file(registered.path)
    context.audit.append(
        person.login,
        "plan_registered",
        plan.id,
        registered.audit_details(design.file_id(registered.path), plan.version),
    )
    return {
        "plan_id": plan.id,
        "version": plan.version,
        "file_id": design.file_id(registered.path),
        "warnings": registered.warnings,
    }


@router.get("/{plan_id:path}")
def show_plan(plan_id: str, context: Context) -> dict[str, Any]:
    """A plan's YAML, its summary, what a run asks (vars, interactive inputs) and its
    ``diagram``: the steps in words and their connections."""
    store = context.plans.store
    path, text = read_plan_text(store, locate_plan_id(store, plan_id))
    plan = load_plan_file(path)
    return {
        "plan_id": plan.id,
        "file_id": path.relative_to(store.designs_dir).with_suffix("").as_posix(),
        "yaml": text,
        "summary": json_value(_summary(plan)),
        "inputs": json_value(asked_inputs(plan)),
        "diagram": plan_diagram(plan),
    }
