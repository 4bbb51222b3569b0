"""Running one spec safely: ``AnalysisActions`` (spec → op on a registered dataset) and
``isolation`` (the forked child with a time and memory limit every action runs in).
"""

from keiri_agent.agents.analysis.runtime.actions import AnalysisActions, as_action_error
from keiri_agent.agents.analysis.runtime.isolation import (
    IsolatedWorker,
    configure_blas_threads,
    isolation_available,
    run_isolated,
)

__all__ = [
    "AnalysisActions",
    "IsolatedWorker",
    "as_action_error",
    "configure_blas_threads",
    "isolation_available",
    "run_isolated",
]
