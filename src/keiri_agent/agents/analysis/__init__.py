"""The data-analysis agent (seed 000): ask about a CSV/Excel file, get tables, charts, a report.

Public API: ``AnalysisAgent`` (load files, ``ask`` per turn, ``run_specs``),
``TurnResult``, ``DatasetRegistry``, the spec models in ``ops.specs`` and the
``Artifact`` shape.

Subpackages: ``datasets`` (loading, cleaning, summaries, the registry), ``ops``
(specs and the code that runs them), ``runtime`` (actions in an isolated child),
``reasoning`` (the ``Reasoner`` protocol, the LLM and offline reasoners). The graph,
its state, the report, messages and progress events sit at the top.

The names are imported on first use (``lazy_exports``): importing a light submodule
(``report``, ``artifacts``) does not load the agent, pandas or LangGraph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.agents.analysis.agent import AnalysisAgent, TurnResult
    from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
    from keiri_agent.agents.analysis.datasets import DatasetRegistry

__all__ = ["ActionResult", "AnalysisAgent", "Artifact", "DatasetRegistry", "TurnResult"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AnalysisAgent": ".agent",
        "TurnResult": ".agent",
        "ActionResult": ".artifacts",
        "Artifact": ".artifacts",
        "DatasetRegistry": ".datasets",
    },
)
