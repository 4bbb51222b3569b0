"""Secrets in settings and LLM errors: a catalogue of leaks and what happens now.

* A settings secret not registered for masking (only the OpenAI/Azure keys were,
  and only by the Plan runner) → every ``SecretStr`` field and the password of
  every URL field (``KEIRI_AGENT_DATABASE_URL``) is registered when settings load.
* A key with a stray full-width space (U+3000) → used to give a
  ``UnicodeEncodeError`` traceback on the first request → now a configuration
  error naming the variable, without the key.
* A key pasted into a non-secret variable → used to be echoed by the
  configuration error → now shown as ``***``.
* An absurd ``KEIRI_AGENT_ANALYSIS_MEMORY_MB`` → used to be accepted, then every
  action failed → now a configuration error naming the variable.
* A provider's 401 "Incorrect API key provided: <key>" → ``analyze`` used to
  print the key and store it in ``checkpoints.db`` → masked everywhere.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import FIELDS, load_settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.llm.testing import ECHO_KEY, StubError, StubOpenAIServer
from keiri_agent.masking import MASK, mask_text


def _secret_fields() -> list[str]:
    return [
        name for name, info in FIELDS.items() if info.annotation in (SecretStr, SecretStr | None)
    ]


def _string_fields() -> list[str]:
    return [name for name, info in FIELDS.items() if info.annotation in (str, str | None)]


def test_there_are_secret_fields_to_check() -> None:
    assert {"openai_api_key", "azure_openai_api_key", "qdrant_api_key"} <= set(_secret_fields())


@pytest.mark.parametrize("field", _secret_fields())
def test_every_secret_field_is_masked_once_settings_load(field: str) -> None:
    value = f"Zq{field.replace('_', '')}9x8w7v"
    load_settings(**{field: value})
    assert mask_text(f"error: {value} was refused") == f"error: {MASK} was refused"


@pytest.mark.parametrize("field", _string_fields())
def test_a_password_inside_any_url_setting_is_masked(field: str) -> None:
    password = f"Pw{field.replace('_', '')}Q7r"
    try:
        load_settings(**{field: f"postgresql+psycopg://keiri:{password}@db.example:5432/keiri"})
    except ConfigurationError:
        pytest.skip(f"{field} does not take a URL")
    assert password not in mask_text(f"cannot connect: keiri:{password}@db.example")


def test_a_key_with_a_full_width_space_is_a_clear_configuration_error() -> None:
    key = "sk-proj-Uu1Xj2Kk3Ll4Mm5Nn6Oo7"
    with pytest.raises(ConfigurationError) as info:
        load_settings(openai_api_key=f"{key}\u3000")
    text = str(info.value) + str(info.value.to_dict())
    assert "KEIRI_AGENT_OPENAI_API_KEY" in text
    assert key not in text


def test_a_key_pasted_into_a_non_secret_variable_is_not_echoed() -> None:
    key = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"  # an Azure-shaped key, not sk-...
    with pytest.raises(ConfigurationError) as info:
        load_settings(max_retries=key)
    text = str(info.value) + str(info.value.to_dict())
    assert "KEIRI_AGENT_MAX_RETRIES" in text
    assert key not in text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("analysis_memory_mb", 10**12),
        ("analysis_timeout_s", 10**9),
        ("request_timeout_s", 10**9),
        ("max_upload_mb", 10**12),
    ],
)
def test_absurd_limits_are_refused_with_the_variable_named(field: str, value: int) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_settings(**{field: value})
    assert f"KEIRI_AGENT_{field.upper()}" in info.value.message


def test_analyze_never_shows_or_stores_a_key_the_provider_echoes(
    tmp_path: Path, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "9a8b7c6d5e4f30211203f4e5d6c7b8a9"  # not shaped like sk-...: masked as registered
    data = tmp_path / "売上.csv"
    pd.DataFrame({"地域": ["関東", "近畿"], "売上": [100, 250]}).to_csv(data, index=False)
    reply = StubError(401, f"Incorrect API key provided: {ECHO_KEY}.")
    with StubOpenAIServer([reply] * 4) as server:
        monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")
        monkeypatch.setenv("KEIRI_AGENT_OPENAI_API_BASE", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
        result = CliRunner().invoke(app, ["analyze", str(data), "地域別の売上合計", "--json"])
        assert server.chat_requests, result.output
    assert "Traceback" not in result.output
    assert "401" in result.output
    assert key not in result.output
    stored = [path for path in keiri_home.rglob("*") if path.is_file()]
    assert stored, "analyze stores its checkpoints under the workspace"
    for path in stored:
        assert key.encode() not in path.read_bytes(), path


def test_helpdesk_ask_never_shows_or_stores_a_key_the_provider_echoes(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "b1c2d3e4f5a6978812345678abcdef90"
    reply = StubError(401, f"Incorrect API key provided: {ECHO_KEY}.")
    with StubOpenAIServer([reply] * 4) as server:
        monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")
        monkeypatch.setenv("KEIRI_AGENT_OPENAI_API_BASE", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
        indexed = CliRunner().invoke(app, ["helpdesk", "index", "--sample"])
        assert indexed.exit_code == 0, indexed.output
        result = CliRunner().invoke(app, ["helpdesk", "ask", "パスワードの条件は？"])
        assert server.chat_requests
    assert result.exit_code == 1
    assert "401" in result.output
    assert key not in result.output
    for path in (path for path in keiri_home.rglob("*") if path.is_file()):
        assert key.encode() not in path.read_bytes(), path
