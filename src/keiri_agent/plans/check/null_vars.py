"""REQUIRED_INPUT_NULL_VAR: a required block input whose value is a var without a value.

``vars: {label: null}`` and ``in: {template: "${vars.label}"}`` validate as references,
yet the node cannot run: the dry run fails on the null (INPUT_TYPE_MISMATCH) and so
does the run. This check says so in ``plan validate`` too, so the two agree.

A node input is at fault when, all of these:

* the input is required by the block (``required: true``, no default);
* its whole value is one reference ``${vars.x}`` (or ``${vars.x.…}``), where ``x`` is
  declared and, with the caller's values over the declared ones (``PlanVars``: a var
  may reference another), is null;
* the port's schema refuses null — what makes the dry run fail there. A port
  without a JSON type (file bytes, "型はブロックが検査する") passes the dry run with null
  and is left to the block at run time, as the Design chat leaves such a var open until
  it asks the file when the Plan runs.

Only the plan being checked: a called plan's vars come from its caller's
``call.inputs``. Inputs fed by nodes (``ui.interactive_input`` answers included) are not
vars and never reported. A var that cannot be resolved here (``${env.*}`` unset,
``${config.*}``) is left to the other checks.
"""

from __future__ import annotations

from keiri_agent.errors import KeiriAgentError
from keiri_agent.plans.catalog.catalog import BlockSpec, CatalogError
from keiri_agent.plans.check.context import CheckContext, NodeInfo
from keiri_agent.plans.dsl.models import BlockNode
from keiri_agent.plans.dsl.references import is_whole_reference, parse_reference
from keiri_agent.plans.dsl.scope import PlanVars
from keiri_agent.plans.issues import IssueCode


def check_null_vars(check: CheckContext) -> None:
    """REQUIRED_INPUT_NULL_VAR for each required input fed by a null var (see above)."""
    plan_vars = PlanVars(check.plan.vars, check.run_state.vars, check.run_state.env, {})
    for info in check.infos.values():
        node, spec = info.node, info.spec
        if not isinstance(node, BlockNode) or spec is None:
            continue
        for port in spec.required_inputs():
            var = _var_of(node.inputs.get(port))
            if var is None or not _is_null(plan_vars, var) or _takes_null(check, spec, port):
                continue
            _report(check, info, port, var)


def _var_of(value: object) -> str | None:
    """``x`` when ``value`` is exactly ``${vars.x}`` or ``${vars.x.…}``, else None."""
    if not is_whole_reference(value):
        return None
    assert isinstance(value, str)
    reference = parse_reference(value)
    if reference.root != "vars" or not reference.path:
        return None
    return str(reference.path[0])


def _is_null(plan_vars: PlanVars, name: str) -> bool:
    """Whether the var is known to be null (undeclared or unresolvable: not known)."""
    try:
        return plan_vars[name] is None
    except (KeyError, KeiriAgentError):
        return False


def _takes_null(check: CheckContext, spec: BlockSpec, port: str) -> bool:
    """Whether the port's schema accepts null (an unresolvable schema: assumed so,
    REF_UNRESOLVED reports it)."""
    try:
        return not check.validator.ports.problems(spec, "inputs", port, None)
    except CatalogError:
        return True


def _report(check: CheckContext, info: NodeInfo, port: str, var: str) -> None:
    node = info.node
    where = f"「{node.title}」（{node.id}）" if node.title else node.id
    check.add(
        IssueCode.REQUIRED_INPUT_NULL_VAR,
        f"ノード {where} の必須の入力 {port} に渡す変数 {var} に値がありません（null）。"
        "このままでは実行できません",
        node_id=node.id,
        path=f"{info.path}.in.{port}",
        hint=(
            f"変数 {var} に値を入れてください: 実行するときに --var {var}=<値> で渡すか、"
            "Plan の vars に値を書くか、設計画面の質問に答えてください。"
            "実行のたびに人が入れる値なら、ui.interactive_input の requirements で尋ねてください"
        ),
        name=var,
        input=port,
        var=var,
    )
