"""Helpers shared by the node steps (block, loop, subflow): errors, conditions, scopes.

``StepFailure`` carries a node's BlockError out of a step; ``node_error`` builds
one naming the node (``details.node_id`` is the top-level node to re-run,
``details.path`` the exact node); ``evaluate_when`` and ``resolve_inputs`` turn
reference problems into DEPENDENCY_NOT_FOUND; ``export_values`` reads a finished
graph's exports; ``wrap_failure`` puts a body's error inside its loop/subflow's.
"""

from __future__ import annotations

import functools
import time
from collections import ChainMap
from collections.abc import Mapping, Sequence
from typing import Any

from keiri_agent.errors import BlockError, BlockErrorCode, KeiriAgentError
from keiri_agent.plans.dsl.conditions import parse_when
from keiri_agent.plans.dsl.models import Export, Node
from keiri_agent.plans.dsl.references import ReferenceError_, Scope, parse_reference, resolve_value
from keiri_agent.plans.run.run_log import sanitize
from keiri_agent.plans.run.run_state import GraphState
from keiri_agent.plans.run.scheduler import Frame, GraphRun, visible

_parsed = functools.lru_cache(maxsize=1024)(parse_reference)
"""``parse_reference`` of export sources, read once per iteration of every loop."""


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (``time.monotonic()``), rounded to microseconds."""
    return round((time.monotonic() - started) * 1000, 3)


class StepFailure(Exception):
    """Stops a node attempt with ``error``; ``retryable`` says whether policy retry applies."""

    def __init__(self, error: BlockError, retryable: bool) -> None:
        super().__init__(error.message)
        self.error = error
        self.retryable = retryable


def node_error(
    run: GraphRun,
    node_id: str,
    code: str,
    message: str,
    *,
    hint: str | None = None,
    snapshot: Any = None,
    recoverable: bool = True,
    **details: Any,
) -> BlockError:
    """A BlockError naming the node (``details.node_id`` is the top-level node to re-run)."""
    return BlockError(
        code,
        message,
        details={
            "node_id": run.frame.owner(node_id),
            "path": run.frame.path(node_id),
            **details,
        },
        input_snapshot=sanitize(snapshot) if isinstance(snapshot, Mapping) else None,
        hint=hint,
        recoverable=recoverable,
    )


def evaluate_when(run: GraphRun, node: Node, scope: Scope) -> str | None:
    """The condition's source when ``when`` is false (skip), else None; raises StepFailure."""
    if node.when is None:
        return None
    try:
        condition = parse_when(node.when)
        if condition.evaluate(scope.lookup):
            return None
        return condition.source
    except ReferenceError_ as exc:
        error = node_error(
            run,
            node.id,
            BlockErrorCode.DEPENDENCY_NOT_FOUND,
            f"ノード {node.id!r} の when: {exc.message}",
            hint=exc.hint,
            field="when",
            reference=exc.details.get("reference"),
        )
    except KeiriAgentError as exc:
        error = node_error(
            run,
            node.id,
            BlockErrorCode.INPUT_VALIDATION_FAILED,
            f"ノード {node.id!r} の when: {exc.message}",
            hint=exc.hint,
            field="when",
        )
    raise StepFailure(error, retryable=False)


def resolve_inputs(run: GraphRun, node_id: str, value: Any, scope: Scope, field: str) -> Any:
    """``resolve_value`` with unresolvable references as DEPENDENCY_NOT_FOUND (StepFailure)."""
    try:
        return resolve_value(value, scope.lookup)
    except ReferenceError_ as exc:
        raise reference_failure(run, node_id, field, exc) from None


def reference_failure(run: GraphRun, node_id: str, field: str, exc: ReferenceError_) -> StepFailure:
    """The DEPENDENCY_NOT_FOUND failure of a reference in ``field`` that cannot resolve."""
    error = node_error(
        run,
        node_id,
        BlockErrorCode.DEPENDENCY_NOT_FOUND,
        f"ノード {node_id!r} の {field}: {exc.message}",
        hint=exc.hint,
        field=exc.details.get("field") or field,
        reference=exc.details.get("reference"),
    )
    return StepFailure(error, retryable=False)


def export_values(
    run: GraphRun,
    owner_id: str,
    exports: Sequence[Export],
    state: GraphState,
    frame: Frame,
    code: str = BlockErrorCode.DEPENDENCY_NOT_FOUND,
) -> dict[str, Any]:
    """``{export name: value}`` of a finished graph (``from: node.alias`` references)."""
    scope = Scope(
        nodes=ChainMap({node_id: visible(node) for node_id, node in state.nodes.items()}),
        vars=frame.vars,
        env=run.services.env,
        config=run.services.config,
        locals=frame.locals,
    )
    values: dict[str, Any] = {}
    for export in exports:
        try:
            values[export.name] = scope.lookup(_parsed(export.source))
        except ReferenceError_ as exc:
            error = node_error(
                run,
                owner_id,
                code,
                f"export {export.name!r}: {exc.message}",
                hint=exc.hint,
                field="exports",
            )
            raise StepFailure(error, retryable=False) from None
    return values


def wrap_failure(
    run: GraphRun,
    node_id: str,
    failure: tuple[str, dict[str, Any]] | None,
    what: str,
    code: str | None = None,
    **extra: Any,
) -> BlockError:
    """The error of a loop/subflow node whose body failed: the inner error in details."""
    path, inner = failure or (run.frame.path(node_id), {"message": "失敗しました"})
    return BlockError(
        code or inner.get("code", BlockErrorCode.BLOCK_FAILED),
        f"{what} の {path} で失敗しました: {inner.get('message')}",
        details={
            "node_id": run.frame.owner(node_id),
            "path": run.frame.path(node_id),
            "failed_path": path,
            "error": inner,
            **extra,
        },
        input_snapshot=inner.get("input_snapshot") or {},
        hint=inner.get("hint"),
        recoverable=bool(inner.get("recoverable", True)),
    )
