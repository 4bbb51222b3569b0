"""Signing in from a browser (issue 33): a password sign-in opens a session kept in an
HttpOnly, SameSite=Strict cookie for ``api_session_hours``; the answer carries the CSRF
token the page sends back as ``X-CSRF-Token`` on every request that changes something.
Each sign-in, failed sign-in and sign-out is written to the audit trail.

- ``POST /api/auth/sign-in`` {login, password} → the person, ``csrf_token``, ``expires_at``
  (401 SIGN_IN_FAILED, the same for an unknown login, a wrong password or a disabled
  account);
- ``POST /api/auth/sign-out`` ends the session and clears the cookie;
- ``GET /api/auth/me`` → who the request is (any way it signed in).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.api.errors import ApiError
from keiri_agent.api.security import SESSION_COOKIE, authenticate, caller
from keiri_agent.people.roles import Person

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
    account = context.accounts.sign_in(body.login.strip(), body.password)
    if account is None:
        context.audit.append(body.login.strip()[:128], "sign_in_failed", body.login.strip()[:128])
        raise ApiError(
            401,
            "SIGN_IN_FAILED",
            "ログイン名かパスワードが違います",
            "The login or the password is wrong",
            "入力を確かめてください。忘れたときは管理者にパスワードの再設定を依頼してください",
            "Check what you typed; ask an administrator to reset a forgotten password",
        )
    started = context.sign_in_sessions.start(account, context.settings.api.api_session_hours)
    response.set_cookie(
        SESSION_COOKIE,
        started.token,
        max_age=int(context.settings.api.api_session_hours * 3600),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    context.audit.append(account.login, "sign_in", account.login, {"via": "password"})
    return {
        **_person(account.person),
        "csrf_token": started.csrf_token,
        "expires_at": started.expires_at.isoformat(timespec="seconds"),
    }


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
    if ended:
        context.audit.append(person.login, "sign_out", person.login)
    return {"signed_out": ended}


@router.get("/me", dependencies=[Depends(authenticate)])
def me(person: Annotated[Person, Depends(caller)]) -> dict[str, Any]:
    """Who this request is: login, name, roles."""
    return _person(person)
