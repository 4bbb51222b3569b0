"""Compose templates into one Plan mechanically, without an LLM (seed 003 §4 compose).

Rules (docs/design.md "Templates"):

* Node ids become ``<template_id>__<node_id>`` (loop bodies included) and every
  reference to them is rewritten (``plans.dsl.references.rewrite_references``).
* Templates are ordered so that a template exporting ``X`` comes before one importing
  ``X`` (the given order otherwise); a cycle is a ``CYCLE`` conflict and the given
  order is kept.
* Each import is bound, in this order, to an explicit binding
  (``bindings["<template>.<import>"] = "${...}"``; ``${<template>.<export>}`` names a
  template's export), else to the export of the same name of an earlier template
  when the types agree (a different type: ``TYPE_MISMATCH``; two exporters:
  ``AMBIGUOUS_IMPORT``), else it becomes a Plan var (value from ``vars_defaults``,
  else null) and is listed in ``ComposeResult.unbound``.
* Exports become the Plan's ``exports``; an alias two templates export is an
  ``EXPORT_CLASH`` and both are kept as ``<template_id>__<alias>``.
* Vars of two templates with the same name and different values: ``VAR_CLASH``; the
  first keeps the name, the later one is renamed ``<template_id>__<name>``.
* ``ui.layout``: each template's suggested layout (else its top-level nodes) in order.
* ``policy``: ``COMPOSE_POLICY`` (halt on error, no retries, the default node timeout).

Nothing is chosen silently: every decision compose could not make is a
``ComposeConflict`` the page shows.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.design.models import (
    ComposeConflict,
    ComposeResult,
    TemplateImport,
    TemplateSpec,
)
from keiri_agent.plans.design.templates import missing_blocks, snippet_node_ids
from keiri_agent.plans.dsl.models import DEFAULT_TIMEOUT_MS
from keiri_agent.plans.dsl.references import (
    Reference,
    is_whole_reference,
    rewrite_references,
    split_template,
)
from keiri_agent.plans.issues import IssueCode

SEPARATOR = "__"
COMPOSE_VERSION = "0.1.0"
COMPOSE_POLICY: dict[str, Any] = {
    "on_error": "halt",
    "retries": 0,
    "timeout_ms": DEFAULT_TIMEOUT_MS,
}
"""Policy of a composed Plan: stop at the first error, no retries, the default timeout
per node attempt (``plans.dsl.models.DEFAULT_TIMEOUT_MS``)."""


def types_agree(export_type: str, import_type: str) -> bool:
    """Template port types are compatible when equal or one of them is ``any``."""
    return export_type == import_type or "any" in (export_type, import_type)


def prefixed(template_id: str, name: str) -> str:
    return f"{template_id}{SEPARATOR}{name}"


def compose_templates(
    templates: Sequence[TemplateSpec],
    catalog: BlockCatalog,
    *,
    plan_id: str,
    description: str | None = None,
    bindings: Mapping[str, str] | None = None,
) -> ComposeResult:
    """One Plan mapping from ``templates`` (see the module docstring for the rules).

    ``catalog``: a template whose blocks it lacks is reported (``UNKNOWN_BLOCK``) and
    still composed, so ``check()`` names the node at fault. No template at all is a
    ``UserInputError`` (a Plan needs at least one node).
    """
    if not templates:
        raise UserInputError(
            "テンプレートが選ばれていません。",
            hint="組み合わせるテンプレートを 1 つ以上選んでください。",
            code="NO_TEMPLATES",
        )
    conflicts: list[ComposeConflict] = []
    unique: list[TemplateSpec] = []
    for template in templates:
        if any(t.id == template.id for t in unique):
            conflicts.append(
                ComposeConflict(
                    "DUPLICATE_TEMPLATE",
                    f"テンプレート {template.id} が 2 回選ばれています。1 回だけ使います。",
                    (template.id,),
                )
            )
            continue
        unique.append(template)
        absent = missing_blocks(template, catalog)
        if absent:
            conflicts.append(
                ComposeConflict(
                    IssueCode.UNKNOWN_BLOCK,
                    f"テンプレート {template.id} のブロック {', '.join(absent)} が"
                    "このカタログにありません。",
                    (template.id,),
                )
            )
    explicit = dict(bindings or {})
    ordered = _order(unique, explicit, conflicts)
    return _Composer(ordered, explicit, conflicts).compose(plan_id, description)


def _order(
    templates: list[TemplateSpec], bindings: Mapping[str, str], conflicts: list[ComposeConflict]
) -> list[TemplateSpec]:
    """Exporters before importers (stable: the given order breaks ties)."""
    ids = {t.id for t in templates}
    needs: dict[str, set[str]] = {t.id: set() for t in templates}
    for template in templates:
        for name, port in template.imports.items():
            key = f"{template.id}.{name}"
            if key in bindings:
                target = _binding_template(bindings[key], ids)
                if target is not None and target != template.id:
                    needs[template.id].add(target)
                continue
            for other in templates:
                export = other.exports.get(name)
                if (
                    other.id != template.id
                    and export is not None
                    and types_agree(export.type, port.type)
                ):
                    needs[template.id].add(other.id)
    ordered: list[TemplateSpec] = []
    placed: set[str] = set()
    remaining = list(templates)
    while remaining:
        ready = next((t for t in remaining if needs[t.id] <= placed), None)
        if ready is None:
            names = ", ".join(t.id for t in remaining)
            conflicts.append(
                ComposeConflict(
                    IssueCode.CYCLE,
                    f"テンプレート {names} が互いの出力を入力にしていて順序を決められません。"
                    "選んだ順に並べ、循環する入力は未接続のままにします。",
                    tuple(t.id for t in remaining),
                )
            )
            return ordered + remaining
        ordered.append(ready)
        placed.add(ready.id)
        remaining.remove(ready)
    return ordered


def whole_reference(value: Any) -> Reference | None:
    """The reference when ``value`` is exactly one ``${...}``, else None."""
    if not is_whole_reference(value):
        return None
    parts = split_template(value)
    return parts[0] if isinstance(parts[0], Reference) else None


def _binding_template(value: str, template_ids: set[str]) -> str | None:
    """The template a binding ``${<template>.<export>}`` reads, if it names one."""
    reference = whole_reference(value)
    if reference is None:
        return None
    if reference.root in template_ids:
        return reference.root
    head = reference.root.split(SEPARATOR, 1)[0]
    return head if SEPARATOR in reference.root and head in template_ids else None


class _Composer:
    def __init__(
        self,
        templates: list[TemplateSpec],
        bindings: Mapping[str, str],
        conflicts: list[ComposeConflict],
    ) -> None:
        self.templates = templates
        self.bindings = bindings
        self.conflicts = conflicts
        self.plan_vars: dict[str, Any] = {}
        self.var_owner: dict[str, str] = {}
        self.unbound: list[str] = []
        self.bound: dict[str, str] = {}
        self.export_names = self._export_names()

    def compose(self, plan_id: str, description: str | None) -> ComposeResult:
        graph: list[dict[str, Any]] = []
        layout: list[str] = []
        exports: list[dict[str, str]] = []
        seen: list[TemplateSpec] = []
        for template in self.templates:
            renames = self._imports(template, seen)
            renames.update(self._vars(template, renames))
            nodes = self._nodes(template, renames)
            graph += nodes
            suggested = template.ui_suggestions.layout if template.ui_suggestions else []
            top = [str(node.get("id")) for node in template.graph_snippet]
            layout += [prefixed(template.id, node_id) for node_id in (suggested or top)]
            for alias, export in template.exports.items():
                exports.append(
                    {
                        "from": _prefix_source(template, export.source),
                        "as": self.export_names[(template.id, alias)],
                    }
                )
            seen.append(template)
        self._check_bindings()
        plan: dict[str, Any] = {
            "apiVersion": "v1",
            "id": plan_id,
            "version": COMPOSE_VERSION,
            "description": description
            or "テンプレート " + "、".join(t.title for t in self.templates) + " から合成",
            "vars": self.plan_vars,
            "policy": dict(COMPOSE_POLICY),
            "ui": {"layout": layout},
            "graph": graph,
        }
        if exports:
            plan["exports"] = exports
        return ComposeResult(
            plan=plan, conflicts=self.conflicts, unbound=self.unbound, bindings=self.bound
        )

    # --- exports ------------------------------------------------------------------------

    def _export_names(self) -> dict[tuple[str, str], str]:
        owners: dict[str, list[str]] = {}
        for template in self.templates:
            for alias in template.exports:
                owners.setdefault(alias, []).append(template.id)
        names: dict[tuple[str, str], str] = {}
        for alias, ids in owners.items():
            if len(ids) > 1:
                self.conflicts.append(
                    ComposeConflict(
                        "EXPORT_CLASH",
                        f"出力 {alias} を {'、'.join(ids)} の複数のテンプレートが出しています。"
                        f"どちらも {', '.join(prefixed(i, alias) for i in ids)} として残します。"
                        "使う方を選んでください。",
                        tuple(ids),
                        alias,
                    )
                )
            for template_id in ids:
                names[(template_id, alias)] = (
                    prefixed(template_id, alias) if len(ids) > 1 else alias
                )
        return names

    # --- imports and vars ---------------------------------------------------------------

    def _imports(self, template: TemplateSpec, earlier: list[TemplateSpec]) -> dict[str, str]:
        """Import name → the reference text it becomes (``node.alias`` or ``vars.x``)."""
        renames: dict[str, str] = {}
        for name, port in template.imports.items():
            key = f"{template.id}.{name}"
            target = (
                self._explicit(template, name, self.bindings[key])
                if key in self.bindings
                else self._by_name(template, name, port, earlier)
            )
            if target is None:
                var = self._declare(template, name, template.vars_defaults.get(name))
                renames[name] = f"vars.{var}"
                self.unbound.append(key)
            else:
                renames[name] = target
                self.bound[key] = "${" + target + "}"
        return renames

    def _explicit(self, template: TemplateSpec, name: str, value: str) -> str | None:
        key = f"{template.id}.{name}"
        reference = whole_reference(value)
        if reference is None:
            self.conflicts.append(
                ComposeConflict(
                    "BINDING_SYNTAX",
                    f"{key} の指定 {value!r} は ${{ノード.出力}} または ${{vars.名前}} の"
                    "形ではありません。未接続にします。",
                    (template.id,),
                    name,
                )
            )
            return None
        owner = next((t for t in self.templates if t.id == reference.root), None)
        if owner is None:
            if reference.root == "vars" and reference.path:
                self._declare(template, str(reference.path[0]), None)
            return reference.text
        alias = str(reference.path[0]) if reference.path else ""
        export = owner.exports.get(alias)
        if export is None:
            self.conflicts.append(
                ComposeConflict(
                    "BINDING_UNKNOWN",
                    f"{key} の指定 {value}: テンプレート {owner.id} に出力 {alias!r} がありません"
                    f"（出力: {', '.join(owner.exports) or 'なし'}）。未接続にします。",
                    (template.id, owner.id),
                    name,
                )
            )
            return None
        rest = reference.text[len(owner.id) + 1 + len(alias) :]
        return _prefix_source(owner, export.source) + rest

    def _by_name(
        self, template: TemplateSpec, name: str, port: TemplateImport, earlier: list[TemplateSpec]
    ) -> str | None:
        exporters = [t for t in earlier if name in t.exports]
        agreeing = [t for t in exporters if types_agree(t.exports[name].type, port.type)]
        for other in exporters:
            if other not in agreeing:
                self.conflicts.append(
                    ComposeConflict(
                        "TYPE_MISMATCH",
                        f"{template.id} の入力 {name}（{port.type}）と {other.id} の出力 {name}"
                        f"（{other.exports[name].type}）は型が違うため接続しません。",
                        (other.id, template.id),
                        name,
                    )
                )
        if len(agreeing) > 1:
            self.conflicts.append(
                ComposeConflict(
                    "AMBIGUOUS_IMPORT",
                    f"{template.id} の入力 {name} に使える出力が "
                    f"{'、'.join(t.id for t in agreeing)} にあります。"
                    "どれを使うか決められないため、この入力は変数のままにしました"
                    "（生成された Plan の vars か、設計チャットで値を決めてください）。",
                    (*(t.id for t in agreeing), template.id),
                    name,
                )
            )
            return None
        if not agreeing:
            return None
        owner = agreeing[0]
        return _prefix_source(owner, owner.exports[name].source)

    def _vars(self, template: TemplateSpec, renames: Mapping[str, str]) -> dict[str, str]:
        """Declare ``vars_defaults`` (not imports); renamed ones for ``VAR_CLASH``."""
        result: dict[str, str] = {}
        for name, value in template.vars_defaults.items():
            if name in template.imports:
                continue
            var = self._declare(template, name, value)
            if var != name:
                result[name] = f"vars.{var}"
        return result

    def _declare(self, template: TemplateSpec, name: str, value: Any) -> str:
        """The Plan var ``name`` holding ``value``; renamed when another template set it
        to something else."""
        if name not in self.plan_vars:
            self.plan_vars[name] = copy.deepcopy(value)
            self.var_owner[name] = template.id
            return name
        if self.plan_vars[name] == value:
            return name
        renamed = prefixed(template.id, name)
        self.conflicts.append(
            ComposeConflict(
                "VAR_CLASH",
                f"変数 {name} の値が {self.var_owner[name]} と {template.id} で違います。"
                f"{template.id} の方を {renamed} にしました。同じでよければ揃えてください。",
                (self.var_owner[name], template.id),
                name,
            )
        )
        self.plan_vars[renamed] = copy.deepcopy(value)
        self.var_owner[renamed] = template.id
        return renamed

    def _check_bindings(self) -> None:
        for key in self.bindings:
            template_id, _, name = key.partition(".")
            template = next((t for t in self.templates if t.id == template_id), None)
            if template is None or name not in template.imports:
                self.conflicts.append(
                    ComposeConflict(
                        "BINDING_UNKNOWN",
                        f"指定 {key} に当たるテンプレートの入力がありません"
                        "（<テンプレートID>.<入力名> で書きます）。",
                        (template_id,) if template is not None else (),
                        name or None,
                    )
                )

    # --- nodes --------------------------------------------------------------------------

    def _nodes(self, template: TemplateSpec, renames: Mapping[str, str]) -> list[dict[str, Any]]:
        ids = set(snippet_node_ids(template.graph_snippet))
        nodes = copy.deepcopy(template.graph_snippet)

        def replace(reference: Reference) -> str | None:
            if reference.root in ids:
                return prefixed(template.id, reference.text)
            if reference.root == "vars" and reference.path:
                name = str(reference.path[0])
                target = renames.get(name)
                if target is None:
                    return None
                head = f"vars.{name}"
                rest = reference.text[len(head) :] if reference.text.startswith(head) else ""
                return target + rest
            return None

        _rename_ids(nodes, template.id)
        return list(rewrite_references(nodes, replace))


def _rename_ids(nodes: list[dict[str, Any]], template_id: str) -> None:
    """Prefix node ids, and the ``from`` of loop-body exports (``node.alias`` text)."""
    for node in nodes:
        if isinstance(node.get("id"), str):
            node["id"] = prefixed(template_id, node["id"])
        body = node.get("body")
        plan = body.get("plan") if isinstance(body, dict) else None
        if isinstance(plan, dict):
            _rename_ids(plan.get("graph") or [], template_id)
            for export in plan.get("exports") or []:
                if isinstance(export, dict) and isinstance(export.get("from"), str):
                    export["from"] = prefixed(template_id, export["from"])


def _prefix_source(template: TemplateSpec, source: str) -> str:
    """``node.alias`` of a template's export → the composed ``<template>__node.alias``."""
    return prefixed(template.id, source)
