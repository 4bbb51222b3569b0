"""``KnowledgeBase``: named collections of indexed documents, re-indexed incrementally.

Layout under ``root`` (default ``<workspace>/.keiri/knowledge/<name>``)::

    <collection>/manifest.json     document name → sha256, size, chunks, kind, indexed_at
                                   (both files validated on load, ``search.stored``)
    <collection>/keyword/          the collection's KeywordIndex
    (vector indexes live wherever ``vector_index_factory`` puts them)

Every file and folder is created owner-only (``keiri_agent.private``: 0600 / 0700).

``index_files`` chunks each file (``chunk_document``, or ``chunk_faq`` with
``faq=True``), skips files whose content is unchanged since the last run (and were
chunked by this version of extraction and chunking, ``CHUNKING_VERSION``: an upgrade
re-indexes them), replaces the chunks of changed files, and saves after every file so an
interruption loses nothing already done. A file that cannot be read is reported in
``IndexReport.failed`` with its error; the other files are still indexed and what was
indexed before stays searchable.

A document is named by its file name; two files with the same name in one call are an
error naming both (rename one, or index them into different collections).

Folders are walked by the ZIP/folder reader's rule (``files.archive.walk_folder``): a
symlink leading outside the folder, and a symlinked folder, are never followed; each is
listed in ``IndexReport.skipped`` (a symlink to a file inside the folder is indexed).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import portalocker

from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.files.archive import walk_folder
from keiri_agent.private import private_dir, private_opener, write_private
from keiri_agent.search.chunking import (
    CHUNKING_VERSION,
    DOCUMENT_SUFFIXES,
    FAQ_SUFFIXES,
    chunk_document,
    chunk_faq,
)
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import BatchProgress, Chunk, ChunkIndex
from keiri_agent.search.stored import ManifestFile, read_stored
from keiri_agent.search.tokenize import Tokenizer, default_tokenizer
from keiri_agent.workspace import Workspace

MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".lock"
LOCK_TIMEOUT_S = 120.0
"""How long an indexing run waits for another process's run on the same collection."""
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")

ProgressCallback = Callable[[int, int, str], None]
"""``on_progress(done, total, document)``: called after each file (done counts from 1).

A file whose chunks are embedded in several requests (a long document; a slow server
whose batches were halved) is also reported after each of its batches but the last,
with ``done`` the files finished before it and ``document`` the file's name followed by
how many of its chunks are embedded: ``manual.pdf（埋め込み 64/300 チャンク）``."""


@dataclass(frozen=True)
class IndexFailure:
    """A file that could not be indexed: its document name, path and the error."""

    document: str
    path: str
    code: str
    message: str
    hint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.document,
            "path": self.path,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class IndexSkip:
    """A folder entry not indexed on purpose (a symlink leading outside the folder, or to
    a folder): its name, path and why."""

    document: str
    path: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"document": self.document, "path": self.path, "reason": self.reason}


@dataclass
class IndexReport:
    """What one ``index_files`` / ``remove`` call did, document names by outcome."""

    collection: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[IndexFailure] = field(default_factory=list)
    skipped: list[IndexSkip] = field(default_factory=list)
    """Symlinks in indexed folders that were not followed (not an error)."""
    chunks: int = 0
    """Chunks written by this call (added and updated documents)."""

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "removed": list(self.removed),
            "failed": [failure.to_dict() for failure in self.failed],
            "skipped": [skip.to_dict() for skip in self.skipped],
            "chunks": self.chunks,
        }

    def summary(self) -> str:
        """``manual: 追加 3・更新 0・変更なし 0・削除 0・失敗 0`` (what a person reads)."""
        counts = [
            ("追加", len(self.added)),
            ("更新", len(self.updated)),
            ("変更なし", len(self.unchanged)),
            ("削除", len(self.removed)),
            ("失敗", len(self.failed)),
        ]
        if self.skipped:
            counts.append(("スキップ", len(self.skipped)))
        return f"{self.collection}: " + "・".join(f"{word} {count}" for word, count in counts)


VectorFactory = Callable[[str], ChunkIndex | None]
"""Builds a collection's vector index (None: that collection has keyword search only)."""


def _stamp(file: Path) -> tuple[int, int] | None:
    """What tells a manifest changed on disk: (mtime_ns, size), None when missing."""
    try:
        info = file.stat()
    except FileNotFoundError:
        return None
    return info.st_mtime_ns, info.st_size


class _Collection:
    """One collection as last read from disk: manifest, keyword index, lazy vector index.

    The vector index is opened on first use only (reading the manifest or searching by
    keyword never touches Qdrant), and then reconciled with the manifest: vectors of
    documents the manifest does not list (left over from a deleted or reset collection)
    are deleted, so they can never be found. The keyword index is reconciled the same
    way when the collection is read (``interrupted`` names what it dropped).
    """

    def __init__(
        self, name: str, folder: Path, keyword: KeywordIndex, vector_factory: VectorFactory | None
    ) -> None:
        self.name = name
        self.folder = folder
        self.keyword = keyword
        self._vector_factory = vector_factory
        self._vector: ChunkIndex | None = None
        self._vector_opened = False
        self.manifest: dict[str, dict[str, Any]] = {}
        file = folder / MANIFEST_FILE
        self.stamp = _stamp(file)
        if self.stamp is not None:
            stored = read_stored(ManifestFile, file, folder)
            self.manifest = {
                name: entry.model_dump(exclude_none=True)
                for name, entry in stored.documents.items()
            }
        # the manifest is the record of what was indexed: chunks saved for a document
        # whose manifest entry was not (a run killed in between) are not searched, and
        # the next indexing run adds that document again
        self.interrupted = sorted(keyword.documents() - set(self.manifest))
        if self.interrupted:
            keyword.delete_documents(self.interrupted)

    @property
    def wants_vector(self) -> bool:
        return self._vector_factory is not None

    @property
    def vector(self) -> ChunkIndex | None:
        if not self._vector_opened:
            self._vector = self._vector_factory(self.name) if self._vector_factory else None
            self._vector_opened = True
            if self._vector is not None:
                stale = sorted(self._vector.documents() - set(self.manifest))
                if stale:
                    self._vector.delete_documents(stale)
        return self._vector

    def vectors_complete(self) -> bool:
        """Every document of the manifest is in the vector index (and there is one)."""
        vector = self.vector
        if vector is None or not self.manifest:
            return False
        return (
            all(entry.get("vector") for entry in self.manifest.values())
            and set(self.manifest) <= vector.documents()
        )

    def save_manifest(self) -> None:
        payload = {"format": 1, "documents": self.manifest}
        file = self.folder / MANIFEST_FILE
        write_private(file, json.dumps(payload, ensure_ascii=False, indent=1), fsync=True)
        self.stamp = _stamp(file)
        self.interrupted = [name for name in self.interrupted if name not in self.manifest]


class KnowledgeBase:
    """Named collections ("manual", "qa", ...) of documents with keyword (and vector) indexes.

    ``vector_index_factory(collection)`` builds the collection's vector ``ChunkIndex`` (or
    returns None for a collection searched by keyword only); without it only keyword search
    is available (``vector()`` returns None). Safe to share between threads (indexing calls
    are serialised, searches go to the indexes, which are thread-safe) and between
    processes: writers take a file lock per collection, and every call first re-reads a
    collection whose manifest another process (a CLI run, another app session) changed.
    """

    def __init__(
        self,
        root: Path,
        *,
        tokenizer: Tokenizer | None = None,
        vector_index_factory: VectorFactory | None = None,
    ) -> None:
        self.root = Path(root)
        self.tokenizer = tokenizer if tokenizer is not None else default_tokenizer()
        self.vector_index_factory = vector_index_factory
        self._collections: dict[str, _Collection] = {}
        self._lock = threading.RLock()

    @classmethod
    def for_workspace(
        cls,
        settings: Settings,
        name: str = "helpdesk",
        *,
        tokenizer: Tokenizer | None = None,
        vector_index_factory: VectorFactory | None = None,
    ) -> KnowledgeBase:
        """The knowledge base ``name`` under the workspace's private state folder."""
        check_name(name, "ナレッジベース")
        root = Workspace.from_settings(settings).state / "knowledge" / name
        return cls(root, tokenizer=tokenizer, vector_index_factory=vector_index_factory)

    # --- collections ----------------------------------------------------------------------

    def collections(self) -> list[str]:
        """Collections that have been indexed into (sorted)."""
        if not self.root.is_dir():
            return []
        return sorted(
            child.name
            for child in self.root.iterdir()
            if child.is_dir() and (child / MANIFEST_FILE).exists()
        )

    def _collection(self, name: str, *, create: bool) -> _Collection:
        """The collection, re-read from disk when its manifest changed since last read."""
        check_name(name, "コレクション")
        with self._lock:
            folder = self.root / name
            collection = self._collections.get(name)
            if collection is not None and collection.stamp == _stamp(folder / MANIFEST_FILE):
                return collection
            if not create and not (folder / MANIFEST_FILE).exists():
                known = self.collections()
                raise UserInputError(
                    f"ナレッジベースにコレクション '{name}' はありません",
                    hint=(
                        "先に keiri-agent helpdesk index で文書を登録してください。"
                        "登録済みのコレクション: " + (", ".join(known) or "（なし）")
                    ),
                    code="UNKNOWN_COLLECTION",
                    details={"collection": name, "collections": known},
                )
            keyword = KeywordIndex.open(folder / "keyword", self.tokenizer, reset_folder=folder)
            if collection is not None and collection._vector_opened:
                # keep the open vector index (one client per folder); reconcile again
                fresh = _Collection(name, folder, keyword, collection._vector_factory)
                fresh._vector, fresh._vector_opened = collection._vector, True
            else:
                fresh = _Collection(name, folder, keyword, self.vector_index_factory)
            self._collections[name] = fresh
            return fresh

    @contextmanager
    def _writing(self, name: str) -> Iterator[_Collection]:
        """The collection, locked against other processes and re-read under the lock."""
        check_name(name, "コレクション")
        folder = private_dir(self.root / name)
        with self._lock:
            try:
                lock = portalocker.Lock(
                    str(folder / LOCK_FILE),
                    timeout=LOCK_TIMEOUT_S,
                    fail_when_locked=False,
                    opener=private_opener,
                )
                lock.acquire()
            except portalocker.exceptions.LockException:
                raise UserInputError(
                    f"ナレッジベースのコレクション '{name}' は別の処理が登録中です",
                    hint="登録が終わるまで待ってから、もう一度実行してください。",
                    code="KNOWLEDGE_BASE_BUSY",
                    details={"collection": name, "folder": str(folder)},
                ) from None
            try:
                yield self._collection(name, create=True)
            finally:
                lock.release()

    def keyword(self, collection: str) -> KeywordIndex:
        """The collection's keyword searcher (``UserInputError`` if it was never indexed)."""
        return self._collection(collection, create=False).keyword

    def vector(self, collection: str) -> ChunkIndex | None:
        """The collection's vector searcher, or None without a ``vector_index_factory``."""
        return self._collection(collection, create=False).vector

    def vectors_complete(self, collection: str) -> bool:
        """Every document of the collection is in its vector index (so vector search sees
        all of it); False without a vector index or when documents were indexed without one."""
        return self._collection(collection, create=False).vectors_complete()

    def documents(self, collection: str) -> dict[str, dict[str, Any]]:
        """The manifest: document name → sha256, size, chunks, kind, indexed_at."""
        return {k: dict(v) for k, v in self._collection(collection, create=False).manifest.items()}

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per collection: documents, chunks, bytes, last indexed_at, tokenizer, vector, and
        ``interrupted``: documents whose indexing was cut short (the next run adds them)."""
        out: dict[str, dict[str, Any]] = {}
        for name in self.collections():
            collection = self._collection(name, create=False)
            entries = collection.manifest.values()
            out[name] = {
                "documents": len(collection.manifest),
                "chunks": sum(int(entry["chunks"]) for entry in entries),
                "bytes": sum(int(entry["size"]) for entry in entries),
                "indexed_at": max((entry["indexed_at"] for entry in entries), default=None),
                "tokenizer": self.tokenizer.name,
                "vector": collection.wants_vector,
                "interrupted": list(collection.interrupted),
            }
        return out

    # --- indexing -------------------------------------------------------------------------

    def index_files(
        self,
        paths: Iterable[Path | str],
        collection: str = "manual",
        *,
        faq: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> IndexReport:
        """Index files and folders (folders walked for supported suffixes, sorted).

        Unchanged files (same sha256, same kind, vector index present if configured) are
        skipped; changed ones have their chunks replaced. ``faq=True`` reads CSV
        question/answer files (``chunk_faq``). Raises ``UserInputError`` when two files have
        the same name; every per-file problem is reported in ``IndexReport.failed``.
        """
        found, skipped = _expand(paths, FAQ_SUFFIXES if faq else DOCUMENT_SUFFIXES)
        files = _check_clashes(found)
        kind = "faq" if faq else "document"
        report = IndexReport(collection, skipped=skipped)
        with self._writing(collection) as target:
            if not target.manifest and not (target.folder / MANIFEST_FILE).exists():
                target.save_manifest()  # the collection exists from now on
            vector = target.vector
            in_vector = vector.documents() if vector is not None else set()
            for done, (name, path) in enumerate(files, start=1):
                on_batch = None
                if on_progress is not None:
                    on_batch = _batch_progress(on_progress, done - 1, len(files), name)
                self._index_one(target, name, path, kind, report, in_vector, on_batch)
                if on_progress is not None:
                    on_progress(done, len(files), name)
        return report

    def _index_one(
        self,
        target: _Collection,
        name: str,
        path: Path,
        kind: str,
        report: IndexReport,
        in_vector: set[str],
        on_batch: BatchProgress | None = None,
    ) -> None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            report.failed.append(
                IndexFailure(name, str(path), "FILE_NOT_FOUND", f"{path}: no such file", None)
            )
            return
        except OSError as exc:
            report.failed.append(
                IndexFailure(name, str(path), "FILE_UNREADABLE", f"{path}: {exc}", None)
            )
            return
        digest = hashlib.sha256(data).hexdigest()
        previous = target.manifest.get(name)
        wants_vector = target.vector is not None
        if (
            previous is not None
            and previous.get("sha256") == digest
            and previous.get("kind") == kind
            and previous.get("chunking") == CHUNKING_VERSION
            and (previous.get("chunks") == 0 or name in target.keyword.documents())
            and (not wants_vector or (previous.get("vector", False) and name in in_vector))
        ):
            report.unchanged.append(name)
            return
        try:
            chunks: list[Chunk] = (
                chunk_faq(name, data) if kind == "faq" else chunk_document(name, data)
            )
            if target.vector is not None:
                target.vector.upsert(name, chunks, on_batch=on_batch)
            target.keyword.upsert(name, chunks)
            target.keyword.save()
        except KeiriAgentError as exc:
            report.failed.append(IndexFailure(name, str(path), exc.code, exc.message, exc.hint))
            return
        except Exception as exc:  # a library failure on one file must not stop the others
            report.failed.append(
                IndexFailure(
                    name, str(path), "INDEX_FAILED", f"{name}: {type(exc).__name__}: {exc}", None
                )
            )
            return
        target.manifest[name] = {
            "sha256": digest,
            "size": len(data),
            "chunks": len(chunks),
            "kind": kind,
            "chunking": CHUNKING_VERSION,
            "vector": wants_vector,
            "path": str(path),
            "indexed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        target.save_manifest()
        (report.added if previous is None else report.updated).append(name)
        report.chunks += len(chunks)

    def remove(self, documents: Sequence[str], collection: str = "manual") -> IndexReport:
        """Delete documents (by name) from a collection's indexes and manifest.

        A name found only in an index (not in the manifest: left over from an interrupted
        run) is removed from that index too.
        """
        report = IndexReport(collection)
        if not (self.root / collection / MANIFEST_FILE).exists():
            self._collection(collection, create=False)  # raises UNKNOWN_COLLECTION
        with self._writing(collection) as target:
            vector = target.vector
            indexed = set(target.manifest) | target.keyword.documents() | set(target.interrupted)
            if vector is not None:
                indexed |= vector.documents()
            present = [name for name in documents if name in indexed]
            for name in documents:
                if name not in indexed:
                    report.failed.append(
                        IndexFailure(
                            name,
                            "",
                            "DOCUMENT_NOT_INDEXED",
                            f"{name}: not in collection '{collection}'",
                            "indexed documents: " + ", ".join(sorted(target.manifest)),
                        )
                    )
            if not present:
                return report
            if vector is not None:
                vector.delete_documents(present)
            target.keyword.delete_documents(present)
            target.keyword.save()
            for name in present:
                target.manifest.pop(name, None)
            target.interrupted = [name for name in target.interrupted if name not in present]
            target.save_manifest()
            report.removed.extend(present)
        return report


def _batch_progress(
    on_progress: ProgressCallback, finished: int, total: int, document: str
) -> BatchProgress:
    """The ``on_batch`` of one file's vector upsert: ``on_progress`` after each batch but
    the last (the file's own call follows that one; see ``ProgressCallback``)."""

    def on_batch(embedded: int, chunks: int) -> None:
        if embedded < chunks:
            on_progress(finished, total, f"{document}（埋め込み {embedded}/{chunks} チャンク）")

    return on_batch


def check_name(name: str, what: str) -> None:
    """``INVALID_NAME`` unless ``name`` is letters, digits, ``_`` and ``-`` (at most 64):
    a knowledge base's or collection's name never leads out of its folder."""
    if not _COLLECTION_NAME.match(name):
        raise UserInputError(
            f"'{name}' は{what}の名前として使えません",
            hint="英数字・'_'・'-' だけで 64 文字以内の名前にしてください（例: 'manual'）。",
            code="INVALID_NAME",
            details={"name": name},
        )


def _expand(
    paths: Iterable[Path | str], suffixes: Sequence[str]
) -> tuple[list[tuple[str, Path]], list[IndexSkip]]:
    """(document name, path) for files given directly and files in folders (sorted), and
    the symlinks skipped in folders (``files.archive.walk_folder``: the rule of the ZIP and
    folder reader — a link leading outside the folder, or to a folder, is not followed)."""
    out: list[tuple[str, Path]] = []
    skipped: list[IndexSkip] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found, passed_over = walk_folder(path)
            for rel, file in sorted(found):
                name = rel.rsplit("/", 1)[-1]
                if file.suffix.lower() in suffixes and not name.startswith((".", "~$")):
                    out.append((name, file))
            skipped.extend(
                _link_skip(path, entry.path) for entry in passed_over if entry.reason == "symlink"
            )
        else:
            out.append((path.name, path))
    return out, skipped


def _link_skip(folder: Path, rel: str) -> IndexSkip:
    link = folder / rel
    inside = link.resolve().is_relative_to(folder.resolve())
    reason = (
        "フォルダーへのリンクはたどりません（リンク先のフォルダーを直接指定してください）"
        if inside
        else "索引するフォルダーの外を指すリンクのため登録しません"
    )
    return IndexSkip(rel.rsplit("/", 1)[-1], str(link), reason)


def _check_clashes(files: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """``files`` without repeats of the same path; two paths with one name are an error."""
    seen: dict[str, Path] = {}
    out: list[tuple[str, Path]] = []
    for name, path in files:
        other = seen.get(name)
        if other is not None and other.resolve() == path.resolve():
            continue
        if other is not None:
            raise UserInputError(
                f"同じ名前 '{name}' のファイルが 2 つあります: {other} と {path}",
                hint="文書はファイル名で区別します。どちらかの名前を変えるか、"
                "別のコレクションに登録してください。",
                code="DOCUMENT_NAME_CLASH",
                details={"document": name, "paths": [str(other), str(path)]},
            )
        seen[name] = path
        out.append((name, path))
    return out


__all__ = ["IndexFailure", "IndexReport", "IndexSkip", "KnowledgeBase", "ProgressCallback"]
