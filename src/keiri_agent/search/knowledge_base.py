"""``KnowledgeBase``: named collections of indexed documents, re-indexed incrementally.

Layout under ``root`` (default ``<workspace>/.keiri/knowledge/<name>``)::

    <collection>/manifest.json     document name → sha256, size, chunks, kind, indexed_at
    <collection>/keyword/          the collection's KeywordIndex
    (vector indexes live wherever ``vector_index_factory`` puts them)

``index_files`` chunks each file (``chunk_document``, or ``chunk_faq`` with ``faq=True``),
skips files whose content is unchanged since the last run, replaces the chunks of changed
files, and saves after every file so an interruption loses nothing already done. A file
that cannot be read is reported in ``IndexReport.failed`` with its error; the other files
are still indexed and what was indexed before stays searchable.

A document is named by its file name; two files with the same name in one call are an
error naming both (rename one, or index them into different collections).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.search.chunking import DOCUMENT_SUFFIXES, FAQ_SUFFIXES, chunk_document, chunk_faq
from keiri_agent.search.keyword import KeywordIndex
from keiri_agent.search.models import Chunk, ChunkIndex
from keiri_agent.search.tokenize import Tokenizer, default_tokenizer
from keiri_agent.workspace import Workspace

MANIFEST_FILE = "manifest.json"
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")

ProgressCallback = Callable[[int, int, str], None]
"""``on_progress(done, total, document)``: called after each file (done counts from 1)."""


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


@dataclass
class IndexReport:
    """What one ``index_files`` / ``remove`` call did, document names by outcome."""

    collection: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[IndexFailure] = field(default_factory=list)
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
            "chunks": self.chunks,
        }

    def summary(self) -> str:
        return (
            f"{self.collection}: {len(self.added)} added, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged, {len(self.removed)} removed, "
            f"{len(self.failed)} failed"
        )


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class _Collection:
    def __init__(self, folder: Path, keyword: KeywordIndex, vector: ChunkIndex | None) -> None:
        self.folder = folder
        self.keyword = keyword
        self.vector = vector
        self.manifest: dict[str, dict[str, Any]] = {}
        file = folder / MANIFEST_FILE
        if file.exists():
            try:
                self.manifest = json.loads(file.read_text(encoding="utf-8"))["documents"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise UserInputError(
                    f"the knowledge-base manifest {file} cannot be read ({exc})",
                    hint="delete the collection folder and index the documents again",
                    code="KNOWLEDGE_BASE_CORRUPT",
                    details={"path": str(file)},
                ) from None

    def save_manifest(self) -> None:
        payload = {"format": 1, "documents": self.manifest}
        _write_atomic(
            self.folder / MANIFEST_FILE, json.dumps(payload, ensure_ascii=False, indent=1)
        )


class KnowledgeBase:
    """Named collections ("manual", "qa", ...) of documents with keyword (and vector) indexes.

    ``vector_index_factory(collection)`` builds the collection's vector ``ChunkIndex``; without
    it only keyword search is available (``vector()`` returns None). Safe to share between
    threads: indexing calls are serialised, searches go to the indexes (which are thread-safe).
    """

    def __init__(
        self,
        root: Path,
        *,
        tokenizer: Tokenizer | None = None,
        vector_index_factory: Callable[[str], ChunkIndex] | None = None,
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
        vector_index_factory: Callable[[str], ChunkIndex] | None = None,
    ) -> KnowledgeBase:
        """The knowledge base ``name`` under the workspace's private state folder."""
        _check_name(name, "knowledge base")
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
        _check_name(name, "collection")
        with self._lock:
            collection = self._collections.get(name)
            if collection is not None:
                return collection
            folder = self.root / name
            if not create and not (folder / MANIFEST_FILE).exists():
                known = self.collections()
                raise UserInputError(
                    f"the knowledge base has no collection '{name}'",
                    hint=(
                        "index documents into it first; existing collections: "
                        + (", ".join(known) or "(none)")
                    ),
                    code="UNKNOWN_COLLECTION",
                    details={"collection": name, "collections": known},
                )
            keyword = KeywordIndex.open(folder / "keyword", self.tokenizer)
            vector = self.vector_index_factory(name) if self.vector_index_factory else None
            collection = _Collection(folder, keyword, vector)
            self._collections[name] = collection
            return collection

    def keyword(self, collection: str) -> KeywordIndex:
        """The collection's keyword searcher (``UserInputError`` if it was never indexed)."""
        return self._collection(collection, create=False).keyword

    def vector(self, collection: str) -> ChunkIndex | None:
        """The collection's vector searcher, or None without a ``vector_index_factory``."""
        return self._collection(collection, create=False).vector

    def documents(self, collection: str) -> dict[str, dict[str, Any]]:
        """The manifest: document name → sha256, size, chunks, kind, indexed_at."""
        return {k: dict(v) for k, v in self._collection(collection, create=False).manifest.items()}

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per collection: documents, chunks, bytes, last indexed_at, tokenizer, vector."""
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
                "vector": collection.vector is not None,
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
        files = _check_clashes(_expand(paths, FAQ_SUFFIXES if faq else DOCUMENT_SUFFIXES))
        kind = "faq" if faq else "document"
        report = IndexReport(collection)
        with self._lock:
            target = self._collection(collection, create=True)
            if not target.manifest and not (target.folder / MANIFEST_FILE).exists():
                target.save_manifest()  # the collection exists from now on
            for done, (name, path) in enumerate(files, start=1):
                self._index_one(target, name, path, kind, report)
                if on_progress is not None:
                    on_progress(done, len(files), name)
        return report

    def _index_one(
        self, target: _Collection, name: str, path: Path, kind: str, report: IndexReport
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
            and (previous.get("vector", False) or not wants_vector)
        ):
            report.unchanged.append(name)
            return
        try:
            chunks: list[Chunk] = (
                chunk_faq(name, data) if kind == "faq" else chunk_document(name, data)
            )
            if target.vector is not None:
                target.vector.upsert(name, chunks)
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
            "vector": wants_vector,
            "path": str(path),
            "indexed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        target.save_manifest()
        (report.added if previous is None else report.updated).append(name)
        report.chunks += len(chunks)

    def remove(self, documents: Sequence[str], collection: str = "manual") -> IndexReport:
        """Delete documents (by name) from a collection's indexes and manifest."""
        report = IndexReport(collection)
        with self._lock:
            target = self._collection(collection, create=False)
            present = [name for name in documents if name in target.manifest]
            for name in documents:
                if name not in target.manifest:
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
            if target.vector is not None:
                target.vector.delete_documents(present)
            target.keyword.delete_documents(present)
            target.keyword.save()
            for name in present:
                del target.manifest[name]
            target.save_manifest()
            report.removed.extend(present)
        return report


def _check_name(name: str, what: str) -> None:
    if not _COLLECTION_NAME.match(name):
        raise UserInputError(
            f"'{name}' is not a valid {what} name",
            hint="use letters, digits, '_' and '-' (at most 64 characters), e.g. 'manual'",
            code="INVALID_NAME",
            details={"name": name},
        )


def _expand(paths: Iterable[Path | str], suffixes: Sequence[str]) -> list[tuple[str, Path]]:
    """(document name, path) for files given directly and files in folders (sorted)."""
    out: list[tuple[str, Path]] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found = sorted(
                (
                    child
                    for child in path.rglob("*")
                    if child.is_file()
                    and child.suffix.lower() in suffixes
                    and not child.name.startswith((".", "~$"))
                ),
                key=lambda child: child.relative_to(path).as_posix(),
            )
            out.extend((child.name, child) for child in found)
        else:
            out.append((path.name, path))
    return out


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
                f"two files are both named '{name}': {other} and {path}",
                hint="documents are named by their file name; rename one of them or index "
                "them into different collections",
                code="DOCUMENT_NAME_CLASH",
                details={"document": name, "paths": [str(other), str(path)]},
            )
        seen[name] = path
        out.append((name, path))
    return out


__all__ = ["IndexFailure", "IndexReport", "KnowledgeBase", "ProgressCallback"]
