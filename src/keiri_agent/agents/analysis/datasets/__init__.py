"""Datasets: uploaded CSV/Excel files loaded, cleaned and summarised once, by ``dataset_id``.

``registry`` (``DatasetRegistry``), ``loading`` (bytes → raw table: encodings, title
rows above the header, sheets), ``cleaning`` (names, blanks, text numbers and dates)
and ``summary`` (the summary agents read every step).
"""

from keiri_agent.agents.analysis.datasets.loading import SUPPORTED_SUFFIXES, excel_sheet_names
from keiri_agent.agents.analysis.datasets.registry import DatasetRegistry
from keiri_agent.agents.analysis.datasets.summary import CATEGORICAL_MAX_UNIQUE, summarize

__all__ = [
    "CATEGORICAL_MAX_UNIQUE",
    "SUPPORTED_SUFFIXES",
    "DatasetRegistry",
    "excel_sheet_names",
    "summarize",
]
