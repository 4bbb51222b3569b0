"""The requirement model of an instruction (issue 27): what the user asked for, as data.

One structure for both paths: the offline rules (``procedure_rules.read_procedure``)
and the LLM's first stage return a ``Procedure``; the builder
(``procedure_plan.plan_from_procedure``) composes a Plan from it and the coverage
check (``coverage.check_coverage``) tells, for any Plan, which requirement a node
covers.

- ``inputs``: the files the instruction names (format and what they hold);
- ``steps``: the table steps in order, each with its parameters (filter conditions
  as column / operator / value, group keys, aggregations, join and reconcile keys,
  computed columns, dedupe keys, approvals and what they guard); a parameter the
  instruction did not give is ``None`` and listed in the step's ``missing``, so it is
  asked — never filled with a default;
- ``outputs``: format and file / sheet name;
- a ``task`` step: a whole accounting job one catalog block does (入金消込, 総合振込;
  ``tasks.TASKS``), its files given to the block as they are (input format ``file``)
  and, for a file the block makes, an output of format ``file``;
- ``gaps``: parts that cannot be built (an action no block does, a source the
  instruction never names, a step that needs a language model when none is set).

``checklist(procedure)`` renders it as Japanese lines for the user.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from keiri_agent.plans.design.tasks import task_of_block

InputFormat = Literal["csv", "excel", "zip", "pdf", "table", "file"]
StepKind = Literal[
    "filter",
    "aggregate",
    "sort",
    "select",
    "dedupe",
    "join",
    "reconcile",
    "compute",
    "normalize",
    "concat",
    "approval",
    "extract",
    "classify",
    "task",
]
OutputFormat = Literal["excel", "csv", "docx", "file"]
Operator = Literal[
    "==",
    "!=",
    ">",
    ">=",
    "<",
    "<=",
    "in",
    "not_in",
    "contains",
    "not_contains",
    "is_null",
    "not_null",
]
Metric = Literal["sum", "mean", "median", "count", "nunique", "min", "max"]
ReconcilePart = Literal["differences", "unmatched_left", "unmatched_right", "matched"]
GapKind = Literal["unsupported_action", "missing_source", "needs_llm", "not_understood"]

LLM_STEPS: frozenset[str] = frozenset({"extract", "classify"})
"""Steps that need language understanding (a configured model)."""
COUNT_ALL = "*"
"""``metrics`` key for 「件数」 with no column: rows are counted."""

OPERATOR_WORDS: dict[str, str] = {
    "==": "が",
    "!=": "が次以外:",
    ">": "が次を超える:",
    ">=": "が次以上:",
    "<": "が次未満:",
    "<=": "が次以下:",
    "in": "が次のいずれか:",
    "not_in": "が次のいずれでもない:",
    "contains": "が次を含む:",
    "not_contains": "が次を含まない:",
    "is_null": "が空欄",
    "not_null": "が空欄でない",
}
METRIC_WORDS: dict[str, str] = {
    "sum": "合計",
    "mean": "平均",
    "median": "中央値",
    "count": "件数",
    "nunique": "ユニーク数",
    "min": "最小",
    "max": "最大",
}
FORMAT_WORDS: dict[str, str] = {
    "csv": "CSV",
    "excel": "Excel",
    "zip": "ZIP",
    "pdf": "PDF",
    "docx": "Word 文書",
    "table": "表ファイル（CSV / Excel）",
    "file": "ファイル",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Condition(_Model):
    """One filter condition; ``column`` None means the instruction did not name it."""

    column: str | None = None
    op: Operator
    value: Any = None


class InputSpec(_Model):
    id: str = Field(description="input id, snake case or in1, in2, ...")
    format: InputFormat
    holds: str = Field(description="what the file holds, in the user's words")
    sheet: str | None = Field(default=None, description="Excel: the sheet to read, when named")
    source: str = Field(default="", description="the words of the instruction")


class StepSpec(_Model):
    id: str = Field(description="s1, s2, ... in the order the flow runs")
    kind: StepKind
    input: str | None = Field(
        default=None, description="input id this step reads first (None: the previous step)"
    )
    other_input: str | None = Field(
        default=None, description="join / reconcile / concat: the second input id"
    )
    conditions: list[Condition] = Field(default_factory=list)
    group_by: list[str] = Field(default_factory=list)
    metrics: dict[str, list[Metric]] = Field(default_factory=dict)
    by: list[str] = Field(default_factory=list)
    descending: bool = False
    limit: int | None = Field(
        default=None, description="sort: keep only the first N rows (上位10件)", ge=1
    )
    columns: list[str] = Field(default_factory=list)
    keys: list[str] = Field(default_factory=list)
    keep: Literal["first", "last"] = "first"
    parts: list[ReconcilePart] = Field(
        default_factory=list,
        description="reconcile: the results wanted (unmatched_left: rows only in the first "
        "table, 「請求にあって入金にない」); empty: every part",
    )
    how: Literal["left", "inner"] = Field(
        default="left",
        description="join: left keeps every row of the first table (input); inner keeps only "
        "rows found in both (内部結合)",
    )
    loose_match: bool = Field(
        default=False,
        description="dedupe: values equal apart from 全角/半角, case and spaces are the same",
    )
    duplicates_listed: bool = Field(
        default=False,
        description="dedupe: the rows that repeat a key are the result (重複している行の一覧)",
    )
    amount_column: str | None = None
    right_amount_column: str | None = Field(
        default=None, description="reconcile: the second table's amount column, when named apart"
    )
    tolerance: float | None = None
    date_column: str | None = None
    right_date_column: str | None = Field(
        default=None, description="reconcile: the second table's date column, when named apart"
    )
    date_window_days: int | None = None
    expressions: dict[str, str] = Field(default_factory=dict)
    count_name: str | None = Field(
        default=None, description="aggregate: the instruction's name for the row count (訪問件数)"
    )
    labels: list[str] = Field(default_factory=list)
    fields: list[str] = Field(default_factory=list)
    company_forms: bool = Field(
        default=False,
        description="normalize: also write company forms out (㈱ / (株) → 株式会社)",
    )
    approver: str | None = Field(
        default=None,
        description="approval: who approves, when the instruction names someone else "
        "(上長, 課長, 田中さん); the person who starts the run may then not approve",
    )
    block: str | None = Field(
        default=None, description="task: the catalog block that does the whole job"
    )
    values: dict[str, Any] = Field(
        default_factory=dict,
        description="task: the block inputs the instruction gave (remitter.code → value)",
    )
    missing: list[str] = Field(
        default_factory=list,
        description="parameters the instruction does not give (asked, never defaulted)",
    )
    source: str = Field(default="", description="the words of the instruction")

    @model_validator(mode="after")
    def _known_task(self) -> StepSpec:
        if self.kind == "task" and task_of_block(self.block) is None:
            raise ValueError(f"a task step names no known task block: {self.block!r}")
        return self


class OutputSpec(_Model):
    format: OutputFormat
    file_name: str | None = None
    sheet: str | None = None
    encoding: str | None = None  # a CSV's character code when asked (cp932 = Shift_JIS)
    source: str = ""


class Gap(_Model):
    """A part of the instruction that cannot be built, and why (Japanese)."""

    kind: GapKind
    message: str
    source: str = ""


class Procedure(_Model):
    """The requirement model of one instruction."""

    inputs: list[InputSpec] = Field(default_factory=list)
    steps: list[StepSpec] = Field(default_factory=list)
    outputs: list[OutputSpec] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)

    def requirement_ids(self) -> list[str]:
        """Every requirement the coverage check looks for, in flow order."""
        return [
            *(f"input:{item.id}" for item in self.inputs),
            *(f"step:{step.id}" for step in self.steps),
            *(f"output:{index}" for index, _ in enumerate(self.outputs, start=1)),
        ]

    @property
    def needs_llm(self) -> bool:
        return any(step.kind in LLM_STEPS for step in self.steps)


def _value_text(value: Any) -> str:
    if isinstance(value, list):
        return "、".join(_value_text(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,}"  # 3.5 is a number, not the text 「3.5」
    return f"「{value}」"


def _column(name: str | None) -> str:
    return f"「{name}」" if name else "（列が未定）"


def condition_text(condition: Condition) -> str:
    words = OPERATOR_WORDS[condition.op]
    if condition.op in ("is_null", "not_null"):
        return f"{_column(condition.column)}{words}"
    if condition.op == "==":
        return f"{_column(condition.column)}が{_value_text(condition.value)}"
    return f"{_column(condition.column)}{words}{_value_text(condition.value)}"


def _pair(left: str | None, right: str | None) -> str:
    return f"「{left}」と「{right}」" if right and right != left else f"「{left}」"


def _reconcile_text(step: StepSpec) -> str:
    keys = f"「{'・'.join(step.keys)}」" if step.keys else "（キーが未定）"
    extra = ""
    if step.amount_column:
        extra += f"、金額は{_pair(step.amount_column, step.right_amount_column)}で比べる"
    if step.tolerance is not None:
        extra += f"、金額差 {_value_text(step.tolerance)} 円まで"
    if step.date_window_days is not None:
        dates = f"{_pair(step.date_column, step.right_date_column)}の" if step.date_column else ""
        extra += f"、{dates}日付差 {step.date_window_days} 日まで"
    if step.parts:
        extra += "、出すのは " + "・".join(RECONCILE_PART_WORDS[part] for part in step.parts)
    return f"照合: {keys}で突き合わせ{extra}"


RECONCILE_PART_WORDS = {
    "differences": "差異のある行",
    "unmatched_left": "1つ目の表にだけある行",
    "unmatched_right": "2つ目の表にだけある行",
    "matched": "一致した行",
}


def step_text(step: StepSpec) -> str:
    """One step in words (Japanese)."""
    names = "・".join
    if step.kind == "filter":
        return "行の絞り込み: " + "、かつ ".join(condition_text(c) for c in step.conditions)
    if step.kind == "aggregate":
        metrics = (
            "、".join(
                ((step.count_name or "件数") if column == COUNT_ALL else f"「{column}」の")
                + ("" if column == COUNT_ALL else "・".join(METRIC_WORDS[m] for m in wanted))
                for column, wanted in step.metrics.items()
            )
            or "（集計する列が未定）"
        )
        groups = f"「{names(step.group_by)}」別に" if step.group_by else "全体で"
        return f"集計: {groups}{metrics}"
    if step.kind == "sort":
        order = "大きい順" if step.descending else "小さい順"
        top = f"、先頭 {step.limit} 件だけ" if step.limit else ""
        return (
            f"並べ替え: 「{names(step.by)}」の{order}{top}" if step.by else "並べ替え（列が未定）"
        )
    if step.kind == "select":
        return f"列の選択: 「{names(step.columns)}」"
    if step.kind == "dedupe":
        return _dedupe_text(step)
    if step.kind == "join":
        keys = f"「{names(step.keys)}」" if step.keys else "（キーが未定）"
        kept = "、両方にある行だけ" if step.how == "inner" else ""
        return f"表の結合: {keys}で参照{kept}"
    if step.kind == "reconcile":
        return _reconcile_text(step)
    if step.kind == "compute":
        return "列の計算: " + "、".join(f"{k} = {v}" for k, v in step.expressions.items())
    if step.kind == "normalize":
        forms = "（(株)・㈱ は株式会社に）" if step.company_forms else ""
        return f"表記の統一: 「{names(step.columns)}」{forms}" if step.columns else "表記の統一"
    if step.kind == "concat":
        return "表の連結（縦につなぐ）"
    if step.kind == "approval":
        return (
            f"承認: {step.approver}が承認してから出力（実行した人は承認できません）"
            if step.approver
            else "承認: 担当者が確認してから出力"
        )
    if step.kind == "task":
        task = task_of_block(step.block)
        given = []
        for port, value in step.values.items():
            parameter = task.parameter(port) if task else None
            given.append(f"{parameter.label if parameter else port} {_value_text(value)}")
        title = task.title if task else str(step.block)
        return title + (f"（{'、'.join(given)}）" if given else "")
    if step.kind == "extract":
        return "LLM による項目抽出: " + "・".join(step.fields)
    return "LLM による分類: " + "・".join(step.labels)


def _dedupe_text(step: StepSpec) -> str:
    keys = f"「{'・'.join(step.keys)}」が同じ行" if step.keys else "すべての列が同じ行"
    loose = "（全角半角・大文字小文字・空白の違いは同じとみなす）" if step.loose_match else ""
    if step.duplicates_listed:
        return f"重複の確認: {keys}のうち、2行目以降の一覧{loose}"
    if step.by:  # 「最新の接種日を残す」
        which = "いちばん大きい（新しい）" if step.keep == "last" else "いちばん小さい（古い）"
        kept = f"（「{'・'.join(step.by)}」が{which}行を残す）"
        return f"重複の除去: {keys}を1行に{kept}{loose}"
    return f"重複の除去: {keys}を1行に{loose}"


def input_text(item: InputSpec) -> str:
    if item.format == "file":
        return f"入力: {item.holds}"
    sheet = f"、シート「{item.sheet}」" if item.sheet else ""
    return f"入力: {item.holds}（{FORMAT_WORDS[item.format]}{sheet}）"


ENCODING_WORDS = {"cp932": "Shift_JIS", "utf-8": "UTF-8（BOM なし）", "utf-8-sig": "UTF-8"}
"""The character codes ``csv.write`` writes, as a user names them."""


def output_text(output: OutputSpec) -> str:
    parts = [f"出力: {FORMAT_WORDS[output.format]}"]
    if output.file_name:
        parts.append(f"ファイル名「{output.file_name}」")
    if output.sheet:
        parts.append(f"シート「{output.sheet}」")
    if output.encoding:
        parts.append(f"文字コード {ENCODING_WORDS.get(output.encoding, output.encoding)}")
    return "、".join(parts)


def checklist(procedure: Procedure) -> list[str]:
    """The requirements as Japanese lines, in flow order (the user's checklist)."""
    return [
        *(input_text(item) for item in procedure.inputs),
        *(step_text(step) for step in procedure.steps),
        *(output_text(output) for output in procedure.outputs),
    ]
