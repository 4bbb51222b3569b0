"""``keiri-agent users …`` and ``keiri-agent audit …``: the team's people and the trail.

- ``users add LOGIN --role 実行者 [--role …] [--name 山田 太郎] [--password | --password-stdin]``
  registers a person (the first one must be a 管理者: from then on the command line acts
  as the operating-system user's account, ``people.operator``); ``users list``,
  ``disable``, ``enable``, ``reset`` (a new password), ``roles`` (replace the roles)
  and ``token`` (an access token for a machine client, shown once) manage them.
  Each needs the 管理者 role and is written to the audit trail.
- ``audit list`` (by person, kind, subject, dates), ``audit verify`` (exit 1 when an
  entry was edited or removed) and ``audit export --out FILE.csv`` read the trail
  (管理者).
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import console, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.common import fail_json as _fail_json
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.people.roles import Person

if TYPE_CHECKING:
    from keiri_agent.people.accounts import Account, Accounts
    from keiri_agent.people.audit import AuditEntry, AuditTrail

users_app = KeiriTyper(
    name="users",
    help="利用者と役割（管理者・設計者・実行者・承認者・閲覧者）。",
    no_args_is_help=True,
)
audit_app = KeiriTyper(
    name="audit",
    help="監査ログ（誰が・いつ・何をしたか）の表示・検証・書き出し。",
    no_args_is_help=True,
)

JsonOption = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]
LoginArgument = Annotated[str, typer.Argument(help="ログイン名（例: yamada）")]
RoleOption = Annotated[
    list[str],
    typer.Option(
        "--role",
        help="役割（繰り返し可）: 管理者・設計者・実行者・承認者・閲覧者"
        "（admin, designer, operator, approver, viewer でも可）。",
    ),
]


def _team() -> tuple[Accounts, AuditTrail, Person]:
    from keiri_agent.people.accounts import Accounts
    from keiri_agent.people.audit import AuditTrail
    from keiri_agent.people.operator import operator

    accounts = Accounts.from_settings(settings())
    return accounts, AuditTrail(accounts.engine), operator(accounts)


def _password(prompt: bool, from_stdin: bool) -> str | None:
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise UserInputError(
                "標準入力からパスワードを読めませんでした",
                hint="echo 'パスワード' | keiri-agent users add … --password-stdin の形で"
                "渡してください",
            )
        return line
    if prompt:
        return str(typer.prompt("パスワード", hide_input=True, confirmation_prompt=True))
    return None


def _show(account: Account, as_json: bool, verb: str) -> None:
    from keiri_agent.people.roles import role_names

    if as_json:
        print_json(
            {
                "login": account.login,
                "display_name": account.display_name,
                "roles": sorted(account.roles),
                "source": account.source,
                "disabled": account.disabled,
                "password": account.has_password,
            }
        )
        return
    state = "（無効）" if account.disabled else ""
    console.print(
        f"{verb}: {account.login}  {account.display_name}  {role_names(sorted(account.roles))}"
        f"{state}",
        markup=False,
    )


@users_app.command("add")
def add_command(
    login: LoginArgument,
    role: RoleOption,
    name: Annotated[str, typer.Option("--name", help="表示名（例: 山田 太郎）。")] = "",
    password: Annotated[
        bool, typer.Option("--password", help="パスワードを入力します（2 回）。")
    ] = False,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="パスワードを標準入力の 1 行から読みます。")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """利用者を登録します（最初の 1 人は管理者にしてください）。"""
    from keiri_agent.people.roles import parse_roles, require

    try:
        accounts, trail, person = _team()
        if not accounts.any() and "admin" not in parse_roles(role):
            raise UserInputError(
                "最初の利用者は管理者にしてください",
                hint=f"keiri-agent users add {login} --role 管理者 のように登録すると、"
                "以後その人が利用者を管理できます",
                code="FIRST_USER_ADMIN",
            )
        require(person, "manage_people")
        account = accounts.add(
            login, role, display_name=name, password=_password(password, password_stdin)
        )
        trail.append(
            person.login,
            "user_added",
            account.login,
            {"roles": sorted(account.roles), "display_name": account.display_name},
        )
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    _show(account, as_json, "登録しました")


@users_app.command("list")
def list_command(as_json: JsonOption = False) -> None:
    """登録済みの利用者と役割。"""
    from keiri_agent.people.roles import require

    try:
        accounts, _, person = _team()
        found = accounts.list()
        if found:
            require(person, "manage_people")
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    if as_json:
        print_json(
            [
                {
                    "login": a.login,
                    "display_name": a.display_name,
                    "roles": sorted(a.roles),
                    "source": a.source,
                    "disabled": a.disabled,
                }
                for a in found
            ]
        )
        return
    if not found:
        console.print(
            "利用者はまだいません（keiri-agent users add <ログイン名> --role 管理者 で登録します）",
            markup=False,
        )
    for account in found:
        _show(account, False, "利用者")


def _change(login: str, action: str, as_json: bool, **options: object) -> None:
    from keiri_agent.people.roles import require

    try:
        accounts, trail, person = _team()
        require(person, "manage_people")
        if action == "roles":
            account = accounts.set_roles(login, options["roles"])  # type: ignore[arg-type]
            details: dict[str, object] = {"roles": sorted(account.roles)}
        elif action == "reset":
            account = accounts.reset_password(login, str(options["password"]))
            details = {"changed": "password"}
        else:
            account = getattr(accounts, action)(login)
            details = {"changed": action}
        trail.append(person.login, "user_changed", account.login, details)
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    verbs = {
        "disable": "無効にしました",
        "enable": "有効にしました",
        "roles": "役割を変えました",
        "reset": "パスワードを変えました",
    }
    _show(account, as_json, verbs[action])


@users_app.command("disable")
def disable_command(login: LoginArgument, as_json: JsonOption = False) -> None:
    """利用者を無効にします（記録は残り、サインインとトークンは使えなくなります）。"""
    _change(login, "disable", as_json)


@users_app.command("enable")
def enable_command(login: LoginArgument, as_json: JsonOption = False) -> None:
    """無効にした利用者を有効に戻します。"""
    _change(login, "enable", as_json)


@users_app.command("roles")
def roles_command(login: LoginArgument, role: RoleOption, as_json: JsonOption = False) -> None:
    """利用者の役割を、指定した役割に置き換えます。"""
    _change(login, "roles", as_json, roles=role)


@users_app.command("reset")
def reset_command(
    login: LoginArgument,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="パスワードを標準入力の 1 行から読みます。")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """利用者のパスワードを設定し直します。"""
    try:
        password = _password(True, password_stdin)
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    _change(login, "reset", as_json, password=password)


@users_app.command("token")
def token_command(
    login: LoginArgument,
    label: Annotated[str, typer.Option("--label", help="用途（例: 夜間バッチ）。")] = "",
    as_json: JsonOption = False,
) -> None:
    """機械（バッチ・連携）用のアクセストークンを発行します。表示は 1 回だけです。"""
    from keiri_agent.people.roles import require

    try:
        accounts, trail, person = _team()
        require(person, "manage_people")
        token = accounts.issue_token(login, label)
        trail.append(person.login, "token_issued", login, {"label": label or "token"})
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    if as_json:
        print_json({"login": login, "access_token": token})
        return
    console.print(f"{login} のアクセストークン（この 1 回だけ表示します）:", markup=False)
    print(token)
    console.print("Authorization: Bearer <トークン> で API に送ります。", markup=False)


# --------------------------------------------------------------------------- audit


def _day(text: str | None, option: str) -> dt.datetime | None:
    if text is None:
        return None
    try:
        return dt.datetime.combine(dt.date.fromisoformat(text.strip()), dt.time(), dt.UTC)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} は日付として読めません。YYYY-MM-DD で指定してください", param_hint=option
        ) from None


UserOption = Annotated[str | None, typer.Option("--user", help="この利用者の記録だけ。")]
KindOption = Annotated[
    str | None, typer.Option("--kind", help="この種類の記録だけ（run_started, approval_given …）。")
]
SubjectOption = Annotated[
    str | None, typer.Option("--subject", help="この対象（実行 ID、Plan ID、利用者）の記録だけ。")
]
SinceOption = Annotated[str | None, typer.Option("--since", help="この日（YYYY-MM-DD）から。")]
UntilOption = Annotated[
    str | None, typer.Option("--until", help="この日（YYYY-MM-DD）の前日まで。")
]


def _entries(
    user: str | None, kind: str | None, subject: str | None, since: str | None, until: str | None
) -> tuple[AuditTrail, list[AuditEntry]]:
    from keiri_agent.people.roles import require

    _, trail, person = _team()
    require(person, "view_audit")
    found = trail.entries(
        actor=user,
        kind=kind,
        subject=subject,
        since=_day(since, "--since"),
        until=_day(until, "--until"),
    )
    return trail, found


@audit_app.command("list")
def audit_list_command(
    user: UserOption = None,
    kind: KindOption = None,
    subject: SubjectOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    as_json: JsonOption = False,
) -> None:
    """監査ログを古い順に表示します（時刻は UTC）。"""
    from keiri_agent.people.audit import KINDS

    try:
        _, entries = _entries(user, kind, subject, since, until)
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    if as_json:
        print_json([entry.to_dict() for entry in entries])
        return
    if not entries:
        console.print("該当する記録はありません", markup=False)
    for entry in entries:
        console.print(
            f"{entry.seq:>6}  {entry.at.isoformat(timespec='seconds')}  {entry.actor}  "
            f"{KINDS.get(entry.kind, entry.kind)}  {entry.subject}",
            markup=False,
        )


@audit_app.command("verify")
def audit_verify_command(as_json: JsonOption = False) -> None:
    """監査ログが書き換え・削除されていないかを確かめます（問題があれば終了コード 1）。"""
    from keiri_agent.people.roles import require

    try:
        _, trail, person = _team()
        require(person, "view_audit")
        result = trail.verify()
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    if as_json:
        print_json(result.to_dict())
    elif result.ok:
        console.print(f"OK: {result.entries} 件の記録はすべて元のままです", markup=False)
        if result.head_seq is not None:
            console.print(
                f"最新の記録: {result.head_seq} 番（ハッシュ {result.head_hash}）。"
                "この番号とハッシュを控えておけば、後から最新の記録が消されていないかを"
                "確かめられます（audit list --json でその番号の記録を見ます）",
                markup=False,
            )
    else:
        console.print(f"問題があります: {result.problem}", markup=False, style="bold red")
    if not result.ok:
        raise typer.Exit(code=1)


@audit_app.command("export")
def audit_export_command(
    out: Annotated[Path, typer.Option("--out", help="書き出す CSV ファイル。")],
    user: UserOption = None,
    kind: KindOption = None,
    subject: SubjectOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
) -> None:
    """監査ログを CSV（Excel で開ける UTF-8）に書き出します。"""
    try:
        trail, entries = _entries(user, kind, subject, since, until)
        data = trail.export_csv(entries)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except KeiriAgentError as error:
        raise _fail(error) from None
    except OSError as error:
        raise _fail(
            UserInputError(
                f"{out} に書き込めません（{error.strerror}）",
                hint="書き込めるフォルダーのパスを --out に指定してください",
            )
        ) from None
    console.print(f"{len(entries)} 件を {out} に書き出しました", markup=False)
