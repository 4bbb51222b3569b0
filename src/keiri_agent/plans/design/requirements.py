"""The requirements builder (seed 003 §7): what a generated Plan still needs from a person.

``build_requirements(source)`` reads a Plan (a ``Plan``, its mapping or YAML text) or
the issues of a check (a ``ValidationReport`` or a list of ``ValidationIssue``) and
returns the ``Requirement`` list the Design chat asks, deduplicated by id, in the
order the plan (or the report) meets them. The rules (docs/design-chat.md):

- a ``${vars.foo}`` whose var is not declared or is null → a ``text`` requirement
  ``foo`` (target ``vars.foo``); its label is the model's question
  (``var_questions["foo"]``) when given, else a readable Japanese label; a name that
  says column/列 gets a hint that the answer is a column heading;
- a file-taking block (``FILE_BLOCKS``: ``excel.read_data``, ``csv.read``,
  ``file.parse_zip_2tier``, ``document.extract_text``) whose file input is missing,
  null or an unresolved var → a ``file`` requirement ``<node>_<input>`` (accept from
  the block), plus optional ``text`` requirements for ``sheet``/``range`` of
  ``excel.read_data`` when they are not set; its other missing required inputs →
  ``text``;
- ``ai.process_llm`` without ``output_schema`` → an ``enum`` requirement choosing one
  of ``SCHEMA_TEMPLATES``.

From issues alone (no plan at hand): ``UNKNOWN_REFERENCE`` of a var (its
``details.choices`` are the declared vars, which never list the ``env`` root that an
unknown node reference offers) → text; ``MISSING_REQUIRED_INPUT`` named ``output_schema``
→ the schema select; one named like a file port (``FILE_PORTS``, or a required
untyped port of the catalog: bytes) → file; any other → text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import yaml

from keiri_agent.errors import KeiriAgentError
from keiri_agent.plans.design.models import Requirement, RequirementType
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.dsl.references import ReferenceError_, find_references, parse_reference
from keiri_agent.plans.issues import IssueCode, ValidationIssue, ValidationReport

if TYPE_CHECKING:
    from keiri_agent.plans.catalog import BlockCatalog

PlanSource = Plan | Mapping[str, Any] | str | ValidationReport | Sequence[ValidationIssue]

FILE_BLOCKS: dict[str, tuple[str, str]] = {
    "excel.read_data": ("workbook", ".xlsx,.xlsm"),
    "csv.read": ("file", ".csv,.txt"),
    "file.parse_zip_2tier": ("zip_bytes", ".zip"),
    "document.extract_text": ("file", ".pdf,.docx,.xlsx,.txt,.md"),
}
"""Blocks that take one file: block id → (its file input, the extensions it reads).

With a catalog, the file input is the block's required port without a JSON type
(bytes); the name here is used without one."""
FILE_PORTS = frozenset(port for port, _ in FILE_BLOCKS.values()) | {"zip", "path"}
EXCEL_OPTIONAL: dict[str, tuple[str, str]] = {
    "sheet": ("シート名", "空欄なら先頭のシートを読みます（例: 入金明細）"),
    "range": ("読む範囲", "空欄ならシート全体を読みます（例: A1:F200）"),
}
SCHEMA_TEMPLATES: dict[str, dict[str, Any]] = {
    "請求書の項目": {
        "取引先": "string",
        "請求書番号": "string",
        "請求日": "string",
        "支払期日": "string",
        "請求金額": "integer",
        "消費税額": "integer",
        "登録番号": "string",
    },
    "領収書の項目": {
        "発行者": "string",
        "日付": "string",
        "金額": "integer",
        "但し書き": "string",
        "登録番号": "string",
    },
    "契約書の項目": {
        "契約名": "string",
        "相手方": "string",
        "契約日": "string",
        "契約期間": "string",
        "契約金額": "integer",
        "自動更新": "boolean",
    },
    "自由記述の要約": {"要約": "string", "要点": {"type": "array", "items": "string"}},
}
"""``ai.process_llm`` output schemas a user can pick when the generator left none."""

_COLUMN = re.compile(r"col(umn)?s?\b|_col(umn)?|列|カラム|見出し|header", re.IGNORECASE)
_WORDS = {
    "amount": "金額",
    "date": "日付",
    "column": "列",
    "col": "列",
    "sheet": "シート",
    "range": "範囲",
    "name": "名",
    "file": "ファイル",
    "path": "パス",
    "key": "キー",
    "keys": "キー",
    "tolerance": "許容差",
    "days": "日数",
    "window": "期間",
    "vendor": "取引先",
    "customer": "取引先",
    "partner": "取引先",
    "invoice": "請求書",
    "payment": "入金",
    "deposit": "入金",
    "bank": "銀行",
    "account": "勘定科目",
    "label": "ラベル",
    "labels": "ラベル",
    "output": "出力",
    "input": "入力",
    "instruction": "指示",
    "prompt": "指示文",
    "threshold": "しきい値",
    "limit": "上限",
    "month": "月",
    "year": "年",
    "period": "期間",
    "number": "番号",
    "id": "ID",
    "code": "コード",
    "rate": "率",
    "tax": "税",
    "total": "合計",
    "title": "タイトル",
    "format": "形式",
    "template": "テンプレート",
    "approver": "承認者",
    "email": "メールアドレス",
}


def build_requirements(
    source: PlanSource,
    *,
    catalog: BlockCatalog | None = None,
    var_questions: Mapping[str, Any] | None = None,
) -> list[Requirement]:
    """Every ``Requirement`` ``source`` still needs, deduplicated by id, in stable order.

    ``var_questions``: var name → the model's question (text) or a mapping with
    ``question``/``label``, ``type``, ``options``, ``hint``, ``description``.
    YAML that does not parse gives no requirements (its check reports the syntax).
    """
    questions = dict(var_questions or {})
    if isinstance(source, ValidationReport):
        found = _from_issues(source.issues, catalog, questions)
    elif isinstance(source, Plan):
        found = _from_plan(source.model_dump(by_alias=True, exclude_unset=True), catalog, questions)
    elif isinstance(source, str):
        found = _from_plan(_parse(source), catalog, questions)
    elif isinstance(source, Mapping):
        found = _from_plan(source, catalog, questions)
    else:
        found = _from_issues(source, catalog, questions)
    seen: set[str] = set()
    result: list[Requirement] = []
    for requirement in found:
        if requirement.id not in seen:
            seen.add(requirement.id)
            result.append(requirement)
    return result


def _parse(text: str) -> Mapping[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, Mapping) else {}


# --- from a plan -----------------------------------------------------------------


def _from_plan(
    plan: Mapping[str, Any], catalog: BlockCatalog | None, questions: Mapping[str, Any]
) -> Iterator[Requirement]:
    declared = plan.get("vars")
    variables: Mapping[str, Any] = declared if isinstance(declared, Mapping) else {}
    nodes = list(iter_nodes(plan.get("graph")))
    files = {name for node in nodes for name in _file_vars(node, variables, catalog)}
    asked = {key: value for key, value in variables.items() if key not in files}
    ports = _var_ports(nodes, catalog) if catalog is not None else {}

    def described(requirements: Iterator[Requirement]) -> Iterator[Requirement]:
        for requirement in requirements:
            name = (requirement.target or "").removeprefix("vars.")
            if requirement.target == f"vars.{name}" and name in ports and name not in questions:
                requirement = _with_port_context(requirement, ports[name])
            yield requirement

    for node in nodes:
        yield from _node_requirements(node, variables, catalog, questions)
        yield from described(_unresolved_vars(node, "", asked, files, questions))
    yield from described(_unresolved_vars(declared, "vars", asked, files, questions))
    yield from _unresolved_vars(plan.get("exports"), "exports", asked, files, questions)


def _var_ports(
    nodes: Sequence[Mapping[str, Any]], catalog: BlockCatalog
) -> dict[str, list[tuple[str, str, bool]]]:
    """var name → (description, node id, required) of each block input that is exactly
    ``${vars.<name>}``: what the var means, in the block contract's words."""
    found: dict[str, list[tuple[str, str, bool]]] = {}
    for node in nodes:
        block = str(node.get("block") or "").strip()
        inputs = node.get("in")
        if not block or not isinstance(inputs, Mapping):
            continue
        try:
            spec = catalog.resolve(block)
        except KeiriAgentError:
            continue
        required = set(spec.required_inputs())
        for port, value in inputs.items():
            name = unresolved_var(value, {})
            if name is None or port not in spec.inputs:
                continue
            description = str(spec.input_schema(port).get("description") or port)
            found.setdefault(name, []).append((description, str(node.get("id")), port in required))
    return found


def _with_port_context(
    requirement: Requirement, uses: Sequence[tuple[str, str, bool]]
) -> Requirement:
    """The requirement of a var labelled by the first input it feeds; optional when no
    input it feeds is required (an empty answer keeps the block's default)."""
    description, node_id, _ = uses[0]
    required = any(needed for _, _, needed in uses)
    label = requirement.label if not (requirement.label or "「").startswith("「") else description
    return replace(
        requirement,
        label=label,
        description=f"{node_id} の入力（{requirement.id}）",
        required=required,
    )


def iter_nodes(graph: Any) -> Iterator[dict[str, Any]]:
    """Every node mapping of a graph, loop bodies included, in document order."""
    if not isinstance(graph, list):
        return
    for node in graph:
        if not isinstance(node, dict):
            continue
        yield node
        body = node.get("body")
        if isinstance(body, Mapping) and isinstance(body.get("plan"), Mapping):
            yield from iter_nodes(body["plan"].get("graph"))


def unresolved_var(value: Any, variables: Mapping[str, Any]) -> str | None:
    """The var name when ``value`` is exactly ``${vars.<name>}`` of an undeclared or
    null var, else None."""
    if not isinstance(value, str) or not value.strip().startswith("${"):
        return None
    text = value.strip()
    if not text.endswith("}") or text.count("${") != 1:
        return None
    try:
        reference = parse_reference(text[2:-1])
    except ReferenceError_:
        return None
    if reference.root != "vars" or len(reference.path) != 1:
        return None
    name = str(reference.path[0])
    return name if variables.get(name) is None else None


def _unresolved_vars(
    value: Any,
    path: str,
    variables: Mapping[str, Any],
    skip: set[str],
    questions: Mapping[str, Any],
) -> Iterator[Requirement]:
    if isinstance(value, dict) and "body" in value:
        value = {key: item for key, item in value.items() if key != "body"}
    try:
        references = list(find_references(value, path))
    except ReferenceError_:
        return
    for _, reference in references:
        if reference.root != "vars" or not reference.path:
            continue
        name = str(reference.path[0])
        if name not in skip and variables.get(name) is None:
            yield var_requirement(name, questions.get(name))


def var_requirement(name: str, question: Any = None) -> Requirement:
    """The text (or asked-for type) requirement of the var ``name``."""
    spec: Mapping[str, Any] = question if isinstance(question, Mapping) else {}
    label = question if isinstance(question, str) and question.strip() else None
    label = label or spec.get("question") or spec.get("label") or readable_label(name)
    kind: RequirementType = "text"
    options = tuple(str(option) for option in spec.get("options") or ())
    asked = spec.get("type")
    if asked in ("text", "select", "boolean", "number", "enum"):
        kind = asked
    if kind in ("select", "enum") and not options:
        kind = "text"
    hint = spec.get("hint")
    if hint is None and _COLUMN.search(name):
        hint = "ファイルの見出し行にある列名をそのまま入力してください（例: 金額）"
    return Requirement(
        id=name,
        type=kind,
        label=str(label),
        description=spec.get("description"),
        options=options,
        hint=hint,
        target=f"vars.{name}",
    )


def readable_label(name: str) -> str:
    """A Japanese label for a var name: known English words translated, else the name."""
    words = [word for word in re.split(r"[_\-\s]+", name) if word]
    if words and all(word.lower() in _WORDS for word in words):
        return "".join(_WORDS[word.lower()] for word in words)
    return f"「{name}」の値"


def _node_requirements(
    node: Mapping[str, Any],
    variables: Mapping[str, Any],
    catalog: BlockCatalog | None,
    questions: Mapping[str, Any] | None = None,
) -> Iterator[Requirement]:
    block = str(node.get("block") or "").partition("@")[0].strip()
    node_id = str(node.get("id") or "")
    inputs = node.get("in") if isinstance(node.get("in"), Mapping) else {}
    assert isinstance(inputs, Mapping)
    if block in FILE_BLOCKS:
        file_port, accept = FILE_BLOCKS[block]
        file_port = _file_port(block, catalog) or file_port
        if _missing(inputs, file_port, variables):
            requirement = file_requirement(node_id, file_port, accept)
            name = unresolved_var(inputs.get(file_port), variables)
            if name is not None and questions and name in questions:
                # the model's question about the var the file input reads is the label
                label = var_requirement(name, questions[name]).label
                requirement = replace(requirement, label=label)
            yield requirement
            if block == "excel.read_data":
                for port, (label, hint) in EXCEL_OPTIONAL.items():
                    if port not in inputs:
                        yield Requirement(
                            id=f"{node_id}_{port}",
                            type="text",
                            label=label,
                            hint=hint,
                            required=False,
                            target=f"{node_id}.{port}",
                        )
        for port in _required_inputs(block, catalog):
            if port != file_port and _missing(inputs, port, variables):
                yield Requirement(
                    id=f"{node_id}_{port}",
                    type="text",
                    label=readable_label(port),
                    target=f"{node_id}.{port}",
                )
    if block == "ai.process_llm" and not inputs.get("output_schema"):
        yield schema_requirement(node_id)


def _file_vars(
    node: Mapping[str, Any], variables: Mapping[str, Any], catalog: BlockCatalog | None
) -> Iterator[str]:
    """Unresolved vars a file input reads: asked as that node's file, not as text."""
    block = str(node.get("block") or "").partition("@")[0].strip()
    inputs = node.get("in")
    if block in FILE_BLOCKS and isinstance(inputs, Mapping):
        port = _file_port(block, catalog) or FILE_BLOCKS[block][0]
        name = unresolved_var(inputs.get(port), variables)
        if name is not None:
            yield name


def _missing(inputs: Mapping[str, Any], port: str, variables: Mapping[str, Any]) -> bool:
    if port not in inputs or inputs[port] is None:
        return True
    return unresolved_var(inputs[port], variables) is not None


def file_requirement(node_id: str, port: str, accept: str | None = None) -> Requirement:
    return Requirement(
        id=f"{node_id}_{port}",
        type="file",
        label=f"{node_id} が読むファイル",
        description="この手順を実行するときにアップロードします",
        accept=accept,
        target=f"{node_id}.{port}",
    )


def schema_requirement(node_id: str) -> Requirement:
    return Requirement(
        id=f"{node_id}_output_schema",
        type="enum",
        label="AI に取り出させる項目",
        description="近いものを選んでください（あとで YAML で項目を変えられます）",
        options=tuple(SCHEMA_TEMPLATES),
        target=f"{node_id}.output_schema",
    )


def _file_port(block: str, catalog: BlockCatalog | None) -> str | None:
    if catalog is None:
        return None
    try:
        spec = catalog.resolve(block)
    except Exception:  # the block is not in this catalog: use the built-in name
        return None
    untyped = [name for name in spec.required_inputs() if "type" not in spec.inputs[name]]
    return untyped[0] if untyped else None


def _required_inputs(block: str, catalog: BlockCatalog | None) -> list[str]:
    if catalog is None:
        return []
    try:
        return catalog.resolve(block).required_inputs()
    except Exception:  # not in this catalog: only the file input is known
        return []


# --- from issues -----------------------------------------------------------------


def _file_ports(catalog: BlockCatalog | None) -> frozenset[str]:
    if catalog is None:
        return FILE_PORTS
    untyped = {
        name
        for spec in catalog.specs()
        for name in spec.required_inputs()
        if "type" not in spec.inputs[name]
    }
    return FILE_PORTS | untyped


def _from_issues(
    issues: Iterable[ValidationIssue], catalog: BlockCatalog | None, questions: Mapping[str, Any]
) -> Iterator[Requirement]:
    file_ports = _file_ports(catalog)
    for issue in issues:
        details = issue.details
        if issue.code == IssueCode.UNKNOWN_REFERENCE and _is_var_issue(issue):
            assert details.name is not None
            yield var_requirement(details.name, questions.get(details.name))
        elif issue.code == IssueCode.MISSING_REQUIRED_INPUT and details.name:
            node_id, port = details.node or "node", details.name
            if port == "output_schema":
                yield schema_requirement(node_id)
            elif port in file_ports:
                yield file_requirement(node_id, port)
            else:
                yield Requirement(
                    id=f"{node_id}_{port}",
                    type="text",
                    label=readable_label(port),
                    target=f"{node_id}.{port}",
                )


def _is_var_issue(issue: ValidationIssue) -> bool:
    choices = issue.details.choices
    return bool(issue.details.name) and choices is not None and "env" not in choices
