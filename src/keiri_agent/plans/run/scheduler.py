"""Executing one graph (a plan, a loop iteration or a subflow) as an event-driven DAG.

``GraphRun.execute`` starts a node as soon as every node it references has settled
(not in waves), keeps at most ``policy.concurrency.default_max_workers`` nodes of the
graph running, applies the error policy (halt / continue / retry), per-attempt
timeouts and cancellation, and records everything in a ``GraphState``. Node
attempts run on daemon worker threads (``WORKERS``) while the scheduling thread
waits on a queue of finished attempts; a node that is alone (nothing else running
or ready) runs on the scheduling thread itself, which saves two thread hand-offs
per node in chains and loop bodies. A lone block with a timeout runs inline only
in ``execute_watched`` (the top-level plan): the loop then runs on a worker while
the caller's thread watches the inline block, and when it overruns, abandons it
and moves the loop to a fresh worker. A timed-out attempt
cannot be killed: its ``cancel_event`` is set so cooperative blocks stop, and it
is not waited for (its late result is ignored) and its ``per_node`` slot is given
back. Once the run is cancelled, an attempt that fails or times out is recorded
``cancelled`` (not ``failed``), so that a resume runs it again.

What runs one node attempt is a *step* looked up by node type in the step table
the caller hands over (``plans.run.steps.STEPS``: block, loop and subflow steps);
this module imports none of them, and the steps build nested graphs with
``GraphRun.nested`` (same services, same table).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.errors import BlockError, BlockErrorCode, KeiriAgentError
from keiri_agent.masking import mask_secrets
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.models import BlockNode, LoopNode, Node, Policy
from keiri_agent.plans.dsl.references import Scope
from keiri_agent.plans.run.run_services import WORKERS, RunServices
from keiri_agent.plans.run.run_state import FINISHED, GraphState, NodeState

POLL_S = 0.02
"""How often a waiting scheduler looks at cancellation and timeouts."""
_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class Frame:
    """Where a graph runs: run/plan ids, policy, variables and the enclosing scope."""

    run_id: str
    plan_id: str
    policy: Policy
    vars: Mapping[str, Any]
    outer: Mapping[str, Mapping[str, Any] | None]
    locals: Mapping[str, Any]
    prefix: str = ""
    top_node: str | None = None

    def path(self, node_id: str) -> str:
        """The node's id from the top plan (``loop[2]/node``); answers use it as key."""
        return f"{self.prefix}{node_id}"

    def owner(self, node_id: str) -> str:
        """The top-level node to re-run for a failure of ``node_id``."""
        return self.top_node or node_id


@dataclass(slots=True)
class Outcome:
    """What one node attempt reports to its scheduler."""

    status: str
    outputs: dict[str, Any] | None = None
    error: BlockError | None = None
    retryable: bool = False
    request: dict[str, Any] | None = None
    condition: str | None = None
    duration_ms: float | None = None


_SLOT_LOCK = threading.Lock()
"""Guards the hand-over of attempts' ``per_node`` slots (held for a swap only)."""


@dataclass(slots=True)
class Attempt:
    """One running attempt of a node."""

    token: int
    node: Node
    retry: int
    cancel: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    started: float | None = None
    _slot: threading.BoundedSemaphore | None = field(default=None, repr=False)

    def hold(self, slot: threading.BoundedSemaphore) -> None:
        """Note that this attempt holds ``slot`` (an acquired ``per_node`` cap)."""
        with _SLOT_LOCK:
            self._slot = slot

    def release_slot(self) -> None:
        """Give back the held ``per_node`` slot, once: the attempt's own ``finally``
        and the scheduler abandoning it (timeout) may both ask."""
        if self._slot is None:  # nothing held (read again under the lock otherwise)
            return
        with _SLOT_LOCK:
            slot, self._slot = self._slot, None
        if slot is not None:
            slot.release()


class _Abandoned(Exception):
    """Raised on a loop thread whose inline block was abandoned: it leaves the graph."""


Step = Callable[["GraphRun", Any, Attempt], Outcome]
"""Runs one attempt of a node (of the type it is registered for) and never raises."""
StepTable = Mapping[type[Node], Step]


def declared_aliases(node: Node, catalog: BlockCatalog) -> list[str]:
    """The aliases a node's outputs appear under (all None when it is skipped/failed)."""
    if isinstance(node, BlockNode):
        if node.outputs:
            return list(node.outputs.values())
        try:
            return list(catalog.resolve(node.block).outputs)
        except KeiriAgentError:
            return []
    if isinstance(node, LoopNode):
        if node.foreach is not None:
            return [node.out.collect] if node.out.collect else []
        return [export.name for export in node.body.plan.exports] + ["iterations"]
    return [export.name for export in node.out.exports]


def visible(state: NodeState) -> Mapping[str, Any] | None:
    """What references see of a settled node: its outputs, or None (skipped/failed)."""
    return state.outputs if state.status == "success" else None


class GraphRun:
    """One execution of a graph; ``execute()`` returns success|failed|paused|cancelled.

    ``failed`` means a failure the policy does not tolerate (halt/retry); failures
    under ``continue`` leave the graph ``success`` with the node ``failed``.
    """

    def __init__(
        self,
        services: RunServices,
        frame: Frame,
        graph: Sequence[Node],
        state: GraphState,
        stop: threading.Event,
        steps: StepTable,
    ) -> None:
        self.services = services
        self.steps = steps
        self.frame = frame
        self.graph = list(graph)
        self.state = state
        self.stop = stop
        self.deps = services.dependencies(graph)
        self._nodes = {node.id: node for node in self.graph}
        self._order = {node.id: index for index, node in enumerate(self.graph)}
        self._dependants: dict[str, list[str]] = {node.id: [] for node in self.graph}
        for node_id, needed in self.deps.items():
            for dep in needed:
                self._dependants[dep].append(node_id)
        self._queue: queue.SimpleQueue[tuple[int, Outcome]] = queue.SimpleQueue()
        self._tokens = itertools.count(1)
        self._running: dict[int, Attempt] = {}
        self._ready: list[tuple[int, str]] = []
        self._blocking: dict[str, int] = {}
        self._halted = False
        self._cancelled = False
        self.first_failure: tuple[str, dict[str, Any]] | None = None
        """``(node path, error dict)`` of the failure that halted this graph."""
        self._watched = False
        self._gone = False
        self._inline: Attempt | None = None
        self._inline_lock = threading.Lock()

    def nested(
        self, frame: Frame, graph: Sequence[Node], state: GraphState, stop: threading.Event
    ) -> GraphRun:
        """A graph run inside this one (a loop iteration, a subflow): same services and steps."""
        return GraphRun(self.services, frame, graph, state, stop, self.steps)

    # -- scope -------------------------------------------------------------------------

    def scope_nodes(self, node_id: str) -> Mapping[str, Mapping[str, Any] | None]:
        """The settled nodes ``node_id`` may reference, over the enclosing scope."""
        mine = {dep: visible(self.state.nodes[dep]) for dep in self.deps[node_id]}
        return ChainMap(mine, dict(self.frame.outer)) if self.frame.outer else mine

    def scope(self, node_id: str) -> Scope:
        """The Scope references of ``node_id`` resolve against."""
        return Scope(
            nodes=self.scope_nodes(node_id),
            vars=self.frame.vars,
            env=self.services.env,
            config=self.services.config,
            locals=self.frame.locals,
        )

    def emit(self, event: str, node_id: str | None = None, **data: Any) -> None:
        """Log an event of this graph (node ids become paths; a titled node's events
        carry its ``title``)."""
        frame = self.frame
        if node_id is not None:
            node = self._nodes.get(node_id)
            if node is not None and node.title:
                data = {"title": node.title, **data}
            node_id = f"{frame.prefix}{node_id}"  # frame.path(node_id)
        self.services.log.emit_fields(event, frame.run_id, frame.plan_id, node_id, data)

    # -- scheduling --------------------------------------------------------------------

    def _settled_ok(self, node_id: str) -> bool:
        status = self.state.nodes[node_id].status
        if status in ("success", "skipped"):
            return True
        return status == "failed" and self.frame.policy.on_error == "continue"

    def execute(self) -> str:
        """Run every unfinished node whose dependencies allow it; return the status."""
        self._prepare()
        return self._loop()

    def execute_watched(self) -> str:
        """``execute()`` with the scheduling loop on a worker and this thread watching it.

        A lone block then runs inline on the loop's thread even with a block timeout
        (no thread hand-off per node). This thread passes a cancel on to that block
        and, once it overruns its timeout, abandons it exactly as a worker attempt is
        abandoned: the loop carries on on a fresh worker (which records the timeout)
        and the stuck thread, when its block returns, drops its result and leaves.
        """
        timeout_ms = self.frame.policy.timeout_ms
        if timeout_ms is None:
            return self.execute()
        self._watched = True
        self._prepare()
        done = threading.Event()
        result: list[str | BaseException] = []

        def drive() -> None:
            try:
                status: str | BaseException = self._loop()
            except _Abandoned:
                return
            except BaseException as exc:  # handed to the caller, raised there
                status = exc
            result.append(status)
            done.set()

        WORKERS.submit(drive)
        try:
            while not done.wait(self._watch_time(timeout_ms / 1000)):
                if self._watch(timeout_ms / 1000):
                    WORKERS.submit(drive)
        except BaseException:
            self._gone = True  # the caller is interrupted: the loop stops scheduling
            raise
        outcome = result[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _watch_time(self, timeout_s: float) -> float:
        attempt = self._inline
        if attempt is None or attempt.started is None:
            return POLL_S
        return max(0.0, min(POLL_S, attempt.started + timeout_s - time.monotonic()))

    def _watch(self, timeout_s: float) -> bool:
        """Pass a run cancel on to the inline block; abandon it once overdue (True)."""
        with self._inline_lock:
            attempt = self._inline
            if attempt is None:
                return False
            if self.services.cancel_event.is_set():
                attempt.cancel.set()
            if attempt.started is None or time.monotonic() - attempt.started < timeout_s:
                return False
            self._inline = None  # still in _running: the next loop's timeout check settles it
        return True

    def _prepare(self) -> None:
        for node in self.graph:
            node_state = self.state.node(node.id)
            if node_state.status == "running":
                node_state.status = "pending"
        for node in self.graph:
            if self.state.nodes[node.id].status in FINISHED:
                continue
            blocking = sum(1 for dep in self.deps[node.id] if not self._settled_ok(dep))
            self._blocking[node.id] = blocking
            if blocking == 0:
                heapq.heappush(self._ready, (self._order[node.id], node.id))

    def _loop(self) -> str:
        limit = self.frame.policy.concurrency.default_max_workers
        while True:
            if self._gone:
                raise _Abandoned
            if not self._cancelled and self.services.cancel_event.is_set():
                self._cancelled = True
                for attempt in self._running.values():
                    attempt.cancel.set()
                self._stop_running()
            if not self._halted and self.stop.is_set():
                self._halt()
            if not (self._halted or self._cancelled):
                while self._ready and len(self._running) < limit:
                    self._start(self._nodes[heapq.heappop(self._ready)[1]], retry=0)
            if not self._running:
                break
            try:
                # an inline attempt's outcome is already queued: no wait to work out
                token, outcome = self._queue.get_nowait()
            except queue.Empty:
                try:
                    token, outcome = self._queue.get(timeout=self._wait_time())
                except queue.Empty:
                    self._expire_timeouts()
                    continue
            attempt_done = self._running.pop(token, None)
            if attempt_done is not None:
                self._settle(attempt_done, outcome)
            self._expire_timeouts()
        return self._status()

    def _status(self) -> str:
        statuses = [self.state.nodes[node.id].status for node in self.graph]
        tolerate = self.frame.policy.on_error == "continue"
        if self._cancelled and any(status not in FINISHED for status in statuses):
            return "cancelled"
        if "failed" in statuses and not tolerate:
            return "failed"
        if "waiting" in statuses or "paused" in statuses:
            return "paused"
        if any(status not in FINISHED for status in statuses):
            return "cancelled"
        return "success"

    def _halt(self) -> None:
        self._halted = True
        self._stop_running()

    def _stop_running(self) -> None:
        # An inline attempt shares this graph's stop event, which may be an enclosing
        # graph's: a halt travels down to nested graphs, never up.
        for attempt in self._running.values():
            if attempt.stop is not self.stop:
                attempt.stop.set()

    def _wait_time(self) -> float:
        timeout_ms = self.frame.policy.timeout_ms
        wait = POLL_S
        if timeout_ms is None or not self._running:
            return wait
        now = time.monotonic()
        for attempt in self._running.values():
            if attempt.started is not None and isinstance(attempt.node, BlockNode):
                wait = min(wait, attempt.started + timeout_ms / 1000 - now)
        return max(wait, 0.0)

    def _expire_timeouts(self) -> None:
        timeout_ms = self.frame.policy.timeout_ms
        if timeout_ms is None or not self._running:
            return
        now = time.monotonic()
        expired = [
            attempt
            for attempt in self._running.values()
            if isinstance(attempt.node, BlockNode)
            and attempt.started is not None
            and now - attempt.started >= timeout_ms / 1000
        ]
        cancelled = self._cancelled or self.services.cancel_event.is_set()
        for attempt in expired:
            # Abandoned: its thread may go on, but it no longer counts against the
            # node's per_node cap (else a retry or the next iteration waits for it).
            del self._running[attempt.token]
            attempt.cancel.set()
            attempt.release_slot()
            if cancelled:  # the run is being cancelled: not a failure, resume re-runs it
                self.state.nodes[attempt.node.id].status = "cancelled"
                continue
            node_id = attempt.node.id
            error = BlockError(
                BlockErrorCode.TIMEOUT_ERROR,
                f"ノード {node_id!r} が制限時間（{timeout_ms} ミリ秒）内に終わりませんでした",
                details={
                    "node_id": self.frame.owner(node_id),
                    "path": self.frame.path(node_id),
                    "timeout_ms": timeout_ms,
                },
                hint="Plan の policy.timeout_ms を長くするか、扱うデータを小さく分けて"
                "もう一度実行してください",
                recoverable=True,
            )
            duration = (now - attempt.started) * 1000 if attempt.started else None
            self._settle(
                attempt, Outcome("failed", error=error, retryable=True, duration_ms=duration)
            )

    def _start(self, node: Node, retry: int) -> None:
        node_state = self.state.nodes[node.id]
        node_state.status = "running"
        node_state.attempts += 1
        node_state.block = node.block if isinstance(node, BlockNode) else node.type
        # A lone node (nothing running, nothing else ready) runs on this thread: the
        # result is the same and two thread hand-offs are saved. A block with a timeout
        # runs inline only under a watchdog (``execute_watched``), which can abandon it;
        # otherwise it gets its own thread, so that it can be abandoned.
        inline = not self._running and not self._ready
        watched = False
        if inline and isinstance(node, BlockNode) and self.frame.policy.timeout_ms is not None:
            inline = watched = self._watched
        if inline and not watched:
            # Nobody watches this attempt while it runs: it sees the run's cancel event
            # and the graph's stop event directly.
            attempt = Attempt(
                next(self._tokens), node, retry, self.services.cancel_event, self.stop
            )
        elif watched:
            # The watchdog passes a run cancel on to it (and sets it on a timeout).
            attempt = Attempt(next(self._tokens), node, retry, stop=self.stop)
            if self._cancelled:
                attempt.cancel.set()
        else:
            attempt = Attempt(token=next(self._tokens), node=node, retry=retry)
            if self._cancelled:
                attempt.cancel.set()
        self._running[attempt.token] = attempt
        if not inline:
            WORKERS.submit(lambda: self._queue.put((attempt.token, self._work(attempt, False))))
            return
        if not watched:
            self._queue.put((attempt.token, self._work(attempt, reraise=True)))
            return
        with self._inline_lock:
            self._inline = attempt
        outcome = self._work(attempt, reraise=False)
        with self._inline_lock:
            abandoned = self._inline is not attempt  # then it may be another loop's attempt
            if not abandoned:
                self._inline = None
        if abandoned:  # timed out: another thread runs this graph's loop now
            raise _Abandoned
        self._queue.put((attempt.token, outcome))

    def _work(self, attempt: Attempt, reraise: bool) -> Outcome:
        try:
            return self.steps[type(attempt.node)](self, attempt.node, attempt)
        except BaseException as exc:  # off the caller's thread, never leave the loop waiting
            if reraise and not isinstance(exc, Exception):
                raise
            _LOGGER.exception("internal error while running node %s", attempt.node.id)
            return Outcome(
                "failed",
                error=BlockError(
                    BlockErrorCode.BLOCK_FAILED,
                    f"ノード {attempt.node.id!r} の実行中に内部エラーが起きました"
                    f"（{type(exc).__name__}: {exc}）",
                    hint="もう一度実行しても直らないときは、開発担当者に連絡してください",
                    details={
                        "node_id": self.frame.owner(attempt.node.id),
                        "path": self.frame.path(attempt.node.id),
                        "exception_type": type(exc).__name__,
                    },
                    recoverable=False,
                ),
            )

    def _release(self, node_id: str) -> None:
        for dependant in self._dependants[node_id]:
            if dependant in self._blocking:
                self._blocking[dependant] -= 1
                if self._blocking[dependant] == 0:
                    heapq.heappush(self._ready, (self._order[dependant], dependant))

    def _settle(self, attempt: Attempt, outcome: Outcome) -> None:
        node = attempt.node
        node_state = self.state.nodes[node.id]
        node_state.duration_ms = outcome.duration_ms
        status = outcome.status
        # outputs before status: a progress save on another thread never sees a
        # "success" without its outputs
        if status == "success":
            node_state.outputs, node_state.status = outcome.outputs, "success"
            node_state.error = node_state.request = None
            self.emit(
                "node_complete",
                node.id,
                outputs=outcome.outputs,
                duration_ms=outcome.duration_ms,
                attempt=attempt.retry + 1,
            )
            self._release(node.id)
        elif status == "skipped":
            node_state.outputs, node_state.status = outcome.outputs, "skipped"
            node_state.error = node_state.request = None
            self.emit(
                "node_skipped", node.id, reason="when_condition_false", condition=outcome.condition
            )
            self._release(node.id)
        elif status == "waiting":
            node_state.status, node_state.request = "waiting", outcome.request
            self.emit("node_waiting", node.id, block=node_state.block, request=outcome.request)
        elif status in ("paused", "cancelled"):
            node_state.status = status
        else:
            self._settle_failure(attempt, outcome)
        self.services.progress()

    def _settle_failure(self, attempt: Attempt, outcome: Outcome) -> None:
        node = attempt.node
        node_state = self.state.nodes[node.id]
        error = outcome.error
        assert error is not None
        # Once the run is cancelled, any error ends the attempt as cancelled (not
        # finished), so that a resume runs the node again: a block may react to the
        # cancel with another error (an aborted HTTP call raising API_ERROR).
        if self._cancelled or self.services.cancel_event.is_set():
            node_state.status = "cancelled"
            return
        policy = self.frame.policy
        will_retry = (
            policy.on_error == "retry"
            and outcome.retryable
            and error.code != BlockErrorCode.CANCELLED
            and attempt.retry < policy.retries
            and not (self._halted or self._cancelled)
        )
        # the error is kept in the run state and shown to users: secrets masked (§12)
        error_dict = mask_secrets(error.to_dict())
        self.emit(
            "node_error",
            node.id,
            error=error_dict,
            attempt=attempt.retry + 1,
            retry=attempt.retry,
            will_retry=will_retry,
        )
        if will_retry:
            self._start(node, retry=attempt.retry + 1)
            return
        node_state.error, node_state.request = error_dict, None
        node_state.outputs = None
        if policy.on_error == "continue":
            node_state.outputs = dict.fromkeys(declared_aliases(node, self.services.catalog))
        node_state.status = "failed"
        if policy.on_error == "continue":
            self._release(node.id)
            return
        if self.first_failure is None:
            self.first_failure = (self.frame.path(node.id), error_dict)
        self._halt()
