"""The Plan runner (seed 002 §8, §9): run a Plan, pause for human input, resume, re-run.

    runner = PlanRunner(catalog, settings, runs_dir=workspace.runs, plan_loader=store.load)
    result = runner.start(plan, vars={"month": "2025-01"}, on_event=print)
    if result.status == "paused":          # a UI block is waiting for answers
        result = runner.resume(result.run_id, answers={"collect_inputs": {...}})
    if result.status == "failed":          # fix the input, then re-run the failed node
        node_id = result.errors[0]["details"]["node_id"]
        result = runner.rerun_from_node(result.run_id, node_id)

Scheduling is event-driven (``plans.run.scheduler``): a node starts as soon as the
nodes it references have settled, up to ``policy.concurrency.default_max_workers``
at a time. ``when`` false skips a node (its aliases are None). Errors follow
``policy.on_error``: ``halt`` stops scheduling, waits for running nodes and fails
the run; ``continue`` gives the failed node None aliases and carries on (the run
ends ``failed``, listing the errors, once everything ran); ``retry`` re-runs a
failing block up to ``policy.retries`` times, then halts. ``policy.timeout_ms``
bounds each block attempt (TIMEOUT_ERROR); a timed-out attempt is abandoned (its
``ctx.cancel_event`` is set, its late result ignored). Setting ``cancel_event``
cancels the run: no new node starts, running blocks see ``ctx.cancel_event`` and
the run waits for them to return (cooperative blocks return at once; a timeout
bounds the others), then ends ``cancelled``.

A UI block without answers (or a block raising ``InputRequired``) pauses its
branch (``waiting`` lists it with the request); independent branches still run to
completion. Answers are keyed by node path (``node``, ``loop[2]/node``,
``subflow/node``), as listed in ``waiting``, and kept with the run.

The state is saved as ``runs_dir/{plan_id}/{run_id}.state.json``
(``plans.run.run_state``) when an invocation starts and ends and whenever a node
or a loop iteration finishes (``plans.run.progress``), so ``resume`` and
``rerun_from_node`` work from another process, and a run whose process died
(``kill -9``, a crash, a reboot: its state says ``running`` but its lock is free)
resumes after its last finished node/iteration. Its log path is derived from the
plan id and run id, never taken from the file as stored.

One invocation owns a run at a time, guaranteed (``plans.run.run_lock``): each
invocation holds the run's exclusive OS lock (``{run_id}.state.json.lock``) from
before it first reads or writes the state to after it last saves it — ``start``
from before the state file exists — and releases it on every way out (success,
pause, failure, an exception, Ctrl-C; a killed process's lock dies with it). A
``resume`` or ``rerun_from_node`` of a run that another process or thread is
running raises ``RunInProgressError`` (``RUN_IN_PROGRESS``) at once, without
waiting and without touching the state or the log; the state is read only once
the lock is held, so an invocation never continues from a stale copy.

Events go to ``runs_dir/{plan_id}/{timestamp}-{run_id}.jsonl``
(``plans.run.run_log``) and to ``on_event``, which is called on worker threads, one
event at a time in log order: keep it quick and do not call the runner from it.
Blocks may run on several threads at once and must be thread-safe.

Security (seed 002 §12): every configured secret is registered with
``masking.register_secret`` when ``Settings`` are built, and never appears in the
log, the state or an error; the values of a Plan's secret vars
(``register_secret_vars``) never appear in the log, progress, results or errors (the
state keeps them, to resume); errors are kept and returned with secrets masked
(``masking.mask_secrets``); the state file, which keeps answers (uploaded files
included) for ``resume``, is readable by its owner only.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.events import EventCallback
from keiri_agent.masking import MASK, register_value_secret
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.dependencies import dependencies
from keiri_agent.plans.dsl.models import BlockNode, Plan
from keiri_agent.plans.dsl.scope import build_vars
from keiri_agent.plans.issues import unknown_choice_text
from keiri_agent.plans.run.approval_order import approvals_last
from keiri_agent.plans.run.outputs import RunResult, RunStatus, result_of
from keiri_agent.plans.run.preflight import check_plan
from keiri_agent.plans.run.progress import ProgressSaver
from keiri_agent.plans.run.run_lock import RunLock
from keiri_agent.plans.run.run_log import RunLog, log_relative_path
from keiri_agent.plans.run.run_services import RunServices
from keiri_agent.plans.run.run_state import (
    NodeState,
    RunState,
    StateEncodingError,
    corrupt_state,
    find_state,
    load_state,
    plan_from_dict,
    plan_to_dict,
    read_state,
    save_state,
    state_path,
    unsupported_value,
)
from keiri_agent.plans.run.scheduler import Frame, GraphRun
from keiri_agent.plans.run.steps import STEPS
from keiri_agent.plans.store import PlanStore
from keiri_agent.workspace import Workspace

__all__ = ["PlanLoader", "PlanRunner", "RunResult", "RunStatus"]

_STATUS_JA = {"success": "成功して終わっている", "failed": "失敗して終わっている"}

PlanLoader = Callable[[str], Plan]


def _check_answers(answers: Mapping[str, Any] | None) -> dict[str, Any]:
    checked: dict[str, Any] = {}
    for node_path, answer in (answers or {}).items():
        if not isinstance(answer, Mapping):
            raise UserInputError(
                f"{node_path!r} への回答は「項目: 値」の対応で渡してください"
                f"（渡されたのは {type(answer).__name__}）",
                hint="回答は {ノードID: {項目: 値}} の形です",
            )
        checked[str(node_path)] = dict(answer)
    _check_storable("answers", checked)
    return checked


def _new_state(
    plan: Plan,
    vars: Mapping[str, Any] | None,
    answers: Mapping[str, Any] | None,
    status: str,
    started_by: str = "",
) -> RunState:
    """The state of a new run of ``plan`` (a new run id); StateEncodingError for vars or
    answers the state cannot store."""
    overrides = dict(vars or {})
    _check_storable("vars", overrides)
    checked_answers = _check_answers(answers)
    run_id = f"run_{uuid.uuid4().hex[:12]}"
    return RunState(
        run_id=run_id,
        plan_id=plan.id,
        plan=plan_to_dict(plan),
        log_path=log_relative_path(plan.id, run_id),
        status=status,
        vars=overrides,
        answers=checked_answers,
        started_by=started_by,
    )


def _check_storable(what: str, value: Any) -> None:
    found = unsupported_value(value)
    if found:
        raise StateEncodingError(
            f"{what}: {found[0]} が {found[1]} で、実行の記録に保存できません",
            hint="JSON の値（文字列・数値・リスト・対応）、bytes、日付・時刻、"
            "Decimal を使ってください",
        )


class PlanRunner:
    """Runs Plans with blocks from ``catalog``; state and logs live under ``runs_dir``."""

    def __init__(
        self,
        catalog: BlockCatalog,
        settings: Settings,
        *,
        runs_dir: Path,
        plan_loader: PlanLoader | None = None,
        env: Mapping[str, str] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        """``settings`` and ``env`` (what ``${env.*}`` reads; none when not given) come
        from the caller: the runner never reads the process environment itself."""
        self.catalog = catalog
        self.settings = settings
        self.runs_dir = Path(runs_dir).absolute()
        self.plan_loader = plan_loader or self._default_loader(settings)
        self.env: Mapping[str, str] = env if env is not None else {}
        self.config = dict(config or {})

    @staticmethod
    def _default_loader(settings: Settings) -> PlanLoader:
        return PlanStore(Workspace.from_settings(settings).designs).load

    def start(
        self,
        plan: Plan,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: Mapping[str, Any] | None = None,
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
        started_by: str = "",
    ) -> RunResult:
        """Run ``plan`` from the beginning (a new run id); ``started_by``: the login of
        who starts it (kept in its state).

        Raises PlanValidationError when a block is unknown or the graph has a cycle,
        ReferenceError_ when a plan var names a missing env/config entry, and
        StateEncodingError for vars/answers the state cannot store. The new run is
        owned (locked) before its state file first exists.
        """
        state = _new_state(plan, vars, answers, "running", started_by)
        top_vars = self._checked_vars(plan, state)  # a plan that cannot run leaves no file
        with RunLock(state_path(self.runs_dir, plan.id, state.run_id), state.run_id):
            return self._invoke(state, plan, top_vars, "start", on_event, cancel_event)

    def prepare(
        self,
        plan: Plan,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: Mapping[str, Any] | None = None,
        started_by: str = "",
    ) -> str:
        """Save a new run (status ``queued``) without running it; its run id.

        ``continue_run`` executes it later, in this process or another one that reads
        the same ``runs_dir`` (the run service's workers). Raises what ``start`` raises
        before a run starts.
        """
        state = _new_state(plan, vars, answers, "queued", started_by)
        self._checked_vars(plan, state)
        with RunLock(state_path(self.runs_dir, plan.id, state.run_id), state.run_id):
            save_state(self.runs_dir, state)
        return state.run_id

    def add_answers(self, run_id: str, answers: Mapping[str, Any]) -> None:
        """Keep ``answers`` with a paused run, for the ``continue_run`` that follows.

        Raises RUN_NOT_RESUMABLE unless the run is paused, RunInProgressError when an
        invocation owns it."""
        with self._owned(run_id) as state:
            if state.status != "paused":
                raise UserInputError(
                    f"実行 {run_id} は入力を待っていないため、回答を受け付けられません。",
                    hint="状態が「入力待ち」の実行だけに回答を送れます",
                    details={"run_id": run_id, "status": state.status},
                    code="RUN_NOT_RESUMABLE",
                )
            state.answers.update(_check_answers(answers))
            save_state(self.runs_dir, state)

    def continue_run(
        self,
        run_id: str,
        *,
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
    ) -> RunResult:
        """Execute the run from where its state stands: a ``queued`` run from the
        start, a paused, cancelled (by a stopping process) or interrupted one after
        its last finished node/iteration, with the answers it keeps. A run that
        succeeded or failed is returned as it ended."""
        with self._owned(run_id) as state:
            plan = self._stored_plan(state)
            if state.status in ("success", "failed"):
                register_secret_vars(plan, {**plan.vars, **state.vars})
                return self._result(state, plan, state.status)
            top_vars = self._checked_vars(plan, state)
            # queued and never run: from the start; queued again (``prepare_rerun``),
            # paused, cancelled or interrupted: after its last finished node/iteration
            mode = "start" if state.status == "queued" and not state.last_seq else "resume"
            return self._invoke(state, plan, top_vars, mode, on_event, cancel_event)

    def resume(
        self,
        run_id: str,
        *,
        answers: Mapping[str, Any],
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
    ) -> RunResult:
        """Continue a paused, cancelled or interrupted run after its last finished
        node/iteration, with ``answers`` for the waiting nodes.

        A state still ``running`` whose lock this invocation could take was left by
        a process that died (``kill -9``, a crash, a reboot): it is interrupted, and
        resumes like a cancelled run — nodes in flight run again, nothing that
        finished does. Raises RunInProgressError when another invocation owns the run.
        """
        with self._owned(run_id) as state:
            if state.status not in ("paused", "cancelled", "running"):
                raise UserInputError(
                    f"実行 {run_id} は{_STATUS_JA.get(state.status, state.status)}ため、"
                    "再開するものがありません。",
                    hint=(
                        "終わったノードをもう一度実行するには "
                        f"keiri-agent plan rerun {run_id} --from ノードID を使ってください。"
                    ),
                    details={"run_id": run_id, "status": state.status},
                    code="RUN_NOT_RESUMABLE",
                )
            state.answers.update(_check_answers(answers))
            plan = self._stored_plan(state)
            top_vars = self._checked_vars(plan, state)
            return self._invoke(state, plan, top_vars, "resume", on_event, cancel_event)

    def rerun_from_node(
        self,
        run_id: str,
        node_id: str,
        *,
        answers: Mapping[str, Any] | None = None,
        vars: Mapping[str, Any] | None = None,
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
    ) -> RunResult:
        """Run top-level ``node_id`` and everything downstream of it again.

        Other finished nodes keep their outputs; unfinished ones (pending, waiting,
        cancelled) run too. ``vars`` are merged over the run's vars; answers given
        earlier are kept unless replaced. Raises RunInProgressError when another
        invocation owns the run.
        """
        with self._owned(run_id) as state:
            plan = self._stored_plan(state)
            _reset_for_rerun(state, plan, node_id, answers, vars)
            top_vars = self._checked_vars(plan, state)
            return self._invoke(
                state, plan, top_vars, "rerun", on_event, cancel_event, from_node=node_id
            )

    def prepare_rerun(
        self,
        run_id: str,
        node_id: str,
        *,
        answers: Mapping[str, Any] | None = None,
        vars: Mapping[str, Any] | None = None,
    ) -> None:
        """Make the run ready to run top-level ``node_id`` and everything downstream of
        it again, without running it: the changes ``rerun_from_node`` makes, saved with
        the status ``queued``; ``continue_run`` executes it then (in this process or a
        worker), after the nodes kept. Raises what ``rerun_from_node`` raises before
        it runs."""
        with self._owned(run_id) as state:
            plan = self._stored_plan(state)
            _reset_for_rerun(state, plan, node_id, answers, vars)
            self._checked_vars(plan, state)
            state.status = "queued"
            save_state(self.runs_dir, state)

    def result(self, run_id: str) -> RunResult:
        """The last saved result of ``run_id`` (e.g. to show a paused run after a restart).

        Reads without taking the run: a run another invocation owns shows ``running``
        (saves replace the file atomically, so the copy read is always whole).
        """
        state = load_state(self.runs_dir, run_id)
        plan = self._stored_plan(state)
        register_secret_vars(plan, {**plan.vars, **state.vars})  # this process may be new
        return self._result(state, plan, state.status)

    def _stored_plan(self, state: RunState) -> Plan:
        """The plan saved with the run; RUN_STATE_CORRUPT when it does not validate."""
        try:
            return plan_from_dict(state.plan)
        except Exception as error:  # a damaged plan in the state: one clear error
            path = state_path(self.runs_dir, state.plan_id, state.run_id)
            raise corrupt_state(path, state.run_id, error) from None

    @contextmanager
    def _owned(self, run_id: str) -> Iterator[RunState]:
        """The run's state, read from disk only once this invocation owns the run."""
        path = find_state(self.runs_dir, run_id)
        with RunLock(path, run_id):
            yield read_state(path)

    def _checked_vars(self, plan: Plan, state: RunState) -> dict[str, Any]:
        """The run's resolved top-level vars, once the plan passed its pre-run checks."""
        check_plan(plan, self.catalog)  # also on resume: the catalog may have changed
        register_secret_vars(plan, {**plan.vars, **state.vars})
        return build_vars(plan.vars, state.vars, dict(self.env), self.config)

    def _invoke(
        self,
        state: RunState,
        plan: Plan,
        top_vars: dict[str, Any],
        mode: str,
        on_event: EventCallback | None,
        cancel_event: threading.Event | None,
        from_node: str | None = None,
    ) -> RunResult:
        env = dict(self.env)
        started = time.monotonic()
        ids = {"run_id": state.run_id, "plan_id": plan.id}
        log_path = self.runs_dir / state.log_path
        progress = ProgressSaver(self.runs_dir, state)
        with RunLog(
            log_path, run_id=state.run_id, on_event=on_event, start_after=state.last_seq
        ) as log:
            services = RunServices(
                catalog=self.catalog,
                settings=self.settings,
                env=env,
                config=self.config,
                plan_loader=self.plan_loader,
                log=log,
                cancel_event=cancel_event or threading.Event(),
                answers=state.answers,
                counters=state.counters,
                reruns=state.reruns,
                progress=progress.node_finished,
            )
            if mode == "start":
                # the vars as written (env/config references unresolved): no secrets
                logged_vars = {
                    name: MASK if value is not None and plan.is_secret_var(name) else value
                    for name, value in {**plan.vars, **state.vars}.items()
                }
                log.emit("plan_start", **ids, plan_version=plan.version, vars=logged_vars)
            else:
                log.emit("plan_resumed", **ids, mode=mode, from_node=from_node)
            state.status = "running"
            state.last_seq = log.last_seq
            progress.save_now()
            frame = Frame(state.run_id, plan.id, plan.policy, top_vars, outer={}, locals={})
            graph_run = GraphRun(services, frame, plan.graph, state.graph, threading.Event(), STEPS)
            try:
                status = graph_run.execute_watched()
            finally:
                progress.close()  # no progress save after this (nor after the lock is gone)
            result = self._result(state, plan, status)
            duration = round((time.monotonic() - started) * 1000, 3)
            if result.status == "paused":
                waiting = [item["node_id"] for item in result.waiting]
                log.emit("plan_paused", **ids, waiting=waiting, total_duration_ms=duration)
            else:
                log.emit(
                    "plan_complete",
                    **ids,
                    status=result.status,
                    total_duration_ms=duration,
                    errors=len(result.errors),
                )
            state.status = result.status
            state.last_seq = log.last_seq
            progress.save_now()
        return result

    def _result(self, state: RunState, plan: Plan, status: str) -> RunResult:
        return result_of(state, plan, status, self.runs_dir)


def _reset_for_rerun(
    state: RunState,
    plan: Plan,
    node_id: str,
    answers: Mapping[str, Any] | None,
    vars: Mapping[str, Any] | None,
) -> None:
    """A re-run of top-level ``node_id``: ``vars`` merged over the run's, ``answers``
    kept (replacing earlier ones), the node and everything downstream of it reset.

    Every approval step (a node with ``approval``) not answered anew is asked again,
    with everything downstream of it: an approval covers what the earlier run showed,
    not what the re-run will output."""
    ids = [node.id for node in plan.graph]
    if node_id not in ids:
        raise UserInputError(
            unknown_choice_text("最上位のノード", node_id, ids),
            hint="ループやサブフローの中のノードは、それを含むノードから再実行してください",
            details={"run_id": state.run_id, "node_id": node_id},
        )
    overrides = dict(vars or {})
    _check_storable("vars", overrides)
    state.vars.update(overrides)
    given = _check_answers(answers)
    state.answers.update(given)
    state.reruns += 1
    resets = downstream(plan, node_id)
    for node in plan.graph:
        if node.id not in given and isinstance(node, BlockNode) and node.inputs.get("approval"):
            state.answers.pop(node.id, None)
            resets |= downstream(plan, node.id)
    for reset in sorted(resets):
        state.graph.nodes[reset] = NodeState()


def register_secret_vars(plan: Plan, values: Mapping[str, Any]) -> None:
    """Mask the values of ``plan``'s secret vars wherever they appear in what is shown
    (``masking.register_value_secret``)."""
    for name, value in values.items():
        if plan.is_secret_var(name):
            register_value_secret(value)


def downstream(plan: Plan, node_id: str) -> set[str]:
    """``node_id`` and every top-level node that depends on it, directly or not (an
    approval step depends on what it does not gate: ``approval_order``)."""
    deps = approvals_last(plan.graph, dependencies(plan.graph))
    found = {node_id}
    changed = True
    while changed:
        changed = False
        for other, needed in deps.items():
            if other not in found and needed & found:
                found.add(other)
                changed = True
    return found
