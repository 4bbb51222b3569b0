"""Artifacts: what an action produces (seed 000 ``Artifact``) and the result of one action.

Payloads are JSON-compatible except figures:

- ``table``: ``{"columns": [...], "records": [{column: value}, ...], "total_rows": n}``
  (``records`` may be cut to a display limit; ``total_rows`` tells how many there were)
- ``figure``: PNG bytes, made in memory
- ``text``: a string
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

ArtifactKind = Literal["table", "figure", "text"]


class Artifact(TypedDict):
    """One table, figure or text produced by an action (the seed's shape)."""

    artifact_id: str
    kind: ArtifactKind
    title: str
    description: str
    payload: object


@dataclass(frozen=True)
class ActionResult:
    """What ``execute_analysis`` / ``execute_plot`` return.

    ``run_log`` is the reproduction summary: the validated spec as a dict plus
    facts such as rows before/after filters and elapsed time.
    """

    artifacts: list[Artifact]
    run_log: dict[str, Any] = field(default_factory=dict)


def figure_path(artifact: Artifact) -> str:
    """Relative path under which a figure is written next to the report."""
    return f"figures/{artifact['artifact_id']}.png"
