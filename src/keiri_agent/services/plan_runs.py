"""Plan runs through the run service (``keiri_agent.runs``): what the API's Plan run
routes call.

    runs = PlanRuns(engine, service)
    run_id = runs.start(plan, vars={"month": "2025-01"})        # queued for a worker
    result = runs.result(run_id)                                # paused: result.waiting
    runs.resume(run_id, answers={"collect": {"limit": 30000}})  # queued again
    runs.rerun(run_id, "message", answers={...})                # failed: from a node
    async for event in runs.follow(run_id, after=0):            # None = nothing new yet
        ...
    runs.recent({"invoice"}, limit=20)                          # newest first

- ``start`` validates the plan and saves the run's state ``queued``
  (``PlanEngine.prepare``) before it records the run of kind ``plan``
  (``runs.plan_kind``), so an error of the plan or its vars is the caller's, and a
  worker (a thread of the server, or a ``keiri-agent worker``) executes it.
- A run paused at a ``ui.interactive_input`` node is ``waiting``: ``resume`` keeps the
  answers with its state and queues it again, from any process.
- ``rerun`` runs a top-level node of a settled run (failed, typically) and everything
  downstream of it again, other outputs kept: its state is made ready
  (``PlanEngine.prepare_rerun``) and the same run is queued again (event
  ``run_rerun``), so its events continue its numbering — the one way a finished run
  of the run service executes again.
- ``follow`` reads the run's numbered events from the run service (any process);
  it ends once the run is paused or finished and every event was yielded (a later
  resume continues the numbering). A run whose worker died is continued by another
  worker after its last settled node or loop item, in the same stream.
- ``cancel`` asks the run to stop, from any process.
- ``recent`` lists a plan's runs from their state files (``runs/{plan_id}/``), the
  most recently updated first: run id, status, started and updated time. A state
  file that cannot be read is left out (and logged), so one damaged file does not
  hide the others.
- Answers may carry files in the bytes convention of ``services.jsonforms``
  (``{"name", "base64"}``, or ``{"bytes", "base64"}`` for bare bytes);
  ``decode_answers`` turns them into the file values ``{"name", "data"}`` (bytes)
  the input blocks take.
- ``RunLogReader`` reads a run's own JSONL log (``plans.run.run_log``) as events, for
  a page that shows a finished run's log.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keiri_agent.errors import KeiriAgentError, RunInProgressError, UserInputError
from keiri_agent.events import Event
from keiri_agent.people.approvals import ApprovalRule, check_approver
from keiri_agent.people.ownership import Ownership
from keiri_agent.people.roles import PermissionDeniedError, Person, require
from keiri_agent.plans.dsl.models import BlockNode, Plan
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.run.run_log import safe_path_part
from keiri_agent.plans.run.run_state import find_state, plan_from_dict, read_state
from keiri_agent.plans.run.runner import RunResult
from keiri_agent.runs.plan_kind import KIND
from keiri_agent.runs.records import STATUS_JA, iso, run_not_found
from keiri_agent.runs.service import RunService
from keiri_agent.runs.store import NewEvent
from keiri_agent.services.jsonforms import decode_bytes

log = logging.getLogger(__name__)

RECENT_RUNS_LIMIT = 20
_STATE_SUFFIX = ".state.json"
_PLAN_WORDS = {"waiting": "paused"}
"""The run service's statuses in the words the Plan routes have always used."""


class PlanRuns:
    """Plan runs of one ``PlanEngine`` over the run service (see the module docstring)."""

    def __init__(self, engine: PlanEngine, service: RunService) -> None:
        self.engine = engine
        self.service = service

    @property
    def runs_dir(self) -> Path:
        return self.engine.runner.runs_dir

    # --- starting, resuming, cancelling ------------------------------------------------

    def start(
        self,
        plan: Plan,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: Mapping[str, Any] | None = None,
        scheduled: dict[str, Any] | None = None,
        started_by: str = "",
        by: Person | None = None,
    ) -> str:
        """Validate, save and queue a run of ``plan``; its run id. ``scheduled``: the
        schedule that started it (its first event, ``scheduled``); ``started_by``: the
        login of the person who started it (the run's owner: who may not approve it);
        ``by``: that person where team controls apply — answers given up front are
        checked as ``resume``'s (an approval step cannot be answered by its starter).

        Raises what the engine raises before a run starts (``PlanValidationError``,
        ``UserInputError`` for vars/answers).
        """
        if by is not None:
            check_answerer(plan, "", answers or {}, by, started_by)
            refuse_early_approvals(plan, answers or {}, set())
        run_id = self.engine.prepare(
            plan, vars=vars, answers=decode_answers(answers or {}), started_by=started_by
        )
        first = [NewEvent("plan", "scheduled", scheduled)] if scheduled is not None else []
        self.service.start(
            KIND,
            run_id=run_id,
            subject=plan.id,
            title=plan.title or plan.id,
            inputs={},
            owner=started_by,
            first_events=first,
        )
        return run_id

    def record_failed_start(
        self, plan_id: str, error: KeiriAgentError, scheduled: dict[str, Any], owner: str = ""
    ) -> str:
        """A scheduled run whose Plan could not start (no longer registered, invalid):
        a failed run of the schedule's ``owner`` that says why; its run id."""
        run = self.service.record_failed(
            KIND,
            subject=plan_id,
            title=plan_id,
            error=error.to_dict(),
            first_events=[NewEvent("plan", "scheduled", scheduled)],
            owner=owner,
        )
        return run.run_id

    def resume(self, run_id: str, answers: Mapping[str, Any], by: Person | None = None) -> str:
        """Keep ``answers`` with a paused run and queue it again; its run id. ``by``:
        the person answering — an answer to an approval step (a node with ``approval``)
        must come from someone its rule allows (``people.approvals``), any other from a
        person who may run Plans; None (one person's install) checks nothing.

        Raises ``UserInputError`` (unknown run, RUN_NOT_RESUMABLE: not paused, or
        cancelled while it waited), ``RunInProgressError`` (running) and
        ``PermissionDeniedError``.
        """
        self.state_file(run_id)  # a bad or unknown id fails here
        known = self.service.get(run_id)
        if by is not None:
            plan, starter = self.plan(run_id), self.starter(run_id)
            if not answers:  # only re-queues the run: its starter's or 管理者's to do
                require(by, "run")
                Ownership().check_act(by, starter, KIND, run_id)
            check_answerer(plan, run_id, answers, by, starter)
            waiting = {str(item["node_id"]) for item in self.result(run_id).waiting}
            refuse_early_approvals(plan, answers, waiting)
        if known is not None and known.status != "waiting":
            raise UserInputError(
                f"実行 {run_id} は入力を待っていないため、回答を受け付けられません"
                f"（状態: {STATUS_JA.get(known.status, known.status)}）",
                code="RUN_NOT_RESUMABLE",
                hint="状態が「入力待ち」の実行だけに回答を送れます",
                details={"run_id": run_id, "status": known.status},
            )
        self.engine.add_answers(run_id, decode_answers(answers))
        if self.service.get(run_id) is None:  # paused at the command line, or long ago
            plan = self.plan(run_id)
            self.service.start(
                KIND,
                run_id=run_id,
                subject=plan.id,
                title=plan.title or plan.id,
                inputs={},
                owner=self.starter(run_id),
            )
        else:
            self.service.continue_waiting(run_id)
        return run_id

    def approvals(self, run_id: str, answers: Mapping[str, Any]) -> list[tuple[str, bool]]:
        """The approval steps ``answers`` answer: (node id, approved) for each node with
        an ``approval`` rule (what the audit trail records)."""
        nodes = _block_nodes(self.plan(run_id))
        found = []
        for node_id, answer in answers.items():
            node = nodes.get(node_id)
            if node is not None and ApprovalRule.of(node.inputs.get("approval")) is not None:
                approved = isinstance(answer, Mapping) and answer.get("approved") is True
                found.append((node_id, approved))
        return found

    def waiting_approvals(self, person: Person, limit: int = 100) -> list[dict[str, Any]]:
        """The runs paused at an approval step (a node with ``approval``), newest first:
        run, Plan, who started it, the step, its message and context (what is approved),
        and whether ``person`` may answer it (the 承認待ち list)."""
        found = []
        for run in self.service.store.find(kind=KIND, statuses=["waiting"], limit=limit):
            try:
                result = self.result(run.run_id)
                nodes = _block_nodes(self.plan(run.run_id))
            except KeiriAgentError:
                continue  # a damaged state is reported on the run itself
            for waiting in result.waiting:
                node = nodes.get(str(waiting.get("node_id")))
                rule = ApprovalRule.of(node.inputs.get("approval")) if node is not None else None
                if node is None or rule is None:
                    continue
                try:
                    check_approver(person, rule, run.owner)
                    may = True
                except PermissionDeniedError:
                    may = False
                request = waiting.get("request") or {}
                found.append(
                    {
                        "run_id": run.run_id,
                        "plan_id": run.subject,
                        "title": run.title,
                        "started_by": run.owner,
                        "waiting_since": iso(run.updated_at),
                        "node_id": node.id,
                        "step": node.title or node.id,
                        "message": request.get("message"),
                        "context": request.get("context"),
                        "can_answer": may,
                    }
                )
        return found

    def rerun(
        self,
        run_id: str,
        node_id: str,
        answers: Mapping[str, Any] | None = None,
        by: Person | None = None,
    ) -> str:
        """Run top-level ``node_id`` of a settled run and everything downstream of it
        again (other outputs kept, ``answers`` replacing earlier ones; every approval
        step asked again): the run's state is saved ready (``PlanEngine.prepare_rerun``)
        and the same run queued again for a worker; its run id. ``by``: the person
        re-running (the run's starter or 管理者; their answers checked as ``resume``'s);
        None (one person's install) checks nothing.

        Raises ``UserInputError`` (unknown run or node), ``RunInProgressError`` (the
        run is queued or running) and ``PermissionDeniedError``.
        """
        self.state_file(run_id)
        known = self.service.get(run_id)
        if by is not None:
            starter = self.starter(run_id)
            require(by, "run")
            Ownership().check_act(by, starter, KIND, run_id)
            check_answerer(self.plan(run_id), run_id, answers or {}, by, starter)
        if known is not None and not known.settled:
            raise RunInProgressError(
                f"実行 {run_id} はまだ終わっていないため、再実行できません"
                f"（状態: {STATUS_JA.get(known.status, known.status)}）",
                hint="実行が終わってから、もう一度お試しください",
                details={"run_id": run_id, "status": known.status},
            )
        self.engine.prepare_rerun(run_id, node_id, answers=decode_answers(answers or {}))
        event = NewEvent("plan", "run_rerun", {"from_node": node_id})
        if known is None:  # settled before the run service kept runs
            plan = self.plan(run_id)
            self.service.start(
                KIND,
                run_id=run_id,
                subject=plan.id,
                title=plan.title or plan.id,
                inputs={},
                first_events=[event],
            )
            return run_id
        if self.service.run_again(run_id, event) is None:
            current = self.service.require(run_id)
            raise RunInProgressError(
                f"実行 {run_id} は別の操作で再開されたため、再実行しませんでした"
                f"（状態: {STATUS_JA.get(current.status, current.status)}）",
                hint="実行が終わってから、もう一度お試しください",
                details={"run_id": run_id, "status": current.status},
            )
        return run_id

    def cancel(self, run_id: str) -> bool:
        """Ask the run to stop (any process); False when it had already settled."""
        self.state_file(run_id)
        before = self.service.get(run_id)
        if before is None or before.finished:
            return False
        self.service.cancel(run_id)
        return True

    # --- reading -----------------------------------------------------------------------

    def state_file(self, run_id: str) -> Path:
        """The run's state file; ``UserInputError`` for a malformed id, RUN_NOT_FOUND
        (without the server's folders) when there is no such run."""
        try:
            return find_state(self.runs_dir, run_id)
        except UserInputError as error:
            if "runs_dir" not in error.details:
                raise  # a malformed id
            raise run_not_found(run_id) from None

    def result(self, run_id: str) -> RunResult:
        """The run as last saved: status, outputs, errors, the nodes waiting for input."""
        self.state_file(run_id)
        return self.engine.runner.result(run_id)

    def starter(self, run_id: str) -> str:
        """The login of who started the run: the run service's owner, else the one its
        state recorded (a run started at the command line); empty when neither did."""
        known = self.service.get(run_id)
        if known is not None and known.owner:
            return known.owner
        try:
            return read_state(self.state_file(run_id)).started_by
        except UserInputError:
            if known is not None:  # a scheduled run whose Plan could not start
                return ""
            raise

    def plan(self, run_id: str) -> Plan:
        """The plan saved with the run (read ``result`` first: it reports a damaged one)."""
        return plan_from_dict(read_state(self.state_file(run_id)).plan)

    def status(self, run_id: str) -> str:
        """``queued``, ``running``, ``paused``, ``success``, ``failed`` or ``cancelled``."""
        run = self.service.get(run_id)
        if run is None:  # a run from before the run service: its state says
            return read_state(self.state_file(run_id)).status
        return _PLAN_WORDS.get(run.status, run.status)

    def recent(
        self,
        plan_ids: Collection[str],
        limit: int = RECENT_RUNS_LIMIT,
        keep: Callable[[RunSummary], bool] | None = None,
    ) -> list[RunSummary]:
        """The runs of the plan known by ``plan_ids`` (its id in ``designs/`` and the id
        its YAML declares), most recently updated first, at most ``limit``: from the
        state files, with the run service's status where it knows the run (a run
        cancelled while queued), and the runs that never got a state (a scheduled run
        whose Plan could not start). ``keep``: only the runs it keeps (e.g. the ones a
        person may see), chosen before the list is cut to ``limit``."""
        window = limit if keep is None else min(max(limit * 10, 200), 2000)
        found = {run.run_id: run for run in recent_runs(self.runs_dir, plan_ids, window)}
        for run in self.service.store.find(kind=KIND, subjects=list(plan_ids), limit=window):
            status = _PLAN_WORDS.get(run.status, run.status)
            known = found.get(run.run_id)
            if known is not None:
                found[run.run_id] = dataclasses.replace(
                    known, status=status, started_by=run.owner or known.started_by
                )
            else:
                found[run.run_id] = RunSummary(
                    run.run_id,
                    run.subject,
                    status,
                    iso(run.created_at),
                    iso(run.updated_at),
                    run.owner,
                )
        ordered = sorted(
            (run for run in found.values() if keep is None or keep(run)),
            key=lambda run: (run.updated_at, run.started_at, run.run_id),
            reverse=True,
        )
        return ordered[:limit]

    def without_state(self, run_id: str) -> dict[str, Any] | None:
        """A Plan run the run service knows but that never got a state file (a
        scheduled run whose Plan could not start), in the JSON form of a run; None
        for any other id."""
        run = self.service.get(run_id)
        if run is None or run.kind != KIND:
            return None
        return {
            "run_id": run.run_id,
            "plan_id": run.subject,
            "status": _PLAN_WORDS.get(run.status, run.status),
            "outputs": {},
            "errors": [run.error] if run.error else [],
            "waiting": [],
            "title": run.title,
            "node_titles": {},
        }

    def follow(self, run_id: str, after: int = 0) -> AsyncIterator[Event | None]:
        """The run's events numbered after ``after`` (see ``RunService.follow``)."""
        if self.service.get(run_id) is None:
            self.state_file(run_id)  # RUN_NOT_FOUND, or a run from before the run service
        return self.service.follow(run_id, after)


@dataclass(frozen=True)
class RunSummary:
    """One run in a plan's run list."""

    run_id: str
    plan_id: str
    status: str
    started_at: str
    updated_at: str
    started_by: str = ""
    """The login of who started it (empty: not recorded — a run from before people)."""


def recent_runs(
    runs_dir: Path, plan_ids: Collection[str], limit: int = RECENT_RUNS_LIMIT
) -> list[RunSummary]:
    """The runs of a plan from the state files in its folders under ``runs_dir``,
    most recently updated first, at most ``limit``.

    A run's folder is derived from its plan id (``safe_path_part``), and different
    ids can share one, so each state's own ``plan_id`` must be one of ``plan_ids``.
    Files are read newest first by modification time (a state is rewritten whenever
    it is saved), so a long history is not read in full.
    """
    candidates: dict[Path, float] = {}
    for plan_id in plan_ids:
        folder = runs_dir / safe_path_part(plan_id)
        if not folder.is_dir():
            continue
        for path in folder.glob(f"*{_STATE_SUFFIX}"):
            try:
                candidates[path] = path.stat().st_mtime
            except FileNotFoundError:  # removed meanwhile
                continue
    found: list[RunSummary] = []
    for path in sorted(candidates, key=lambda p: candidates[p], reverse=True):
        if len(found) >= limit:
            break
        if path.name.startswith("."):
            continue  # a state being written
        try:
            state = read_state(path)
        except UserInputError as error:
            log.warning("run list: skipping %s: %s", path, error)
            continue
        if state.plan_id in plan_ids:
            found.append(
                RunSummary(
                    state.run_id,
                    state.plan_id,
                    state.status,
                    state.created_at,
                    state.updated_at,
                    state.started_by,
                )
            )
    found.sort(key=lambda run: (run.updated_at, run.started_at, run.run_id), reverse=True)
    return found


class RunLogReader:
    """Reads the complete lines a run log gained since the last read, as ``Event`` values
    numbered by their line (a line still being written waits for the next read)."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self._offset = 0
        self._seq = 0

    def read(self) -> list[Event]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offset += end + 1
        events = []
        for raw in data[: end + 1].splitlines():
            if not raw.strip():
                continue
            self._seq += 1
            try:
                line = json.loads(raw)
            except ValueError:  # a line torn by a killed process: keep the numbering
                line = {"event": "unreadable_line"}
            events.append(event_of_line(line, self.run_id, self._seq))
        return events


def event_of_line(line: Mapping[str, Any], run_id: str, seq: int) -> Event:
    """The ``Event`` a run-log line was written from (the reverse of ``run_log.log_line``)."""
    payload = dict(line)
    kind = str(payload.pop("event", ""))
    timestamp = str(payload.pop("timestamp", ""))
    if payload.get("run_id") == run_id:
        del payload["run_id"]  # a subflow's events keep their nested run id
    if payload.get("node_id") is None:
        payload.pop("node_id", None)
    return Event("plan", kind, run_id, seq, timestamp, payload)


def decode_answers(answers: Mapping[str, Any]) -> dict[str, Any]:
    """Answers with files in the bytes convention (``{"name", "base64"}``) turned into
    file values ``{"name", "data"}``; other values as given.

    ``UserInputError`` ANSWER_FILE_INVALID for base64 that does not decode.
    """
    return {str(node): _decoded(node, value) for node, value in answers.items()}


def _decoded(node: str, value: Any) -> Any:
    if isinstance(value, Mapping):
        named = isinstance(value.get("name"), str)
        if "base64" in value and (named or set(value) <= {"bytes", "base64"}):
            name = str(value.get("name") or "")
            try:
                data = decode_bytes(value)
            except (ValueError, TypeError):
                raise UserInputError(
                    f"{node} のファイル「{name}」を読み取れません（base64 が正しくありません）",
                    code="ANSWER_FILE_INVALID",
                    hint="ファイルの中身を base64 で、bytes にはその大きさを送ってください",
                    details={"node_id": node, "name": name},
                ) from None
            if not named:
                return data
            rest = {k: v for k, v in value.items() if k not in ("base64", "bytes")}
            return {**rest, "data": data}
        return {str(key): _decoded(node, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decoded(node, item) for item in value]
    return value


def check_answerer(
    plan: Plan, run_id: str, answers: Mapping[str, Any], by: Person, starter: str
) -> None:
    """Refuse (``PERMISSION_DENIED``) answers ``by`` may not give to the run ``run_id``
    of ``plan`` started by ``starter``: an approval step's under its rule
    (``people.approvals``), any other step's from its starter or 管理者 who may run Plans."""
    nodes = _block_nodes(plan)
    for node_id in answers:
        node = nodes.get(node_id)
        rule = ApprovalRule.of(node.inputs.get("approval")) if node is not None else None
        if rule is None:
            require(by, "run")
            Ownership().check_act(by, starter, "plan", run_id)
        else:
            check_approver(by, rule, starter)


def refuse_early_approvals(plan: Plan, answers: Mapping[str, Any], waiting: set[str]) -> None:
    """An approval answers what its step shows: refuse one for a step the run is not
    waiting at yet (given up front, or before the steps it follows have run)."""
    early = sorted((set(answers) & approval_steps(plan)) - waiting)
    if early:
        raise UserInputError(
            f"承認のステップ（{'、'.join(early)}）は、まだ承認を待っていません",
            code="APPROVAL_NOT_WAITING",
            hint="実行がそのステップで止まり、承認する内容が表示されてから承認してください",
            details={"nodes": early, "waiting": sorted(waiting)},
        )


def approval_steps(plan: Plan) -> set[str]:
    """The ids of the plan's approval steps (top-level nodes with an ``approval`` rule)."""
    return {
        node.id
        for node in _block_nodes(plan).values()
        if ApprovalRule.of(node.inputs.get("approval")) is not None
    }


def _block_nodes(plan: Plan) -> dict[str, BlockNode]:
    """The plan's top-level block nodes by id (input nodes are top-level)."""
    return {node.id: node for node in plan.graph if isinstance(node, BlockNode)}


def answered_files(answers: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The files among ``answers`` (the bytes convention): node, field, name, size and
    SHA-256 — what the audit trail keeps of a run's inputs (never their content)."""
    import hashlib

    found: list[dict[str, Any]] = []

    def walk(node: str, field: str, value: Any) -> None:
        if isinstance(value, Mapping) and isinstance(value.get("data"), bytes | bytearray):
            data = bytes(value["data"])
            found.append(
                {
                    "node": node,
                    "field": field,
                    "name": str(value.get("name") or ""),
                    "bytes": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
            )
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(node, field or str(key), item)
        elif isinstance(value, list):
            for item in value:
                walk(node, field, item)

    for node, value in decode_answers(answers).items():
        walk(node, "", value)
    return found
