"""The block catalog (seed 002 §4): YAML contracts, discovery, versions, lazy loading.

CONTRACT (implementation owned by the catalog/blocks work; names are fixed).

A spec file (``block_specs/**/*.yaml``)::

    id: text.template
    version: 1.0.0
    entrypoint: keiri_agent.blocks.text:TemplateBlock   # or path/to/file.py:Class (user dirs)
    kind: processing            # processing | ui
    side_effects: false         # never executed by a dry run when true
    description: ...
    inputs:                     # port name -> JSON Schema + required/default/nullable/examples
      template: {type: string, required: true, examples: ["Hello {name}"]}
    outputs:
      text: {type: string, examples: ["Hello"]}
    dry_run:
      samples: {outputs: {text: "Hello"}}

``$ref`` in a port schema may be ``module:PydanticModel`` or ``jsonschema://<path>``
(a JSON Schema file relative to the spec).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import Block
from keiri_agent.errors import UserInputError


class CatalogError(UserInputError):
    """An unknown block or version, a bad spec file, or an entrypoint that cannot load."""

    code = "CATALOG_ERROR"


@dataclass(frozen=True)
class BlockSpec:
    """One block contract."""

    id: str
    version: str
    entrypoint: str
    kind: str = "processing"
    side_effects: bool = False
    description: str = ""
    inputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    outputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    dry_run_samples: Mapping[str, Any] = field(default_factory=dict)
    source: Path | None = None

    def required_inputs(self) -> list[str]:
        """Input ports with ``required: true`` and no default."""
        raise NotImplementedError

    def input_schema(self, name: str) -> dict[str, Any]:
        """The port's JSON Schema with ``$ref`` resolved (no required/default keys)."""
        raise NotImplementedError

    def output_schema(self, name: str) -> dict[str, Any]:
        """Likewise for an output port."""
        raise NotImplementedError


class BlockCatalog:
    """All block specs found in the package's ``block_specs/`` and the user directories."""

    def __init__(self, specs: Iterable[BlockSpec]) -> None:
        raise NotImplementedError

    @classmethod
    def discover(cls, extra_dirs: Iterable[Path] = ()) -> BlockCatalog:
        """Load every spec (built-in first, then user dirs); CatalogError on a bad file."""
        raise NotImplementedError

    def resolve(self, reference: str) -> BlockSpec:
        """``id`` (newest version) or ``id@<range>`` (^1.2, ~1.2.3, >=1,<2, 1.2.3)."""
        raise NotImplementedError

    def specs(self) -> list[BlockSpec]:
        """Every spec, sorted by id then version."""
        raise NotImplementedError

    def load(self, spec: BlockSpec) -> Block:
        """Import the entrypoint (lazily, cached) and instantiate the block class."""
        raise NotImplementedError


def schema_problems(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """Why ``value`` does not fit a port's JSON Schema (empty when it fits).

    Honours ``nullable: true`` (None accepted) and ignores the port-level keys
    ``required``/``default``/``examples``. Messages name the path inside the value.
    """
    raise NotImplementedError
