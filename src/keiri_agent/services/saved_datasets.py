"""Analysis files kept in the workspace, so a conversation can load its file again,
in any process.

The dataset registry lives in one process: after a reload (F5) or a restart, or in
another server process or worker, its ``dataset_id`` means nothing. A file loaded on
the データ分析 page or uploaded through the API is therefore saved here, under a
stable *reference* (the API's ``dataset_id``), and a conversation (thread id) is
linked to the reference of the file it was about:

    <workspace>/.keiri/datasets/<ref>/data        the uploaded bytes
    <workspace>/.keiri/datasets/<ref>/meta.json   name, sheet, keep_total_rows, saved_at
    <workspace>/.keiri/datasets/threads/<thread_id>.json   {"ref": ...}

The reference is the first 16 hex digits of a SHA-256 over the bytes and the load
options, so the same upload is stored once. Files are written atomically and
owner-only (``private.write_private``: a 0600 temporary file, then ``os.replace``;
folders 0700). A reference whose files are gone or damaged raises
``SavedDatasetError`` with a Japanese message and what to do.

Pruning (``prune``, run by the データ分析 page once per browser session): a copy is
deleted when no conversation is linked to it (no ``threads/*.json`` names it) and it
was last saved or loaded more than ``PRUNE_AFTER`` (7 days) ago — time enough to
reload a page or reopen a file the same week. A copy a conversation is linked to is
never deleted, whatever its age, so reopening a kept conversation always finds its
file. A damaged copy (no readable ``meta.json``) follows the same rule.

``LoadedDatasets.of(agent)``: the references one analysis agent (one process) has
loaded into its registry, each loaded from the workspace once (whichever process
saved it) and then reused; a reference whose copy is gone (pruned, purged) is
forgotten by every process alike (``UnknownDatasetError``, 404 in the API).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import threading
import time
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.errors import ExecutionError, UnknownDatasetError, UserInputError
from keiri_agent.private import write_private
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import AnalysisAgent

_REF = re.compile(r"^[0-9a-f]{16}$")
_THREAD = re.compile(r"^[0-9A-Za-z_-]{1,100}$")
PRUNE_AFTER = timedelta(days=7)
"""An unlinked copy not saved or loaded for this long is deleted by ``prune``."""


class SavedDatasetError(UserInputError):
    """A saved file is missing or unreadable."""

    code = "SAVED_DATASET_MISSING"


@dataclass(frozen=True)
class SavedDataset:
    """A saved upload and how it was loaded."""

    ref: str
    name: str
    data: bytes
    sheet: str | int | None
    """A sheet name, or a 0-based sheet index (an API upload's ``sheet=0``)."""
    keep_total_rows: bool


def _login_digest(login: str) -> str:
    return hashlib.sha256(login.encode("utf-8")).hexdigest()[:32]


def _touch(folder: Path) -> None:
    """Mark a copy as used now (its age for ``prune``); a read-only folder stays as it is."""
    with contextlib.suppress(OSError):
        os.utime(folder)


class SavedDatasets:
    """The saved analysis files of one workspace (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self.folder = workspace.state / "datasets"

    def save(
        self, data: bytes, name: str, *, sheet: str | int | None, keep_total_rows: bool
    ) -> str:
        """Keep ``data`` (loaded as ``name`` with these options); returns its reference."""
        digest = hashlib.sha256()
        digest.update(json.dumps([name, sheet, keep_total_rows], ensure_ascii=False).encode())
        digest.update(data)
        ref = digest.hexdigest()[:16]
        folder = self.folder / ref
        if (folder / "meta.json").is_file():
            _touch(folder)
            return ref
        write_private(folder / "data", data)
        meta = {
            "name": name,
            "sheet": sheet,
            "keep_total_rows": keep_total_rows,
            "saved_at": datetime.now(UTC).isoformat(),
        }
        write_private(folder / "meta.json", json.dumps(meta, ensure_ascii=False))
        return ref

    def load(self, ref: str) -> SavedDataset:
        """The saved file ``ref``; ``SavedDatasetError`` when it is gone or damaged."""
        try:
            if not _REF.match(ref):
                raise ValueError(ref)
            folder = self.folder / ref
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            data = (folder / "data").read_bytes()
            _touch(folder)
            sheet = meta.get("sheet")
            if not isinstance(sheet, str | int | None) or isinstance(sheet, bool):
                raise TypeError(sheet)
            return SavedDataset(ref, str(meta["name"]), data, sheet, bool(meta["keep_total_rows"]))
        except (OSError, ValueError, KeyError, TypeError):
            raise self.missing(ref) from None

    def missing(self, ref: str) -> SavedDatasetError:
        """The error for a reference whose copy is gone or damaged (a conversation's file)."""
        return SavedDatasetError(
            "この会話で使っていたファイルが見つからないため、読み込み直せませんでした。",
            hint="会話の内容は表示しています。続けて質問するには、同じファイルを"
            "もう一度アップロードしてください。",
            details={"ref": ref[:100], "folder": str(self.folder / ref[:100])},
        )

    def exists(self, ref: str) -> bool:
        """Whether ``ref`` names a saved copy (its files are there; marked as used now,
        so the copy a process keeps using is not aged out under it)."""
        if not _REF.match(ref):
            return False
        folder = self.folder / ref
        if not ((folder / "meta.json").is_file() and (folder / "data").is_file()):
            return False
        _touch(folder)
        return True

    def add_owner(self, ref: str, login: str) -> None:
        """Record that ``login`` uploaded ``ref`` (one marker file per person, named by
        a digest of the login: two people uploading the same file at once both keep it)."""
        if login and _REF.match(ref):
            write_private(self.folder / ref / "owners" / _login_digest(login), "")

    def owned_by(self, ref: str, login: str) -> bool | None:
        """Whether ``login`` uploaded ``ref``; None when no uploader was recorded (a
        file saved by one person's install, before anyone was registered)."""
        if not _REF.match(ref):
            return None
        owners = self.folder / ref / "owners"
        try:
            recorded = any(owners.iterdir())
        except OSError:
            return None
        if not recorded:
            return None
        return bool(login) and (owners / _login_digest(login)).is_file()

    def link(self, thread_id: str, ref: str) -> None:
        """Record that the conversation ``thread_id`` is about the file ``ref``."""
        if not _THREAD.match(thread_id):
            return
        write_private(self.folder / "threads" / f"{thread_id}.json", json.dumps({"ref": ref}))

    def ref_of(self, thread_id: str) -> str | None:
        """The file the conversation ``thread_id`` was last about, if recorded."""
        if not _THREAD.match(thread_id):
            return None
        try:
            text = (self.folder / "threads" / f"{thread_id}.json").read_text(encoding="utf-8")
            ref = json.loads(text).get("ref")
        except (OSError, ValueError, AttributeError):
            return None
        return ref if isinstance(ref, str) else None

    def linked_refs(self) -> set[str]:
        """The references some conversation is linked to."""
        refs: set[str] = set()
        for path in (self.folder / "threads").glob("*.json"):
            try:
                ref = json.loads(path.read_text(encoding="utf-8")).get("ref")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(ref, str):
                refs.add(ref)
        return refs

    def prune(self, *, older_than: timedelta = PRUNE_AFTER) -> list[str]:
        """Delete the copies no conversation is linked to, unused for ``older_than``;
        returns their references. A copy that cannot be deleted is left for next time."""
        if not self.folder.is_dir():
            return []
        linked = self.linked_refs()
        cutoff = time.time() - older_than.total_seconds()
        pruned: list[str] = []
        for folder in self.folder.iterdir():
            if not _REF.match(folder.name) or folder.name in linked or not folder.is_dir():
                continue
            try:
                if folder.stat().st_mtime >= cutoff:
                    continue
                shutil.rmtree(folder)
            except OSError:
                continue
            pruned.append(folder.name)
        return pruned


def unknown_dataset(ref: str) -> UnknownDatasetError:
    """404 for a reference that names no saved copy (garbled, never uploaded, or gone)."""
    return UnknownDatasetError(
        f"データセット「{ref[:40]}」が見つかりません（保存期間を過ぎて削除されたか、"
        "ID が正しくありません）",
        hint="ファイルをもう一度アップロードして、返された dataset_id を指定してください",
        details={"dataset_id": ref[:100]},
    )


_LOADED: weakref.WeakKeyDictionary[AnalysisAgent, LoadedDatasets] = weakref.WeakKeyDictionary()
_LOADED_LOCK = threading.Lock()


class LoadedDatasets:
    """The saved copies one analysis agent has loaded: reference → its registry id.

    ``of(agent)`` is the one map of that agent (a process's agent, or a page's), so
    each reference is parsed at most once per agent; two threads asking for the same
    reference at once wait for one load. Every use checks that the saved copy is
    still there (``SavedDatasets.exists``), so all processes agree on what exists.
    """

    def __init__(self, agent: AnalysisAgent) -> None:
        self.agent = agent
        self.saved = SavedDatasets(Workspace.from_settings(agent.settings))
        self._ids: dict[str, str] = {}
        self._loading: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, agent: AnalysisAgent) -> LoadedDatasets:
        with _LOADED_LOCK:
            loaded = _LOADED.get(agent)
            if loaded is None:
                loaded = _LOADED[agent] = cls(agent)
            return loaded

    def upload(
        self, data: bytes, name: str, *, sheet: str | int | None, keep_total_rows: bool
    ) -> str:
        """Load ``data`` (its ``DatasetError`` when it cannot be loaded: nothing is
        saved then), save it in the workspace (``DATASET_NOT_SAVED`` when it cannot
        be written); its reference."""
        dataset_id = self.agent.load_bytes(data, name, sheet=sheet, keep_total_rows=keep_total_rows)
        try:
            ref = self.saved.save(data, name, sheet=sheet, keep_total_rows=keep_total_rows)
        except OSError as error:
            self.agent.registry.remove(dataset_id)
            raise ExecutionError(
                f"「{name}」を作業フォルダーに保存できませんでした: {error.strerror or error}",
                hint="作業フォルダー（KEIRI_AGENT_HOME）の空き容量と権限を確認してから、"
                "もう一度アップロードしてください",
                code="DATASET_NOT_SAVED",
            ) from error
        except BaseException:
            self.agent.registry.remove(dataset_id)
            raise
        with self._lock:
            kept = self._ids.setdefault(ref, dataset_id)
        if kept != dataset_id:  # the same file was loaded before: keep one copy
            self.agent.registry.remove(dataset_id)
        return ref

    def dataset_id(self, ref: str) -> str:
        """The registry id of ``ref`` in this agent, loaded from the workspace on first
        use; ``UnknownDatasetError`` when no saved copy has that reference (or it is
        damaged)."""
        if not self.saved.exists(ref):
            self._forget(ref)
            raise unknown_dataset(ref)
        with self._lock:
            known = self._ids.get(ref)
            if known is not None and known in self.agent.registry:
                return known
            loading = self._loading.setdefault(ref, threading.Lock())
        with loading:
            with self._lock:
                known = self._ids.get(ref)
            if known is not None and known in self.agent.registry:
                return known
            try:
                found = self.saved.load(ref)
                dataset_id = self.agent.load_bytes(
                    found.data,
                    found.name,
                    sheet=found.sheet,
                    keep_total_rows=found.keep_total_rows,
                )
            except SavedDatasetError:
                raise unknown_dataset(ref) from None
            finally:
                with self._lock:
                    self._loading.pop(ref, None)
            with self._lock:
                self._ids[ref] = dataset_id
            return dataset_id

    def summary(self, ref: str) -> dict[str, Any]:
        """The summary of ``ref`` (its ``dataset_id`` is the reference, never the
        registry id of this process)."""
        summary = self.agent.registry.summary(self.dataset_id(ref))
        summary["dataset_id"] = ref
        return summary

    def _forget(self, ref: str) -> None:
        with self._lock:
            dataset_id = self._ids.pop(ref, None)
        if dataset_id is not None:
            self.agent.registry.remove(dataset_id)
