"""Browser sign-ins (issue 33): a session per sign-in, ending at its expiry or sign-out.

``start`` returns the cookie's token and a CSRF token, both random and shown once; only
their SHA-256 is kept. A request carrying the cookie is that person while the session
lives (``check``); a request that changes something must also send the CSRF token
(``check``), which a page of another site cannot read. Disabling an account ends its
sessions at their next use.
"""

from __future__ import annotations

import datetime as dt
import hmac
import secrets
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import select, update

from keiri_agent.people.accounts import Account, account_of_row, token_digest
from keiri_agent.storage.schema import sign_in_sessions, users


@dataclass(frozen=True)
class StartedSession:
    token: str
    csrf_token: str
    expires_at: dt.datetime
    account: Account


class SignInSessions:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def start(self, account: Account, hours: float) -> StartedSession:
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        now = dt.datetime.now(dt.UTC)
        expires = now + dt.timedelta(hours=hours)
        with self.engine.begin() as connection:
            connection.execute(
                sign_in_sessions.insert().values(
                    session_id=secrets.token_hex(16),
                    user_id=account.user_id,
                    token_hash=token_digest(token),
                    csrf_hash=token_digest(csrf),
                    created_at=now,
                    expires_at=expires,
                    revoked=False,
                )
            )
        return StartedSession(token, csrf, expires, account)

    def _row(self, token: str) -> dict[str, object] | None:
        with self.engine.connect() as connection:
            row = connection.execute(
                select(sign_in_sessions, users)
                .join(users, users.c.user_id == sign_in_sessions.c.user_id)
                .where(
                    sign_in_sessions.c.token_hash == token_digest(token),
                    sign_in_sessions.c.revoked.is_(False),
                )
            ).first()
        if row is None:
            return None
        mapping = dict(row._mapping)
        expires = mapping["expires_at"]
        assert isinstance(expires, dt.datetime)
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=dt.UTC)
        if expires <= dt.datetime.now(dt.UTC):
            return None
        return mapping

    def check(self, token: str, csrf_token: str | None = None) -> tuple[Account | None, bool]:
        """The enabled account of a live session (None: expired, signed out, disabled)
        and whether ``csrf_token`` is the session's — one lookup for both."""
        row = self._row(token)
        if row is None:
            return None, False
        account = account_of_row(row)
        csrf_ok = bool(csrf_token) and hmac.compare_digest(
            str(row["csrf_hash"]), token_digest(str(csrf_token))
        )
        return (None if account.disabled else account), csrf_ok

    def end(self, token: str) -> bool:
        with self.engine.begin() as connection:
            ended = connection.execute(
                update(sign_in_sessions)
                .where(sign_in_sessions.c.token_hash == token_digest(token))
                .values(revoked=True)
            ).rowcount
        return ended == 1
