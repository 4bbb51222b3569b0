"""Validator rules for subflow nodes (seed 002 §5.3).

The called plan is found through the ``PlanStore`` (``designs/<plan_id>.yaml``),
validated once per ``validate`` call (its errors come back as SUBFLOW_INVALID,
prefixed with the calling node, the called plan's issue in ``details.cause``) and
its ``vars``/``exports`` checked against ``call.inputs``/``out.exports``. A plan
that calls itself, directly or through other subflows, is SUBFLOW_CYCLE.
"""

from __future__ import annotations

import keiri_agent.plans.check.rules as rules
from keiri_agent.errors import PlanValidationError, UserInputError
from keiri_agent.plans.check.context import CheckContext, NodeInfo
from keiri_agent.plans.dsl.dependencies import format_cycle
from keiri_agent.plans.dsl.models import SubflowNode
from keiri_agent.plans.issues import IssueCode, ValidationIssue


def check_subflow(check: CheckContext, info: NodeInfo, node: SubflowNode) -> None:
    """SUBFLOW_* rules; loads and validates the called plan once per validate call."""
    plan_id = node.call.plan_id
    path = f"{info.path}.call.plan_id"
    info.sink = True
    info.aliases = {e.name: e.source for e in node.out.exports} or None
    store = check.validator.store
    if store is None:
        check.add(
            IssueCode.SUBFLOW_NOT_FOUND,
            f"サブフロー {plan_id!r} を確かめられません: Plan の保存場所が渡されていません",
            node_id=node.id,
            path=path,
            hint="Plan の保存場所 (designs フォルダ) を指定して検証してください",
        )
        return
    try:
        store.path_for(plan_id)
    except UserInputError as error:
        check.add(
            IssueCode.SUBFLOW_PATH, error.message, node_id=node.id, path=path, hint=error.hint
        )
        return
    if plan_id in check.stack:
        cycle = format_cycle([*check.stack, plan_id])
        check.add(
            IssueCode.SUBFLOW_CYCLE,
            f"サブフローがお互いを呼び出して循環しています: {cycle}",
            node_id=node.id,
            path=path,
            hint="Plan が自分自身を（直接またはほかのサブフロー経由で）呼ばないようにしてください",
        )
        return
    try:
        called = store.load(plan_id)
    except PlanValidationError as error:
        for issue in error.issues:
            _subflow_issue(check, node, path, plan_id, issue)
        return
    except UserInputError as error:
        check.add(IssueCode.SUBFLOW_NOT_FOUND, error.message, node_id=node.id, path=path)
        return
    info.called = called
    report = check.run_state.subflow_reports.get(plan_id)
    if report is None:
        report = check.validator.validate_called(called, (*check.stack, plan_id), check.run_state)
        check.run_state.subflow_reports[plan_id] = report
    for issue in report.errors:
        _subflow_issue(check, node, path, plan_id, issue)
    for key in node.call.inputs:
        if key not in called.vars:
            rules.unknown(
                check.add,
                IssueCode.SUBFLOW_INPUT_UNKNOWN,
                f"Plan {plan_id!r} の入力 (vars)",
                key,
                list(called.vars),
                node_id=node.id,
                path=f"{info.path}.call.inputs.{key}",
                hint=f"{plan_id} の vars は {'、'.join(called.vars) or '（なし）'} です",
            )
    names = [export.name for export in called.exports]
    for index, export in enumerate(node.out.exports):
        if export.source not in names:
            rules.unknown(
                check.add,
                IssueCode.SUBFLOW_EXPORT_UNKNOWN,
                f"Plan {plan_id!r} の export",
                export.source,
                names,
                node_id=node.id,
                path=f"{info.path}.out.exports[{index}].from",
                hint=f"{plan_id} の exports は {'、'.join(names) or '（なし）'} です",
            )
    if not node.out.exports:
        info.aliases = {name: name for name in names}


def _subflow_issue(
    check: CheckContext, node: SubflowNode, path: str, plan_id: str, issue: ValidationIssue
) -> None:
    """One issue of the called plan as SUBFLOW_INVALID, prefixed with the subflow node;
    the called plan's issue is ``details.cause``."""
    where = " ".join(part for part in (issue.node_id, issue.path) if part)
    check.add(
        IssueCode.SUBFLOW_INVALID,
        f"{node.id} → Plan {plan_id!r}: [{issue.code}] {where + ': ' if where else ''}"
        f"{issue.message}",
        node_id=node.id,
        path=path,
        hint=issue.hint,
        cause=issue,
    )
