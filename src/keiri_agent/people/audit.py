"""The audit trail (issue 33): an append-only record of who did what and when.

Each entry holds the time (UTC), the person (their login), the kind of action
(``KINDS``), what it was done to (a Plan id, a run id, a login) and JSON details
(a file's name and SHA-256, an approval's comment, a Plan's diff). Entries are
chained: an entry's ``hash`` is the SHA-256 of the previous entry's hash and of its
own content in one canonical JSON form, so ``verify()`` detects an entry that was
edited, removed or inserted out of order — the 電子帳簿保存法's 真実性 and J-SOX's
trail of changes ask for exactly that of systems handling payments and 証憑.

Two writers appending at once cannot fork the chain: on PostgreSQL they take an
advisory lock in turn; on SQLite (one writer at a time anyway) each entry's
``prev_hash`` is unique in the table, so a second insert on the same head fails and is
retried on the new one.
Secrets never enter an entry: ``append`` refuses details holding a key that names
one (password, token, secret).

Entries are kept for ``audit_retention_days`` (7 years by default, the 法人税法's
period for 帳簿書類): ``prune`` deletes older ones after recording, in an
``audit_pruned`` entry, the last deleted entry's number and hash, so ``verify`` accepts
the shortened chain and still detects entries removed any other way.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from keiri_agent.errors import UserInputError
from keiri_agent.storage.schema import audit_log

_T = TypeVar("_T")

GENESIS = "0" * 64
"""The ``prev_hash`` of the first entry."""
APPEND_ATTEMPTS = 100
"""Times an append is retried when another writer took the head first (SQLite; on
PostgreSQL appenders wait for each other on ``AUDIT_LOCK_KEY``)."""
AUDIT_LOCK_KEY = 0x6B6569726901
"""The PostgreSQL advisory lock appenders take in turn."""
KINDS: dict[str, str] = {
    "sign_in": "サインイン",
    "sign_in_failed": "サインイン失敗",
    "sign_out": "サインアウト",
    "user_added": "利用者の追加",
    "user_changed": "利用者の変更",
    "token_issued": "アクセストークンの発行",
    "plan_registered": "Plan の登録・変更",
    "run_started": "実行の開始",
    "approval_given": "承認",
    "approval_refused": "差戻し",
    "output_downloaded": "出力のダウンロード",
    "file_uploaded": "ファイルのアップロード",
    "settings_changed": "設定の変更",
    "audit_pruned": "保存期間を過ぎた監査ログの削除",
    "permission_denied": "権限がなく拒否",
}
"""The kinds of entry, with how the 履歴 and an export name them."""
_SECRET_KEYS = ("password", "token", "secret", "api_key")


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    at: dt.datetime
    actor: str
    kind: str
    subject: str
    details: dict[str, Any]
    prev_hash: str
    hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at.isoformat(),
            "actor": self.actor,
            "kind": self.kind,
            "kind_label": KINDS.get(self.kind, self.kind),
            "subject": self.subject,
            "details": self.details,
            "hash": self.hash,
        }


@dataclass(frozen=True)
class Verification:
    """``ok`` when every entry's hash is right and each follows the one before;
    otherwise the first ``broken_at`` sequence number and why (Japanese)."""

    entries: int
    ok: bool
    broken_at: int | None = None
    problem: str | None = None
    head_seq: int | None = None
    head_hash: str | None = None
    """The newest entry's number and hash when ``ok``: noted down (or exported), they
    let a later check see that newest entries were removed, which the chain alone
    cannot show."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "broken_at": self.broken_at,
            "problem": self.problem,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
        }


def entry_hash(
    prev_hash: str, at: dt.datetime, actor: str, kind: str, subject: str, details: Any
) -> str:
    """The hash of one entry: SHA-256 over the previous hash and a canonical JSON form."""
    body = json.dumps(
        {
            "at": _utc(at).isoformat(timespec="microseconds"),
            "actor": actor,
            "kind": kind,
            "subject": subject,
            "details": details,
        },
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


def _utc(value: dt.datetime) -> dt.datetime:
    """A stored time as UTC (SQLite returns it without a zone)."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


class AuditTrail:
    """The audit trail over a migrated engine (see the module docstring)."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def append(
        self, actor: str, kind: str, subject: str = "", details: Mapping[str, Any] | None = None
    ) -> AuditEntry:
        content = _content(kind, details)
        return self._write(lambda connection: _insert(connection, actor, kind, subject, content))

    def prune(self, before: dt.datetime, actor: str) -> int:
        """Delete the entries written before ``before`` (the retention setting); how many.
        The chain stays verifiable: first an ``audit_pruned`` entry records the last
        deleted entry's number and hash, which the first kept entry chains to — so
        ``verify`` tells a retention prune from entries removed by hand."""

        def work(connection: sqlalchemy.Connection) -> int:
            last = connection.execute(
                select(audit_log.c.seq, audit_log.c.hash)
                .where(audit_log.c.at < before)
                .order_by(audit_log.c.seq.desc())
                .limit(1)
            ).first()
            if last is None:
                return 0
            count = connection.execute(
                select(sqlalchemy.func.count()).where(audit_log.c.seq <= last.seq)
            ).scalar_one()
            details = {
                "through_seq": int(last.seq),
                "anchor": str(last.hash),
                "before": _utc(before).isoformat(timespec="seconds"),
                "entries": int(count),
            }
            _insert(connection, actor, "audit_pruned", "", _content("audit_pruned", details))
            connection.execute(audit_log.delete().where(audit_log.c.seq <= last.seq))
            return int(count)

        return self._write(work)

    def _write(self, work: Callable[[sqlalchemy.Connection], _T]) -> _T:
        """``work`` in a transaction that may append: one appender at a time."""
        for attempt in range(APPEND_ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(0, 0.01 * attempt))  # let the other writer finish
            try:
                with self.engine.begin() as connection:
                    if connection.dialect.name == "postgresql":  # one appender at a time
                        connection.execute(
                            sqlalchemy.text("SELECT pg_advisory_xact_lock(:key)"),
                            {"key": AUDIT_LOCK_KEY},
                        )
                    return work(connection)
            except IntegrityError:
                continue  # another writer appended on this head: chain on the new one
        raise RuntimeError("the audit trail is too busy to append to")

    def entries(
        self,
        *,
        actor: str | None = None,
        kind: str | None = None,
        subject: str | None = None,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        plan: str | None = None,
        limit: int | None = None,
    ) -> list[AuditEntry]:
        """Entries in order, filtered by person, kind, subject, time and Plan (an entry
        about the Plan itself, or about one of its runs: ``details["plan"]``); with
        ``limit``, the newest that many."""
        if plan:
            found = [
                entry
                for entry in self.entries(
                    actor=actor, kind=kind, subject=subject, since=since, until=until
                )
                if plan in (entry.subject, entry.details.get("plan"))
            ]
            return found[-limit:] if limit else found
        query = select(audit_log).order_by(audit_log.c.seq)
        if actor:
            query = query.where(audit_log.c.actor == actor)
        if kind:
            query = query.where(audit_log.c.kind == kind)
        if subject:
            query = query.where(audit_log.c.subject == subject)
        if since:
            query = query.where(audit_log.c.at >= since)
        if until:
            query = query.where(audit_log.c.at < until)
        if limit:
            query = query.order_by(None).order_by(audit_log.c.seq.desc()).limit(limit)
        with self.engine.connect() as connection:
            rows = [_entry(row._mapping) for row in connection.execute(query)]
        return sorted(rows, key=lambda entry: entry.seq)

    def _all(self) -> Iterator[AuditEntry]:
        with self.engine.connect() as connection:
            for row in connection.execute(select(audit_log).order_by(audit_log.c.seq)):
                yield _entry(row._mapping)

    def verify(self) -> Verification:
        """Recompute the chain from the first entry (see the module docstring)."""
        prev_hash = GENESIS
        count = 0
        head: AuditEntry | None = None
        for entry in self._all():
            count += 1
            head = entry
            if count == 1 and entry.prev_hash != GENESIS and self._pruned_to(entry):
                prev_hash = entry.prev_hash  # the entries before were pruned by retention
            if entry.prev_hash != prev_hash:
                return Verification(
                    count,
                    False,
                    entry.seq,
                    f"{entry.seq} 番の記録の前に、記録が削除されたか並べ替えられています",
                )
            expected = entry_hash(
                prev_hash, entry.at, entry.actor, entry.kind, entry.subject, entry.details
            )
            if entry.hash != expected:
                return Verification(
                    count, False, entry.seq, f"{entry.seq} 番の記録が書き換えられています"
                )
            prev_hash = entry.hash
        if head is None:
            return Verification(0, True)
        return Verification(count, True, head_seq=head.seq, head_hash=head.hash)

    def _pruned_to(self, first: AuditEntry) -> bool:
        """Whether an ``audit_pruned`` entry vouches for ``first`` being the first kept:
        it deleted entries before it, the last of them the one whose hash ``first``
        chains to (numbers may skip: a database's counter can)."""
        for entry in self.entries(kind="audit_pruned"):
            details = entry.details
            through = details.get("through_seq")
            if (
                isinstance(through, int)
                and through < first.seq
                and details.get("anchor") == first.prev_hash
            ):
                return True
        return False

    def export_csv(self, entries: list[AuditEntry]) -> bytes:
        """Entries as CSV (UTF-8 with BOM, for Excel): one row each, details as JSON."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(["番号", "日時（UTC）", "利用者", "操作", "対象", "内容", "ハッシュ"])
        for entry in entries:
            writer.writerow(
                [
                    entry.seq,
                    entry.at.isoformat(timespec="seconds"),
                    entry.actor,
                    KINDS.get(entry.kind, entry.kind),
                    entry.subject,
                    json.dumps(entry.details, ensure_ascii=False, sort_keys=True),
                    entry.hash,
                ]
            )
        return buffer.getvalue().encode("utf-8-sig")


def _content(kind: str, details: Mapping[str, Any] | None) -> dict[str, Any]:
    """``details`` as the JSON an entry keeps (secrets refused)."""
    if kind not in KINDS:
        raise ValueError(f"unknown audit kind {kind!r}")
    content: dict[str, Any] = json.loads(
        json.dumps(dict(details or {}), ensure_ascii=False, default=str)
    )
    _refuse_secrets(content)
    return content


def _insert(
    connection: sqlalchemy.Connection, actor: str, kind: str, subject: str, content: dict[str, Any]
) -> AuditEntry:
    """Append one entry chained to the current head (inside ``AuditTrail._write``)."""
    head = connection.execute(
        select(audit_log.c.hash).order_by(audit_log.c.seq.desc()).limit(1)
    ).first()
    prev_hash = head[0] if head is not None else GENESIS
    at = dt.datetime.now(dt.UTC)
    digest = entry_hash(prev_hash, at, actor, kind, subject, content)
    inserted = connection.execute(
        audit_log.insert().values(
            at=at,
            actor=actor[:128],
            kind=kind,
            subject=subject[:256],
            details=content,
            prev_hash=prev_hash,
            hash=digest,
        )
    ).inserted_primary_key
    seq = inserted[0] if inserted is not None else 0
    return AuditEntry(int(seq), at, actor, kind, subject, content, prev_hash, digest)


def _refuse_secrets(details: Any, path: str = "") -> None:
    if isinstance(details, Mapping):
        for key, value in details.items():
            if any(word in str(key).lower() for word in _SECRET_KEYS):
                raise UserInputError(
                    "監査ログに秘密情報を書き込もうとしました",
                    hint="パスワードやトークンは記録しません"
                    "（開発者向け: details から外してください）",
                    details={"key": f"{path}{key}"},
                    code="AUDIT_SECRET",
                )
            _refuse_secrets(value, f"{path}{key}.")
    elif isinstance(details, list):
        for item in details:
            _refuse_secrets(item, path)


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(
        seq=int(row["seq"]),
        at=_utc(row["at"]),
        actor=str(row["actor"]),
        kind=str(row["kind"]),
        subject=str(row["subject"]),
        details=dict(row["details"] or {}),
        prev_hash=str(row["prev_hash"]),
        hash=str(row["hash"]),
    )
