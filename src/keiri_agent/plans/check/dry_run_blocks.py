"""Dry run of one block node: resolve inputs, check them against the ports, take samples.

Outputs come from the spec's ``dry_run.samples.outputs``, else each port's
``examples[0]``, else its ``default``; an output with none of them is
``Unavailable`` (DRY_RUN_NO_SAMPLE for whoever needs it). For
``ui.interactive_input`` the ``collected_data`` sample is built from the node's own
``requirements`` (one key per requirement id: its ``default``, else the first
``options`` entry for select, else a placeholder of its type — see
``REQUIREMENT_SAMPLES``), because a spec-wide sample cannot know each node's fields.

Also the small helpers the dry-run engine shares: ``item_examples`` (a foreach
sample item from the list port's ``items.examples``), ``check_available`` and
``node_label``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, CatalogError
from keiri_agent.plans.catalog.port_types import PortSchemas, sub_schema
from keiri_agent.plans.check.dry_run_report import (
    NodeDryRun,
    Unavailable,
    Unresolvable,
    value_summary,
)
from keiri_agent.plans.dsl.models import BlockNode, LoopNode, Node, Plan
from keiri_agent.plans.dsl.references import Reference, is_whole_reference, parse_reference
from keiri_agent.plans.issues import IssueCode

Outputs = dict[str, Any]
INTERACTIVE_INPUT = "ui.interactive_input"
REQUIREMENT_SAMPLES: dict[str, Any] = {
    "file": "sample{ext}",
    "files": ["sample{ext}"],
    "folder": "sample_folder",
    "text": "sample",
    "chat": "sample",
    "boolean": True,
    "number": 0,
}
"""Placeholder per requirement type (``{ext}``: the first extension in ``accept``)."""


def run_block(
    node: BlockNode,
    spec: BlockSpec | None,
    record: NodeDryRun,
    resolve: Callable[[Any], Any],
    ports: PortSchemas,
) -> Outputs | Unavailable:
    """Dry-run one block node into ``record``; its sample outputs by alias."""
    if spec is None:
        message = f"ブロック {node.block!r} はブロック一覧 (catalog) にありません"
        record.fail(IssueCode.UNKNOWN_BLOCK, message, "block")
        return Unavailable(
            IssueCode.UPSTREAM_FAILED, f"ノード {node.id!r} が失敗しました: {message}"
        )
    record.block = spec.reference
    record.side_effects = spec.side_effects
    values = _inputs(node, spec, record, resolve, ports)
    record.inputs = {key: value_summary(value) for key, value in values.items()}
    return _outputs(node, spec, record, values)


def spec_for(catalog: BlockCatalog, reference: str) -> BlockSpec | None:
    """The spec a block reference resolves to, None when it does not."""
    try:
        return catalog.resolve(reference)
    except CatalogError:
        return None


def requirement_samples(requirements: Any) -> dict[str, Any] | None:
    """``collected_data`` sample for ``ui.interactive_input`` requirements (None if not a list)."""
    if not isinstance(requirements, list):
        return None
    sample: dict[str, Any] = {}
    for item in requirements:
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            continue
        kind = item.get("type")
        options = item.get("options")
        if "default" in item:
            value = copy.deepcopy(item["default"])
        elif kind == "select" and isinstance(options, list) and options:
            value = copy.deepcopy(options[0])
        else:
            accept = str(item.get("accept") or "").split(",")[0].strip()
            value = _fill(REQUIREMENT_SAMPLES.get(str(kind), "sample"), accept)
        sample[item["id"]] = value
    return sample


def _fill(template: Any, ext: str) -> Any:
    if isinstance(template, str):
        return template.format(ext=ext)
    if isinstance(template, list):
        return [_fill(item, ext) for item in template]
    return template


def _inputs(
    node: BlockNode,
    spec: BlockSpec,
    record: NodeDryRun,
    resolve: Callable[[Any], Any],
    ports: PortSchemas,
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, literal in node.inputs.items():
        if key not in spec.inputs:
            record.fail(
                IssueCode.UNKNOWN_INPUT,
                f"{spec.reference} に入力 {key!r} はありません",
                f"in.{key}",
            )
            continue
        try:
            values[key] = resolve(literal)
        except Unresolvable as error:
            record.fail(error.code, error.message, f"in.{key}")
            values[key] = Unavailable(error.code, error.message)
    for name, port in spec.inputs.items():
        if name not in values and "default" in port:
            values[name] = copy.deepcopy(port["default"])
    for name in spec.required_inputs():
        if name not in values:
            record.fail(
                IssueCode.MISSING_REQUIRED_INPUT,
                f"必須の入力 {name!r} に値がありません",
                f"in.{name}",
            )
    for key, value in values.items():
        if isinstance(value, Unavailable):
            continue
        try:
            problems = ports.problems(spec, "inputs", key, value)
        except CatalogError as error:
            record.fail(IssueCode.REF_UNRESOLVED, error.message, f"in.{key}")
            continue
        if problems:
            record.fail(
                IssueCode.INPUT_TYPE_MISMATCH,
                f"入力 {key!r}: " + "; ".join(problems[:3]),
                f"in.{key}",
            )
    return values


def _outputs(
    node: BlockNode, spec: BlockSpec, record: NodeDryRun, inputs: Mapping[str, Any]
) -> Outputs:
    samples = spec.dry_run_samples.get("outputs") or {}
    ports: dict[str, Any] = {}
    for port, declared in spec.outputs.items():
        examples = declared.get("examples")
        if port in samples:
            ports[port] = copy.deepcopy(samples[port])
        elif isinstance(examples, list) and examples:
            ports[port] = copy.deepcopy(examples[0])
        elif "default" in declared:
            ports[port] = copy.deepcopy(declared["default"])
        else:
            ports[port] = Unavailable(
                IssueCode.DRY_RUN_NO_SAMPLE,
                f"ブロック {spec.reference} の出力 {port!r} には試しに使うサンプルがありません"
                "（dry_run.samples.outputs、examples、default のどれもありません）",
            )
    if spec.id == INTERACTIVE_INPUT and "collected_data" in ports:
        derived = requirement_samples(inputs.get("requirements"))
        if derived is not None:
            ports["collected_data"] = derived
    mapping = dict(node.outputs) or {port: port for port in spec.outputs}
    values: Outputs = {}
    for port, alias in mapping.items():
        if port not in ports:
            record.fail(
                IssueCode.OUTPUT_NOT_DECLARED,
                f"{spec.reference} に出力 {port!r} はありません",
                f"out.{port}",
            )
            values[alias] = Unavailable(
                IssueCode.OUTPUT_NOT_DECLARED, f"出力 {port!r} はありません"
            )
        else:
            values[alias] = ports[port]
    record.outputs = {alias: value_summary(value) for alias, value in values.items()}
    return values


def item_examples(plan: Plan, catalog: BlockCatalog, source: Any) -> list[Any]:
    """``items.examples`` of the list port a foreach input references (or [])."""
    if not is_whole_reference(source):
        return []
    reference = parse_reference(source)
    node = next((n for n in _all_nodes(plan.graph) if n.id == reference.root), None)
    if not isinstance(node, BlockNode) or not reference.path:
        return []
    spec = spec_for(catalog, node.block)
    port = {a: p for p, a in node.outputs.items()}.get(str(reference.path[0]), reference.path[0])
    if spec is None or port not in spec.outputs:
        return []
    try:
        schema = sub_schema(spec.output_schema(str(port)), (*reference.path[1:], 0), None)
    except CatalogError:
        return []
    examples = schema.get("examples") if schema else None
    return list(examples) if isinstance(examples, list) else []


def check_available(container: Any, path: tuple[str | int, ...], reference: Reference) -> None:
    """Raise Unresolvable when the referenced value (or part of it) is Unavailable."""
    if isinstance(container, Unavailable):
        raise Unresolvable(container.code, f"{reference}: {container.message}")
    if isinstance(container, Mapping):
        if not path:
            for value in container.values():
                check_available(value, (), reference)
        elif isinstance(container.get(path[0]), Unavailable):
            value = container[path[0]]
            raise Unresolvable(value.code, f"{reference}: {value.message}")


def node_label(node: Node) -> str:
    """What a report shows as the node's block: the block ref, loop or subflow:<id>."""
    if isinstance(node, BlockNode):
        return node.block
    if isinstance(node, LoopNode):
        return "loop"
    return f"subflow:{node.call.plan_id}"


def _all_nodes(graph: Sequence[Node]) -> list[Node]:
    found: list[Node] = []
    for node in graph:
        found.append(node)
        if isinstance(node, LoopNode):
            found += _all_nodes(node.body.plan.graph)
    return found
