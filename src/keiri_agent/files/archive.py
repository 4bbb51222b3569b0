"""Two-tier reading of a ZIP (bytes) or a folder: top-level group folders → their files.

Layout (seed 002 §2 FolderProcessor, §12):

* ``A/x.pdf`` → group ``"A"``, file ``x.pdf``. Deeper paths are flattened into their
  top-level group: ``A/sub/y.pdf`` → group ``"A"``, ``ArchiveFile.path == "A/sub/y.pdf"``,
  ``ArchiveFile.relative_path == "sub/y.pdf"``.
* Files at the top level go to the group named ``""`` (:data:`ROOT_GROUP`). The empty
  string can never be a real folder name, unlike ``"(root)"``; surfaces may display it
  as they like.
* A single wrapper folder (the only top-level entry, holding sub-folders and no files of
  its own, as "compress this folder" produces) is unwrapped when ``unwrap_single_root`` is
  true (default for ZIPs); ``Archive.root_prefix`` then names it and paths omit it.
* Groups are sorted by name (root first), files by path: the result is deterministic.

Hostile input. Each problem is an :class:`ArchiveError` (a ``UserInputError``) with a
code from :class:`ArchiveErrorCode`, or a documented skip recorded in ``Archive.skipped``:

* unsafe names (``..`` components, absolute paths, drive letters, backslashes, NUL) → error
  ``UNSAFE_PATH``; nothing is ever extracted, so this protects callers that would;
* entry count, per-file size, total size and compression ratio are limited
  (:class:`ArchiveLimits`); sizes are counted while streaming in chunks and reading stops
  as soon as a limit is passed — declared header sizes are only used for an early refusal;
* encrypted entries → error ``ENCRYPTED_ENTRY`` naming the entry;
* nested archives (``.zip``, ``.7z``, ``.rar``, ``.lzh``, ``.tar``, ``.gz``, ...) are
  skipped (reason ``nested_archive``), never expanded; Office files (also ZIPs) are files;
* directories are dropped; ``__MACOSX/``, ``._*``, ``.DS_Store``, ``Thumbs.db`` and
  ``desktop.ini`` are skipped (``system_file``); symlink entries are skipped (``symlink``);
  a repeated path is skipped (``duplicate``);
* names without the UTF-8 flag (0x800) are re-decoded from their raw bytes: UTF-8 if valid
  (macOS tools), else CP932 (Japanese Windows), else the cp437 reading is kept;
* every name (ZIP entries and folder names alike) is normalised to Unicode NFC, so the
  decomposed "ガス代" that macOS writes equals the "ガス代" typed elsewhere; the checks
  above see the normalised names, and two names equal after NFC are duplicates.

Everything stays in memory; nothing is written to disk.
"""

from __future__ import annotations

import io
import os
import re
import stat
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from keiri_agent.files._archive_model import (
    DEFAULT_LIMITS,
    ROOT_GROUP,
    Archive,
    ArchiveError,
    ArchiveErrorCode,
    ArchiveFile,
    ArchiveLimits,
    Group,
    SkippedEntry,
)
from keiri_agent.stopping import check_stop
from keiri_agent.textcodec import TextDecodeError, decode_text

__all__ = [
    "DEFAULT_LIMITS",
    "ROOT_GROUP",
    "Archive",
    "ArchiveError",
    "ArchiveErrorCode",
    "ArchiveFile",
    "ArchiveLimits",
    "Group",
    "SkippedEntry",
    "decode_entry_name",
    "read_folder_2tier",
    "read_zip_2tier",
    "safe_parts",
    "walk_folder",
]

NESTED_ARCHIVE_SUFFIXES = (".zip", ".7z", ".rar", ".lzh", ".lha", ".tar", ".gz", ".tgz",
                           ".bz2", ".xz", ".cab")  # fmt: skip
SYSTEM_FILE_NAMES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})
_DRIVE = re.compile(r"^[A-Za-z]:")
_UTF8_FLAG = 0x800
_ENCRYPTED_FLAG = 0x1


def decode_entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's name in NFC, re-decoded when the UTF-8 flag is unset (UTF-8, then CP932)."""
    return unicodedata.normalize("NFC", _decode_raw_name(info))


def _decode_raw_name(info: zipfile.ZipInfo) -> str:
    name = info.orig_filename
    if info.flag_bits & _UTF8_FLAG:
        return name
    try:
        raw = name.encode("cp437")
    except UnicodeEncodeError:  # already decoded with another encoding
        return name
    if raw.isascii():
        return name
    try:
        return decode_text(raw, detect_bom=False).text
    except TextDecodeError:
        return name


def safe_parts(name: str) -> list[str]:
    """Split a '/'-separated entry name, refusing anything that could escape a root."""
    problem = None
    if "\x00" in name:
        problem = "NUL 文字を含んでいます"
    elif "\\" in name:
        problem = "バックスラッシュ（\\）を含んでいます"
    elif name.startswith("/"):
        problem = "絶対パスです"
    elif _DRIVE.match(name):
        problem = "ドライブ名（C: など）で始まっています"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if problem is None and ".." in parts:
        problem = "親フォルダを指す '..' を含んでいます"
    if problem is not None:
        raise ArchiveError(
            f"ZIP の中に安全でないパスがあります: {name!r} は{problem}",
            code=ArchiveErrorCode.UNSAFE_PATH,
            hint="通常のフォルダを右クリックして ZIP を作り直してから、"
            "もう一度アップロードしてください。",
            details={"entry": name, "problem": problem},
        )
    return parts


def _skip_reason(parts: list[str]) -> tuple[str, str] | None:
    base = parts[-1]
    if parts[0] == "__MACOSX" or base.startswith("._") or base.lower() in SYSTEM_FILE_NAMES:
        return "system_file", "OS が自動で作る管理用ファイルのため読み飛ばしました"
    if base.lower().endswith(NESTED_ARCHIVE_SUFFIXES):
        return "nested_archive", "ZIP の中の ZIP は展開しません。先に展開してから入れ直してください"
    return None


class _Budget:
    """Counts bytes read against the limits, chunk by chunk."""

    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.total = 0

    def read(self, path: str, stream: IO[bytes], compressed: int | None) -> bytes:
        lim = self.limits
        buf = bytearray()
        while chunk := stream.read(lim.chunk_size):
            check_stop()
            buf += chunk
            self.total += len(chunk)
            size = len(buf)
            if size > lim.max_file_bytes:
                raise _too_large(path, lim.max_file_bytes, ArchiveErrorCode.FILE_TOO_LARGE)
            if self.total > lim.max_total_bytes:
                raise _too_large(path, lim.max_total_bytes, ArchiveErrorCode.TOTAL_TOO_LARGE)
            if compressed is not None and size > lim.ratio_min_bytes:
                ratio = size / max(compressed, 1)
                if ratio > lim.max_ratio:
                    raise ArchiveError(
                        f"ZIP 内のファイル {path!r} は展開すると {lim.max_ratio:g} 倍を超える"
                        "大きさになるため、読み込みを中止しました（不正な ZIP の可能性があります）",
                        code=ArchiveErrorCode.COMPRESSION_RATIO,
                        hint="元のファイルを確認し、通常の方法で ZIP を作り直してください。",
                        details={"entry": path, "max_ratio": lim.max_ratio},
                    )
        return bytes(buf)


def _too_large(path: str, limit: int, code: str) -> ArchiveError:
    what = "ファイル" if code == ArchiveErrorCode.FILE_TOO_LARGE else "ZIP の中身の合計"
    return ArchiveError(
        f"{what}が大きすぎます（{path!r}）: 展開後の上限は {limit:,} バイトです",
        code=code,
        hint="ZIP を複数に分けてアップロードしてください。"
        "上限を変えるには管理者に相談してください。",
        details={"entry": path, "limit_bytes": limit},
    )


def _check_count(count: int, limits: ArchiveLimits) -> None:
    if count > limits.max_entries:
        raise ArchiveError(
            f"ファイル数が多すぎます: {count} 件（上限 {limits.max_entries} 件）",
            code=ArchiveErrorCode.TOO_MANY_ENTRIES,
            hint="ZIP を複数に分けてアップロードしてください。",
            details={"entries": count, "limit": limits.max_entries},
        )


def read_zip_2tier(
    data: bytes, *, limits: ArchiveLimits = DEFAULT_LIMITS, unwrap_single_root: bool = True
) -> Archive:
    """Read a ZIP held in memory as groups of files (see the module docstring)."""
    if not data:
        raise ArchiveError(
            "ZIP ファイルが空です（0 バイト）",
            code=ArchiveErrorCode.EMPTY_FILE,
            hint="ファイルをもう一度アップロードしてください。",
        )
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise ArchiveError(
            f"ZIP ファイルとして読めません: {exc}",
            code=ArchiveErrorCode.NOT_A_ZIP,
            hint="拡張子が .zip のファイルか確認してください（7z・rar・lzh には対応していません）"
            "。",
        ) from exc
    with zf:
        infos = zf.infolist()
        _check_count(len(infos), limits)
        wanted: list[tuple[zipfile.ZipInfo, str]] = []
        skipped: list[SkippedEntry] = []
        seen: set[str] = set()
        for info in infos:
            name = decode_entry_name(info)
            parts = safe_parts(name)
            if info.is_dir() or not parts:
                continue
            path = "/".join(parts)
            reason = _skip_reason(parts)
            if reason is None and stat.S_ISLNK(info.external_attr >> 16):
                reason = ("symlink", "シンボリックリンクのため読み飛ばしました")
            if reason is None and path in seen:
                reason = ("duplicate", "同じパスが 2 回あるため、最初の 1 つを使いました")
            if reason is not None:
                skipped.append(SkippedEntry(path, *reason))
                continue
            if info.flag_bits & _ENCRYPTED_FLAG:
                raise ArchiveError(
                    f"ZIP 内のファイル {path!r} にパスワードが掛かっています",
                    code=ArchiveErrorCode.ENCRYPTED_ENTRY,
                    hint="パスワードなしで ZIP を作り直してから、"
                    "もう一度アップロードしてください。",
                    details={"entry": path},
                )
            if info.file_size > limits.max_file_bytes:
                raise _too_large(path, limits.max_file_bytes, ArchiveErrorCode.FILE_TOO_LARGE)
            seen.add(path)
            wanted.append((info, path))
        declared = sum(info.file_size for info, _ in wanted)
        if declared > limits.max_total_bytes:
            raise _too_large(
                "(all entries)", limits.max_total_bytes, ArchiveErrorCode.TOTAL_TOO_LARGE
            )
        budget = _Budget(limits)
        files: list[tuple[str, bytes]] = []
        for info, path in wanted:
            compressed = min(info.compress_size, len(data))
            try:
                with zf.open(info) as stream:
                    files.append((path, budget.read(path, stream, compressed)))
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                raise ArchiveError(
                    f"ZIP 内のファイル {path!r} を読めませんでした: {exc}",
                    code=ArchiveErrorCode.CORRUPT_ENTRY,
                    hint="ZIP が壊れているか、対応していない圧縮方式です。"
                    "通常の方法で ZIP を作り直してください。",
                    details={"entry": path, "error": type(exc).__name__},
                ) from exc
    return _build(files, skipped, unwrap_single_root)


def read_folder_2tier(
    path: str | os.PathLike[str],
    *,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    unwrap_single_root: bool = False,
) -> Archive:
    """Read a folder as groups of files; symlinks never lead outside ``path``.

    A symlinked file is read only when its target lies inside the root; symlinked
    folders are never followed (no loops); FIFOs, sockets and devices are skipped.
    """
    root = Path(path)
    if not root.is_dir():
        raise ArchiveError(
            f"フォルダではありません: {str(root)!r}",
            code=ArchiveErrorCode.NOT_A_FOLDER,
            hint="フォルダのパスを指定し直してください。",
            details={"path": str(root)},
        )
    raw_found, raw_skipped = walk_folder(root, check_count=lambda n: _check_count(n, limits))
    found = [(unicodedata.normalize("NFC", rel), file_path) for rel, file_path in raw_found]
    skipped = [
        SkippedEntry(unicodedata.normalize("NFC", entry.path), entry.reason, entry.message)
        for entry in raw_skipped
    ]
    wanted: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for rel, file_path in sorted(found):
        reason = _skip_reason(rel.split("/"))
        if reason is None and rel in seen:  # names that differ only before NFC
            reason = ("duplicate", "同じパスが 2 回あるため、最初の 1 つを使いました")
        if reason is not None:
            skipped.append(SkippedEntry(rel, *reason))

        else:
            seen.add(rel)
            wanted.append((rel, file_path))
    budget = _Budget(limits)
    files: list[tuple[str, bytes]] = []
    for rel, file_path in wanted:
        if file_path.stat().st_size > limits.max_file_bytes:
            raise _too_large(rel, limits.max_file_bytes, ArchiveErrorCode.FILE_TOO_LARGE)
        with file_path.open("rb") as stream:
            files.append((rel, budget.read(rel, stream, None)))
    return _build(files, skipped, unwrap_single_root)


def walk_folder(
    root: Path, *, check_count: Callable[[int], None] | None = None
) -> tuple[list[tuple[str, Path]], list[SkippedEntry]]:
    """The files under ``root``, by the one rule for links: nothing outside ``root``.

    Returns ``(found, skipped)``: ``found`` pairs each file's '/'-separated path under
    ``root`` (names as on disk) with the path to read — for a symlinked file whose
    target lies inside ``root``, the target. Skipped (``reason`` ``symlink``): a
    symlink leading outside ``root``, and every symlinked folder (never followed: no
    loops, no escape); ``special_file``: FIFOs, sockets, devices. ``check_count(n)``
    is called with the number of entries seen so far (to refuse huge folders early).
    The HelpDesk indexer walks folders with this function too.
    """
    real_root = root.resolve()
    found: list[tuple[str, Path]] = []
    skipped: list[SkippedEntry] = []
    _walk(root, [], real_root, found, skipped, check_count or (lambda _n: None))
    return found, skipped


def _walk(
    folder: Path,
    prefix: list[str],
    real_root: Path,
    found: list[tuple[str, Path]],
    skipped: list[SkippedEntry],
    check_count: Callable[[int], None],
) -> None:
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            rel = "/".join([*prefix, entry.name])
            if entry.is_symlink():
                target = Path(entry.path).resolve()
                if not target.is_relative_to(real_root):
                    skipped.append(
                        SkippedEntry(
                            rel,
                            "symlink",
                            "フォルダの外を指すシンボリックリンクのため読み飛ばしました",
                        )
                    )
                elif target.is_file():
                    found.append((rel, target))
                else:
                    skipped.append(
                        SkippedEntry(rel, "symlink", "フォルダへのシンボリックリンクは辿りません")
                    )
            elif entry.is_dir(follow_symlinks=False):
                _walk(Path(entry.path), [*prefix, entry.name], real_root, found, skipped,
                      check_count)  # fmt: skip
            elif entry.is_file(follow_symlinks=False):
                found.append((rel, Path(entry.path)))
            else:
                skipped.append(
                    SkippedEntry(rel, "special_file", "通常のファイルではないため読み飛ばしました")
                )
            check_count(len(found) + len(skipped))


def _build(
    files: Iterable[tuple[str, bytes]], skipped: list[SkippedEntry], unwrap: bool
) -> Archive:
    items = sorted(files)
    prefix: str | None = None
    tops = {p.split("/", 1)[0] for p, _ in items}
    if unwrap and len(tops) == 1 and all("/" in p for p, _ in items):
        (top,) = tops
        if all(p.count("/") >= 2 for p, _ in items):  # no files directly in the wrapper
            prefix = top
            items = [(p[len(top) + 1 :], d) for p, d in items]
    grouped: dict[str, list[ArchiveFile]] = {}
    for path, data in items:
        group = path.split("/", 1)[0] if "/" in path else ROOT_GROUP
        name = path.rsplit("/", 1)[-1]
        grouped.setdefault(group, []).append(ArchiveFile(path, name, len(data), data, group))
    groups = [Group(name, grouped[name]) for name in sorted(grouped)]
    return Archive(groups=groups, skipped=skipped, root_prefix=prefix)
