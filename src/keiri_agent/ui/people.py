"""Who the Streamlit app acts as: the operating-system user, like the command line
(``people.operator``). Where people are registered, that user's account must hold the
role an action needs, and the runs it starts are theirs (``runs.owner``)."""

from __future__ import annotations

from keiri_agent.people.operator import os_login, team_operator
from keiri_agent.people.roles import Person, require
from keiri_agent.services.container import Services


def acting_person(services: Services) -> Person | None:
    """The OS user's account where people are registered; None on one person's install."""
    return team_operator(services.accounts)


def starter_login(services: Services, action: str) -> str:
    """The login a run started here belongs to, after checking (where people are
    registered) that the account may ``action``: ``PermissionDeniedError`` otherwise."""
    person = acting_person(services)
    if person is None:
        return os_login()
    require(person, action)
    return person.login
