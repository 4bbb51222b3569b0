"""The team's accounts (issue 33): add, list, disable, reset, roles, machine tokens.

Accounts live in the application database (``storage.schema.users``). A password is
kept only as its argon2 hash (``argon2-cffi``, the library's recommended parameters);
a machine client's token is shown once and kept only as its SHA-256. A disabled
account is kept (the audit trail names it) and can sign in no more. The last enabled
管理者 cannot be disabled or lose the role: someone must be able to manage people.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select, update

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.people.roles import Person, parse_roles, role_names
from keiri_agent.storage.schema import LOGIN_MAX_LENGTH, user_tokens, users

MIN_PASSWORD_CHARS = 12
"""The shortest password accepted (a passphrase, not a PIN)."""
TOKEN_PREFIX = "ka_"
LAST_USED_EVERY = dt.timedelta(minutes=1)
"""How fresh a token's ``last_used_at`` is kept (written at most this often)."""
_LOGIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]*$")
_hasher = PasswordHasher()


@dataclass(frozen=True)
class Account:
    user_id: str
    login: str
    display_name: str
    roles: frozenset[str]
    source: str
    disabled: bool
    has_password: bool

    @property
    def person(self) -> Person:
        return Person(self.login, self.display_name, self.roles)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Accounts:
    """Accounts over a migrated engine (see the module docstring)."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    @classmethod
    def from_settings(cls, settings: Settings) -> Accounts:
        """The accounts of the configured application database (migrated)."""
        from keiri_agent.storage.engine import create_engine
        from keiri_agent.storage.migrate import upgrade

        engine = create_engine(settings)
        upgrade(engine)
        return cls(engine)

    # --- reading -----------------------------------------------------------------

    def list(self) -> list[Account]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(users).order_by(users.c.login)).all()
        return [account_of_row(row._mapping) for row in rows]

    def find(self, login: str) -> Account | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(users).where(users.c.login == login)).first()
        return None if row is None else account_of_row(row._mapping)

    def get(self, login: str) -> Account:
        account = self.find(login)
        if account is None:
            raise UserInputError(
                f"利用者「{login}」は登録されていません",
                hint="keiri-agent users list で登録済みの利用者を確かめてください",
                details={"login": login},
                code="USER_NOT_FOUND",
            )
        return account

    def any(self) -> bool:
        with self.engine.connect() as connection:
            return connection.execute(select(users.c.user_id).limit(1)).first() is not None

    # --- writing -----------------------------------------------------------------

    def add(
        self,
        login: str,
        roles: Iterable[str],
        *,
        display_name: str = "",
        password: str | None = None,
        source: str = "local",
    ) -> Account:
        login = _valid_login(login)
        granted = parse_roles(roles)
        if not granted:
            raise UserInputError(
                "役割が指定されていません",
                hint="--role で 1 つ以上の役割（管理者・設計者・実行者・承認者・閲覧者）を"
                "指定してください",
                details={"login": login},
            )
        if self.find(login) is not None:
            raise UserInputError(
                f"利用者「{login}」はすでに登録されています",
                hint="役割を変えるなら keiri-agent users roles、パスワードなら users reset を"
                "使ってください",
                details={"login": login},
                code="USER_EXISTS",
            )
        now = _now()
        values = {
            "user_id": f"user_{secrets.token_hex(6)}",
            "login": login,
            "display_name": display_name.strip() or login,
            "roles": sorted(granted),
            "password_hash": _hash(password) if password is not None else None,
            "source": source,
            "disabled": False,
            "created_at": now,
            "updated_at": now,
        }
        with self.engine.begin() as connection:
            connection.execute(users.insert().values(**values))
        return self.get(login)

    def set_roles(self, login: str, roles: Iterable[str]) -> Account:
        account = self.get(login)
        granted = parse_roles(roles)
        if not granted:
            raise UserInputError(
                "役割が指定されていません",
                hint="1 つ以上の役割を指定してください（使えなくするなら users disable）",
                details={"login": login},
            )
        if "admin" in account.roles and "admin" not in granted:
            self._keep_an_admin(account)
        self._update(account.login, roles=sorted(granted))
        return self.get(login)

    def disable(self, login: str) -> Account:
        account = self.get(login)
        if "admin" in account.roles and not account.disabled:
            self._keep_an_admin(account)
        self._update(login, disabled=True)
        with self.engine.begin() as connection:
            connection.execute(
                update(user_tokens)
                .where(user_tokens.c.user_id == account.user_id)
                .values(revoked=True)
            )
        return self.get(login)

    def enable(self, login: str) -> Account:
        self.get(login)
        self._update(login, disabled=False)
        return self.get(login)

    def reset_password(self, login: str, password: str) -> Account:
        self.get(login)
        self._update(login, password_hash=_hash(password))
        return self.get(login)

    def issue_token(self, login: str, label: str = "") -> str:
        """A new access token for a machine client of ``login``, shown once."""
        account = self.get(login)
        if account.disabled:
            raise UserInputError(
                f"利用者「{login}」は無効にされています",
                hint="keiri-agent users enable で有効にしてから発行してください",
                details={"login": login},
            )
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self.engine.begin() as connection:
            connection.execute(
                user_tokens.insert().values(
                    token_id=secrets.token_hex(8),
                    user_id=account.user_id,
                    token_hash=token_digest(token),
                    label=label.strip()[:200] or "token",
                    created_at=_now(),
                    last_used_at=None,
                    revoked=False,
                )
            )
        return token

    def signed_in_elsewhere(self, login: str, display_name: str, roles: Iterable[str]) -> Account:
        """The account of a person the company's identity provider signed in: created
        on the first sign-in (source ``oidc``), its name and roles taken from the
        provider each time; a disabled account stays disabled (``ACCOUNT_DISABLED``)."""
        account = self.find(login)
        if account is None:
            return self.add(login, roles, display_name=display_name, source="oidc")
        if account.disabled:
            raise UserInputError(
                f"利用者「{login}」は無効にされています",
                hint="管理者に有効にしてもらってください（keiri-agent users enable）",
                details={"login": login},
                code="ACCOUNT_DISABLED",
            )
        granted = parse_roles(roles)
        if "admin" in account.roles and "admin" not in granted:
            self._keep_an_admin(account)
        self._update(login, roles=sorted(granted), display_name=display_name or login)
        return self.get(login)

    # --- signing in --------------------------------------------------------------

    def sign_in(self, login: str, password: str) -> Account | None:
        """The account when ``password`` is its password and it is enabled, else None
        (the same None whatever was wrong: an unknown login says nothing more)."""
        with self.engine.connect() as connection:
            row = connection.execute(select(users).where(users.c.login == login)).first()
        account = account_of_row(row._mapping) if row is not None else None
        stored = row._mapping["password_hash"] if row is not None else None
        if account is None or account.disabled or not stored:
            _hasher_burn(password)
            return None
        try:
            _hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return None
        if _hasher.check_needs_rehash(stored):
            self._update(login, password_hash=_hash(password))
        return account

    def by_token(self, token: str) -> Account | None:
        """The enabled account a live token belongs to, else None."""
        digest = token_digest(token)
        with self.engine.begin() as connection:
            row = connection.execute(
                select(user_tokens.c.token_id, user_tokens.c.last_used_at, users)
                .join(users, users.c.user_id == user_tokens.c.user_id)
                .where(user_tokens.c.token_hash == digest, user_tokens.c.revoked.is_(False))
            ).first()
            if row is None:
                return None
            used = row._mapping["last_used_at"]
            if used is not None and used.tzinfo is None:
                used = used.replace(tzinfo=dt.UTC)
            if used is None or _now() - used > LAST_USED_EVERY:  # not a write per request
                connection.execute(
                    update(user_tokens)
                    .where(user_tokens.c.token_id == row._mapping["token_id"])
                    .values(last_used_at=_now())
                )
        account = account_of_row(row._mapping)
        return None if account.disabled else account

    # --- helpers -----------------------------------------------------------------

    def _update(self, login: str, **values: object) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                update(users).where(users.c.login == login).values(updated_at=_now(), **values)
            )

    def _keep_an_admin(self, account: Account) -> None:
        others = [
            other
            for other in self.list()
            if other.login != account.login and "admin" in other.roles and not other.disabled
        ]
        if not others:
            raise UserInputError(
                f"「{account.login}」は有効な最後の{role_names(['admin'])}です",
                hint="先に別の利用者に管理者の役割を付けてください（利用者を管理できる人が"
                "いなくなります）",
                details={"login": account.login},
                code="LAST_ADMIN",
            )


def _valid_login(login: str) -> str:
    login = login.strip()
    if not login or len(login) > LOGIN_MAX_LENGTH or not _LOGIN.match(login):
        raise UserInputError(
            f"ログイン名「{login[:40]}」は使えません",
            hint="英数字と . _ @ - で、英数字から始まる 128 文字以内にしてください"
            "（例: yamada、yamada@example.co.jp）",
            details={"login": login[:128]},
        )
    return login


def _hash(password: str) -> str:
    if len(password) < MIN_PASSWORD_CHARS:
        raise UserInputError(
            f"パスワードが短すぎます（{MIN_PASSWORD_CHARS} 文字以上にしてください）",
            hint="推測されにくい長めの文（パスフレーズ）にしてください",
            details={"min_chars": MIN_PASSWORD_CHARS},
        )
    return _hasher.hash(password)


@functools.cache
def _burn_hash() -> str:
    return _hasher.hash("keiri-agent: no such account")


def _hasher_burn(password: str) -> None:
    """Spend the time a real check takes, so an unknown login answers no faster."""
    with contextlib.suppress(VerificationError, InvalidHashError):
        _hasher.verify(_burn_hash(), password)


def account_of_row(row: Any) -> Account:
    """An account from a row of `users` (joined rows too)."""
    return Account(
        user_id=str(row["user_id"]),
        login=str(row["login"]),
        display_name=str(row["display_name"]),
        roles=frozenset(row["roles"] or []),
        source=str(row["source"]),
        disabled=bool(row["disabled"]),
        has_password=row["password_hash"] is not None,
    )
