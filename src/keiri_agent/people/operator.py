"""Who is at the command line (issue 33): the CLI in embedded mode acts as the
operating-system user.

- No account registered yet (one person's install): that user may do everything —
  and adding the first account, which must be a 管理者, starts the team's control.
- Accounts registered: the OS user is the account of the same login, with its roles;
  a disabled account or a login not registered may do nothing (each command says
  which role it needs and who can grant it).
"""

from __future__ import annotations

import getpass

from keiri_agent.people.accounts import Accounts
from keiri_agent.people.roles import ROLES, Person


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
