"""Load Plan YAML into ``models.Plan``, reporting every problem with its line.

``check_plan_text`` / ``check_plan_file`` return ``Checked`` (the plan or None, the
issues, and where each path is in the text) and never raise for a problem of the
plan (``PlanEngine.check`` reports them with the validator's, which ``locate``
gives a line and column); ``load_plan_text`` / ``load_plan_file`` raise
``PlanValidationError`` carrying the same issues. Codes (``IssueCode``), each with
``details.line`` / ``details.column`` where the text shows the problem:

* ``YAML_SYNTAX``: the text is not YAML (one document, UTF-8).
* ``YAML_TOO_LARGE``: over ``MAX_PLAN_BYTES``, or more than ``MAX_YAML_NODES``
  nodes once anchors/aliases are expanded (alias bombs), recursive aliases, or
  nesting deeper than the parser allows.
* ``YAML_DUPLICATE_KEY``: a key written twice in one mapping (YAML keeps the
  last one silently; a Plan must not lose a value that way).
* ``SCHEMA``: the document does not fit the Plan DSL (unknown field, wrong type,
  missing field), with the path (``graph[2].in.mode``), the valid fields or values
  (``choices``/``closest``), the expected and actual type and a hint.
* ``WHILE_MISSING_MAX``: a ``while`` loop without ``max_iterations``.
* ``API_VERSION``: an ``apiVersion`` this engine does not support.

A file that does not exist is not a problem of a plan: ``UserInputError``
PLAN_NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.loader_errors import (
    Loc,
    Positions,
    format_path,
    json_type,
    schema_issues,
)
from keiri_agent.plans.dsl.models import API_VERSIONS, Plan
from keiri_agent.plans.issues import (
    IssueCode,
    ValidationIssue,
    make_issue,
    plan_validation_error,
)

MAX_PLAN_BYTES = 2_000_000
MAX_YAML_NODES = 200_000
"""Nodes after expanding aliases; a 1,000-node Plan uses about 20,000."""


@dataclass(frozen=True)
class Checked:
    """What loading found: the plan (None when it cannot be built), every problem, and
    where each path of the document is in the text (for ``locate``)."""

    plan: Plan | None
    issues: list[ValidationIssue]
    positions: Positions = field(default_factory=dict)

    def locate(self, issues: Iterable[ValidationIssue]) -> list[ValidationIssue]:
        """``issues`` (of the validator) with ``line``/``column`` of their ``path`` (or of
        the closest enclosing path) in this text, where they have none."""
        found = list(issues)
        if not self.positions or all(issue.line or not issue.path for issue in found):
            return found
        by_path = {format_path(loc): position for loc, position in self.positions.items()}
        return [_located(issue, by_path) for issue in found]


def load_plan_file(path: Path | str) -> Plan:
    """Read and load a Plan YAML file (UTF-8, optional BOM); PlanValidationError when
    it has problems."""
    return _loaded(check_plan_file(path), str(path))


def load_plan_text(text: str, *, source: str = "<string>") -> Plan:
    """Parse Plan YAML text; ``source`` names it in messages (a file path)."""
    return _loaded(check_plan_text(text), source)


def check_plan_file(path: Path | str) -> Checked:
    """Read a Plan YAML file (UTF-8, optional BOM): the plan and every problem."""
    file = Path(path)
    try:
        size = file.stat().st_size
    except FileNotFoundError:
        raise UserInputError(
            f"Plan のファイルが見つかりません: {file}",
            code="PLAN_NOT_FOUND",
            hint="パスを確かめてください（Plan は designs/ の下にあります）",
        ) from None
    if not file.is_file():
        raise UserInputError(
            f"{file} は Plan のファイルではありません（フォルダなどです）",
            code="PLAN_NOT_FOUND",
            hint=".yaml ファイルか、designs/ の下の Plan id を指定してください",
        )
    if size > MAX_PLAN_BYTES:
        return Checked(None, [_too_large(f"{size} バイト")])
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problem = make_issue(
            IssueCode.YAML_SYNTAX,
            f"ファイルが UTF-8 の文字ではありません（{exc.start} バイト目: {exc.reason}）",
            hint="ファイルを UTF-8 で保存し直してください",
        )
        return Checked(None, [problem])
    return check_plan_text(text)


def check_plan_text(text: str) -> Checked:
    """Parse Plan YAML text: the plan (None when it cannot be built) and every problem."""
    if len(text.encode("utf-8", errors="replace")) > MAX_PLAN_BYTES:
        return Checked(None, [_too_large(f"{len(text)} 文字")])
    try:
        data, positions, issues = _parse_yaml(text)
    except _Rejected as rejected:
        return Checked(None, [rejected.issue])
    if not isinstance(data, dict):
        kind = "空" if data is None else f"{type(data).__name__}"
        problem = make_issue(
            IssueCode.SCHEMA,
            f"Plan は YAML のマッピング（apiVersion, id, version, graph）で書いてください"
            f"（いまは {kind} です）",
            line=1,
            column=1,
            expected="object",
            actual=json_type(data),
            hint=(
                "'apiVersion: v1' / 'id: ...' / 'version: 0.1.0' / 'graph:' から書き始めてください"
            ),
        )
        return Checked(None, [problem], positions)
    api_version = data.get("apiVersion")
    if api_version is not None and api_version not in API_VERSIONS:
        line, column = positions.get(("apiVersion",), (None, None))
        issues.append(
            make_issue(
                IssueCode.API_VERSION,
                f"apiVersion {api_version!r} には対応していません"
                f"（対応しているのは {', '.join(API_VERSIONS)}）",
                path="apiVersion",
                line=line,
                column=column,
                choices=API_VERSIONS,
                hint=f"apiVersion: {API_VERSIONS[-1]} にしてください",
            )
        )
    try:
        plan: Plan | None = Plan.model_validate(data)
    except ValidationError as exc:
        issues.extend(schema_issues(exc.errors(), data, positions))
        plan = None
    return Checked(plan, issues, positions)


def _loaded(checked: Checked, source: str) -> Plan:
    if checked.issues or checked.plan is None:
        raise plan_validation_error(f"Plan {source} を読み込めません", checked.issues)
    return checked.plan


def _located(issue: ValidationIssue, by_path: Mapping[str, tuple[int, int]]) -> ValidationIssue:
    path = issue.path
    if issue.line or not path:
        return issue
    while path and path not in by_path:
        path = path[: max(path.rfind("."), path.rfind("["), 0)]
    line, column = by_path.get(path, (None, None))
    if line is None:
        return issue
    return replace(issue, details=replace(issue.details, line=line, column=column))


class _Rejected(Exception):
    """The text cannot be loaded at all (syntax, size): its one issue."""

    def __init__(self, issue: ValidationIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


# --- YAML -------------------------------------------------------------------


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml when available (about 10x faster on large plans); same safe constructors."""


def _parse_yaml(text: str) -> tuple[Any, Positions, list[ValidationIssue]]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}, []
        positions, duplicates = _scan(node)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        raise _Rejected(
            make_issue(
                IssueCode.YAML_SYNTAX,
                f"YAML の書き方に誤りがあります: {problem or exc}",
                line=mark.line + 1 if mark is not None else None,
                column=mark.column + 1 if mark is not None else None,
                hint="その行の字下げ、引用符、':' を確かめてください。': ' を含む値や "
                "'{', '[', '*', '&' で始まる値は引用符で囲んでください",
            )
        ) from None
    except yaml.YAMLError as exc:
        raise _Rejected(
            make_issue(
                IssueCode.YAML_SYNTAX,
                f"YAML の書き方に誤りがあります: {exc}",
                hint="字下げ、引用符、':' を確かめてください",
            )
        ) from None
    except RecursionError:
        raise _Rejected(_too_large("入れ子が深すぎます")) from None
    finally:
        loader.dispose()
    issues = [
        make_issue(
            IssueCode.YAML_DUPLICATE_KEY,
            f"キー {key!r} が同じマッピングの中に 2 回以上あります",
            path=format_path(loc) or None,
            line=line,
            column=column,
            name=key,
            hint="どれか一つだけ残してください（YAML は黙って最後のものだけを使います）",
        )
        for loc, key, (line, column) in duplicates
    ]
    return data, positions, issues


def _scan(root: yaml.Node) -> tuple[Positions, list[tuple[Loc, str, tuple[int, int]]]]:
    """One pass over the node graph: the position of every path, duplicate keys, and the
    size with aliases expanded (memoised per node, so a bomb is counted, not expanded)."""
    positions: Positions = {(): _position(root)}
    duplicates: list[tuple[Loc, str, tuple[int, int]]] = []
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
                raise _Rejected(
                    _too_large(
                        f"YAML の要素が {MAX_YAML_NODES} 個を超えています（エイリアスを展開した数）"
                    )
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _Rejected(
                _too_large("自分自身を含むエイリアスがあります（アンカーをその中で使っています）")
            )
        on_path.add(key)
        stack.append((node, loc, True))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
                    if key_node.value in seen:
                        duplicates.append((loc, key_node.value, _position(key_node)))
                    seen.add(key_node.value)
        for child, child_loc in reversed(children):
            if child_loc is not None:
                positions.setdefault(child_loc, _position(child))
            stack.append((child, child_loc or loc, False))
    return positions, sorted(duplicates, key=lambda item: item[2])


def _position(node: yaml.Node) -> tuple[int, int]:
    """1-based (line, column) where ``node`` starts."""
    return node.start_mark.line + 1, node.start_mark.column + 1


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


def _too_large(what: str) -> ValidationIssue:
    return make_issue(
        IssueCode.YAML_TOO_LARGE,
        f"Plan が大きすぎるか、入れ子が深すぎます: {what}"
        f"（上限: {MAX_PLAN_BYTES} バイト、{MAX_YAML_NODES} 要素）",
        hint="サブフローに分けてください。大きく展開されるアンカーは使わないでください",
    )
