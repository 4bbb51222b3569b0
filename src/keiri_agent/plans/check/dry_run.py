"""The dry-run engine (seed 002 §7): check I/O wiring on declared samples, no real data.

``dry_run(plan, catalog)`` walks each graph in topological order. A node's inputs
are resolved from literals, ``vars`` and upstream nodes' **sample** outputs; a
block's outputs are its spec's ``dry_run.samples.outputs``, else each output
port's ``examples[0]``, else its ``default``. No block is loaded or run (so
nothing with ``side_effects`` can happen): only declarations are used. Nothing is
made up either — an output without a declared sample makes every input that
needs it fail with DRY_RUN_NO_SAMPLE (no fallback, seed §4).

Problem codes are the validator's ``IssueCode`` (one code per meaning):
DRY_RUN_NO_SAMPLE, UNKNOWN_REFERENCE (also a reference into sample data that lacks
the key), UPSTREAM_FAILED, INPUT_TYPE_MISMATCH (a sample value that fails the port
schema), MISSING_REQUIRED_INPUT, UNKNOWN_INPUT, UNKNOWN_BLOCK, OUTPUT_NOT_DECLARED,
REF_UNRESOLVED, CONDITION_SYNTAX, CONDITION_ERROR, CYCLE, UNKNOWN_VAR,
SUBFLOW_NOT_FOUND, SUBFLOW_INVALID, SUBFLOW_CYCLE, SUBFLOW_INPUT_UNKNOWN; and, where the
plan says what a table's columns are (``table_schemas``), UNKNOWN_COLUMN,
METRIC_NOT_NUMERIC and COMPARE_TYPE_MISMATCH.

``when`` is evaluated on the sample data when it can be and the result recorded;
nodes are checked whatever it says. A foreach body runs once with the first item
of its (sample) list, or the list port's ``items.examples[0]``; a while body runs
once. A subflow is dry-run with its mapped inputs. Every log line is tagged
``dry_run`` (logger ``keiri_agent.plans.check.dry_run``, ``extra={"dry_run": True}``).
"""

from __future__ import annotations

import copy
import logging
from collections import ChainMap
from collections.abc import Mapping, Sequence
from typing import Any, cast

from keiri_agent.errors import PlanValidationError, UserInputError
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.catalog.port_types import PortSchemas
from keiri_agent.plans.check.dry_run_blocks import (
    Outputs,
    check_available,
    item_examples,
    node_label,
    run_block,
    spec_for,
)
from keiri_agent.plans.check.dry_run_report import (
    DryRunProblem,
    DryRunReport,
    NodeDryRun,
    Unavailable,
    Unresolvable,
    summarize,
    value_summary,
)
from keiri_agent.plans.check.table_schemas import Lookup, TableSchema, table_step
from keiri_agent.plans.dsl.conditions import ConditionSyntaxError, parse_when
from keiri_agent.plans.dsl.dependencies import CycleError, dependencies, topological_order
from keiri_agent.plans.dsl.models import (
    BlockNode,
    Condition,
    LoopNode,
    Node,
    Plan,
    SubflowNode,
)
from keiri_agent.plans.dsl.references import (
    Reference,
    Resolver,
    Scope,
    resolve_value,
)
from keiri_agent.plans.dsl.scope import PlanVars, body_node_ids, foreach_variables, while_variables
from keiri_agent.plans.issues import IssueCode
from keiri_agent.plans.store import PlanStore

__all__ = ["DryRunProblem", "DryRunReport", "NodeDryRun", "dry_run", "summarize"]

logger = logging.getLogger("keiri_agent.plans.check.dry_run")
_LOG = {"dry_run": True}


def dry_run(
    plan: Plan,
    catalog: BlockCatalog,
    *,
    store: PlanStore | None = None,
    vars: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> DryRunReport:
    """Dry-run ``plan``; ``vars`` override the plan's vars; ``env`` is what ``${env.*}``
    reads (none when not given: ``PlanEngine`` passes the environment)."""
    engine = _DryRun(catalog, store, env or {}, config or {})
    report = DryRunReport(plan_id=plan.id)
    logger.info("dry run of plan %s started", plan.id, extra={**_LOG, "plan_id": plan.id})
    report.problems, _ = engine.run_plan(plan, vars or {}, "", (plan.id,), report.nodes)
    logger.info(
        "dry run of plan %s: %s",
        plan.id,
        "ok" if report.ok else "failed",
        extra={**_LOG, "plan_id": plan.id, "ok": report.ok},
    )
    return report


class _DryRun:
    def __init__(
        self,
        catalog: BlockCatalog,
        store: PlanStore | None,
        env: Mapping[str, str],
        config: Mapping[str, Any],
    ) -> None:
        self.catalog = catalog
        self.store = store
        self.env = env
        self.config = config
        self.ports = PortSchemas()

    def run_plan(
        self,
        plan: Plan,
        given: Mapping[str, Any],
        prefix: str,
        stack: tuple[str, ...],
        records: list[NodeDryRun],
    ) -> tuple[list[DryRunProblem], dict[str, Any]]:
        """Dry-run one plan into ``records``; returns plan-level problems and its exports."""
        problems = [
            DryRunProblem(
                IssueCode.UNKNOWN_VAR,
                (
                    f"{key!r} はこの Plan の vars にありません"
                    "（vars に定義するか、渡すのをやめてください）"
                ),
                f"vars.{key}",
            )
            for key in given
            if key not in plan.vars
        ]
        # as the runner: declared vars resolved (they may use each other), given ones as is
        plan_vars = PlanVars(plan.vars, given, self.env, self.config)
        variables: dict[str, Any] = {}
        for key in plan_vars:
            try:
                variables[key] = plan_vars[key]
            except UserInputError as error:
                problems.append(
                    DryRunProblem(IssueCode.UNKNOWN_REFERENCE, error.message, f"vars.{key}")
                )
                variables[key] = Unavailable(
                    IssueCode.UNKNOWN_REFERENCE, f"変数 {key!r}: {error.message}"
                )
        outputs: dict[str, Outputs | Unavailable] = {}
        context = _Context(self, plan, variables, outputs, stack)
        problems += context.run_graph(plan.graph, {}, prefix, records)
        exports: dict[str, Any] = {}
        for export in plan.exports:
            try:
                exports[export.name] = context.resolve("${" + export.source + "}", {})
            except Unresolvable as error:
                exports[export.name] = Unavailable(error.code, error.message)
        return problems, exports


class _Context:
    """Values of one plan's dry run: vars and every node's sample outputs."""

    def __init__(
        self,
        engine: _DryRun,
        plan: Plan,
        variables: Mapping[str, Any],
        outputs: dict[str, Outputs | Unavailable],
        stack: tuple[str, ...],
    ) -> None:
        self.engine = engine
        self.plan = plan
        self.variables = variables
        self.outputs = outputs
        self.stack = stack
        self.tables: dict[str, dict[str, TableSchema]] = {}
        """Known table schemas of block nodes' outputs: node id → alias → schema."""

    # --- resolution -------------------------------------------------------------------

    def table_lookup(self, local: Mapping[str, Any]) -> Lookup:
        """The schema a whole reference ``${node.alias}`` names (a loop variable: none)."""

        def lookup(root: str, alias: str) -> TableSchema | None:
            return None if root in local else self.tables.get(root, {}).get(alias)

        return lookup

    def resolver(
        self, local: Mapping[str, Any], unset: Mapping[str, None] | None = None
    ) -> Resolver:
        """Resolve against sample data; ``unset`` node ids resolve to null (a while
        condition before the first iteration)."""
        # Unavailable values are caught by _check_available before Scope.lookup sees them.
        outputs = cast(dict[str, Mapping[str, Any] | None], self.outputs)
        nodes: Mapping[str, Mapping[str, Any] | None] = (
            ChainMap(dict(unset), outputs) if unset else outputs
        )
        scope = Scope(nodes, self.variables, self.engine.env, self.engine.config, local)

        def resolve(reference: Reference) -> Any:
            root, path = reference.root, reference.path
            if root not in local and not (unset and root in unset):
                container: Any = None
                if root == "vars":
                    container = self.variables
                elif root in self.outputs:
                    container = self.outputs[root]
                check_available(container, path, reference)
            try:
                value = scope.lookup(reference)
            except UserInputError as error:
                raise Unresolvable(IssueCode.UNKNOWN_REFERENCE, error.message) from None
            if isinstance(value, Unavailable):
                raise Unresolvable(value.code, f"{reference}: {value.message}")
            return value

        return resolve

    def resolve(self, value: Any, local: Mapping[str, Any]) -> Any:
        """``value`` with references replaced by sample data; Unresolvable when impossible."""
        try:
            return resolve_value(value, self.resolver(local))
        except UserInputError as error:
            raise Unresolvable(IssueCode.UNKNOWN_REFERENCE, error.message) from None

    def condition(
        self,
        record: NodeDryRun,
        condition: Condition,
        path: str,
        local: Mapping[str, Any],
        unset: Mapping[str, None] | None = None,
    ) -> bool | None:
        """Evaluate on sample data; a problem (not a silent False) when it cannot be."""
        try:
            return parse_when(condition).evaluate(self.resolver(local, unset))
        except Unresolvable as error:
            record.fail(error.code, error.message, path)
        except ConditionSyntaxError as error:
            record.fail(IssueCode.CONDITION_SYNTAX, error.message, path, error.hint)
        except UserInputError as error:
            record.fail(IssueCode.CONDITION_ERROR, error.message, path, error.hint)
        return None

    # --- graphs -----------------------------------------------------------------------

    def run_graph(
        self,
        graph: Sequence[Node],
        local: Mapping[str, Any],
        prefix: str,
        records: list[NodeDryRun],
    ) -> list[DryRunProblem]:
        by_id = {node.id: node for node in graph}
        try:
            order = topological_order(dependencies(graph))
        except CycleError as error:
            for node in graph:
                records.append(NodeDryRun(prefix + node.id, node_label(node), status="skipped"))
            return [
                DryRunProblem(
                    IssueCode.CYCLE, error.message, prefix.rstrip("/") or None, error.hint
                )
            ]

        def resolve(value: Any) -> Any:
            return self.resolve(value, local)

        for node_id in order:
            node = by_id[node_id]
            record = NodeDryRun(prefix + node.id, node_label(node))
            records.append(record)
            if isinstance(node, BlockNode):
                spec = spec_for(self.engine.catalog, node.block)
                self.outputs[node.id] = run_block(node, spec, record, resolve, self.engine.ports)
                if spec is not None:
                    lookup = self.table_lookup(local)
                    self.tables[node.id] = table_step(node, spec.id, record, lookup)
            elif isinstance(node, LoopNode):
                self.outputs[node.id] = self._loop(node, record, local, prefix, records)
            else:
                self.outputs[node.id] = self._subflow(node, record, local, prefix, records)
            if node.when is not None:
                record.condition = self.condition(record, node.when, "when", local)
            logger.info(
                "dry run node %s (%s): %s",
                record.node_id,
                record.block,
                record.status,
                extra={**_LOG, "node_id": record.node_id, "status": record.status},
            )
        return []

    def _loop(
        self,
        node: LoopNode,
        record: NodeDryRun,
        local: Mapping[str, Any],
        prefix: str,
        records: list[NodeDryRun],
    ) -> Outputs | Unavailable:
        body_local = dict(local)
        if node.foreach is not None:
            item = self._sample_item(node, record, local)
            if isinstance(item, Unavailable):
                return item
            body_local.update(foreach_variables(node, item, 0))
            record.inputs[node.foreach.item_var] = summarize(item)
        body = node.body.plan
        if node.while_ is not None:
            # the body reads the previous iteration's exports by name, null the first time
            body_local.update(while_variables(node, dict.fromkeys(e.name for e in body.exports)))
        self.run_graph(body.graph, body_local, f"{prefix}{node.id}/", records)
        values: dict[str, Any] = {}
        for export in body.exports:
            try:
                values[export.name] = self.resolve("${" + export.source + "}", body_local)
            except Unresolvable as error:
                record.fail(error.code, error.message, "body.plan.exports")
                values[export.name] = Unavailable(error.code, error.message)
        if node.while_ is not None:
            # The runner checks the condition before every iteration: first with the body's
            # nodes and exports null, then with the previous iteration's values.
            condition, path = node.while_.condition, "while.condition"
            unset = dict.fromkeys(body_node_ids(node))
            if self.condition(record, condition, path + "（1 回目の前）", body_local, unset):
                after = {**body_local, **while_variables(node, values)}
                record.condition = self.condition(record, condition, path, after)
            outputs = {**values, "iterations": 1}
        elif node.out.collect is None:
            outputs = {}
        else:
            collect = node.out.collect
            if collect not in values:
                message = (
                    f"out.collect の {collect!r} はループの中身 (body) の exports にありません"
                )
                record.fail(IssueCode.OUTPUT_NOT_DECLARED, message, "out.collect")
                values[collect] = Unavailable(IssueCode.OUTPUT_NOT_DECLARED, message)
            value = values[collect]
            outputs = {collect: value if isinstance(value, Unavailable) else [value]}
        record.outputs = {alias: value_summary(value) for alias, value in outputs.items()}
        return outputs

    def _sample_item(self, node: LoopNode, record: NodeDryRun, local: Mapping[str, Any]) -> Any:
        assert node.foreach is not None
        source = node.foreach.input
        try:
            items = self.resolve(source, local)
        except Unresolvable as error:
            items = None
            if error.code != IssueCode.DRY_RUN_NO_SAMPLE:
                record.fail(error.code, error.message, "foreach.input")
                return Unavailable(error.code, error.message)
        record.inputs["foreach.input"] = summarize(items)
        if items is not None and not isinstance(items, list):
            message = f"foreach.input が {type(items).__name__} 型で、リストではありません"
            record.fail(IssueCode.INPUT_TYPE_MISMATCH, message, "foreach.input")
            return Unavailable(IssueCode.INPUT_TYPE_MISMATCH, message)
        if items:
            return items[0]
        examples = item_examples(self.plan, self.engine.catalog, source)
        if examples:
            return copy.deepcopy(examples[0])
        message = (
            "試しに使う要素がありません: リストが空（またはサンプルがない）で、出力ポートにも "
            "items.examples がありません（サンプル入力を用意してください）"
        )
        record.fail(IssueCode.DRY_RUN_NO_SAMPLE, message, "foreach.input")
        return Unavailable(IssueCode.DRY_RUN_NO_SAMPLE, message)

    def _subflow(
        self,
        node: SubflowNode,
        record: NodeDryRun,
        local: Mapping[str, Any],
        prefix: str,
        records: list[NodeDryRun],
    ) -> Outputs | Unavailable:
        plan_id = node.call.plan_id
        store = self.engine.store
        failure: tuple[IssueCode, str] | None = None
        called: Plan | None = None
        if store is None:
            failure = (
                IssueCode.SUBFLOW_NOT_FOUND,
                f"サブフロー {plan_id!r} を読み込む Plan の保存場所がありません",
            )
        elif plan_id in self.stack:
            failure = (
                IssueCode.SUBFLOW_CYCLE,
                f"サブフローが循環しています: {' → '.join([*self.stack, plan_id])}",
            )
        else:
            try:
                called = store.load(plan_id)
            except PlanValidationError as error:
                failure = (IssueCode.SUBFLOW_INVALID, error.message)
            except UserInputError as error:
                failure = (IssueCode.SUBFLOW_NOT_FOUND, error.message)
        if called is None:
            code, message = failure or (IssueCode.SUBFLOW_NOT_FOUND, plan_id)
            record.fail(code, message, "call.plan_id")
            return Unavailable(code, message)
        given: dict[str, Any] = {}
        for key, value in node.call.inputs.items():
            if key not in called.vars:
                record.fail(
                    IssueCode.SUBFLOW_INPUT_UNKNOWN,
                    f"{key!r} は Plan {plan_id!r} の vars にありません",
                    f"call.inputs.{key}",
                )
                continue
            try:
                given[key] = self.resolve(value, local)
            except Unresolvable as error:
                record.fail(error.code, error.message, f"call.inputs.{key}")
                given[key] = Unavailable(error.code, error.message)
        record.inputs = {key: value_summary(value) for key, value in given.items()}
        problems, exports = self.engine.run_plan(
            called, given, f"{prefix}{node.id}/", (*self.stack, plan_id), records
        )
        for problem in problems:
            record.fail(
                problem.code, f"サブフロー {plan_id!r} の中: {problem.message}", problem.path
            )
        mapping = {e.source: e.name for e in node.out.exports} or {n: n for n in exports}
        values = {
            alias: exports.get(
                name,
                Unavailable(
                    IssueCode.OUTPUT_NOT_DECLARED, f"{plan_id} は {name!r} を exports していません"
                ),
            )
            for name, alias in mapping.items()
        }
        record.outputs = {alias: value_summary(value) for alias, value in values.items()}
        return values
