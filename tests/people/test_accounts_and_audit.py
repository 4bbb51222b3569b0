"""Accounts (argon2 passwords, machine tokens, roles, the last 管理者 kept) and the
hash-chained audit trail, on SQLite and PostgreSQL: an entry edited, removed or a
chain forked by two writers is detected by ``verify``."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import sqlalchemy
from sqlalchemy import text

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.people.accounts import Accounts
from keiri_agent.people.audit import AuditTrail
from keiri_agent.people.roles import PermissionDeniedError, Person, require
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade

PASSWORD = "correct horse battery staple"


@pytest.fixture
def engine(app_database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    monkeypatch.setenv("KEIRI_AGENT_DATABASE_URL", app_database_url)
    engine = create_engine(Settings())
    upgrade(engine)
    yield engine
    engine.dispose()


def test_passwords_are_kept_as_argon2_hashes_and_checked(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine)
    accounts.add("yamada", ["実行者"], display_name="山田 太郎", password=PASSWORD)
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT password_hash FROM users")).scalar()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert accounts.sign_in("yamada", PASSWORD) is not None
    assert accounts.sign_in("yamada", PASSWORD + "!") is None
    assert accounts.sign_in("nobody", PASSWORD) is None
    accounts.disable("yamada")
    assert accounts.sign_in("yamada", PASSWORD) is None


def test_a_machine_token_is_shown_once_and_kept_only_as_its_digest(
    engine: sqlalchemy.Engine,
) -> None:
    accounts = Accounts(engine)
    accounts.add("batch", ["operator"])
    token = accounts.issue_token("batch", "夜間バッチ")
    with engine.connect() as connection:
        kept = connection.execute(text("SELECT token_hash FROM user_tokens")).scalar()
    assert token not in kept and len(kept) == 64
    found = accounts.by_token(token)
    assert found is not None and found.login == "batch"
    assert accounts.by_token(token + "x") is None
    accounts.disable("batch")  # its tokens stop working with it
    assert accounts.by_token(token) is None


def test_bad_input_is_named(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine)
    with pytest.raises(UserInputError, match="役割「経理」はありません"):
        accounts.add("sato", ["経理"])
    with pytest.raises(UserInputError, match="パスワードが短すぎます"):
        accounts.add("sato", ["viewer"], password="short")
    with pytest.raises(UserInputError, match="ログイン名"):
        accounts.add("佐藤", ["viewer"])
    accounts.add("sato", ["viewer"])
    with pytest.raises(UserInputError, match="すでに登録されています"):
        accounts.add("sato", ["viewer"])


def test_the_last_enabled_admin_is_kept(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine)
    accounts.add("boss", ["admin"])
    with pytest.raises(UserInputError, match="最後の管理者") as refused:
        accounts.disable("boss")
    assert refused.value.code == "LAST_ADMIN"
    with pytest.raises(UserInputError, match="最後の管理者"):
        accounts.set_roles("boss", ["viewer"])
    accounts.add("deputy", ["admin", "approver"])
    assert accounts.disable("boss").disabled


def test_roles_decide_what_a_person_may_do() -> None:
    starter = Person("yamada", "山田", frozenset({"operator"}))
    require(starter, "run")
    with pytest.raises(PermissionDeniedError) as refused:
        require(starter, "approve")
    assert refused.value.code == "PERMISSION_DENIED"
    assert "山田 さんには「承認・差戻しをする」権限がありません（必要な役割: 承認者）" in str(
        refused.value
    )
    viewer = Person("suzuki", roles=frozenset({"viewer"}))
    for action in ("run", "approve", "design", "manage_people"):
        assert not viewer.may(action)
    assert viewer.may("view")


def test_the_audit_trail_detects_an_edited_or_removed_entry(engine: sqlalchemy.Engine) -> None:
    trail = AuditTrail(engine)
    trail.append("yamada", "run_started", "run_1", {"files": [{"name": "請求.csv"}]})
    trail.append("sato", "approval_given", "run_1", {"comment": "確認しました"})
    trail.append("yamada", "output_downloaded", "run_1", {"file": "消込結果.xlsx"})
    assert trail.verify().ok and trail.verify().entries == 3
    assert [e.actor for e in trail.entries(subject="run_1")] == ["yamada", "sato", "yamada"]
    assert [e.kind for e in trail.entries(actor="sato")] == ["approval_given"]

    with engine.begin() as connection:  # someone edits the approver in the database
        connection.execute(text("UPDATE audit_log SET actor = 'yamada' WHERE seq = 2"))
    broken = trail.verify()
    assert (broken.ok, broken.broken_at) == (False, 2) and "書き換え" in str(broken.problem)

    with engine.begin() as connection:
        connection.execute(text("UPDATE audit_log SET actor = 'sato' WHERE seq = 2"))
    assert trail.verify().ok
    with engine.begin() as connection:  # … or removes it
        connection.execute(text("DELETE FROM audit_log WHERE seq = 2"))
    removed = trail.verify()
    assert (removed.ok, removed.broken_at) == (False, 3) and "削除" in str(removed.problem)


def test_writers_appending_at_once_keep_one_chain(engine: sqlalchemy.Engine) -> None:
    trail = AuditTrail(engine)
    start = threading.Barrier(4)

    def write(who: str) -> None:
        start.wait()
        for number in range(10):
            trail.append(who, "run_started", f"run_{who}_{number}")

    threads = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = trail.verify()
    assert result.ok and result.entries == 40


def test_secrets_never_enter_the_trail_and_export_is_csv(engine: sqlalchemy.Engine) -> None:
    trail = AuditTrail(engine)
    with pytest.raises(UserInputError):
        trail.append("admin", "user_added", "yamada", {"password": PASSWORD})
    trail.append("admin", "user_added", "yamada", {"roles": ["operator"]})
    exported = trail.export_csv(trail.entries()).decode("utf-8-sig")
    header, row = exported.splitlines()[:2]
    assert header.startswith("番号,日時（UTC）,利用者,操作,対象,内容")
    assert ",admin,利用者の追加,yamada," in row and PASSWORD not in exported


def test_retention_prunes_old_entries_and_the_chain_still_verifies(
    engine: sqlalchemy.Engine,
) -> None:
    import datetime as dt
    import time

    trail = AuditTrail(engine)
    for index in range(3):
        trail.append("keiri", "sign_in", f"old{index}")
    time.sleep(0.01)
    middle = dt.datetime.now(dt.UTC)
    time.sleep(0.01)
    kept = [trail.append("yamada", "run_started", f"run_{index}") for index in range(2)]

    assert trail.prune(middle, "ops") == 3
    assert trail.prune(middle, "ops") == 0
    entries = trail.entries()
    assert [e.subject for e in entries] == ["run_0", "run_1", ""]
    pruned = entries[-1]
    assert (pruned.kind, pruned.details["entries"], pruned.details["through_seq"]) == (
        "audit_pruned",
        3,
        kept[0].seq - 1,
    )
    assert trail.verify().ok

    time.sleep(0.01)
    assert trail.prune(dt.datetime.now(dt.UTC), "ops") == 3  # the prune entry goes too
    assert trail.verify().ok and [e.kind for e in trail.entries()] == ["audit_pruned"]

    trail.append("sato", "approval_given", "run_9")
    with engine.begin() as connection:  # the oldest kept entry removed by hand
        connection.execute(text("DELETE FROM audit_log WHERE kind = 'audit_pruned'"))
    result = trail.verify()
    assert not result.ok and "削除" in (result.problem or "")


def test_a_prune_over_numbers_the_database_skipped_still_verifies(
    engine: sqlalchemy.Engine,
) -> None:
    import datetime as dt
    import time

    trail = AuditTrail(engine)
    for index in range(3):
        trail.append("keiri", "sign_in", f"e{index}")
    time.sleep(0.01)
    cutoff = dt.datetime.now(dt.UTC)
    time.sleep(0.01)
    postgresql = engine.dialect.name == "postgresql"
    if postgresql:  # numbers a rolled-back insert took are never handed out again
        with engine.begin() as connection:
            connection.execute(text("SELECT nextval(pg_get_serial_sequence('audit_log', 'seq'))"))
    trail.append("yamada", "run_started", "run_1")
    if not postgresql:  # SQLite reuses numbers: make the gap by hand
        with engine.begin() as connection:
            connection.execute(text("UPDATE audit_log SET seq = 20 WHERE subject = 'run_1'"))

    assert trail.prune(cutoff, "ops") == 3
    first = trail.entries()[0]
    assert first.subject == "run_1" and first.seq > 4
    result = trail.verify()
    assert result.ok, result.problem
    assert result.head_seq == trail.entries()[-1].seq and result.head_hash
