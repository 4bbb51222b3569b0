"""Who may see and act on what someone made (issue 33).

Every run — a Plan run, a HelpDesk answer, an analysis turn, a research run, an
indexing — records who started it (``runs.owner``); uploads and analysis results
record their uploader. ``Ownership`` decides who else may see and act on them:

- the owner sees and acts on their own;
- 管理者 sees and acts on everything;
- Plan runs are the team's controls: 閲覧者 and 承認者 also see every Plan run (an
  approver must see what they approve; a viewer is there to see runs and results) —
  acting on one (cancel, answer, rerun) stays with its owner and 管理者, approvals
  with the approval rule (``people.approvals``);
- with team sharing on (``KEIRI_AGENT_TEAM_SHARING=true``) everyone signed in sees
  everything; acting on another's still needs 管理者;
- a run whose owner was never recorded (made before this was built, or a research
  session asked at the command line) is nobody's: only the roles that oversee its kind
  see it, and only 管理者 acts on it.

A refusal is ``PermissionDeniedError`` naming the roles (or the setting) that would
allow it; the API answers 403 ``PERMISSION_DENIED``.
"""

from __future__ import annotations

from dataclasses import dataclass

from keiri_agent.people.roles import PermissionDeniedError, Person, role_names

PLAN_KIND = "plan"
OVERSEERS: dict[str, frozenset[str]] = {
    PLAN_KIND: frozenset({"admin", "approver", "viewer"}),
}
"""Run kind → the roles that see everyone's runs of that kind."""
DEFAULT_OVERSEERS = frozenset({"admin"})
"""Who sees everyone's conversations, research, answers and uploads."""
ACTING_ROLES = frozenset({"admin"})
"""Who acts on another person's runs (cancel, answer a non-approval step, rerun)."""
THINGS = {
    "plan": "Plan の実行",
    "analysis": "データ分析の会話",
    "helpdesk": "ヘルプデスクの回答",
    "research": "リサーチ",
    "index": "ナレッジベースの登録",
    "design": "Plan の設計",
    "dataset": "アップロードされたファイル",
}
"""What a thing of each kind is called in a refusal."""


@dataclass(frozen=True)
class Ownership:
    """The visibility rules of one deployment (``team_sharing`` from the settings)."""

    team_sharing: bool = False

    def may_see(self, person: Person, owner: str, kind: str) -> bool:
        return self._sees(person, bool(owner) and owner == person.login, kind)

    def _sees(self, person: Person, owns: bool, kind: str) -> bool:
        return owns or self.team_sharing or bool(person.roles & _overseers(kind))

    def may_act(self, person: Person, owner: str) -> bool:
        return (bool(owner) and owner == person.login) or bool(person.roles & ACTING_ROLES)

    def check_see(self, person: Person, owner: str, kind: str, ref: str) -> None:
        """Refuse (``PERMISSION_DENIED``) unless ``person`` may see ``ref`` of ``kind``
        made by ``owner``."""
        self.check_see_owned(person, bool(owner) and owner == person.login, kind, ref)

    def check_see_owned(self, person: Person, owns: bool, kind: str, ref: str) -> None:
        """``check_see`` when whether ``person`` owns ``ref`` is already known (a file
        several people uploaded)."""
        if self._sees(person, owns, kind):
            return
        roles = [role for role in ("admin", "approver", "viewer") if role in _overseers(kind)]
        raise PermissionDeniedError(
            f"この{_thing(kind)}は別の人のものです。見るには {role_names(roles)} の役割が必要です",
            hint="必要なら、管理者に役割の追加か、チーム内での共有（KEIRI_AGENT_TEAM_SHARING）"
            "を依頼してください",
            details={"kind": kind, "ref": ref, "needed_roles": roles, "login": person.login},
        )

    def check_act(self, person: Person, owner: str, kind: str, ref: str) -> None:
        """Refuse (``PERMISSION_DENIED``) unless ``person`` may act on ``ref`` (cancel it,
        answer it, continue it): its owner or 管理者."""
        if self.may_act(person, owner):
            return
        roles = sorted(ACTING_ROLES)
        raise PermissionDeniedError(
            f"この{_thing(kind)}は別の人が始めたものです。操作できるのは始めた本人と"
            f" {role_names(roles)} だけです",
            hint="始めた本人に操作を依頼するか、自分で新しく始めてください",
            details={"kind": kind, "ref": ref, "needed_roles": roles, "login": person.login},
        )


def _overseers(kind: str) -> frozenset[str]:
    return OVERSEERS.get(kind, DEFAULT_OVERSEERS)


def _thing(kind: str) -> str:
    return THINGS.get(kind, "実行")
