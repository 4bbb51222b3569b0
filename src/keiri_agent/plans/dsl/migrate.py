"""Rewrite legacy UI blocks of a Plan to ``ui.interactive_input`` (seed 002 §13).

    new_text, changes = migrate_plan_text(old_text)

- ``ui.file_uploader`` (``ui.file_uploader@…``, ``ui.file_uploader.*``) →
  ``ui.interactive_input@^1``, ``mode: collect`` with one requirement: id ``file``
  (type ``file``) or, with ``multiple: true``, id ``files`` (type ``files``);
  ``label``/``accept`` carried over. The node's answers keep their shape
  (``{file: …}`` / ``{files: […]}``).
- ``ui.confirmation`` (and ``@…``/``.*``) → ``mode: confirm`` with its ``message``;
  the output ``approved`` keeps its alias, so references stay as they are.

The uploader's ``files``/``file`` outputs become entries of ``collected_data``,
which takes the alias of the primary output (``files`` with multiple, else
``file``; ``collected_data`` when none was aliased). References
``${node.old_alias…}`` are rewritten to ``${node.alias.<id>…}`` everywhere in the
plan (``file`` of a multiple uploader → ``….files.0``). A reference that cannot
be expressed (``files`` of a single-file uploader, or an ``exports`` entry naming
an uploader alias) is left as is and reported with ``MANUAL:`` — the validator
then flags it. Loop bodies are migrated too.

The YAML is re-written (key order kept, comments lost); the text is unchanged
when no legacy block is found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.references import Reference, rewrite_references

NEW_BLOCK = "ui.interactive_input@^1"
_LEGACY = re.compile(r"^ui\.(file_uploader|confirmation)(?:[.@].*)?$")


def migrate_plan_text(text: str) -> tuple[str, list[str]]:
    """The migrated plan YAML and one line per change (``MANUAL:`` lines need a human)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise UserInputError(f"Plan の YAML の書き方に誤りがあります: {error}") from None
    if not isinstance(data, dict):
        raise UserInputError(
            "Plan は YAML のマッピング（apiVersion, id, version, graph）で書いてください"
        )
    changes: list[str] = []
    renames: dict[tuple[str, str], str | None] = {}
    """(node id, old alias) → new reference head ``node.alias.path`` (None: cannot)."""
    for node in _block_nodes(data):
        match = _LEGACY.match(str(node.get("block", "")).strip())
        if match is None:
            continue
        if match.group(1) == "file_uploader":
            _migrate_uploader(node, renames, changes)
        else:
            _migrate_confirmation(node, changes)
    if not changes:
        return text, []
    _rewrite_references(data, renames, changes)
    _check_exports(data, renames, changes)
    new_text = yaml.dump(
        data, Dumper=_IndentedDumper, sort_keys=False, allow_unicode=True, width=100
    )
    return new_text, changes


class _IndentedDumper(yaml.SafeDumper):
    """Indents list items under their key (``graph:\n  - id: …``), like hand-written plans."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _block_nodes(data: Any) -> Iterator[dict[str, Any]]:
    """Every node with a ``block`` in the plan's graph and in loop bodies."""
    graph = data.get("graph") if isinstance(data, dict) else None
    for node in graph if isinstance(graph, list) else []:
        if not isinstance(node, dict):
            continue
        if "block" in node:
            yield node
        body = node.get("body")
        if isinstance(body, dict) and isinstance(body.get("plan"), dict):
            yield from _block_nodes(body["plan"])


def _inputs(node: dict[str, Any]) -> dict[str, Any]:
    value = node.get("in")
    return value if isinstance(value, dict) else {}


def _aliases(node: dict[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    """Old output name → alias (every output under its own name when ``out`` is empty)."""
    out = node.get("out")
    if not isinstance(out, dict) or not out:
        return {name: name for name in names}
    return {name: str(out[name]) for name in names if name in out}


def _migrate_uploader(
    node: dict[str, Any],
    renames: dict[tuple[str, str], str | None],
    changes: list[str],
) -> None:
    node_id = str(node.get("id"))
    old_in = _inputs(node)
    multiple = old_in.get("multiple") is True
    primary = "files" if multiple else "file"
    requirement: dict[str, Any] = {
        "id": primary,
        "type": primary,
        "label": old_in.get("label", "ファイル"),
    }
    if old_in.get("accept"):
        requirement["accept"] = old_in["accept"]
    unknown = sorted(set(old_in) - {"label", "accept", "multiple"})
    if isinstance(old_in.get("multiple"), str):
        changes.append(f"MANUAL: {node_id}: multiple is a reference; migrated as single file")
    aliases = _aliases(node, ("files", "file"))
    alias = aliases.get(primary) or "collected_data"
    for name, old_alias in aliases.items():
        if name == primary:
            renames[(node_id, old_alias)] = f"{node_id}.{alias}.{primary}"
        elif multiple:  # file of a multiple uploader: the first of the list
            renames[(node_id, old_alias)] = f"{node_id}.{alias}.files.0"
        else:  # files of a single uploader: no reference gives a one-item list
            renames[(node_id, old_alias)] = None
    old_block = node["block"]
    node["block"] = NEW_BLOCK
    node["in"] = {"mode": "collect", "requirements": [requirement]}
    for key in unknown:
        node["in"][key] = old_in[key]
        changes.append(f"MANUAL: {node_id}: input {key!r} has no counterpart; kept as is")
    node["out"] = {"collected_data": alias}
    changes.append(
        f"{node_id}: {old_block} → {NEW_BLOCK} (mode collect, requirement {primary!r}); "
        f"outputs {', '.join(f'{k}:{v}' for k, v in aliases.items())} → collected_data:{alias}"
    )


def _migrate_confirmation(node: dict[str, Any], changes: list[str]) -> None:
    node_id = str(node.get("id"))
    old_in = _inputs(node)
    old_block = node["block"]
    new_in: dict[str, Any] = {"mode": "confirm"}
    if "message" in old_in:
        new_in["message"] = old_in["message"]
    for key in sorted(set(old_in) - {"message"}):
        new_in[key] = old_in[key]
        changes.append(f"MANUAL: {node_id}: input {key!r} has no counterpart; kept as is")
    alias = _aliases(node, ("approved",)).get("approved", "approved")
    node["block"] = NEW_BLOCK
    node["in"] = new_in
    node["out"] = {"approved": alias}
    changes.append(f"{node_id}: {old_block} → {NEW_BLOCK} (mode confirm); approved:{alias} kept")


def _rewrite_references(
    data: Any, renames: dict[tuple[str, str], str | None], changes: list[str]
) -> Any:
    """Rewrite ``${node.alias…}`` in every string of ``data`` in place."""
    reported: set[str] = set()

    def replace(reference: Reference) -> str | None:
        head = reference.path[0] if reference.path else None
        if not isinstance(head, str) or not reference.text.startswith(f"{reference.root}.{head}"):
            return None  # only the ${node.alias…} form names an alias to rename
        key = (reference.root, head)
        if key not in renames:
            return None
        target = renames[key]
        if target is None:
            note = f"MANUAL: ${{{key[0]}.{key[1]}}}: a single-file uploader has no list"
            if note not in reported:
                reported.add(note)
                changes.append(note + f"; use ${{{key[0]}.<alias>.file}} instead")
            return None
        note = f"reference ${{{key[0]}.{key[1]}…}} → ${{{target}…}}"
        if note not in reported and target != f"{key[0]}.{key[1]}":
            reported.add(note)
            changes.append(note)
        return target + reference.text[len(f"{reference.root}.{head}") :]

    return rewrite_references(data, replace)


def _check_exports(
    data: Any, renames: dict[tuple[str, str], str | None], changes: list[str]
) -> None:
    """``exports: [{from: node.alias}]`` naming a rewritten uploader alias need a human."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "exports" and isinstance(value, list):
                for entry in value:
                    source = entry.get("from") if isinstance(entry, dict) else None
                    node_id, _, alias = str(source).partition(".")
                    if (node_id, alias) in renames:
                        changes.append(
                            f"MANUAL: exports from {source!r}: the uploader output is now "
                            "inside collected_data; export collected_data or add a node"
                        )
            else:
                _check_exports(value, renames, changes)
    elif isinstance(data, list):
        for item in data:
            _check_exports(item, renames, changes)
