"""What the dry run knows of a table's columns, and the checks it makes with that.

Tables travel between blocks as records (a list of objects). Where the Plan itself says
which columns a table has, and of which type, the dry run carries that as a
:class:`TableSchema` from node to node and checks the columns the table blocks name,
before anything runs:

- ``UNKNOWN_COLUMN``: a column that a known table lacks, named in ``table.filter``
  conditions, ``table.aggregate`` group_by / metrics, ``table.sort`` by,
  ``table.select`` columns / rename, ``table.dedupe`` keys, ``table.join`` on or
  ``table.reconcile`` keys / amount / date;
- ``METRIC_NOT_NUMERIC``: ``sum`` or ``mean`` of a text or date column (``min`` and
  ``max`` order text as text, e.g. codes and ISO dates, so they are allowed);
- ``COMPARE_TYPE_MISMATCH``: a ``table.filter`` condition ordering (``>`` ``>=`` ``<``
  ``<=``) a text or date column against a number, or a number column against text that
  reads as no number (``"50000"`` and ``"¥50,000"`` compare as numbers).

Where a schema comes from:

- a table written in the Plan as a literal list: exactly its columns, typed by its values;
- a reader (``csv.read``, ``excel.read_data``, ``table.read``): the columns its ``types``
  names, with those types; every other column is text when ``csv.read`` has
  ``infer_types: false``; a ``csv.read`` with ``header: false`` and ``columns`` lists
  every column. Never from a reader's declared sample outputs: they show a made-up file,
  not the user's, so their columns would give false errors;
- the table blocks: filter, sort and dedupe keep the schema; select gives the chosen
  (renamed) columns; compute checks the columns its expressions name and adds its columns
  (of a type not known); aggregate gives the group_by columns and one number
  ``{col}_{metric}`` per metric (min/max: the column's type); join adds the right table's
  columns (a clash gets the suffix); reconcile gives what it documents (``右_<列名>``,
  金額差, 日付差_日, 理由).

Anything else — a table from vars, a loop variable, another block's output, a reference
inside an argument — is unknown, and what is unknown is never an error. A node that fails
its dry run passes no schema on, so one mistake is reported once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from keiri_agent.errors import closest_match
from keiri_agent.files.column_types import TYPE_CHOICES, number_value
from keiri_agent.plans.check.dry_run_report import NodeDryRun
from keiri_agent.plans.dsl.models import BlockNode
from keiri_agent.plans.dsl.references import is_whole_reference, parse_reference
from keiri_agent.plans.issues import IssueCode, IssueDetails

ANY = "any"
"""A column whose type the dry run does not know."""
KIND_LABELS = {"text": "文字列", "number": "数値", "date": "日付", "boolean": "真偽値"}
READERS = {"csv.read": "text", "excel.read_data": ANY, "table.read": ANY}
"""Reader blocks, and the type of a column they leave as read (``infer_types: false``)."""
ORDERING = frozenset({">", ">=", "<", "<="})
NUMERIC_METRICS = frozenset({"sum", "mean", "median"})
RIGHT_PREFIX = "右_"  # blocks/table_match.py: table.reconcile's right columns
DEDUPE_COLUMNS = {"元の行番号": "number", "残した行番号": "number"}
RECONCILE_COLUMNS = {"金額差": "number", "日付差_日": "number"}

Lookup = Callable[[str, str], "TableSchema | None"]
"""The schema of a node's output: (node id, alias) → schema, None when not known."""


@dataclass(frozen=True)
class TableSchema:
    """Columns of a table and their types (``text``, ``number``, ``date``, ``boolean``,
    ``any``). ``closed``: no other column exists; otherwise a column not listed may
    exist, of type ``other``."""

    columns: Mapping[str, str]
    closed: bool
    other: str = ANY

    def kind(self, column: str) -> str | None:
        """The column's type; None when a closed schema lacks it."""
        if column in self.columns:
            return self.columns[column]
        return None if self.closed else self.other

    def lacks(self, column: str) -> bool:
        return self.closed and column not in self.columns

    def names(self) -> list[str]:
        return list(self.columns)


def literal_schema(value: Any) -> TableSchema | None:
    """The schema of a table written in the Plan (None for anything else, or no rows)."""
    if not isinstance(value, list) or not value or not all(isinstance(r, Mapping) for r in value):
        return None
    kinds: dict[str, set[str]] = {}
    for row in value:
        for key, cell in row.items():
            found = kinds.setdefault(str(key), set())
            if cell is not None:
                found.add(_literal_kind(cell))
    return TableSchema(
        {name: next(iter(found)) if len(found) == 1 else ANY for name, found in kinds.items()},
        closed=True,
    )


def table_step(
    node: BlockNode, block_id: str, record: NodeDryRun, lookup: Lookup
) -> dict[str, TableSchema]:
    """Check one block node against the schemas of its input tables; the schemas of its
    output tables by alias (none when the node failed its dry run)."""
    step = _Step(node, record, lookup)
    rule = _RULES.get(block_id)
    outputs = rule(step) if rule is not None else {}
    if record.status == "failed":
        return {}
    aliases = dict(node.outputs) or {port: port for port in outputs}
    return {
        aliases[port]: schema
        for port, schema in outputs.items()
        if schema is not None and port in aliases
    }


class _Step:
    """One node: its literal inputs, its input tables' schemas, the problems it records."""

    def __init__(self, node: BlockNode, record: NodeDryRun, lookup: Lookup) -> None:
        self.node = node
        self.record = record
        self.lookup = lookup
        self.where = f"「{node.title}」（{node.id}）" if node.title else node.id

    def get(self, name: str) -> Any:
        return self.node.inputs.get(name)

    def table(self, name: str) -> TableSchema | None:
        """The schema of the table given to input ``name``, None when not known."""
        value = self.get(name)
        if isinstance(value, list):
            return literal_schema(value)
        if not is_whole_reference(value):
            return None
        reference = parse_reference(value)
        if len(reference.path) != 1:
            return None
        return self.lookup(reference.root, str(reference.path[0]))

    def column(self, schema: TableSchema | None, name: Any, input_name: str, path: str) -> None:
        """UNKNOWN_COLUMN when ``schema`` is known, closed and lacks the literal ``name``."""
        if schema is None or literal_text(name) is None or not schema.lacks(name):
            return
        choices = schema.names()
        # after table.aggregate, 金額 is 金額_sum: the closest match by spelling misses it
        closest = closest_match(name, choices) or next(
            (choice for choice in choices if choice.startswith(f"{name}_")), None
        )
        guess = f"{closest!r} のことですか？" if closest else ""
        shown = ", ".join(choices[:40]) + (", ..." if len(choices) > 40 else "")
        self.record.fail(
            IssueCode.UNKNOWN_COLUMN,
            f"ノード {self.where} の {path}: 列 {name!r} は入力の表にありません。"
            f"{guess}（表の列: {shown}）",
            f"in.{path}",
            f"{closest!r} ではありませんか？"
            if closest
            else "前のノードが出す表の列名を確かめてください（details.choices）",
            self._details(input_name, path, name, None, None, choices, closest),
        )

    def columns(self, schema: TableSchema | None, input_name: str) -> None:
        """UNKNOWN_COLUMN for each literal name of a list input (or one name)."""
        for suffix, name in literal_names(self.get(input_name)):
            self.column(schema, name, input_name, f"{input_name}{suffix}")

    def fail_type(
        self,
        code: IssueCode,
        message: str,
        hint: str,
        input_name: str,
        path: str,
        column: str,
        schema: TableSchema,
        expected: str,
    ) -> None:
        kind = schema.kind(column)
        self.record.fail(
            code,
            f"ノード {self.where} の {path}: {message}",
            f"in.{path}",
            hint,
            self._details(
                input_name, path, column, kind, expected, schema.names() if schema.closed else None
            ),
        )

    def _details(
        self,
        input_name: str,
        path: str,
        column: str,
        actual: str | None,
        expected: str | None,
        choices: list[str] | None,
        closest: str | None = None,
    ) -> IssueDetails:
        return IssueDetails(
            node=self.node.id,
            path=f"in.{path}",
            name=column,
            choices=tuple(choices) if choices is not None else None,
            closest=closest,
            expected=expected,
            actual=actual,
            input=input_name,
        )


# --- literal arguments ------------------------------------------------------------------


def literal_text(value: Any) -> str | None:
    """``value`` when it is text written in the Plan (no reference), else None."""
    return value if isinstance(value, str) and "${" not in value else None


def literal_names(value: Any) -> Iterator[tuple[str, str]]:
    """(path suffix, name) of each literal name in a name or a list of names."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if literal_text(item) is not None:
                yield f"[{index}]", item
    elif literal_text(value) is not None:
        yield "", value


def all_names(value: Any) -> list[str] | None:
    """Every name of a name or list of names, None when one is not literal."""
    items = value if isinstance(value, list) else [value]
    names = [literal_text(item) for item in items]
    return None if any(name is None for name in names) else [str(n) for n in names]


def _literal_kind(cell: Any) -> str:
    if isinstance(cell, bool):
        return "boolean"
    if isinstance(cell, int | float):
        return "number"
    if isinstance(cell, str):
        return ANY if "${" in cell else "text"
    return ANY


def _kind_label(kind: str | None) -> str:
    return KIND_LABELS.get(kind or ANY, "型の分からない")


# --- readers ----------------------------------------------------------------------------


def _reader(step: _Step, *, block_id: str) -> dict[str, TableSchema | None]:
    types = step.get("types")
    infer = step.get("infer_types")
    if types is not None and not (
        isinstance(types, Mapping)
        and all(literal_text(k) is not None and v in TYPE_CHOICES for k, v in types.items())
    ):
        return {}
    declared = {str(k): ANY if v == "auto" else v for k, v in (types or {}).items()}
    other = READERS[block_id] if infer is False else ANY
    names = all_names(step.get("columns")) if step.get("columns") is not None else None
    if block_id == "csv.read" and step.get("header") is False and names:
        return {"records": TableSchema({n: declared.get(n, other) for n in names}, closed=True)}
    if not declared and other == ANY:
        return {}
    return {"records": TableSchema(declared, closed=False, other=other)}


# --- table blocks -----------------------------------------------------------------------


def _filter(step: _Step) -> dict[str, TableSchema | None]:
    schema = step.table("records")
    conditions = step.get("conditions")
    if not isinstance(conditions, list):
        return {"records": schema}
    for index, condition in enumerate(conditions):
        if not isinstance(condition, Mapping):
            continue
        path = f"conditions[{index}]"
        column = literal_text(condition.get("col"))
        step.column(schema, column, "conditions", f"{path}.col")
        if schema is None or column is None or condition.get("op") not in ORDERING:
            continue
        _compare(step, schema, column, condition.get("value"), path)
    return {"records": schema}


def _compare(step: _Step, schema: TableSchema, column: str, value: Any, path: str) -> None:
    kind = schema.kind(column)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind in ("text", "date") and is_number:
        step.fail_type(
            IssueCode.COMPARE_TYPE_MISMATCH,
            f"列 {column!r} は{_kind_label(kind)}の列なので、数値 {value} と大小を比べられません"
            "（実行すると失敗します）",
            "数値の列として読むなら読み込みの types でその列を number にしてください"
            "（日付は '2025-04-01' の形の文字列と比べます）",
            "conditions",
            path,
            column,
            schema,
            "number",
        )
    elif kind == "number" and literal_text(value) is not None and number_value(value) is None:
        step.fail_type(
            IssueCode.COMPARE_TYPE_MISMATCH,
            f"列 {column!r} は数値の列なので、文字列 {value!r} と大小を比べられません"
            "（実行すると失敗します）",
            "value を数値（例: 50000）にしてください",
            "conditions",
            path,
            column,
            schema,
            "text",
        )


def _same(step: _Step) -> dict[str, TableSchema | None]:
    """table.sort: the rows reordered."""
    schema = step.table("records")
    step.columns(schema, "by")
    return {"records": schema}


def _dedupe(step: _Step) -> dict[str, TableSchema | None]:
    schema = step.table("records")
    step.columns(schema, "keys")
    duplicates = None
    if schema is not None:
        duplicates = TableSchema({**schema.columns, **DEDUPE_COLUMNS}, schema.closed, schema.other)
    return {"records": schema, "duplicates": duplicates}


def _select(step: _Step) -> dict[str, TableSchema | None]:
    schema = step.table("records")
    step.columns(schema, "columns")
    rename = step.get("rename")
    renames: dict[str, str] = {}
    if isinstance(rename, Mapping):
        for old, new in rename.items():
            step.column(schema, old, "rename", f"rename.{old}")
            renames[str(old)] = str(new)
    if rename is not None and not (
        isinstance(rename, Mapping)
        and all(literal_text(k) and literal_text(v) for k, v in rename.items())
    ):
        return {}
    chosen = step.get("columns")
    if chosen is not None:
        names = all_names(chosen)
        if names is None:
            return {}
        kinds = {renames.get(n, n): (schema.kind(n) or ANY) if schema else ANY for n in names}
        return {"records": TableSchema(kinds, closed=True)}
    if schema is None:
        return {}
    kinds = {renames.get(name, name): kind for name, kind in schema.columns.items()}
    return {"records": TableSchema(kinds, schema.closed, schema.other)}


def _compute(step: _Step) -> dict[str, TableSchema | None]:
    """table.compute: each expression's columns must be in the table (or made by an earlier
    expression: they apply in order); the new columns are added."""
    # the block's own parser, loaded only when a Plan computes (plans import no block)
    from keiri_agent.blocks.expressions import ExpressionSyntaxError, parse_expression

    schema = step.table("records")
    columns = step.get("columns")
    if schema is None or not isinstance(columns, Mapping):
        return {}
    known = dict(schema.columns)
    for name, source in columns.items():
        if isinstance(source, str):
            try:
                referenced = parse_expression(source).columns
            except ExpressionSyntaxError:
                referenced = ()  # the block names the syntax error itself
            current = TableSchema(dict(known), schema.closed, schema.other)
            for column in referenced:
                step.column(current, column, "columns", f"columns.{name}")
        known[str(name)] = ANY
    return {"records": TableSchema(known, schema.closed, schema.other)}


def _aggregate(step: _Step) -> dict[str, TableSchema | None]:
    schema = step.table("records")
    step.columns(schema, "group_by")
    metrics = step.get("metrics")
    if not isinstance(metrics, Mapping):
        return {}
    result: dict[str, str] = {}
    known = True
    for column, aggs in metrics.items():
        path = f"metrics.{column}"
        step.column(schema, column, "metrics", path)
        names = all_names(aggs)
        if names is None or literal_text(column) is None:
            known = False
            continue
        kind = schema.kind(column) if schema is not None else ANY
        for agg in names:
            if agg in NUMERIC_METRICS and schema is not None and kind in ("text", "date"):
                step.fail_type(
                    IssueCode.METRIC_NOT_NUMERIC,
                    f"列 {column!r} は{_kind_label(kind)}の列なので {agg} で集計できません"
                    "（sum・mean・median は数値の列だけ。実行すると失敗します）",
                    "数値として読むなら読み込みの types でその列を number にするか、"
                    "count・nunique・min・max で集計してください",
                    "metrics",
                    path,
                    column,
                    schema,
                    "number",
                )
            result[f"{column}_{agg}"] = (kind or ANY) if agg in ("min", "max") else "number"
    group_by = all_names(step.get("group_by") or [])
    if group_by is None or not known:
        return {}
    groups = {name: (schema.kind(name) or ANY) if schema else ANY for name in group_by}
    return {"records": TableSchema({**groups, **result}, closed=True)}


def _key_pairs(value: Any, name: str) -> Iterator[tuple[str, str, Any, Any]]:
    """(left path, right path, left name, right name) of ``on`` / ``keys``: names, or
    ``{left, right}`` pairs."""
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        path = f"{name}[{index}]" if isinstance(value, list) else name
        if isinstance(item, Mapping):
            yield f"{path}.left", f"{path}.right", item.get("left"), item.get("right")
        else:
            yield path, path, item, item


def _check_keys(
    step: _Step, name: str, left: TableSchema | None, right: TableSchema | None
) -> list[str] | None:
    """UNKNOWN_COLUMN for the keys; the right key names (None when one is not literal)."""
    right_keys: list[str] | None = []
    for left_path, right_path, left_name, right_name in _key_pairs(step.get(name), name):
        step.column(left, left_name, name, left_path)
        step.column(right, right_name, name, right_path)
        right_key = literal_text(right_name)
        right_keys = None if right_keys is None or right_key is None else [*right_keys, right_key]
    return right_keys


def _join(step: _Step) -> dict[str, TableSchema | None]:
    left, right = step.table("left"), step.table("right")
    right_keys = _check_keys(step, "on", left, right)
    suffix = step.get("suffix") or "_right"
    if left is None or right_keys is None or literal_text(suffix) is None:
        return {}
    if not left.closed:
        return {"records": TableSchema(left.columns, closed=False)}
    added: dict[str, str] = {}
    if right is not None:
        for name, kind in right.columns.items():
            if name not in right_keys:
                added[f"{name}{suffix}" if name in left.columns else name] = kind
    closed = right is not None and right.closed
    return {"records": TableSchema({**left.columns, **added}, closed=closed)}


def _reconcile(step: _Step) -> dict[str, TableSchema | None]:
    left, right = step.table("left"), step.table("right")
    _check_keys(step, "keys", left, right)
    for name in ("amount", "date"):
        given = step.get(name)
        if isinstance(given, Mapping):
            step.column(left, given.get("left"), name, f"{name}.left")
            step.column(right, given.get("right"), name, f"{name}.right")
    outputs: dict[str, TableSchema | None] = {"unmatched_left": left, "unmatched_right": right}
    if left is not None and right is not None:
        prefixed = {f"{RIGHT_PREFIX}{n}": kind for n, kind in right.columns.items()}
        matched = {**left.columns, **prefixed, **RECONCILE_COLUMNS}
        closed = left.closed and right.closed
        outputs["matched"] = TableSchema(matched, closed=closed)
        outputs["differences"] = TableSchema({**matched, "理由": "text"}, closed=closed)
    return outputs


_RULES: dict[str, Callable[[_Step], dict[str, TableSchema | None]]] = {
    **{block_id: partial(_reader, block_id=block_id) for block_id in READERS},
    "table.filter": _filter,
    "table.sort": _same,
    "table.dedupe": _dedupe,
    "table.select": _select,
    "table.compute": _compute,
    "table.aggregate": _aggregate,
    "table.join": _join,
    "table.reconcile": _reconcile,
}
"""How each table block checks its inputs and what tables it gives (by output port)."""
