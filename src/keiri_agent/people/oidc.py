"""Signing in with the company's identity provider: OpenID Connect (issue 33).

The authorization-code flow with PKCE, through maintained libraries (Authlib's HTTP
client for the token request, joserfc for the ID token):

1. ``begin(redirect_uri)`` reads the provider's discovery document, keeps a fresh state,
   nonce and PKCE verifier (``oidc_pending``; only the state's SHA-256) and returns the
   provider's authorization URL;
2. ``finish(code, state, redirect_uri)`` takes the pending request once (ten minutes at
   most), exchanges the code, checks the ID token's signature against the provider's
   keys, its issuer, audience, expiry and nonce, and returns its claims;
3. ``identity(claims)`` is the login (``oidc_login_claim``), the name and the roles:
   each value of ``oidc_role_claim`` mapped by ``oidc_role_map``, plus
   ``oidc_default_roles``; no role at all is a refusal naming what to ask for.

Every failure is an ``OidcError`` with a Japanese message a person can act on.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import sqlalchemy
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import OAuth2Client
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from sqlalchemy import delete, select

from keiri_agent.config import Settings
from keiri_agent.errors import ErrorCategory, KeiriAgentError
from keiri_agent.people.roles import parse_roles, role_names
from keiri_agent.storage.schema import oidc_pending

PENDING_MINUTES = 10
"""How long an authorization request may take before its callback is refused."""
TIMEOUT_S = 10.0


class OidcError(KeiriAgentError):
    code = "OIDC_FAILED"
    category: ErrorCategory = "input"


class OidcRoleError(OidcError):
    """The provider signed the person in, but no role here is theirs (403)."""

    code = "OIDC_NO_ROLE"
    category: ErrorCategory = "forbidden"


@dataclass(frozen=True)
class Identity:
    login: str
    display_name: str
    roles: frozenset[str]


class OidcSignIn:
    def __init__(self, settings: Settings, engine: sqlalchemy.Engine) -> None:
        api = settings.api
        if not (api.oidc_issuer and api.oidc_client_id):
            raise OidcError(
                "会社のアカウントでのサインインは設定されていません",
                hint="管理者が KEIRI_AGENT_OIDC_ISSUER と KEIRI_AGENT_OIDC_CLIENT_ID を設定すると"
                "使えます。それまではログイン名とパスワードでサインインしてください",
                code="OIDC_NOT_CONFIGURED",
            )
        self.settings = settings
        self.issuer = api.oidc_issuer.rstrip("/")
        self.client_id = api.oidc_client_id
        secret = api.oidc_client_secret
        self.client_secret = secret.get_secret_value() if secret is not None else None
        self.engine = engine

    def _get(self, url: str) -> dict[str, Any]:
        try:
            response = httpx.get(url, timeout=TIMEOUT_S)
            response.raise_for_status()
            value = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise OidcError(
                "サインイン先（ID プロバイダー）に接続できません",
                hint="しばらくしてから、もう一度サインインしてください。続くときは管理者に"
                "KEIRI_AGENT_OIDC_ISSUER の設定を確かめてもらってください",
                details={"url": url, "reason": type(error).__name__},
            ) from None
        if not isinstance(value, dict):
            raise OidcError("ID プロバイダーの応答を読めません", details={"url": url})
        return value

    def _discovery(self) -> dict[str, Any]:
        document = self._get(f"{self.issuer}/.well-known/openid-configuration")
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri", "issuer"):
            if not isinstance(document.get(key), str):
                raise OidcError(
                    "ID プロバイダーの設定情報が不完全です",
                    hint="管理者に KEIRI_AGENT_OIDC_ISSUER の URL を確かめてもらってください",
                    details={"missing": key},
                )
        return document

    def begin(self, redirect_uri: str) -> str:
        """The provider's authorization URL for a new sign-in (see the module docstring)."""
        document = self._discovery()
        state, nonce, verifier = generate_token(32), generate_token(32), generate_token(64)
        with self.engine.begin() as connection:
            old = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=PENDING_MINUTES)
            connection.execute(delete(oidc_pending).where(oidc_pending.c.created_at < old))
            connection.execute(
                oidc_pending.insert().values(
                    state_hash=_digest(state),
                    nonce=nonce,
                    code_verifier=verifier,
                    created_at=dt.datetime.now(dt.UTC),
                )
            )
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "scope": "openid email profile",
            "state": state,
            "nonce": nonce,
            "code_challenge": create_s256_code_challenge(verifier),
            "code_challenge_method": "S256",
        }
        return f"{document['authorization_endpoint']}?{urlencode(query)}"

    def _take(self, state: str) -> tuple[str, str]:
        with self.engine.begin() as connection:
            row = connection.execute(
                select(oidc_pending).where(oidc_pending.c.state_hash == _digest(state))
            ).first()
            connection.execute(
                delete(oidc_pending).where(oidc_pending.c.state_hash == _digest(state))
            )
        if row is None:
            raise _expired()
        created = row._mapping["created_at"]
        if created.tzinfo is None:
            created = created.replace(tzinfo=dt.UTC)
        if created < dt.datetime.now(dt.UTC) - dt.timedelta(minutes=PENDING_MINUTES):
            raise _expired()
        return str(row._mapping["nonce"]), str(row._mapping["code_verifier"])

    def finish(self, code: str, state: str, redirect_uri: str) -> dict[str, Any]:
        """The verified claims of the ID token the code is exchanged for."""
        nonce, verifier = self._take(state)
        document = self._discovery()
        client = OAuth2Client(
            client_id=self.client_id,
            client_secret=self.client_secret,
            token_endpoint_auth_method="client_secret_basic" if self.client_secret else "none",
            redirect_uri=redirect_uri,
            timeout=TIMEOUT_S,
        )
        try:
            token = client.fetch_token(
                document["token_endpoint"], code=code, code_verifier=verifier
            )
        except Exception as error:  # the library raises its own and httpx's errors
            raise OidcError(
                "ID プロバイダーからサインインの結果を受け取れませんでした",
                hint="もう一度サインインしてください",
                details={"reason": type(error).__name__},
            ) from None
        finally:
            client.close()
        id_token = token.get("id_token") if isinstance(token, Mapping) else None
        if not isinstance(id_token, str):
            raise OidcError("ID プロバイダーの応答に ID トークンがありません")
        keys = KeySet.import_key_set(self._get(str(document["jwks_uri"])))  # type: ignore[arg-type]
        try:
            decoded = jwt.decode(id_token, keys)
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": document["issuer"]},
                aud={"essential": True, "value": self.client_id},
                exp={"essential": True},
                nonce={"essential": True, "value": nonce},
            ).validate(decoded.claims)
        except (JoseError, ValueError) as error:
            raise OidcError(
                "ID トークンを確かめられませんでした（署名・発行元・期限のいずれか）",
                hint="もう一度サインインしてください。続くときは管理者に連絡してください",
                details={"reason": type(error).__name__},
            ) from None
        return dict(decoded.claims)

    def identity(self, claims: Mapping[str, Any]) -> Identity:
        api = self.settings.api
        login = str(claims.get(api.oidc_login_claim) or "").strip()
        if not login:
            raise OidcError(
                f"ID トークンに「{api.oidc_login_claim}」がないため、誰かを確かめられません",
                hint="管理者に KEIRI_AGENT_OIDC_LOGIN_CLAIM の設定を確かめてもらってください",
                details={"claim": api.oidc_login_claim},
            )
        given = claims.get(api.oidc_role_claim) or []
        values = [given] if isinstance(given, str) else [str(v) for v in given]
        mapping = dict(item.split("=", 1) for item in api.oidc_role_map if "=" in item)
        roles = set(parse_roles(mapping[v].strip() for v in values if v in mapping))
        roles |= parse_roles(api.oidc_default_roles)
        if not roles:
            raise OidcRoleError(
                f"{login} さんには keiri-agent の役割が割り当てられていません",
                hint="管理者に、ID プロバイダーのグループ（"
                f"{api.oidc_role_claim}）と役割（{role_names(['operator'])}など）の対応を"
                "設定してもらってください",
                details={"login": login, "claim": api.oidc_role_claim, "values": values},
            )
        name = str(claims.get("name") or login)
        return Identity(login, name, frozenset(roles))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _expired() -> OidcError:
    return OidcError(
        "サインインの手続きが古いか、すでに使われています",
        hint="最初からもう一度サインインしてください",
        code="OIDC_STATE_INVALID",
    )
