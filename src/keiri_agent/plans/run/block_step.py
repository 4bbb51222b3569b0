"""One attempt of a block node (seed 002 §8, §9), run on a worker thread.

Order: ``when`` (false → skipped, every alias None) → resolve ``in`` against the
scope (a reference that cannot resolve → DEPENDENCY_NOT_FOUND) → port defaults →
unknown and missing required inputs, then each input against its port schema
(INPUT_VALIDATION_FAILED, ``details.field``) → ``block.validate`` → a UI block
without answers pauses (``block.request``) → ``block.run`` → outputs checked
against the declared ports (OUTPUT_SCHEMA_MISMATCH: undeclared, missing, wrong
shape, or not storable in the run state) → mapped to aliases by ``out``.

Failures before ``validate`` are not retried (the same input fails again); anything
the block raises is (``policy.on_error: retry``), except CANCELLED. An unexpected
exception becomes BLOCK_FAILED with its type and message (recoverable=False).
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.base import BlockContext, InputRequired, UIBlock
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.plans.catalog.catalog import BlockSpec
from keiri_agent.plans.dsl.models import BlockNode
from keiri_agent.plans.dsl.references import Reference, ReferenceError_, Scope, _resolve
from keiri_agent.plans.dsl.references import _template_parts as template_parts
from keiri_agent.plans.run.run_log import sanitize
from keiri_agent.plans.run.run_services import RunServices
from keiri_agent.plans.run.run_state import unsupported_value
from keiri_agent.plans.run.scheduler import (
    POLL_S,
    Attempt,
    GraphRun,
    Outcome,
    declared_aliases,
)
from keiri_agent.plans.run.step_support import (
    StepFailure,
    elapsed_ms,
    evaluate_when,
    node_error,
    reference_failure,
)
from keiri_agent.stopping import WorkStopped, stop_on

_AS_IS, _REFERENCE, _RESOLVE = 0, 1, 2
"""How an input is resolved: the literal itself, one reference's value, or the walk."""
_SCALARS = frozenset({int, float, bool, type(None)})
_IMMUTABLE = _SCALARS | {str}
_ABSENT = object()


@dataclass(frozen=True, slots=True)
class _Ports:
    """What the checks of one block spec need, worked out once per invocation."""

    spec: BlockSpec
    names: frozenset[str]
    required_names: frozenset[str]
    defaults: dict[str, Any] | None
    """The input defaults when all are immutable (shared, copied per attempt)."""
    checked_in: tuple[str, ...]
    out_names: frozenset[str]
    out_ports: tuple[tuple[str, bool, bool], ...]


class _Prepared:
    """What every attempt of one block node would otherwise work out again.

    Built on the node's first attempt of an invocation (``RunServices.prepared``):
    how each input resolves and whether the input names are right (then only the
    ports with a schema constraint are checked per attempt). Any problem found on
    the fast path is reported by the full checks, so errors are exactly those of
    ``_check_inputs`` / ``_check_outputs``.
    """

    __slots__ = ("names_ok", "node", "ports", "resolvers")

    def __init__(self, node: BlockNode, ports: _Ports) -> None:
        given = node.inputs
        self.node = node
        self.ports = ports
        self.resolvers = [_resolver(name, value) for name, value in given.items()]
        self.names_ok = ports.names.issuperset(given) and given.keys() >= ports.required_names


def _resolver(name: str, value: Any) -> tuple[str, int, Any]:
    """``(name, how, what)``: how the input ``name`` given as ``value`` resolves."""
    kind = type(value)
    if kind is str:
        if "${" not in value:
            return name, _AS_IS, value
        try:
            parts = template_parts(value)
        except Exception:  # reported when the node runs, as before
            return name, _RESOLVE, value
        if len(parts) == 1 and isinstance(parts[0], Reference):
            return name, _REFERENCE, parts[0]
        return name, _RESOLVE, value
    if kind in _SCALARS:
        return name, _AS_IS, value
    return name, _RESOLVE, value  # containers are rebuilt per attempt (a block may change them)


def _checked(services: RunServices, spec: BlockSpec, direction: str, name: str) -> bool:
    try:
        return services.port_checked(spec, direction, name)
    except Exception:  # the per-attempt check raises it, as before
        return True


def _ports(services: RunServices, spec: BlockSpec) -> _Ports:
    found: _Ports | None = services.prepared.get(id(spec))
    if found is None or found.spec is not spec:
        defaults = spec.input_defaults()
        immutable = all(type(value) in _IMMUTABLE for value in defaults.values())
        found = _Ports(
            spec=spec,
            names=frozenset(spec.inputs),
            required_names=frozenset(spec.required_inputs()),
            defaults=defaults if immutable else None,
            checked_in=tuple(name for name in spec.inputs if _checked(services, spec, "in", name)),
            out_names=frozenset(spec.outputs),
            out_ports=tuple(
                (name, port.get("required") is False, _checked(services, spec, "out", name))
                for name, port in spec.outputs.items()
            ),
        )
        services.prepared[id(spec)] = found  # holding the spec: its id is not reused
    return found


def _prepared(services: RunServices, node: BlockNode) -> _Prepared:
    """The node's resolvers and ports, prepared once per invocation."""
    found: _Prepared | None = services.prepared.get(id(node))
    if found is None or found.node is not node:
        found = _Prepared(node, _ports(services, services.spec(node.block)))
        services.prepared[id(node)] = found  # holding the node: its id is not reused
    return found


def _resolve_inputs(run: GraphRun, prepared: _Prepared, scope: Scope) -> dict[str, Any]:
    """``resolve_inputs(node.inputs)`` by the prepared resolvers (same values, same errors)."""
    resolved: dict[str, Any] = {}
    lookup = scope.lookup
    try:
        for name, kind, payload in prepared.resolvers:
            if kind == _AS_IS:
                resolved[name] = payload
            elif kind == _REFERENCE:
                resolved[name] = lookup(payload)
            else:
                resolved[name] = _resolve(payload, lookup, 1)
    except ReferenceError_ as exc:
        raise reference_failure(run, prepared.node.id, "in", exc) from None
    return resolved


def _check_prepared_inputs(
    run: GraphRun, node: BlockNode, prepared: _Prepared, inputs: dict[str, Any]
) -> None:
    ports = prepared.ports
    if not prepared.names_ok:
        _check_inputs(run, node, ports.spec, inputs)
        return
    port_problems = run.services.port_problems
    for name in ports.checked_in:
        value = inputs.get(name, _ABSENT)
        if value is not _ABSENT and port_problems(ports.spec, "in", name, value):
            _check_inputs(run, node, ports.spec, inputs)  # raises the first problem
            return


def _prepared_outputs(
    run: GraphRun, node: BlockNode, prepared: _Prepared, outputs: Any, inputs: dict[str, Any]
) -> dict[str, Any]:
    spec = prepared.ports.spec
    if type(outputs) is not dict or not prepared.ports.out_names.issuperset(outputs):
        return _check_outputs(run, node, spec, outputs, inputs)
    values = dict(outputs)
    port_problems = run.services.port_problems
    for name, optional, checked in prepared.ports.out_ports:
        if name not in values:
            if optional:
                values[name] = None
                continue
            return _check_outputs(run, node, spec, outputs, inputs)
        value = values[name]
        if (checked and port_problems(spec, "out", name, value)) or unsupported_value(value, name):
            return _check_outputs(run, node, spec, outputs, inputs)
    mapping = node.outputs or {name: name for name in values}
    return {alias: values.get(name) for name, alias in mapping.items()}


def _check_inputs(run: GraphRun, node: BlockNode, spec: BlockSpec, inputs: dict[str, Any]) -> None:
    def fail(message: str, field: str, hint: str, **details: Any) -> None:
        error = node_error(
            run,
            node.id,
            BlockErrorCode.INPUT_VALIDATION_FAILED,
            f"ノード {node.id!r}（{spec.reference}）: {message}",
            snapshot=inputs,
            hint=hint,
            field=field,
            **details,
        )
        raise StepFailure(error, retryable=False)

    extra = inputs.keys() - spec.inputs.keys()
    if extra:
        unknown = sorted(extra)
        fail(
            f"入力 {unknown[0]!r} はこのブロックにありません"
            f"（使える入力: {', '.join(spec.inputs) or 'なし'}）",
            unknown[0],
            "Plan のこのノードの inputs から外すか、入力名を直してください",
        )
    for name in spec.required_inputs():
        if name not in inputs:
            fail(
                f"必須の入力 {name!r} が指定されていません",
                name,
                f"Plan のこのノードの inputs に {name} を加えてください",
            )
    for name, value in inputs.items():
        problems = run.services.port_problems(spec, "in", name, value)
        if problems:
            fail(
                f"入力 {name!r} の値が正しくありません: {'; '.join(problems[:3])}",
                name,
                f"{name} に渡す値（前のノードの出力や入力した値）の型や形を確かめてください",
                problems=problems[:10],
            )


def _check_outputs(
    run: GraphRun, node: BlockNode, spec: BlockSpec, outputs: Any, inputs: dict[str, Any]
) -> dict[str, Any]:
    def fail(message: str, field: str | None, **details: Any) -> None:
        error = node_error(
            run,
            node.id,
            BlockErrorCode.OUTPUT_SCHEMA_MISMATCH,
            f"ノード {node.id!r}（{spec.reference}）: {message}",
            snapshot=inputs,
            hint="ブロックの出力が仕様と合っていません。ブロックの不具合のため、"
            "開発担当者に連絡してください",
            field=field,
            **details,
        )
        raise StepFailure(error, retryable=True)

    if not isinstance(outputs, Mapping):
        fail(f"ブロックが出力の対応ではなく {type(outputs).__name__} を返しました", None)
    extra = outputs.keys() - spec.outputs.keys()
    if extra:
        undeclared = sorted(extra)
        fail(
            f"仕様にない出力 {undeclared[0]!r} を返しました（出力: {', '.join(spec.outputs)}）",
            None,
        )
    values = dict(outputs)
    for name, port in spec.outputs.items():
        if name not in values:
            if port.get("required") is False:
                values[name] = None
                continue
            fail(f"出力 {name!r} が返されていません", name)
        problems = run.services.port_problems(spec, "out", name, values[name])
        if problems:
            fail(
                f"出力 {name!r} の値が仕様に合いません: {'; '.join(problems[:3])}",
                name,
                problems=problems[:10],
            )
        found = unsupported_value(values[name], name)
        if found:
            fail(
                f"出力 {found[0]} が {found[1]} で、実行の記録に保存できません"
                "（保存できるのは JSON の値、bytes、datetime/date/time、Decimal）",
                name,
            )
    mapping = node.outputs or {name: name for name in values}
    return {alias: values.get(name) for name, alias in mapping.items()}


_UI_CLASSES: dict[type, bool] = {}
"""Whether a block class is a UIBlock (a run meets a few classes on many nodes)."""


def _acquire(limit: threading.BoundedSemaphore | None, attempt: Attempt) -> bool:
    if limit is None:
        return True
    while not limit.acquire(timeout=POLL_S):
        if attempt.cancel.is_set() or attempt.stop.is_set():
            return False
    attempt.hold(limit)  # released once: by the finally below, or when abandoned
    return True


def run_block(run: GraphRun, node: BlockNode, attempt: Attempt) -> Outcome:
    """Run one attempt of ``node``; never raises (failures are in the Outcome)."""
    services = run.services
    frame = run.frame
    path = f"{frame.prefix}{node.id}"  # frame.path(node.id)
    per_node = frame.policy.concurrency.per_node.get(node.id)
    limit = services.limit(frame.run_id, node.id, per_node) if per_node else None
    inputs: dict[str, Any] = {}
    started = time.monotonic()
    stage_retryable = False
    try:
        prepared = services.prepared.get(id(node))
        if prepared is None or prepared.node is not node:
            prepared = _prepared(services, node)
        spec = prepared.ports.spec
        scope = run.scope(node.id)
        if node.when is not None:
            condition = evaluate_when(run, node, scope)
            if condition is not None:
                names = declared_aliases(node, services.catalog)
                return Outcome("skipped", outputs=dict.fromkeys(names), condition=condition)
        if limit is not None and not _acquire(limit, attempt):
            return Outcome("cancelled")
        started = attempt.started = time.monotonic()
        run.emit("node_start", node.id, block=spec.reference, attempt=attempt.retry + 1)
        defaults = prepared.ports.defaults
        inputs = spec.input_defaults() if defaults is None else dict(defaults)
        inputs.update(_resolve_inputs(run, prepared, scope))
        _check_prepared_inputs(run, node, prepared, inputs)
        block = services.catalog.load(spec)
        ctx = BlockContext(
            run_id=frame.run_id,
            plan_id=frame.plan_id,
            node_id=path,
            settings=services.settings,
            logger=services.logger,
            cancel_event=attempt.cancel,
            answers=services.answers.get(path),
            idempotency_key=f"{frame.run_id}/{services.reruns}/{path}",
        )
        stage_retryable = True
        block.validate(inputs, ctx)
        try:
            ui = _UI_CLASSES.get(type(block))
            if ui is None:  # ``isinstance`` of an ABC costs more than the lookup
                ui = _UI_CLASSES[type(block)] = isinstance(block, UIBlock)
            if ui and ctx.answers is None and isinstance(block, UIBlock):
                raise InputRequired(block.request(inputs, ctx))
            with stop_on(attempt.cancel):  # readers inside stop once the node is abandoned
                outputs = block.run(inputs, ctx)
        except WorkStopped:
            ctx.check_cancelled()  # the attempt's cancel event is set: a CANCELLED BlockError
            raise
        except InputRequired as signal:
            found = unsupported_value(signal.request)
            if found:
                raise TypeError(
                    f"the input request holds a {found[1]} at {found[0]}; requests must be "
                    "JSON values (they are saved with the paused run)"
                ) from None
            return Outcome("waiting", request=signal.request, duration_ms=elapsed_ms(started))
        aliases = _prepared_outputs(run, node, prepared, outputs, inputs)
        return Outcome("success", outputs=aliases, duration_ms=elapsed_ms(started))
    except StepFailure as failure:
        return Outcome(
            "failed",
            error=failure.error,
            retryable=failure.retryable,
            duration_ms=elapsed_ms(started),
        )
    except BlockError as exc:
        details = {**exc.details, "node_id": run.frame.owner(node.id), "path": path}
        if unsupported_value(details):  # details must be JSON-compatible: keep a summary
            details = sanitize(details)
        error = BlockError(
            exc.code,
            exc.message,
            details=details,
            input_snapshot=sanitize(exc.input_snapshot or inputs),
            hint=exc.hint,
            recoverable=exc.recoverable,
        )
        retryable = stage_retryable and exc.code != BlockErrorCode.CANCELLED
        return Outcome("failed", error=error, retryable=retryable, duration_ms=elapsed_ms(started))
    except Exception as exc:
        error = node_error(
            run,
            node.id,
            BlockErrorCode.BLOCK_FAILED,
            f"ノード {node.id!r}（{node.block}）で想定外のエラーが起きました"
            f"（{type(exc).__name__}: {exc}）",
            hint="ブロックかその設定の不具合です。details.traceback を添えて開発担当者に"
            "連絡してください",
            snapshot=inputs,
            recoverable=False,
            exception_type=type(exc).__name__,
            traceback=traceback.format_exc(limit=-8)[-4000:],
        )
        return Outcome(
            "failed", error=error, retryable=stage_retryable, duration_ms=elapsed_ms(started)
        )
    finally:
        attempt.release_slot()
