"""``plan validate``, ``plan dry-run``, ``plan generate`` and ``plan run`` agree on a
required input fed by a var without a value (REQUIRED_INPUT_NULL_VAR)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()

GREETING = """
apiVersion: v1
id: greeting
version: 1.0.0
vars: {label: null}
graph:
  - id: greet
    title: あいさつ文
    block: text.template
    in: {template: "${vars.label}"}
exports: [{from: greet.text, as: text}]
"""


def test_validate_fails_where_the_dry_run_fails_and_run_takes_the_var(keiri_home: Path) -> None:
    plan = keiri_home / "greeting.yaml"
    plan.write_text(GREETING, encoding="utf-8")
    validated = runner.invoke(app, ["plan", "validate", str(plan), "--json"])
    assert validated.exit_code == 1, validated.output
    [issue] = json.loads(validated.stdout)["issues"]
    assert issue["code"] == "REQUIRED_INPUT_NULL_VAR"
    assert (issue["details"]["node"], issue["details"]["input"], issue["details"]["var"]) == (
        "greet",
        "template",
        "label",
    )
    table = runner.invoke(app, ["plan", "validate", str(plan)])
    assert table.exit_code == 1 and "エラーがあります" in table.stdout
    assert "問題はありません" not in table.stdout
    assert runner.invoke(app, ["plan", "dry-run", str(plan)]).exit_code == 1
    assert runner.invoke(app, ["plan", "dry-run", str(plan), "--var", "label=やあ"]).exit_code == 0

    refused = runner.invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    assert refused.exit_code == 1
    assert "REQUIRED_INPUT_NULL_VAR" in refused.stdout
    ran = runner.invoke(app, ["plan", "run", str(plan), "--var", "label=やあ", "--json"])
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["outputs"]["greet"]["text"] == "やあ"


def test_generate_and_validate_agree_on_a_composed_plan_with_an_open_var(
    keiri_home: Path,
) -> None:
    out = keiri_home / "filter.yaml"
    generated = runner.invoke(
        app,
        ["plan", "generate", "--instruction", "高額の行を抜き出す", "--templates", "filter_rows",
         "--apply-mode", "compose", "--out", str(out), "--json"],
    )  # fmt: skip
    assert generated.exit_code != 0, generated.output  # the verdict picks which code
    codes = [issue["code"] for issue in json.loads(generated.stdout)["validation"]["issues"]]
    assert "REQUIRED_INPUT_NULL_VAR" in codes
    validated = runner.invoke(app, ["plan", "validate", str(out), "--json"])
    assert validated.exit_code == 1
    issues = json.loads(validated.stdout)["issues"]
    assert [i["details"]["var"] for i in issues if i["code"] == "REQUIRED_INPUT_NULL_VAR"] == [
        "records"
    ]
