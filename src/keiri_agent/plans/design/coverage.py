"""The coverage check (issue 27 §4): does a Plan do what the requirement model asks?

``check_coverage(procedure, plan)`` reads any Plan (built by rules, composed from
templates or written by a model) and, for each requirement of the ``Procedure``,
finds the node that covers it by the node's block and parameters, not by its id:

- an input: a node reading a file of that format (``csv.read``, ``excel.read_data``,
  ``table.read``, ``file.parse_zip_2tier``, ``document.extract_text``);
- a step: a node of the step's block whose parameters hold what the instruction gave
  (each filter condition's column / operator / value, the group keys and metrics, the
  sort keys and direction, dedupe / join / reconcile keys, tolerance and date window,
  each computed column, normalised columns, selected columns); a parameter that is a
  ``${vars.…}`` waiting for an answer counts as covered once answered, so it is
  reported as ``waiting``;
- an output: an ``excel.write`` / ``csv.write`` node of that format;
- a task (入金消込, 総合振込): a node of its block, with the parameters the instruction
  gave; its files are covered by that node taking them, the file it makes by an
  export of that node.

Then the flow: every covering step node must feed (through references) the output
node, and read (through references) from a covering input node — a filter that
exists but whose result is never written is not coverage. Nodes that cover nothing
and feed no covering node are ``unrelated``.

``CoverageReport.ok`` is every requirement covered, in the flow, with no unrelated
node; ``lines()`` says it in Japanese, one line per requirement.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from keiri_agent.files.cells import date_value
from keiri_agent.plans.design.procedure import (
    COUNT_ALL,
    METRIC_WORDS,
    Condition,
    Procedure,
    StepSpec,
    input_text,
    output_text,
    step_text,
)
from keiri_agent.plans.dsl.references import ReferenceError_, find_references

READERS: dict[str, frozenset[str]] = {
    "csv": frozenset({"csv.read", "table.read"}),
    "excel": frozenset({"excel.read_data", "table.read"}),
    "table": frozenset({"csv.read", "excel.read_data", "table.read"}),
    "zip": frozenset({"file.parse_zip_2tier"}),
    "pdf": frozenset({"document.extract_text", "file.parse_zip_2tier"}),
}
STEP_BLOCKS: dict[str, frozenset[str]] = {
    "filter": frozenset({"table.filter"}),
    "aggregate": frozenset({"table.aggregate"}),
    "sort": frozenset({"table.sort"}),
    "select": frozenset({"table.select"}),
    "dedupe": frozenset({"table.dedupe"}),
    "join": frozenset({"table.join"}),
    "reconcile": frozenset({"table.reconcile"}),
    "compute": frozenset({"table.compute"}),
    "normalize": frozenset({"text.normalize"}),
    "concat": frozenset({"table.concat"}),
    "approval": frozenset({"ui.interactive_input", "ui.confirmation"}),
    "extract": frozenset({"ai.process_llm"}),
    "classify": frozenset({"ai.classify", "ai.process_llm"}),
}
WRITERS: dict[str, frozenset[str]] = {
    "excel": frozenset({"excel.write"}),
    "csv": frozenset({"csv.write"}),
    "docx": frozenset({"document.render"}),
}
WRITER_BLOCKS = frozenset().union(*WRITERS.values())
SUPPORT_BLOCKS = frozenset(
    {"ui.interactive_input", "table.compute", "document.extract_text", "table.to_markdown"}
)
"""Blocks that may serve a covering node without covering a requirement themselves
(the upload form, a helper column such as 件数 = 1, text extraction for a model)."""

Status = Literal["covered", "waiting", "missing"]


@dataclass(frozen=True)
class RequirementCoverage:
    requirement: str
    """``input:in1`` | ``step:s2`` | ``output:1``."""
    text: str
    """The requirement in words (Japanese)."""
    status: Status
    node: str | None = None
    problem: str | None = None
    """Japanese: why it is not covered (missing node, wrong parameter, not in the flow)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "requirement": self.requirement,
            "text": self.text,
            "status": self.status,
            "node": self.node,
            "problem": self.problem,
        }


@dataclass
class CoverageReport:
    items: list[RequirementCoverage] = field(default_factory=list)
    unrelated: list[str] = field(default_factory=list)
    """Nodes that cover no requirement and serve none."""

    @property
    def missing(self) -> list[RequirementCoverage]:
        return [item for item in self.items if item.status == "missing"]

    @property
    def waiting(self) -> list[RequirementCoverage]:
        return [item for item in self.items if item.status == "waiting"]

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unrelated

    def lines(self) -> list[str]:
        marks = {"covered": "✓", "waiting": "？", "missing": "✗"}
        result = []
        for item in self.items:
            line = f"{marks[item.status]} {item.text}"
            if item.node:
                line += f"（{item.node}）"
            if item.problem:
                line += f": {item.problem}"
            result.append(line)
        result.extend(f"✗ 指示に無い処理: {node}" for node in self.unrelated)
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "items": [item.to_dict() for item in self.items],
            "unrelated": list(self.unrelated),
        }


def _nodes(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    graph = plan.get("graph")
    return [node for node in graph if isinstance(node, dict)] if isinstance(graph, list) else []


def _is_var(value: Any) -> bool:
    return isinstance(value, str) and value.strip().startswith("${vars.")


def _same(given: Any, wanted: Any) -> bool | None:
    """True when equal, None when ``given`` waits for an answer (a var), else False."""
    if _is_var(given):
        return None
    if isinstance(wanted, list) and isinstance(given, list):
        return sorted(map(_text, given)) == sorted(map(_text, wanted))
    if isinstance(wanted, str) and isinstance(given, str):
        given_date, wanted_date = date_value(given), date_value(wanted)
        if given_date is not None and wanted_date is not None:
            return given_date == wanted_date  # 2024/11/30 and 2024-11-30 are one date
    if isinstance(wanted, int | float) and not isinstance(wanted, bool):
        try:
            return float(given) == float(wanted)
        except (TypeError, ValueError):
            return False
    return _text(given) == _text(wanted)


def _text(value: Any) -> str:
    """A value as ``table.filter`` compares text: full- and half-width alike."""
    return unicodedata.normalize("NFKC", str(value)).strip()


def _fold(results: Iterator[bool | None]) -> bool | None:
    waiting = False
    for result in results:
        if result is False:
            return False
        waiting = waiting or result is None
    return None if waiting else True


def _condition_met(conditions: Any, wanted: Condition) -> bool | None:
    met = _condition_met_as_said(conditions, wanted)
    if met is False and wanted.op == "not_in" and isinstance(wanted.value, list):
        # 「振替・欠席以外」 built as one 「!=」 per value keeps the same rows
        return _fold(
            _condition_met_as_said(conditions, wanted.model_copy(update={"op": "!=", "value": v}))
            for v in wanted.value
        )
    return met


def _condition_met_as_said(conditions: Any, wanted: Condition) -> bool | None:
    if not isinstance(conditions, list):
        return None if _is_var(conditions) else False
    best: bool | None = False
    for item in conditions:
        if not isinstance(item, Mapping) or item.get("op") != wanted.op:
            continue
        column: bool | None = None  # a column still to answer (a var) is waiting
        if wanted.column is not None:
            column = _same(item.get("col"), wanted.column) or (
                # a total's result column (金額_sum) after an aggregation
                isinstance(item.get("col"), str) and item["col"].startswith(f"{wanted.column}_")
            )
        value = (
            True if wanted.op in ("is_null", "not_null") else _same(item.get("value"), wanted.value)
        )
        result = _fold(iter((column, value)))
        if result is True:
            return True
        if result is None:
            best = None
    return best


def _metrics_met(metrics: Any, step: StepSpec) -> bool | None:
    if not isinstance(metrics, Mapping):
        return None if _is_var(metrics) else False
    for column, wanted in step.metrics.items():
        if column == COUNT_ALL:
            if not any("count" in (m or []) or "sum" in (m or []) for m in metrics.values()):
                return False
            continue
        given = metrics.get(column)
        if not isinstance(given, list):
            given = []
        missing = set(wanted) - set(given)
        if missing == {"count"}:
            # 「金額の合計と件数」: the rows counted stand for the count of a column
            missing = set() if _metrics_met(metrics, _row_count_step(step)) else missing
        if missing:
            return False
    return True


def _row_count_step(step: StepSpec) -> StepSpec:
    return StepSpec(id=step.id, kind="aggregate", metrics={COUNT_ALL: ["count"]})


def _encoding_met(encoding: str | None, node: Mapping[str, Any]) -> bool:
    """A CSV's character code asked (「CSV（Shift_JIS）」) is the one its writer writes."""
    return encoding is None or (node.get("in") or {}).get("encoding") == encoding


def _columns_in(given: Any, wanted: list[str]) -> bool | None:
    if _is_var(given):
        return None
    if isinstance(given, Mapping):
        given = list(given)
    if not isinstance(given, list):
        return False
    names = [
        str(item) if not isinstance(item, Mapping) else str(item.get("left")) for item in given
    ]
    if any(_is_var(name) for name in names) and len(names) >= len(wanted):
        return None
    return all(
        any(name == column or name.startswith(f"{column}_") for name in names) for column in wanted
    )


def _given(node: Mapping[str, Any], port: str) -> Any:
    """The value of ``node``'s input ``port`` (``remitter.code``: inside an object)."""
    value: Any = node.get("in")
    for part in port.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _exports_output(plan: Mapping[str, Any], node: Mapping[str, Any], name: str | None) -> bool:
    """Whether an export takes a file ``node`` makes (under ``name`` when one is given)."""
    for item in plan.get("exports") or []:
        if not isinstance(item, Mapping):
            continue
        source = str(item.get("from") or "")
        if source.split(".")[0] == node.get("id") and (
            name is None or _stem(name) == item.get("as")
        ):
            return True
    return False


def step_met(step: StepSpec, node: Mapping[str, Any]) -> bool | None:
    """Whether ``node`` does ``step`` with its parameters (None: waits for an answer)."""
    inputs = node.get("in") if isinstance(node.get("in"), Mapping) else {}
    assert isinstance(inputs, Mapping)
    if step.kind == "filter":
        return _fold(_condition_met(inputs.get("conditions"), c) for c in step.conditions)
    if step.kind == "aggregate":
        return _fold(
            iter(
                (
                    _same(inputs.get("group_by", []), step.group_by),
                    _metrics_met(inputs.get("metrics"), step),
                )
            )
        )
    if step.kind == "sort":
        ascending = inputs.get("ascending", True)
        direction = ascending is not step.descending if isinstance(ascending, bool) else None
        limit = inputs.get("limit") == step.limit  # 「上位10件」 kept, or no limit either side
        return _fold(iter((_columns_in(inputs.get("by"), step.by), direction, limit)))
    if step.kind == "select":
        return _columns_in(inputs.get("columns"), step.columns)
    if step.kind == "dedupe":
        return (
            _columns_in(inputs.get("keys", []), step.keys)
            if step.keys
            else "keys" not in inputs or not inputs["keys"]
        )
    if step.kind == "join":
        how = _same(inputs.get("how", "left"), step.how)
        return _fold(iter([_columns_in(inputs.get("on"), step.keys), how]))
    if step.kind == "reconcile":
        checks: list[bool | None] = [_columns_in(inputs.get("keys"), step.keys)]
        if step.tolerance is not None:
            amount = inputs.get("amount")
            checks.append(
                _same(amount.get("tolerance"), step.tolerance)
                if isinstance(amount, Mapping)
                else False
            )
        if step.date_window_days is not None:
            date = inputs.get("date")
            checks.append(
                _same(date.get("window_days"), step.date_window_days)
                if isinstance(date, Mapping)
                else False
            )
        return _fold(iter(checks))
    if step.kind == "compute":
        columns = inputs.get("columns")
        if not isinstance(columns, Mapping):
            return False
        return all(
            name in columns and _formula(columns[name]) == _formula(expression)
            for name, expression in step.expressions.items()
        )
    if step.kind == "normalize":
        return _columns_in(inputs.get("columns"), step.columns)
    if step.kind == "approval":
        return _approval_met(step, node, inputs)
    if step.kind == "task":  # the values given; one still to answer (a var) waits
        given = (_same(_given(node, port), value) for port, value in step.values.items())
        asked = (None if _is_var(_given(node, port)) else True for port in step.missing)
        return _fold(iter([*given, *asked]))
    return True


def _approval_met(step: StepSpec, node: Mapping[str, Any], inputs: Mapping[str, Any]) -> bool:
    """A confirm; when the instruction names who approves (「上長の承認」), one the person
    who started the run may not answer."""
    if node.get("block") == "ui.confirmation":
        return step.approver is None
    confirm = inputs.get("mode", "confirm") == "confirm"
    if step.approver is None:
        return confirm
    rule = inputs.get("approval")
    return confirm and isinstance(rule, Mapping) and rule.get("not_starter") is True


def _stem(name: str) -> str:
    return re.sub(r"\.(xlsx|xlsm|xls|csv|docx)$", "", name.strip(), flags=re.IGNORECASE)


def _sheet_met(sheet: str | None, nodes: list[dict[str, Any]]) -> bool:
    if sheet is None:
        return True
    for node in nodes:
        config = (
            (node.get("in") or {}).get("output_config")
            if isinstance(node.get("in"), Mapping)
            else None
        )
        if isinstance(config, Mapping) and str(config.get("sheet")) == sheet:
            return True
    return False


def _formula(text: Any) -> str:
    """A formula without blanks, a total's result column (コマ数_sum) as the column it totals."""
    compact = "".join(str(text).split())
    # 「売上合計 / 客数合計」 after a total is 売上_sum / 客数_sum: both are the totals' columns
    said = "|".join(
        sorted({*METRIC_WORDS.values(), *(f"_{m}" for m in METRIC_WORDS)}, key=len)[::-1]
    )
    while True:  # 「申込件数」 counted under its name is 申込件数_sum: both suffixes go
        shorter = re.sub(rf"(?<=\w)(?:{said})(?![^\s+\-*/%(),<>=!'\]])", "", compact)
        if shorter == compact:
            return compact
        compact = shorter


# --------------------------------------------------------------------------- flow


def _edges(nodes: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Node id → the node ids it reads from (references in ``in`` and ``when``)."""
    ids = {str(node.get("id")) for node in nodes}
    result: dict[str, set[str]] = {}
    for node in nodes:
        sources: set[str] = set()
        for part in (node.get("in"), node.get("when")):
            try:
                references = [reference for _, reference in find_references(part)]
            except ReferenceError_:
                references = []
            sources.update(reference.root for reference in references if reference.root in ids)
        result[str(node.get("id"))] = sources
    return result


def _ancestors(edges: Mapping[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for source in edges.get(stack.pop(), ()):
            if source not in seen:
                seen.add(source)
                stack.append(source)
    return seen


def resolved_vars(plan: Mapping[str, Any]) -> dict[str, Any]:
    """``plan`` with every value that is exactly ``${vars.x}`` replaced by the var's value
    when it has one (an answered question); other references stay."""
    declared = plan.get("vars") if isinstance(plan.get("vars"), Mapping) else {}
    assert isinstance(declared, Mapping)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            found = re.fullmatch(r"\$\{vars\.([A-Za-z_][\w]*)\}", value.strip())
            if found and declared.get(found.group(1)) is not None:
                return declared[found.group(1)]
            return value
        if isinstance(value, Mapping):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return {**plan, "graph": walk(plan.get("graph") or [])}


def _step_candidates(
    plan: Mapping[str, Any], nodes: list[dict[str, Any]], step: StepSpec
) -> list[tuple[str, bool | None]]:
    """The nodes that may do ``step``, each with whether it does it as asked."""
    blocks = frozenset({str(step.block)}) if step.kind == "task" else STEP_BLOCKS[step.kind]
    candidates = [(str(n["id"]), step_met(step, n)) for n in nodes if n.get("block") in blocks]
    if step.kind == "approval":
        candidates = [(node_id, met) for node_id, met in candidates if met]
    if step.kind == "reconcile" and step.parts:
        candidates = _only_parts_read(plan, step, candidates)
    return candidates


def _only_parts_read(
    plan: Mapping[str, Any], step: StepSpec, candidates: list[tuple[str, bool | None]]
) -> list[tuple[str, bool | None]]:
    """「請求にあって入金にない行」: a reconciliation covers it only when nothing reads its
    other parts (the matched rows are never written beside the ones asked for)."""
    text = json.dumps([plan.get("graph"), plan.get("exports")], ensure_ascii=False, default=str)
    result = []
    for node_id, met in candidates:
        read = set(re.findall(rf"(?<![\w.]){re.escape(node_id)}\.(\w+)", text))
        result.append((node_id, False if read - set(step.parts) else met))
    return result


def check_coverage(procedure: Procedure, plan: Mapping[str, Any]) -> CoverageReport:
    """Each requirement of ``procedure`` covered by a node of ``plan`` (see module doc)."""
    nodes = _nodes(plan)
    edges = _edges(nodes)
    report = CoverageReport()
    chosen: dict[str, str] = {}

    def pick(requirement: str, text: str, candidates: Sequence[tuple[str, bool | None]]) -> None:
        found = [(node_id, met) for node_id, met in candidates if met is not False]
        if not candidates:
            report.items.append(
                RequirementCoverage(
                    requirement, text, "missing", problem="この処理をするノードがありません"
                )
            )
            return
        if not found:
            report.items.append(
                RequirementCoverage(
                    requirement,
                    text,
                    "missing",
                    candidates[0][0],
                    "ノードはありますが、指示の値（列・条件・キー）と違います",
                )
            )
            return
        node_id, met = next(((n, m) for n, m in found if m is True), found[0])
        chosen[requirement] = node_id
        status: Status = "covered" if met is True else "waiting"
        report.items.append(RequirementCoverage(requirement, text, status, node_id))

    used_nodes: set[str] = set()
    candidates: list[tuple[str, bool | None]]
    task_blocks = {step.block for step in procedure.steps if step.kind == "task"}
    for item in procedure.inputs:
        if item.format == "file":  # a task's file: its block takes it at the input so named
            candidates = [
                (str(n["id"]), True)
                for n in nodes
                if n.get("block") in task_blocks and _given(n, item.id)
            ]
            pick(f"input:{item.id}", input_text(item), candidates[:1])
            continue
        blocks = READERS[item.format]
        candidates = [
            (str(n["id"]), True)
            for n in nodes
            if n.get("block") in blocks and str(n["id"]) not in used_nodes
        ]
        pick(f"input:{item.id}", input_text(item), candidates[:1])
        if candidates:
            used_nodes.add(candidates[0][0])
    for step in procedure.steps:
        pick(f"step:{step.id}", step_text(step), _step_candidates(plan, nodes, step))
    exported = {
        str(item.get("as")) for item in plan.get("exports") or [] if isinstance(item, Mapping)
    }
    for number, output in enumerate(procedure.outputs, start=1):
        if output.format == "file":  # the file a task makes, exported as it is
            candidates = [
                (str(n["id"]), _exports_output(plan, n, output.file_name))
                for n in nodes
                if n.get("block") in task_blocks
            ]
            pick(f"output:{number}", output_text(output), candidates[:1])
            continue
        blocks = WRITERS[output.format]
        named = _exported_as(output.file_name, exported)
        candidates = [
            (
                str(n["id"]),
                named and _sheet_met(output.sheet, nodes) and _encoding_met(output.encoding, n),
            )
            for n in nodes
            if n.get("block") in blocks
        ]
        # the last writer is the one whose workbook is exported (sheets are chained)
        pick(f"output:{number}", output_text(output), candidates[-1:])
    _check_flow(procedure, report, chosen, edges)
    covering = set(chosen.values())
    covering |= _exported_writers(plan, nodes, chosen)  # a CSV per reconciliation part
    needed = set(covering)
    for node_id in covering:
        needed |= _ancestors(edges, node_id)
    for node in nodes:
        node_id = str(node.get("id"))
        if node_id in needed:
            continue
        downstream = [
            other for other, sources in edges.items() if node_id in _ancestors(edges, other)
        ]
        if node.get("block") in SUPPORT_BLOCKS and any(d in needed for d in downstream):
            continue
        report.unrelated.append(node_id)
    return report


def _exported_as(file_name: str | None, exported: set[str]) -> bool:
    """True when an output named so is exported (a reconciliation to CSV: one file per
    part, 差異_左のみ); an output with no name is always."""
    if file_name is None:
        return True
    stem = _stem(file_name)
    return any(name == stem or name.startswith(f"{stem}_") for name in exported)


def _exported_writers(
    plan: Mapping[str, Any], nodes: list[dict[str, Any]], chosen: Mapping[str, str]
) -> set[str]:
    """Every writer node whose file the Plan exports, once an output was covered."""
    if not any(key.startswith("output:") for key in chosen):
        return set()
    writers = {str(n.get("id")) for n in nodes if n.get("block") in WRITER_BLOCKS}
    return {
        str(item.get("from")).split(".")[0]
        for item in plan.get("exports") or []
        if isinstance(item, Mapping) and str(item.get("from")).split(".")[0] in writers
    }


def _check_flow(
    procedure: Procedure,
    report: CoverageReport,
    chosen: dict[str, str],
    edges: Mapping[str, set[str]],
) -> None:
    outputs = [
        chosen[f"output:{n}"]
        for n in range(1, len(procedure.outputs) + 1)
        if f"output:{n}" in chosen
    ]
    inputs = {
        chosen[f"input:{item.id}"] for item in procedure.inputs if f"input:{item.id}" in chosen
    }
    for index, item in enumerate(report.items):
        if (
            item.status == "missing"
            or not item.requirement.startswith("step:")
            or item.node is None
        ):
            continue
        upstream = _ancestors(edges, item.node)
        problem = None
        if inputs and not upstream & inputs and item.node not in inputs:
            problem = "入力のファイルから読んだ表につながっていません"
        for output in outputs:
            if item.node != output and item.node not in _ancestors(edges, output):
                problem = "この処理の結果が出力に使われていません"
        if problem:
            report.items[index] = RequirementCoverage(
                item.requirement, item.text, "missing", item.node, problem
            )
