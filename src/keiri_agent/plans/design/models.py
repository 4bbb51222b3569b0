"""Plan generation (seed 003): the types its parts share.

The parts of ``plans.design`` (documents, retrieval, templates, compose, the
generator, requirements) exchange these values; the surfaces (CLI, 設計 page, API)
render them. Nothing here calls a model or reads a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:
    from keiri_agent.config import DesignSettings
    from keiri_agent.plans.check.dry_run_report import DryRunReport
    from keiri_agent.plans.design.coverage import CoverageReport
    from keiri_agent.plans.design.procedure import Gap, Procedure
    from keiri_agent.plans.dsl.models import Plan
    from keiri_agent.plans.issues import ValidationReport

ApplyMode = Literal["hint", "compose", "llm-only"]
APPLY_MODES: tuple[str, ...] = ("hint", "compose", "llm-only")
RetrievalMethod = Literal["bm25", "embedding", "hybrid"]

NO_DOCUMENTS = "no documents provided"
"""What the prompt says in place of the documents when none could be read (seed §2)."""

TEMPLATE_ID = re.compile(r"^[a-z][a-z0-9_]{0,48}$")
"""Template ids: short snake case, so ``<template_id>__<node_id>`` stays a node id."""

TEMPLATE_PORT_TYPES: tuple[str, ...] = (
    "table",  # a list of records (objects)
    "file",  # one file: bytes or {name, data}
    "files",  # a list of files
    "evidence",  # file.parse_zip_2tier's evidence (folders of documents)
    "text",
    "number",
    "boolean",
    "object",
    "list",
    "any",
)
"""The logical types of template imports and exports (compatible when equal or ``any``)."""


@dataclass(frozen=True)
class DesignEngineOptions:
    """The generator's options (seed §インタフェース定義, names as the seed gives them)."""

    suggest_when: bool = True
    """Let the model add ``when`` conditions (else the prompt asks for none)."""
    suggest_foreach: bool = True
    """Let the model add ``foreach`` loops."""
    foreach_var_name: str = "item"
    """The loop variable name generated loops use (``foreach.itemVar``)."""
    topk_per_category: int = 6
    topk_total: int = 30
    max_docs_chars: int = 4_000
    max_attempts: int = 2
    """Self-repair rounds after the first attempt (0: no repair)."""
    pinned_blocks: tuple[str, ...] = ()
    """Blocks the user pinned: always candidates, always shown to the model."""
    fallback: bool = False
    """Return a safe fallback Plan when the LLM fails (KEIRI_AGENT_LLM_FALLBACK)."""
    max_output_tokens: int = 4_000

    @classmethod
    def from_settings(cls, design: DesignSettings, **overrides: Any) -> DesignEngineOptions:
        options = cls(
            topk_per_category=design.design_topk_per_category,
            topk_total=design.design_topk_total,
            max_docs_chars=design.design_max_docs_chars,
            max_attempts=design.design_max_attempts,
            fallback=design.llm_fallback,
            max_output_tokens=design.design_max_output_tokens,
        )
        return replace(options, **overrides)


@dataclass(frozen=True)
class DesignDocument:
    """One reference document after extraction (seed §2)."""

    name: str
    text: str
    """The extracted text (empty when it could not be read)."""
    truncated: bool = False
    warnings: tuple[str, ...] = ()
    """Japanese, for the page: what was skipped (encrypted, images, pages cut, failure)."""
    failed: bool = False


@dataclass(frozen=True)
class DocumentDigest:
    """The reference documents as the prompt sees them."""

    text: str
    """Compressed text (≤ ``max_docs_chars``), or ``NO_DOCUMENTS``."""
    documents: tuple[DesignDocument, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def provided(self) -> bool:
        return self.text != NO_DOCUMENTS


@dataclass(frozen=True)
class BlockCandidate:
    """One block the retrieval offers to the model (and lists on the page)."""

    block_id: str
    category: str
    description: str
    inputs: tuple[str, ...]
    required_inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    score: float
    """The final score in [0, 1] (normalised, hybrid when both are known)."""
    bm25: float | None = None
    embedding: float | None = None
    pinned: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "block": self.block_id,
            "category": self.category,
            "description": self.description,
            "inputs": list(self.inputs),
            "required_inputs": list(self.required_inputs),
            "outputs": list(self.outputs),
            "score": round(self.score, 4),
            "bm25": None if self.bm25 is None else round(self.bm25, 4),
            "embedding": None if self.embedding is None else round(self.embedding, 4),
            "pinned": self.pinned,
        }


class _TemplateModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TemplateImport(_TemplateModel):
    """An input a template expects; its snippet reads it as ``${vars.<name>}``."""

    type: str
    description: str | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in TEMPLATE_PORT_TYPES:
            raise ValueError(f"type must be one of {', '.join(TEMPLATE_PORT_TYPES)}")
        return value


class TemplateExport(TemplateImport):
    """An output a template provides: ``from`` names ``<snippet node>.<alias>``."""

    source: str = Field(alias="from", min_length=3)


class TemplateUISuggestions(_TemplateModel):
    layout: list[str] = Field(default_factory=list)


class TemplateSpec(_TemplateModel):
    """A reusable part of a flow (seed §4), one YAML file under
    ``designs/templates/<category>/<id>.yaml``."""

    id: str
    title: str = Field(min_length=1)
    description: str | None = None
    category: str = "general"
    tags: list[str] = Field(default_factory=list)
    imports: dict[str, TemplateImport] = Field(default_factory=dict)
    exports: dict[str, TemplateExport] = Field(default_factory=dict)
    vars_defaults: dict[str, Any] = Field(default_factory=dict)
    ui_suggestions: TemplateUISuggestions | None = None
    graph_snippet: list[dict[str, Any]] = Field(min_length=1)

    @field_validator("id")
    @classmethod
    def _template_id(cls, value: str) -> str:
        if not TEMPLATE_ID.match(value):
            raise ValueError("id must be snake case: a-z first, then a-z, 0-9 or _ (≤ 49)")
        return value


@dataclass(frozen=True)
class ComposeConflict:
    """Something compose could not decide alone; shown to the user, never resolved silently."""

    code: str
    """``EXPORT_CLASH`` | ``TYPE_MISMATCH`` | ``AMBIGUOUS_IMPORT`` | ``VAR_CLASH`` | ..."""
    message: str
    """Japanese."""
    templates: tuple[str, ...] = ()
    name: str | None = None


@dataclass
class ComposeResult:
    """A Plan (as a YAML-ready mapping) composed from templates."""

    plan: dict[str, Any]
    conflicts: list[ComposeConflict] = field(default_factory=list)
    unbound: list[str] = field(default_factory=list)
    """Imports bound to nothing: declared as ``vars`` (null) for the user to fill."""
    bindings: dict[str, str] = field(default_factory=dict)
    """``<template>.<import>`` → the reference it was bound to."""


RUN_INPUT_TYPES = frozenset({"file", "table"})
"""Question types a run supplies (a file), so they never hold a design back."""

Verdict = Literal["ok", "needs_answers", "cannot_build", "incomplete", "invalid"]

VERDICT_MESSAGES: dict[str, str] = {
    "ok": "指示のすべての項目を満たし、検証とドライランを通りました。",
    "needs_answers": "質問に答えると完成します（「決める必要がある項目」）。",
    "cannot_build": "指示の一部を組み立てられないため、Plan は作りませんでした"
    "（理由は「作れない部分」）。",
    "incomplete": "指示の項目を満たしていない Plan です。登録しないでください。",
    "invalid": "Plan にエラーがあります。直してから登録してください。",
}
"""``GeneratedPlan.verdict`` in words: the same sentence on the CLI, the 設計 page and the API."""

RequirementType = Literal["text", "select", "boolean", "number", "file", "table", "enum"]

FIELD_TYPE_OF: dict[str, str] = {
    "text": "text",
    "select": "select",
    "boolean": "boolean",
    "number": "number",
    "file": "file",
    "table": "file",  # a CSV or XLSX file (accept defaults to .csv,.xlsx)
    "enum": "select",  # options become the select's options
}
"""Seed 003's ``Requirement.type`` → ``ui.interactive_input`` field type (docs/design.md)."""


@dataclass(frozen=True)
class Requirement:
    """Something the generator could not settle, asked in the Design chat (seed §7)."""

    id: str
    type: RequirementType
    label: str | None = None
    description: str | None = None
    options: tuple[str, ...] = ()
    required: bool = True
    accept: str | None = None
    hint: str | None = None
    validation: dict[str, Any] | None = None
    target: str | None = None
    """Where a confirmed answer goes: ``vars.<name>`` or ``<node>.<input>``."""

    def to_field(self) -> dict[str, Any]:
        """The ``ui.interactive_input`` requirement that asks this."""
        field_type = FIELD_TYPE_OF[self.type]
        result: dict[str, Any] = {"id": self.id, "type": field_type, "label": self.label or self.id}
        if self.description or self.hint:
            result["description"] = " ".join(p for p in (self.description, self.hint) if p)
        if self.options:
            result["options"] = list(self.options)
        accept = self.accept or (".csv,.xlsx" if self.type == "table" else None)
        if accept and field_type == "file":
            result["accept"] = accept
        if not self.required:
            result["required"] = False
        if self.validation and field_type == "text" and "regex" in self.validation:
            result["validation"] = {"pattern": self.validation["regex"]}
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "label": self.label,
            "description": self.description,
            "options": list(self.options),
            "required": self.required,
            "accept": self.accept,
            "hint": self.hint,
            "validation": self.validation,
            "target": self.target,
        }


@dataclass(frozen=True)
class NodeChange:
    """How one node differs between two attempts (the repair diff, per node)."""

    node_id: str
    change: Literal["added", "removed", "changed"]
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    fields: tuple[str, ...] = ()
    """For ``changed``: the top-level keys that differ (``block``, ``in``, ``out``, ...)."""


@dataclass
class DesignAttempt:
    """One generation attempt: 1 is the first, 2.. are repairs."""

    number: int
    yaml_text: str
    error_codes: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    changes: list[NodeChange] = field(default_factory=list)
    """Per-node diff against the previous attempt (empty for the first)."""


@dataclass
class GeneratedPlan:
    """What ``generate_plan`` returns (seed: ``{plan, reasoning}``) plus what the page shows."""

    plan: Plan | None
    """The Plan when the YAML loads (it may still have validation errors)."""
    yaml_text: str
    reasoning: str
    """How it was made: ``structured`` | ``compose`` | ``fallback`` | ``offline-compose``,
    then a short memo."""
    apply_mode: str = "hint"
    offline: bool = False
    report: ValidationReport | None = None
    dry_run: DryRunReport | None = None
    attempts: list[DesignAttempt] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    candidates: list[BlockCandidate] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    conflicts: list[ComposeConflict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Japanese notes for the user (documents skipped, offline mode, ...)."""
    questions: list[dict[str, Any]] = field(default_factory=list)
    """What the model could not settle: ``{var, question, type, options}`` (Japanese
    question; type as ``Requirement.type``), for the requirements builder."""
    dry_run_seconds: float | None = None
    """How long the last dry run took (metrics)."""
    tokens: dict[str, int] | None = None
    """``{prompt, completion}`` tokens of the model calls, when the service reports them."""
    procedure: Procedure | None = None
    """The requirement model of the instruction (issue 27), when one was read."""
    coverage: CoverageReport | None = None
    """Which node covers each requirement of ``procedure``."""
    gaps: list[Gap] = field(default_factory=list)
    """Parts of the instruction that could not be built, and why."""

    @property
    def pending_vars(self) -> set[str]:
        """Vars the generator asks a person to decide (its questions). A file or table is
        what a run is given (``--file``, an upload), not a design decision."""
        read = set(re.findall(r"\$\{vars\.([A-Za-z_][\w]*)", self.yaml_text))
        return {
            str(question["var"])
            for question in self.questions
            if question.get("var")
            and question.get("type") not in RUN_INPUT_TYPES
            and str(question["var"]) in read  # a question no node reads holds nothing back
        }

    @property
    def verdict(self) -> Verdict:
        """What the user got, the same on every surface (docs/design.md "Verdict"):

        ``ok`` — the Plan covers every requirement, validates and dry-runs;
        ``needs_answers`` — it does once the questions are answered;
        ``cannot_build`` — a named part cannot be built (``gaps``), no Plan;
        ``incomplete`` — a Plan was made but a requirement is not covered or a node is
        unrelated (``coverage``);
        ``invalid`` — the Plan does not validate or dry-run.
        """
        if self.gaps or self.plan is None:
            return "cannot_build"
        if self.coverage is not None and not self.coverage.ok:
            return "incomplete"
        if self.report is None:
            return "invalid"
        from keiri_agent.plans.issues import IssueCode

        pending = self.pending_vars
        blocking = [
            issue
            for issue in self.report.errors
            if not (
                issue.code == IssueCode.REQUIRED_INPUT_NULL_VAR and issue.details.var in pending
            )
        ]
        if blocking or (self.dry_run is not None and not self.dry_run.ok):
            return "invalid"
        if self.report.errors or pending or (self.coverage is not None and self.coverage.waiting):
            return "needs_answers"
        if self.dry_run is None:
            return "invalid"
        return "ok"

    @property
    def ok(self) -> bool:
        """The Plan loads, validates, dry-runs and does what was asked (verdict ``ok``)."""
        return self.verdict == "ok"
