"""The Plan validator (seed 002 §6, seed 003 §9): every issue, never just the first.

``PlanValidator(catalog, store).validate(plan)`` returns a ``ValidationReport``;
``report.raise_for_errors()`` raises ``PlanValidationError`` with all of them.

Rules (one stable code each; errors unless marked *warning*):

Codes are ``IssueCode`` members (docs/plans.md lists each with its ``details``):

* blocks: UNKNOWN_BLOCK, BLOCK_VERSION, UNKNOWN_INPUT, MISSING_REQUIRED_INPUT,
  REQUIRED_INPUT_NULL_VAR (a required input fed by a var without a value, with the
  vars given to ``validate``: ``plans.check.null_vars``), INPUT_TYPE_MISMATCH (a
  literal that fails the port schema), OUTPUT_NOT_DECLARED, DUPLICATE_ALIAS,
  REF_UNRESOLVED (a spec ``$ref`` that does not resolve)
* ids and references: API_VERSION, DUPLICATE_NODE_ID (the whole plan, loop bodies
  included), REFERENCE_SYNTAX, UNKNOWN_REFERENCE (also a ``${config.*}`` path the
  config given to the validator lacks), ENV_NOT_SET (*warning*),
  TYPE_INCOMPATIBLE (an output port type that cannot feed the input port type),
  CONDITION_SYNTAX, CYCLE
* loops: LOOP_EXPORT_UNKNOWN, LOOP_VAR_CONFLICT (an item/index variable that would
  hide a node, a reserved root or an outer loop variable), LOOP_COLLECT_IGNORED
  (*warning*: ``out.collect`` on a while loop); plans: PLAN_EXPORT_UNKNOWN
* subflows: SUBFLOW_NOT_FOUND (also when no store is given), SUBFLOW_PATH,
  SUBFLOW_CYCLE, SUBFLOW_INVALID (the called plan's errors, prefixed with the
  subflow node id), SUBFLOW_INPUT_UNKNOWN, SUBFLOW_EXPORT_UNKNOWN
* UI and policy: LAYOUT_UNKNOWN_NODE, LAYOUT_DUPLICATE_NODE / LAYOUT_MISSING_NODE
  (*warnings*), REQUIREMENTS_DUPLICATE_ID, REQUIREMENTS_TYPE_CONFLICT,
  REQUIREMENTS_UNKNOWN_TYPE, REQUIREMENTS_MISSING_OPTIONS, CONCURRENCY_UNKNOWN_NODE
* LLM (*warning*, only when the validator is told no LLM is configured):
  LLM_NOT_CONFIGURED — a node whose block needs an LLM and that runs (or may run)
  with the Plan's default vars (``plans.check.llm_needs``)
* usage (*warnings*): UNUSED_NODE — nobody references the node, it is not exported,
  and it is not a sink (a block with ``side_effects``, a UI block, a block without
  outputs, a subflow, or a loop whose body holds a sink); UNUSED_OUTPUT — an alias
  written in ``out`` that nobody references, on a node that is used or is a sink.

Scoping (see ``plans.dsl.dependencies``): a node sees its own graph's nodes and, inside loop
bodies, the enclosing graphs' nodes; loop variables only inside their body. What a
node exposes: a block its ``out`` aliases (every output under its own name without
``out``); a foreach loop ``{collect: [...]}`` (nothing without ``collect``); a while
loop its body's exports (last iteration) and ``iterations``; a subflow its
``out.exports`` aliases (every export of the called plan without them). The
loader adds YAML_SYNTAX, YAML_TOO_LARGE, YAML_DUPLICATE_KEY, SCHEMA and
WHILE_MISSING_MAX for Plans read from text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import keiri_agent.plans.check.rules as rules
from keiri_agent.errors import closest_match
from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, CatalogError
from keiri_agent.plans.catalog.port_types import PortSchemas
from keiri_agent.plans.check.context import CheckContext, NodeInfo, ValidationRun
from keiri_agent.plans.check.llm_needs import LLM_HINT, llm_needs, llm_used, llm_warning_text
from keiri_agent.plans.check.loops import check_exports
from keiri_agent.plans.check.null_vars import check_null_vars
from keiri_agent.plans.check.refs import ReferenceChecker
from keiri_agent.plans.check.subflows import check_subflow
from keiri_agent.plans.dsl.dependencies import find_cycles, format_cycle
from keiri_agent.plans.dsl.models import API_VERSIONS, BlockNode, LoopNode, Node, Plan, SubflowNode
from keiri_agent.plans.issues import IssueCode, ValidationIssue, ValidationReport
from keiri_agent.plans.store import PlanStore

__all__ = ["PlanValidator", "ValidationIssue", "ValidationReport"]


class PlanValidator:
    """Checks Plans against a block catalog (and a plan store, for subflows)."""

    def __init__(
        self,
        catalog: BlockCatalog,
        store: PlanStore | None = None,
        *,
        env: Mapping[str, str] | None = None,
        env_allow: Collection[str] | None = None,
        config: Mapping[str, Any] | None = None,
        llm_configured: bool | None = None,
    ) -> None:
        """``env``: the environment ``${env.*}`` will read when the plan runs (ENV_NOT_SET
        warnings name what it lacks); none when not given (``PlanEngine`` passes it).
        ``env_allow``: the names ``${env.*}`` may read (ENV_NOT_ALLOWED for others);
        None: any name (``PlanEngine`` passes ``KEIRI_AGENT_PLAN_ENV_ALLOW``).
        ``config``: what ``${config.*}`` will read (UNKNOWN_REFERENCE for a path it
        lacks); None: not checked (``PlanEngine`` passes ``<home>/config.yaml``).
        ``llm_configured``: False reports LLM_NOT_CONFIGURED for the nodes that need an
        LLM (``PlanEngine`` passes whether its settings have one); None: not checked."""
        self.catalog = catalog
        self.store = store
        self.env: Mapping[str, str] = env if env is not None else {}
        self.env_allow = frozenset(env_allow) if env_allow is not None else None
        self.config = config
        self.llm_configured = llm_configured
        self._specs: dict[str, tuple[BlockSpec | None, str | None]] = {}
        self.ports = PortSchemas()
        self._known_ids: list[str] | None = None

    def validate(self, plan: Plan, *, vars: Mapping[str, Any] | None = None) -> ValidationReport:
        """Every issue of ``plan`` (and of the plans its subflows call). ``vars``: the
        values a run gives the plan's vars (``plan run --var``), checked over the
        declared ones; none for ``plan validate``."""
        run = ValidationRun(
            env=self.env, env_allow=self.env_allow, config=self.config, vars=dict(vars or {})
        )
        return self.validate_called(plan, (plan.id,), run)

    def validate_called(
        self, plan: Plan, stack: tuple[str, ...], run: ValidationRun
    ) -> ValidationReport:
        """Validate ``plan`` as called through ``stack`` (plan ids), sharing ``run``."""
        return ValidationReport(tuple(_PlanCheck(self, plan, stack, run).run()), plan_id=plan.id)

    # --- catalog access, cached -----------------------------------------------------

    def spec_for(self, reference: str) -> tuple[BlockSpec | None, str | None]:
        """(spec, None), or (None, "UNKNOWN_BLOCK" | "BLOCK_VERSION: <message>")."""
        if reference not in self._specs:
            try:
                self._specs[reference] = (self.catalog.resolve(reference), None)
            except CatalogError as error:
                exists = rules.block_id_of(reference) in self.known_block_ids()
                self._specs[reference] = (
                    None,
                    f"BLOCK_VERSION: {error.message}" if exists else IssueCode.UNKNOWN_BLOCK,
                )
        return self._specs[reference]

    def known_block_ids(self) -> list[str]:
        """Every block id of the catalog, sorted (computed once)."""
        if self._known_ids is None:
            self._known_ids = sorted({spec.id for spec in self.catalog.specs()})
        return self._known_ids

    def port_schema(
        self, spec: BlockSpec, section: str, port: str
    ) -> dict[str, Any] | CatalogError:
        """The resolved schema of a port, or the CatalogError that resolving raised."""
        return self.ports.schema(spec, section, port)


class _PlanCheck(CheckContext):
    """The passes over one plan: collect nodes, check nodes, references, graph, usage."""

    def run(self) -> list[ValidationIssue]:
        plan = self.plan
        if plan.api_version not in API_VERSIONS:
            self.add(
                IssueCode.API_VERSION,
                f"apiVersion {plan.api_version!r} には対応していません"
                f"（対応しているのは {', '.join(API_VERSIONS)}）",
                path="apiVersion",
                hint=f"apiVersion を {API_VERSIONS[-1]} にしてください",
                choices=API_VERSIONS,
            )
        self._collect(plan.graph, "", ())
        for info in list(self.infos.values()):
            self._check_node(info)
        references = ReferenceChecker(self)
        references.check_vars()
        references.check_graph(plan.graph, (), {})
        check_exports(references, plan.exports, (), "exports", IssueCode.PLAN_EXPORT_UNKNOWN)
        if len(self.stack) == 1:  # a called plan's vars come from its caller
            check_null_vars(self)
        self._check_cycles(references.edges)
        self._check_usage(references)
        node_ids = list(self.infos)
        ui_nodes = {
            i.node.id: i.chain[:-1] for i in self.infos.values() if i.spec and i.spec.kind == "ui"
        }
        rules.check_layout(self.add, plan, node_ids, ui_nodes)
        rules.check_concurrency(self.add, plan, node_ids)
        rules.check_var_titles(self.add, plan)
        interactive = [
            (info.node, info.path)
            for info in self.infos.values()
            if isinstance(info.node, BlockNode)
            and rules.block_id_of(info.node.block) == rules.INTERACTIVE_INPUT
        ]
        rules.check_requirements(self.add, interactive)
        if self.validator.llm_configured is False:
            self._check_llm()
        return self.issues

    def _check_llm(self) -> None:
        """LLM_NOT_CONFIGURED (*warning*) for each node that would call the missing LLM
        with the Plan's vars (a node whose condition on vars is false is not warned)."""
        for need in llm_used(llm_needs(self.plan, self.validator.catalog), self.plan.vars):
            node_id = need.path.rpartition("/")[2]
            info = self.infos.get(node_id)
            self.add(
                IssueCode.LLM_NOT_CONFIGURED,
                llm_warning_text(need),
                node_id=node_id,
                path=f"{info.path}.block" if info else None,
                hint=LLM_HINT,
                severity="warning",
                name=need.block,
            )

    # --- pass 1: every node, with its spec and aliases ----------------------------------

    def _collect(self, graph: list[Node], prefix: str, loops: tuple[str, ...]) -> None:
        self.graphs[loops] = []
        for index, node in enumerate(graph):
            path = f"{prefix}graph[{index}]"
            if node.id in self.infos:
                self.add(
                    IssueCode.DUPLICATE_NODE_ID,
                    f"ノード id {node.id!r} は {self.infos[node.id].path} ですでに使われています",
                    node_id=node.id,
                    path=f"{path}.id",
                    hint=(
                        "ノード id は Plan 全体"
                        "（ループの中も含む）で重ならないように付け直してください"
                    ),
                    name=node.id,
                )
                continue
            info = NodeInfo(node, path, (*loops, node.id))
            self.infos[node.id] = info
            self.graphs[loops].append(node.id)
            if isinstance(node, LoopNode):
                self._collect(node.body.plan.graph, f"{path}.body.plan.", info.chain)

    def _check_node(self, info: NodeInfo) -> None:
        node = info.node
        if isinstance(node, BlockNode):
            self._check_block(info, node)
        elif isinstance(node, LoopNode):
            self._check_loop(info, node)
        elif isinstance(node, SubflowNode):
            check_subflow(self, info, node)

    def _check_loop(self, info: NodeInfo, node: LoopNode) -> None:
        """Aliases as the runner gives them: foreach -> ``{collect: [...]}`` (nothing
        without collect); while -> every export of the last iteration and ``iterations``."""
        exports = [export.name for export in node.body.plan.exports]
        collect = node.out.collect
        path = f"{info.path}.out.collect"
        if node.while_ is not None:
            info.aliases = {name: name for name in exports} | {"iterations": "iterations"}
            if collect is not None:
                self.add(
                    IssueCode.LOOP_COLLECT_IGNORED,
                    (
                        "while ループが渡すのは最後の回の exports だけなので、"
                        "out.collect は無視されます"
                    ),
                    node_id=node.id,
                    path=path,
                    hint=(
                        f"代わりに ${{{node.id}.<export の名前>}} を参照するか、"
                        "foreach を使ってください"
                    ),
                    severity="warning",
                )
            return
        info.aliases = {collect: collect} if collect else {}
        if collect is not None and collect not in exports:
            self.add(
                IssueCode.LOOP_EXPORT_UNKNOWN,
                f"out.collect の {collect!r} は、ループの中身 (body) が exports していません"
                + (f"（exports: {', '.join(exports)}）" if exports else ""),
                node_id=node.id,
                path=path,
                hint=f"body.plan.exports に {{from: <中のノード>.<別名>, as: {collect}}} を"
                "加えてください",
                name=collect,
                choices=exports,
                closest=closest_match(collect, exports),
            )

    def _check_block(self, info: NodeInfo, node: BlockNode) -> None:
        spec, problem = self.validator.spec_for(node.block)
        if spec is None:
            if problem == IssueCode.UNKNOWN_BLOCK:
                rules.unknown_block(self.add, node, info.path, self.validator.known_block_ids())
            else:
                self.add(
                    IssueCode.BLOCK_VERSION,
                    str(problem).removeprefix("BLOCK_VERSION: "),
                    node_id=node.id,
                    path=f"{info.path}.block",
                    hint=(
                        "使えるバージョンに合う範囲を指定してください"
                        "（details.choices が使えるバージョンです）"
                    ),
                    name=node.block,
                    choices=[
                        str(spec.version)
                        for spec in self.validator.catalog.specs()
                        if spec.id == rules.block_id_of(node.block)
                    ],
                )
            info.aliases = dict((a, p) for p, a in node.outputs.items()) or None
            return
        info.spec = spec
        info.explicit = bool(node.outputs)
        info.aliases = (
            {alias: port for port, alias in node.outputs.items()}
            if node.outputs
            else {port: port for port in spec.outputs}
        )
        info.sink = spec.side_effects or spec.kind == "ui" or not spec.outputs
        rules.check_ports(self.add, node, info.path, spec)
        if (spec.id, spec.version) not in self.run_state.checked_specs:
            self.run_state.checked_specs.add((spec.id, spec.version))
            for section, ports in (("inputs", spec.inputs), ("outputs", spec.outputs)):
                for port in ports:
                    self.schema(spec, section, port, node.id, info.path)

    # --- graph and usage -----------------------------------------------------------

    def _check_cycles(self, edges: Mapping[tuple[str, ...], dict[str, set[str]]]) -> None:
        for loops, ids in self.graphs.items():
            deps = {node_id: edges.get(loops, {}).get(node_id, set()) for node_id in ids}
            for cycle in find_cycles(deps, ids):
                first = self.infos[cycle[0]]
                self.add(
                    IssueCode.CYCLE,
                    f"ノードが循環しています: {format_cycle(cycle)}"
                    "（それぞれが一つ前のノードの出力を使っています）",
                    node_id=cycle[0],
                    path=first.path,
                    hint="この中の参照を一つ消して、循環しないようにしてください",
                )

    def _check_usage(self, references: ReferenceChecker) -> None:
        for info in self.infos.values():
            node_id = info.node.id
            used = node_id in references.used_nodes
            sink = self._is_sink(info)
            if not used and sink is False:
                self.add(
                    IssueCode.UNUSED_NODE,
                    f"ノード {node_id!r} の出力はどこからも使われていません",
                    node_id=node_id,
                    path=info.path,
                    hint=(
                        "出力を参照するか exports に加えてください。"
                        "要らないならノードを消してください"
                    ),
                    severity="warning",
                )
                continue
            if info.explicit and info.aliases and (used or sink):
                for alias in info.aliases:
                    if (node_id, alias) not in references.used_aliases:
                        self.add(
                            IssueCode.UNUSED_OUTPUT,
                            f"ノード {node_id!r} の出力 {alias!r} はどこからも使われていません",
                            node_id=node_id,
                            path=f"{info.path}.out.{info.aliases[alias]}",
                            hint="使わないなら out から消してください",
                            name=alias,
                            severity="warning",
                        )

    def _is_sink(self, info: NodeInfo) -> bool | None:
        node = info.node
        if isinstance(node, LoopNode):
            found = [
                self._is_sink(self.infos[c.id]) for c in node.body.plan.graph if c.id in self.infos
            ]
            return True if any(found) else (None if None in found else False)
        return info.sink
