"""The figures and reports of analysis turns, kept in the workspace so that any server
process or worker can serve them (no sticky sessions).

A turn (``AnalysisAgent.ask``) runs wherever its run executes; its figures and its
report are then fetched through any process (``/api/analysis/artifacts/...``,
``/api/analysis/turns/{turn_id}/report``). ``AnalysisTurns.save`` writes them::

    <workspace>/.keiri/analysis/turns/<turn_id>/turn.json    the manifest (written last)
    <workspace>/.keiri/analysis/turns/<turn_id>/f1.png …     the figures (PNG)
    <workspace>/.keiri/analysis/turns/<turn_id>/report.md    the report, when there is one

The figures are the turn's own and those its report cites (the report's ZIP holds
them under ``figures/<artifact_id>.png``). File names are made here (``f<n>.png``);
an artifact id from a request is only looked up in the manifest, never used as a
path, and the turn id must look like one (``turn_`` and 12 hex digits). Files are
owner-only and written atomically (``private.write_private``); the manifest is
written last, so a turn whose writing was cut short has none and counts as missing.
A missing or damaged turn (no readable manifest, a file gone) reads as ``None``.

How long turns are kept: ``retention_days`` (``KEIRI_AGENT_RETENTION_DAYS``), by the
turn folder's modification time (when it was written). Old turns are pruned on write:
each ``save`` first deletes the turn folders older than the retention (idempotent,
so processes pruning at once skip what another deleted). ``keiri-agent purge`` does
not list them (``prune`` is what a purge step would call).

``turn_result_json`` is the JSON of a turn that every surface answers (the API's
turn response and the ``analysis`` run's result): ``jsonforms.turn_json`` with the
dataset's reference, figure URLs instead of base64 and the report's URLs.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.config import Settings
from keiri_agent.private import write_private
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import TurnResult
    from keiri_agent.agents.analysis.artifacts import Artifact

TURN_ID = re.compile(r"^turn_[0-9a-f]{12}$")
"""A turn id as ``AnalysisAgent.ask`` makes it."""
MANIFEST = "turn.json"
REPORT = "report.md"
_FIGURE_FILE = re.compile(r"^f[0-9]{1,6}\.png$")


def figure_url(turn_id: str, artifact_id: str) -> str:
    return f"/api/analysis/artifacts/{turn_id}/{artifact_id}.png"


def report_url(turn_id: str) -> str:
    return f"/api/analysis/turns/{turn_id}/report"


def turn_result_json(turn: TurnResult, dataset: str) -> dict[str, Any]:
    """``jsonforms.turn_json`` with the turn id, ``dataset_id`` (the dataset's saved
    reference), ``notice`` (the thread's file changed; also in ``reply``), each
    table's ``display`` (what people read), figure ``url`` instead of base64, and
    ``report_url`` / ``report_zip_url`` when the turn wrote a report."""
    # pandas loads with the first answered turn, not with the server (an idle one stays lean)
    from keiri_agent.agents.analysis.formatting import display_table
    from keiri_agent.services.jsonforms import turn_json

    form = turn_json(turn)
    payloads = {a["artifact_id"]: a["payload"] for a in turn.artifacts}
    for artifact in form["artifacts"]:
        payload = payloads[artifact["artifact_id"]]
        if artifact["kind"] == "table" and isinstance(payload, Mapping):
            # machine names and values stay in columns/records; display is what people read
            artifact["display"] = display_table(payload)
        if artifact["kind"] == "figure":
            artifact.pop("base64", None)
            artifact["url"] = figure_url(turn.turn_id, artifact["artifact_id"])
    report = report_url(turn.turn_id)
    has_report = turn.report_md is not None
    return {
        "turn_id": turn.turn_id,
        "dataset_id": dataset,
        **form,
        "notice": turn.notice,
        "report_url": report if has_report else None,
        "report_zip_url": f"{report}?format=zip" if has_report else None,
    }


@dataclass(frozen=True)
class StoredFigure:
    artifact_id: str
    title: str
    description: str
    file: str


@dataclass(frozen=True)
class StoredTurn:
    """A turn as the workspace holds it (see the module docstring)."""

    turn_id: str
    thread_id: str
    """The conversation the turn belongs to (its runs' owner owns the turn)."""
    folder: Path
    figures: dict[str, StoredFigure]
    """artifact id → the figure (the turn's own and the ones its report cites)."""
    has_report: bool
    report_figures: list[str]
    """The artifact ids of the figures the report cites, in order."""

    def figure(self, artifact_id: str) -> bytes | None:
        """The PNG of the figure ``artifact_id``; None when the turn has none by that
        id or its file is gone."""
        stored = self.figures.get(artifact_id)
        if stored is None:
            return None
        try:
            return (self.folder / stored.file).read_bytes()
        except OSError:
            return None

    def report_md(self) -> str | None:
        """The report's Markdown; None when the turn has no report or it is unreadable."""
        if not self.has_report:
            return None
        try:
            return (self.folder / REPORT).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def report_artifacts(self) -> list[Artifact] | None:
        """The figures the report cites, as artifacts (for ``exports.report_zip``);
        None when one of their files is gone."""
        cited: list[Artifact] = []
        for artifact_id in self.report_figures:
            stored, payload = self.figures.get(artifact_id), self.figure(artifact_id)
            if stored is None or payload is None:
                return None
            cited.append(
                {
                    "artifact_id": artifact_id,
                    "kind": "figure",
                    "title": stored.title,
                    "description": stored.description,
                    "payload": payload,
                }
            )
        return cited


def _figures(artifacts: Iterable[Artifact]) -> list[Artifact]:
    return [a for a in artifacts if a["kind"] == "figure" and isinstance(a["payload"], bytes)]


class AnalysisTurns:
    """The stored turns of one workspace (see the module docstring)."""

    def __init__(self, workspace: Workspace, *, retention_days: int) -> None:
        self.folder = workspace.state / "analysis" / "turns"
        self.retention = timedelta(days=retention_days)

    @classmethod
    def from_settings(cls, settings: Settings) -> AnalysisTurns:
        return cls(
            Workspace.from_settings(settings), retention_days=settings.storage.retention_days
        )

    def save(self, turn: TurnResult) -> None:
        """Keep the turn's figures and report (after pruning turns past the retention).
        ``OSError`` when the workspace cannot be written."""
        if not TURN_ID.match(turn.turn_id):
            raise ValueError(f"not a turn id: {turn.turn_id!r}")
        self.prune()
        folder = self.folder / turn.turn_id
        figures: dict[str, dict[str, str]] = {}
        for artifact in _figures([*turn.artifacts, *turn.report_artifacts]):
            artifact_id = str(artifact["artifact_id"])
            if artifact_id in figures:
                continue
            name = f"f{len(figures) + 1}.png"
            payload = artifact["payload"]
            assert isinstance(payload, bytes)
            write_private(folder / name, payload)
            figures[artifact_id] = {
                "file": name,
                "title": str(artifact["title"]),
                "description": str(artifact["description"]),
            }
        if turn.report_md is not None:
            write_private(folder / REPORT, turn.report_md)
        manifest = {
            "turn_id": turn.turn_id,
            "thread_id": turn.thread_id,
            "saved_at": datetime.now(UTC).isoformat(),
            "figures": figures,
            "report": turn.report_md is not None,
            "report_figures": [str(a["artifact_id"]) for a in _figures(turn.report_artifacts)],
        }
        write_private(folder / MANIFEST, json.dumps(manifest, ensure_ascii=False))

    def load(self, turn_id: str) -> StoredTurn | None:
        """The stored turn ``turn_id``; None when there is none, or it is damaged."""
        if not TURN_ID.match(turn_id):
            return None
        folder = self.folder / turn_id
        try:
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            figures = {
                str(artifact_id): StoredFigure(
                    str(artifact_id),
                    str(entry["title"]),
                    str(entry["description"]),
                    _checked_file(entry["file"]),
                )
                for artifact_id, entry in dict(manifest["figures"]).items()
            }
            cited = [str(artifact_id) for artifact_id in manifest["report_figures"]]
            has_report = manifest["report"]
            thread_id = manifest["thread_id"]
            if (
                manifest["turn_id"] != turn_id
                or not isinstance(has_report, bool)
                or not isinstance(thread_id, str)
            ):
                raise ValueError(turn_id)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return StoredTurn(turn_id, thread_id, folder, figures, has_report, cited)

    def prune(self, *, now: float | None = None) -> list[str]:
        """Delete the turns written more than ``retention_days`` ago; their ids. A
        folder that cannot be deleted is left for the next prune."""
        if not self.folder.is_dir():
            return []
        cutoff = (time.time() if now is None else now) - self.retention.total_seconds()
        pruned: list[str] = []
        for folder in self.folder.iterdir():
            if not TURN_ID.match(folder.name):
                continue
            with contextlib.suppress(OSError):
                if not folder.is_dir() or folder.stat().st_mtime >= cutoff:
                    continue
                shutil.rmtree(folder)
                pruned.append(folder.name)
        return pruned


def _checked_file(name: object) -> str:
    if not isinstance(name, str) or not _FIGURE_FILE.match(name):
        raise ValueError(name)
    return name
