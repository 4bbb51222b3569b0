"""The block spec file (one YAML file per block), as a Pydantic model: ``SpecFile``.

``SpecFile.model_validate(data, context={"source": path})`` checks a parsed file key
by key (a ``SpecProblem`` names the key at fault and how to fix it; ``plans.catalog``
turns it into a ``CatalogError`` with the file name); ``spec_file_schema()`` is its
JSON Schema (for editors and for the Plan generator). ``check_spec`` gives the fields
of a ``BlockSpec``. Besides the keys documented in ``plans.catalog.catalog``, a spec
may carry ``tags`` (a list of words) and a ``category`` (text) that help find it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

import keiri_agent.plans.catalog.ports as port_schema
from keiri_agent.errors import closest_match
from keiri_agent.plans.catalog.semver import is_semver

SPEC_KEYS = (
    "id",
    "version",
    "entrypoint",
    "kind",
    "side_effects",
    "needs_llm",
    "description",
    "inputs",
    "outputs",
    "dry_run",
    "requirements",
    "tags",
    "category",
    "superseded_by",
)
"""Top-level keys of a spec file (``requirements`` is accepted for seed §4 files, unused)."""

KINDS = ("processing", "ui")
BLOCK_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$")
PORT_NAME = re.compile(r"^[^\W\d]\w*$")
MODULE_ENTRYPOINT = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
FILE_ENTRYPOINT = re.compile(r"^[^:]+\.py:[A-Za-z_]\w*$")


class SpecProblem(Exception):
    """One problem in a spec mapping: the key at fault, what is wrong, how to fix it.

    Not a ValueError, so that Pydantic passes it through ``SpecFile`` validation as is.
    """

    def __init__(self, key: str, message: str, hint: str | None = None) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message
        self.hint = hint


def is_file_entrypoint(entrypoint: str) -> bool:
    """True for ``path/to/file.py:Class`` (as opposed to ``package.module:Class``)."""
    return FILE_ENTRYPOINT.match(entrypoint) is not None and ".py:" in entrypoint


def entrypoint_file(entrypoint: str, folder: Path) -> Path:
    """The file of a file entrypoint, resolved inside ``folder`` (SpecProblem otherwise)."""
    relative = entrypoint.rpartition(":")[0]
    base = folder.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise SpecProblem(
            "entrypoint",
            f"{entrypoint!r} points outside the spec's folder {base}",
            hint="keep the block's .py file in the spec's folder or below it",
        )
    return path


class DryRunSamples(BaseModel):
    """``dry_run.samples``: sample values by port name (they must fit the ports)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)


class DryRun(BaseModel):
    """``dry_run``: what the dry run uses instead of running the block."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    samples: DryRunSamples = Field(default_factory=DryRunSamples)


class SpecFile(BaseModel):
    """One block spec file: the block's contract (seed 002 §4)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="keiri-agent block spec")

    id: str = Field(pattern=BLOCK_ID.pattern, description="Dotted block id, e.g. table.filter.")
    version: str = Field(description="SemVer MAJOR.MINOR.PATCH, e.g. 1.0.0.")
    entrypoint: str = Field(
        description="package.module:Class, or path/to/file.py:Class relative to the spec file."
    )
    kind: Literal["processing", "ui"] = "processing"
    side_effects: bool = Field(default=False, description="Never executed by a dry run when true.")
    needs_llm: bool = Field(
        default=False,
        description="Calls the configured LLM: a run without one fails (pre-flight warns).",
    )
    description: str = ""
    tags: list[str] = Field(default_factory=list, description="Words that help find the block.")
    category: str | None = Field(default=None, description="The block's family, e.g. table.")
    superseded_by: str | None = Field(
        default=None,
        description="Kept for existing Plans only: new Plans use this block id instead "
        "(Plan generation never offers it).",
    )
    inputs: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Port name -> JSON Schema plus required/default/nullable/examples.",
    )
    outputs: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Port name -> JSON Schema plus nullable/examples."
    )
    dry_run: DryRun = Field(default_factory=DryRun)
    requirements: list[Any] = Field(
        default_factory=list, description="Accepted for seed §4 files; unused."
    )

    @model_validator(mode="before")
    @classmethod
    def _check_keys(cls, data: Any, info: ValidationInfo) -> Any:
        """Every key checked with a message naming it (``SpecProblem``), before the types."""
        context = info.context if isinstance(info.context, Mapping) else {}
        return _checked(data, context.get("source"))


def spec_file_schema() -> dict[str, Any]:
    """The JSON Schema of a block spec file (ports are described, not checked, by it)."""
    return SpecFile.model_json_schema()


def check_spec(data: Any, source: Path | None) -> dict[str, Any]:
    """The ``BlockSpec`` fields of ``data`` (a parsed spec file); SpecProblem when bad."""
    spec = SpecFile.model_validate(data, context={"source": source})
    samples = spec.dry_run.samples.model_dump(include=set(spec.dry_run.samples.model_fields_set))
    return {
        "id": spec.id,
        "version": spec.version,
        "entrypoint": spec.entrypoint,
        "kind": spec.kind,
        "side_effects": spec.side_effects,
        "needs_llm": spec.needs_llm,
        "description": spec.description,
        "tags": tuple(spec.tags),
        "category": spec.category,
        "superseded_by": spec.superseded_by,
        "inputs": spec.inputs,
        "outputs": spec.outputs,
        "dry_run_samples": samples,
        "source": source,
    }


def _checked(data: Any, source: Path | None) -> dict[str, Any]:
    """``data`` (a parsed spec file) checked key by key, with defaults filled in."""
    if not isinstance(data, Mapping):
        raise SpecProblem("", f"a spec file must hold a mapping, not {type(data).__name__}")
    unknown = [str(key) for key in data if key not in SPEC_KEYS]
    if unknown:
        suggestion = closest_match(unknown[0], SPEC_KEYS)
        raise SpecProblem(
            unknown[0],
            f"キー {unknown[0]!r} は使えません"
            + (f"。{suggestion!r} のことですか？" if suggestion else ""),
            hint="使えるキー: " + ", ".join(SPEC_KEYS),
        )
    for key in ("id", "version", "entrypoint"):
        if data.get(key) is None:
            raise SpecProblem(key, f"missing {key!r}", hint=f"every block spec needs {key!r}")
    block_id, version, entrypoint = data["id"], data["version"], data["entrypoint"]
    if not isinstance(block_id, str) or not BLOCK_ID.match(block_id):
        raise SpecProblem(
            "id", f"{block_id!r} is not a block id", hint="dotted names, e.g. table.filter"
        )
    if not is_semver(version):
        raise SpecProblem(
            "version",
            f"{version!r} is not SemVer",
            hint="MAJOR.MINOR.PATCH as a string, e.g. version: 1.0.0",
        )
    _check_entrypoint(entrypoint, source)
    kind = data.get("kind", "processing")
    if kind not in KINDS:
        raise SpecProblem("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    side_effects = data.get("side_effects", False)
    if not isinstance(side_effects, bool):
        raise SpecProblem("side_effects", f"{side_effects!r} is not true or false")
    needs_llm = data.get("needs_llm", False)
    if not isinstance(needs_llm, bool):
        raise SpecProblem("needs_llm", f"{needs_llm!r} is not true or false")
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise SpecProblem("description", "must be text")
    requirements = data.get("requirements", [])
    if not isinstance(requirements, list):
        raise SpecProblem("requirements", "must be a list (seed §4; unused by the engine)")
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) and tag for tag in tags):
        raise SpecProblem("tags", "must be a list of words", hint="e.g. tags: [excel, 集計]")
    category = data.get("category")
    if category is not None and not isinstance(category, str):
        raise SpecProblem("category", "must be text", hint="e.g. category: table")
    superseded_by = data.get("superseded_by")
    if superseded_by is not None and not (
        isinstance(superseded_by, str) and BLOCK_ID.match(superseded_by)
    ):
        raise SpecProblem(
            "superseded_by",
            "ブロック ID で書いてください",
            hint="例: superseded_by: ui.interactive_input",
        )
    inputs = _check_ports("inputs", data.get("inputs"))
    outputs = _check_ports("outputs", data.get("outputs"))
    samples = _check_dry_run(data.get("dry_run"), inputs, outputs)
    return {
        "id": block_id,
        "version": version,
        "entrypoint": entrypoint,
        "kind": kind,
        "side_effects": side_effects,
        "needs_llm": needs_llm,
        "description": description.strip(),
        "tags": tags,
        "category": category,
        "superseded_by": superseded_by,
        "inputs": inputs,
        "outputs": outputs,
        "dry_run": {"samples": samples},
        "requirements": requirements,
    }


def _check_entrypoint(entrypoint: Any, source: Path | None) -> None:
    hint = "package.module:Class, or path/to/file.py:Class relative to the spec file"
    if not isinstance(entrypoint, str):
        raise SpecProblem("entrypoint", f"{entrypoint!r} is not text", hint=hint)
    if is_file_entrypoint(entrypoint):
        if source is not None:
            path = entrypoint_file(entrypoint, source.parent)
            if not path.is_file():
                raise SpecProblem("entrypoint", f"{entrypoint!r}: no file {path}", hint=hint)
    elif not MODULE_ENTRYPOINT.match(entrypoint):
        raise SpecProblem("entrypoint", f"{entrypoint!r} is not an entrypoint", hint=hint)


def _check_ports(section: str, ports: Any) -> dict[str, dict[str, Any]]:
    if ports is None:
        return {}
    if not isinstance(ports, Mapping):
        raise SpecProblem(section, "must map port names to JSON Schemas")
    checked: dict[str, dict[str, Any]] = {}
    for name, port in ports.items():
        key = f"{section}.{name}"
        if not isinstance(name, str) or not PORT_NAME.match(name):
            raise SpecProblem(key, f"{name!r} is not a port name (letters, digits, _)")
        if not isinstance(port, Mapping):
            raise SpecProblem(
                key,
                f"must be a JSON Schema object, not {port!r}",
                hint="e.g. {type: string, description: ...}",
            )
        required = port.get("required")
        if required is not None and not isinstance(required, bool | list):
            raise SpecProblem(f"{key}.required", "must be true/false (or a JSON Schema list)")
        if "nullable" in port and not isinstance(port["nullable"], bool):
            raise SpecProblem(f"{key}.nullable", "must be true or false")
        if section == "outputs" and "default" in port:
            raise SpecProblem(f"{key}.default", "outputs have no default")
        problems = port_schema.meta_schema_problems(port_schema.strip_port_keys(port))
        if problems:
            raise SpecProblem(
                key,
                "invalid JSON Schema: " + "; ".join(problems[:3]),
                hint="ports are JSON Schema (Draft 2020-12) plus required/default/nullable/"
                "examples/description",
            )
        checked[name] = dict(port)
        _check_values(key, checked[name])
    return checked


def _check_values(key: str, port: Mapping[str, Any]) -> None:
    """Defaults and examples must fit the port (checked now unless it has external $refs)."""
    if port_schema.external_refs(port):
        return  # checked by BlockSpec.sample_problems(), which resolves the refs
    values = [("default", port["default"])] if "default" in port else []
    values += [(f"examples[{i}]", v) for i, v in enumerate(port.get("examples") or [])]
    for label, value in values:
        problems = port_schema.problems(value, port)
        if problems:
            raise SpecProblem(f"{key}.{label}", "does not fit the port: " + "; ".join(problems))


def _check_dry_run(
    dry_run: Any, inputs: Mapping[str, Any], outputs: Mapping[str, Any]
) -> dict[str, Any]:
    if dry_run is None:
        return {}
    if not isinstance(dry_run, Mapping) or set(dry_run) - {"samples"}:
        raise SpecProblem("dry_run", "must be a mapping with only 'samples'")
    samples = dry_run.get("samples") or {}
    if not isinstance(samples, Mapping) or set(samples) - {"inputs", "outputs"}:
        raise SpecProblem("dry_run.samples", "must be a mapping with 'inputs' and/or 'outputs'")
    for part, ports in (("inputs", inputs), ("outputs", outputs)):
        values = samples.get(part, {})
        key = f"dry_run.samples.{part}"
        if not isinstance(values, Mapping):
            raise SpecProblem(key, "must map port names to sample values")
        for name, value in values.items():
            if name not in ports:
                raise SpecProblem(f"{key}.{name}", f"{name!r} is not one of the block's {part}")
            if not port_schema.external_refs(ports[name]):
                problems = port_schema.problems(value, ports[name])
                if problems:
                    raise SpecProblem(f"{key}.{name}", "does not fit: " + "; ".join(problems))
    return {part: dict(samples[part]) for part in ("inputs", "outputs") if part in samples}
