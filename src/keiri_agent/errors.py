"""The exception tree of keiri-agent.

    KeiriAgentError                 base of everything we raise on purpose
    ├── UserInputError              the user's or author's mistake: fix the input and retry
    │   ├── ConfigurationError      settings missing or contradictory
    │   ├── DatasetError            a file that cannot be loaded as a dataset
    │   ├── UnknownDatasetError     a dataset_id that is not registered
    │   ├── SpecError               an analysis/plot spec that is invalid for the data
    │   └── PlanValidationError     a Plan that fails validation (carries every issue)
    ├── ExecutionError              a failure while running something valid
    │   ├── ActionLimitError        an action went over its time or memory limit
    │   │   ├── ActionTimeoutError
    │   │   └── ActionMemoryError
    │   ├── LLMError                the model service failed or answered unusably
    │   └── BlockError              a Plan block failed (seed 002 §9: code, details,
    │                               input_snapshot, hint, recoverable)
    ├── RunInProgressError          another process (or thread) is running that Plan run:
    │                               wait for it to end, then try again
    └── (control-flow signals live with their engine, e.g. blocks.base.InputRequired)

Every error carries a ``code`` (stable, machine-readable), a human ``message``,
an optional ``hint`` saying how to fix it, and ``details`` (JSON-compatible).
``to_dict()`` is what agents put in ``last_error`` and surfaces show.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, Literal

ErrorCategory = Literal[
    "not_found", "conflict", "unavailable", "input", "forbidden", "model", "internal"
]
"""What kind of failure an error is (``error_category``): an unknown name, something
owned by another invocation, a store out of reach, the input, a person without the
role, the model, or ours."""


class KeiriAgentError(Exception):
    """Base class: a message, a stable code, a hint and JSON-compatible details."""

    code = "KEIRI_AGENT_ERROR"
    category: ErrorCategory = "internal"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        details: dict[str, Any] | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details or {}
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.message}（ヒント: {self.hint}）" if self.hint else self.message

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form for state, logs and API responses."""
        return {
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "details": self.details,
        }


class UserInputError(KeiriAgentError):
    """The input is wrong; the same input will fail again."""

    code = "INPUT_ERROR"
    category: ErrorCategory = "input"


class ConfigurationError(UserInputError):
    """Settings are missing or contradictory."""

    code = "CONFIGURATION_ERROR"


class DatasetError(UserInputError):
    """A file could not be loaded as a dataset (empty, unparsable, too large)."""

    code = "DATASET_ERROR"


class UnknownDatasetError(UserInputError):
    """A dataset_id that the registry does not hold."""

    code = "UNKNOWN_DATASET"
    category: ErrorCategory = "not_found"


class SpecError(UserInputError):
    """An analysis or plot spec that is not valid (for this dataset)."""

    code = "SPEC_ERROR"


class ExecutionError(KeiriAgentError):
    """Something valid failed while running."""

    code = "EXECUTION_ERROR"


class ActionLimitError(ExecutionError):
    """An analysis action went over a resource limit and was stopped."""

    code = "ACTION_LIMIT"


class ActionTimeoutError(ActionLimitError):
    """An action ran longer than its time limit and was killed."""

    code = "ACTION_TIMEOUT"


class ActionMemoryError(ActionLimitError):
    """An action used more memory than its limit and was killed."""

    code = "ACTION_MEMORY"


class LLMError(ExecutionError):
    """The model service failed, or its answer could not be used after re-asks."""

    code = "LLM_ERROR"
    category: ErrorCategory = "model"


class PlanValidationError(UserInputError):
    """A Plan that does not validate; ``issues`` holds every problem found."""

    code = "PLAN_INVALID"

    def __init__(self, message: str, *, issues: list[Any], hint: str | None = None) -> None:
        plain = [issue.to_dict() if hasattr(issue, "to_dict") else issue for issue in issues]
        super().__init__(message, hint=hint, details={"issues": plain})
        self.issues = issues


class RunInProgressError(KeiriAgentError):
    """A Plan run is owned by another invocation (``plans.run.run_lock``): nothing
    was changed; the same call succeeds once that invocation has ended."""

    code = "RUN_IN_PROGRESS"
    category: ErrorCategory = "conflict"


def error_category(error: KeiriAgentError) -> ErrorCategory:
    """The error's category, for a caller that only keeps its ``to_dict()`` (a run's
    stored error, answered later by the API with the right status): its class's, or
    ``not_found`` for a code naming something not found."""
    return "not_found" if error.code.endswith("NOT_FOUND") else error.category


class BlockErrorCode:
    """The seed's block error codes (§9.1) and the ones the engine adds."""

    INPUT_VALIDATION_FAILED = "INPUT_VALIDATION_FAILED"
    OUTPUT_SCHEMA_MISMATCH = "OUTPUT_SCHEMA_MISMATCH"
    DEPENDENCY_NOT_FOUND = "DEPENDENCY_NOT_FOUND"
    API_ERROR = "API_ERROR"
    TIMEOUT_ERROR = "TIMEOUT_ERROR"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    BLOCK_FAILED = "BLOCK_FAILED"
    """The block raised something unexpected (a bug in the block, shown with its type)."""
    CANCELLED = "CANCELLED"
    SUBFLOW_FAILED = "SUBFLOW_FAILED"


class BlockError(ExecutionError):
    """A Plan block failed (seed 002 §9.1).

    ``details`` names at least ``node_id`` (set by the runner); ``input_snapshot`` is
    the block's resolved inputs, summarised and with secrets masked;
    ``recoverable`` says whether re-running (after fixing the input) can succeed.
    """

    code = "BLOCK_ERROR"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        input_snapshot: dict[str, Any] | None = None,
        hint: str | None = None,
        recoverable: bool = True,
    ) -> None:
        super().__init__(message, hint=hint, details=details, code=code)
        self.input_snapshot = input_snapshot or {}
        self.recoverable = recoverable

    def __reduce__(self) -> Any:
        return (
            _rebuild_block_error,
            (
                self.code,
                self.message,
                self.details,
                self.input_snapshot,
                self.hint,
                self.recoverable,
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "input_snapshot": self.input_snapshot,
            "recoverable": self.recoverable,
        }


def _rebuild_block_error(
    code: str,
    message: str,
    details: dict[str, Any],
    input_snapshot: dict[str, Any],
    hint: str | None,
    recoverable: bool,
) -> BlockError:
    return BlockError(
        code,
        message,
        details=details,
        input_snapshot=input_snapshot,
        hint=hint,
        recoverable=recoverable,
    )


def closest_match(value: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``value`` (case-insensitive), or None when nothing is close."""
    options = list(choices)
    lowered = {option.lower(): option for option in options}
    if value.lower() in lowered:
        return lowered[value.lower()]
    stripped = value.strip()
    if stripped in options:
        return stripped
    matches = difflib.get_close_matches(value.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[matches[0]] if matches else None


def unknown_choice_message(kind: str, value: str, choices: Iterable[str]) -> str:
    """「列 'sales ' は見つかりません。もしかして 'sales' ですか？（指定できるもの: a, b, c）」.

    ``kind`` names what was looked up, in Japanese (列, シート, データセット ID, ...).
    """
    options = list(choices)
    suggestion = closest_match(value, options)
    text = f"{kind} {value!r} は見つかりません"
    if suggestion is not None:
        text += f"。もしかして {suggestion!r} ですか？"
    shown = ", ".join(options[:40]) + (", ..." if len(options) > 40 else "")
    return f"{text}（指定できるもの: {shown}）"
