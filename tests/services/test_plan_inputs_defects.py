"""The two defects of issue 9 seen from the surfaces: a bad var value must stop the run
with an error naming the variable (never run with the default or the raw text), and
``plan migrate`` must find a plan by id the way every other command does."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "designs" / "examples" / "sales_by_region.yaml"
APP = str(REPO / "src" / "keiri_agent" / "ui" / "app.py")
LEGACY = REPO / "tests" / "plans" / "data" / "legacy" / "single_upload.yaml"
VARS = """\
apiVersion: v1
id: vars_demo
version: 0.1.0
vars: {greeting: "こんにちは", tags: [a, b]}
graph:
  - id: message
    block: text.template
    in:
      template: "{greeting} {tags}"
      values: {greeting: "${vars.greeting}", tags: "${vars.tags}"}
    out:
      text: text
"""


def test_cli_var_with_invalid_yaml_is_an_error_naming_the_variable(keiri_home: Path) -> None:
    result = runner.invoke(app, ["plan", "run", str(EXAMPLE), "--var", "min_amount=[1, 2"])
    assert result.exit_code == 2, result.output
    assert "min_amount" in result.output
    assert "YAML" in result.output
    assert not (keiri_home / "runs").exists()  # nothing ran


def test_page_var_with_invalid_yaml_refuses_to_run(keiri_home: Path) -> None:
    designs = keiri_home / "designs"
    designs.mkdir()
    (designs / "vars_demo.yaml").write_text(VARS, encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("run_page.py").run()
    at.text_area(key="run.vars.vars_demo.tags").input("[x, y").run()
    next(b for b in at.button if b.label == "実行").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("tags" in e and "YAML" in e for e in errors), errors
    assert not any("こんにちは" in str(t.value) for t in at.text)  # no run with the default
    assert "run.state" not in at.session_state


def test_migrate_finds_a_registered_version_by_plan_id(keiri_home: Path) -> None:
    designs = keiri_home / "designs"
    designs.mkdir()
    registered = designs / "single_upload_202501011200.yaml"  # a registered version only
    registered.write_text(LEGACY.read_text(encoding="utf-8"), encoding="utf-8")

    result = runner.invoke(app, ["plan", "migrate", "single_upload", "--json"])
    assert result.exit_code == 0, result.output
    assert '"changed": true' in result.stdout
    assert str(registered) in result.stdout


def test_migrate_of_an_unknown_id_lists_the_known_plans(keiri_home: Path) -> None:
    designs = keiri_home / "designs"
    designs.mkdir()
    (designs / "known.yaml").write_text(LEGACY.read_text(encoding="utf-8"), encoding="utf-8")
    result = runner.invoke(app, ["plan", "migrate", "no_such_plan"])
    assert result.exit_code == 1
    assert "PLAN_NOT_FOUND" in result.output
