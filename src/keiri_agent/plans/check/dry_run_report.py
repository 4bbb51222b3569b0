"""The result of a dry run: one record per node, problems, value summaries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from keiri_agent.plans.issues import NO_DETAILS, IssueCode, IssueDetails, ValidationIssue

Status = Literal["ok", "failed", "skipped"]
MAX_TEXT = 80
MAX_KEYS = 20


@dataclass(frozen=True)
class DryRunProblem:
    """Why a node (or the plan) fails its dry run: a stable code, a message, where."""

    code: IssueCode
    message: str
    path: str | None = None
    hint: str | None = None
    details: IssueDetails | None = None
    """For programs, where the check knows more (the table checks: node, input, column,
    its type, the expected type, the columns there are)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "message": self.message,
            "path": self.path,
            "hint": self.hint,
            "details": self.details.to_dict() if self.details is not None else None,
        }

    def to_issue(self, node_id: str | None = None) -> ValidationIssue:
        """The problem as an error of the shared issue vocabulary (``details.node`` is
        ``node_id`` unless the problem names its node)."""
        details = self.details or replace(NO_DETAILS, path=self.path)
        if details.node is None and node_id is not None:
            details = replace(details, node=node_id)
        return ValidationIssue(
            code=self.code, severity="error", message=self.message, hint=self.hint, details=details
        )


@dataclass
class NodeDryRun:
    """One node's dry run. ``node_id`` is prefixed by its loops/subflows: ``each/analyze``.

    ``condition`` is the ``when`` (for a while loop: the ``while``) result on sample
    data, None when there is none or it could not be evaluated; the node is checked
    either way.
    """

    node_id: str
    block: str | None
    status: Status = "ok"
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    problems: list[DryRunProblem] = field(default_factory=list)
    condition: bool | None = None
    side_effects: bool = False

    def fail(
        self,
        code: IssueCode,
        message: str,
        path: str | None = None,
        hint: str | None = None,
        details: IssueDetails | None = None,
    ) -> None:
        """Record a problem (the node is then failed)."""
        self.problems.append(DryRunProblem(code, message, path, hint, details))
        self.status = "failed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "block": self.block,
            "status": self.status,
            "condition": self.condition,
            "side_effects": self.side_effects,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "problems": [problem.to_dict() for problem in self.problems],
        }


@dataclass
class DryRunReport:
    """Every node's dry run plus plan-level problems (cycles, vars that do not resolve)
    and warnings (what a real run would lack, e.g. LLM_NOT_CONFIGURED; never ``ok``'s
    concern)."""

    plan_id: str
    nodes: list[NodeDryRun] = field(default_factory=list)
    problems: list[DryRunProblem] = field(default_factory=list)
    warnings: list[DryRunProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and all(node.status != "failed" for node in self.nodes)

    @property
    def failed(self) -> list[NodeDryRun]:
        return [node for node in self.nodes if node.status == "failed"]

    def node(self, node_id: str) -> NodeDryRun:
        """The record of ``node_id`` (``loop/body_node`` inside loops and subflows)."""
        for record in self.nodes:
            if record.node_id == node_id:
                return record
        raise KeyError(
            f"no dry-run record for {node_id!r}; nodes: {[n.node_id for n in self.nodes]}"
        )

    def codes(self) -> list[str]:
        """Every problem code, plan-level first."""
        problems = [*self.problems, *(p for n in self.nodes for p in n.problems)]
        return [str(problem.code) for problem in problems]

    def issues(self) -> list[ValidationIssue]:
        """Every problem as an error ``ValidationIssue``, plan-level first."""
        return [
            *(problem.to_issue() for problem in self.problems),
            *(problem.to_issue(node.node_id) for node in self.nodes for problem in node.problems),
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan_id": self.plan_id,
            "ok": self.ok,
            "problems": [problem.to_dict() for problem in self.problems],
            "warnings": [warning.to_dict() for warning in self.warnings],
            "nodes": [node.to_dict() for node in self.nodes],
        }


def summarize(value: Any, depth: int = 0) -> Any:
    """A short JSON-compatible view: long text cut, ``list[n]``, ``bytes[n]``, nested
    mappings shown one level deep."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else f"{value[: MAX_TEXT - 1]}… ({len(value)} chars)"
    if isinstance(value, bytes | bytearray):
        return f"bytes[{len(value)}]"
    if isinstance(value, list | tuple):
        return f"list[{len(value)}]"
    if isinstance(value, Mapping):
        if depth >= 1:
            return f"dict[{len(value)}]"
        items = list(value.items())
        shown: dict[str, Any] = {str(k): summarize(v, depth + 1) for k, v in items[:MAX_KEYS]}
        if len(items) > MAX_KEYS:
            shown["…"] = f"{len(items) - MAX_KEYS} more"
        return shown
    return type(value).__name__


class Unavailable:
    """A value the dry run cannot provide (no sample, a failed node). Internal marker:
    resolving a reference to it raises ``Unresolvable`` with its code."""

    def __init__(self, code: IssueCode, message: str) -> None:
        self.code = code
        self.message = message


class Unresolvable(Exception):
    """A reference (or value) that cannot be resolved on sample data."""

    def __init__(self, code: IssueCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def value_summary(value: Any) -> Any:
    """``summarize``, with ``<unavailable>`` for values the dry run does not have."""
    return "<unavailable>" if isinstance(value, Unavailable) else summarize(value)
