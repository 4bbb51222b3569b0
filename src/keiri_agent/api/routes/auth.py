"""Signing in from a browser (issue 33): a password sign-in opens a session kept in an
HttpOnly, SameSite=Strict cookie for ``api_session_hours``; the answer carries the CSRF
token the page sends back as ``X-CSRF-Token`` on every request that changes something.
Each sign-in, failed sign-in and sign-out is written to the audit trail.

- ``POST /api/auth/sign-in`` {login, password} → the person, ``csrf_token``, ``expires_at``
  (401 SIGN_IN_FAILED, the same for an unknown login, a wrong password or a disabled
  account);
- ``GET /api/auth/oidc/start`` → the company's identity provider (OpenID Connect);
  ``GET /api/auth/oidc/callback`` signs the person in (roles from the ID token) and
  returns to the web UI;
- ``POST /api/auth/sign-out`` ends the session and clears the cookie;
- ``GET /api/auth/me`` → who the request is (any way it signed in).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import ApiError
from keiri_agent.api.security import CSRF_COOKIE, SESSION_COOKIE, authenticate, caller
from keiri_agent.people.accounts import Account
from keiri_agent.people.oidc import OidcSignIn
from keiri_agent.people.roles import Person
from keiri_agent.people.sessions import StartedSession

router = APIRouter(prefix="/api/auth", tags=["auth"])
Context = Annotated[ApiContext, Depends(get_context)]


class SignIn(BaseModel):
    login: str = Field(min_length=1, max_length=128)
    password: str = Field(min_length=1, max_length=1024)


def _person(person: Person) -> dict[str, Any]:
    return {"login": person.login, "display_name": person.name, "roles": sorted(person.roles)}


@router.post("/sign-in")
def sign_in(body: SignIn, request: Request, response: Response, context: Context) -> dict[str, Any]:
    """Check the password and open a session (see the module docstring)."""
    typed = body.login.strip()
    account = context.accounts.sign_in(typed, body.password)
    if account is None:
        _failed_sign_in(context, typed)
        raise ApiError(
            401,
            "SIGN_IN_FAILED",
            "ログイン名かパスワードが違います",
            "The login or the password is wrong",
            "入力を確かめてください。忘れたときは管理者にパスワードの再設定を依頼してください",
            "Check what you typed; ask an administrator to reset a forgotten password",
        )
    started = _open_session(request, response, context, account, "password")
    return {
        **_person(account.person),
        "csrf_token": started.csrf_token,
        "expires_at": started.expires_at.isoformat(timespec="seconds"),
    }


def _failed_sign_in(context: ApiContext, typed: str) -> None:
    """Audit a failed sign-in under the account's login; what was typed for a login
    nobody has is kept only as a digest (people type their password there by mistake,
    and the trail is kept for years)."""
    if context.accounts.find(typed[:128]) is not None:
        context.audit.append(typed[:128], "sign_in_failed", typed[:128])
        return
    digest = hashlib.sha256(typed.encode("utf-8")).hexdigest()[:16]
    context.audit.append("（未登録のログイン名）", "sign_in_failed", "", {"typed_sha256": digest})


def _open_session(
    request: Request, response: Response, context: ApiContext, account: Account, via: str
) -> StartedSession:
    """A new session for ``account``: the HttpOnly session cookie, and the CSRF token
    also as a cookie the page's script can read (``keiri_csrf``), both SameSite=Strict."""
    started = context.sign_in_sessions.start(account, context.settings.api.api_session_hours)
    common: dict[str, Any] = {
        "max_age": int(context.settings.api.api_session_hours * 3600),
        "samesite": "strict",
        "secure": request.url.scheme == "https",
        "path": "/",
    }
    response.set_cookie(SESSION_COOKIE, started.token, httponly=True, **common)
    response.set_cookie(CSRF_COOKIE, started.csrf_token, httponly=False, **common)
    context.audit.append(account.login, "sign_in", account.login, {"via": via})
    return started


@router.get("/oidc/start")
def oidc_start(request: Request, context: Context) -> RedirectResponse:
    """Go to the company's identity provider to sign in (OpenID Connect)."""
    flow = OidcSignIn(context.settings, context.accounts.engine)
    url = flow.begin(str(request.url_for("oidc_callback")))
    return RedirectResponse(url, status_code=302)


@router.get("/oidc/callback", name="oidc_callback")
def oidc_callback(
    request: Request, context: Context, code: str = "", state: str = ""
) -> RedirectResponse:
    """Where the identity provider sends the person back: the ID token is checked, the
    person's account is created or its roles updated from the token, a session opened,
    and the browser goes to the web UI."""
    flow = OidcSignIn(context.settings, context.accounts.engine)
    claims = flow.finish(code, state, str(request.url_for("oidc_callback")))
    identity = flow.identity(claims)
    account = context.accounts.signed_in_elsewhere(
        identity.login, identity.display_name, identity.roles
    )
    redirect = RedirectResponse("/", status_code=302)
    _open_session(request, redirect, context, account, "oidc")
    return redirect


@router.post("/sign-out", dependencies=[Depends(authenticate)])
def sign_out(
    request: Request,
    response: Response,
    context: Context,
    person: Annotated[Person, Depends(caller)],
) -> dict[str, Any]:
    """End this browser's session and clear its cookie."""
    cookie = request.cookies.get(SESSION_COOKIE)
    ended = bool(cookie) and context.sign_in_sessions.end(str(cookie))
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")
    if ended:
        context.audit.append(person.login, "sign_out", person.login)
    return {"signed_out": ended}


@router.get("/me", dependencies=[Depends(authenticate)])
def me(person: Annotated[Person, Depends(caller)]) -> dict[str, Any]:
    """Who this request is: login, name, roles."""
    return _person(person)
