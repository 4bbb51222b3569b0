"""``keiri-agent users`` and ``audit`` from the command line, as the OS user: the first
account must be a 管理者; afterwards only a 管理者 manages people and reads the trail;
``audit verify`` exits 1 once an entry is edited in the database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy
from typer.testing import CliRunner

from keiri_agent.cli.app import app

PASSWORD = "correct horse battery staple"


def run(*arguments: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(arguments), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def as_user(monkeypatch: pytest.MonkeyPatch) -> object:
    def become(login: str) -> None:
        monkeypatch.setattr("keiri_agent.people.operator.os_login", lambda: login)

    become("keiri")
    return become


def test_a_team_is_set_up_and_its_trail_verified(keiri_home: Path, as_user: object) -> None:
    code, out, _ = run("users", "list")
    assert code == 0 and "利用者はまだいません" in out
    code, _, err = run("users", "add", "yamada", "--role", "実行者")
    assert code == 1 and "最初の利用者は管理者にしてください" in err

    assert run("users", "add", "keiri", "--role", "管理者", "--name", "経理 花子")[0] == 0
    code, out, _ = run(
        "users", "add", "yamada", "--role", "operator", "--password-stdin", "--json",
        input=PASSWORD + "\n",
    )  # fmt: skip
    assert code == 0 and json.loads(out)["password"] is True
    assert run("users", "add", "sato", "--role", "承認者", "--role", "閲覧者")[0] == 0
    code, out, _ = run("users", "token", "yamada", "--label", "夜間バッチ", "--json")
    assert code == 0 and json.loads(out)["access_token"].startswith("ka_")

    code, out, _ = run("users", "list", "--json")
    assert {item["login"]: item["roles"] for item in json.loads(out)} == {
        "keiri": ["admin"],
        "sato": ["approver", "viewer"],
        "yamada": ["operator"],
    }
    code, out, _ = run("audit", "list", "--json")
    entries = json.loads(out)
    assert [(e["actor"], e["kind"], e["subject"]) for e in entries] == [
        ("keiri", "user_added", "keiri"),
        ("keiri", "user_added", "yamada"),
        ("keiri", "user_added", "sato"),
        ("keiri", "token_issued", "yamada"),
    ]
    assert PASSWORD not in out and "ka_" not in out  # no secret in the trail
    code, out, _ = run("audit", "verify")
    assert code == 0 and "4 件の記録はすべて元のままです" in out
    export = keiri_home / "監査ログ.csv"
    assert run("audit", "export", "--out", str(export), "--user", "keiri")[0] == 0
    assert export.read_bytes().startswith(
        b"\xef\xbb\xbf"
    ) and "token_issued" not in export.read_text(encoding="utf-8-sig")

    database = next(keiri_home.rglob("keiri.db"))
    engine = sqlalchemy.create_engine(f"sqlite:///{database}")
    with engine.begin() as connection:
        connection.execute(sqlalchemy.text("UPDATE audit_log SET subject = 'x' WHERE seq = 2"))
    engine.dispose()
    code, out, _ = run("audit", "verify", "--json")
    assert code == 1 and json.loads(out) == {
        "ok": False,
        "entries": 2,
        "broken_at": 2,
        "problem": "2 番の記録が書き換えられています",
        "head_seq": None,
        "head_hash": None,
    }


def test_only_an_admin_manages_people_and_reads_the_trail(
    keiri_home: Path, as_user: object
) -> None:
    assert run("users", "add", "keiri", "--role", "管理者")[0] == 0
    assert run("users", "add", "yamada", "--role", "実行者", "--name", "山田")[0] == 0
    as_user("yamada")  # type: ignore[operator]
    code, _, err = run("users", "add", "suzuki", "--role", "閲覧者")
    assert code == 1
    assert "[PERMISSION_DENIED] 山田 さんには「利用者を管理する」権限がありません" in err
    assert "必要な役割: 管理者" in err
    code, out, _ = run("audit", "verify", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "PERMISSION_DENIED"
    as_user("stranger")  # type: ignore[operator]
    assert run("users", "list")[0] == 1  # not registered: no role at all
    as_user("keiri")  # type: ignore[operator]
    code, _, err = run("users", "disable", "keiri")
    assert code == 1 and "LAST_ADMIN" in err
    code, out, _ = run("users", "roles", "yamada", "--role", "実行者", "--role", "設計者")
    assert code == 0 and "役割を変えました: yamada" in out


SMALL_PLAN = """\
apiVersion: v1
id: cli/hello
version: 0.1.0
description: 挨拶の文を作る
graph:
  - id: hello
    block: text.template
    in:
      template: "こんにちは"
      values: {}
    out: {text: text}
"""


def test_plan_commands_check_the_os_users_roles_and_registering_is_audited(
    keiri_home: Path, as_user: object
) -> None:
    plan = keiri_home / "hello.yaml"
    plan.write_text(SMALL_PLAN, encoding="utf-8")
    assert run("plan", "run", str(plan), "--json")[0] == 0  # nobody registered: as before
    assert run("users", "add", "keiri", "--role", "管理者")[0] == 0
    assert run("users", "add", "suzuki", "--role", "閲覧者", "--name", "鈴木")[0] == 0
    assert run("users", "add", "tanaka", "--role", "設計者", "--role", "実行者")[0] == 0

    as_user("suzuki")  # type: ignore[operator]
    code, _, err = run("plan", "run", str(plan))
    assert code == 1 and "鈴木 さんには「Plan を実行し、エージェントを使う」権限がありません" in err
    code, _, err = run("plan", "register", str(plan))
    assert code == 1 and "PERMISSION_DENIED" in err

    as_user("tanaka")  # type: ignore[operator]
    assert run("plan", "run", str(plan), "--json")[0] == 0
    assert run("plan", "register", str(plan))[0] == 0
    as_user("keiri")  # type: ignore[operator]
    code, out, _ = run("audit", "list", "--kind", "plan_registered", "--json")
    (entry,) = json.loads(out)
    assert (entry["actor"], entry["subject"]) == ("tanaka", "cli/hello")
    assert len(entry["details"]["sha256"]) == 64
    assert (
        entry["details"]["previous"] is None
        and "+    template: こんにちは" in (entry["details"]["diff"])
    )

    as_user("tanaka")  # type: ignore[operator]
    plan.write_text(SMALL_PLAN.replace("こんにちは", "おはようございます"), encoding="utf-8")
    assert run("plan", "register", str(plan))[0] == 0
    as_user("keiri")  # type: ignore[operator]
    code, out, _ = run("audit", "list", "--kind", "plan_registered", "--json")
    changed = json.loads(out)[-1]["details"]
    assert changed["previous"] == entry["details"]["file"].rsplit("/", 1)[-1] + ".yaml"
    assert "-    template: こんにちは" in changed["diff"]
    assert "+    template: おはようございます" in changed["diff"]

    as_user("tanaka")  # type: ignore[operator]
    secret = SMALL_PLAN.replace("graph:", 'vars: {bank_account: "9876543"}\ngraph:')
    plan.write_text(secret, encoding="utf-8")
    assert run("plan", "register", str(plan))[0] == 0
    as_user("keiri")  # type: ignore[operator]
    code, out, _ = run("audit", "list", "--kind", "plan_registered", "--json")
    diff = json.loads(out)[-1]["details"]["diff"]
    assert "bank_account" in diff and "9876543" not in diff  # a secret var's value


APPROVAL_PLAN = """\
apiVersion: v1
id: cli/approval
version: 0.1.0
graph:
  - id: approve
    block: ui.interactive_input
    in:
      mode: confirm
      message: 支払一覧を承認してください
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
"""


def test_an_approval_at_the_command_line_follows_the_same_rule(
    keiri_home: Path, as_user: object
) -> None:
    plan = keiri_home / "approval.yaml"
    plan.write_text(APPROVAL_PLAN, encoding="utf-8")
    approve = keiri_home / "approve.json"
    approve.write_text(json.dumps({"approve": {"approved": True}}), encoding="utf-8")
    assert run("users", "add", "keiri", "--role", "管理者")[0] == 0
    assert run("users", "add", "yamada", "--role", "実行者", "--role", "承認者")[0] == 0
    assert run("users", "add", "sato", "--role", "承認者", "--role", "実行者")[0] == 0

    as_user("yamada")  # type: ignore[operator]
    code, _, err = run("plan", "run", str(plan), "--inputs", str(approve), "--no-prompt")
    assert code == 1 and "実行を始めた人のため、承認できません（職務分掌）" in err
    code, out, _ = run("plan", "run", str(plan), "--json", "--no-prompt")
    assert code == 0, out
    run_id = json.loads(out)["run_id"]

    code, _, err = run("plan", "resume", run_id, "--inputs", str(approve), "--no-prompt")
    assert code == 1 and "職務分掌" in err  # the run's state knows who started it

    as_user("sato")  # type: ignore[operator]
    code, out, err = run("plan", "resume", run_id, "--inputs", str(approve), "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "success"


def test_every_command_that_changes_or_uses_the_agents_checks_the_role(
    keiri_home: Path, as_user: object
) -> None:
    assert run("users", "add", "keiri", "--role", "管理者")[0] == 0
    assert run("users", "add", "suzuki", "--role", "閲覧者", "--name", "鈴木")[0] == 0
    as_user("suzuki")  # type: ignore[operator]
    refused = {
        ("analyze", "sales.csv", "地域別の売上"): "Plan を実行し、エージェントを使う",
        ("helpdesk", "ask", "経費の締め日は？"): "Plan を実行し、エージェントを使う",
        ("helpdesk", "index", "manual.md"): "Plan を作成・変更・登録する",
        ("research", "ask", "インボイス制度"): "Plan を実行し、エージェントを使う",
        ("schedule", "add", "monthly", "毎月1日"): "Plan を実行し、エージェントを使う",
        ("plan", "generate", "--instruction", "売上を集計して"): "Plan を作成・変更・登録する",
        ("purge", "--yes"): "設定を変える",
    }
    for arguments, action in refused.items():
        code, _, err = run(*arguments)
        assert code == 1 and f"鈴木 さんには「{action}」権限がありません" in err, (arguments, err)
    code, out, _ = run("schedule", "pause", "sch_1", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "PERMISSION_DENIED"
    assert run("purge")[0] == 1  # even the dry run: it lists what people kept
    assert run("schedule", "list")[0] == 0  # reading stays open to every role
