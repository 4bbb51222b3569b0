"""Validator rules for loop nodes and exports (seed 002 §5.2).

foreach: the input must be a list (or a reference to one); the item and index
variables are visible in the body only and must not hide a node, a reserved root
or an outer loop variable (LOOP_VAR_CONFLICT). while: the body and the condition
see the body's export names as variables (the runner passes the previous
iteration's exports, null before the first), so an export name must not clash with
a node id, a reserved root or an outer loop variable either (LOOP_VAR_CONFLICT; at
run time body node ids and reserved roots win over the export). Exports
(``{from: node.alias, as: name}``) must name a node of the same graph and one of
its aliases.
"""

from __future__ import annotations

from collections.abc import Sequence

import keiri_agent.plans.check.rules as rules
from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog.port_types import (
    INTEGER,
    compatible,
    describe_types,
    literal_schema,
    schema_types,
    sub_schema,
)
from keiri_agent.plans.check.context import Locals, NodeInfo, ReferenceWalker, Schema
from keiri_agent.plans.dsl.models import RESERVED_ROOTS, Export, LoopNode
from keiri_agent.plans.dsl.references import is_whole_reference, parse_reference
from keiri_agent.plans.dsl.scope import foreach_variables, while_variables
from keiri_agent.plans.issues import IssueCode

WHILE_POSITION = ""
"""The position of a while condition inside its loop (not a node id: ids are never empty)."""


def check_exports(
    refs: ReferenceWalker,
    exports: Sequence[Export],
    loops: tuple[str, ...],
    path: str,
    code: IssueCode,
) -> None:
    """``{from: node.alias, as: name}`` of a plan or a loop body."""
    names: set[str] = set()
    graph_ids = refs.check.graphs.get(loops, [])
    owner = loops[-1] if loops else None
    for index, export in enumerate(exports):
        where = f"{path}[{index}]"
        if export.name in names:
            refs.check.add(
                IssueCode.DUPLICATE_ALIAS,
                f"export {export.name!r} が 2 回定義されています",
                node_id=owner,
                path=f"{where}.as",
                hint="export ごとに別の名前 (as) を付けてください",
                name=export.name,
            )
        names.add(export.name)
        try:
            reference = parse_reference(export.source)
        except UserInputError as error:
            refs.check.add(
                code,
                f"export の from {export.source!r}: {error.message}",
                node_id=owner,
                path=f"{where}.from",
                hint="from には「ノード id.出力の別名」の形で書いてください",
            )
            continue
        info = refs.infos.get(reference.root)
        if info is None or reference.root not in graph_ids:
            where_text = "このループの中身 (body)" if loops else "Plan のいちばん外側の graph"
            rules.unknown(
                refs.check.add,
                code,
                f"{where_text} のノード",
                reference.root,
                graph_ids,
                node_id=owner,
                path=f"{where}.from",
                hint=(
                    "exports には同じ graph にあるノードの「ノード id.出力の別名」を書いてください"
                ),
            )
            continue
        refs.use(info, reference, owner, f"{where}.from", code)


def check_loop(refs: ReferenceWalker, info: NodeInfo, node: LoopNode, scope: Locals) -> None:
    """foreach input and loop variables, the body, the while condition, the exports."""
    body_scope: dict[str, Schema] = dict(scope)
    if node.foreach is not None:
        path = f"{info.path}.foreach.input"
        value = node.foreach.input
        result = refs.field(info.chain, node.id, path, value, scope)
        item: Schema = None
        if result is not None and result[0] and is_whole_reference(value):
            source = result[1][0]
            if not compatible(schema_types(source), frozenset({"array"})):
                actual = describe_types(schema_types(source))
                refs.check.add(
                    IssueCode.TYPE_INCOMPATIBLE,
                    f"foreach.input の {value} は {actual} 型で、リストではありません",
                    node_id=node.id,
                    path=path,
                    hint="foreach.input にはリスト (array) を出す出力を参照してください",
                    expected="array",
                    actual=actual,
                )
            item = sub_schema(source, (0,), None)
        elif result is not None and not result[0]:
            if not isinstance(value, list):
                refs.check.add(
                    IssueCode.INPUT_TYPE_MISMATCH,
                    "foreach.input はリストか、リストを指す参照にしてください",
                    node_id=node.id,
                    path=path,
                    hint="例: foreach.input: ${ノード id.出力の別名} または [a, b, c]",
                    expected="array",
                    actual=rules.value_type(value),
                )
            elif value:
                item = literal_schema(value[0])
        names = [(node.foreach.item_var, f"{info.path}.foreach.itemVar")]
        if node.foreach.index_var:
            names.append((node.foreach.index_var, f"{info.path}.foreach.indexVar"))
        seen: set[str] = set()
        for name, where in names:
            clash = _var_clash(refs, name, scope, seen)
            if clash:
                refs.check.add(
                    IssueCode.LOOP_VAR_CONFLICT,
                    f"ループ変数 {name!r} は{clash}",
                    node_id=node.id,
                    path=where,
                    name=name,
                    hint="ループ変数の名前を変えてください",
                )
            seen.add(name)
        body_scope.update(foreach_variables(node, item, INTEGER))
    if node.while_ is not None:
        _while_exports(refs, info, node, scope, body_scope)
    refs.check_graph(node.body.plan.graph, info.chain, body_scope)
    if node.while_ is not None:
        # Evaluated before each iteration, with the previous iteration's exports as
        # variables and the body nodes visible (null before the first iteration).
        refs.condition(
            (*info.chain, WHILE_POSITION),
            node.id,
            f"{info.path}.while.condition",
            node.while_.condition,
            body_scope,
        )
    check_exports(
        refs,
        node.body.plan.exports,
        info.chain,
        f"{info.path}.body.plan.exports",
        IssueCode.LOOP_EXPORT_UNKNOWN,
    )


def _while_exports(
    refs: ReferenceWalker,
    info: NodeInfo,
    node: LoopNode,
    scope: Locals,
    body_scope: dict[str, Schema],
) -> None:
    """A while body's export names: variables of the body and the condition.

    Adds them to ``body_scope`` by the scope rules (a body node id or a reserved root
    wins over an export of the same name) and reports every clash.
    """
    for index, export in enumerate(node.body.plan.exports):
        clash = _var_clash(refs, export.name, scope, set())
        if clash:
            refs.check.add(
                IssueCode.LOOP_VAR_CONFLICT,
                f"while ループの export {export.name!r} は{clash}（中身 (body) と while の"
                "条件からは、前の回の exports が名前で見えます）",
                node_id=node.id,
                path=f"{info.path}.body.plan.exports[{index}].as",
                name=export.name,
                hint="export の名前 (as) を変えてください",
            )
    exports = {export.name: refs.export_schema(export) for export in node.body.plan.exports}
    body_scope.update(while_variables(node, exports))


def _var_clash(refs: ReferenceWalker, name: str, scope: Locals, seen: set[str]) -> str | None:
    if name in RESERVED_ROOTS:
        return "予約された名前です"
    if name in refs.infos:
        return f"ノード {name!r} と同じ名前で、ノードを隠してしまいます"
    if name in scope:
        return "外側のループの変数と同じ名前で、それを隠してしまいます"
    if name in seen:
        return "要素 (itemVar) と番号 (indexVar) の両方に使われています"
    return None
