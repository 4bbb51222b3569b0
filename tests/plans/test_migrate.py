"""plans.dsl.migrate and `keiri-agent plan migrate`: legacy UI blocks → ui.interactive_input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.dry_run import dry_run
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.dsl.migrate import migrate_plan_text
from keiri_agent.plans.run.runner import PlanRunner

LEGACY = Path(__file__).parent / "data" / "legacy"
cli = CliRunner()


@pytest.fixture(scope="module")
def catalog() -> BlockCatalog:
    return BlockCatalog.discover()


def migrated(name: str) -> tuple[dict[str, Any], list[str], str]:
    text, changes = migrate_plan_text((LEGACY / name).read_text(encoding="utf-8"))
    return yaml.safe_load(text), changes, text


def nodes(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["id"]: node for node in data["graph"]}


@pytest.mark.parametrize("name", sorted(p.name for p in LEGACY.glob("*.yaml")))
def test_migrated_sample_plans_validate_and_dry_run(catalog: BlockCatalog, name: str) -> None:
    _, changes, text = migrated(name)
    assert changes and not any(change.startswith("MANUAL") for change in changes)
    plan = load_plan_text(text, source=name)
    report = PlanValidator(catalog, env={}).validate(plan)
    assert list(report.errors) == []
    assert dry_run(plan, catalog, env={}).ok
    assert "ui.file_uploader" not in text and "ui.confirmation" not in text


def test_multiple_uploader_and_confirmation_keep_aliases_and_rewrite_references() -> None:
    data, changes, _ = migrated("upload_and_confirm.yaml")
    graph = nodes(data)
    assert graph["upload"] == {
        "id": "upload",
        "block": "ui.interactive_input@^1",
        "in": {
            "mode": "collect",
            "requirements": [
                {"id": "files", "type": "files", "label": "売上ファイル", "accept": ".xlsx,.csv"}
            ],
        },
        "out": {"collected_data": "uploaded"},
    }
    assert graph["confirm"]["in"] == {
        "mode": "confirm",
        "message": "${upload.uploaded.files.length} 件のファイルを処理しますか？",
    }
    assert graph["confirm"]["out"] == {"approved": "ok"}
    assert graph["summary"]["when"] == {"expr": "${confirm.ok} == true"}
    assert graph["summary"]["in"]["values"] == {
        "count": "${upload.uploaded.files.length}",
        "first": "${upload.uploaded.files.0}",
    }
    assert data["ui"] == {"layout": ["upload", "confirm", "summary"]}
    assert any("upload: ui.file_uploader → ui.interactive_input@^1" in c for c in changes)


def test_single_uploader_without_out_and_versioned_ids(catalog: BlockCatalog) -> None:
    data, _, _ = migrated("single_upload.yaml")
    graph = nodes(data)
    assert graph["get_zip"]["in"]["requirements"] == [
        {"id": "file", "type": "file", "label": "証跡ZIP", "accept": ".zip"}
    ]
    assert graph["get_zip"]["out"] == {"collected_data": "file"}
    assert graph["ask_ok"]["out"] == {"approved": "approved"}
    assert graph["report"]["when"]["expr"] == "${ask_ok.approved} and ${get_zip.file.file} != null"


def test_references_that_cannot_be_expressed_are_reported_not_dropped() -> None:
    text = """
apiVersion: v1
id: p
version: 1.0.0
graph:
  - id: up
    block: ui.file_uploader@1.0.0
    in: {label: x, extra: 1}
  - id: count
    block: text.template
    in: {template: "{n}", values: {n: "${up.files.length}"}}
exports:
  - {from: up.file, as: the_file}
"""
    new_text, changes = migrate_plan_text(text)
    manual = [change for change in changes if change.startswith("MANUAL")]
    assert len(manual) == 3  # the extra input, ${up.files}, the export
    data = yaml.safe_load(new_text)
    assert data["graph"][1]["in"]["values"]["n"] == "${up.files.length}"
    assert data["graph"][0]["in"]["extra"] == 1


def test_loop_bodies_are_migrated() -> None:
    text = """
apiVersion: v1
id: p
version: 1.0.0
graph:
  - id: again
    type: loop
    while: {condition: {expr: "${ok_step.approved} != true"}, max_iterations: 3}
    body:
      plan:
        graph:
          - id: ok_step
            block: ui.confirmation
            in: {message: 確認}
"""
    new_text, changes = migrate_plan_text(text)
    body = yaml.safe_load(new_text)["graph"][0]["body"]["plan"]["graph"][0]
    assert body["block"] == "ui.interactive_input@^1" and body["in"]["mode"] == "confirm"
    assert len(changes) == 1


def test_a_plan_without_legacy_blocks_is_unchanged() -> None:
    text = "apiVersion: v1\nid: p\nversion: 1.0.0  # keep me\ngraph: []\n"
    assert migrate_plan_text(text) == (text, [])


@pytest.mark.parametrize("text", ["a: [", "- 1\n- 2\n"])
def test_bad_yaml_is_a_user_error(text: str) -> None:
    with pytest.raises(UserInputError):
        migrate_plan_text(text)


@pytest.mark.parametrize("migrate", [False, True], ids=["legacy", "migrated"])
def test_legacy_and_migrated_plans_run_with_the_same_answers(
    catalog: BlockCatalog, tmp_path: Path, migrate: bool
) -> None:
    text = (LEGACY / "upload_and_confirm.yaml").read_text(encoding="utf-8")
    if migrate:
        text = migrate_plan_text(text)[0]
    runner = PlanRunner(catalog, Settings(), runs_dir=tmp_path, env={})
    files = [{"name": "a.xlsx", "data": b"1"}, {"name": "b.csv", "data": b"2"}]
    result = runner.start(
        load_plan_text(text),
        answers={"upload": {"files": files}, "confirm": {"approved": True}},
    )
    assert result.status == "success", result.errors
    assert result.outputs["summary"]["summary_text"].startswith("files=2 first=")


def test_cli_migrate_prints_changes_and_writes_only_with_write(tmp_path: Path) -> None:
    plan = tmp_path / "upload_and_confirm.yaml"
    shutil.copy(LEGACY / "upload_and_confirm.yaml", plan)
    original = plan.read_text(encoding="utf-8")

    shown = cli.invoke(app, ["plan", "migrate", str(plan)])
    assert shown.exit_code == 0, shown.output
    assert "ui.interactive_input" in shown.output and "--write" in shown.output
    assert plan.read_text(encoding="utf-8") == original

    as_json = cli.invoke(app, ["plan", "migrate", str(plan), "--json"])
    report = json.loads(as_json.output)
    assert report["changed"] is True and report["written"] is False
    assert report["diff"].startswith("---") and len(report["changes"]) == 4

    written = cli.invoke(app, ["plan", "migrate", str(plan), "--write", "--json"])
    assert written.exit_code == 0, written.output
    report = json.loads(written.output)
    assert report["written"] is True
    assert Path(report["backup"]).read_text(encoding="utf-8") == original
    assert "ui.interactive_input@^1" in plan.read_text(encoding="utf-8")
    assert cli.invoke(app, ["plan", "validate", str(plan)]).exit_code == 0

    again = cli.invoke(app, ["plan", "migrate", str(plan), "--write"])
    assert again.exit_code == 0 and "nothing to migrate" in again.output


def test_cli_migrate_missing_file_fails(tmp_path: Path) -> None:
    result = cli.invoke(app, ["plan", "migrate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1


def test_a_reference_shared_through_a_yaml_anchor_is_rewritten_once() -> None:
    source = """\
apiVersion: v1
id: m
version: 0.1.0
graph:
  - id: up
    block: ui.file_uploader
    in: {label: 請求書, multiple: true}
  - id: a
    block: text.template
    in: &shared
      template: "{n}"
      values: {n: "${up.files}"}
  - id: b
    block: text.template
    in: *shared
"""
    new_text, _ = migrate_plan_text(source)
    plan = load_plan_text(new_text)
    values = [node.inputs["values"]["n"] for node in plan.graph if node.id in ("a", "b")]
    # the uploader's files are now field "files" of its collected_data (alias "files")
    assert values == ["${up.files.files}"] * 2  # not ${up.files.files.files}
