"""Roles and what each lets a person do (issue 33).

A person holds one or more roles. Every route and command asks ``require(person,
action)`` before it acts; a refusal is ``PermissionDeniedError`` (``PERMISSION_DENIED``,
seed 002 §9.1) with a Japanese message naming the roles that may.

- 管理者 (``admin``): people, settings, the audit trail — and everything else;
- 設計者 (``designer``): generate, edit and register Plans;
- 実行者 (``operator``): run Plans and use the agents (データ分析, ヘルプデスク, リサーチ);
- 承認者 (``approver``): answer approval steps (承認 / 差戻し);
- 閲覧者 (``viewer``): see Plans, runs and results.

Approving is deliberately not part of 管理者: 職務分掌 means the one who approves is
chosen for it, and an approval step may also require "not the person who started the run".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from keiri_agent.errors import ErrorCategory, KeiriAgentError, UserInputError

Role = Literal["admin", "designer", "operator", "approver", "viewer"]
ROLE_LABELS: dict[str, str] = {
    "admin": "管理者",
    "designer": "設計者",
    "operator": "実行者",
    "approver": "承認者",
    "viewer": "閲覧者",
}
ROLES: tuple[str, ...] = tuple(ROLE_LABELS)

Action = Literal[
    "view",
    "design",
    "run",
    "approve",
    "manage_people",
    "view_audit",
    "change_settings",
]
ACTION_LABELS: dict[str, str] = {
    "view": "見る",
    "design": "Plan を作成・変更・登録する",
    "run": "Plan を実行し、エージェントを使う",
    "approve": "承認・差戻しをする",
    "manage_people": "利用者を管理する",
    "view_audit": "監査ログを見る",
    "change_settings": "設定を変える",
}
PERMISSIONS: dict[str, frozenset[str]] = {
    "view": frozenset(ROLES),
    "design": frozenset({"admin", "designer"}),
    "run": frozenset({"admin", "operator"}),
    "approve": frozenset({"approver"}),
    "manage_people": frozenset({"admin"}),
    "view_audit": frozenset({"admin"}),
    "change_settings": frozenset({"admin"}),
}
"""Action → the roles that may do it."""


class PermissionDeniedError(KeiriAgentError):
    """The person lacks the role an action needs (or an approval rule forbids it)."""

    code = "PERMISSION_DENIED"
    category: ErrorCategory = "forbidden"


@dataclass(frozen=True)
class Person:
    """Who is acting: a login, a name to show, their roles."""

    login: str
    display_name: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)

    @property
    def name(self) -> str:
        return self.display_name or self.login

    def may(self, action: str) -> bool:
        return bool(self.roles & PERMISSIONS[action])


def role_names(roles: Iterable[str]) -> str:
    """Roles in Japanese, joined (「管理者・実行者」)."""
    return "・".join(ROLE_LABELS.get(role, role) for role in roles)


def parse_roles(values: Iterable[str]) -> frozenset[str]:
    """Roles given by their id or Japanese name (admin, 管理者); an unknown one is an
    error naming the roles there are."""
    by_label = {label: role for role, label in ROLE_LABELS.items()}
    found = set()
    for value in values:
        text = value.strip()
        if not text:
            continue
        role = text if text in ROLE_LABELS else by_label.get(text)
        if role is None:
            raise UserInputError(
                f"役割「{text}」はありません",
                hint="役割は "
                + "、".join(f"{label}（{role}）" for role, label in ROLE_LABELS.items())
                + " のどれかです",
                details={"role": text, "roles": list(ROLES)},
                code="UNKNOWN_ROLE",
            )
        found.add(role)
    return frozenset(found)


def require(person: Person, action: str) -> None:
    """Refuse (``PERMISSION_DENIED``) unless ``person`` holds a role that may ``action``."""
    if person.may(action):
        return
    allowed = [role for role in ROLES if role in PERMISSIONS[action]]
    raise PermissionDeniedError(
        f"{person.name} さんには「{ACTION_LABELS[action]}」権限がありません"
        f"（必要な役割: {role_names(allowed)}）",
        hint="管理者に役割を追加してもらってください（keiri-agent users roles）",
        details={
            "action": action,
            "needed_roles": allowed,
            "roles": sorted(person.roles),
            "login": person.login,
        },
    )
