"""Who may call the API: the bearer token, the bind address, the request's origin.

- ``check_bind(host, settings)``: listening beyond loopback without a token of at
  least 32 characters is refused before the server starts (anyone on the network
  could read the knowledge bases and run Plans), and so is a blank token anywhere
  (every request would be refused without a word why).
- ``authenticate``: the dependency every ``/api`` and ``/graphql`` route carries: the
  shared token (compared in constant time) signs in as a service account, a person's
  own token as that person; without a shared token, on loopback and before anyone is
  registered, nothing is asked. ``permit(action)`` then checks the caller's roles.
- ``OriginGuard``: a browser page from another site may not drive the API (a form
  post or an upload needs no CORS pre-flight): a request whose ``Origin`` is neither
  the server itself nor a configured ``api_cors_origins`` entry is refused, and on
  loopback the ``Host`` must be a loopback name (DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, WebSocketException, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param
from starlette.requests import HTTPConnection, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from keiri_agent.api.errors import ApiError, error_response
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.people.operator import os_login
from keiri_agent.people.roles import ROLES, Person, parse_roles, require

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


class _Bearer(HTTPBearer):
    """``Authorization: Bearer …`` of a request or a WebSocket (GraphQL over WebSocket):
    FastAPI's own reads requests only."""

    async def __call__(self, connection: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        scheme, credentials = get_authorization_scheme_param(
            connection.headers.get("Authorization")
        )
        if not scheme or not credentials:
            return None
        return HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials)


_bearer = _Bearer(auto_error=False, description="KEIRI_AGENT_API_TOKEN")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


MIN_TOKEN_CHARS = 32
"""The shortest token accepted beyond loopback (a guessable token is no lock)."""


def check_bind(host: str, settings: Settings) -> None:
    """Refuse to listen with a blank token anywhere, or beyond loopback without a token
    of at least ``MIN_TOKEN_CHARS`` characters (``ConfigurationError``)."""
    token = (
        settings.api.api_token.get_secret_value() if settings.api.api_token is not None else None
    )
    if token is not None and not token.strip():
        raise ConfigurationError(
            "アクセス用トークン（KEIRI_AGENT_API_TOKEN）が空のため起動できません",
            hint="空のままではすべての要求が拒否されます。.env の KEIRI_AGENT_API_TOKEN に"
            f"{MIN_TOKEN_CHARS} 文字以上のランダムな文字列を設定するか、この行を消して"
            "この PC だけで（--host 127.0.0.1）起動してください",
            details={"host": host},
        )
    if is_loopback(host):
        return
    if token is None:
        raise ConfigurationError(
            f"アクセス用トークンが未設定のため、{host} では起動できません",
            hint="他の端末から使うには .env に KEIRI_AGENT_API_TOKEN=<32 文字以上のランダムな"
            "文字列> を設定して再起動してください。この PC だけで使うなら --host 127.0.0.1 の"
            "まま起動します",
            details={"host": host},
        )
    if len(token.strip()) < MIN_TOKEN_CHARS:
        raise ConfigurationError(
            f"アクセス用トークンが短すぎるため、{host} では起動できません"
            f"（{MIN_TOKEN_CHARS} 文字以上が必要です）",
            hint=f"推測されにくい {MIN_TOKEN_CHARS} 文字以上のランダムな文字列を .env の "
            'KEIRI_AGENT_API_TOKEN に設定してください（例: python -c "import secrets; '
            'print(secrets.token_urlsafe(32))" の出力）',
            details={"host": host, "min_chars": MIN_TOKEN_CHARS},
        )


def _unauthorized(reason_ja: str, reason_en: str) -> ApiError:
    return ApiError(
        401,
        "UNAUTHORIZED",
        reason_ja,
        reason_en,
        "管理者から受け取ったアクセス用トークンを Authorization: Bearer <トークン> で"
        "送ってください",
        "Send the access token as Authorization: Bearer <token>",
        headers={"WWW-Authenticate": "Bearer"},
    )


SESSION_COOKIE = "keiri_session"
"""The cookie of a browser sign-in (HttpOnly, SameSite=Strict)."""
CSRF_COOKIE = "keiri_csrf"
"""The CSRF token as a cookie the page's script reads (SameSite=Strict, not HttpOnly)."""
CSRF_HEADER = "X-CSRF-Token"
"""The header a signed-in browser sends its CSRF token in, on every request that changes
something."""
SERVICE_LOGIN = "api-token"
"""The login the shared ``api_token`` signs in as (a service account, issue 33)."""


def _service_person(settings: Settings) -> Person:
    return Person(SERVICE_LOGIN, "共有トークン", parse_roles(settings.api.api_token_roles))


def _person(connection: HTTPConnection, token: str | None) -> Person | None:
    """Who the request is (see ``authenticate``), or None when it must be refused."""
    settings: Settings = connection.app.state.settings
    expected = settings.api.api_token
    if (
        token is not None
        and expected is not None
        and hmac.compare_digest(token.encode("utf-8"), expected.get_secret_value().encode("utf-8"))
    ):
        return _service_person(settings)
    context = connection.app.state.context
    if token is not None:
        account = context.accounts.by_token(token)
        return account.person if account is not None else None
    cookie = connection.cookies.get(SESSION_COOKIE)
    if cookie:
        account, csrf_ok = context.sign_in_sessions.check(
            cookie, connection.headers.get(CSRF_HEADER)
        )
        if account is None:
            return None
        if _changes_something(connection) and not csrf_ok:
            raise ApiError(
                403,
                "CSRF_FAILED",
                "画面を読み込み直してから、もう一度操作してください（確認用の値がありません）",
                "Reload the page and try again (the CSRF token is missing or wrong)",
                f"サインインで受け取った csrf_token を {CSRF_HEADER} ヘッダーで送ってください",
                f"Send the csrf_token from the sign-in as the {CSRF_HEADER} header",
            )
        return account.person
    if expected is None and not settings.api.oidc_issuer and not context.accounts.any():
        return Person(os_login(), os_login(), frozenset(ROLES))  # one person's loopback server
    return None


def _changes_something(connection: HTTPConnection) -> bool:
    return connection.scope["type"] == "http" and connection.scope.get("method") not in (
        "GET",
        "HEAD",
        "OPTIONS",
    )


def authenticate(
    connection: HTTPConnection,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Person:
    """The dependency on every protected route: who is calling, kept as
    ``connection.state.person``.

    - the shared ``api_token``: the service account (``api_token_roles``);
    - a person's access token (``keiri-agent users token``): that person;
    - a browser's sign-in cookie (``routes.auth``): that person while the session lives,
      with the CSRF token on every request that changes something (403 CSRF_FAILED);
    - nothing, on a loopback server without a token or a sign-in provider, before
      anyone is registered: the one local user, with every role (as before people);
    - anything else is refused (401); a WebSocket is closed before it is accepted.
    """
    token = None
    if credentials is not None and credentials.scheme.lower() == "bearer":
        token = credentials.credentials
    person = _person(connection, token)
    if person is not None:
        connection.state.person = person
        return person
    refusal = (
        _unauthorized("アクセス用トークンが必要です", "An access token is required")
        if token is None
        else _unauthorized("アクセス用トークンが違います", "The access token is wrong")
    )
    if connection.scope["type"] == "websocket":
        raise WebSocketException(status.WS_1008_POLICY_VIOLATION, refusal.message_en)
    raise refusal


def permit(action: str) -> Callable[[HTTPConnection], Person]:
    """A route dependency: the caller (``authenticate`` ran first) must hold a role that
    may ``action`` (``people.roles``), else ``PERMISSION_DENIED`` (403)."""

    def dependency(connection: HTTPConnection) -> Person:
        person: Person = connection.state.person
        require(person, action)
        return person

    return dependency


def caller(connection: HTTPConnection) -> Person:
    """The person ``authenticate`` found for this request."""
    person: Person = connection.state.person
    return person


class OriginGuard:
    """ASGI middleware: cross-site browser requests and rebinding hosts are refused."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.allowed = {origin.rstrip("/").lower() for origin in settings.api.api_cors_origins}
        self.token_set = settings.api.api_token is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]
        }
        host = headers.get("host", "")
        problem = self._problem(scope, host, headers.get("origin"))
        if problem is None:
            await self.app(scope, receive, send)
            return
        await error_response(problem, Request(scope))(scope, receive, send)

    def _problem(self, scope: Scope, host: str, origin: str | None) -> ApiError | None:
        server = scope.get("server") or ("", 0)
        host_name = host if host.endswith("]") else host.rsplit(":", 1)[0]
        loopback_only = not self.token_set and is_loopback(str(server[0]))
        if loopback_only and host_name.lower() not in LOOPBACK_NAMES:
            return _origin_refused(
                f"この API は {host_name} という名前では使えません（この PC 専用です）",
                f"This API cannot be used under the name {host_name} (this computer only)",
                "ブラウザのアドレスを http://127.0.0.1:<ポート> にしてください",
                "Open it as http://127.0.0.1:<port>",
            )
        if origin is None:  # not a browser's cross-origin request
            return None
        origin = origin.rstrip("/").lower()
        if origin in self.allowed:
            return None
        scheme = scope.get("scheme", "http")
        if origin == f"{scheme}://{host}".lower():
            return None
        return _origin_refused(
            f"この画面（{origin}）からの利用は許可されていません",
            f"Requests from {origin} are not allowed",
            "API の設定 KEIRI_AGENT_API_CORS_ORIGINS に、この画面のアドレスを"
            "追加するよう管理者に依頼してください",
            "Ask the administrator to add this page's origin to KEIRI_AGENT_API_CORS_ORIGINS",
        )


def _origin_refused(message_ja: str, message_en: str, hint_ja: str, hint_en: str) -> ApiError:
    return ApiError(403, "ORIGIN_REFUSED", message_ja, message_en, hint_ja, hint_en)
