"""A column (and maybe one of its values) named in a request: what the parser finds and
the filter rules read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    """A column named in the text; ``value`` is set when the text names one of its values.
    ``guessed``: read by similarity (「支給分」 ~ 支給区分), not by a term of the column."""

    start: int
    end: int
    column: str
    value: str | None = None
    negated: bool = False
    guessed: bool = False
