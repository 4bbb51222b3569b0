"""``${config.*}`` references the workspace's ``config.yaml`` cannot resolve.

What used to happen: ``plan validate`` (``PlanValidator``, and so ``PlanEngine.check``
and registration) accepted any ``${config.a.b}``; the first sign of a key missing from
``config.yaml`` was the dry run (or the run) failing with UNKNOWN_REFERENCE.

What happens now: the validator is given the config the run will read (``PlanEngine``
passes ``<home>/config.yaml``) and reports a path it cannot follow as
UNKNOWN_REFERENCE (an error), in Japanese, with the keys that exist there as the fix
(``details.choices``, ``closest``). Without a config (``PlanValidator(catalog)``, as the
template library validates) nothing is checked, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.issues import IssueCode

CONFIG = {"company": {"code": 123, "名称": "テスト商事"}, "region": "kanto"}
PLAN_TEXT = """\
apiVersion: v1
id: config_refs
version: 0.1.0
vars: {area: "${config.regoin}"}
graph:
  - id: greeting
    block: text.template
    in: {template: "会社: ${config.company.name} / ${vars.area}"}
exports:
  - {from: greeting.text, as: text}
"""


def _plan(template: str, **extra: Any) -> Plan:
    return Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "t",
            "version": "1.0.0",
            "graph": [{"id": "a", "block": "text.template", "in": {"template": template}}],
            "exports": [{"from": "a.text", "as": "text"}],
            **extra,
        }
    )


def test_a_missing_config_key_is_an_error_listing_the_keys_there() -> None:
    report = PlanValidator(BlockCatalog.discover(), config=CONFIG).validate(
        _plan("${config.company.name}")
    )
    [issue] = report.errors
    assert issue.code == IssueCode.UNKNOWN_REFERENCE
    assert (issue.node_id, issue.path) == ("a", "graph[0].in.template")
    assert "${config.company.name}" in issue.message and "config.yaml" in issue.message
    assert issue.hint is not None and "code" in issue.hint and "名称" in issue.hint
    assert issue.details.name == "name"
    assert issue.details.choices == ("code", "名称")


def test_a_missing_config_key_in_vars_is_reported_at_the_var() -> None:
    plan = _plan("${vars.area}", vars={"area": "${config.regoin}"})
    [issue] = PlanValidator(BlockCatalog.discover(), config=CONFIG).validate(plan).errors
    assert (issue.code, issue.path) == (IssueCode.UNKNOWN_REFERENCE, "vars.area")
    assert issue.details.closest == "region"


def test_config_keys_that_exist_pass_and_no_config_means_no_check() -> None:
    plan = _plan("${config.company.名称} ${config.region} ${config.company}")
    assert PlanValidator(BlockCatalog.discover(), config=CONFIG).validate(plan).ok
    assert PlanValidator(BlockCatalog.discover()).validate(_plan("${config.nothing}")).ok


def test_an_empty_or_absent_config_says_so() -> None:
    [issue] = (
        PlanValidator(BlockCatalog.discover(), config={}).validate(_plan("${config.x}")).errors
    )
    assert "config.yaml" in issue.message
    assert issue.hint is not None and "config.yaml" in issue.hint


def test_plan_validate_reports_it_from_the_workspace_config(
    keiri_home: Path, tmp_path: Path
) -> None:
    (keiri_home / "config.yaml").write_text(
        "company:\n  code: 123\n  名称: テスト商事\nregion: kanto\n", encoding="utf-8"
    )
    plan = tmp_path / "config_refs.yaml"
    plan.write_text(PLAN_TEXT, encoding="utf-8")
    result = CliRunner().invoke(app, ["plan", "validate", str(plan), "--json"])
    assert result.exit_code == 1, result.output
    assert result.output.count("UNKNOWN_REFERENCE") == 2
    fixed = PLAN_TEXT.replace("regoin", "region").replace("company.name", "company.名称")
    plan.write_text(fixed, encoding="utf-8")
    result = CliRunner().invoke(app, ["plan", "validate", str(plan), "--json"])
    assert result.exit_code == 0, result.output
