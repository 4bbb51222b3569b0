"""``${...}`` references in Plans (seed 002 §5): parsing, finding and resolving them.

Roots: a node id (``${parse.evidence.files}``: node ``parse``, output alias
``evidence``, then an attribute path), ``vars``, ``env``, ``config``, and inside
loop bodies the loop's item/index variables (``${file}``, ``${idx}``). Path
segments are keys, list indexes (``items.0`` or ``items[0]``) and ``.length``
(the size of a list, string or mapping).

A value that is exactly one reference keeps the referenced value's type; a
reference embedded in longer text is turned into text.

CONTRACT (implementation owned by the references/expressions work; signatures are fixed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.errors import UserInputError


class ReferenceError_(UserInputError):  # noqa: N801 - avoid shadowing the builtin name
    """A reference that cannot be parsed or resolved (names the reference and the reason)."""

    code = "REFERENCE_ERROR"


@dataclass(frozen=True)
class Reference:
    """One parsed reference: ``root`` and the ``path`` after it (keys, indexes, 'length')."""

    root: str
    path: tuple[str | int, ...]
    text: str
    """The reference as written, without ``${`` and ``}``."""


def parse_reference(text: str) -> Reference:
    """Parse the inside of ``${...}``; raises ReferenceError_ on bad syntax."""
    raise NotImplementedError


def find_references(value: Any, path: str = "") -> Iterator[tuple[str, Reference]]:
    """Every reference inside a literal (nested dicts/lists/strings) with its field path."""
    raise NotImplementedError


def is_whole_reference(value: Any) -> bool:
    """True when ``value`` is a string that is exactly one ``${...}``."""
    raise NotImplementedError


Resolver = Callable[[Reference], Any]
"""Returns the value of a reference or raises ReferenceError_ (see ``Scope.lookup``)."""


@dataclass(frozen=True)
class Scope:
    """The values references resolve against while running (or dry-running) a graph.

    ``nodes``: node id → {alias: value} for nodes that finished (a skipped node maps to
    ``None`` for each alias); ``locals``: loop item/index variables.
    """

    nodes: Mapping[str, Mapping[str, Any] | None]
    vars: Mapping[str, Any]
    env: Mapping[str, str]
    config: Mapping[str, Any]
    locals: Mapping[str, Any]

    def lookup(self, reference: Reference) -> Any:
        """The referenced value; ReferenceError_ naming what is missing and what exists."""
        raise NotImplementedError


def resolve_value(value: Any, resolver: Resolver) -> Any:
    """Replace every reference inside ``value`` (recursively), keeping whole-reference types."""
    raise NotImplementedError
