"""The issue vocabulary shared by the loader, the validator and the dry run.

``IssueCode`` is every code a Plan check can report (a ``StrEnum``: JSON and
``--json`` output show the plain string). An issue names the rule broken
(``code``), how bad it is (``severity``), what is wrong (``message``, for people),
how to fix it (``hint``) and, for programs (the repair loop), ``details``: where
(``node``, ``path`` such as ``graph[2].in.mode``, and for YAML text ``line`` /
``column``), the ``name`` at fault as written, the valid ``choices``, the
``closest`` one, the ``expected`` and ``actual`` type, the block ``input`` and the
``var`` of a required input fed by a var without a value and, for an issue of a called
subflow, its ``cause``. A program
reads ``details`` and never parses ``message``.

A report holds every issue found; ``raise_for_errors`` turns the errors into one
``PlanValidationError`` carrying all of them. docs/plans.md lists every code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from keiri_agent.errors import PlanValidationError, closest_match

Severity = Literal["error", "warning"]


class IssueCode(StrEnum):
    """Every code a Plan check reports (errors unless the docs say *warning*)."""

    # loader: the YAML text and the DSL schema
    YAML_SYNTAX = "YAML_SYNTAX"
    YAML_TOO_LARGE = "YAML_TOO_LARGE"
    YAML_DUPLICATE_KEY = "YAML_DUPLICATE_KEY"
    SCHEMA = "SCHEMA"
    WHILE_MISSING_MAX = "WHILE_MISSING_MAX"
    API_VERSION = "API_VERSION"
    # blocks and their ports
    UNKNOWN_BLOCK = "UNKNOWN_BLOCK"
    BLOCK_VERSION = "BLOCK_VERSION"
    UNKNOWN_INPUT = "UNKNOWN_INPUT"
    MISSING_REQUIRED_INPUT = "MISSING_REQUIRED_INPUT"
    REQUIRED_INPUT_NULL_VAR = "REQUIRED_INPUT_NULL_VAR"
    INPUT_TYPE_MISMATCH = "INPUT_TYPE_MISMATCH"
    OUTPUT_NOT_DECLARED = "OUTPUT_NOT_DECLARED"
    DUPLICATE_ALIAS = "DUPLICATE_ALIAS"
    REF_UNRESOLVED = "REF_UNRESOLVED"
    # ids, references, conditions, the graph
    DUPLICATE_NODE_ID = "DUPLICATE_NODE_ID"
    REFERENCE_SYNTAX = "REFERENCE_SYNTAX"
    UNKNOWN_REFERENCE = "UNKNOWN_REFERENCE"
    ENV_NOT_SET = "ENV_NOT_SET"
    ENV_NOT_ALLOWED = "ENV_NOT_ALLOWED"
    TYPE_INCOMPATIBLE = "TYPE_INCOMPATIBLE"
    CONDITION_SYNTAX = "CONDITION_SYNTAX"
    CYCLE = "CYCLE"
    VAR_CYCLE = "VAR_CYCLE"
    # loops and exports
    LOOP_EXPORT_UNKNOWN = "LOOP_EXPORT_UNKNOWN"
    LOOP_VAR_CONFLICT = "LOOP_VAR_CONFLICT"
    LOOP_COLLECT_IGNORED = "LOOP_COLLECT_IGNORED"
    PLAN_EXPORT_UNKNOWN = "PLAN_EXPORT_UNKNOWN"
    # subflows
    SUBFLOW_NOT_FOUND = "SUBFLOW_NOT_FOUND"
    SUBFLOW_PATH = "SUBFLOW_PATH"
    SUBFLOW_CYCLE = "SUBFLOW_CYCLE"
    SUBFLOW_INVALID = "SUBFLOW_INVALID"
    SUBFLOW_INPUT_UNKNOWN = "SUBFLOW_INPUT_UNKNOWN"
    SUBFLOW_EXPORT_UNKNOWN = "SUBFLOW_EXPORT_UNKNOWN"
    # UI layout, input requirements, policy
    LAYOUT_UNKNOWN_NODE = "LAYOUT_UNKNOWN_NODE"
    LAYOUT_DUPLICATE_NODE = "LAYOUT_DUPLICATE_NODE"
    LAYOUT_MISSING_NODE = "LAYOUT_MISSING_NODE"
    REQUIREMENTS_DUPLICATE_ID = "REQUIREMENTS_DUPLICATE_ID"
    REQUIREMENTS_TYPE_CONFLICT = "REQUIREMENTS_TYPE_CONFLICT"
    REQUIREMENTS_UNKNOWN_TYPE = "REQUIREMENTS_UNKNOWN_TYPE"
    REQUIREMENTS_MISSING_OPTIONS = "REQUIREMENTS_MISSING_OPTIONS"
    CONCURRENCY_UNKNOWN_NODE = "CONCURRENCY_UNKNOWN_NODE"
    # what the environment lacks
    LLM_NOT_CONFIGURED = "LLM_NOT_CONFIGURED"
    # usage
    UNUSED_NODE = "UNUSED_NODE"
    UNUSED_OUTPUT = "UNUSED_OUTPUT"
    # dry run only: what sample data shows
    DRY_RUN_NO_SAMPLE = "DRY_RUN_NO_SAMPLE"
    UPSTREAM_FAILED = "UPSTREAM_FAILED"
    CONDITION_ERROR = "CONDITION_ERROR"
    UNKNOWN_VAR = "UNKNOWN_VAR"
    # dry run only: what the plan says of its tables' columns (plans/check/table_schemas.py)
    UNKNOWN_COLUMN = "UNKNOWN_COLUMN"
    METRIC_NOT_NUMERIC = "METRIC_NOT_NUMERIC"
    COMPARE_TYPE_MISMATCH = "COMPARE_TYPE_MISMATCH"


@dataclass(frozen=True)
class IssueDetails:
    """What a program needs to act on an issue; every field None when not known.

    ``node``: the node id; ``path``: where in the plan (``graph[2].in.text``);
    ``line``/``column``: 1-based position in the YAML text; ``name``: the name at
    fault as written (an unknown block, node, alias, input, var or field, a missing
    input, a duplicate key, alias or id); ``choices``: the valid values there (node
    ids, aliases, inputs, blocks, vars, fields); ``closest``: the choice closest to
    ``name``; ``expected``/``actual``: JSON types (``string``, ``array | object``);
    ``input``/``var``: the block input and the var feeding it (for
    ``REQUIRED_INPUT_NULL_VAR``; ``input`` also for the table checks, the input naming
    the column); ``cause``: the called plan's own issue (for ``SUBFLOW_INVALID``).
    """

    node: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None
    name: str | None = None
    choices: tuple[str, ...] | None = None
    closest: str | None = None
    expected: str | None = None
    actual: str | None = None
    input: str | None = None
    var: str | None = None
    cause: ValidationIssue | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form: every key, null when unknown."""
        return {
            "node": self.node,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "name": self.name,
            "choices": list(self.choices) if self.choices is not None else None,
            "closest": self.closest,
            "expected": self.expected,
            "actual": self.actual,
            "input": self.input,
            "var": self.var,
            "cause": self.cause.to_dict() if self.cause is not None else None,
        }


NO_DETAILS = IssueDetails()


@dataclass(frozen=True)
class ValidationIssue:
    """One problem found in a Plan; ``node_id``, ``path`` and ``line`` read ``details``."""

    code: IssueCode
    severity: Severity
    message: str
    hint: str | None = None
    details: IssueDetails = NO_DETAILS

    @property
    def node_id(self) -> str | None:
        return self.details.node

    @property
    def path(self) -> str | None:
        return self.details.path

    @property
    def line(self) -> int | None:
        """1-based line in the YAML text, when the issue comes from text."""
        return self.details.line

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form (``node_id``, ``path``, ``line`` also at the top level)."""
        return {
            "code": str(self.code),
            "severity": self.severity,
            "message": self.message,
            "node_id": self.node_id,
            "path": self.path,
            "hint": self.hint,
            "line": self.line,
            "details": self.details.to_dict(),
        }

    def __str__(self) -> str:
        where = " ".join(
            part
            for part in (
                f"{self.line} 行目" if self.line else "",
                f"ノード {self.node_id!r}" if self.node_id else "",
                self.path or "",
            )
            if part
        )
        text = f"[{self.code}] {where + ': ' if where else ''}{self.message}"
        return f"{text}（ヒント: {self.hint}）" if self.hint else text


def make_issue(
    code: IssueCode,
    message: str,
    *,
    severity: Severity = "error",
    hint: str | None = None,
    node: str | None = None,
    path: str | None = None,
    line: int | None = None,
    column: int | None = None,
    name: str | None = None,
    choices: Iterable[str] | None = None,
    closest: str | None = None,
    expected: str | None = None,
    actual: str | None = None,
    input: str | None = None,
    var: str | None = None,
    cause: ValidationIssue | None = None,
) -> ValidationIssue:
    """A ``ValidationIssue`` built from keywords (the one way the checks create them)."""
    details = IssueDetails(
        node=node,
        path=path,
        line=line,
        column=column,
        name=name,
        choices=tuple(choices) if choices is not None else None,
        closest=closest,
        expected=expected,
        actual=actual,
        input=input,
        var=var,
        cause=cause,
    )
    return ValidationIssue(code, severity, message, hint, details)


@dataclass(frozen=True)
class ValidationReport:
    """Every issue found in one Plan; ``ok`` when there is no error (warnings allowed)."""

    issues: tuple[ValidationIssue, ...] = field(default_factory=tuple)
    plan_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "issues", tuple(self.issues))

    @property
    def errors(self) -> list[ValidationIssue]:
        return [issue for issue in self.issues if issue.severity == "error"]

    @property
    def warnings(self) -> list[ValidationIssue]:
        return [issue for issue in self.issues if issue.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def codes(self) -> list[str]:
        """The codes of every issue, in order (handy in tests and logs)."""
        return [str(issue.code) for issue in self.issues]

    def raise_for_errors(self) -> None:
        """Raise ``PlanValidationError`` (carrying every issue) when there is an error."""
        if not self.ok:
            raise plan_validation_error(
                f"Plan {self.plan_id!r} に誤りがあります"
                if self.plan_id
                else "Plan に誤りがあります",
                self.issues,
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form: counts and every issue."""
        return {
            "plan_id": self.plan_id,
            "ok": self.ok,
            "error_count": len(self.errors),
            "warning_count": len(self.warnings),
            "issues": [issue.to_dict() for issue in self.issues],
        }


def unknown_choice_text(kind: str, value: str, choices: Iterable[str]) -> str:
    """``列 'sales ' は見つかりません。'sales' のことですか？（使えるもの: a, b, c）``."""
    options = list(choices)
    suggestion = closest_match(value, options)
    text = f"{kind} {value!r} は見つかりません"
    if suggestion is not None:
        text += f"。{suggestion!r} のことですか？"
    shown = ", ".join(options[:40]) + (", ..." if len(options) > 40 else "")
    return f"{text}（使えるもの: {shown}）"


def plan_validation_error(
    message: str, issues: Iterable[ValidationIssue], *, hint: str | None = None
) -> PlanValidationError:
    """A ``PlanValidationError`` whose ``issues`` are the issue objects and whose
    ``details["issues"]`` are their JSON-compatible dicts.

    The message lists the first errors so that ``str(error)`` is useful on its own.
    """
    collected: Sequence[ValidationIssue] = list(issues)
    errors = [issue for issue in collected if issue.severity == "error"] or list(collected)
    shown = "; ".join(str(issue) for issue in errors[:3])
    more = f"（ほか {len(errors) - 3} 件）" if len(errors) > 3 else ""
    return PlanValidationError(
        f"{message}: {shown}{more}" if shown else message,
        issues=list(collected),
        hint=hint,
    )
