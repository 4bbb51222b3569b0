"""Analysis files kept in the workspace, so a conversation can load its file again.

The dataset registry lives in one process (one browser session): after a reload
(F5) or a restart its ``dataset_id`` means nothing. A file loaded on the データ分析
page is therefore also saved here, under a stable *reference*, and a conversation
(thread id) is linked to the reference of the file it was about:

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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from keiri_agent.errors import UserInputError
from keiri_agent.private import write_private
from keiri_agent.workspace import Workspace

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
    sheet: str | None
    keep_total_rows: bool


def _touch(folder: Path) -> None:
    """Mark a copy as used now (its age for ``prune``); a read-only folder stays as it is."""
    with contextlib.suppress(OSError):
        os.utime(folder)


class SavedDatasets:
    """The saved analysis files of one workspace (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self.folder = workspace.state / "datasets"

    def save(self, data: bytes, name: str, *, sheet: str | None, keep_total_rows: bool) -> str:
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
        folder = self.folder / ref
        try:
            if not _REF.match(ref):
                raise ValueError(ref)
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            data = (folder / "data").read_bytes()
            _touch(folder)
            return SavedDataset(
                ref, str(meta["name"]), data, meta.get("sheet"), bool(meta["keep_total_rows"])
            )
        except (OSError, ValueError, KeyError, TypeError):
            raise SavedDatasetError(
                "この会話で使っていたファイルが見つからないため、読み込み直せませんでした。",
                hint="会話の内容は表示しています。続けて質問するには、同じファイルを"
                "もう一度アップロードしてください。",
                details={"ref": ref, "folder": str(folder)},
            ) from None

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
