"""Registering a new version of a Plan that others rely on (issue 30): a major version
bump or a removed var/export used to be registered silently (``PlanStore.compatibility()``
existed; nothing called it) → now refused with the changes listed, unless
``--accept-major``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()


REGISTERED_PLAN = """
apiVersion: v1
id: monthly_note
version: {version}
vars:
{vars}
graph:
  - id: t
    block: text.template
    in: {{template: "月次メモ"}}
    out: {{text: text}}
"""


def _plan_file(folder: Path, version: str, var_names: list[str]) -> Path:
    listed = "\n".join(f"  {name}: ''" for name in var_names) or "  {}"
    path = folder / f"plan_{version}.yaml"
    path.write_text(
        REGISTERED_PLAN.format(version=version, vars=listed).replace("vars:\n  {}", "vars: {}"),
        encoding="utf-8",
    )
    return path


def test_a_breaking_new_version_is_registered_only_with_accept_major(keiri_home: Path) -> None:
    """Issue 30: registering a new version of a Plan that callers may rely on (a major
    version bump, a var or export removed) used to be silent (``compatibility()``
    existed, nothing called it). Now it is refused, naming each change, unless
    ``--accept-major``; a compatible new version is registered with its warnings."""
    first = runner.invoke(
        app, ["plan", "register", str(_plan_file(keiri_home, "1.0.0", ["a", "b"]))]
    )
    assert first.exit_code == 0, first.output
    minor = runner.invoke(
        app, ["plan", "register", str(_plan_file(keiri_home, "1.1.0", ["a", "b"]))]
    )
    assert minor.exit_code == 0, minor.output
    breaking = _plan_file(keiri_home, "2.0.0", ["a"])
    refused = runner.invoke(app, ["plan", "register", str(breaking), "--json"])
    assert refused.exit_code == 1, refused.output
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "BREAKING_CHANGE"
    changes = error["details"]["changes"]
    assert {change["code"] for change in changes} == {"MAJOR_VERSION", "VARS_REMOVED"}
    assert "--accept-major" in (error["hint"] or "")
    assert len(list((keiri_home / "designs").glob("monthly_note_*.yaml"))) == 2
    accepted = runner.invoke(app, ["plan", "register", str(breaking), "--accept-major"])
    assert accepted.exit_code == 0, accepted.output
    assert "メジャーバージョン" in accepted.output  # still said, as a warning
    assert len(list((keiri_home / "designs").glob("monthly_note_*.yaml"))) == 3


ECHO_BLOCK = """
from keiri_agent.blocks.base import ProcessingBlock

class EchoBlock(ProcessingBlock):
    def run(self, inputs, ctx):
        return {"text": inputs["text"] * inputs.get("times", 1)}
"""

ECHO_PLAN = """
apiVersion: v1
id: echo_note
version: 1.0.0
graph:
  - id: e
    block: user.echo
    in: {text: "月次"}
    out: {text: text}
"""


def _echo_spec(folder: Path, version: str) -> None:
    import yaml

    folder.mkdir(exist_ok=True)
    spec = {
        "id": "user.echo",
        "version": version,
        "entrypoint": "echo.py:EchoBlock",
        "description": "repeat text",
        "inputs": {"text": {"type": "string", "required": True, "examples": ["hi"]}},
        "outputs": {"text": {"type": "string"}},
        "dry_run": {"samples": {"inputs": {"text": "hi"}, "outputs": {"text": "hi"}}},
    }
    (folder / "echo.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    (folder / "echo.py").write_text(ECHO_BLOCK, encoding="utf-8")


def test_a_registered_plan_does_not_run_silently_on_a_new_major_version_of_a_block(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: a Plan names its blocks without a version (``block: user.echo``) and
    the catalog gives the newest, so replacing a block's 1.x spec by 2.0.0 changed what
    every registered Plan ran, silently. Now registration pins the major version each
    block was validated with (``user.echo@^1.0.0``): after a major jump the registered
    Plan is refused (``BLOCK_VERSION`` naming the block and the versions there are)
    until someone reviews it and registers it again."""
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", '["my_blocks"]')
    _echo_spec(keiri_home / "my_blocks", "1.0.0")
    source = keiri_home / "echo.yaml"
    source.write_text(ECHO_PLAN, encoding="utf-8")
    registered = runner.invoke(app, ["plan", "register", str(source), "--json"])
    assert registered.exit_code == 0, registered.output
    written = Path(json.loads(registered.stdout)["path"])
    assert "user.echo@^1.0.0" in written.read_text(encoding="utf-8")
    file_id = json.loads(registered.stdout)["file_id"]
    assert runner.invoke(app, ["plan", "run", file_id]).exit_code == 0

    _echo_spec(keiri_home / "my_blocks", "2.0.0")  # the block's next major version
    refused = runner.invoke(app, ["plan", "run", file_id, "--json"])
    assert refused.exit_code == 1, refused.output
    assert "BLOCK_VERSION" in refused.output and "2.0.0" in refused.output
    assert runner.invoke(app, ["plan", "run", str(source)]).exit_code == 0  # the draft
