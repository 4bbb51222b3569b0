"""What a store's failure means to the user: damaged, locked, or out of reach.

Every database the product keeps (the application database ``keiri.db`` or PostgreSQL,
the conversations' ``checkpoints.db``) reports its faults as one of three errors, each
with a code, a Japanese message naming the store and a fix:

- ``StoreCorruptError`` (``STORE_CORRUPT``): the file is damaged or is not a database
  (random bytes, truncated, garbled pages, a folder in its place). It is never deleted
  or repaired for the user: the fix is to move it aside.
- ``StoreLockedError`` (``STORE_LOCKED``): another process kept the write lock longer
  than the busy timeout (``engine.SQLITE_BUSY_TIMEOUT_MS``): try again shortly.
- ``StoreUnreachableError`` (``STORE_UNREACHABLE``): the database server did not
  accept a connection (named by host and port, never by its password).

``store_error(error, where)`` classifies a driver exception by its structured fields
(SQLite's error name, the psycopg class and SQLSTATE), never by its wording, and returns
``None`` for anything else (a bug, a constraint) so that it is not disguised.
"""

from __future__ import annotations

import sqlite3

from keiri_agent.errors import ErrorCategory, ExecutionError, UserInputError

_SQLITE_DAMAGE = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CANTOPEN"})
_SQLITE_LOCK = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED"})
_POSTGRES_CONNECTION_CLASSES = ("08", "57P")
"""SQLSTATE classes of a connection that failed or a server shutting down or starting."""


class StoreCorruptError(UserInputError):
    """A state file on disk is damaged: move it aside (it is never deleted for the user)."""

    code = "STORE_CORRUPT"
    category: ErrorCategory = "unavailable"  # the server's own store, not the request, is at fault


class StoreLockedError(ExecutionError):
    """Another process held the store's write lock too long: the same call may succeed."""

    code = "STORE_LOCKED"
    category: ErrorCategory = "unavailable"  # the server's own store, not the request, is at fault


class StoreUnreachableError(ExecutionError):
    """The database server did not answer: nothing was read or written."""

    code = "STORE_UNREACHABLE"
    category: ErrorCategory = "unavailable"  # the server's own store, not the request, is at fault


STORE_ERRORS = (StoreCorruptError, StoreLockedError, StoreUnreachableError)
"""Every store error: a caller that carries on past a failed step must not carry on
past these (nothing it does next can be saved)."""


def store_corrupt(
    where: str, error: BaseException, *, what: str = "保存ファイル"
) -> StoreCorruptError:
    """The error for a damaged store at ``where`` (a file path)."""
    return StoreCorruptError(
        f"{what} {where} が壊れているため読み書きできません（{_name(error)}）",
        hint=(
            f"{where} を別の場所へ移動するか名前を変えてから、もう一度実行してください"
            "（新しい保存ファイルが作られます。元のファイルは自動では削除しません。"
            "中身が必要な場合はバックアップから戻してください）"
        ),
        details={"path": where, "error": _name(error)},
    )


def store_error(
    error: BaseException, where: str
) -> StoreCorruptError | StoreLockedError | StoreUnreachableError | None:
    """The store error ``error`` (a DB-API exception) stands for, or ``None``.

    ``where``: the file path (SQLite) or ``host:port`` (a server) to name.
    """
    if isinstance(error, sqlite3.Error):
        name = getattr(error, "sqlite_errorname", "") or ""
        if name in _SQLITE_LOCK:
            return StoreLockedError(
                f"保存先 {where} を別の処理が書き込み中のため、保存できませんでした",
                hint="しばらく待ってからもう一度実行してください。繰り返す場合は、同じ作業フォルダー"
                "を使っている別の keiri-agent（画面・サーバー・コマンド）を終了してから実行します",
                details={"path": where, "error": name},
            )
        if name in _SQLITE_DAMAGE or type(error) is sqlite3.DatabaseError:
            return store_corrupt(where, error, what="データベースファイル")
        return None
    if _is_postgres_connection_failure(error):
        return StoreUnreachableError(
            f"データベースサーバー {where} に接続できませんでした",
            hint="サーバーが起動しているか、接続先（KEIRI_AGENT_DATABASE_URL のホスト名・ポート・"
            "データベース名）とネットワークを確認して、もう一度実行してください",
            details={"server": where, "error": _name(error)},
        )
    return None


def _is_postgres_connection_failure(error: BaseException) -> bool:
    """A psycopg error of a connection that was never made or was lost."""
    module = type(error).__module__ or ""
    if not module.startswith("psycopg"):
        return False
    import psycopg

    if not isinstance(error, psycopg.OperationalError):
        return False
    sqlstate = getattr(error, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(_POSTGRES_CONNECTION_CLASSES)


def _name(error: BaseException) -> str:
    """The driver's error name (``SQLITE_NOTADB``) or the exception's class."""
    return getattr(error, "sqlite_errorname", None) or type(error).__name__
