"""Plan run files stay where they belong: inside ``runs/``, and never over a user's file.

- A run state whose ``log_path`` is ``../../../x.jsonl`` or an absolute path → used
  to: ``plan resume`` appended the run's log there (any file the user can write)
  → now: the log path is derived from the plan id and run id; a stored one is used
  only when it is exactly that form; nothing is written outside ``runs/``.
- ``plan run --out DIR`` when DIR already holds a file of the output's name (last
  month's workbook) → used to: silently overwritten → now: both kept; the new file
  gets ``-2`` (``-3``…) and the summary / ``--json`` name the path it really got.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.demo import sample_evidence_zip

REPO = Path(__file__).resolve().parents[2]
EVIDENCE_PLAN = REPO / "src" / "keiri_agent" / "samples" / "plans" / "evidence_summary.yaml"
PLAN = """
apiVersion: v1
id: paths
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: name, type: text, label: 名前}
"""


@pytest.mark.parametrize("hostile", ["../../../escaped.jsonl", "ABSOLUTE"])
def test_a_stored_log_path_cannot_send_the_log_outside_runs(
    keiri_home: Path, tmp_path: Path, hostile: str
) -> None:
    plan = keiri_home / "paths.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    started = CliRunner().invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    run_id = json.loads(started.stdout)["run_id"]
    (state_file,) = list(keiri_home.rglob(f"{run_id}.state.json"))
    outside = tmp_path / "outside" / "escaped.jsonl"
    outside.parent.mkdir()
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["log_path"] = str(outside) if hostile == "ABSOLUTE" else hostile
    state_file.write_text(json.dumps(state), encoding="utf-8")
    answers = keiri_home / "answers.yaml"
    answers.write_text("ask: {name: 山田}\n", encoding="utf-8")
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    resumed = CliRunner().invoke(
        app, ["plan", "resume", run_id, "--inputs", str(answers), "--json", "--no-prompt"]
    )

    assert resumed.exit_code == 0, resumed.output
    result = json.loads(resumed.stdout)
    assert result["status"] == "success"
    runs = (keiri_home / "runs").resolve()
    assert Path(result["log_path"]).resolve().is_relative_to(runs)
    assert Path(result["log_path"]).name.endswith(f"-{run_id}.jsonl")
    written = {p for p in tmp_path.rglob("*") if p.is_file()} - before
    assert all(p.resolve().is_relative_to(runs) for p in written), written
    assert not outside.exists()
    assert not (keiri_home.parent.parent / "escaped.jsonl").exists()


def test_plan_run_out_keeps_an_existing_file_of_the_same_name(keiri_home: Path) -> None:
    plan = keiri_home / "evidence_summary.yaml"
    shutil.copy(EVIDENCE_PLAN, plan)
    upload = sample_evidence_zip()
    (keiri_home / "ev.zip").write_bytes(upload)
    out = keiri_home / "出力"
    out.mkdir()
    (out / "write_report.workbook.xlsx").write_bytes(b"last month")
    (out / "ev.zip").write_bytes(b"an older upload")

    result = CliRunner().invoke(
        app, ["plan", "run", str(plan), "--prompt", "--json", "--out", str(out)], input="ev.zip\n"
    )

    assert result.exit_code == 0, result.output
    assert (out / "write_report.workbook.xlsx").read_bytes() == b"last month"
    assert (out / "ev.zip").read_bytes() == b"an older upload"
    assert (out / "write_report.workbook-2.xlsx").stat().st_size > 0
    assert (out / "ev-2.zip").read_bytes() == upload
    outputs = json.loads(result.stdout)["outputs"]  # the names the files really got
    assert outputs["write_report"]["workbook"]["path"] == str(out / "write_report.workbook-2.xlsx")
    assert outputs["collect_zip"]["collected"]["evidence_zip"]["path"] == str(out / "ev-2.zip")
