"""Settings in sections: each field in one typed section under its flat name, so the
environment variables, ``.env``, flat keyword arguments and the configuration errors
are what they were when ``Settings`` was one flat class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices, SecretStr, ValidationError

from keiri_agent import config
from keiri_agent.config import LlmSettings, Settings, load_settings
from keiri_agent.errors import ConfigurationError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def test_every_setting_is_in_one_section_and_read_there_only() -> None:
    counted = sum(len(section.model_fields) for section in config.SECTIONS.values())
    assert counted == len(config.FIELDS) == len(config.SECTION_OF)
    settings = Settings()
    for field, section in config.SECTION_OF.items():
        assert field in type(getattr(settings, section)).model_fields
        assert not hasattr(settings, field), f"{field} is read flat"


def test_the_environment_and_dot_env_land_in_their_sections(
    monkeypatch: pytest.MonkeyPatch, keiri_home: Path
) -> None:
    (keiri_home / ".env").write_text(
        "KEIRI_AGENT_MODEL=from-dotenv\n"
        "KEIRI_AGENT_RESEARCH_MAX_CYCLES=5\n"
        "AZURE_OPENAI_ENDPOINT=https://example.invalid\n"
        "AZURE_OPENAI_API_KEY=azure-key-from-dotenv\n"
        "KEIRI_AGENT_PLAN_ENV_ALLOW=A, B\n"
        "KEIRI_AGENT_LLM=not a setting\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("KEIRI_AGENT_RESEARCH_MAX_CYCLES", "7")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("KEIRI_AGENT_API_CORS_ORIGINS", "http://a.test,http://b.test")
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", '["specs"]')
    monkeypatch.setenv("KEIRI_AGENT_RUN_CONCURRENCY", "3")

    settings = Settings()
    assert settings.llm.model == "from-dotenv"
    assert settings.llm.provider == "azure"  # chosen from the Azure key and endpoint
    assert settings.llm.azure_openai_endpoint == "https://example.invalid"
    assert settings.llm.openai_api_base == "http://127.0.0.1:9/v1"
    assert settings.research.research_max_cycles == 7  # the environment beats .env
    assert settings.plans.plan_env_allow == ("A", "B")
    assert settings.plans.block_spec_dirs == [Path("specs")]
    assert settings.api.api_cors_origins == ("http://a.test", "http://b.test")
    assert settings.runs.run_concurrency == 3
    assert settings.storage.home == keiri_home

    given = Settings(research_max_cycles=2, model="given", OPENAI_BASE_URL="http://127.0.0.1:8/v1")
    assert given.research.research_max_cycles == 2  # arguments beat both
    assert given.llm.model == "given" and given.llm.openai_api_base == "http://127.0.0.1:8/v1"
    assert given.llm.azure_openai_endpoint == "https://example.invalid"

    without_dot_env = Settings(_env_file=None)  # type: ignore[call-arg]
    assert without_dot_env.llm.model == "gpt-4o-mini" and without_dot_env.llm.is_offline
    assert without_dot_env.research.research_max_cycles == 7


def test_flat_names_and_whole_sections_are_taken_as_arguments(tmp_path: Path) -> None:
    settings = Settings(
        provider="offline",
        home=tmp_path,
        research_max_cycles=4,
        max_upload_mb=5,
        api_token=SecretStr("t" * 32),
    )
    assert settings.llm.provider == "offline" and settings.storage.home == tmp_path
    assert settings.research.research_max_cycles == 4
    assert settings.inputs.max_upload_mb == 5
    assert settings.api.api_token is not None
    assert load_settings(max_upload_mb=6, helpdesk_system_name="ABC").inputs.max_upload_mb == 6

    whole = Settings(llm=LlmSettings(model="section"), temperature=0.5)
    assert whole.llm.model == "section" and whole.llm.temperature == 0.5


def test_with_values_is_a_validated_copy() -> None:
    settings = Settings(provider="offline")
    copy = settings.with_values(run_concurrency=3, api_token=SecretStr("t" * 32))
    assert copy.runs.run_concurrency == 3 and copy.api.api_token is not None
    assert settings.runs.run_concurrency == 8 and settings.api.api_token is None
    assert copy.llm == settings.llm
    with pytest.raises(ValidationError, match="KEIRI_AGENT_RUN_HEARTBEAT_S"):
        settings.with_values(run_heartbeat_s=100)
    flat = {"run_concurrency": 3}  # a flat name would be set beside the sections, unread
    with pytest.raises(TypeError, match="with_values"):
        settings.model_copy(update=flat)


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("KEIRI_AGENT_TEMPERATURE", "hot", "KEIRI_AGENT_TEMPERATURE"),
        ("AZURE_OPENAI_API_KEY", "key\u3000pasted", "KEIRI_AGENT_AZURE_OPENAI_API_KEY"),
        ("KEIRI_AGENT_EMBEDDING_BATCH_SIZE", "0", "KEIRI_AGENT_EMBEDDING_BATCH_SIZE"),
        ("KEIRI_AGENT_RESEARCH_AZURE_SEARCH_TOP", "0", "KEIRI_AGENT_RESEARCH_AZURE_SEARCH_TOP"),
        ("KEIRI_AGENT_CLOSED_DAYS", "13-45", "KEIRI_AGENT_CLOSED_DAYS"),
        ("KEIRI_AGENT_PII_FILTER", "fax", "KEIRI_AGENT_PII_FILTER"),
        ("KEIRI_AGENT_API_MAX_BODY_MB", "0", "KEIRI_AGENT_API_MAX_BODY_MB"),
        ("KEIRI_AGENT_RETENTION_DAYS", "0", "KEIRI_AGENT_RETENTION_DAYS"),
    ],
)
def test_an_invalid_value_in_a_section_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert raised.value.message.startswith(f"設定 {named} が不正です: ")
    assert [problem["variable"] for problem in raised.value.details["settings"]] == [named]


def test_a_flat_argument_is_named_by_its_variable_and_a_check_across_fields_keeps_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigurationError, match="設定 KEIRI_AGENT_RESEARCH_MAX_CYCLES が不正"):
        load_settings(research_max_cycles=0)
    monkeypatch.setenv("KEIRI_AGENT_RUN_HEARTBEAT_S", "20")
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert "実行の心拍の間隔（20.0 秒）" in raised.value.message
    assert "KEIRI_AGENT_RUN_HEARTBEAT_S を小さくするか" in raised.value.message


def _documented_by_section() -> dict[str, str]:
    """Each variable docs/configuration.md names → the section heading it is under
    (``_TEXT_FIELD`` after a full name stands for that name's prefix + ``_TEXT_FIELD``)."""
    found: dict[str, str] = {}
    section = ""
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"### `(\w+)`", line)
        if heading:
            section = heading.group(1)
        elif line.startswith("| ") and section:
            names = re.findall(r"`([A-Z_][A-Z0-9_]+)`", line.split(" | ")[1])
            full = ""
            for name in names:
                if name.startswith("_") and full:
                    name = full[: full.rindex("_", 0, full.rindex("_"))] + name
                else:
                    full = name
                found[name] = section
        elif line.startswith("## "):
            section = ""
    return found


def _variables(field: str) -> set[str]:
    """The variables a field is read from: its ``KEIRI_AGENT_`` name and any aliases."""
    alias = config.FIELDS[field].validation_alias
    choices = alias.choices if isinstance(alias, AliasChoices) else ()
    return {config.env_name(field), *(choice for choice in choices if isinstance(choice, str))}


def test_every_variable_is_documented_under_its_section() -> None:
    documented = _documented_by_section()
    for field, section in config.SECTION_OF.items():
        places = {documented.get(variable) for variable in _variables(field)}
        assert section in places, f"{config.env_name(field)} ({section}) in {DOCS.name}"
        assert places <= {section, None}, f"{config.env_name(field)} is documented elsewhere"
