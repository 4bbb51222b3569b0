"""Plan runs as a kind of run, executed by the Plan runner (seed 002).

The Plan's own state file (``plans.run.run_state``, in the workspace every worker
reads) holds what a run needs: the plan, its vars, the answers given, every node's
and loop item's result. The run service's inputs only name the run, so nothing
secret or large (uploaded files) is stored twice. An attempt continues the run from
where its state stands: a new run from the start, a run paused for answers (now
given) or one whose worker died after its last settled node or loop item.
"""

from __future__ import annotations

from typing import Any

from keiri_agent.errors import RunInProgressError
from keiri_agent.events import EventSource
from keiri_agent.people.notifications import Notifier
from keiri_agent.plans.dsl.models import BlockNode
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.runs.records import Run, RunStatus
from keiri_agent.runs.service import Outcome, RunContext

KIND = "plan"

_STATUS: dict[str, RunStatus] = {
    "paused": "waiting",
    "success": "success",
    "failed": "failed",
    "cancelled": "cancelled",
}


class PlanKind:
    """Executes Plan runs with one ``PlanEngine``; tells people (``notifier``) when a
    run waits at an approval step or was sent back."""

    source: EventSource = "plan"

    def __init__(self, engine: PlanEngine, notifier: Notifier | None = None) -> None:
        self.engine = engine
        self.notifier = notifier

    def execute(self, run: Run, context: RunContext) -> Outcome:
        try:
            result = self.engine.continue_run(
                run.run_id, on_event=context.on_event, cancel_event=context.cancel_event
            )
        except RunInProgressError:  # answers being saved, or a stale invocation: later
            return Outcome("queued")
        summary: dict[str, Any] = {
            "plan_status": result.status,
            "waiting": [item["node_id"] for item in result.waiting],
            "outputs": sorted(result.outputs),
        }
        error = result.errors[0] if result.status == "failed" and result.errors else None
        if self.notifier is not None and self.notifier.configured:
            self._notify(run, result.status, result.waiting, error)
        return Outcome(_STATUS[result.status], result=summary, error=error)

    def _notify(
        self,
        run: Run,
        status: str,
        waiting: list[dict[str, Any]],
        error: dict[str, Any] | None,
    ) -> None:
        assert self.notifier is not None
        if status == "failed" and error is not None and error.get("code") == "APPROVAL_REFUSED":
            comment = str((error.get("details") or {}).get("comment") or "")
            self.notifier.approval_refused(
                run_id=run.run_id, title=run.title, started_by=run.owner, comment=comment
            )
            return
        if status != "paused":
            return
        nodes = {node.id: node for node in self.engine.saved_plan(run.run_id).graph}
        for item in waiting:
            node = nodes.get(str(item.get("node_id")))
            if not isinstance(node, BlockNode) or node.inputs.get("approval") is None:
                continue
            request = item.get("request") or {}
            self.notifier.approval_waiting(
                run_id=run.run_id,
                title=run.title,
                step=node.title or node.id,
                started_by=run.owner,
                message=str(request.get("message") or ""),
            )
