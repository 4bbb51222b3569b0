"""The analysis operations: validated specs in, artifacts (tables, figures) out.

``specs`` (the op and plot-kind models an agent writes), ``executor`` (``run_analysis``
for the analysis ops), ``plots`` (``run_plot``), ``filters`` (a spec's row filters),
``results`` (artifact shapes, labels and run logs shared by the ops) and ``row_hash``
(row hashing for the duplicate check).
"""

from typing import TYPE_CHECKING

from keiri_agent.agents.analysis.ops.executor import run_analysis
from keiri_agent.agents.analysis.ops.specs import (
    ANALYSIS_OPS,
    PLOT_KINDS,
    Filter,
    analysis_spec_json_schema,
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
    plot_spec_json_schema,
)
from keiri_agent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.agents.analysis.ops.plots import run_plot

# plots imports matplotlib: only when a plot is drawn.
__getattr__, __dir__ = lazy_exports(__name__, {"run_plot": ".plots"})

__all__ = [
    "ANALYSIS_OPS",
    "PLOT_KINDS",
    "Filter",
    "analysis_spec_json_schema",
    "check_columns",
    "parse_analysis_spec",
    "parse_plot_spec",
    "plot_spec_json_schema",
    "run_analysis",
    "run_plot",
]
