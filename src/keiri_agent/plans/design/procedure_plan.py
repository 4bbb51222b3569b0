"""A Plan composed from the requirement model (issue 27 §3), without a model.

``plan_from_procedure(procedure)`` turns each requirement into the one block that does
it, in flow order, and nothing else:

- the files: one ``ui.interactive_input`` (collect) asks every input file, each read
  by the block of its format (``csv.read``, ``excel.read_data``, ``table.read`` when
  the format was not named: CSV or Excel);
- each step: ``table.filter`` / ``table.aggregate`` / ``table.sort`` / ``table.select``
  / ``table.dedupe`` / ``table.join`` / ``table.reconcile`` / ``table.compute`` /
  ``text.normalize`` / ``table.concat``, with the parameters the instruction gave;
  a parameter it did not give becomes a Plan var with a question (never a default);
- a task (入金消込, 総合振込): its block, given the uploaded files as they are and the
  parameters the instruction gave (the others asked); its tables written one sheet
  each and a file it makes exported as it is;
- an approval: ``ui.interactive_input`` (confirm) showing the table, and the output's
  ``when`` waits for its answer (a data dependency, so nothing is written unapproved);
- the output: ``excel.write`` / ``csv.write`` of the last table (a reconciliation:
  one sheet per part), exported under the file name the instruction gave.

Steps that need a language model (extract, classify) are not built here: the
generator stops with the reason before calling this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.plans.design.procedure import (
    COUNT_ALL,
    FORMAT_WORDS,
    LLM_STEPS,
    METRIC_WORDS,
    InputSpec,
    Procedure,
    StepSpec,
    step_text,
)
from keiri_agent.plans.design.tasks import Task, task_of_block

READ_BLOCKS: dict[str, tuple[str, str, str]] = {
    "csv": ("csv.read", "file", ".csv,.txt"),
    "excel": ("excel.read_data", "workbook", ".xlsx,.xlsm"),
    "table": ("table.read", "file", ".csv,.txt,.xlsx,.xlsm"),
}
"""Input format → (reading block, its file input, accepted extensions)."""
STEP_BLOCKS: dict[str, str] = {
    "filter": "table.filter",
    "aggregate": "table.aggregate",
    "sort": "table.sort",
    "select": "table.select",
    "dedupe": "table.dedupe",
    "join": "table.join",
    "reconcile": "table.reconcile",
    "compute": "table.compute",
    "normalize": "text.normalize",
    "concat": "table.concat",
    "approval": "ui.interactive_input",
}
RECONCILE_PARTS: dict[str, str] = {
    "differences": "差異",
    "unmatched_left": "左のみ",
    "unmatched_right": "右のみ",
    "matched": "一致",
}
"""``table.reconcile`` outputs → the sheet each is written to."""
_MASTER = re.compile(r"マスタ|マスター|台帳|一覧表|master", re.IGNORECASE)
DEFAULT_SHEET = "結果"
UPLOAD_NODE = "upload_files"
COLUMN_HINT = "列の見出しをそのまま書いてください"


@dataclass
class BuiltPlan:
    plan: dict[str, Any]
    covers: dict[str, str] = field(default_factory=dict)
    """Requirement id (``input:in1``, ``step:s2``, ``output:1``) → the node covering it."""
    questions: list[dict[str, Any]] = field(default_factory=list)
    """``{var, question, type}`` for every parameter the instruction did not give."""


@dataclass
class _Builder:
    procedure: Procedure
    nodes: list[dict[str, Any]] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)
    covers: dict[str, str] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)
    tables: dict[str, str] = field(default_factory=dict)
    """Input id → the reference of its table."""

    columns: tuple[str, ...] = ()
    """The columns of the sample files the user gave: a column question offers them."""

    def ask(
        self,
        name: str,
        question: str,
        hint: str = "列の見出しをそのまま書いてください",
        *,
        target: str | None = None,
    ) -> str:
        """A var asked of the user; ``target`` is where the answer goes in the
        requirement model (``s1.conditions.0.column``), so coverage can be judged again."""
        self.vars[name] = None
        asked: dict[str, Any] = {"var": name, "question": question, "type": "text", "hint": hint}
        if target:
            asked["target"] = target
        if self.columns and hint == COLUMN_HINT:
            asked.update(
                type="select",
                options=list(self.columns),
                hint="見本のファイルの列から選んでください",
            )
        self.questions.append(asked)
        return f"${{vars.{name}}}"

    def node(self, node: dict[str, Any]) -> str:
        taken = {item["id"] for item in self.nodes}
        base, number = node["id"], 2
        while node["id"] in taken:
            node["id"] = f"{base}_{number}"
            number += 1
        self.nodes.append(node)
        return str(node["id"])


TWO_TABLE_STEPS = frozenset({"join", "reconcile", "concat"})
"""Steps that take the input tables rather than the table built so far."""


def plan_from_procedure(
    procedure: Procedure, *, plan_id: str, description: str = "", columns: Sequence[str] = ()
) -> BuiltPlan:
    """The Plan of ``procedure`` (see the module docstring); ``columns`` (of sample files)
    turn a column question into a choice among them."""
    if any(step.kind in LLM_STEPS for step in procedure.steps):
        raise ValueError("steps that need a language model are not built by rules")
    builder = _Builder(procedure, columns=tuple(columns))
    _read_inputs(builder)
    current = builder.tables[procedure.inputs[0].id] if procedure.inputs else None
    aggregate_columns: dict[str, str] = {}
    sheets: list[tuple[str, str]] = []
    task_node: tuple[str, Task] | None = None
    approval: str | None = None
    first_table = procedure.inputs[0].id if procedure.inputs else None
    for step in procedure.steps:
        if step.kind == "approval":
            approval = _approval(builder, step, current)
            continue
        if step.kind == "task":
            task_node = _task(builder, step)
            node_id, task = task_node
            sheets = [(f"${{{node_id}.{port}}}", sheet) for port, sheet in task.sheets]
            current = sheets[0][0]
            builder.covers[f"step:{step.id}"] = node_id
            continue
        tables = len(builder.tables)
        parts = _concat_parts(builder, step) if step.kind == "concat" else []
        node_id, current = _step(builder, step, current, aggregate_columns, parts)
        builder.covers[f"step:{step.id}"] = node_id
        if 0 < len(parts) < tables and current is not None:
            # the stacked files are one table from here on; a later join or reconciliation
            # takes it with the file left out of the stack (a master)
            for item in parts[1:]:
                builder.tables.pop(item.id, None)
            builder.tables[parts[0].id] = current
            first_table = parts[0].id
        elif step.kind in TWO_TABLE_STEPS:
            first_table = None
        elif first_table is not None and current is not None:
            # 「オーナー名を整えたうえで、物件一覧と紐付けて」: the first table, as changed so
            # far, is the one a later join, reconcile or stack takes
            builder.tables[first_table] = current
        if step.kind == "reconcile":
            sheets = [
                (f"${{{node_id}.{part}}}", name)
                for part, name in RECONCILE_PARTS.items()
                if not step.parts or part in step.parts
            ]
            current = sheets[0][0]  # 「報告にあって契約にない物件」: that part alone
            if len(step.parts) >= 2 and _one_table_asked(procedure):
                # 「入金のないもの、金額が一致しないものをシート「不一致」に」: the parts asked
                # for, one after another in the one table named
                stacked = builder.node(
                    {
                        "id": "stack_parts",
                        "title": "照合結果の行をまとめる",
                        "block": "table.concat",
                        "in": {"tables": [data for data, _ in sheets]},
                        "out": {"records": "records"},
                    }
                )
                current, sheets = f"${{{stacked}.records}}", []
    exports = _outputs(builder, current, sheets, approval, task_node)
    plan: dict[str, Any] = {
        "apiVersion": "v1",
        "id": plan_id,
        "version": "0.1.0",
        "description": description or "指示から作成した手順",
        "vars": builder.vars,
        "graph": builder.nodes,
        "exports": exports,
    }
    if not builder.vars:
        del plan["vars"]
    else:  # a run asks what is still open in the words the design asked it
        plan["ui"] = {"vars": _var_titles(builder.questions)}
    return BuiltPlan(plan, builder.covers, builder.questions)


def _var_titles(questions: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """``ui.vars`` for the asked vars: the question as the field's title (without its
    closing 「は？」), its hint as the description."""
    titles = {}
    for asked in questions:
        question = str(asked["question"])
        title = re.sub(r"(は|を)?[？?]$", "", question) or question
        titles[str(asked["var"])] = {"title": title, "description": str(asked.get("hint") or "")}
    return titles


def _task_files(procedure: Procedure) -> dict[str, dict[str, str]]:
    """Input id → the upload field of a task's file (its label and accepted types)."""
    fields = {}
    for step in procedure.steps:
        task = task_of_block(step.block) if step.kind == "task" else None
        for task_file in task.files if task else ():
            fields[task_file.port] = {"label": task_file.label, "accept": task_file.accept}
    return fields


def _read_inputs(builder: _Builder) -> None:
    task_files = _task_files(builder.procedure)
    files = [
        item
        for item in builder.procedure.inputs
        if item.format in READ_BLOCKS or (item.format == "file" and item.id in task_files)
    ]
    if not files:
        return
    fields = [
        {"id": item.id, "type": "file", **task_files[item.id]}
        if item.format == "file"
        else {
            "id": _file_id(item),
            "type": "file",
            "label": f"{item.holds}（{FORMAT_WORDS[item.format]}）",
            "accept": READ_BLOCKS[item.format][2],
        }
        for item in files
    ]
    builder.node(
        {
            "id": UPLOAD_NODE,
            "title": "ファイルのアップロード",
            "block": "ui.interactive_input",
            "in": {
                "mode": "collect",
                "message": "処理するファイルをアップロードしてください",
                "requirements": fields,
            },
            "out": {"collected_data": "files"},
        }
    )
    for number, item in enumerate(files, start=1):
        if item.format == "file":  # a task's file goes to its block as it is
            builder.tables[item.id] = f"${{{UPLOAD_NODE}.files.{item.id}}}"
            continue
        block, port, _ = READ_BLOCKS[item.format]
        inputs: dict[str, Any] = {port: f"${{{UPLOAD_NODE}.files.{_file_id(item)}}}"}
        if item.sheet and block != "csv.read":
            inputs["sheet"] = item.sheet
        node_id = builder.node(
            {
                "id": f"read_{number}",
                "title": f"{item.holds}の読込",
                "block": block,
                "in": inputs,
                "out": {"records": "records"},
            }
        )
        builder.tables[item.id] = f"${{{node_id}.records}}"
        builder.covers[f"input:{item.id}"] = node_id


def answered(
    procedure: Procedure, questions: Sequence[Mapping[str, Any]], values: Mapping[str, Any]
) -> Procedure:
    """``procedure`` with the answers to the builder's questions written where each
    question's ``target`` points (a condition's column, sort keys, reconcile columns)."""
    result = procedure.model_copy(deep=True)
    steps = {step.id: step for step in result.steps}
    for question in questions:
        value = values.get(str(question.get("var")))
        target = str(question.get("target") or "")
        step_id, _, path = target.partition(".")
        step = steps.get(step_id)
        if step is None or value in (None, ""):
            continue
        parts = path.split(".")
        if parts[0] == "conditions" and len(parts) == 3 and int(parts[1]) < len(step.conditions):
            step.conditions[int(parts[1])].column = str(value)
        elif parts[0] in ("by", "keys"):
            setattr(step, parts[0], [str(value)])
        elif parts[0] in ("amount_column", "date_column"):
            setattr(step, parts[0], str(value))
        elif parts[0] == "values" and len(parts) >= 2:
            step.values[".".join(parts[1:])] = value
            path = ".".join(parts[1:])
        step.missing = [m for m in step.missing if not m.startswith(path)]
    return result


def _file_id(item: InputSpec) -> str:
    number = re.sub(r"\D", "", item.id) or "1"
    return f"file_{number}"


def _one_table_asked(procedure: Procedure) -> bool:
    """Whether the one output asked for is one table: an Excel sheet named, or a CSV file."""
    outputs = procedure.outputs
    return len(outputs) == 1 and (outputs[0].format == "csv" or bool(outputs[0].sheet))


def _column_or_ask(
    builder: _Builder, step: StepSpec, value: str | None, name: str, what: str, target: str
) -> str:
    if value:
        return value
    return builder.ask(f"{step.id}_{name}", what, target=f"{step.id}.{target}")


def _step(  # noqa: C901 (one branch per step kind)
    builder: _Builder,
    step: StepSpec,
    current: str | None,
    aggregate_columns: dict[str, str],
    parts: Sequence[InputSpec] = (),
) -> tuple[str, str]:
    """The node of ``step``; ``parts``: the files a stack (concat) takes."""
    records = current or builder.ask(
        f"{step.id}_table", "処理する表", hint="表のファイルを指定してください"
    )
    block = STEP_BLOCKS[step.kind]
    title = step_text(step)
    inputs: dict[str, Any] = {"records": records}
    outputs: dict[str, str] = {"records": "records"}
    if step.kind == "filter":
        conditions = []
        for number, condition in enumerate(step.conditions, start=1):
            value = condition.value
            shown = (
                (
                    f"{value:,}"
                    if isinstance(value, int | float) and not isinstance(value, bool)
                    else f"「{value}」"
                )
                if value is not None
                else ""
            )
            column = _column_or_ask(
                builder, step, condition.column, f"column_{number}",
                f"絞り込みの条件 {number}（{shown}と比べる）に使う列は？",
                f"conditions.{number - 1}.column",
            )  # fmt: skip
            if aggregate_columns and condition.column:  # after a total: its result column
                column = _result_column(column, aggregate_columns)
            item: dict[str, Any] = {"col": column, "op": condition.op}
            if condition.op not in ("is_null", "not_null"):
                item["value"] = value
            conditions.append(item)
        inputs["conditions"] = conditions
    elif step.kind == "aggregate":
        metrics: dict[str, list[str]] = {}
        prelude = current
        count = step.count_name or "件数"  # 「訪問件数を数える」: the count under its own name
        if COUNT_ALL in step.metrics:
            prelude_id = builder.node(
                {
                    "id": "count_rows",
                    "title": "件数を数えるための列（1 行 = 1）",
                    "block": "table.compute",
                    "in": {"records": records, "columns": {count: "1"}},
                    "out": {"records": "records"},
                }
            )
            prelude = f"${{{prelude_id}.records}}"
            metrics[count] = ["sum"]
            aggregate_columns[count] = f"{count}_sum"
            aggregate_columns.setdefault("件数", f"{count}_sum")
        for column, wanted in step.metrics.items():
            if column == COUNT_ALL:
                continue
            metrics[column] = list(wanted)
            aggregate_columns[column] = f"{column}_{wanted[0]}"
            for metric in wanted:
                # 「合計の大きい順」: a metric's word names its result column
                aggregate_columns.setdefault(METRIC_WORDS[metric], f"{column}_{metric}")
                # 「売上合計 ÷ 客数合計」: the column said with its metric's word
                aggregate_columns[f"{column}{METRIC_WORDS[metric]}"] = f"{column}_{metric}"
        inputs = {
            "records": prelude or records,
            "group_by": list(step.group_by),
            "metrics": metrics,
        }
    elif step.kind == "sort":
        by = [_result_column(column, aggregate_columns) for column in step.by]
        if not by:
            by = [builder.ask(f"{step.id}_by", "並べ替えに使う列は？", target=f"{step.id}.by")]
        inputs.update(by=by, ascending=not step.descending)
        if step.limit:
            inputs["limit"] = step.limit
    elif step.kind == "select":
        inputs["columns"] = [aggregate_columns.get(column, column) for column in step.columns]
    elif step.kind == "dedupe":
        if step.by:  # 「最新の接種日を残す」: the rows in that column's order, then one kept
            ordered = builder.node(
                {
                    "id": f"order_{step.id}",
                    "title": f"「{'・'.join(step.by)}」の順に並べる（残す行を選ぶため）",
                    "block": "table.sort",
                    "in": {"records": records, "by": list(step.by), "ascending": True},
                    "out": {"records": "records"},
                }
            )
            inputs["records"] = f"${{{ordered}.records}}"
        if step.keys:
            inputs["keys"] = list(step.keys)
        inputs["keep"] = step.keep
        if step.loose_match:  # 「全角半角の違いは同じとみなす」
            inputs["normalize"] = True
        if step.duplicates_listed:  # 「重複している行を一覧で」: the repeats, with their rows
            outputs = {"duplicates": "duplicates"}
    elif step.kind == "compute":
        inputs["columns"] = {
            name: _after_totals(expression, aggregate_columns)
            for name, expression in step.expressions.items()
        }
    elif step.kind == "normalize":
        kinds = {column: _normal_kind(column, step.source) for column in step.columns}
        inputs["columns"] = {  # 「㈱／株式会社」: company forms written out in text columns
            column: "company" if step.company_forms and kind == "text" else kind
            for column, kind in kinds.items()
        }
    elif step.kind in ("join", "reconcile"):
        left, right = _two_tables(builder, step)
        keys = list(step.keys) or [
            builder.ask(
                f"{step.id}_key", "2 つの表を突き合わせるキーの列は？", target=f"{step.id}.keys"
            )
        ]
        inputs = {"left": left, "right": right}
        if step.kind == "join":
            if step.fields and step.keys:  # 「書名と定価を付与」: only those columns come over
                kept = builder.node(
                    {
                        "id": f"bring_{step.id}",
                        "title": f"付ける列だけにする（{'・'.join(step.fields)}）",
                        "block": "table.select",
                        "in": {"records": right, "columns": [*keys, *step.fields]},
                        "out": {"records": "records"},
                    }
                )
                inputs["right"] = f"${{{kept}.records}}"
            inputs.update({"on": keys, "how": step.how})
        else:
            inputs["keys"] = keys
            if step.tolerance is not None or step.amount_column or "amount_column" in step.missing:
                column = _column_or_ask(
                    builder,
                    step,
                    step.amount_column,
                    "amount",
                    "比べる金額の列は？",
                    "amount_column",
                )
                inputs["amount"] = {
                    "left": column,
                    "right": step.right_amount_column or column,
                    "tolerance": step.tolerance or 0,
                }
            if step.date_window_days is not None or step.date_column:
                column = _column_or_ask(
                    builder, step, step.date_column, "date", "比べる日付の列は？", "date_column"
                )
                inputs["date"] = {
                    "left": column,
                    "right": step.right_date_column or column,
                    "window_days": step.date_window_days or 0,
                }
            outputs = {  # the parts asked for (every part when none is said)
                part: part for part in RECONCILE_PARTS if not step.parts or part in step.parts
            }
    elif step.kind == "concat":
        inputs = {"tables": [builder.tables[item.id] for item in parts]}
    node_id = builder.node(
        {
            "id": f"{step.kind}_{step.id}",
            "title": title,
            "block": block,
            "in": inputs,
            "out": outputs,
        }
    )
    main = (
        "differences"
        if step.kind == "reconcile"
        else "duplicates"
        if step.duplicates_listed
        else "records"
    )
    return node_id, f"${{{node_id}.{main}}}"


def _task(builder: _Builder, step: StepSpec) -> tuple[str, Task]:
    """The task's block: the uploaded files, the parameters given or asked."""
    task = task_of_block(step.block)
    if task is None:
        raise ValueError(f"no task is done by block {step.block!r}")
    inputs: dict[str, Any] = {}
    for task_file in task.files:
        inputs[task_file.port] = builder.tables.get(task_file.port) or builder.ask(
            f"{step.id}_{task_file.port}", task_file.label, hint="ファイルを指定してください"
        )
    for parameter in task.parameters:
        var = f"{step.id}_{parameter.port.replace('.', '_')}"
        if parameter.port in step.values:
            value = step.values[parameter.port]
        elif parameter.optional:  # its block's own rule applies unless set at run time
            builder.vars[var] = None
            value = f"${{vars.{var}}}"
        else:
            value = builder.ask(
                var, parameter.question, parameter.hint, target=f"{step.id}.values.{parameter.port}"
            )
        *objects, name = parameter.port.split(".")
        place = inputs
        for part in objects:
            place = place.setdefault(part, {})
        place[name] = value
    outputs = [port for port, _ in task.sheets]
    if task.file_output:
        outputs.append(task.file_output)
    node_id = builder.node(
        {
            "id": task.id,
            "title": task.title,
            "block": task.block,
            "in": inputs,
            "out": {port: port for port in outputs},
        }
    )
    for item in builder.procedure.inputs:
        if item.format == "file":
            builder.covers[f"input:{item.id}"] = node_id
    return node_id, task


def _after_totals(expression: str, aggregate_columns: dict[str, str]) -> str:
    """A formula after an aggregation names the totals' columns (「支給額 = コマ数 × 時給」
    after コマ数 was totalled: コマ数_sum); other names (時給 joined after) stay."""
    if not aggregate_columns:
        return expression
    return re.sub(
        r"\[[^\]]+\]|[^\s+\-*/%(),<>=!']+",
        lambda m: aggregate_columns.get(m.group(0), m.group(0)),
        expression,
    )


def _result_column(column: str, aggregate_columns: dict[str, str]) -> str:
    """The column a sort names after an aggregation: the metric column of that name,
    or the one metric column whose source ends with it (「残高の多い順」 after 未回収残高)."""
    if column in aggregate_columns:
        return aggregate_columns[column]
    endings = {
        v
        for k, v in aggregate_columns.items()
        if k.endswith(column) and k not in METRIC_WORDS.values()
    }
    return endings.pop() if len(endings) == 1 else column


def _normal_kind(column: str, source: str) -> str:
    """How a column is normalised: by what the instruction asks (数値 / 日付) or, else,
    by the column's name (an amount noun → amount, a date noun → date), else text."""
    from keiri_agent.plans.design.procedure_rules import is_amount_column

    if "数値" in source or is_amount_column(column):
        return "amount"
    if "日付" in source or re.search(r"(日|日付|年月日)$", column):
        return "date"
    return "text"


def _concat_parts(builder: _Builder, step: StepSpec) -> list[InputSpec]:
    """The files a stack (concat) takes: every table, unless a later join or reconciliation
    needs one of them. Then the stack is the files named alike (「特約店出荷_2023」
    「特約店出荷_2024」: one name before 「_」), or every file but the masters (マスタ, 台帳)."""
    items = [item for item in builder.procedure.inputs if item.id in builder.tables]
    steps = builder.procedure.steps
    later = steps[steps.index(step) + 1 :] if step in steps else []
    if len(items) < 3 or not any(s.kind in ("join", "reconcile") for s in later):
        return items
    stems: dict[str, list[InputSpec]] = {}
    for item in items:
        stem = re.split(r"[_\-]", item.holds, maxsplit=1)[0]
        stems.setdefault(stem, []).append(item)
    alike = max(stems.values(), key=len)
    if 2 <= len(alike) < len(items):
        return alike
    plain = [item for item in items if not _MASTER.search(item.holds)]
    return plain if 2 <= len(plain) < len(items) else items


def _two_tables(builder: _Builder, step: StepSpec) -> tuple[str, str]:
    """The left and right tables: a master (マスタ, 台帳) is the right one of a join."""
    items = [item for item in builder.procedure.inputs if item.id in builder.tables]
    if step.kind == "join":
        items.sort(key=lambda item: bool(_MASTER.search(item.holds)))
        # 「注文側を基準に左結合」: the table said to be the base is the left one
        items.sort(key=lambda item: item.id != step.input)
    left, right = items[0], items[1]
    return builder.tables[left.id], builder.tables[right.id]


def _approval(builder: _Builder, step: StepSpec, current: str | None) -> str:
    """A confirm showing the table; when the instruction names who approves (上長, 課長),
    an approval by a 承認者 other than the person who started the run (職務分掌)."""
    message = "内容を確認し、問題なければ承認してください（承認されないと出力しません）"
    inputs: dict[str, Any] = {"mode": "confirm", "message": message}
    if step.approver:
        inputs["message"] = (
            f"{step.approver}の承認を待っています。内容を確認し、問題なければ承認してください"
            "（実行した人は承認できません。承認されないと出力しません）"
        )
        inputs["approval"] = {"roles": ["approver"], "not_starter": True}
    inputs["context"] = {"records": current} if current else {}
    node_id = builder.node(
        {
            "id": "approve",
            "title": "承認",
            "block": "ui.interactive_input",
            "in": inputs,
            "out": {"approved": "approved"},
        }
    )
    builder.covers[f"step:{step.id}"] = node_id
    return node_id


def _outputs(
    builder: _Builder,
    current: str | None,
    sheets: list[tuple[str, str]],
    approval: str | None,
    task_node: tuple[str, Task] | None,
) -> list[dict[str, Any]]:
    """The exports. ``sheets``: the tables of a reconciliation or a task, one sheet each,
    when the last table is theirs (its first is the one a named sheet renames)."""
    when = {"expr": f"${{{approval}.approved}} == true"} if approval else None
    parted = bool(sheets) and current == sheets[0][0]  # a reconciliation's (or task's) parts
    if not builder.procedure.outputs:
        if parted:  # 「一致しなかったものを一覧に」: every part, not the differences alone
            return [{"from": data.strip("${}"), "as": sheet} for data, sheet in sheets]
        return [{"from": current.strip("${}"), "as": "結果"}] if current else []
    exports = []
    for number, output in enumerate(builder.procedure.outputs, start=1):
        name = re.sub(
            r"\.(xlsx|xlsm|csv|docx|txt)$", "", output.file_name or "", flags=re.IGNORECASE
        ) or (task_node[1].output_names[output.format == "file"] if task_node else "結果")
        if output.format == "file" and task_node:  # the file a task makes, as it is
            node_id, task = task_node
            exports.append({"from": f"{node_id}.{task.file_output}", "as": name})
            builder.covers[f"output:{number}"] = node_id
            continue
        if output.format == "docx":  # 「Wordの報告書に」: the table as a Word document
            table = builder.node(
                {
                    "id": "to_markdown",
                    "title": "表を文書の形に",
                    "block": "table.to_markdown",
                    "in": {"records": current, "title": name},
                    "out": {"markdown": "markdown"},
                }
            )
            render: dict[str, Any] = {
                "id": "write_word",
                "title": "Word 文書に出力",
                "block": "document.render",
                "in": {
                    "markdown": f"${{{table}.markdown}}",
                    "title": name,
                    "filename": f"{name}.docx",
                },
                "out": {"document": "document"},
            }
            if when:
                render["when"] = when
            node_id = builder.node(render)
            exports.append({"from": f"{node_id}.document", "as": name})
        elif output.format == "csv":
            # a CSV holds one table: a reconciliation writes one file per part
            tables: list[tuple[str | None, str]] = (
                [(data, f"{name}_{sheet}") for data, sheet in sheets] if parted else []
            )
            for data, file_name in tables or [(current, name)]:
                node: dict[str, Any] = {
                    "id": "write_csv",
                    "title": f"CSV に出力（{file_name}）" if tables else "CSV に出力",
                    "block": "csv.write",
                    "in": {"records": data}
                    | ({"encoding": output.encoding} if output.encoding else {}),
                    "out": {"csv": "file"},
                }
                if when:
                    node["when"] = when
                node_id = builder.node(node)
                exports.append({"from": f"{node_id}.file", "as": file_name})
        else:
            parts: list[tuple[str | None, str]] = (
                [
                    # 「シート名は「差異一覧」で」: the first table goes to the sheet named
                    (data, (index == 0 and output.sheet) or sheet)
                    for index, (data, sheet) in enumerate(sheets)
                ]
                if parted
                else [(current, output.sheet or DEFAULT_SHEET)]
            )
            workbook: Any = None
            node_id = ""
            for data, sheet in parts:
                node = {
                    "id": "write_excel",
                    "title": f"Excel に出力（{sheet}）",
                    "block": "excel.write",
                    "in": {
                        "workbook": workbook,
                        "data": data,
                        "output_config": {
                            "sheet": sheet,
                            "create_sheet": True,
                            "mode": "overwrite",
                        },
                    },
                    "out": {"workbook": "workbook"},
                }
                if when:
                    node["when"] = when
                node_id = builder.node(node)
                workbook = f"${{{node_id}.workbook}}"
            exports.append({"from": f"{node_id}.workbook", "as": name})
        builder.covers[f"output:{number}"] = node_id
    return exports
