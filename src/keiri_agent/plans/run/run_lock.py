"""One invocation owns a run at a time: an exclusive OS lock per run state.

    with RunLock(state_path(runs_dir, plan_id, run_id), run_id):
        state = read_state(path)      # read (again) only once the run is owned
        ...                           # run, save_state, ...

The runner holds the lock for a whole invocation — ``start`` (from before the
state file first exists), ``resume`` and ``rerun_from_node`` — and releases it on
every way out (success, pause, failure, an exception, Ctrl-C). A second invocation
of the same run does not wait: it gets ``RunInProgressError`` (``RUN_IN_PROGRESS``)
at once and changes nothing.

What is locked, and why:

* A lock file next to the state, ``{run_id}.state.json.lock``, not the state file
  itself. ``save_state`` replaces the state file atomically (``os.replace``): on
  POSIX a lock belongs to the replaced inode, so the first save would silently
  drop it; on Windows a locked (open) file blocks the replace and its locked bytes
  cannot be read by anyone else (``PlanRunner.result``, the 実行 page).
* The lock is the operating system's (``portalocker``: ``fcntl.flock`` on POSIX,
  ``msvcrt.locking`` on Windows), exclusive and non-blocking. It belongs to the
  open file handle, so it is freed when the holder releases it, closes the file or
  dies in any way (``kill -9`` included) — a crashed run never blocks a later one.
  Only a held lock counts: the file itself is left in place, empty, and its mere
  existence means nothing; it is created owner-only (``0600``) like the state.
  (Deleting it on release would let two processes lock two different files of the
  same name: one that opened the old file before it was deleted, one that created
  the new one.) Delete it together with the state file to drop a run.
* Locks are per open file, not per process, so two invocations of one run in the
  same process (two browser sessions of the Streamlit app) also exclude each other.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import IO, Any

import portalocker

from keiri_agent.errors import ExecutionError, RunInProgressError
from keiri_agent.private import private_dir, private_opener

LOCK_SUFFIX = ".lock"


def lock_path(state_file: Path) -> Path:
    """``{run_id}.state.json.lock``, next to the state file."""
    return state_file.with_name(state_file.name + LOCK_SUFFIX)


class RunLock:
    """The exclusive, non-blocking lock of one run (a context manager)."""

    def __init__(self, state_file: Path, run_id: str) -> None:
        self.path = lock_path(state_file)
        self.run_id = run_id
        self._lock: portalocker.Lock[IO[Any]] | None = None

    def acquire(self) -> None:
        """Own the run, or raise RunInProgressError at once when another holds it."""
        private_dir(self.path.parent)
        lock: portalocker.Lock[IO[Any]] = portalocker.Lock(
            str(self.path), "a", timeout=0, fail_when_locked=True, opener=private_opener
        )
        try:
            lock.acquire()
        except portalocker.exceptions.AlreadyLocked:
            raise self._in_progress() from None
        except portalocker.exceptions.LockException as error:
            raise ExecutionError(
                f"実行 ({self.run_id}) の状態ファイルをロックできませんでした: {error}",
                hint="runs フォルダーは、ファイルをロックできるローカルのディスクに"
                "置いてください。",
                code="RUN_LOCK_FAILED",
                details={"run_id": self.run_id, "lock_path": str(self.path)},
            ) from None
        self._lock = lock

    def release(self) -> None:
        """Give the run up (nothing when not held)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def _in_progress(self) -> RunInProgressError:
        folder = self.path.parent
        return RunInProgressError(
            f"この実行 ({self.run_id}) は別の処理で実行中です。"
            "同じ実行を同時に動かすことはできないため、何も変更していません。",
            hint=(
                "別のウィンドウ・ターミナル、または「実行」ページでこの実行が動いていないか確認し、"
                "終わるまで待ってから、もう一度お試しください。"
                f"進み具合はフォルダー {folder} の実行ログ（名前が -{self.run_id}.jsonl で"
                "終わるファイル）で確認できます。"
            ),
            details={"run_id": self.run_id, "lock_path": str(self.path)},
        )

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
