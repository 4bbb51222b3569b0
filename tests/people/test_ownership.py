"""The ownership rules (``people.ownership``), one role at a time."""

from __future__ import annotations

import pytest

from keiri_agent.people.ownership import Ownership
from keiri_agent.people.roles import PermissionDeniedError, Person


def _person(login: str, *roles: str) -> Person:
    return Person(login, login, frozenset(roles))


@pytest.mark.parametrize(
    ("roles", "plan", "analysis"),
    [
        (("operator",), False, False),
        (("designer",), False, False),
        (("approver",), True, False),
        (("viewer",), True, False),
        (("admin",), True, True),
    ],
)
def test_who_sees_another_persons_work(roles: tuple[str, ...], plan: bool, analysis: bool) -> None:
    rules, someone = Ownership(), _person("tanaka", *roles)
    assert rules.may_see(someone, "yamada", "plan") is plan
    assert rules.may_see(someone, "yamada", "analysis") is analysis
    assert rules.may_see(someone, "tanaka", "analysis")  # their own
    assert rules.may_see(someone, "", "analysis") is analysis  # nobody's: overseers only


def test_only_the_owner_and_an_admin_act_even_with_team_sharing() -> None:
    rules = Ownership(team_sharing=True)
    viewer = _person("suzuki", "viewer", "operator")
    assert rules.may_see(viewer, "yamada", "research")
    assert not rules.may_act(viewer, "yamada")
    assert rules.may_act(_person("keiri", "admin"), "yamada")
    with pytest.raises(PermissionDeniedError) as refused:
        rules.check_act(viewer, "yamada", "plan", "run_1")
    assert refused.value.details["needed_roles"] == ["admin"]
    assert "Plan の実行" in refused.value.message


def test_a_refusal_names_the_roles_that_would_see_it() -> None:
    with pytest.raises(PermissionDeniedError) as refused:
        Ownership().check_see(_person("tanaka", "operator"), "yamada", "plan", "run_1")
    assert "管理者・承認者・閲覧者" in refused.value.message
    assert refused.value.details["needed_roles"] == ["admin", "approver", "viewer"]
    assert "yamada" not in refused.value.message  # whose it is is not told
