"""Settings: provider choice from the keys, aliases, and where the workspace is."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError


def test_no_key_means_offline() -> None:
    settings = Settings()
    assert settings.llm.active_provider == "offline" and settings.llm.is_offline
    assert "オフライン" in settings.describe()


def test_openai_key_selects_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    settings = Settings()
    assert settings.llm.active_provider == "openai"
    assert "sk-test" not in settings.describe()
    settings.llm.require_llm()


def test_describe_hides_credentials_in_the_base_url() -> None:
    settings = Settings(
        provider="openai-compatible", openai_api_base="https://bob:s3cret@llm.example/v1"
    )
    assert settings.describe() == "openai-compatible: gpt-4o-mini @ https://***@llm.example/v1"
    plain = Settings(provider="openai-compatible", openai_api_base="http://localhost:8000/v1")
    assert plain.describe().endswith("@ http://localhost:8000/v1")


def test_azure_needs_key_and_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    assert Settings().llm.active_provider == "offline"
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.invalid")
    assert Settings().llm.active_provider == "azure"


def test_compatible_provider_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")
    with pytest.raises(ConfigurationError, match="接続先の URL がありません"):
        Settings().llm.require_llm()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    Settings().llm.require_llm()


def test_unknown_provider_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "gemini")
    with pytest.raises(ValueError, match="provider"):
        Settings()


def test_workspace_is_not_taken_from_the_users_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEIRI_AGENT_HOME", raising=False)
    monkeypatch.setenv("HOME", "/somewhere/else")
    assert Settings().storage.home == Path(".")
    monkeypatch.setenv("KEIRI_AGENT_HOME", "/data/keiri")
    assert Settings().storage.home == Path("/data/keiri")
    assert Settings(home=Path("/explicit")).storage.home == Path("/explicit")


def test_limits_are_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_ANALYSIS_TIMEOUT_S", "0")
    with pytest.raises(ValueError, match="analysis_timeout_s"):
        Settings()


def test_building_settings_installs_the_input_bounds_every_reader_checks(tmp_path: Path) -> None:
    from keiri_agent.files.bounds import InputBoundsError, check_csv_text
    from keiri_agent.limits import current_input_limits

    try:
        Settings(home=tmp_path, input_max_columns=3)  # type: ignore[arg-type]
        assert current_input_limits().max_columns == 3
        with pytest.raises(InputBoundsError):
            check_csv_text("a,b,c,d\n1,2,3,4\n", ",", current_input_limits(), lines=2)
    finally:
        Settings(home=tmp_path)  # type: ignore[arg-type]
    assert current_input_limits().max_columns == 2_000


# --- the embeddings endpoint, apart from chat ---------------------------------------------


def test_embeddings_follow_the_chat_provider_unless_set_apart() -> None:
    offline = Settings(provider="offline")
    assert offline.active_embedding_provider is None and not offline.embeddings_configured
    assert not offline.embed_manuals
    chat = Settings(provider="openai-compatible", openai_api_base="http://127.0.0.1:8000/v1")
    assert chat.active_embedding_provider == "openai-compatible"
    assert chat.embedding_url == "http://127.0.0.1:8000/v1" and chat.embed_manuals

    apart = Settings(
        provider="offline",
        embedding_provider="openai-compatible",
        embedding_base_url="http://127.0.0.1:9000/v1",
    )
    assert apart.llm.is_offline and apart.embeddings_configured
    assert apart.embedding_url == "http://127.0.0.1:9000/v1"
    assert apart.embed_manuals
    assert not apart.with_values(helpdesk_embed_manuals=False).embed_manuals


def test_embedding_keys_fall_back_to_the_same_providers_chat_key_only() -> None:
    openai = Settings(provider="offline", embedding_provider="openai", openai_api_key="sk-a")
    assert openai.embedding_key is not None
    assert openai.embedding_key.get_secret_value() == "sk-a"
    # a local server is never sent the OpenAI key of a chat provider it is not
    local = Settings(
        provider="openai",
        openai_api_key="sk-a",
        embedding_provider="openai-compatible",
        embedding_base_url="http://127.0.0.1:9000/v1",
    )
    assert local.embedding_key is None and local.embedding_url == "http://127.0.0.1:9000/v1"
    own = Settings(
        embedding_provider="azure",
        embedding_api_key="e-key",
        azure_openai_endpoint="https://x.invalid",
    )
    assert own.embedding_key is not None and own.embedding_key.get_secret_value() == "e-key"
    assert own.embedding_url == "https://x.invalid" and own.embeddings_configured


@pytest.mark.parametrize(
    ("values", "setting"),
    [
        ({"embedding_provider": "openai-compatible"}, "KEIRI_AGENT_EMBEDDING_BASE_URL"),
        ({"embedding_provider": "openai"}, "KEIRI_AGENT_EMBEDDING_API_KEY"),
        ({"embedding_provider": "azure"}, "AZURE_OPENAI_ENDPOINT"),
        ({"provider": "offline"}, "KEIRI_AGENT_EMBEDDING_PROVIDER"),
    ],
)
def test_incomplete_embeddings_name_the_setting_to_fix(
    values: dict[str, str], setting: str
) -> None:
    settings = Settings(**values)  # type: ignore[arg-type]
    assert not settings.embeddings_configured
    with pytest.raises(ConfigurationError, match="埋め込み") as caught:
        settings.require_embeddings()
    assert setting in (caught.value.hint or "")


def test_describe_shows_the_embeddings_endpoint_without_secrets() -> None:
    settings = Settings(
        provider="offline",
        embedding_provider="openai-compatible",
        embedding_base_url="http://user:pw-secret@127.0.0.1:9000/v1",
        embedding_api_key="emb-secret-key",
        embedding_model="multilingual-e5-small",
    )
    described = settings.describe()
    assert described == (
        "オフライン（ルールベース、LLM なし）、埋め込み openai-compatible: multilingual-e5-small "
        "@ http://***@127.0.0.1:9000/v1"
    )
    assert "emb-secret-key" not in described and "pw-secret" not in described
