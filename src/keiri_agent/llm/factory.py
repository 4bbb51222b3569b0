"""Build the configured chat model and embeddings from ``Settings``.

Every client gets the configured timeout (``request_timeout_s``) and retry budget
(``max_retries``). Retries are the openai SDK's own: it retries 408, 409, 429,
5xx and connection errors/timeouts, honouring a server's ``Retry-After``.
The SDK's first backoff is a fixed 0.5 s; we replace its delay computation on
our client instances so that ``retry_backoff_s`` is the first delay, doubling
on each retry (capped at ``MAX_BACKOFF_S``, with up to 25 % jitter).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from keiri_agent.config import Settings
from keiri_agent.llm.embedding_roles import RoleEmbeddings

if TYPE_CHECKING:  # langchain_openai (and openai) load when a provider is built
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel
    from langchain_openai import OpenAIEmbeddings

MAX_BACKOFF_S = 30.0
"""Upper bound of one computed backoff delay (a server's Retry-After may be longer)."""

MAX_RETRY_AFTER_S = 120.0
"""A server-directed delay longer than this is not honoured (the SDK then gives up)."""

PLACEHOLDER_API_KEY = "not-needed"
"""Sent to OpenAI-compatible servers that need no key (the SDK insists on one)."""


def chat_model(settings: Settings) -> BaseChatModel:
    """The chat model for the configured provider.

    Args:
        settings: Provider, model, keys, base URL, timeout and retry settings.

    Returns:
        A ``ChatOpenAI`` (openai, openai-compatible) or ``AzureChatOpenAI`` (azure),
        with ``bind_tools`` and ``with_structured_output`` available.

    Raises:
        ConfigurationError: The provider is ``offline`` or is missing a key,
            endpoint or base URL.
    """
    settings.llm.require_llm()
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

    from keiri_agent.llm.async_http import async_client

    common: dict[str, Any] = {
        "http_async_client": async_client(settings.llm.request_timeout_s),
        "timeout": settings.llm.request_timeout_s,
        "max_retries": settings.llm.max_retries,
        "temperature": settings.llm.temperature,
    }
    model: ChatOpenAI | AzureChatOpenAI
    if settings.llm.active_provider == "azure":
        model = AzureChatOpenAI(
            model=settings.llm.model,
            azure_deployment=settings.llm.azure_openai_deployment or settings.llm.model,
            azure_endpoint=settings.llm.azure_openai_endpoint,
            api_version=settings.llm.azure_openai_api_version,
            api_key=settings.llm.azure_openai_api_key,
            **common,
        )
    else:
        compatible = settings.llm.active_provider == "openai-compatible"
        model = ChatOpenAI(
            model=settings.llm.model,
            api_key=_openai_key(settings),
            base_url=settings.llm.openai_api_base,
            # Compatible servers (vLLM, Ollama, ...) speak chat completions; never
            # route them to the Responses API, whatever the model name.
            use_responses_api=False if compatible else None,
            **common,
        )
    for client in (model.root_client, model.root_async_client):
        install_backoff(client, settings.llm.retry_backoff_s)
    return model


def embeddings(settings: Settings) -> Embeddings:
    """The embeddings model of the configured embeddings endpoint.

    The endpoint is ``settings.active_embedding_provider`` (``embedding_provider``,
    else the chat provider's) at ``settings.embedding_url`` with
    ``settings.embedding_key``; chat may be offline meanwhile.
    ``settings.embeddings.embedding_model`` is the model name (Azure: the deployment name).
    For openai-compatible servers the texts are sent as strings, not tiktoken
    token arrays (``check_embedding_ctx_length=False``), which such servers expect.
    With query/passage prefixes or ``embedding_input_type`` the model is wrapped in
    a :class:`~keiri_agent.llm.embedding_roles.RoleEmbeddings`: indexed texts go as
    passages, searches as queries.

    Raises:
        ConfigurationError: No embeddings endpoint, or one missing a key, endpoint
            or base URL.
    """
    settings.require_embeddings()
    from langchain_openai import AzureOpenAIEmbeddings, OpenAIEmbeddings

    from keiri_agent.llm.async_http import async_client

    common: dict[str, Any] = {
        "http_async_client": async_client(settings.llm.request_timeout_s),
        "timeout": settings.llm.request_timeout_s,
        "max_retries": settings.llm.max_retries,
    }
    provider = settings.active_embedding_provider
    model: OpenAIEmbeddings
    if provider == "azure":
        model = AzureOpenAIEmbeddings(
            model=settings.embeddings.embedding_model,
            azure_deployment=settings.embeddings.embedding_model,
            azure_endpoint=settings.embedding_url,
            api_version=settings.llm.azure_openai_api_version,
            api_key=settings.embedding_key,
            **common,
        )
    else:
        model = OpenAIEmbeddings(
            model=settings.embeddings.embedding_model,
            api_key=settings.embedding_key or SecretStr(PLACEHOLDER_API_KEY),
            base_url=settings.embedding_url,
            check_embedding_ctx_length=provider != "openai-compatible",
            **common,
        )
    for resource in (model.client, model.async_client):
        install_backoff(getattr(resource, "_client", None), settings.llm.retry_backoff_s)
    if (
        settings.embeddings.embedding_query_prefix
        or settings.embeddings.embedding_passage_prefix
        or settings.embeddings.embedding_input_type
    ):
        return RoleEmbeddings(
            model,
            query_prefix=settings.embeddings.embedding_query_prefix,
            passage_prefix=settings.embeddings.embedding_passage_prefix,
            input_type=settings.embeddings.embedding_input_type,
        )
    return model


def install_backoff(client: Any, initial_backoff_s: float) -> None:
    """Make an openai SDK client wait ``initial_backoff_s * 2**n`` before retry ``n``.

    The SDK computes its wait in ``_calculate_retry_timeout``; this replaces it
    on the given instance only. A server's ``Retry-After`` (up to two minutes) is
    still honoured. ``None`` (no client built, e.g. missing key) is ignored.
    """
    if client is None or not hasattr(client, "_calculate_retry_timeout"):
        return

    def calculate_retry_timeout(
        remaining_retries: int, options: Any, response_headers: Any = None
    ) -> float:
        retry_after = client._parse_retry_after_header(response_headers)
        if retry_after is not None and 0 < retry_after <= MAX_RETRY_AFTER_S:
            return float(retry_after)
        retries_done = options.get_max_retries(client.max_retries) - remaining_retries
        delay = min(initial_backoff_s * 2.0 ** min(retries_done, 30), MAX_BACKOFF_S)
        return delay * (1 - 0.25 * random.random())

    client._calculate_retry_timeout = calculate_retry_timeout


def _openai_key(settings: Settings) -> SecretStr:
    """The OpenAI key, or a placeholder for compatible servers that need none."""
    if settings.llm.openai_api_key is not None:
        return settings.llm.openai_api_key
    return SecretStr(PLACEHOLDER_API_KEY)
