"""Who is at the command line (issue 33): the CLI in embedded mode acts as the
operating-system user.

- No account registered yet (one person's install): that user may do everything —
  and adding the first account, which must be a 管理者, starts the team's control.
- Accounts registered: the OS user is the account of the same login, with its roles;
  a disabled account or a login not registered may do nothing (each command says
  which role it needs and who can grant it).
"""

from __future__ import annotations

import contextlib
import getpass
from typing import TYPE_CHECKING

from keiri_agent.config import Settings
from keiri_agent.people.roles import ROLES, Person, require

if TYPE_CHECKING:  # the database layer loads only once someone may be registered
    from keiri_agent.people.accounts import Accounts
    from keiri_agent.people.audit import AuditTrail


def os_login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return "unknown"


def operator(accounts: Accounts) -> Person:
    """The person the CLI acts as (see the module docstring)."""
    login = os_login()
    if not accounts.any():
        return Person(login, login, frozenset(ROLES))
    account = accounts.find(login)
    if account is None or account.disabled:
        return Person(login, login, frozenset())
    return account.person


def team_operator(accounts: Accounts) -> Person | None:
    """The OS user's person when people are registered (their roles and the approval
    rules apply to them, as at the command line); None on one person's install."""
    return operator(accounts) if accounts.any() else None


def _database_exists(settings: Settings) -> bool:
    """A PostgreSQL URL is configured, or the workspace's SQLite file is there."""
    if settings.storage.database_url:
        return True
    from keiri_agent.workspace import Workspace

    return Workspace.from_settings(settings).database_file.exists()


def _may_have_people(settings: Settings) -> bool:
    """False when nobody can be registered yet: no SQLite file, or one whose ``users``
    table is missing or empty (read with the standard library: a command on one
    person's install loads no database layer). True for a PostgreSQL URL, for people
    found, and whenever the file cannot be read that way (the full path then says why)."""
    if settings.storage.database_url:
        return True
    import sqlite3

    from keiri_agent.workspace import Workspace

    path = Workspace.from_settings(settings).database_file
    if not path.exists():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            found = db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'users'"
            ).fetchone()
            return found is not None and db.execute("SELECT 1 FROM users LIMIT 1").fetchone()
    except sqlite3.Error:
        return True


def at_command_line(settings: Settings) -> tuple[Person, AuditTrail] | None:
    """The OS user's person and the audit trail, or None before the application
    database exists (nobody is registered then, and a command costs nothing more: the
    database is opened only when it is there — a PostgreSQL URL, or the SQLite file)."""
    if not _database_exists(settings):
        return None
    from keiri_agent.people.accounts import Accounts
    from keiri_agent.people.audit import AuditTrail

    accounts = Accounts.from_settings(settings)
    return operator(accounts), AuditTrail(accounts.engine)


def require_at_command_line(settings: Settings, action: str) -> Person | None:
    """Refuse (``PERMISSION_DENIED``) a command the OS user's account may not do; the
    person, or None while nobody is registered."""
    if not _may_have_people(settings):
        return None
    found = at_command_line(settings)
    if found is None:
        return None
    require(found[0], action)
    return found[0]


def team_at_command_line(settings: Settings) -> tuple[Person, Accounts] | None:
    """When people are registered: the OS user's person (their roles and the approval
    rules apply at the command line) and the accounts (the application database); None
    on one person's install, where answers are not checked."""
    if not _may_have_people(settings):
        return None
    from keiri_agent.people.accounts import Accounts

    accounts = Accounts.from_settings(settings)
    person = team_operator(accounts)
    return None if person is None else (person, accounts)
