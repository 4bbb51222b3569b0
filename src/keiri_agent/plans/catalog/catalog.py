"""The block catalog (seed 002 §4): YAML contracts, discovery, versions, lazy loading.

A spec file (``block_specs/**/*.yaml``; one spec per file)::

    id: text.template           # required; dotted name
    version: 1.0.0              # required; SemVer
    entrypoint: keiri_agent.blocks.text:TemplateBlock   # or path/to/file.py:Class (user dirs)
    kind: processing            # processing | ui
    side_effects: false         # never executed by a dry run when true
    needs_llm: false            # calls the configured LLM (pre-flight warns without one)
    description: ...
    inputs:                     # port name -> JSON Schema + required/default/nullable/examples
      template: {type: string, required: true, examples: ["Hello {name}"]}
    outputs:
      text: {type: string, examples: ["Hello"]}
    dry_run:
      samples: {inputs: {...}, outputs: {text: "Hello"}}
    tags: [text, テンプレート]  # optional words that help find the block
    category: text              # optional family

No other top-level keys are allowed (``requirements``, a list, is accepted for seed §4
files and unused). ``$ref`` in a port schema may be ``module:PydanticModel`` or
``jsonschema://<path>`` (a JSON Schema file relative to the spec). A file entrypoint
is relative to the spec's folder and must stay inside it. Versions and ranges are
described in ``plans.catalog.semver``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

import keiri_agent.plans.catalog.ports as port_schema
from keiri_agent.blocks.base import Block
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog.entrypoints import EntrypointProblem, import_block_class
from keiri_agent.plans.catalog.semver import Version, VersionRange
from keiri_agent.plans.catalog.spec_file import SpecProblem, check_spec
from keiri_agent.plans.issues import unknown_choice_text

BUILTIN_PACKAGE = "keiri_agent.block_specs"
SPEC_SUFFIXES = (".yaml", ".yml")
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BUILTIN_CACHE: dict[tuple[str, int, int], BlockSpec] = {}
"""Parsed built-in specs by (file, mtime, size): package data is parsed once per process."""


class CatalogError(UserInputError):
    """An unknown block or version, a bad spec file, or an entrypoint that cannot load."""

    code = "CATALOG_ERROR"


_IMMUTABLE = frozenset({type(None), bool, int, float, str})
"""Default values shared as they are (no copy needed)."""


@dataclass(frozen=True)
class BlockSpec:
    """One block contract."""

    id: str
    version: str
    entrypoint: str
    kind: str = "processing"
    side_effects: bool = False
    needs_llm: bool = False
    """Calls the configured LLM: without one the block fails (``plans.check.llm_needs``)."""
    description: str = ""
    inputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    outputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    dry_run_samples: Mapping[str, Any] = field(default_factory=dict)
    """``dry_run.samples`` of the file: ``{"inputs": {...}, "outputs": {...}}``."""
    source: Path | None = None
    tags: tuple[str, ...] = ()
    category: str | None = None
    superseded_by: str | None = None
    """Kept for existing Plans; new Plans (and Plan generation) use this block instead."""
    _schemas: dict[str, dict[str, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_mapping(
        cls, data: Any, source: Path | None = None, *, origin: str | None = None
    ) -> BlockSpec:
        """Check a parsed spec file; CatalogError naming the file and the key at fault."""
        where = origin or (str(source) if source else "<spec>")
        try:
            return cls(**check_spec(data, source))
        except SpecProblem as problem:
            raise CatalogError(
                f"{where}: {problem}",
                hint=problem.hint,
                details={"file": where, "key": problem.key},
            ) from None

    @property
    def reference(self) -> str:
        """``id@version``, the exact pin of this spec."""
        return f"{self.id}@{self.version}"

    @property
    def parsed_version(self) -> Version:
        """The version as a comparable ``Version``."""
        return Version.parse(self.version)

    def required_inputs(self) -> list[str]:
        """Input ports with ``required: true`` and no default."""
        return [
            name
            for name, port in self.inputs.items()
            if port.get("required") is True and "default" not in port
        ]

    def input_defaults(self) -> dict[str, Any]:
        """Input ports' ``default`` values (copies), by port name."""
        return {
            name: default if type(default) in _IMMUTABLE else copy.deepcopy(default)
            for name, port in self.inputs.items()
            if "default" in port
            for default in (port["default"],)
        }

    def input_schema(self, name: str) -> dict[str, Any]:
        """The port's JSON Schema with ``$ref`` resolved (no required/default keys)."""
        return self._schema("inputs", name)

    def output_schema(self, name: str) -> dict[str, Any]:
        """Likewise for an output port."""
        return self._schema("outputs", name)

    def _schema(self, section: str, name: str) -> dict[str, Any]:
        ports = self.inputs if section == "inputs" else self.outputs
        if name not in ports:
            raise CatalogError(
                f"ブロック {self.reference}: "
                + unknown_choice_text("入力" if section == "inputs" else "出力", name, ports),
                details={"block": self.reference, section[:-1]: name},
            )
        key = f"{section}.{name}"
        if key not in self._schemas:
            base = self.source.parent if self.source else None
            try:
                resolved = port_schema.resolve_refs(port_schema.strip_port_keys(ports[name]), base)
            except ValueError as error:
                raise CatalogError(
                    f"{self.source or self.reference}: {key}: {error}",
                    hint="$ref には 'package.module:PydanticModel' か "
                    "'jsonschema://spec ファイルからの相対パス.json' を書いてください",
                    details={"block": self.reference, "key": key},
                ) from None
            self._schemas[key] = port_schema.to_json_schema(resolved)
        return copy.deepcopy(self._schemas[key])

    def sample_problems(self) -> list[str]:
        """Defaults, examples and dry-run samples that do not fit their (resolved) ports."""
        found: list[str] = []
        samples = self.dry_run_samples
        for section, ports in (("inputs", self.inputs), ("outputs", self.outputs)):
            for name, port in ports.items():
                schema = self._schema(section, name)
                values = [("default", port["default"])] if "default" in port else []
                values += [(f"examples[{i}]", v) for i, v in enumerate(port.get("examples") or [])]
                if name in samples.get(section, {}):
                    values.append(("dry_run sample", samples[section][name]))
                for label, value in values:
                    found += [
                        f"{section}.{name} {label}: {p}" for p in schema_problems(value, schema)
                    ]
        return found

    def to_summary(self, *, resolve_refs: bool = False) -> dict[str, Any]:
        """A JSON-compatible description for ``blocks list/show`` and LLM prompts."""

        def ports(section: str) -> dict[str, Any]:
            declared = self.inputs if section == "inputs" else self.outputs
            if not resolve_refs:
                return {name: copy.deepcopy(dict(port)) for name, port in declared.items()}
            shown = {}
            for name, port in declared.items():
                extra = {k: port[k] for k in ("required", "default") if k in port}
                if not isinstance(extra.get("required", True), bool):
                    extra.pop("required")
                shown[name] = {**self._schema(section, name), **copy.deepcopy(extra)}
            return shown

        return (
            {
                "id": self.id,
                "version": self.version,
                "reference": self.reference,
                "kind": self.kind,
                "side_effects": self.side_effects,
                "needs_llm": self.needs_llm,
                "description": self.description,
                "entrypoint": self.entrypoint,
                "required_inputs": self.required_inputs(),
                "inputs": ports("inputs"),
                "outputs": ports("outputs"),
                "dry_run_samples": copy.deepcopy(dict(self.dry_run_samples)),
                "source": str(self.source) if self.source else None,
            }
            | ({"tags": list(self.tags)} if self.tags else {})
            | ({"category": self.category} if self.category else {})
            | ({"superseded_by": self.superseded_by} if self.superseded_by else {})
        )


class BlockCatalog:
    """All block specs found in the package's ``block_specs/`` and the user directories."""

    def __init__(self, specs: Iterable[BlockSpec]) -> None:
        self._by_id: dict[str, dict[Version, BlockSpec]] = {}
        self._classes: dict[tuple[str, str], type[Block]] = {}
        self._by_spec: dict[int, tuple[BlockSpec, type[Block]]] = {}
        for spec in specs:
            versions = self._by_id.setdefault(spec.id, {})
            try:
                version = spec.parsed_version
            except ValueError as error:
                raise CatalogError(
                    f"{_where(spec)}: ブロックのバージョンを読み取れません: {error}",
                    hint="version は '1.0.0' のような番号で書いてください",
                ) from None
            if version in versions:
                first = versions[version]
                raise CatalogError(
                    f"ブロック {spec.id} のバージョン {spec.version} が 2 か所で定義されています: "
                    f"{_where(first)} と {_where(spec)}",
                    hint="どちらかのバージョンを上げるか、どちらかを消してください",
                    details={"block": spec.reference, "files": [_where(first), _where(spec)]},
                )
            versions[version] = spec

    @classmethod
    def discover(cls, extra_dirs: Iterable[Path] = ()) -> BlockCatalog:
        """Load every spec (built-in first, then user dirs); CatalogError on a bad file."""
        specs = list(_builtin_specs())
        for folder in extra_dirs:
            specs.extend(_folder_specs(Path(folder)))
        return cls(specs)

    @classmethod
    def from_settings(cls, settings: Settings) -> BlockCatalog:
        """Built-ins plus ``settings.plans.block_spec_dirs`` (relative dirs are under ``home``)."""
        dirs = [
            d if d.is_absolute() else settings.storage.home / d
            for d in settings.plans.block_spec_dirs
        ]
        return cls.discover(dirs)

    def resolve(self, reference: str) -> BlockSpec:
        """``id`` (newest version) or ``id@<range>`` (^1.2, ~1.2.3, >=1,<2, 1.2.3)."""
        block_id, has_range, range_text = reference.strip().partition("@")
        block_id = block_id.strip()
        versions = self._by_id.get(block_id)
        if not versions:
            raise CatalogError(
                unknown_choice_text("ブロック", block_id, sorted(self._by_id)),
                hint="使えるブロックは `keiri-agent blocks list` で一覧できます",
                details={"block": block_id},
            )
        ordered = sorted(versions)
        if not has_range:
            releases = [v for v in ordered if not v.prerelease]
            return versions[(releases or ordered)[-1]]
        if not range_text.strip():
            raise CatalogError(
                f"{reference!r}: @ の後のバージョンの範囲が空です",
                hint=f"{block_id} か {block_id}@^1.0 のように書いてください",
            )
        try:
            wanted = VersionRange.parse(range_text)
        except ValueError as error:
            raise CatalogError(f"{reference!r}: {error}", details={"block": block_id}) from None
        matching = [v for v in ordered if wanted.allows(v)]
        if not matching:
            available = ", ".join(str(v) for v in ordered)
            raise CatalogError(
                f"ブロック {block_id} に範囲 {range_text.strip()!r} に合うバージョンがありません"
                f"（あるバージョン: {available}）",
                hint=f"あるバージョンに合う範囲にしてください（例: {block_id}@^{ordered[-1]}）",
                details={"block": block_id, "available": [str(v) for v in ordered]},
            )
        return versions[matching[-1]]

    def specs(self) -> list[BlockSpec]:
        """Every spec, sorted by id then version."""
        return [
            versions[version]
            for block_id, versions in sorted(self._by_id.items())
            for version in sorted(versions)
        ]

    def ids(self) -> list[str]:
        """Every block id, sorted."""
        return sorted(self._by_id)

    def load(self, spec: BlockSpec) -> Block:
        """Import the entrypoint (lazily, cached) and instantiate the block class."""
        known = self._by_spec.get(id(spec))
        if known is None or known[0] is not spec:
            folder = str(spec.source.parent) if spec.source else ""
            key = (spec.entrypoint, folder)
            if key not in self._classes:
                self._classes[key] = _load_class(spec)
            # remembered per spec (holding it, so its id is not reused): the folder's
            # text is not rebuilt on every node of a run
            known = self._by_spec[id(spec)] = (spec, self._classes[key])
        block_class = known[1]
        try:
            return block_class()
        except Exception as error:
            raise CatalogError(
                f"ブロック {spec.reference}: {spec.entrypoint} を作れません"
                f"（{type(error).__name__}: {error}）",
                details={"block": spec.reference, "entrypoint": spec.entrypoint},
            ) from error


def schema_problems(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """Why ``value`` does not fit a port's JSON Schema (empty when it fits).

    Honours ``nullable: true`` (None accepted) and ignores the port-level keys
    ``required``/``default``/``examples``. Messages name the path inside the value.
    """
    try:
        return port_schema.problems(value, schema)
    except ValueError as error:
        raise CatalogError(str(error)) from None


def _where(spec: BlockSpec) -> str:
    return str(spec.source) if spec.source else f"<{spec.reference}>"


def _parse_file(text: str, origin: str, source: Path | None) -> BlockSpec:
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f"（{mark.line + 1} 行目）" if mark is not None else ""
        raise CatalogError(
            f"{origin}: YAML の書き方に誤りがあります{line}: "
            f"{getattr(error, 'problem', None) or error}",
            details={"file": origin},
        ) from None
    if data is None:
        raise CatalogError(f"{origin}: ファイルが空です", details={"file": origin})
    return BlockSpec.from_mapping(data, source, origin=origin)


def _walk_traversable(folder: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            yield from _walk_traversable(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(SPEC_SUFFIXES):
            yield f"{prefix}{entry.name}", entry


def _builtin_specs() -> Iterator[BlockSpec]:
    root = resources.files(BUILTIN_PACKAGE)
    for relative, entry in _walk_traversable(root, "keiri_agent/block_specs/"):
        source = Path(str(entry)) if isinstance(entry, Path) else None
        if source is None:
            yield _parse_file(entry.read_text(encoding="utf-8"), relative, None)
            continue
        stat = source.stat()
        key = (str(source), stat.st_mtime_ns, stat.st_size)
        if key not in _BUILTIN_CACHE:
            _BUILTIN_CACHE[key] = _parse_file(
                source.read_text(encoding="utf-8"), str(source), source
            )
        yield _BUILTIN_CACHE[key]


def _folder_specs(folder: Path) -> Iterator[BlockSpec]:
    if not folder.is_dir():
        raise CatalogError(
            f"ブロック定義のフォルダ {folder} がありません",
            hint="設定 KEIRI_AGENT_BLOCK_SPEC_DIRS（フォルダの JSON リスト）を直してください",
            details={"folder": str(folder)},
        )
    files = sorted(p for p in folder.rglob("*") if p.suffix in SPEC_SUFFIXES and p.is_file())
    for path in files:
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CatalogError(
                f"{path}: 読み込めません（{error}）", details={"file": str(path)}
            ) from None
        yield _parse_file(text, str(path), path)


def _load_class(spec: BlockSpec) -> type[Block]:
    folder = spec.source.parent if spec.source else None
    try:
        return import_block_class(spec.entrypoint, folder, spec.kind)
    except EntrypointProblem as problem:
        raise CatalogError(
            f"ブロック {spec.reference} のプログラム（entrypoint {spec.entrypoint!r}）を"
            f"読み込めません: {problem}",
            hint=problem.hint,
            details={"block": spec.reference, "entrypoint": spec.entrypoint},
        ) from problem.__cause__
