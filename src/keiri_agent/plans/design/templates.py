"""Design templates (seed 003 §4): reusable parts of a flow, loaded, searched and checked.

A template is one YAML file ``<category>/<id>.yaml`` (docs/design.md "Templates"):
the bundled ones ship in ``keiri_agent/design_templates/``; a workspace adds its
own under ``designs/templates/``. A workspace template with the id of a bundled one
replaces it (``TemplateLibrary.overrides`` says which). A file that cannot be used
(bad YAML, a schema error, a path leaving the folder, too large, id/file name
mismatch) is skipped and reported in ``TemplateLibrary.problems``; loading never raises.

``validate_template(template, catalog)`` checks a template against the block
catalog: its snippet wrapped as a Plan validates, every export names a snippet
node's output, every ``${vars.X}`` is an import or a ``vars_defaults`` entry, and
each export's type agrees with the JSON schema of the output it names.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog.catalog import BlockCatalog, CatalogError
from keiri_agent.plans.catalog.port_types import (
    compatible,
    describe_types,
    schema_types,
    sub_schema,
)
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.design.models import TemplateSpec
from keiri_agent.plans.dsl.models import BlockNode, Plan
from keiri_agent.plans.dsl.references import (
    Reference,
    ReferenceError_,
    find_references,
    parse_reference,
)
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, Source
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from keiri_agent.config import Settings

BUNDLED_PACKAGE = "keiri_agent.design_templates"
TEMPLATES_FOLDER = "templates"
"""Where a workspace keeps its templates, inside its ``designs/`` folder."""
TEMPLATE_SUFFIXES = (".yaml", ".yml")
MAX_TEMPLATE_BYTES = 256 * 1024
"""A template file larger than this is skipped (a snippet is a few nodes)."""

PORT_JSON_TYPES: dict[str, frozenset[str] | None] = {
    "table": frozenset({"array"}),
    "file": frozenset({"object", "string"}),  # bytes have no JSON type: unknown passes
    "files": frozenset({"array"}),
    "evidence": frozenset({"object"}),
    "text": frozenset({"string"}),
    "number": frozenset({"number", "integer"}),
    "boolean": frozenset({"boolean"}),
    "object": frozenset({"object"}),
    "list": frozenset({"array"}),
    "any": None,
}
"""Template port type → the JSON Schema types of a block port it agrees with."""

SAMPLE_VALUES: dict[str, Any] = {
    "table": [{"列": "値"}],
    "file": "sample",
    "files": ["sample"],
    "evidence": {"groups": [], "files": [], "skipped": []},
    "text": "sample",
    "number": 0,
    "boolean": True,
    "object": {},
    "list": [],
    "any": None,
}
"""The value an import takes when a template is checked alone (``validate_template``)."""


@dataclass(frozen=True)
class TemplateProblem:
    """Why a template file was skipped or a template does not check (message in Japanese)."""

    code: str
    """TEMPLATE_FILE | TEMPLATE_YAML | TEMPLATE_SCHEMA | TEMPLATE_NAME | TEMPLATE_EXPORT |
    TEMPLATE_VAR | TEMPLATE_TYPE, or a Plan issue code of the snippet (UNKNOWN_BLOCK, ...)."""
    message: str
    source: str | None = None
    template_id: str | None = None
    path: str | None = None
    """Where in the template (``exports.payments.from``, ``graph_snippet``)."""

    def __str__(self) -> str:
        where = " ".join(part for part in (self.source, self.path) if part)
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True)
class TemplateOverride:
    """A workspace template that replaced a bundled one with the same id."""

    template_id: str
    replaced: str
    by: str

    def message(self) -> str:
        return (
            f"テンプレート {self.template_id} はワークスペースの {self.by} を使います"
            f"（同梱の {self.replaced} より優先）。"
        )


class TemplateLibrary:
    """Templates by id, with the problems met while loading them."""

    def __init__(
        self,
        templates: Iterable[TemplateSpec],
        *,
        sources: Mapping[str, str] | None = None,
        problems: Sequence[TemplateProblem] = (),
        overrides: Sequence[TemplateOverride] = (),
    ) -> None:
        self._templates: dict[str, TemplateSpec] = {}
        for template in templates:
            self._templates[template.id] = template
        self._sources = dict(sources or {})
        self.problems: list[TemplateProblem] = list(problems)
        self.overrides: list[TemplateOverride] = list(overrides)
        self._index: KeywordIndex | None = None

    @classmethod
    def load(cls, extra_dirs: Iterable[Path] = ()) -> TemplateLibrary:
        """The bundled templates, then each folder of ``extra_dirs`` (a missing folder is
        skipped: a workspace need not have templates); later ids replace earlier ones."""
        found: dict[str, TemplateSpec] = {}
        sources: dict[str, str] = {}
        problems: list[TemplateProblem] = []
        overrides: list[TemplateOverride] = []
        for template, source in _bundled(problems):
            found[template.id], sources[template.id] = template, source
        for folder in extra_dirs:
            for template, source in _folder(Path(folder), problems):
                if template.id in found:
                    overrides.append(TemplateOverride(template.id, sources[template.id], source))
                found[template.id], sources[template.id] = template, source
        return cls(found.values(), sources=sources, problems=problems, overrides=overrides)

    @classmethod
    def from_settings(cls, settings: Settings) -> TemplateLibrary:
        """Bundled templates plus the workspace's ``designs/templates``."""
        return cls.load([Workspace.from_settings(settings).designs / TEMPLATES_FOLDER])

    def get(self, template_id: str) -> TemplateSpec:
        template = self._templates.get(template_id)
        if template is not None:
            return template
        close = _close_ids(template_id, self._templates)
        raise UserInputError(
            f"テンプレート {template_id!r} が見つかりません。",
            hint=(
                f"近い候補: {', '.join(close)}"
                if close
                else f"使えるテンプレート: {', '.join(sorted(self._templates)) or '（なし）'}"
            ),
            details={"template": template_id, "choices": close},
            code="TEMPLATE_NOT_FOUND",
        )

    def all(self) -> list[TemplateSpec]:
        """Every template, by category then id."""
        return sorted(self._templates.values(), key=lambda t: (t.category, t.id))

    def ids(self) -> list[str]:
        return sorted(self._templates)

    def source_of(self, template_id: str) -> str | None:
        """The file a template was read from (None for templates built in code)."""
        return self._sources.get(template_id)

    def __contains__(self, template_id: object) -> bool:
        return template_id in self._templates

    def __len__(self) -> int:
        return len(self._templates)

    def search(self, text: str, k: int = 5) -> list[tuple[TemplateSpec, float]]:
        """BM25 (the search layer's Japanese tokenizer) over each template's title,
        description, tags, category and block ids; best first, only scores > 0."""
        if self._index is None:
            index = KeywordIndex(index_headings=False)
            for template in self._templates.values():
                chunk = Chunk(
                    id=template.id, text=search_text(template), source=Source(template.id)
                )
                index.upsert(template.id, [chunk])
            self._index = index
        return [(self._templates[hit.chunk.id], hit.score) for hit in self._index.search(text, k=k)]


def search_text(template: TemplateSpec) -> str:
    """What ``TemplateLibrary.search`` indexes for one template."""
    parts = [template.title, template.description or "", " ".join(template.tags)]
    parts += [template.category, " ".join(snippet_blocks(template))]
    return "\n".join(part for part in parts if part)


def snippet_blocks(template: TemplateSpec) -> list[str]:
    """The block ids the snippet uses (loop bodies included), each once, in order."""
    found: dict[str, None] = {}

    def walk(nodes: Any) -> None:
        for node in nodes if isinstance(nodes, list) else []:
            if not isinstance(node, Mapping):
                continue
            block = node.get("block")
            if isinstance(block, str):
                found.setdefault(block.split("@", 1)[0], None)
            body = node.get("body")
            if isinstance(body, Mapping) and isinstance(body.get("plan"), Mapping):
                walk(body["plan"].get("graph"))

    walk(template.graph_snippet)
    return list(found)


def snippet_node_ids(nodes: Any) -> list[str]:
    """Every node id of a snippet, loop bodies included."""
    ids: list[str] = []
    for node in nodes if isinstance(nodes, list) else []:
        if not isinstance(node, Mapping):
            continue
        if isinstance(node.get("id"), str):
            ids.append(node["id"])
        body = node.get("body")
        if isinstance(body, Mapping) and isinstance(body.get("plan"), Mapping):
            ids += snippet_node_ids(body["plan"].get("graph"))
    return ids


def missing_blocks(template: TemplateSpec, catalog: BlockCatalog) -> list[str]:
    """The snippet's block ids the catalog does not hold."""
    known = set(catalog.ids())
    return [block for block in snippet_blocks(template) if block not in known]


def template_plan(template: TemplateSpec) -> dict[str, Any]:
    """The snippet as a Plan mapping: vars = a sample value per import + ``vars_defaults``,
    exports = the template's exports, layout = its suggested layout."""
    plan_vars: dict[str, Any] = {
        name: SAMPLE_VALUES[port.type] for name, port in template.imports.items()
    }
    plan_vars.update(template.vars_defaults)
    layout = template.ui_suggestions.layout if template.ui_suggestions else []
    return {
        "apiVersion": "v1",
        "id": f"template_{template.id}",
        "version": "0.1.0",
        "vars": plan_vars,
        "ui": {"layout": list(layout)},
        "graph": template.graph_snippet,
        "exports": [
            {"from": export.source, "as": alias} for alias, export in template.exports.items()
        ],
    }


def validate_template(template: TemplateSpec, catalog: BlockCatalog) -> list[TemplateProblem]:
    """Every error of ``template`` against ``catalog`` (empty: it can be used)."""
    problems: list[TemplateProblem] = []

    def add(code: str, message: str, path: str | None = None) -> None:
        problems.append(TemplateProblem(code, message, template_id=template.id, path=path))

    try:
        plan = Plan.model_validate(template_plan(template))
    except ValidationError as error:
        for line in pydantic_messages(error):
            add("TEMPLATE_SCHEMA", f"graph_snippet を Plan として読めません: {line}")
        return problems
    for issue in PlanValidator(catalog).validate(plan).errors:
        add(issue.code.value, issue.message, issue.path)
    declared = set(template.imports) | set(template.vars_defaults)
    for path, reference in find_references(template.graph_snippet, "graph_snippet"):
        if reference.root != "vars" or not reference.path:
            continue
        name = str(reference.path[0])
        if name not in declared:
            add(
                "TEMPLATE_VAR",
                f"${{vars.{name}}} は imports にも vars_defaults にもありません。"
                "imports に型付きで宣言するか、vars_defaults に既定値を書いてください。",
                path,
            )
    nodes = {node.id: node for node in plan.graph}
    for alias, export in template.exports.items():
        _check_export(alias, export.type, export.source, nodes, catalog, add)
    return problems


def _check_export(
    alias: str,
    port_type: str,
    source: str,
    nodes: Mapping[str, Any],
    catalog: BlockCatalog,
    add: Any,
) -> None:
    where = f"exports.{alias}.from"
    try:
        reference = parse_reference(source)
    except ReferenceError_:
        add(
            "TEMPLATE_EXPORT", f"from {source!r} は <ノード>.<出力名> の形で書いてください。", where
        )
        return
    node = nodes.get(reference.root)
    if node is None or not reference.path:
        add(
            "TEMPLATE_EXPORT",
            f"from {source!r} のノード {reference.root!r} が graph_snippet の最上位にありません"
            f"（あるノード: {', '.join(nodes) or 'なし'}）。",
            where,
        )
        return
    if not isinstance(node, BlockNode):
        return  # a loop's or subflow's outputs have no block schema to compare with
    alias_name = str(reference.path[0])
    outputs = node.outputs or None
    output = _output_port(node, alias_name)
    if output is None:
        names = list(outputs.values()) if outputs else []
        add(
            "TEMPLATE_EXPORT",
            f"from {source!r}: ノード {node.id} に出力 {alias_name!r} がありません"
            f"（out の別名: {', '.join(names) or 'なし'}）。",
            where,
        )
        return
    _check_export_type(alias, port_type, reference, node, output, catalog, add)


def _output_port(node: BlockNode, alias: str) -> str | None:
    if not node.outputs:
        return alias  # every output under its own name (the validator checks it exists)
    for port, written in node.outputs.items():
        if written == alias:
            return port
    return None


def _check_export_type(
    alias: str,
    port_type: str,
    reference: Reference,
    node: BlockNode,
    port: str,
    catalog: BlockCatalog,
    add: Any,
) -> None:
    try:
        spec = catalog.resolve(node.block)
        schema = spec.output_schema(port)
    except (CatalogError, KeyError):
        return  # the validator reports unknown blocks and outputs
    target = sub_schema(schema, tuple(reference.path[1:]), schema) if reference.path[1:] else schema
    actual = schema_types(target, schema) if target is not None else None
    expected = PORT_JSON_TYPES.get(port_type)
    if not compatible(actual, expected):
        add(
            "TEMPLATE_TYPE",
            f"export {alias} の型 {port_type} が、{node.block} の出力 {port} の型"
            f"（{describe_types(actual)}）と合いません。",
            f"exports.{alias}.type",
        )


def pydantic_messages(error: ValidationError) -> list[str]:
    """A schema error as Japanese lines ``<場所>: <理由>``."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "（全体）"
        kind = item["type"]
        if kind == "missing":
            reason = "必須の項目がありません"
        elif kind == "extra_forbidden":
            reason = "使えない項目です（綴りを確認してください）"
        elif kind.endswith("_type") or kind.endswith("_parsing"):
            reason = f"型が違います（{item['msg']}）"
        elif kind == "too_short":
            reason = "空にできません"
        else:
            reason = str(item["msg"]).removeprefix("Value error, ")
        lines.append(f"{where}: {reason}")
    return lines


def _close_ids(template_id: str, templates: Iterable[str]) -> list[str]:
    return difflib.get_close_matches(template_id, list(templates), n=3, cutoff=0.5)


# --- reading files ---------------------------------------------------------------------


def _bundled(problems: list[TemplateProblem]) -> Iterator[tuple[TemplateSpec, str]]:
    root = resources.files(BUNDLED_PACKAGE)
    for relative, entry in _walk(root, ""):
        source = f"keiri_agent/design_templates/{relative}"
        try:
            data = entry.read_bytes()
        except OSError as error:
            problems.append(TemplateProblem("TEMPLATE_FILE", f"読めません（{error}）", source))
            continue
        template = _parse(data, source, relative, problems)
        if template is not None:
            yield template, source


def _walk(folder: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir():
            yield from _walk(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(TEMPLATE_SUFFIXES):
            yield f"{prefix}{entry.name}", entry


def _folder(folder: Path, problems: list[TemplateProblem]) -> Iterator[tuple[TemplateSpec, str]]:
    if not folder.is_dir():
        return
    root = folder.resolve()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.suffix not in TEMPLATE_SUFFIXES or not path.is_file():
            continue
        source = str(path)
        if not path.resolve().is_relative_to(root):
            problems.append(
                TemplateProblem(
                    "TEMPLATE_FILE",
                    f"テンプレートフォルダ {folder} の外を指しているため読みません。"
                    "ファイルをフォルダの中に置いてください。",
                    source,
                )
            )
            continue
        if path.stat().st_size > MAX_TEMPLATE_BYTES:
            problems.append(_too_large(source))
            continue
        try:
            data = path.read_bytes()
        except OSError as error:
            problems.append(TemplateProblem("TEMPLATE_FILE", f"読めません（{error}）", source))
            continue
        template = _parse(data, source, relative.as_posix(), problems)
        if template is not None:
            yield template, source


def _too_large(source: str) -> TemplateProblem:
    return TemplateProblem(
        "TEMPLATE_FILE",
        f"ファイルが大きすぎます（上限 {MAX_TEMPLATE_BYTES // 1024} KiB）。"
        "テンプレートは数ノードの部分フローにしてください。",
        source,
    )


def _parse(
    data: bytes, source: str, relative: str, problems: list[TemplateProblem]
) -> TemplateSpec | None:
    if len(data) > MAX_TEMPLATE_BYTES:
        problems.append(_too_large(source))
        return None
    try:
        loaded = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError:
        problems.append(TemplateProblem("TEMPLATE_FILE", "UTF-8 で保存してください。", source))
        return None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{mark.line + 1} 行目: " if mark is not None else ""
        problems.append(
            TemplateProblem(
                "TEMPLATE_YAML",
                f"YAML として読めません（{where}{getattr(error, 'problem', None) or error}）。"
                "インデントと引用符を確認してください。",
                source,
            )
        )
        return None
    if not isinstance(loaded, dict):
        problems.append(
            TemplateProblem(
                "TEMPLATE_SCHEMA", "テンプレートは id, title などのマッピングで書きます。", source
            )
        )
        return None
    try:
        template = TemplateSpec.model_validate(loaded)
    except ValidationError as error:
        for line in pydantic_messages(error):
            problems.append(TemplateProblem("TEMPLATE_SCHEMA", line, source, loaded.get("id")))
        return None
    parts = Path(relative).parts
    stem = Path(relative).stem
    if template.id != stem:
        problems.append(
            TemplateProblem(
                "TEMPLATE_NAME",
                f"id {template.id!r} とファイル名 {stem!r} が違います"
                "（<id>.yaml にしてください）。",
                source,
                template.id,
            )
        )
        return None
    if len(parts) >= 2 and parts[-2] != template.category:
        problems.append(
            TemplateProblem(
                "TEMPLATE_NAME",
                f"category {template.category!r} とフォルダ {parts[-2]!r} が違います"
                "（<category>/<id>.yaml に置いてください）。",
                source,
                template.id,
            )
        )
        return None
    return template
