"""Data model and errors of :mod:`keiri_agent.files.archive` (import them from there)."""

from __future__ import annotations

from dataclasses import dataclass, field

from keiri_agent.errors import UserInputError

ROOT_GROUP = ""
"""Name of the group holding files found at the top level."""

MiB = 1024 * 1024


class ArchiveErrorCode:
    """Stable codes carried by :class:`ArchiveError`."""

    NOT_A_ZIP = "ARCHIVE_NOT_A_ZIP"
    EMPTY_FILE = "ARCHIVE_EMPTY_FILE"
    NOT_A_FOLDER = "ARCHIVE_NOT_A_FOLDER"
    UNSAFE_PATH = "ARCHIVE_UNSAFE_PATH"
    ENCRYPTED_ENTRY = "ARCHIVE_ENCRYPTED_ENTRY"
    TOO_MANY_ENTRIES = "ARCHIVE_TOO_MANY_ENTRIES"
    FILE_TOO_LARGE = "ARCHIVE_FILE_TOO_LARGE"
    TOTAL_TOO_LARGE = "ARCHIVE_TOTAL_TOO_LARGE"
    COMPRESSION_RATIO = "ARCHIVE_COMPRESSION_RATIO"
    CORRUPT_ENTRY = "ARCHIVE_CORRUPT_ENTRY"


class ArchiveError(UserInputError):
    """A ZIP or folder that cannot be read safely; ``code`` says why."""

    code = "ARCHIVE_ERROR"


@dataclass(frozen=True)
class ArchiveLimits:
    """Resource limits; every one is enforced on the bytes actually read."""

    max_entries: int = 5000
    """Entries in the ZIP central directory (or files found in a folder), junk included."""
    max_file_bytes: int = 100 * MiB
    """Uncompressed size of one file."""
    max_total_bytes: int = 500 * MiB
    """Uncompressed size of all files read."""
    max_ratio: float = 200.0
    """Uncompressed / compressed size of one entry ..."""
    ratio_min_bytes: int = 1 * MiB
    """... checked once an entry has produced more than this (small text compresses well)."""
    chunk_size: int = 64 * 1024
    """Bytes decompressed per read."""


DEFAULT_LIMITS = ArchiveLimits()


@dataclass(frozen=True)
class ArchiveFile:
    """One file: ``path`` is its full '/'-separated path in the archive or folder."""

    path: str
    name: str
    size: int
    data: bytes = field(repr=False)
    group: str = ROOT_GROUP

    @property
    def relative_path(self) -> str:
        """The path inside its group (``sub/y.pdf`` for ``A/sub/y.pdf``)."""
        return self.path[len(self.group) + 1 :] if self.group else self.path


@dataclass(frozen=True)
class Group:
    """A top-level folder (or :data:`ROOT_GROUP`) and the files under it."""

    name: str
    files: list[ArchiveFile]


@dataclass(frozen=True)
class SkippedEntry:
    """An entry that was not read: ``reason`` is one of the codes documented above."""

    path: str
    reason: str
    message: str


@dataclass(frozen=True)
class Archive:
    """The two-tier view of a ZIP or folder."""

    groups: list[Group]
    skipped: list[SkippedEntry]
    root_prefix: str | None = None

    @property
    def files(self) -> list[ArchiveFile]:
        """Every file read, group by group."""
        return [f for g in self.groups for f in g.files]

    def group(self, name: str) -> Group:
        """The group called ``name`` (KeyError when absent)."""
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)
