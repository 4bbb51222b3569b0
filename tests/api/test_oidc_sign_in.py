"""Signing in with OpenID Connect end to end (issue 33), against a local provider the
test starts (``oidc-provider-mock``), never a real one: the browser goes to the
provider, comes back with a code, the ID token is checked, the person's roles come from
a claim, a session opens (and ends at its expiry), sign-out ends it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import httpx
import oidc_provider_mock
import pytest
from api_support import LiveServer
from pydantic import SecretStr

from keiri_agent.config import Settings
from keiri_agent.people.audit import AuditTrail
from keiri_agent.storage.engine import create_engine


@pytest.fixture
def provider() -> Iterator[str]:
    with oidc_provider_mock.run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


def settings_for(tmp_path: Path, issuer: str, **api: object) -> Settings:
    settings = Settings(home=tmp_path, provider="offline")
    values = {
        "oidc_issuer": issuer,
        "oidc_client_id": "keiri-agent",
        "oidc_client_secret": SecretStr("not-a-real-secret"),
        "oidc_role_map": ("keiri-approvers=approver", "keiri-users=operator"),
        **api,
    }
    return settings.model_copy(update={"api": settings.api.model_copy(update=values)})


def sign_in(server: LiveServer, browser: httpx.Client, provider: str, sub: str) -> httpx.Response:
    start = browser.get("/api/auth/oidc/start")
    assert start.status_code == 302, start.text
    authorize = start.headers["location"]
    assert authorize.startswith(provider)
    assert parse_qs(urlparse(authorize).query)["code_challenge_method"] == ["S256"]
    back = httpx.post(authorize, data={"sub": sub}, follow_redirects=False)
    assert back.status_code == 302, back.text
    callback = back.headers["location"]
    assert callback.startswith(f"{server.url}/api/auth/oidc/callback")
    return browser.get(callback.removeprefix(server.url))


def test_sign_in_with_the_company_provider(
    tmp_path: Path, provider: str, serve: Callable[..., LiveServer]
) -> None:
    claims = {"email": "sato@example.com", "name": "佐藤 次郎", "roles": ["keiri-approvers"]}
    assert (
        httpx.put(f"{provider}/users/{quote('sato@example.com')}", json=claims).status_code == 204
    )
    server = serve(settings_for(tmp_path, provider))
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        done = sign_in(server, browser, provider, "sato@example.com")
        assert done.status_code == 302 and done.headers["location"] == "/"
        me = browser.get("/api/auth/me").json()
        assert me == {
            "login": "sato@example.com",
            "display_name": "佐藤 次郎",
            "roles": ["approver"],
        }
        csrf = browser.cookies["keiri_csrf"]
        assert browser.post("/api/auth/sign-out", headers={"X-CSRF-Token": csrf}).json() == {
            "signed_out": True
        }
        assert browser.get("/api/auth/me").status_code == 401

    # the provider changes the person's groups: the next sign-in takes the new roles
    claims["roles"] = ["keiri-users"]
    httpx.put(f"{provider}/users/{quote('sato@example.com')}", json=claims)
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        sign_in(server, browser, provider, "sato@example.com")
        assert browser.get("/api/auth/me").json()["roles"] == ["operator"]

    engine = create_engine(settings_for(tmp_path, provider))
    trail = AuditTrail(engine).entries()
    entries = [(e.actor, e.kind, e.details) for e in trail if e.kind != "settings_changed"]
    assert entries[:2] == [
        ("sato@example.com", "sign_in", {"via": "oidc"}),
        ("sato@example.com", "sign_out", {}),
    ]
    engine.dispose()


def test_a_person_without_a_mapped_role_is_refused_and_a_code_is_used_once(
    tmp_path: Path, provider: str, serve: Callable[..., LiveServer]
) -> None:
    httpx.put(f"{provider}/users/guest", json={"email": "guest@example.com", "roles": ["other"]})
    server = serve(settings_for(tmp_path, provider))
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        refused = sign_in(server, browser, provider, "guest")
        assert refused.status_code == 403
        error = refused.json()["error"]
        assert error["code"] == "OIDC_NO_ROLE"
        assert (
            "guest@example.com さんには keiri-agent の役割が割り当てられていません"
            in error["message"]
        )
        assert browser.get("/api/auth/me").status_code == 401

        httpx.put(
            f"{provider}/users/ok", json={"email": "ok@example.com", "roles": ["keiri-users"]}
        )
        start = browser.get("/api/auth/oidc/start").headers["location"]
        callback = httpx.post(start, data={"sub": "ok"}).headers["location"]
        path = callback.removeprefix(server.url)
        assert browser.get(path).status_code == 302
        replay = browser.get(path)  # the same state again: refused
        assert replay.json()["error"]["code"] == "OIDC_STATE_INVALID"


def test_a_session_from_the_provider_ends_at_its_expiry(
    tmp_path: Path, provider: str, serve: Callable[..., LiveServer]
) -> None:
    httpx.put(f"{provider}/users/u", json={"email": "u@example.com", "roles": ["keiri-users"]})
    server = serve(settings_for(tmp_path, provider, api_session_hours=1 / 3600))
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        sign_in(server, browser, provider, "u")
        token = browser.cookies["keiri_session"]
        assert browser.get("/api/auth/me").status_code == 200
        time.sleep(1.2)
        browser.cookies.set("keiri_session", token)
        assert browser.get("/api/auth/me").status_code == 401


def test_without_a_provider_configured_the_start_says_so(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    server = serve(Settings(home=tmp_path, provider="offline"))
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        answer = browser.get("/api/auth/oidc/start")
    assert answer.json()["error"]["code"] == "OIDC_NOT_CONFIGURED"
