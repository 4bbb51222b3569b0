"""``execute_analysis`` / ``execute_plot``: the tools the ``act`` node calls (seed 000).

The spec is validated, the DataFrame is taken from the registry by ``dataset_id``,
every column the spec names is checked against it, and the template code runs in
a forked child process under the time and memory limits of the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
from pydantic import BaseModel

from keiri_agent.agents.analysis.artifacts import ActionResult
from keiri_agent.agents.analysis.executor import run_analysis
from keiri_agent.agents.analysis.isolation import run_isolated
from keiri_agent.agents.analysis.plots import run_plot
from keiri_agent.agents.analysis.registry import DatasetRegistry
from keiri_agent.agents.analysis.specs import check_columns, parse_analysis_spec, parse_plot_spec
from keiri_agent.config import Settings
from keiri_agent.errors import SpecError


class AnalysisActions:
    """Runs specs against registered datasets, each action within its limits."""

    def __init__(self, registry: DatasetRegistry, settings: Settings) -> None:
        self.registry = registry
        self.settings = settings

    def execute_analysis(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        """Run an ``analysis_spec`` dict; raises SpecError / ActionLimitError on failure."""
        model = parse_analysis_spec(spec)
        return self._run(run_analysis, model, self._dataset_id(model, dataset_id))

    def execute_plot(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        """Run a ``plot_spec`` dict; figures come back as in-memory PNG bytes."""
        model = parse_plot_spec(spec)
        return self._run(run_plot, model, self._dataset_id(model, dataset_id))

    def execute(self, spec: dict[str, Any], dataset_id: str | None = None) -> ActionResult:
        """Run either kind of spec, told apart by its ``type`` (or ``op``/``kind``)."""
        kind = spec.get("type") or ("plot" if "kind" in spec else "analysis")
        if kind == "plot":
            return self.execute_plot(spec, dataset_id)
        if kind == "analysis":
            return self.execute_analysis(spec, dataset_id)
        raise SpecError(
            f"unknown spec type {kind!r}; valid: analysis, plot",
            hint='set "type": "analysis" (with "op") or "plot" (with "kind")',
        )

    @staticmethod
    def _dataset_id(model: BaseModel, dataset_id: str | None) -> str:
        chosen = dataset_id or getattr(model, "dataset_id", None)
        if not chosen:
            raise SpecError(
                "the spec names no dataset_id and none was given",
                hint="upload a file first, or pass dataset_id",
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
        if not self.settings.analysis_isolation:
            return runner(model, frame)
        return run_isolated(
            runner,
            model,
            frame,
            timeout_s=self.settings.analysis_timeout_s,
            memory_mb=self.settings.analysis_memory_mb,
        )
