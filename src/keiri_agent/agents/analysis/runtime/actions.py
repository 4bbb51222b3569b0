"""``execute_analysis`` / ``execute_plot``: the tools the ``act`` node calls (seed 000).

The spec is validated, the DataFrame is taken from the registry by ``dataset_id``,
every column the spec names is checked against it, and the template code runs in
a forked child process under the time and memory limits of the settings: one
``IsolatedWorker`` per dataset, reused from action to action until it breaks a limit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pandas as pd
from pydantic import BaseModel

from keiri_agent.agents.analysis.artifacts import ActionResult
from keiri_agent.agents.analysis.datasets.registry import DatasetRegistry
from keiri_agent.agents.analysis.ops.executor import run_analysis
from keiri_agent.agents.analysis.ops.specs import (
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
)
from keiri_agent.agents.analysis.runtime.isolation import IsolatedWorker, run_isolated
from keiri_agent.config import Settings
from keiri_agent.errors import ExecutionError, KeiriAgentError, SpecError


def as_action_error(raised: Exception) -> KeiriAgentError:
    """``raised`` itself if it is one of ours, else an ExecutionError (code ACTION_FAILED).

    An unexpected exception inside an action (a bug, or data pandas cannot handle)
    must not end the turn with a traceback: it becomes an error like any other, so
    the ``act`` node puts it in ``last_error`` and the reasoner can try another spec
    or tell the user what failed.
    """
    if isinstance(raised, KeiriAgentError):
        return raised
    type_name = type(raised).__name__
    text = str(raised).strip() or "（詳細なし）"
    return ExecutionError(
        f"分析の実行中に予期しないエラーが起きました（{type_name}: {text}）",
        code="ACTION_FAILED",
        hint="別の列・集計・絞り込み条件で簡単な指定にするか、指定した列の値を確かめてください",
        details={"exception": type_name},
    )


class AnalysisActions:
    """Runs specs against registered datasets, each action within its limits."""

    def __init__(self, registry: DatasetRegistry, settings: Settings) -> None:
        self.registry = registry
        self.settings = settings
        self._workers: dict[str, tuple[tuple[Any, ...], IsolatedWorker]] = {}
        self._workers_lock = threading.Lock()

    def execute_analysis(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        """Run an ``analysis_spec`` dict; raises SpecError / ActionLimitError on failure."""
        model = parse_analysis_spec(spec)
        return self._run(run_analysis, model, self._dataset_id(model, dataset_id))

    def execute_plot(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        """Run a ``plot_spec`` dict; figures come back as in-memory PNG bytes."""
        model = parse_plot_spec(spec)
        # matplotlib loads in this process on the first plot (children inherit it)
        from keiri_agent.agents.analysis.ops.plots import run_plot

        return self._run(run_plot, model, self._dataset_id(model, dataset_id))

    def execute(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        """Run either kind of spec, told apart by its ``type`` (or ``op``/``kind``).

        Raises:
            KeiriAgentError: every failure; an unexpected exception of the action
                comes as ExecutionError with code ``ACTION_FAILED`` (see
                ``as_action_error``).
        """
        kind = spec.get("type") or ("plot" if "kind" in spec else "analysis")
        try:
            if kind == "plot":
                return self.execute_plot(spec, dataset_id)
            if kind == "analysis":
                return self.execute_analysis(spec, dataset_id)
        except KeiriAgentError:
            raise
        except Exception as raised:  # KeyboardInterrupt / SystemExit still propagate
            raise as_action_error(raised) from raised
        raise SpecError(
            f"指定の種類 {kind!r} はありません。指定できるもの: analysis, plot",
            hint='"type": "analysis"（"op" と一緒に）か "plot"（"kind" と一緒に）を指定してくだ'
            "さい",
        )

    @staticmethod
    def _dataset_id(model: BaseModel, dataset_id: str | None) -> str:
        chosen = dataset_id or getattr(model, "dataset_id", None)
        if not chosen:
            raise SpecError(
                "分析するデータ（dataset_id）が指定されていません",
                hint="先にファイルをアップロードするか、dataset_id を指定してください",
            )
        return str(chosen)

    def _run(
        self,
        runner: Callable[[Any, pd.DataFrame], ActionResult],
        model: BaseModel,
        dataset_id: str,
    ) -> ActionResult:
        frame = self.registry.get(dataset_id)
        check_columns(model, frame.columns)
        if not self.settings.analysis.analysis_isolation:
            return runner(model, frame)
        timeout_s = self.settings.analysis.analysis_timeout_s
        memory_mb = self.settings.analysis.analysis_memory_mb
        worker = self._worker(dataset_id, frame)
        if not worker.lock.acquire(blocking=False):  # another thread's action is running
            return run_isolated(runner, model, frame, timeout_s=timeout_s, memory_mb=memory_mb)
        try:
            return worker.call(runner, model, timeout_s=timeout_s, memory_mb=memory_mb)
        finally:
            worker.lock.release()

    def _worker(self, dataset_id: str, frame: pd.DataFrame) -> IsolatedWorker:
        """The live worker forked with this dataset, started if there is none.

        A registered dataset never changes under its id (ids are random and not
        reused while registered); the shape, columns and dtypes are compared as well.
        Workers of datasets that were removed or left idle are ended here (each holds
        the parent's memory as of its fork).
        """
        shape = (len(frame), tuple(map(str, frame.columns)), tuple(map(str, frame.dtypes)))
        with self._workers_lock:
            for key, (known, worker) in list(self._workers.items()):
                stale = key not in self.registry or worker.idle() or not worker.alive
                if stale or (key == dataset_id and known != shape):
                    if not worker.lock.locked():
                        worker.close()
                    del self._workers[key]
            entry = self._workers.get(dataset_id)
            if entry is not None:
                return entry[1]
            worker = IsolatedWorker(frame)
            self._workers[dataset_id] = (shape, worker)
            return worker

    def close(self) -> None:
        """End the workers (they also end with this object or the process)."""
        with self._workers_lock:
            for _, worker in self._workers.values():
                worker.close()
            self._workers.clear()
