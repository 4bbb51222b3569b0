"""Self-repair material (seed 003 §6): what an attempt got wrong, in a form the model can act on.

* ``diff_nodes``: how one attempt's graph differs from the previous one, per node;
* ``collect_errors``: the errors of the check and the dry run as plain dicts (the
  issue's ``to_dict``: code, message, node_id, path, hint, details);
* ``errors_by_node`` / ``error_codes``: grouping and counting for the prompt and the
  attempt record;
* ``spec_excerpt`` / ``template_contract``: the parts of a block contract / template
  the model needs to fix its wiring.

The repair prompt itself is assembled in ``prompts.repair_prompt``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from keiri_agent.plans.catalog.catalog import BlockSpec
from keiri_agent.plans.check.dry_run_report import DryRunReport
from keiri_agent.plans.design.design_model import port_type_label
from keiri_agent.plans.design.models import NodeChange, TemplateSpec
from keiri_agent.plans.issues import ValidationReport

PLAN_LEVEL = "(plan)"
"""The group of errors that belong to no node."""


def _nodes_by_id(graph: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    for index, node in enumerate(graph):
        if isinstance(node, Mapping):
            node_id = str(node.get("id") or f"#{index + 1}")
            nodes.setdefault(node_id, dict(node))
    return nodes


def diff_nodes(
    before_graph: Sequence[Mapping[str, Any]], after_graph: Sequence[Mapping[str, Any]]
) -> list[NodeChange]:
    """Per node (matched by id): added, removed, or changed with the top-level keys that
    differ. Nodes in ``after_graph`` order, then the removed ones in ``before_graph`` order;
    unchanged nodes are left out."""
    before = _nodes_by_id(before_graph)
    after = _nodes_by_id(after_graph)
    changes: list[NodeChange] = []
    for node_id, node in after.items():
        old = before.get(node_id)
        if old is None:
            changes.append(NodeChange(node_id, "added", after=node))
            continue
        fields = tuple(key for key in dict.fromkeys([*old, *node]) if old.get(key) != node.get(key))
        if fields:
            changes.append(NodeChange(node_id, "changed", before=old, after=node, fields=fields))
    changes += [
        NodeChange(node_id, "removed", before=node)
        for node_id, node in before.items()
        if node_id not in after
    ]
    return changes


def collect_errors(
    report: ValidationReport | None, dry_run: DryRunReport | None
) -> list[dict[str, Any]]:
    """Every error of the check and the dry run, as the issues' plain dicts."""
    errors = [issue.to_dict() for issue in report.errors] if report is not None else []
    if dry_run is not None:
        for problem in dry_run.problems:
            errors.append({**problem.to_dict(), "severity": "error", "node_id": None})
        for node in dry_run.nodes:
            for problem in node.problems:
                errors.append({**problem.to_dict(), "severity": "error", "node_id": node.node_id})
    return errors


def error_codes(errors: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many errors of each code (sorted by code)."""
    return dict(sorted(Counter(str(error.get("code")) for error in errors).items()))


def errors_by_node(errors: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Errors grouped by node id (``PLAN_LEVEL`` for the plan's own), first seen first."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for error in errors:
        groups.setdefault(str(error.get("node_id") or PLAN_LEVEL), []).append(error)
    return groups


def blocks_at_fault(
    errors: Sequence[Mapping[str, Any]], graph: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The block ids of the nodes with errors (loop bodies included), in graph order."""
    faulty = {str(error.get("node_id")) for error in errors if error.get("node_id")}
    found: list[str] = []

    def walk(nodes: Sequence[Mapping[str, Any]]) -> None:
        for node in nodes:
            if not isinstance(node, Mapping):
                continue
            if node.get("id") in faulty and node.get("block"):
                found.append(str(node["block"]))
            body = node.get("body")
            plan = body.get("plan") if isinstance(body, Mapping) else None
            if isinstance(plan, Mapping):
                walk(plan.get("graph") or [])

    walk(graph)
    return list(dict.fromkeys(found))


def spec_excerpt(spec: BlockSpec) -> str:
    """A block contract for the model: inputs (type, required marked, description) and
    outputs (type, description)."""
    required = set(spec.required_inputs())
    lines = [f"ブロック {spec.id}: {first_line(spec.description)}"]
    lines.append("  inputs:")
    for name, port in spec.inputs.items():
        mark = "（必須）" if name in required else ""
        lines.append(
            f"    - {name}: {port_type_label(port)}{mark} {_short(port.get('description'))}"
        )
    if not spec.inputs:
        lines.append("    （なし）")
    lines.append("  outputs:")
    for name, port in spec.outputs.items():
        lines.append(f"    - {name}: {port_type_label(port)} {_short(port.get('description'))}")
    return "\n".join(line.rstrip() for line in lines)


def template_contract(template: TemplateSpec) -> str:
    """A template's imports and exports (its contract) for the repair prompt."""
    lines = [f"テンプレート {template.id}（{template.title}）"]
    for name, port in template.imports.items():
        lines.append(f"  import {name}: {port.type} {_short(port.description)}".rstrip())
    for name, export in template.exports.items():
        line = f"  export {name}: {export.type} ← {export.source} {_short(export.description)}"
        lines.append(line.rstrip())
    return "\n".join(lines)


def first_line(text: str | None) -> str:
    """The first non-empty line of a description."""
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")


def _short(text: Any, limit: int = 120) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 1] + "…"
