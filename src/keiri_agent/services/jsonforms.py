"""The JSON form of every result: one shape for ``--json``, the pages and the HTTP API.

Bytes convention (everywhere a result holds binary data — a workbook, an uploaded
file, a figure)::

    {"bytes": 1234, "base64": "UEsDB..."}             # bytes inline
    {"bytes": 1234, "path": "out/report.xlsx"}        # bytes written to a file instead
    {"bytes": 1234}                                   # preview: size only (on screen)

A file value ``{"name": str, "data": bytes, ...}`` keeps its other keys and replaces
``data`` by the same keys: ``{"name", "bytes", "base64"}`` (or ``"path"``). A figure
artifact is ``{"artifact_id", "kind": "figure", "title", "description",
"media_type": "image/png", "bytes", "base64" | "path"}``. Values JSON has no type
for (dates, paths, decimals) become their ``str``.

Results covered: Plan ``RunResult`` (``run_result_json``), validation and dry-run
reports, analysis turns and spec results with their artifacts, HelpDesk answers,
knowledge-base index reports, generated Plans and design checks; ``dumps`` is the
printed form. Every text passes through ``masking.mask_shown``: a configured secret
(an API key a Plan read with ``${env.*}``, a key a provider echoed) and the value of a
Plan's secret var are printed as ``***``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.masking import mask_shown

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import TurnResult
    from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
    from keiri_agent.agents.helpdesk.models import AgentResult
    from keiri_agent.agents.research.models import ResearchNote, ResearchResult
    from keiri_agent.errors import KeiriAgentError
    from keiri_agent.plans.check import DryRunReport
    from keiri_agent.plans.design.models import GeneratedPlan
    from keiri_agent.plans.issues import ValidationReport
    from keiri_agent.plans.run import RunResult
    from keiri_agent.search.knowledge_base import IndexReport
    from keiri_agent.services.design import DesignCheck

BytesWriter = Callable[[str, bytes, str | None], Path]
"""``write(where, data, name) -> path``: puts bytes into a file (``exports.OutputWriter``)."""

FIGURE_MEDIA_TYPE = "image/png"


def bytes_json(data: bytes, *, path: Path | None = None, preview: bool = False) -> dict[str, Any]:
    """``{"bytes": n, "base64": ...}``; ``{"bytes", "path"}`` when written; size only
    (``{"bytes": n}``) for a ``preview``."""
    form: dict[str, Any] = {"bytes": len(data)}
    if path is not None:
        form["path"] = str(path)
    elif not preview:
        form["base64"] = base64.b64encode(data).decode("ascii")
    return form


def decode_bytes(form: Mapping[str, Any]) -> bytes:
    """The bytes of an inline form ``{"bytes", "base64"}`` (the reverse of ``bytes_json``)."""
    data = base64.b64decode(str(form["base64"]), validate=True)
    if len(data) != form.get("bytes", len(data)):
        raise ValueError(f"base64 holds {len(data)} bytes, the form says {form['bytes']}")
    return data


def is_file_value(value: Any) -> bool:
    """``{"name": str, "data": bytes}`` (what file inputs and uploads produce)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("data"), bytes | bytearray)
        and isinstance(value.get("name"), str)
    )


def json_value(
    value: Any, *, writer: BytesWriter | None = None, preview: bool = False, where: str = ""
) -> Any:
    """``value`` made JSON-safe: bytes per the convention (inline, written by ``writer``,
    or size only with ``preview``); ``where`` (``node.alias.0``) names written files.
    Text holding a configured secret (``masking.register_secret``) or a Plan's secret
    var value (``masking.register_value_secret``) has it as ``***``."""
    if is_file_value(value):
        data = bytes(value["data"])
        rest = {
            key: json_value(item, writer=writer, preview=preview, where=_join(where, key))
            for key, item in value.items()
            if key != "data"
        }
        path = writer(where, data, value["name"]) if writer is not None else None
        return {**rest, **bytes_json(data, path=path, preview=preview)}
    if isinstance(value, bytes | bytearray):
        path = writer(where, bytes(value), None) if writer is not None else None
        return bytes_json(bytes(value), path=path, preview=preview)
    if isinstance(value, Mapping):
        return {
            str(key): json_value(item, writer=writer, preview=preview, where=_join(where, key))
            for key, item in value.items()
        }
    if isinstance(value, str):
        return mask_shown(value)
    if isinstance(value, list | tuple):
        return [
            json_value(item, writer=writer, preview=preview, where=_join(where, index))
            for index, item in enumerate(value)
        ]
    return value


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return bytes_json(bytes(value))
    return str(value)


def dumps(data: Any) -> str:
    """The printed JSON: UTF-8 text (Japanese kept readable), indented, bytes per the convention."""
    return json.dumps(json_value(data), ensure_ascii=False, indent=2, default=_default)


# --------------------------------------------------------------------------- Plans


def run_result_json(result: RunResult, *, writer: BytesWriter | None = None) -> dict[str, Any]:
    """A Plan run (start, resume or rerun): status, outputs (bytes per the convention),
    errors, the nodes waiting for input, where each top-level step stands and the run
    log's path."""
    return {
        "run_id": result.run_id,
        "plan_id": result.plan_id,
        "status": result.status,
        "outputs": json_value(result.outputs, writer=writer),
        "errors": json_value(result.errors),
        "waiting": json_value(result.waiting),
        "step_states": dict(result.step_states),
        "log_path": str(result.log_path),
    }


def validation_json(report: ValidationReport) -> dict[str, Any]:
    """A validation report: ``{"plan_id", "ok", "error_count", "warning_count", "issues"}``."""
    return dict(json_value(report.to_dict()))


def dry_run_json(report: DryRunReport) -> dict[str, Any]:
    """A dry-run report: ``{"plan_id", "ok", "problems", "nodes"}``."""
    return dict(json_value(report.to_dict()))


def error_json(error: KeiriAgentError) -> dict[str, Any]:
    """A reported failure: ``{"ok": false, "error": {"code", "message", "hint", ...}}``."""
    return {"ok": False, "error": json_value(error.to_dict())}


def generated_plan_json(result: GeneratedPlan) -> dict[str, Any]:
    """A generated Plan: ``{"ok", "plan_id", "reasoning", "apply_mode", "offline", "yaml",
    "templates", "warnings", "conflicts", "attempts", "candidates", "requirements",
    "questions", "validation", "dry_run", "dry_run_seconds"}``. ``attempts`` list each
    try with its issue codes and per-node changes ``{"node", "change", "fields"}``;
    ``validation`` / ``dry_run`` are null when there was none (no Plan, or invalid).
    ``verdict`` (``ok`` | ``needs_answers`` | ``cannot_build`` | ``incomplete`` |
    ``invalid``), ``checklist`` (the requirements in words), ``coverage`` and ``gaps``
    say whether the Plan does what the instruction asked (docs/design.md "Verdict")."""
    from keiri_agent.plans.design.models import VERDICT_MESSAGES
    from keiri_agent.plans.design.procedure import checklist

    return dict(
        json_value(
            {
                "ok": result.ok,
                "verdict": result.verdict,
                "verdict_message": VERDICT_MESSAGES[result.verdict],
                "checklist": checklist(result.procedure) if result.procedure is not None else [],
                "coverage": result.coverage.to_dict() if result.coverage is not None else None,
                "gaps": [gap.model_dump() for gap in result.gaps],
                "plan_id": result.plan.id if result.plan is not None else None,
                "reasoning": result.reasoning,
                "apply_mode": result.apply_mode,
                "offline": result.offline,
                "yaml": result.yaml_text,
                "templates": list(result.templates),
                "warnings": list(result.warnings),
                "conflicts": [
                    {
                        "code": conflict.code,
                        "message": conflict.message,
                        "templates": list(conflict.templates),
                        "name": conflict.name,
                    }
                    for conflict in result.conflicts
                ],
                "attempts": [
                    {
                        "number": attempt.number,
                        "error_codes": dict(attempt.error_codes),
                        "errors": list(attempt.errors),
                        "changes": [
                            {"node": c.node_id, "change": c.change, "fields": list(c.fields)}
                            for c in attempt.changes
                        ],
                    }
                    for attempt in result.attempts
                ],
                "candidates": [candidate.to_dict() for candidate in result.candidates],
                "requirements": [requirement.to_dict() for requirement in result.requirements],
                "questions": list(result.questions),
                "validation": None if result.report is None else validation_json(result.report),
                "dry_run": None if result.dry_run is None else dry_run_json(result.dry_run),
                "dry_run_seconds": result.dry_run_seconds,
            }
        )
    )


def design_check_json(check: DesignCheck) -> dict[str, Any]:
    """検証/ドライラン of an edited Plan: ``{"ok", "validation", "dry_run", "dry_run_error"}``
    (``dry_run`` null when the Plan did not validate, ``dry_run_error`` the error form of a
    dry run that failed)."""
    return {
        "ok": check.ok,
        "validation": validation_json(check.report),
        "dry_run": None if check.dry_run is None else dry_run_json(check.dry_run),
        "dry_run_error": None if check.dry_run_error is None else json_value(check.dry_run_error),
    }


# --------------------------------------------------------------------------- analysis


def artifact_json(artifact: Artifact, files: Mapping[str, Path] | None = None) -> dict[str, Any]:
    """A table (columns, records, total_rows), a figure (bytes per the convention, its
    ``path`` when ``files`` has it) or a text (``text``)."""
    item: dict[str, Any] = {
        key: artifact[key] for key in ("artifact_id", "kind", "title", "description")
    }
    payload = artifact["payload"]
    if artifact["kind"] == "table" and isinstance(payload, dict):
        item.update(
            columns=json_value(payload.get("columns")),
            records=json_value(payload.get("records")),
            total_rows=payload.get("total_rows"),
        )
    elif artifact["kind"] == "figure" and isinstance(payload, bytes):
        item["media_type"] = FIGURE_MEDIA_TYPE
        item.update(bytes_json(payload, path=(files or {}).get(artifact["artifact_id"])))
    else:
        item["text"] = json_value(payload)
    return item


def turn_json(turn: TurnResult, files: Mapping[str, Path] | None = None) -> dict[str, Any]:
    """One analysis turn: the reply, questions, report, this turn's artifacts and specs."""
    return {
        "thread_id": turn.thread_id,
        "offline": turn.offline,
        "next_action": turn.next_action,
        "reply": turn.reply,
        "questions": turn.questions,
        "report_md": turn.report_md,
        "artifacts": [artifact_json(a, files) for a in turn.artifacts],
        "actions": json_value(turn.actions),
        "last_error": turn.last_error,
    }


def spec_results_json(
    dataset_id: str, results: Sequence[ActionResult], files: Mapping[str, Path] | None = None
) -> dict[str, Any]:
    """Specs run directly (a report's 再現要約): each one's run log and artifacts."""
    return {
        "dataset_id": dataset_id,
        "results": [
            {
                "run_log": json_value(result.run_log),
                "artifacts": [artifact_json(a, files) for a in result.artifacts],
            }
            for result in results
        ],
    }


# --------------------------------------------------------------------------- HelpDesk


def helpdesk_answer_json(result: AgentResult) -> dict[str, Any]:
    """A HelpDesk answer: question, plan, subtasks, answer, sources, unanswered, offline."""
    return dict(result.model_dump(mode="json"))


def research_note_json(note: ResearchNote) -> dict[str, Any]:
    """One research note: session, step, query, summary, sources, created_at."""
    return {
        "session_id": note.session_id,
        "step_no": note.step_no,
        "query": note.query,
        "summary_md": note.summary_md,
        "sources": [source.to_dict() for source in note.sources],
        "created_at": note.created_at.isoformat() if note.created_at else None,
    }


def research_result_json(result: ResearchResult) -> dict[str, Any]:
    """A research run: question, queries, report, numbered sources, notes, limitations."""
    return {
        "session_id": result.session_id,
        "run_id": result.run_id,
        "question": result.question,
        "needs_research": result.needs_research,
        "offline": result.offline,
        "queries": list(result.queries),
        "report_md": result.report_md,
        "sources": [
            {"number": number, **source.to_dict()}
            for number, source in enumerate(result.sources, start=1)
        ],
        "limitations": list(result.limitations),
        "notes": [research_note_json(note) for note in result.notes],
    }


def index_reports_json(reports: Mapping[str, IndexReport]) -> dict[str, Any]:
    """Knowledge-base indexing: collection → its report (added, updated, failed, ...)."""
    return {collection: report.to_dict() for collection, report in reports.items()}
