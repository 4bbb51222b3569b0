"""The input bounds in force: how much one file may make a reader build.

``files/bounds.py`` checks every untrusted table against :func:`current_input_limits`.
The values come from the settings ``input_max_*``: building a ``Settings`` installs them
(as it registers its secrets for masking), so the readers deep in the core never read
the environment themselves, and Python callers that never build ``Settings`` get the
defaults below. The process holds one set at a time: the last ``Settings`` built wins,
which is what a surface wants (it builds its ``Settings`` once).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputLimits:
    """The ``input_max_*`` settings (see docs/configuration.md)."""

    max_rows: int = 1_048_576
    max_columns: int = 2_000
    max_cells: int = 10_000_000
    max_line_chars: int = 1_048_576
    max_unpacked_bytes: int = 500 * 2**20


_current = InputLimits()


def install_input_limits(limits: InputLimits) -> None:
    """Make ``limits`` the bounds every reader checks from now on."""
    global _current
    _current = limits


def current_input_limits() -> InputLimits:
    """The bounds in force (the defaults until a ``Settings`` is built)."""
    return _current
