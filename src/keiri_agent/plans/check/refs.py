"""Reference checks of the validator: scopes, edges, usage and port types.

Every ``${...}`` in a node's ``in``, ``when``, ``foreach.input``, ``call.inputs``,
a ``while`` condition, ``vars`` and ``exports`` is parsed once and checked against
what is visible from where it is written (see ``plans.dsl.dependencies`` for the rules). A
reference to a node of the same graph, or of an enclosing graph, becomes a
dependency edge of the graph that holds the referenced node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import keiri_agent.plans.check.rules as rules
from keiri_agent.config import env_name
from keiri_agent.errors import UserInputError, closest_match
from keiri_agent.plans.catalog.catalog import CatalogError
from keiri_agent.plans.catalog.port_types import (
    INTEGER,
    compatible,
    describe_types,
    literal_schema,
    schema_types,
    sub_schema,
)
from keiri_agent.plans.check.context import CheckContext, Locals, NodeInfo, Schema
from keiri_agent.plans.check.loops import WHILE_POSITION, check_loop
from keiri_agent.plans.dsl.conditions import ConditionSyntaxError, parse_when
from keiri_agent.plans.dsl.models import (
    RESERVED_ROOTS,
    BlockNode,
    Condition,
    ConditionExpr,
    Export,
    LoopNode,
    Node,
    SubflowNode,
)
from keiri_agent.plans.dsl.references import (
    Reference,
    ReferenceError_,
    Scope,
    find_references,
    is_whole_reference,
    parse_reference,
)
from keiri_agent.plans.dsl.scope import can_see
from keiri_agent.plans.issues import IssueCode

PLAN_ENV_ALLOW = env_name("plan_env_allow")
"""The setting naming what ``${env.*}`` may read (``KEIRI_AGENT_PLAN_ENV_ALLOW``)."""
CONFIG_FILE = f"ワークスペース（{env_name('home')} のフォルダ）の config.yaml"
"""Where ``${config.*}`` values come from, for messages."""


class ReferenceChecker:
    """Checks references for one plan; collects ``edges`` and what is used."""

    def __init__(self, check: CheckContext) -> None:
        self.check = check
        self.infos = check.infos
        self.env = check.run_state.env
        self.env_allow = check.run_state.env_allow
        self.config = check.run_state.config
        self.edges: dict[tuple[str, ...], dict[str, set[str]]] = {}
        self.used_nodes: set[str] = set()
        self.used_aliases: set[tuple[str, str]] = set()
        self.loop_vars: dict[str, str] = {}
        self._alias_schemas: dict[tuple[str, str], Schema] = {}
        self._path_schemas: dict[tuple[str, tuple[str | int, ...]], Schema] = {}
        for info in self.infos.values():
            node = info.node
            if isinstance(node, LoopNode) and node.foreach is not None:
                for name in (node.foreach.item_var, node.foreach.index_var):
                    if name:
                        self.loop_vars.setdefault(name, node.id)

    # --- walking -------------------------------------------------------------------

    def check_vars(self) -> None:
        """``vars`` may reference env, config and other vars (not nodes or loop vars),
        but not in a cycle (``VAR_CYCLE``)."""
        uses: dict[str, list[str]] = {}
        for key, value in self.check.plan.vars.items():
            found = self._find(value, f"vars.{key}", None)
            for path, reference in found or []:
                if reference.root in {"env", "config", "vars"}:
                    self.reference(reference, (), None, path, {})
                    if reference.root == "vars" and reference.path:
                        uses.setdefault(key, []).append(str(reference.path[0]))
                else:
                    self._unknown(
                        f"vars の中の {reference} は使えません。vars で参照できるのは "
                        "${env.*}、${config.*} とほかの ${vars.*} だけです",
                        None,
                        path,
                        name=reference.root,
                        choices=("env", "config", "vars"),
                    )
        cycle = _var_cycle(uses)
        if cycle:
            self.check.add(
                IssueCode.VAR_CYCLE,
                "vars がお互いを参照して循環しています: " + " → ".join(cycle),
                path=f"vars.{cycle[0]}",
                hint="この中のどれか一つの vars を、参照を使わない値にしてください",
            )

    def check_graph(self, graph: Sequence[Node], loops: tuple[str, ...], scope: Locals) -> None:
        """Check every node of a graph (recursing into loop bodies)."""
        for node in graph:
            info = self.infos.get(node.id)
            if info is None or info.node is not node:
                continue  # a duplicate id, already reported
            if isinstance(node, BlockNode):
                for key, value in node.inputs.items():
                    self._input(info, key, value, scope)
            elif isinstance(node, SubflowNode):
                for key, value in node.call.inputs.items():
                    self.field(info.chain, node.id, f"{info.path}.call.inputs.{key}", value, scope)
            elif isinstance(node, LoopNode):
                check_loop(self, info, node, scope)
            if node.when is not None:
                self.condition(info.chain, node.id, f"{info.path}.when", node.when, scope)

    # --- one reference ------------------------------------------------------------------

    def reference(
        self, ref: Reference, chain: tuple[str, ...], node_id: str | None, path: str, scope: Locals
    ) -> Schema:
        """Check one reference made at ``chain``; the schema of its value when knowable."""
        root = ref.root
        if root in scope:
            return sub_schema(scope[root], ref.path, None)
        if root == "vars":
            return self._var(ref, node_id, path)
        if root == "env":
            if len(ref.path) != 1 or not isinstance(ref.path[0], str):
                self._unknown(
                    f"{ref}: 環境変数を一つだけ指定してください（例: ${{env.NAME}}）",
                    node_id,
                    path,
                    name=ref.text,
                )
            elif self.env_allow is not None and ref.path[0] not in self.env_allow:
                self.check.add(
                    IssueCode.ENV_NOT_ALLOWED,
                    f"環境変数 {ref.path[0]!r}（{ref}）は Plan から読めません（許可リスト "
                    f"{PLAN_ENV_ALLOW} にないか、API キーなど設定済みの秘密を持つ変数です）",
                    node_id=node_id,
                    path=path,
                    hint=f"読ませてよい変数なら設定 {PLAN_ENV_ALLOW}={ref.path[0]} に加えて"
                    "ください（カンマ区切り、docs/plans.md「環境変数」）。API キーなどの秘密は"
                    "加えないでください",
                    name=ref.path[0],
                )
            elif ref.path[0] not in self.env:
                self.check.add(
                    IssueCode.ENV_NOT_SET,
                    f"環境変数 {ref.path[0]!r}（{ref}）がいま設定されていません",
                    node_id=node_id,
                    path=path,
                    hint="Plan を実行する前にこの環境変数を設定してください",
                    severity="warning",
                )
            return {"type": "string"} if len(ref.path) == 1 else None
        if root == "config":
            self._config(ref, node_id, path)
            return None
        if root in RESERVED_ROOTS:
            self._unknown(
                f"{ref}: {root!r} は予約された名前で、値を持ちません",
                node_id,
                path,
                name=root,
                choices=self._visible(chain, scope),
            )
            return None
        info = self.infos.get(root)
        if info is None and root in self.loop_vars:
            self._unknown(
                f"{ref}: ループ変数 {root!r} はループ {self.loop_vars[root]!r} の中身 (body) "
                "の中でしか使えません",
                node_id,
                path,
                name=root,
                choices=self._visible(chain, scope),
            )
            return None
        if info is None:
            visible = self._visible(chain, scope)
            rules.unknown(
                self.check.add,
                IssueCode.UNKNOWN_REFERENCE,
                "ノードまたは変数",
                root,
                visible,
                node_id=node_id,
                path=path,
                hint="ここから参照できるノードか変数の名前に直してください（details.choices）",
                suffix=f"（{ref} の中）",
            )
            return None
        depth = len(info.chain) - 1
        if not can_see(info.chain, chain):
            self._unknown(
                f"{ref}: ノード {root!r} はループ {info.chain[-2]!r} の中身 (body) にあるので、"
                "ここからは見えません（ループの exports を使ってください）",
                node_id,
                path,
                name=root,
                choices=self._visible(chain, scope),
            )
            return None
        dependent = chain[depth]
        if dependent == root and len(chain) > depth + 1:
            self._unknown(
                f"{ref}: ループ {root!r} の中のノードは、そのループ自身の出力を使えません",
                node_id,
                path,
                name=root,
                choices=self._visible(chain, scope),
            )
            return None
        if dependent != WHILE_POSITION:
            graph = self.edges.setdefault(info.chain[:-1], {})
            graph.setdefault(dependent, set()).add(root)
        return self.use(info, ref, node_id, path, IssueCode.UNKNOWN_REFERENCE)

    def _config(self, ref: Reference, node_id: str | None, path: str) -> None:
        """UNKNOWN_REFERENCE when ``config.yaml`` lacks the path (resolved as the run does)."""
        if self.config is None:
            return
        try:
            Scope(nodes={}, vars={}, env={}, config=self.config, locals={}).lookup(ref)
        except ReferenceError_ as error:
            missing = error.details.get("missing")
            available = [str(key) for key in error.details.get("available") or []]
            hint = (
                f"参照を config.yaml にあるキー（{', '.join(available)}）に直すか、"
                f"{CONFIG_FILE} に書き足してください"
                if available
                else f"{CONFIG_FILE} に書き足すか（無ければ作ってください）、参照を直してください"
            )
            self.check.add(
                IssueCode.UNKNOWN_REFERENCE,
                f"config.yaml にない値を参照しています: {error.message}",
                node_id=node_id,
                path=path,
                hint=hint,
                name=None if missing is None else str(missing),
                choices=available,
                closest=closest_match(str(missing), available) if available else None,
            )

    def _visible(self, chain: tuple[str, ...], scope: Locals) -> list[str]:
        """Every root a reference made at ``chain`` may use: visible nodes, loop
        variables in scope, then ``vars``, ``env`` and ``config``."""
        nodes = [n for n, i in self.infos.items() if can_see(i.chain, chain)]
        return [
            *nodes,
            *(name for name in scope if name not in self.infos),
            "vars",
            "env",
            "config",
        ]

    def use(
        self, info: NodeInfo, ref: Reference, node_id: str | None, path: str, code: IssueCode
    ) -> Schema:
        target = info.node.id
        self.used_nodes.add(target)
        if not ref.path:
            self.used_aliases.update((target, alias) for alias in info.aliases or {})
            return {"type": "object"}
        alias = ref.path[0]
        if info.aliases is None:
            return None
        if not isinstance(alias, str) or alias not in info.aliases:
            declared = list(info.aliases)
            hint = f"{target} の出力の別名は {'、'.join(declared) or '（なし）'} です"
            node = info.node
            if isinstance(node, BlockNode) and alias in node.outputs:
                hint = (
                    f"出力 {alias!r} は別名 {node.outputs[alias]!r} で出ています"
                    "（out を見てください）"
                )
            rules.unknown(
                self.check.add,
                code,
                f"ノード {target!r} の出力",
                str(alias),
                declared,
                node_id=node_id,
                path=path,
                hint=hint,
                suffix=f"（{ref} の中）",
            )
            return None
        self.used_aliases.add((target, alias))
        key = (target, ref.path)
        if key not in self._path_schemas:
            self._path_schemas[key] = sub_schema(self.alias_schema(info, alias), ref.path[1:], None)
        return self._path_schemas[key]

    def alias_schema(self, info: NodeInfo, alias: str) -> Schema:
        """The schema of a node's alias: an output port's, or a list for loop exports."""
        key = (info.node.id, alias)
        if key in self._alias_schemas:
            return self._alias_schemas[key]
        self._alias_schemas[key] = None
        node = info.node
        schema: Schema = None
        if isinstance(node, BlockNode) and info.spec is not None and info.aliases:
            port = info.aliases.get(alias)
            if port is not None:
                schema = self.check.schema(info.spec, "outputs", port, node.id, info.path)
        elif isinstance(node, LoopNode):
            item: Schema = None
            for export in node.body.plan.exports:
                if export.name == alias:
                    item = self.export_schema(export)
            if node.while_ is not None:  # the last iteration's value, and a count
                schema = INTEGER if alias == "iterations" else item
            else:
                schema = {"type": "array", "items": dict(item)} if item else {"type": "array"}
        self._alias_schemas[key] = schema
        return schema

    def export_schema(self, export: Export) -> Schema:
        try:
            reference = parse_reference(export.source)
        except UserInputError:
            return None
        info = self.infos.get(reference.root)
        if info is None or not reference.path or not isinstance(reference.path[0], str):
            return None
        return sub_schema(self.alias_schema(info, reference.path[0]), reference.path[1:], None)

    # --- fields -------------------------------------------------------------------------

    def _find(
        self, value: Any, path: str, node_id: str | None
    ) -> list[tuple[str, Reference]] | None:
        try:
            return list(find_references(value, path))
        except UserInputError as error:
            field = error.details.get("field") if isinstance(error.details, dict) else None
            self.check.add(
                IssueCode.REFERENCE_SYNTAX,
                error.message,
                node_id=node_id,
                path=field or path,
                hint=error.hint,
            )
            return None

    def field(
        self, chain: tuple[str, ...], node_id: str, path: str, value: Any, scope: Locals
    ) -> tuple[list[Reference], list[Schema]] | None:
        found = self._find(value, path, node_id)
        if found is None:
            return None
        refs = [reference for _, reference in found]
        return refs, [self.reference(r, chain, node_id, p, scope) for p, r in found]

    def _input(self, info: NodeInfo, key: str, value: Any, scope: Locals) -> None:
        node_id, path = info.node.id, f"{info.path}.in.{key}"
        result = self.field(info.chain, node_id, path, value, scope)
        spec = info.spec
        if result is None or spec is None or key not in spec.inputs:
            return
        schema = self.check.schema(spec, "inputs", key, node_id, info.path)
        if schema is None:
            return
        refs, sources = result
        target = schema_types(schema)
        if not refs:
            try:
                problems = self.check.validator.ports.problems(spec, "inputs", key, value)
            except CatalogError:  # reported as REF_UNRESOLVED
                return
            if problems:
                what = f"{spec.reference} の入力 {key!r}"
                rules.literal_mismatch(self.check.add, node_id, path, problems, schema, what, value)
            return
        if _whole(value, refs):
            source, what = schema_types(sources[0]), str(refs[0])
        elif isinstance(value, str):
            source, what = frozenset({"string"}), "参照を含む文字列"
        else:
            source = schema_types(literal_schema(value))
            if not compatible(source, target):
                self.check.add(
                    IssueCode.INPUT_TYPE_MISMATCH,
                    f"{spec.reference} の入力 {key!r} には "
                    f"{describe_types(target)} 型が必要ですが、"
                    f"{describe_types(source)} 型が指定されています",
                    node_id=node_id,
                    path=path,
                    expected=describe_types(target),
                    actual=describe_types(source),
                )
            return
        if not compatible(source, target):
            self.check.add(
                IssueCode.TYPE_INCOMPATIBLE,
                f"{what} は {describe_types(source)} 型ですが、{spec.reference} の入力 {key!r} "
                f"には {describe_types(target)} 型が必要です",
                node_id=node_id,
                path=path,
                hint="必要な型の出力を参照するか、ブロックで型を変換してから渡してください",
                expected=describe_types(target),
                actual=describe_types(source),
            )

    def condition(
        self, chain: tuple[str, ...], node_id: str, path: str, condition: Condition, scope: Locals
    ) -> None:
        where = f"{path}.expr" if isinstance(condition, ConditionExpr) else path
        try:
            parsed = parse_when(condition)
        except ConditionSyntaxError as error:
            self.check.add(
                IssueCode.CONDITION_SYNTAX,
                error.message,
                node_id=node_id,
                path=where,
                hint=error.hint,
            )
            return
        except UserInputError as error:
            self.check.add(
                IssueCode.REFERENCE_SYNTAX,
                error.message,
                node_id=node_id,
                path=where,
                hint=error.hint,
            )
            return
        for reference in parsed.references:
            self.reference(reference, chain, node_id, where, scope)

    def _var(self, ref: Reference, node_id: str | None, path: str) -> Schema:
        variables = self.check.plan.vars
        if not ref.path:
            return {"type": "object"}
        name = ref.path[0]
        if not isinstance(name, str) or name not in variables:
            rules.unknown(
                self.check.add,
                IssueCode.UNKNOWN_REFERENCE,
                "変数 (vars)",
                str(name),
                list(variables),
                node_id=node_id,
                path=path,
                hint="vars: の下にこの変数を定義してください",
                suffix=f"（{ref} の中）",
            )
            return None
        return sub_schema(literal_schema(variables[name]), ref.path[1:], None)

    def _unknown(
        self,
        message: str,
        node_id: str | None,
        path: str,
        *,
        name: str,
        choices: Sequence[str] | None = None,
    ) -> None:
        self.check.add(
            IssueCode.UNKNOWN_REFERENCE,
            message,
            node_id=node_id,
            path=path,
            name=name,
            choices=choices,
        )


def _var_cycle(uses: Mapping[str, Sequence[str]]) -> list[str]:
    """One cycle among vars that use each other (["a", "b", "a"]), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for used in uses.get(name, ()):
            if state.get(used) == 1:
                return [*path[path.index(used) :], used]
            if used not in state and (found := visit(used)):
                return found
        path.pop()
        state[name] = 2
        return []

    for name in uses:
        if name not in state and (found := visit(name)):
            return found
    return []


def _whole(value: Any, refs: Sequence[Reference]) -> bool:
    """``is_whole_reference`` without parsing again in the common case."""
    if not isinstance(value, str) or len(refs) != 1:
        return False
    return value == "${" + refs[0].text + "}" or is_whole_reference(value)
