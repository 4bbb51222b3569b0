"""Analysis turns kept in the workspace: written, read back (by another instance, as
another process would), missing, damaged, pruned after the retention."""

from __future__ import annotations

import io
import json
import os
import stat
import time
import zipfile
from pathlib import Path

import pytest

from keiri_agent.agents.analysis import TurnResult
from keiri_agent.agents.analysis.artifacts import Artifact
from keiri_agent.config import Settings
from keiri_agent.services.analysis_turns import AnalysisTurns, turn_result_json
from keiri_agent.services.exports import report_zip

PNG = b"\x89PNG\r\n\x1a\n" + b"figure"
DAY = 24 * 3600


def _figure(artifact_id: str, data: bytes = PNG) -> Artifact:
    return {
        "artifact_id": artifact_id,
        "kind": "figure",
        "title": f"図 {artifact_id}",
        "description": "説明",
        "payload": data,
    }


def _table(artifact_id: str) -> Artifact:
    return {
        "artifact_id": artifact_id,
        "kind": "table",
        "title": "表",
        "description": "",
        "payload": {"columns": ["地域", "売上"], "records": [{"地域": "関東", "売上": 1}]},
    }


def _turn(turn_id: str = "turn_0123456789ab", *, report: bool = True) -> TurnResult:
    own = [_table("a1"), _figure("a2", PNG + b"-own")]
    cited = [_figure("a0", PNG + b"-earlier"), _figure("a2", PNG + b"-own")]
    return TurnResult(
        thread_id="thread-1",
        turn_id=turn_id,
        next_action="finalize" if report else "ask",
        reply="# 分析レポート" if report else "どの列ですか？",
        artifacts=own,
        report_md="# 分析レポート\n![図](figures/a0.png)\n" if report else None,
        report_artifacts=cited if report else [],
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, provider="offline", retention_days=30)


def test_a_saved_turn_is_read_back_by_another_instance(settings: Settings) -> None:
    AnalysisTurns.from_settings(settings).save(_turn())
    stored = AnalysisTurns.from_settings(settings).load("turn_0123456789ab")

    assert stored is not None
    assert stored.figure("a2") == PNG + b"-own"
    assert stored.figure("a0") == PNG + b"-earlier", "a figure the report cites is kept"
    assert stored.figure("a1") is None, "a table is not a figure"
    assert stored.figure("../turn.json") is None
    assert stored.report_md() == "# 分析レポート\n![図](figures/a0.png)\n"
    cited = stored.report_artifacts()
    assert cited is not None and [a["artifact_id"] for a in cited] == ["a0", "a2"]
    expected = report_zip(_turn().report_md, _turn().report_artifacts)
    with (
        zipfile.ZipFile(io.BytesIO(report_zip(stored.report_md(), cited))) as got,
        zipfile.ZipFile(io.BytesIO(expected)) as want,
    ):
        assert {n: got.read(n) for n in got.namelist()} == {
            n: want.read(n) for n in want.namelist()
        }
    files = [path for path in stored.folder.iterdir()]
    assert sorted(path.name for path in files) == ["f1.png", "f2.png", "report.md", "turn.json"]
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)
    assert stat.S_IMODE(stored.folder.stat().st_mode) == 0o700


def test_a_turn_without_report_has_figures_and_no_report(settings: Settings) -> None:
    turns = AnalysisTurns.from_settings(settings)
    turns.save(_turn(report=False))
    stored = turns.load("turn_0123456789ab")
    assert stored is not None and not stored.has_report
    assert stored.report_md() is None and stored.report_artifacts() == []
    assert stored.figure("a2") == PNG + b"-own"


@pytest.mark.parametrize(
    "turn_id", ["turn_ffffffffffff", "turn_nope", "../datasets", "turn_0123456789ab/..", ""]
)
def test_an_unknown_or_garbled_turn_id_reads_as_missing(settings: Settings, turn_id: str) -> None:
    turns = AnalysisTurns.from_settings(settings)
    turns.save(_turn())
    assert turns.load(turn_id) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: (folder / "turn.json").unlink(),
        lambda folder: (folder / "turn.json").write_text("{not json", encoding="utf-8"),
        lambda folder: (folder / "turn.json").write_text("[]", encoding="utf-8"),
        lambda folder: _rewrite(
            folder, figures={"a2": {"file": "../../../etc/passwd", "title": "", "description": ""}}
        ),
        lambda folder: _rewrite(folder, turn_id="turn_ffffffffffff"),
        lambda folder: _rewrite(folder, report="yes"),
    ],
    ids=["no-manifest", "not-json", "not-an-object", "path-in-manifest", "other-id", "bad-type"],
)
def test_a_damaged_turn_reads_as_missing(settings: Settings, damage) -> None:  # type: ignore[no-untyped-def]
    turns = AnalysisTurns.from_settings(settings)
    turns.save(_turn())
    damage(turns.folder / "turn_0123456789ab")
    assert turns.load("turn_0123456789ab") is None


def _rewrite(folder: Path, **changes: object) -> None:
    manifest = json.loads((folder / "turn.json").read_text(encoding="utf-8"))
    (folder / "turn.json").write_text(json.dumps({**manifest, **changes}), encoding="utf-8")


def test_a_file_gone_from_a_kept_turn_is_missing_not_an_error(settings: Settings) -> None:
    turns = AnalysisTurns.from_settings(settings)
    turns.save(_turn())
    folder = turns.folder / "turn_0123456789ab"
    (folder / "f2.png").unlink()  # a0, cited by the report (f1 is the turn's own a2)
    (folder / "report.md").unlink()
    stored = turns.load("turn_0123456789ab")
    assert stored is not None
    assert stored.figure("a0") is None and stored.figure("a2") == PNG + b"-own"
    assert stored.report_md() is None and stored.report_artifacts() is None


def test_turns_older_than_the_retention_are_pruned_on_write(settings: Settings) -> None:
    turns = AnalysisTurns.from_settings(settings)
    turns.save(_turn("turn_000000000001"))
    turns.save(_turn("turn_000000000002"))
    old = time.time() - 31 * DAY
    os.utime(turns.folder / "turn_000000000001", (old, old))
    recent = time.time() - 29 * DAY
    os.utime(turns.folder / "turn_000000000002", (recent, recent))
    (turns.folder / "not-a-turn").mkdir()
    os.utime(turns.folder / "not-a-turn", (old, old))

    turns.save(_turn("turn_000000000003"))

    assert turns.load("turn_000000000001") is None, "past the retention: deleted"
    assert turns.load("turn_000000000002") is not None
    assert turns.load("turn_000000000003") is not None
    assert (turns.folder / "not-a-turn").is_dir(), "only turn folders are pruned"
    assert turns.prune() == []


def test_turn_json_gives_figure_urls_and_the_reference(settings: Settings) -> None:
    form = turn_result_json(_turn(), "0123456789abcdef")
    figure = next(a for a in form["artifacts"] if a["kind"] == "figure")
    table = next(a for a in form["artifacts"] if a["kind"] == "table")
    assert form["dataset_id"] == "0123456789abcdef" and form["turn_id"] == "turn_0123456789ab"
    assert figure["url"] == "/api/analysis/artifacts/turn_0123456789ab/a2.png"
    assert "base64" not in figure and figure["bytes"] == len(PNG + b"-own")
    assert table["display"]["columns"] and table["records"] == [{"地域": "関東", "売上": 1}]
    assert form["report_url"] == "/api/analysis/turns/turn_0123456789ab/report"
    assert form["report_zip_url"] == form["report_url"] + "?format=zip"
    json.dumps(form)  # a run's result: JSON
