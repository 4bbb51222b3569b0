"""Who may answer an approval step (issue 33: 職務分掌).

A ``ui.interactive_input`` node may carry ``approval``: the roles whose holders may
answer it (default 承認者), named people (logins) who may, and ``not_starter`` — the
person who started the run may not approve it (the default of the 承認 template).
``check_approver`` refuses anyone else with ``PERMISSION_DENIED`` saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.people.roles import PermissionDeniedError, Person, role_names


@dataclass(frozen=True)
class ApprovalRule:
    roles: frozenset[str] = frozenset({"approver"})
    people: frozenset[str] = frozenset()
    not_starter: bool = False

    @classmethod
    def of(cls, value: Any) -> ApprovalRule | None:
        """The rule a node's ``approval`` input gives, or None (no approval rule)."""
        if not isinstance(value, Mapping):
            return None
        roles = value.get("roles")
        return cls(
            roles=frozenset(str(role) for role in roles) if roles else frozenset({"approver"}),
            people=frozenset(str(login) for login in value.get("people") or ()),
            not_starter=bool(value.get("not_starter", False)),
        )


def check_approver(person: Person, rule: ApprovalRule, starter: str) -> None:
    """Refuse (``PERMISSION_DENIED``) unless ``person`` may answer under ``rule``.
    ``starter``: the login of who started the run; empty when nobody recorded it (a run
    started at the command line), which a "not the starter" rule cannot accept."""
    if rule.not_starter and not starter:
        raise PermissionDeniedError(
            "この実行は始めた人の記録がないため、職務分掌（始めた人以外の承認）を確かめられず、"
            "承認できません",
            hint="承認が必要な Plan は、Web 画面か API で各自サインインして実行を始めてください",
            details={"login": person.login, "starter": "", "reason": "starter_unknown"},
        )
    if rule.not_starter and person.login == starter:
        raise PermissionDeniedError(
            f"{person.name} さんはこの実行を始めた人のため、承認できません（職務分掌）",
            hint="実行を始めた人以外の承認者に承認を依頼してください",
            details={"login": person.login, "starter": starter, "reason": "starter"},
        )
    if person.roles & rule.roles or person.login in rule.people:
        return
    allowed = [role_names(sorted(rule.roles))]
    if rule.people:
        allowed.append("・".join(sorted(rule.people)))
    raise PermissionDeniedError(
        f"{person.name} さんはこの承認をできません（承認できる人: {' または '.join(allowed)}）",
        hint="承認できる人に依頼するか、管理者に役割を追加してもらってください",
        details={
            "login": person.login,
            "needed_roles": sorted(rule.roles),
            "people": sorted(rule.people),
            "reason": "role",
        },
    )
