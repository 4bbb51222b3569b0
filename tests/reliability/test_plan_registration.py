"""Registering a new version of a Plan that others rely on (issue 30): a major version
bump or a removed var/export used to be registered silently (``PlanStore.compatibility()``
existed; nothing called it) → now refused with the changes listed, unless
``--accept-major``."""

from __future__ import annotations

import json
from pathlib import Path

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
