"""``keiri-agent plan validate|dry-run|run|resume`` on real plan files and workspaces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "designs" / "examples" / "sales_by_region.yaml"
RUNNER_BLOCKS = REPO / "tests" / "plans" / "data" / "runner_blocks"

ASKING_PLAN = """
apiVersion: v1
id: approval
version: 0.1.0
graph:
  - id: ask
    block: rt.ask
    in: {question: "承認しますか？"}
    out: {answer: decision}
  - id: note
    block: text.template
    in:
      template: "回答: {decision}"
      values: {decision: "${ask.decision}"}
    out: {text: message}
exports:
  - {from: note.message, as: message}
"""


def test_the_shipped_example_validates_dry_runs_and_runs(keiri_home: Path) -> None:
    assert runner.invoke(app, ["plan", "validate", str(EXAMPLE)]).exit_code == 0
    dry = runner.invoke(app, ["plan", "dry-run", str(EXAMPLE), "--json"])
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["ok"] is True
    result = runner.invoke(
        app, ["plan", "run", str(EXAMPLE), "--var", "min_amount=50000", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "success"
    ranked = data["outputs"]["ranking"]["ranked"]
    # 45,000 and 30,000 are filtered out; 近畿 has 80,000 + 95,000.
    assert [(r["地域"], r["売上_sum"]) for r in ranked] == [("近畿", 175000), ("関東", 120000)]
    assert Path(data["log_path"]).is_relative_to(keiri_home / "runs")


def test_invalid_plan_lists_every_error_and_exits_1(tmp_path: Path) -> None:
    plan = tmp_path / "bad.yaml"
    plan.write_text(
        """
apiVersion: v1
id: bad
version: 0.1.0
graph:
  - {id: a, block: text.templat, in: {template: x}}
  - {id: b, block: text.join, in: {items: "${a.nothing}", colour: red}}
""",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["plan", "validate", str(plan), "--json"])
    assert result.exit_code == 1
    codes = {issue["code"] for issue in json.loads(result.stdout)["issues"]}
    assert {"UNKNOWN_BLOCK", "UNKNOWN_INPUT"} <= codes


def test_yaml_error_is_reported_with_its_line(tmp_path: Path) -> None:
    plan = tmp_path / "broken.yaml"
    plan.write_text("apiVersion: v1\nid: x\nversion: [\n", encoding="utf-8")
    result = runner.invoke(app, ["plan", "validate", str(plan)])
    assert result.exit_code == 1
    assert "YAML" in result.output or "PLAN_INVALID" in result.output


def test_validate_reports_a_yaml_error_as_an_issue_of_the_report(tmp_path: Path) -> None:
    plan = tmp_path / "broken.yaml"
    plan.write_text("apiVersion: v1\nid: x\nversion: 1.0.0\ngraph: [\n", encoding="utf-8")
    result = runner.invoke(app, ["plan", "validate", str(plan), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and [i["code"] for i in report["issues"]] == ["YAML_SYNTAX"]
    assert report["issues"][0]["details"]["line"] >= 4
    table = runner.invoke(app, ["plan", "validate", str(plan)])
    assert table.exit_code == 1
    assert "YAML_SYNTAX" in table.stdout and " 行目）" in table.stdout


def test_pause_for_input_then_resume_with_an_answers_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(RUNNER_BLOCKS)]))
    plan = tmp_path / "approval.yaml"
    plan.write_text(ASKING_PLAN, encoding="utf-8")
    first = runner.invoke(app, ["plan", "run", str(plan), "--json"])
    assert first.exit_code == 0, first.output
    paused = json.loads(first.stdout)
    assert paused["status"] == "paused"
    assert paused["waiting"][0]["node_id"] == "ask"
    answers = tmp_path / "answers.yaml"
    answers.write_text("ask: {answer: はい}\n", encoding="utf-8")
    second = runner.invoke(
        app, ["plan", "resume", paused["run_id"], "--inputs", str(answers), "--json"]
    )
    assert second.exit_code == 0, second.output
    done = json.loads(second.stdout)
    assert done["status"] == "success"
    assert done["outputs"]["note"]["message"] == "回答: はい"


def test_bad_answers_file_and_bad_var_are_reported(tmp_path: Path) -> None:
    answers = tmp_path / "answers.yaml"
    answers.write_text("- not a mapping\n", encoding="utf-8")
    result = runner.invoke(app, ["plan", "run", str(EXAMPLE), "--inputs", str(answers)])
    assert result.exit_code == 1
    assert "ノード ID ごとの回答の形になっていません" in result.output
    usage = runner.invoke(app, ["plan", "run", str(EXAMPLE), "--var", "no-equals-sign"])
    assert usage.exit_code == 2


def test_unknown_plan_id_and_unknown_run_id(keiri_home: Path) -> None:
    missing = runner.invoke(app, ["plan", "validate", "no_such_plan"])
    assert missing.exit_code == 1
    unknown_run = runner.invoke(app, ["plan", "resume", "run_000000000000"])
    assert unknown_run.exit_code == 1


def test_failed_run_exits_1_with_the_error(tmp_path: Path) -> None:
    plan = tmp_path / "fails.yaml"
    plan.write_text(
        """
apiVersion: v1
id: fails
version: 0.1.0
graph:
  - id: t
    block: text.template
    in: {template: "{missing}", values: {}}
""",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["plan", "run", str(plan)])
    assert result.exit_code == 1
    assert "INPUT_VALIDATION_FAILED" in result.output


LLM_PLAN = """
apiVersion: v1
id: llm_plan
version: 0.1.0
graph:
  - id: accounts
    title: 勘定科目の分類
    block: ai.classify
    in: {records: [{摘要: タクシー}], labels: [旅費交通費]}
    out: {records: rows}
"""


def test_validate_and_dry_run_warn_that_a_plan_needs_an_llm(
    keiri_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "llm_plan.yaml"
    path.write_text(LLM_PLAN, encoding="utf-8")
    checked = runner.invoke(app, ["plan", "validate", str(path), "--json"])
    assert checked.exit_code == 0, checked.output
    codes = {issue["code"]: issue for issue in json.loads(checked.output)["issues"]}
    assert codes["LLM_NOT_CONFIGURED"]["severity"] == "warning"
    dry = runner.invoke(app, ["plan", "dry-run", str(path), "--json"])
    assert dry.exit_code == 0, dry.output
    assert [w["code"] for w in json.loads(dry.output)["warnings"]] == ["LLM_NOT_CONFIGURED"]
    shown = runner.invoke(app, ["plan", "dry-run", str(path)], env={"COLUMNS": "200"})
    assert "LLM_NOT_CONFIGURED" in shown.output and "勘定科目の分類" in shown.output
