"""Loop and subflow nodes (seed 002 §5.2, §5.3), run on a worker thread.

foreach: the input (a reference or a literal) must be a list; the body graph runs
once per item, up to ``max_concurrency`` iterations at a time (capped further by
``policy.concurrency.per_node[<loop id>]``), with the item and index in the
body's loop variables. The loop's output ``{collect: [...]}`` holds the export
named by ``out.collect`` of every iteration, in input order.

while: before each iteration the condition is evaluated with the previous
iteration's exports (by export name) and body nodes (by node id) visible — both
None before the first — and the loop stops when it is false or after
``max_iterations``. Output: every export of the last iteration, and ``iterations``.

subflow: the called plan (``plan_loader(plan_id)``) runs as a nested run
``<run_id>.sub#<n>`` with its own variables (its ``vars`` overridden by the
resolved ``call.inputs``; the caller's vars are not visible) and its own policy;
its ``exports`` are mapped by ``out.exports`` (``from`` export → ``as`` alias;
all exports under their names when ``out.exports`` is empty). A failure inside
becomes SUBFLOW_FAILED carrying the inner error in ``details.error``.

Iterations and subflows keep their progress in the node's state, so a pause
inside them resumes where it stopped.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections import ChainMap, deque
from collections.abc import Mapping, Sequence
from typing import Any

from keiri_agent.errors import BlockError, BlockErrorCode, KeiriAgentError
from keiri_agent.plans.block_step import _Failure, evaluate_when, node_error, resolve_inputs
from keiri_agent.plans.execution import (
    POLL_S,
    Attempt,
    Frame,
    GraphRun,
    Outcome,
    declared_aliases,
    visible,
)
from keiri_agent.plans.expressions import parse_when
from keiri_agent.plans.models import Export, LoopNode, Plan, SubflowNode
from keiri_agent.plans.references import ReferenceError_, Scope, parse_reference
from keiri_agent.plans.run_graph import build_vars, check_plan
from keiri_agent.plans.run_services import WORKERS
from keiri_agent.plans.run_state import (
    GraphState,
    LoopState,
    SubflowState,
    plan_from_dict,
    plan_to_dict,
    unsupported_value,
)

MAX_SUBFLOW_DEPTH = 16


def _since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 3)


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
            values[export.name] = scope.lookup(parse_reference(export.source))
        except ReferenceError_ as exc:
            error = node_error(
                run, owner_id, code, f"export {export.name!r}: {exc.message}", field="exports"
            )
            raise _Failure(error, retryable=False) from None
    return values


def _wrap_failure(
    run: GraphRun,
    node_id: str,
    failure: tuple[str, dict[str, Any]] | None,
    what: str,
    code: str | None = None,
    **extra: Any,
) -> BlockError:
    """The error of a loop/subflow node whose body failed: the inner error in details."""
    path, inner = failure or (run.frame.path(node_id), {"message": "failed"})
    return BlockError(
        code or inner.get("code", BlockErrorCode.BLOCK_FAILED),
        f"{what} failed at {path}: {inner.get('message')}",
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


def _body_frame(
    run: GraphRun, node: LoopNode, index: int, local_values: Mapping[str, Any]
) -> Frame:
    frame = run.frame
    return Frame(
        run_id=frame.run_id,
        plan_id=frame.plan_id,
        policy=frame.policy,
        vars=frame.vars,
        outer=run.scope_nodes(node.id),
        locals=ChainMap(dict(local_values), dict(frame.locals)),
        prefix=f"{frame.path(node.id)}[{index}]/",
        top_node=frame.owner(node.id),
    )


def run_loop(run: GraphRun, node: LoopNode, attempt: Attempt) -> Outcome:
    """Run a foreach or while loop node; never raises."""
    started = time.monotonic()
    try:
        scope = run.scope(node.id)
        condition = evaluate_when(run, node, scope)
        if condition is not None:
            names = declared_aliases(node, run.services.catalog)
            return Outcome("skipped", outputs=dict.fromkeys(names), condition=condition)
        run.emit("node_start", node.id, type="loop", attempt=attempt.retry + 1)
        attempt.started = started
        if node.foreach is not None:
            outcome = _foreach(run, node, attempt, scope)
        else:
            outcome = _while(run, node, attempt)
    except _Failure as failure:
        outcome = Outcome("failed", error=failure.error, retryable=False)
    outcome.duration_ms = _since(started)
    return outcome


def _run_iteration(graph_run: GraphRun, index: int, results: queue.SimpleQueue[Any]) -> None:
    try:
        status = graph_run.execute()
    except Exception as exc:  # a bug in the engine: report it on the loop, never hang
        graph_run.first_failure = (
            graph_run.frame.prefix.rstrip("/"),
            {"code": BlockErrorCode.BLOCK_FAILED, "message": f"{type(exc).__name__}: {exc}"},
        )
        status = "failed"
    results.put((index, status))


def _foreach(run: GraphRun, node: LoopNode, attempt: Attempt, scope: Scope) -> Outcome:
    assert node.foreach is not None
    foreach = node.foreach
    items = resolve_inputs(run, node.id, foreach.input, scope, "foreach.input")
    if not isinstance(items, list | tuple):
        error = node_error(
            run,
            node.id,
            BlockErrorCode.INPUT_VALIDATION_FAILED,
            f"loop {node.id!r}: foreach.input must be a list, got {type(items).__name__}",
            hint="point foreach.input at a list (e.g. ${parse.evidence.files})",
            field="foreach.input",
            actual_type=type(items).__name__,
        )
        raise _Failure(error, retryable=False)
    items = list(items)
    node_state = run.state.nodes[node.id]
    if node_state.loop is None or node_state.loop.kind != "foreach":
        node_state.loop = LoopState(kind="foreach")
    loop = node_state.loop
    cap = run.frame.policy.concurrency.per_node.get(node.id, foreach.max_concurrency)
    limit = max(1, min(foreach.max_concurrency, cap))
    todo = deque(i for i in range(len(items)) if loop.statuses.get(i) != "success")
    results: queue.SimpleQueue[tuple[int, str]] = queue.SimpleQueue()
    in_flight: dict[int, GraphRun] = {}
    failures: dict[int, tuple[str, dict[str, Any]] | None] = {}
    stopping = False
    while todo or in_flight:
        if not stopping and (run.services.cancel_event.is_set() or attempt.stop.is_set()):
            stopping = True
            for graph_run in in_flight.values():
                graph_run.stop.set()
        while todo and not stopping and len(in_flight) < limit:
            index = todo.popleft()
            local_values = {foreach.item_var: items[index]}
            if foreach.index_var:
                local_values[foreach.index_var] = index
            iteration_state = loop.iterations.setdefault(index, GraphState())
            loop.statuses[index] = "running"
            run.emit("loop_iteration", node.id, iteration=index, item=items[index])
            graph_run = GraphRun(
                run.services,
                _body_frame(run, node, index, local_values),
                node.body.plan.graph,
                iteration_state,
                threading.Event(),
            )
            in_flight[index] = graph_run
            WORKERS.submit(functools.partial(_run_iteration, graph_run, index, results))
        if not in_flight:
            break
        try:
            index, status = results.get(timeout=POLL_S)
        except queue.Empty:
            continue
        finished = in_flight.pop(index)
        loop.statuses[index] = status
        if status == "failed":
            failures[index] = finished.first_failure
            if not stopping:
                stopping = True
                for graph_run in in_flight.values():
                    graph_run.stop.set()
    statuses = [loop.statuses.get(i, "pending") for i in range(len(items))]
    if failures:
        index = min(failures)
        error = _wrap_failure(run, node.id, failures[index], f"loop {node.id!r}", iteration=index)
        return Outcome("failed", error=error)
    if any(status not in ("success", "paused") for status in statuses):
        return Outcome("cancelled")
    if "paused" in statuses:
        return Outcome("paused")
    collect = node.out.collect
    outputs: dict[str, Any] = {}
    if collect:
        gathered = []
        for index in range(len(items)):
            body_frame = _body_frame(run, node, index, {})
            exports = export_values(
                run, node.id, node.body.plan.exports, loop.iterations[index], body_frame
            )
            if collect not in exports:
                error = node_error(
                    run,
                    node.id,
                    BlockErrorCode.DEPENDENCY_NOT_FOUND,
                    f"loop {node.id!r}: out.collect {collect!r} is not a body export "
                    f"(exports: {', '.join(exports) or 'none'})",
                    field="out.collect",
                )
                raise _Failure(error, retryable=False)
            gathered.append(exports[collect])
        outputs[collect] = gathered
    return Outcome("success", outputs=outputs)


def _while(run: GraphRun, node: LoopNode, attempt: Attempt) -> Outcome:
    assert node.while_ is not None
    spec = node.while_
    body = node.body.plan
    node_state = run.state.nodes[node.id]
    if node_state.loop is None or node_state.loop.kind != "while":
        node_state.loop = LoopState(kind="while")
    loop = node_state.loop
    try:
        condition = parse_when(spec.condition)
    except KeiriAgentError as exc:
        error = node_error(
            run,
            node.id,
            BlockErrorCode.INPUT_VALIDATION_FAILED,
            f"loop {node.id!r}: while.condition: {exc.message}",
            field="while.condition",
        )
        raise _Failure(error, retryable=False) from None
    previous: dict[str, Any] = dict.fromkeys(e.name for e in body.exports)
    if loop.count > 0:
        frame = _body_frame(run, node, loop.count - 1, {})
        previous = export_values(run, node.id, body.exports, loop.iterations[loop.count - 1], frame)
    while True:
        if run.services.cancel_event.is_set() or attempt.stop.is_set():
            return Outcome("cancelled")
        index = loop.count
        if loop.statuses.get(index) in (None, "success"):
            if index >= spec.max_iterations:
                break
            last = loop.iterations.get(index - 1)
            body_nodes = {
                child.id: visible(last.nodes[child.id]) if last and child.id in last.nodes else None
                for child in body.graph
            }
            condition_scope = Scope(
                nodes=ChainMap(body_nodes, dict(run.scope_nodes(node.id))),
                vars=run.frame.vars,
                env=run.services.env,
                config=run.services.config,
                locals=ChainMap(dict(previous), dict(run.frame.locals)),
            )
            try:
                proceed = condition.evaluate(condition_scope.lookup)
            except KeiriAgentError as exc:
                code = (
                    BlockErrorCode.DEPENDENCY_NOT_FOUND
                    if isinstance(exc, ReferenceError_)
                    else BlockErrorCode.INPUT_VALIDATION_FAILED
                )
                error = node_error(
                    run,
                    node.id,
                    code,
                    f"loop {node.id!r}: while.condition (before iteration {index}): {exc.message}",
                    field="while.condition",
                    iteration=index,
                )
                raise _Failure(error, retryable=False) from None
            if not proceed:
                break
            loop.iterations[index] = GraphState()
            loop.statuses[index] = "running"
        run.emit("loop_iteration", node.id, iteration=index)
        frame = _body_frame(run, node, index, previous)
        graph_run = GraphRun(run.services, frame, body.graph, loop.iterations[index], attempt.stop)
        status = graph_run.execute()
        loop.statuses[index] = status
        if status == "failed":
            error = _wrap_failure(
                run, node.id, graph_run.first_failure, f"loop {node.id!r}", iteration=index
            )
            return Outcome("failed", error=error)
        if status != "success":
            return Outcome(status)
        previous = export_values(run, node.id, body.exports, loop.iterations[index], frame)
        loop.count += 1
    outputs = {name: previous.get(name) for name in (e.name for e in body.exports)}
    outputs["iterations"] = loop.count
    return Outcome("success", outputs=outputs)


def _subflow_error(run: GraphRun, node: SubflowNode, message: str, **details: Any) -> _Failure:
    error = node_error(
        run,
        node.id,
        BlockErrorCode.SUBFLOW_FAILED,
        f"subflow {node.id!r} ({node.call.plan_id}): {message}",
        plan_id=node.call.plan_id,
        **details,
    )
    return _Failure(error, retryable=False)


def _load_plan(run: GraphRun, node: SubflowNode) -> Plan:
    loader = run.services.plan_loader
    if loader is None:
        raise _subflow_error(run, node, "no plan loader is configured")
    try:
        plan = loader(node.call.plan_id)
        check_plan(plan, run.services.catalog)
    except KeiriAgentError as exc:
        raise _subflow_error(run, node, exc.message, error=exc.to_dict()) from None
    except Exception as exc:
        raise _subflow_error(run, node, f"cannot load: {type(exc).__name__}: {exc}") from None
    return plan


def run_subflow(run: GraphRun, node: SubflowNode, attempt: Attempt) -> Outcome:
    """Run a subflow node as a nested run; never raises."""
    started = time.monotonic()
    services = run.services
    try:
        scope = run.scope(node.id)
        condition = evaluate_when(run, node, scope)
        if condition is not None:
            names = declared_aliases(node, services.catalog)
            return Outcome("skipped", outputs=dict.fromkeys(names), condition=condition)
        run.emit("node_start", node.id, type="subflow", attempt=attempt.retry + 1)
        attempt.started = started
        node_state = run.state.nodes[node.id]
        sub = node_state.subflow
        resumed = sub is not None
        if sub is None:
            if run.frame.run_id.count(".sub#") >= MAX_SUBFLOW_DEPTH:
                raise _subflow_error(run, node, f"subflows nest deeper than {MAX_SUBFLOW_DEPTH}")
            inputs = resolve_inputs(run, node.id, node.call.inputs, scope, "call.inputs")
            found = unsupported_value(inputs)
            if found:
                raise _subflow_error(run, node, f"input {found[0]} is a {found[1]}")
            plan = _load_plan(run, node)
            sub = SubflowState(
                run_id=services.next_subflow_id(run.frame.run_id),
                plan=plan_to_dict(plan),
                inputs=inputs,
            )
            node_state.subflow = sub
        else:
            plan = plan_from_dict(sub.plan)
        try:
            sub_vars = build_vars(plan.vars, sub.inputs, services.env, services.config)
        except KeiriAgentError as exc:
            raise _subflow_error(run, node, f"vars: {exc.message}") from None
        path = run.frame.path(node.id)
        ids = {"run_id": sub.run_id, "plan_id": plan.id, "node_id": path}
        if resumed:
            services.log.emit("plan_resumed", **ids, mode="resume", parent_run_id=run.frame.run_id)
        else:
            services.log.emit(
                "plan_start",
                **ids,
                plan_version=plan.version,
                vars=sub_vars,
                parent_run_id=run.frame.run_id,
            )
        frame = Frame(
            run_id=sub.run_id,
            plan_id=plan.id,
            policy=plan.policy,
            vars=sub_vars,
            outer={},
            locals={},
            prefix=f"{path}/",
            top_node=run.frame.owner(node.id),
        )
        graph_run = GraphRun(services, frame, plan.graph, sub.graph, attempt.stop)
        status = graph_run.execute()
        event = "plan_paused" if status == "paused" else "plan_complete"
        services.log.emit(event, **ids, status=status, total_duration_ms=_since(started))
        if status == "failed":
            error = _wrap_failure(
                run,
                node.id,
                graph_run.first_failure,
                f"subflow {node.id!r} ({plan.id})",
                BlockErrorCode.SUBFLOW_FAILED,
                subflow_run_id=sub.run_id,
                plan_id=plan.id,
            )
            return Outcome("failed", error=error, duration_ms=_since(started))
        if status != "success":
            return Outcome(status, duration_ms=_since(started))
        exports = export_values(
            run, node.id, plan.exports, sub.graph, frame, BlockErrorCode.SUBFLOW_FAILED
        )
        if not node.out.exports:
            return Outcome("success", outputs=exports, duration_ms=_since(started))
        outputs: dict[str, Any] = {}
        for mapping in node.out.exports:
            if mapping.source not in exports:
                raise _subflow_error(
                    run,
                    node,
                    f"plan {plan.id!r} exports no {mapping.source!r} "
                    f"(exports: {', '.join(exports) or 'none'})",
                    field="out.exports",
                )
            outputs[mapping.name] = exports[mapping.source]
        return Outcome("success", outputs=outputs, duration_ms=_since(started))
    except _Failure as failure:
        return Outcome("failed", error=failure.error, duration_ms=_since(started))
