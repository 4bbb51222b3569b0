"""Subflow nodes (seed 002 §5.3), run on a worker thread or inline by the scheduler.

The called plan (``plan_loader(plan_id)``) runs as a nested run ``<run_id>.sub#<n>``
with its own variables (its ``vars`` overridden by the resolved ``call.inputs``;
the caller's vars are not visible) and its own policy. Its ``exports`` are mapped
by ``out.exports`` (``from`` export → ``as`` alias; every export under its own
name when ``out.exports`` is empty). A failure inside becomes SUBFLOW_FAILED
carrying the inner error in ``details.error``. The nested run's events go to the
parent's log under the nested run id; its state (plan as loaded, inputs, graph)
is kept in the subflow node's state, so a pause inside resumes there.
"""

from __future__ import annotations

import time
from typing import Any

from keiri_agent.errors import BlockErrorCode, KeiriAgentError
from keiri_agent.plans.dsl.models import Plan, SubflowNode
from keiri_agent.plans.dsl.scope import build_vars
from keiri_agent.plans.run.preflight import check_plan
from keiri_agent.plans.run.run_state import (
    SubflowState,
    plan_from_dict,
    plan_to_dict,
    unsupported_value,
)
from keiri_agent.plans.run.scheduler import Attempt, Frame, GraphRun, Outcome, declared_aliases
from keiri_agent.plans.run.step_support import (
    StepFailure,
    elapsed_ms,
    evaluate_when,
    export_values,
    node_error,
    resolve_inputs,
    wrap_failure,
)

MAX_SUBFLOW_DEPTH = 16


def _subflow_error(
    run: GraphRun, node: SubflowNode, message: str, hint: str | None = None, **details: Any
) -> StepFailure:
    error = node_error(
        run,
        node.id,
        BlockErrorCode.SUBFLOW_FAILED,
        f"サブフロー {node.id!r}（{node.call.plan_id}）: {message}",
        hint=hint,
        plan_id=node.call.plan_id,
        **details,
    )
    return StepFailure(error, retryable=False)


def _load_plan(run: GraphRun, node: SubflowNode) -> Plan:
    loader = run.services.plan_loader
    if loader is None:
        raise _subflow_error(
            run,
            node,
            "呼び出す Plan を読み込む仕組みが設定されていません",
            "Plan ストアから実行してください（keiri-agent plan run）",
        )
    try:
        plan = loader(node.call.plan_id)
        check_plan(plan, run.services.catalog)
    except KeiriAgentError as exc:
        raise _subflow_error(run, node, exc.message, exc.hint, error=exc.to_dict()) from None
    except Exception as exc:
        raise _subflow_error(
            run,
            node,
            f"呼び出す Plan を読み込めません（{type(exc).__name__}: {exc}）",
            "call.plan_id の Plan が保存されていて、正しく読めるか確かめてください",
        ) from None
    return plan


def run_subflow(run: GraphRun, node: SubflowNode, attempt: Attempt) -> Outcome:
    """Run a subflow node as a nested run; never raises."""
    started = time.monotonic()
    services = run.services
    try:
        scope = run.scope(node.id)
        condition = evaluate_when(run, node, scope)
        if condition is not None:
            names = declared_aliases(node, services.catalog)
            return Outcome("skipped", outputs=dict.fromkeys(names), condition=condition)
        run.emit("node_start", node.id, type="subflow", attempt=attempt.retry + 1)
        attempt.started = started
        node_state = run.state.nodes[node.id]
        sub = node_state.subflow
        resumed = sub is not None
        if sub is None:
            if run.frame.run_id.count(".sub#") >= MAX_SUBFLOW_DEPTH:
                raise _subflow_error(
                    run,
                    node,
                    f"サブフローの入れ子が {MAX_SUBFLOW_DEPTH} 段を超えています",
                    "Plan が自分自身を呼び出していないか確かめてください",
                )
            inputs = resolve_inputs(run, node.id, node.call.inputs, scope, "call.inputs")
            found = unsupported_value(inputs)
            if found:
                raise _subflow_error(
                    run,
                    node,
                    f"入力 {found[0]} が {found[1]} で、実行の記録に保存できません",
                    "JSON の値（文字列・数値・リスト・対応）、bytes、日付・時刻、"
                    "Decimal を渡してください",
                )
            plan = _load_plan(run, node)
            sub = SubflowState(
                run_id=services.next_subflow_id(run.frame.run_id),
                plan=plan_to_dict(plan),
                inputs=inputs,
            )
            node_state.subflow = sub
        else:
            plan = plan_from_dict(sub.plan)
        try:
            sub_vars = build_vars(plan.vars, sub.inputs, services.env, services.config)
        except KeiriAgentError as exc:
            raise _subflow_error(run, node, f"vars: {exc.message}", exc.hint) from None
        path = run.frame.path(node.id)
        ids = {"run_id": sub.run_id, "plan_id": plan.id, "node_id": path}
        if resumed:
            services.log.emit("plan_resumed", **ids, mode="resume", parent_run_id=run.frame.run_id)
        else:
            services.log.emit(
                "plan_start",
                **ids,
                plan_version=plan.version,
                vars=sub_vars,
                parent_run_id=run.frame.run_id,
            )
        frame = Frame(
            run_id=sub.run_id,
            plan_id=plan.id,
            policy=plan.policy,
            vars=sub_vars,
            outer={},
            locals={},
            prefix=f"{path}/",
            top_node=run.frame.owner(node.id),
        )
        graph_run = run.nested(frame, plan.graph, sub.graph, attempt.stop)
        status = graph_run.execute()
        event = "plan_paused" if status == "paused" else "plan_complete"
        services.log.emit(event, **ids, status=status, total_duration_ms=elapsed_ms(started))
        if status == "failed":
            error = wrap_failure(
                run,
                node.id,
                graph_run.first_failure,
                f"サブフロー {node.id!r}（{plan.id}）",
                BlockErrorCode.SUBFLOW_FAILED,
                subflow_run_id=sub.run_id,
                plan_id=plan.id,
            )
            return Outcome("failed", error=error, duration_ms=elapsed_ms(started))
        if status != "success":
            return Outcome(status, duration_ms=elapsed_ms(started))
        exports = export_values(
            run, node.id, plan.exports, sub.graph, frame, BlockErrorCode.SUBFLOW_FAILED
        )
        if not node.out.exports:
            return Outcome("success", outputs=exports, duration_ms=elapsed_ms(started))
        outputs: dict[str, Any] = {}
        for mapping in node.out.exports:
            if mapping.source not in exports:
                raise _subflow_error(
                    run,
                    node,
                    f"Plan {plan.id!r} の exports に {mapping.source!r} がありません"
                    f"（exports: {', '.join(exports) or 'なし'}）",
                    "out.exports を呼び出す Plan の exports の名前に直してください",
                    field="out.exports",
                )
            outputs[mapping.name] = exports[mapping.source]
        return Outcome("success", outputs=outputs, duration_ms=elapsed_ms(started))
    except StepFailure as failure:
        return Outcome("failed", error=failure.error, duration_ms=elapsed_ms(started))
