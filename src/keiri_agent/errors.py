"""The exception tree of keiri-agent.

    KeiriAgentError                 base of everything we raise on purpose
    ├── UserInputError              the user's or author's mistake: fix the input and retry
    │   ├── ConfigurationError      settings missing or contradictory
    │   ├── DatasetError            a file that cannot be loaded as a dataset
    │   ├── UnknownDatasetError     a dataset_id that is not registered
    │   └── SpecError               an analysis/plot spec that is invalid for the data
    ├── ExecutionError              a failure while running something valid
    │   ├── ActionLimitError        an action went over its time or memory limit
    │   │   ├── ActionTimeoutError
    │   │   └── ActionMemoryError
    │   └── LLMError                the model service failed or answered unusably
    └── (control-flow signals live with their engine, e.g. plans/)

Every error carries a ``code`` (stable, machine-readable), a human ``message``,
an optional ``hint`` saying how to fix it, and ``details`` (JSON-compatible).
``to_dict()`` is what agents put in ``last_error`` and surfaces show.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


class KeiriAgentError(Exception):
    """Base class: a message, a stable code, a hint and JSON-compatible details."""

    code = "KEIRI_AGENT_ERROR"

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
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message

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


class ConfigurationError(UserInputError):
    """Settings are missing or contradictory."""

    code = "CONFIGURATION_ERROR"


class DatasetError(UserInputError):
    """A file could not be loaded as a dataset (empty, unparsable, too large)."""

    code = "DATASET_ERROR"


class UnknownDatasetError(UserInputError):
    """A dataset_id that the registry does not hold."""

    code = "UNKNOWN_DATASET"


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
    """'unknown column 'sales ' — did you mean 'sales'? valid: a, b, c'."""
    options = list(choices)
    suggestion = closest_match(value, options)
    text = f"unknown {kind} {value!r}"
    if suggestion is not None:
        text += f" — did you mean {suggestion!r}?"
    shown = ", ".join(options[:40]) + (", ..." if len(options) > 40 else "")
    return f"{text} valid: {shown}"
