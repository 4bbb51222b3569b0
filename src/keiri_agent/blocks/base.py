"""Block base classes and the context a block runs in (seed 002 §4, §10).

A block is a class with ``run(inputs, ctx) -> outputs``; its contract (ids,
versions, input/output JSON Schemas, samples) is its YAML spec in the catalog.
The engine validates inputs against the spec before ``run`` and outputs after.

CONTRACT (implementation owned by the catalog/blocks work; names are fixed).
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode


@dataclass
class BlockContext:
    """What a running block may use: ids for logs, settings, a logger, cancellation.

    ``answers`` holds human input supplied for this node (UI blocks), or None.

    ``idempotency_key`` names this execution of the node — the run, the node's path
    (with the loop item: ``each[3]/send``) and how often the user re-ran part of the
    run — and is the same when the node runs again because its process died or a
    retry policy tried it again. A run continues after a crash from its last saved
    progress, so a node whose effect was done just before the crash can run twice:
    a block with an effect outside the run (a mail, a bank file, a line appended to
    a ledger) hands this key to the system it calls, or records it with the effect
    and skips the effect when the key is already there. That makes its effect
    happen once. A user's re-run from a node gets new keys (the effect is wanted
    again). Empty outside a Plan run (a block called directly).
    """

    run_id: str
    plan_id: str
    node_id: str
    settings: Settings
    logger: logging.Logger
    cancel_event: threading.Event = field(default_factory=threading.Event)
    dry_run: bool = False
    answers: Mapping[str, Any] | None = None
    idempotency_key: str = ""

    def check_cancelled(self) -> None:
        """Raise a CANCELLED BlockError when the run was cancelled (call in long loops)."""
        if self.cancel_event.is_set():
            raise BlockError(
                BlockErrorCode.CANCELLED,
                f"ノード {self.node_id!r} の実行は取り消されました",
                details={"node_id": self.node_id},
                hint="続けるには Plan をもう一度実行してください",
                recoverable=True,
            )


class InputRequired(Exception):
    """Raised by a block's ``run`` to pause the run until a human answers ``request``.

    The Plan runner records the node as waiting with ``request`` and resumes it when
    answers arrive; blocks raise it instead of importing anything of the engine.
    """

    def __init__(self, request: Mapping[str, Any]) -> None:
        super().__init__("input required")
        self.request = dict(request)


class Block(ABC):
    """Base of every block. ``kind`` is "processing" or "ui"."""

    kind: ClassVar[str] = "processing"

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        """Checks beyond the JSON Schema (cross-field rules); raise BlockError."""
        return None

    @abstractmethod
    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        """Do the work; return outputs by name. Raise BlockError on failure."""


class ProcessingBlock(Block):
    """A block that computes outputs from inputs."""

    kind: ClassVar[str] = "processing"


class UIBlock(Block):
    """A block that needs human input: without ``ctx.answers`` it pauses the run.

    ``request(inputs, ctx)`` describes what is asked (shown by the UI, CLI or API);
    ``run`` turns the answers into outputs.
    """

    kind: ClassVar[str] = "ui"

    @abstractmethod
    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        """A JSON-compatible description of the input wanted (fields, message)."""
