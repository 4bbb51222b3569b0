"""Loop nodes (seed 002 §5.2), run on a worker thread or inline by the scheduler.

foreach: the input (a reference or a literal) must be a list; the body graph runs
once per item, up to ``max_concurrency`` iterations at a time (capped further by
``policy.concurrency.per_node[<loop id>]``), with the item and index in the
body's loop variables. The loop's output ``{collect: [...]}`` holds the export
named by ``out.collect`` of every iteration, in input order. Under halt/retry a
failed iteration stops new ones from starting; the loop fails with the inner
error in ``details.error``.

while: before each iteration the condition is evaluated with the previous
iteration's exports (by export name) and body nodes (by node id) visible — both
None before the first — and the loop stops when it is false or after
``max_iterations``. The body sees the previous iteration's exports by name too
(None in the first iteration), so it can carry a value from one iteration to the
next. An export name never hides a body node id or ``vars``/``env``/``config``:
those win (the validator reports such a name as LOOP_VAR_CONFLICT). Output: every
export of the last iteration, and ``iterations``.

Every iteration's graph state is kept in the loop node's state, so a pause inside
an iteration resumes where it stopped and finished iterations are not run again;
the state is saved when an iteration ends (``plans.run.progress``), so this holds
after a crash too.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import ChainMap, deque
from collections.abc import Callable, Mapping
from typing import Any

from keiri_agent.errors import BlockErrorCode, KeiriAgentError
from keiri_agent.plans.dsl.conditions import parse_when
from keiri_agent.plans.dsl.models import LoopNode
from keiri_agent.plans.dsl.references import ReferenceError_, Scope
from keiri_agent.plans.dsl.scope import body_node_ids, foreach_variables, while_variables
from keiri_agent.plans.run.run_services import WORKERS
from keiri_agent.plans.run.run_state import GraphState, LoopState
from keiri_agent.plans.run.scheduler import (
    POLL_S,
    Attempt,
    Frame,
    GraphRun,
    Outcome,
    declared_aliases,
    visible,
)
from keiri_agent.plans.run.step_support import (
    StepFailure,
    elapsed_ms,
    evaluate_when,
    export_values,
    node_error,
    resolve_inputs,
    wrap_failure,
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
    except StepFailure as failure:
        outcome = Outcome("failed", error=failure.error, retryable=False)
    outcome.duration_ms = elapsed_ms(started)
    return outcome


def _execute(graph_run: GraphRun) -> str:
    try:
        return graph_run.execute()
    except Exception as exc:  # a bug in the engine: report it on the loop, never hang
        graph_run.first_failure = (
            graph_run.frame.prefix.rstrip("/"),
            {
                "code": BlockErrorCode.BLOCK_FAILED,
                "message": "実行エンジンで想定外のエラーが起きました"
                f"（{type(exc).__name__}: {exc}）",
                "hint": "開発担当者に連絡してください",
            },
        )
        return "failed"


def _foreach(run: GraphRun, node: LoopNode, attempt: Attempt, scope: Scope) -> Outcome:
    assert node.foreach is not None
    items = _foreach_items(run, node, scope)
    node_state = run.state.nodes[node.id]
    if node_state.loop is None or node_state.loop.kind != "foreach":
        node_state.loop = LoopState(kind="foreach")
    loop = node_state.loop
    failures = _run_iterations(run, node, attempt, items, loop)
    statuses = [loop.statuses.get(i, "pending") for i in range(len(items))]
    if failures:
        index = min(failures)
        error = wrap_failure(run, node.id, failures[index], f"ループ {node.id!r}", iteration=index)
        return Outcome("failed", error=error)
    if any(status not in ("success", "paused") for status in statuses):
        return Outcome("cancelled")
    if "paused" in statuses:
        return Outcome("paused")
    collect = node.out.collect
    outputs = {collect: _collected(run, node, loop, len(items), collect)} if collect else {}
    return Outcome("success", outputs=outputs)


def _foreach_items(run: GraphRun, node: LoopNode, scope: Scope) -> list[Any]:
    """``foreach.input`` resolved; StepFailure unless it is a list."""
    assert node.foreach is not None
    items = resolve_inputs(run, node.id, node.foreach.input, scope, "foreach.input")
    if not isinstance(items, list | tuple):
        error = node_error(
            run,
            node.id,
            BlockErrorCode.INPUT_VALIDATION_FAILED,
            f"ループ {node.id!r}: foreach.input はリストにしてください"
            f"（渡されたのは {type(items).__name__}）",
            hint="foreach.input にはリストを指す参照を書いてください"
            "（例: ${parse.evidence.files}）",
            field="foreach.input",
            actual_type=type(items).__name__,
        )
        raise StepFailure(error, retryable=False)
    return list(items)


def _run_iterations(
    run: GraphRun, node: LoopNode, attempt: Attempt, items: list[Any], loop: LoopState
) -> dict[int, tuple[str, dict[str, Any]] | None]:
    """Run every unfinished iteration; the first failure of each failed one, by index.

    Each lane runs iterations one after another on its own thread, taking the next
    index from ``todo``: no hand-off through this thread between iterations. A
    failing iteration (halt/retry) sets ``stop``, which every running iteration sees.
    """
    assert node.foreach is not None
    foreach = node.foreach
    cap = run.frame.policy.concurrency.per_node.get(node.id, foreach.max_concurrency)
    todo = deque(i for i in range(len(items)) if loop.statuses.get(i) != "success")
    lanes = max(1, min(foreach.max_concurrency, cap, len(todo)))
    stop = attempt.stop if lanes == 1 else threading.Event()
    lock = threading.Lock()
    failures: dict[int, tuple[str, dict[str, Any]] | None] = {}
    cancel = run.services.cancel_event

    def lane() -> None:
        while True:
            with lock:
                if not todo or failures or stop.is_set() or cancel.is_set():
                    return
                index = todo.popleft()
                loop.statuses[index] = "running"
                iteration_state = loop.iterations.setdefault(index, GraphState())
            local_values = foreach_variables(node, items[index], index)
            run.emit("loop_iteration", node.id, iteration=index, item=items[index])
            frame = _body_frame(run, node, index, local_values)
            graph_run = run.nested(frame, node.body.plan.graph, iteration_state, stop)
            status = _execute(graph_run)
            with lock:
                loop.statuses[index] = status
                if status == "failed":
                    failures[index] = graph_run.first_failure
                    if lanes > 1:  # one lane: ``stop`` is the loop node's own
                        stop.set()
            run.services.progress()  # the iteration is on disk before the next one

    if lanes == 1:
        lane()
    else:
        _run_lanes(lane, lanes, attempt, stop)
    return failures


def _run_lanes(
    lane: Callable[[], None], lanes: int, attempt: Attempt, stop: threading.Event
) -> None:
    """Run ``lanes`` copies of ``lane`` on workers; pass a halt of the loop on to them."""
    finished: queue.SimpleQueue[None] = queue.SimpleQueue()

    def lane_then_report() -> None:
        try:
            lane()
        finally:
            finished.put(None)

    for _ in range(lanes):
        WORKERS.submit(lane_then_report)
    done = 0
    while done < lanes:
        if attempt.stop.is_set():
            stop.set()
        try:
            finished.get(timeout=POLL_S)
            done += 1
        except queue.Empty:
            continue


def _collected(
    run: GraphRun, node: LoopNode, loop: LoopState, count: int, collect: str
) -> list[Any]:
    """The export ``collect`` of every iteration, in input order (``out.collect``)."""
    gathered = []
    body_frame = _body_frame(run, node, 0, {})
    for index in range(count):
        exports = export_values(
            run, node.id, node.body.plan.exports, loop.iterations[index], body_frame
        )
        if collect not in exports:
            error = node_error(
                run,
                node.id,
                BlockErrorCode.DEPENDENCY_NOT_FOUND,
                f"ループ {node.id!r}: out.collect の {collect!r} は本体の exports にありません"
                f"（exports: {', '.join(exports) or 'なし'}）",
                hint="本体の exports に加えるか、out.collect を exports の名前に直してください",
                field="out.collect",
            )
            raise StepFailure(error, retryable=False)
        gathered.append(exports[collect])
    return gathered


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
            f"ループ {node.id!r} の while.condition: {exc.message}",
            hint=exc.hint,
            field="while.condition",
        )
        raise StepFailure(error, retryable=False) from None
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
                child: visible(last.nodes[child]) if last and child in last.nodes else None
                for child in body_node_ids(node)
            }
            condition_scope = Scope(
                nodes=ChainMap(body_nodes, dict(run.scope_nodes(node.id))),
                vars=run.frame.vars,
                env=run.services.env,
                config=run.services.config,
                locals=ChainMap(while_variables(node, previous), dict(run.frame.locals)),
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
                    f"ループ {node.id!r} の while.condition（{index + 1} 回目の前）: {exc.message}",
                    hint=exc.hint,
                    field="while.condition",
                    iteration=index,
                )
                raise StepFailure(error, retryable=False) from None
            if not proceed:
                break
            loop.iterations[index] = GraphState()
            loop.statuses[index] = "running"
        run.emit("loop_iteration", node.id, iteration=index)
        frame = _body_frame(run, node, index, while_variables(node, previous))
        graph_run = run.nested(frame, body.graph, loop.iterations[index], attempt.stop)
        status = graph_run.execute()
        loop.statuses[index] = status
        if status == "failed":
            error = wrap_failure(
                run, node.id, graph_run.first_failure, f"ループ {node.id!r}", iteration=index
            )
            return Outcome("failed", error=error)
        if status != "success":
            return Outcome(status)
        previous = export_values(run, node.id, body.exports, loop.iterations[index], frame)
        loop.count += 1
        run.services.progress()
    outputs = {name: previous.get(name) for name in (e.name for e in body.exports)}
    outputs["iterations"] = loop.count
    return Outcome("success", outputs=outputs)
