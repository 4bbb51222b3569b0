"""What every graph of one run invocation shares: workers, caches, limits, the log.

* ``WORKERS``: reusable daemon threads for node attempts (a timed-out attempt keeps
  its thread without blocking anyone; daemon threads never hold up interpreter exit).
* ``RunServices``: the catalog, settings, env/config, answers, the run log, the
  cancel event, ``per_node`` semaphores, subflow numbering, and caches of port
  validators and graph dependencies (so 1,000 iterations do not recompute them).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, schema_problems
from keiri_agent.plans.dsl.models import Node, Plan
from keiri_agent.plans.run.approval_order import approvals_last
from keiri_agent.plans.run.preflight import cached_dependencies
from keiri_agent.plans.run.run_log import RunLog

_FORMATS = Draft202012Validator.FORMAT_CHECKER
_MEMO_TYPES = frozenset({str, int, float, bool, type(None)})
_MEMO_TEXT = 200
_MEMO_SIZE = 4096
"""Port checks of scalar values are remembered per invocation: types, longest text, count."""


class Workers:
    """Reusable daemon worker threads; a new one starts when none is idle.

    There is no upper bound here: schedulers bound concurrency, and a timed-out
    attempt keeps its thread until it returns without blocking anyone else.
    """

    def __init__(self, idle_timeout_s: float = 30.0) -> None:
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._idle_timeout_s = idle_timeout_s

    def submit(self, task: Callable[[], None]) -> None:
        """Run ``task`` (which must not raise) on an idle or new worker."""
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                self._tasks.put(task)
                return
        threading.Thread(target=self._work, args=(task,), name="plan-worker", daemon=True).start()

    def _work(self, task: Callable[[], None]) -> None:
        while True:
            task()
            with self._lock:
                self._idle += 1
            while True:
                try:
                    task = self._tasks.get(timeout=self._idle_timeout_s)
                    break
                except queue.Empty:
                    with self._lock:
                        if self._tasks.empty():
                            self._idle -= 1
                            return


WORKERS = Workers()


@dataclass
class RunServices:
    """What every graph of one run invocation shares."""

    catalog: BlockCatalog
    settings: Settings
    env: Mapping[str, str]
    config: Mapping[str, Any]
    plan_loader: Callable[[str], Plan] | None
    log: RunLog
    cancel_event: threading.Event
    answers: Mapping[str, Any]
    counters: dict[str, int]
    reruns: int = 0
    """``RunState.reruns``: the generation of this run's block executions."""
    progress: Callable[[], None] = lambda: None
    """Called when a node or a loop iteration finished (``ProgressSaver.node_finished``)."""
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("keiri_agent.blocks"))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _limits: dict[tuple[str, str], threading.BoundedSemaphore] = field(default_factory=dict)
    _specs: dict[str, BlockSpec] = field(default_factory=dict)
    _validators: dict[
        tuple[str, str, str, str], tuple[dict[str, Any], Draft202012Validator | None]
    ] = field(default_factory=dict)
    _valid_scalars: dict[tuple[Any, ...], bool] = field(default_factory=dict)
    prepared: dict[int, Any] = field(default_factory=dict)
    """Per-node work done once per invocation (``block_step``: by ``id(node)``)."""

    def limit(self, run_id: str, node_id: str, size: int) -> threading.BoundedSemaphore:
        """The run-wide cap on concurrent executions of ``node_id`` (``per_node``)."""
        with self._lock:
            key = (run_id, node_id)
            if key not in self._limits:
                self._limits[key] = threading.BoundedSemaphore(size)
            return self._limits[key]

    def spec(self, reference: str) -> BlockSpec:
        """``catalog.resolve(reference)``, once per invocation (the catalog does not change)."""
        found = self._specs.get(reference)
        if found is None:
            found = self._specs[reference] = self.catalog.resolve(reference)
        return found

    def next_subflow_id(self, parent_run_id: str) -> str:
        """``<parent>.sub#<n>``, numbered per parent run (persisted with the state)."""
        with self._lock:
            number = self.counters.get(parent_run_id, 0) + 1
            self.counters[parent_run_id] = number
        return f"{parent_run_id}.sub#{number}"

    def port_problems(self, spec: BlockSpec, direction: str, name: str, value: Any) -> list[str]:
        """``schema_problems`` of a port (``"in"``/``"out"``), with a cached validator.

        A compiled validator answers "valid" quickly; only an invalid value pays for
        ``schema_problems`` and its messages.
        """
        key = (spec.id, spec.version, direction, name)
        cached = self._validators.get(key)
        if cached is None:
            cached = self._validator(spec, direction, name)
        schema, validator = cached
        if validator is None:
            return []
        kind = type(value)
        if kind in _MEMO_TYPES and (kind is not str or len(value) <= _MEMO_TEXT):
            # the same small scalar reaching the same port (a loop's 1,000 iterations,
            # a port default) is checked once per invocation
            memo_key = (key, kind, value)
            valid = self._valid_scalars.get(memo_key)
            if valid is None:
                valid = validator.is_valid(value)
                if len(self._valid_scalars) < _MEMO_SIZE:
                    self._valid_scalars[memo_key] = valid
        else:
            valid = validator.is_valid(value)
        return [] if valid else schema_problems(value, schema)

    def port_checked(self, spec: BlockSpec, direction: str, name: str) -> bool:
        """False when every value fits the port (``port_problems`` is always empty)."""
        key = (spec.id, spec.version, direction, name)
        cached = self._validators.get(key) or self._validator(spec, direction, name)
        return cached[1] is not None

    def _validator(
        self, spec: BlockSpec, direction: str, name: str
    ) -> tuple[dict[str, Any], Draft202012Validator | None]:
        schema = spec.input_schema(name) if direction == "in" else spec.output_schema(name)
        validator = (
            None
            if accepts_anything(schema)
            else Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        )
        cached = self._validators[(spec.id, spec.version, direction, name)] = (schema, validator)
        return cached

    def dependencies(self, graph: Sequence[Node]) -> Mapping[str, set[str]]:
        """``plans.dsl.dependencies.dependencies`` of a graph, computed once per graph
        object, with approval steps after what they do not gate (``approval_order``)."""
        return approvals_last(graph, cached_dependencies(graph))


_ANNOTATIONS = frozenset(
    {"description", "title", "examples", "default", "$comment", "deprecated", "readOnly"}
)


def accepts_anything(schema: Any) -> bool:
    """True for a schema that every value fits (only annotations, or an anyOf with one)."""
    if schema is True:
        return True
    if not isinstance(schema, Mapping):
        return False
    keys = set(schema) - _ANNOTATIONS
    if not keys:
        return True
    if keys == {"anyOf"} and isinstance(schema["anyOf"], list):
        return any(accepts_anything(branch) for branch in schema["anyOf"])
    return False
