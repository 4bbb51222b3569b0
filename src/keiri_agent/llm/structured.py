"""Structured output with bounded re-asks, service-error translation and prompts.

``invoke_structured`` asks the model for an instance of a Pydantic schema. When
the reply does not validate, the model's reply and the validation error are fed
back to it and it is asked again, at most ``reasks`` times; then an ``LLMError``
carries the last error. Errors of the model service itself (after the openai
SDK's own retries) become an ``LLMError`` with a hint.

``render_prompt`` fills a ``str.format`` template and fails loudly when a
placeholder has no value or a value has no placeholder.
"""

from __future__ import annotations

import email.utils
import math
import string
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, ValidationError

from keiri_agent.config import without_credentials
from keiri_agent.errors import LLMError
from keiri_agent.masking import mask_text

if TYPE_CHECKING:  # openai loads with a provider (llm.factory) or an error to handle
    import openai
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable

SchemaT = TypeVar("SchemaT", bound=BaseModel)

SERVICE_HINT = (
    "LLM の設定（API キー、接続先 URL、モデル名）を確かめてください。"
    "設定は設定ファイル .env か環境変数（OPENAI_API_KEY など）にあります"
)

MALFORMED_REPLY_ERRORS: tuple[type[Exception], ...] = (ValueError, LookupError, TypeError)
"""What the openai SDK and LangChain raise on a reply that is not a chat completion
(an HTML page with status 200, JSON without ``choices``, JSON cut off midway)."""

OPENAI_ENDPOINT = "https://api.openai.com/v1"


def invoke_structured(
    model: BaseChatModel,
    schema: type[SchemaT],
    messages: Sequence[BaseMessage],
    *,
    method: str = "function_calling",
    reasks: int = 2,
) -> SchemaT:
    """Ask ``model`` for a ``schema`` instance, re-asking when the reply is invalid.

    Args:
        model: Any chat model supporting ``with_structured_output``.
        schema: The Pydantic model the answer must validate against.
        messages: The conversation so far (not modified).
        method: ``function_calling``, ``json_schema`` or ``json_mode``.
        reasks: How many times to re-ask after an invalid reply.

    Returns:
        The validated instance.

    Raises:
        LLMError: The service failed, or every reply was invalid
            (``details["validation_error"]`` holds the last error).
    """
    runnable = _structured_runnable(model, schema, method)
    conversation = list(messages)
    reasks = max(0, reasks)
    for attempt in range(reasks + 1):
        with model_errors(model):
            result = runnable.invoke(conversation)
        parsed, feedback, error = _check(result, schema)
        if parsed is not None:
            return parsed
        if attempt == reasks:
            raise _exhausted(schema, attempt + 1, error)
        conversation.extend(feedback)
    raise AssertionError("unreachable")  # pragma: no cover


async def ainvoke_structured(
    model: BaseChatModel,
    schema: type[SchemaT],
    messages: Sequence[BaseMessage],
    *,
    method: str = "function_calling",
    reasks: int = 2,
) -> SchemaT:
    """Async ``invoke_structured``: same arguments, re-asks and errors."""
    runnable = _structured_runnable(model, schema, method)
    conversation = list(messages)
    reasks = max(0, reasks)
    for attempt in range(reasks + 1):
        with model_errors(model):
            result = await runnable.ainvoke(conversation)
        parsed, feedback, error = _check(result, schema)
        if parsed is not None:
            return parsed
        if attempt == reasks:
            raise _exhausted(schema, attempt + 1, error)
        conversation.extend(feedback)
    raise AssertionError("unreachable")  # pragma: no cover


@contextmanager
def model_errors(model: Any) -> Iterator[None]:
    """Turn what a call to ``model`` (chat or embeddings) may raise into an ``LLMError``.

    The service's errors (``to_llm_error``) and replies that are not a chat completion
    (``malformed_reply_error``) name the endpoint; secrets are masked and the original
    exception, whose text may hold the key, is not chained.
    """
    try:
        yield
    except Exception as exc:
        if _is_openai_error(exc):
            raise to_llm_error(exc, endpoint_of(model)) from None
        if isinstance(exc, MALFORMED_REPLY_ERRORS):
            raise malformed_reply_error(exc, endpoint_of(model)) from None
        raise


def _is_openai_error(exc: BaseException) -> TypeGuard[openai.APIError]:
    """Whether ``exc`` is an openai SDK error; no such error exists before openai loads."""
    sdk = sys.modules.get("openai")
    return sdk is not None and isinstance(exc, sdk.APIError)


def endpoint_of(model: Any) -> str | None:
    """The base URL / endpoint a LangChain OpenAI model talks to (never its key)."""
    while hasattr(model, "bound"):  # RunnableBinding (bind_tools, with_config)
        model = model.bound
    url = getattr(model, "azure_endpoint", None) or getattr(model, "openai_api_base", None)
    if url is None and hasattr(model, "openai_api_base"):
        url = OPENAI_ENDPOINT
    return without_credentials(str(url)) if url else None


def malformed_reply_error(exc: Exception, endpoint: str | None) -> LLMError:
    """An ``LLMError`` for a reply that is not a chat completion / embeddings response."""
    where = endpoint or "LLM サービス"
    return LLMError(
        f"LLM の接続先 {where} が読み取れない応答を返しました"
        f"（{type(exc).__name__}: {_excerpt(exc)}）",
        hint="接続先の URL（KEIRI_AGENT_OPENAI_API_BASE / AZURE_OPENAI_ENDPOINT）が OpenAI "
        "互換 API を指しているか、間にプロキシやログイン画面が入っていないか確認してください",
        details={
            "endpoint": endpoint,
            "error_type": type(exc).__name__,
            "reason": "malformed_reply",
        },
    )


def _excerpt(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(mask_text(str(exc)).split())
    return text if len(text) <= limit else text[:limit] + "…"


def to_llm_error(exc: openai.APIError, endpoint: str | None = None) -> LLMError:
    """Translate an openai SDK error (raised after its retries) into an ``LLMError``.

    The provider's message is masked (a 401 echoes the key it was sent); a 429 says
    how long the provider asks to wait (``Retry-After``).
    """
    import openai

    status = getattr(exc, "status_code", None)
    wait_s = retry_after_s(exc) if isinstance(exc, openai.RateLimitError) else None
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        hint = (
            "API キーが正しいか確かめてください"
            "（設定ファイル .env か環境変数 OPENAI_API_KEY / AZURE_OPENAI_API_KEY）"
        )
    elif isinstance(exc, openai.NotFoundError):
        hint = "モデル名（Azure ではデプロイ名）と接続先 URL の設定を確かめてください"
    elif isinstance(exc, openai.RateLimitError) and wait_s is not None:
        hint = (
            f"LLM サービスが {describe_wait(wait_s)}待つよう求めています（Retry-After）。"
            "時間をおいてから再実行してください"
        )
    elif isinstance(exc, openai.RateLimitError):
        hint = (
            "LLM サービスの利用回数の上限に達しました。時間をおいてから再実行するか、"
            "同時に実行する数を減らしてください"
        )
    elif isinstance(exc, openai.APITimeoutError):
        hint = (
            "LLM サービスの応答が時間内に返りませんでした。時間をおいて再実行してください"
            "（待ち時間は設定 KEIRI_AGENT_REQUEST_TIMEOUT_S で延ばせます）"
        )
    elif isinstance(exc, openai.APIConnectionError):
        hint = "LLM サービスに接続できません。接続先 URL の設定とネットワークを確かめてください"
    else:
        hint = SERVICE_HINT
    message = f"LLM サービスでエラーが起きました: {type(exc).__name__}: {_excerpt(exc, 500)}"
    if endpoint:
        message += f"（接続先 {endpoint}）"
    details: dict[str, Any] = {"error_type": type(exc).__name__, "status_code": status}
    if endpoint:
        details["endpoint"] = endpoint
    if wait_s is not None:
        details["retry_after_s"] = wait_s
    return LLMError(message, hint=hint, details=details)


def retry_after_s(exc: openai.APIError) -> float | None:
    """The seconds a provider's ``Retry-After`` (or ``retry-after-ms``) asks to wait."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    try:
        if milliseconds is not None:
            seconds = float(milliseconds) / 1000
        elif value is None:
            return None
        elif value.strip().isascii() and value.strip().replace(".", "", 1).isdigit():
            seconds = float(value)
        else:
            parsed = email.utils.parsedate_to_datetime(value)
            seconds = parsed.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError):
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def describe_wait(seconds: float) -> str:
    """Japanese for a wait: '約 24 時間', '約 5 分', '30 秒'."""
    if seconds >= 3600:
        return f"約 {seconds / 3600:.3g} 時間"
    if seconds >= 60:
        return f"約 {round(seconds / 60)} 分"
    return f"{math.ceil(seconds)} 秒"


class PromptRenderError(ValueError):
    """A prompt template and its values do not match (our bug, not the model's)."""


def render_prompt(template: str, **values: Any) -> str:
    """Fill ``{name}`` placeholders of a ``str.format`` template, strictly.

    Literal braces are written ``{{`` and ``}}``. Positional ``{}`` fields are
    not allowed. Every placeholder needs a value and every value a placeholder.

    Raises:
        PromptRenderError: A variable is missing or unused, or the template is malformed.
    """
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise PromptRenderError(f"malformed prompt template: {exc}") from exc
    names: set[str] = set()
    for _literal, field, _spec, _conversion in fields:
        if field is None:
            continue
        name = field.split(".", 1)[0].split("[", 1)[0]
        if not name or name.isdigit():
            raise PromptRenderError(
                f"prompt template has a positional field {{{field}}}; use a name such as "
                "{question}, or write literal braces as {{ and }}"
            )
        names.add(name)
    missing = sorted(names - values.keys())
    unused = sorted(values.keys() - names)
    if missing or unused:
        parts = []
        if missing:
            parts.append(f"missing value(s) for {', '.join(missing)}")
        if unused:
            parts.append(f"value(s) with no placeholder: {', '.join(unused)}")
        placeholders = ", ".join(sorted(names)) or "(none)"
        raise PromptRenderError(f"{'; '.join(parts)} (placeholders: {placeholders})")
    return template.format(**values)


def _structured_runnable(
    model: BaseChatModel, schema: type[BaseModel], method: str
) -> Runnable[Any, Any]:
    return model.with_structured_output(schema, method=method, include_raw=True)


def _check(result: Any, schema: type[SchemaT]) -> tuple[SchemaT | None, list[BaseMessage], str]:
    """The parsed object, or the feedback messages for a re-ask and the error text."""
    raw = result.get("raw") if isinstance(result, dict) else None
    parsed = result.get("parsed") if isinstance(result, dict) else result
    error = result.get("parsing_error") if isinstance(result, dict) else None
    if error is None and isinstance(parsed, schema):
        return parsed, [], ""
    if error is None and isinstance(parsed, dict):
        try:
            return schema.model_validate(parsed), [], ""
        except ValidationError as exc:
            error = exc
    name = schema.__name__
    if error is not None:
        text = describe_validation_error(error)
    else:
        text = f"the reply contained no {name} object"
    return None, _feedback(raw, name, text), text


def describe_validation_error(error: BaseException) -> str:
    """A compact, model-readable description of why a reply did not validate."""
    cause = error.__cause__ if not isinstance(error, ValidationError) else None
    if isinstance(cause, ValidationError):
        error = cause
    if isinstance(error, ValidationError):
        lines = [f"{error.error_count()} validation error(s) for {error.title}:"]
        for item in error.errors(include_url=False):
            location = ".".join(str(part) for part in item["loc"]) or "(root)"
            got = repr(item.get("input"))
            got = got if len(got) <= 200 else got[:200] + "..."
            lines.append(f"- {location}: {item['msg']} (got {got})")
        return "\n".join(lines)
    return f"{type(error).__name__}: {error}"


def _feedback(raw: Any, name: str, text: str) -> list[BaseMessage]:
    """The raw reply plus a message telling the model what to fix.

    OpenAI requires every tool call in an assistant message to be answered by a
    ToolMessage, so a reply with tool calls gets ToolMessages; otherwise a
    HumanMessage.
    """
    instruction = (
        f"Your answer could not be used: {text}\n"
        f"Reply again with a complete, valid {name} object that fixes these errors."
    )
    if not isinstance(raw, AIMessage):
        return [HumanMessage(content=instruction)]
    call_ids = [call.get("id") for call in (*raw.tool_calls, *raw.invalid_tool_calls)]
    if call_ids:
        return [
            raw,
            *(ToolMessage(content=instruction, tool_call_id=call_id or "") for call_id in call_ids),
        ]
    return [raw, HumanMessage(content=instruction)]


def _exhausted(schema: type[BaseModel], attempts: int, error: str) -> LLMError:
    return LLMError(
        f"LLM が {attempts} 回試しても正しい形の回答（{schema.__name__}）を返しませんでした",
        hint="依頼を簡単にするか、より高性能なモデルを設定してください。"
        "再試行の回数は設定 KEIRI_AGENT_STRUCTURED_OUTPUT_REASKS で増やせます",
        details={"schema": schema.__name__, "attempts": attempts, "validation_error": error},
    )
