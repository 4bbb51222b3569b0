"""One JSON POST to a search service, with its failures as Japanese ``KeiriAgentError``.

Used by the Azure AI Search and web adapters. Every failure (401/403, 404, 429, 5xx, a
timeout, a connection error, a body that is not a JSON object) becomes an error whose
message and hint a back-office user can act on. Neither the key nor the response body
appears in any message, detail or log line (a service may echo the request).
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from keiri_agent.errors import ConfigurationError, ExecutionError, KeiriAgentError
from keiri_agent.masking import mask_text

log = logging.getLogger(__name__)


def post_json(
    url: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str],
    timeout_s: float,
    service: str,
    params: dict[str, str] | None = None,
) -> dict[str, Any]:
    """POST ``body`` as JSON to ``url`` and return the JSON object answered.

    ``service`` names the service in messages (``Azure AI Search（docs）``).

    Raises:
        ConfigurationError: 401/403 (the key or token), 404 (endpoint, index or path),
            400 (the request does not fit the service's settings), a URL that cannot be
            used.
        ExecutionError: 429, 5xx, a timeout, a connection failure, a body that is not
            a JSON object.
    """
    shown = mask_text(url)
    try:
        with httpx.Client(timeout=timeout_s, follow_redirects=False) as client:
            response = client.post(url, json=body, headers=headers, params=params)
    except httpx.TimeoutException:
        log.warning("%s: no answer within %.1f s (%s)", service, timeout_s, shown)
        raise ExecutionError(
            f"{service} が {timeout_s:g} 秒以内に応答しませんでした。",
            hint="しばらく待ってから再実行してください。続く場合は検索サービスの状態と"
            "タイムアウト設定を確認してください。",
            code="SEARCH_TIMEOUT",
            details={"service": service},
        ) from None
    except httpx.InvalidURL:
        raise ConfigurationError(
            f"{service} の接続先 URL が正しくありません。",
            hint="エンドポイントの設定（https://～）を確認してください。",
            code="SEARCH_BAD_URL",
            details={"service": service},
        ) from None
    except httpx.HTTPError as exc:
        log.warning("%s: request failed: %s (%s)", service, type(exc).__name__, shown)
        raise ExecutionError(
            f"{service} に接続できませんでした。",
            hint="ネットワーク接続とエンドポイントの設定を確認してから再実行してください。",
            code="SEARCH_UNREACHABLE",
            details={"service": service, "error": type(exc).__name__},
        ) from None
    status = response.status_code
    if status >= 400:
        log.warning("%s: HTTP %d (%s)", service, status, shown)
        raise _status_error(service, status)
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        log.warning("%s: the answer is not a JSON object (%s)", service, shown)
        raise ExecutionError(
            f"{service} の応答を読み取れませんでした（JSON ではありません）。",
            hint="エンドポイントが検索サービスの URL か確認してください。続く場合は"
            "サービスの管理者に連絡してください。",
            code="SEARCH_BAD_RESPONSE",
            details={"service": service, "status": status},
        )
    return data


def _status_error(service: str, status: int) -> KeiriAgentError:
    details = {"service": service, "status": status}
    if status in (401, 403):
        return ConfigurationError(
            f"{service} に認証で拒否されました（HTTP {status}）。",
            hint="API キー（またはトークン）が正しいか、期限切れでないか、このインデックスを"
            "検索する権限があるかを確認してください。",
            code="SEARCH_UNAUTHORIZED",
            details=details,
        )
    if status == 404:
        return ConfigurationError(
            f"{service} が見つかりません（HTTP 404）。",
            hint="エンドポイント・インデックス名・API バージョンの設定を確認してください。",
            code="SEARCH_NOT_FOUND",
            details=details,
        )
    if status == 429:
        return ExecutionError(
            f"{service} の利用上限に達しました（HTTP 429）。",
            hint="しばらく待ってから再実行してください。頻繁に起きる場合はプランの上限を"
            "確認してください。",
            code="SEARCH_RATE_LIMITED",
            details=details,
        )
    if status >= 500:
        return ExecutionError(
            f"{service} でサーバーエラーが起きました（HTTP {status}）。",
            hint="しばらく待ってから再実行してください。続く場合はサービスの管理者に"
            "連絡してください。",
            code="SEARCH_SERVER_ERROR",
            details=details,
        )
    return ConfigurationError(
        f"{service} が検索要求を受け付けませんでした（HTTP {status}）。",
        hint="フィールド名・セマンティック構成・ベクトルフィールドの設定がインデックスと"
        "合っているか確認してください。",
        code="SEARCH_BAD_REQUEST",
        details=details,
    )
