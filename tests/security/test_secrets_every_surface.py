"""A key never leaves the process: every product surface, then a grep of everything.

Attack: a configured API key that the provider echoes back (401 "Incorrect API key
provided: <key>"), that a Plan tries to read with ``${env.*}`` and that sits in the
environment of every command. Used to happen: ``analyze`` printed the key and
stored it in ``checkpoints.db``; ``helpdesk ask`` printed it twice; ``plan run
--json`` / ``plan dry-run --json`` printed it in clear; the JSONL log and the state
could hold it. Now: every output of every command and every file the commands leave
under the workspace or ``--out`` is free of the key, of its base64 (at any
alignment) and of it inside any ZIP/XLSX member.
"""

from __future__ import annotations

import base64
import io
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.llm.testing import ECHO_KEY, StubError, StubOpenAIServer

KEY = "Kx9wQ2mZ7pL4vB8nR3tY6uE1oI5aS0dF"

PLAN = """
apiVersion: v1
id: surfaces
version: 0.1.0
graph:
  - id: t
    block: text.template
    in: {template: "key={k}", values: {k: "${env.SURFACE_TOKEN}"}}
    out: {text: text}
"""


def _needles() -> list[bytes]:
    """The key, and its base64 at the three alignments it can have inside a blob."""
    needles = [KEY.encode()]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + KEY.encode())
        # drop the characters that depend on the bytes around the key
        start = (offset * 4 + 2) // 3 + 1
        needles.append(encoded[start:-4])
    return needles


def _contents(path: Path) -> list[bytes]:
    data = path.read_bytes()
    contents = [data]
    if data.startswith(b"PK"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                contents += [archive.read(name) for name in archive.namelist()]
        except zipfile.BadZipFile:
            pass
    return contents


def _assert_clean(label: str, data: bytes) -> None:
    for needle in _needles():
        assert needle not in data, f"the key (or its base64) is in {label}"


def test_no_surface_shows_or_stores_the_key(
    tmp_path: Path, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "売上.csv"
    pd.DataFrame({"地域": ["関東", "近畿"], "売上": [100, 250]}).to_csv(data, index=False)
    plan = tmp_path / "surfaces.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    plain = tmp_path / "plain.yaml"
    plain.write_text(PLAN.replace("surfaces", "plain").replace("SURFACE_TOKEN", "PLAIN"), "utf-8")
    out = tmp_path / "out"
    echo = StubError(401, f"Incorrect API key provided: {ECHO_KEY}. You can find your key…")
    commands = [
        ["analyze", str(data), "地域別の売上合計", "--json", "--out", str(out / "analyze")],
        ["analyze", str(data), "地域別の売上合計"],
        ["helpdesk", "index", "--sample", "--json"],
        ["helpdesk", "ask", "パスワードの条件は？", "--json"],
        ["helpdesk", "ask", "パスワードの条件は？"],
        ["plan", "validate", str(plan), "--json"],
        ["plan", "dry-run", str(plan), "--json"],
        ["plan", "run", str(plan), "--json", "--out", str(out / "plan")],
        ["plan", "run", str(plan)],
        ["plan", "run", str(plain), "--json", "--out", str(out / "plain")],
    ]
    outputs: dict[str, str] = {}
    with StubOpenAIServer([echo] * 50) as server:
        monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")
        monkeypatch.setenv("KEIRI_AGENT_OPENAI_API_BASE", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("SURFACE_TOKEN", KEY)
        monkeypatch.setenv("PLAIN", "会社コード 0042")
        monkeypatch.setenv("KEIRI_AGENT_PLAN_ENV_ALLOW", "SURFACE_TOKEN,PLAIN")
        monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
        for command in commands:
            result = CliRunner().invoke(app, command)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                command,
                repr(result.exception),
            )
            outputs[" ".join(command)] = result.output
        assert len(server.chat_requests) >= 2  # the provider was asked, and echoed the key
    assert any("401" in output for output in outputs.values())
    for label, output in outputs.items():
        assert "Traceback" not in output, label
        _assert_clean(f"the output of {label!r}", output.encode())
    files = [path for path in (*keiri_home.rglob("*"), *tmp_path.rglob("*")) if path.is_file()]
    assert any(path.name.endswith(".db") for path in files), "the checkpoint DB is checked"
    assert any(path.suffix == ".jsonl" for path in files), "the run log is checked"
    for path in files:
        for content in _contents(path):
            _assert_clean(str(path), content)
