"""Validation issues and reports shared by the loader, the validator and the store.

An issue names the rule broken (a stable ``code``), where (``node_id``, a dotted
``path`` such as ``graph[2].in.mode`` and, for YAML files, the ``line``) and how
to fix it (``hint``). A report holds every issue found; ``raise_for_errors``
turns the errors into one ``PlanValidationError`` carrying all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from keiri_agent.errors import PlanValidationError

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class ValidationIssue:
    """One problem found in a Plan."""

    code: str
    severity: Severity
    message: str
    node_id: str | None = None
    path: str | None = None
    hint: str | None = None
    line: int | None = None
    """1-based line in the YAML text, when the issue comes from a file."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return asdict(self)

    def __str__(self) -> str:
        where = " ".join(
            part
            for part in (
                f"line {self.line}" if self.line else "",
                f"node {self.node_id!r}" if self.node_id else "",
                self.path or "",
            )
            if part
        )
        text = f"[{self.code}] {where + ': ' if where else ''}{self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


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
        return [issue.code for issue in self.issues]

    def raise_for_errors(self) -> None:
        """Raise ``PlanValidationError`` (carrying every issue) when there is an error."""
        if not self.ok:
            raise plan_validation_error(
                f"plan {self.plan_id!r} is invalid" if self.plan_id else "the plan is invalid",
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
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    error = PlanValidationError(
        f"{message}: {shown}{more}" if shown else message,
        issues=list(collected),
        hint=hint,
    )
    error.details = {"issues": [issue.to_dict() for issue in collected]}
    return error
