"""Load Plan YAML into ``models.Plan``, reporting every problem with its line.

``load_plan_text`` / ``load_plan_file`` raise ``PlanValidationError`` whose
``issues`` are ``ValidationIssue`` objects with a code:

* ``YAML_SYNTAX``: the text is not YAML (one document, UTF-8), with the line.
* ``YAML_TOO_LARGE``: over ``MAX_PLAN_BYTES``, or more than ``MAX_YAML_NODES``
  nodes once anchors/aliases are expanded (alias bombs), recursive aliases, or
  nesting deeper than the parser allows.
* ``YAML_DUPLICATE_KEY``: a key written twice in one mapping (YAML keeps the
  last one silently; a Plan must not lose a value that way).
* ``SCHEMA``: the document does not fit the Plan DSL (unknown field, wrong type,
  missing field), with the path (``graph[2].in.mode``), the line and a hint.
* ``WHILE_MISSING_MAX``: a ``while`` loop without ``max_iterations``.
* ``API_VERSION``: an ``apiVersion`` this engine does not support.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.loader_errors import Loc, format_path, schema_issues
from keiri_agent.plans.dsl.models import API_VERSIONS, Plan
from keiri_agent.plans.issues import ValidationIssue, plan_validation_error

MAX_PLAN_BYTES = 2_000_000
MAX_YAML_NODES = 200_000
"""Nodes after expanding aliases; a 1,000-node Plan uses about 20,000."""


def load_plan_file(path: Path | str) -> Plan:
    """Read and load a Plan YAML file (UTF-8, optional BOM)."""
    file = Path(path)
    try:
        size = file.stat().st_size
    except FileNotFoundError:
        raise UserInputError(
            f"plan file not found: {file}",
            code="PLAN_NOT_FOUND",
            hint="check the path (plans live under designs/)",
        ) from None
    if not file.is_file():
        raise UserInputError(
            f"{file} is not a plan file (it is a folder or a device)",
            code="PLAN_NOT_FOUND",
            hint="give a .yaml file, or a plan id under designs/",
        )
    if size > MAX_PLAN_BYTES:
        raise _too_large(f"{size} bytes", str(file))
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise plan_validation_error(
            f"cannot load plan {file}",
            [
                ValidationIssue(
                    "YAML_SYNTAX",
                    "error",
                    f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})",
                    hint="save the file as UTF-8",
                )
            ],
        ) from None
    return load_plan_text(text, source=str(file))


def load_plan_text(text: str, *, source: str = "<string>") -> Plan:
    """Parse Plan YAML text; ``source`` names it in messages (a file path)."""
    if len(text.encode("utf-8", errors="replace")) > MAX_PLAN_BYTES:
        raise _too_large(f"{len(text)} characters", source)
    data, lines, issues = _parse_yaml(text, source)
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise plan_validation_error(
            f"cannot load plan {source}",
            [
                ValidationIssue(
                    "SCHEMA",
                    "error",
                    f"a Plan must be a YAML mapping (apiVersion, id, version, graph), not {kind}",
                    line=1,
                    hint="start from 'apiVersion: v1' / 'id: ...' / 'version: 0.1.0' / 'graph:'",
                )
            ],
        )
    api_version = data.get("apiVersion")
    if api_version is not None and api_version not in API_VERSIONS:
        issues.append(
            ValidationIssue(
                "API_VERSION",
                "error",
                f"unsupported apiVersion {api_version!r}; supported: {', '.join(API_VERSIONS)}",
                path="apiVersion",
                line=lines.get(("apiVersion",)),
                hint=f"use apiVersion: {API_VERSIONS[-1]}",
            )
        )
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        issues.extend(schema_issues(exc.errors(), data, lines))
        plan = None
    if issues or plan is None:
        raise plan_validation_error(f"cannot load plan {source}", issues)
    return plan


# --- YAML -------------------------------------------------------------------


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml when available (about 10x faster on large plans); same safe constructors."""


def _parse_yaml(text: str, source: str) -> tuple[Any, dict[Loc, int], list[ValidationIssue]]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}, []
        lines, duplicates = _scan(node, source)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        raise plan_validation_error(
            f"cannot load plan {source}",
            [
                ValidationIssue(
                    "YAML_SYNTAX",
                    "error",
                    f"invalid YAML: {problem or exc}",
                    line=line,
                    hint="check indentation, quotes and ':' on that line; "
                    "quote values that contain ': ' or start with '{', '[', '*', '&'",
                )
            ],
        ) from None
    except yaml.YAMLError as exc:
        raise plan_validation_error(
            f"cannot load plan {source}",
            [ValidationIssue("YAML_SYNTAX", "error", f"invalid YAML: {exc}")],
        ) from None
    except RecursionError:
        raise _too_large("nesting too deep", source) from None
    finally:
        loader.dispose()
    issues = [
        ValidationIssue(
            "YAML_DUPLICATE_KEY",
            "error",
            f"key {key!r} appears more than once in the same mapping",
            path=format_path(loc) or None,
            line=line,
            hint="keep one of them (YAML would silently keep only the last)",
        )
        for loc, key, line in duplicates
    ]
    return data, lines, issues


def _scan(root: yaml.Node, source: str) -> tuple[dict[Loc, int], list[tuple[Loc, str, int]]]:
    """One pass over the node graph: the line of every path, duplicate keys, and the
    size with aliases expanded (memoised per node, so a bomb is counted, not expanded)."""
    lines: dict[Loc, int] = {(): root.start_mark.line + 1}
    duplicates: list[tuple[Loc, str, int]] = []
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, Loc, bool]] = [(root, (), False)]
    while stack:
        node, loc, finished = stack.pop()
        key = id(node)
        children = _children(node, loc)
        if finished:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child, _ in children)
            if sizes[key] > MAX_YAML_NODES:
                raise _too_large(
                    f"more than {MAX_YAML_NODES} YAML nodes (aliases expanded)", source
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _too_large("a recursive alias (an anchor used inside itself)", source)
        on_path.add(key)
        stack.append((node, loc, True))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
                    if key_node.value in seen:
                        duplicates.append((loc, key_node.value, key_node.start_mark.line + 1))
                    seen.add(key_node.value)
        for child, child_loc in reversed(children):
            if child_loc is not None:
                lines.setdefault(child_loc, child.start_mark.line + 1)
            stack.append((child, child_loc or loc, False))
    return lines, sorted(duplicates, key=lambda item: item[2])


def _children(node: yaml.Node, loc: Loc) -> list[tuple[yaml.Node, Loc | None]]:
    """Child nodes with their paths (None for mapping keys, which have no path)."""
    if isinstance(node, yaml.SequenceNode):
        return [(child, (*loc, i)) for i, child in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        found: list[tuple[yaml.Node, Loc | None]] = []
        for key_node, value_node in node.value:
            found.append((key_node, None))
            path = (*loc, key_node.value) if isinstance(key_node, yaml.ScalarNode) else None
            found.append((value_node, path))
        return found
    return []


def _too_large(what: str, source: str) -> Exception:
    return plan_validation_error(
        f"cannot load plan {source}",
        [
            ValidationIssue(
                "YAML_TOO_LARGE",
                "error",
                f"the plan is too large or too deeply nested: {what} "
                f"(limits: {MAX_PLAN_BYTES} bytes, {MAX_YAML_NODES} nodes)",
                hint="split it into subflows; avoid anchors that expand into huge documents",
            )
        ],
    )
