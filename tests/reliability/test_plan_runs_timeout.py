"""A Plan node that never finishes: the default policy bounds it.

A block that hangs (a parser stuck on a hostile file, a network call that never
returns) under a plan without ``policy.timeout_ms`` → used to: the default was
no timeout, so the run waited forever → now: the default policy has a finite
per-attempt timeout (``DEFAULT_TIMEOUT_MS``, 30 minutes, documented in
docs/plans.md); past it the node fails with ``TIMEOUT_ERROR`` and its cancel event
is set, so a cooperative block stops its work too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.plans.dsl import models
from keiri_agent.plans.dsl.models import DEFAULT_TIMEOUT_MS, Plan, Policy

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "tests" / "plans" / "data" / "lock_blocks"


def test_the_default_policy_has_a_finite_node_timeout() -> None:
    node = {"id": "n", "block": "text.template", "in": {"template": "x"}}
    plan = Plan.model_validate({"apiVersion": "v1", "id": "p", "version": "1.0.0", "graph": [node]})
    assert plan.policy.timeout_ms == DEFAULT_TIMEOUT_MS == 30 * 60 * 1000


def test_a_block_past_the_default_timeout_fails_with_timeout_error(
    keiri_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same default, shortened so that the test does not wait 30 minutes
    monkeypatch.setattr(Policy.model_fields["timeout_ms"], "default", 300)
    Policy.model_rebuild(force=True)
    Plan.model_rebuild(force=True)
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(SPEC_DIR)]))
    gate = tmp_path / "gate"  # rt.hold waits until gate/release exists: it never will
    gate.mkdir()
    plan = tmp_path / "hang.yaml"
    plan.write_text(
        "apiVersion: v1\nid: hang\nversion: 0.1.0\ngraph:\n"
        f"  - {{id: hold, block: rt.hold, in: {{gate: '{gate.as_posix()}', timeout_s: 60}}}}\n",
        encoding="utf-8",
    )
    try:
        result = CliRunner().invoke(app, ["plan", "run", str(plan), "--json", "--no-prompt"])
    finally:
        monkeypatch.undo()
        Policy.model_rebuild(force=True)
        Plan.model_rebuild(force=True)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "failed"
    assert data["errors"][0]["code"] == "TIMEOUT_ERROR"
    assert models.Policy().timeout_ms == DEFAULT_TIMEOUT_MS
