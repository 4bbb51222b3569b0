"""Secrets and Plans: a catalogue of leaks and what happens now.

* A Plan reads ``${env.OPENAI_API_KEY}`` (or any variable) → used to resolve any
  name of the process environment → now only names on the allow-list
  ``KEIRI_AGENT_PLAN_ENV_ALLOW`` (empty by default); any other is the validation
  error ``ENV_NOT_ALLOWED`` naming the setting.
* A Plan reading a variable that holds a configured key → ``plan run --json`` and
  ``plan dry-run --json`` used to print the key in clear, and a workbook written
  with it kept the key in the run state (base64) → now such a name is refused even
  when allow-listed (decision: refuse at the source, so no key reaches a block,
  a file output, bytes in the state or ``--out``); every ``--json`` form still
  masks a configured key (``***``) as a second line of defence.
* The JSONL run log was created 0644 (readable by every local user) → now 0600
  like the run state.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import load_settings
from keiri_agent.services.jsonforms import dumps

KEY = "Qx7f3e2d1c0b9a8877665544332211ffee"

PLAN = """
apiVersion: v1
id: leak
version: 0.1.0
graph:
  - id: t
    block: text.template
    in: {template: "key={k}", values: {k: "${env.LEAKY_TOKEN}"}}
    out: {text: text}
"""


@pytest.fixture
def plan_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "offline")
    monkeypatch.setenv("LEAKY_TOKEN", KEY)
    path = tmp_path / "leak.yaml"
    path.write_text(PLAN, encoding="utf-8")
    return path


def test_env_outside_the_allow_list_is_a_validation_error_naming_the_setting(
    plan_file: Path,
) -> None:
    result = CliRunner().invoke(app, ["plan", "run", str(plan_file), "--json"])
    assert result.exit_code == 1
    assert "ENV_NOT_ALLOWED" in result.output
    assert "KEIRI_AGENT_PLAN_ENV_ALLOW" in result.output
    assert KEY not in result.output
    dry = CliRunner().invoke(app, ["plan", "validate", str(plan_file), "--json"])
    assert "ENV_NOT_ALLOWED" in dry.output


def test_an_allowed_name_holding_a_configured_key_is_still_refused(
    plan_file: Path, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_PLAN_ENV_ALLOW", "LEAKY_TOKEN, OTHER")
    ran = CliRunner().invoke(app, ["plan", "run", str(plan_file), "--json"])
    assert ran.exit_code == 1
    assert "ENV_NOT_ALLOWED" in ran.output
    dry = CliRunner().invoke(app, ["plan", "dry-run", str(plan_file), "--json"])
    for output in (ran.output, dry.output):
        assert KEY not in output
    for path in (path for path in keiri_home.rglob("*") if path.is_file()):
        assert KEY.encode() not in path.read_bytes(), path


def test_an_allowed_plain_variable_is_read(
    plan_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_TOKEN", "会社コード 0042")
    monkeypatch.setenv("KEIRI_AGENT_PLAN_ENV_ALLOW", "LEAKY_TOKEN")
    ran = CliRunner().invoke(app, ["plan", "run", str(plan_file), "--json"])
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["outputs"]["t"]["text"] == "key=会社コード 0042"


def test_json_forms_mask_a_configured_key_wherever_it_appears() -> None:
    load_settings(openai_api_key=KEY, provider="offline")
    result = {"outputs": {"t": {"text": f"key={KEY}"}}, "errors": [{"message": KEY}]}
    printed = dumps(result)
    assert KEY not in printed
    assert printed.count("***") == 2


def test_the_run_log_is_readable_by_its_owner_only(
    plan_file: Path, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_TOKEN", "plain")
    monkeypatch.setenv("KEIRI_AGENT_PLAN_ENV_ALLOW", "LEAKY_TOKEN")
    ran = CliRunner().invoke(app, ["plan", "run", str(plan_file), "--json"])
    assert ran.exit_code == 0, ran.output
    log = Path(json.loads(ran.stdout)["log_path"])
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


# --- issue 30: a secret var masked by its value, wherever it travels ----------------------

SECRET_PLAN = """
apiVersion: v1
id: secret_vars
version: 0.1.0
vars:
  password: ""
  kouza: ""
  memo: ""
ui:
  vars:
    kouza: {title: 振込先口座番号, secret: true}
graph:
  - id: t
    block: text.template
    in:
      template: "pw={p} / kouza={k} / memo={m}"
      values: {p: "${vars.password}", k: "${vars.kouza}", m: "${vars.memo}"}
    out: {text: text}
"""


def test_a_secret_var_is_masked_by_value_after_it_passes_through_a_node(
    tmp_path: Path, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The value of a var named like a secret (``password``) or declared one
    (``ui.vars.kouza.secret: true``) used to be masked only under its own key: once a
    node had used it, the run log showed it in clear (``"outputs": {"out": "hunter2…"}``).
    Now it is masked wherever it appears — the run log, ``--json``, progress — while
    the run state (owner-only) keeps it, so that the run can be resumed."""
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "offline")
    plan = tmp_path / "secret_vars.yaml"
    plan.write_text(SECRET_PLAN, encoding="utf-8")
    ran = CliRunner().invoke(
        app,
        [
            "plan", "run", str(plan), "--json",
            "--var", "password=hunter2hunter2",
            "--var", "kouza=1234567",
            "--var", "memo=ordinary words",
        ],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    printed = ran.stdout + ran.stderr
    result = json.loads(ran.stdout)
    log = Path(result["log_path"]).read_text(encoding="utf-8")
    for shown in (printed, log):
        assert "hunter2hunter2" not in shown and "1234567" not in shown
        assert "ordinary words" in shown  # only secrets are masked
    assert "pw=*** / kouza=*** / memo=ordinary words" in printed
    states = list((keiri_home / "runs").rglob("*.state.json"))
    assert states and "hunter2hunter2" in states[0].read_text(encoding="utf-8")
