"""Owner-only files and folders: how keiri-agent creates what it keeps.

Everything the product keeps in its workspace (``KEIRI_AGENT_HOME``: ``.keiri/``
with the databases, saved uploads and indexes, ``runs/``, ``logs/``, registered
Plans in ``designs/``) holds business data, so it is created readable by its owner
only: files ``0600``, folders ``0700``. The mode is given to each ``mkdir`` and
``open`` that creates something; the process umask is never changed (the Streamlit
and uvicorn processes run other threads that create files of their own). A umask
only takes bits away, so what is created is owner-only at most, never wider.

- ``private_dir(path)``: the folder, its missing parents created ``0700`` too.
- ``private_file(path)``: an empty ``0600`` file when there is none yet. SQLite gives
  its ``-wal``, ``-shm`` and ``-journal`` files the permission bits of the database
  file, so creating the database this way before SQLite opens it covers them.
- ``private_opener``: the ``opener`` of ``open()`` (and of ``portalocker.Lock``)
  that creates a missing file ``0600``: appended logs, lock files, ``"x"`` files.
- ``write_private(path, data)``: replace a file atomically by a ``0600`` temporary
  file in the same folder (``os.replace``).
- ``restrict_tree(folder)``: narrow, after the fact, what a library wrote on its own
  in a folder created by ``private_dir`` (the local Qdrant index).

Existing files and folders keep their mode: only what is created here is narrowed
(``write_private`` creates a new file each time, so a rewritten file is ``0600``).
What the user asks to have written where they choose (``--out``) is not workspace
state and keeps the umask's default.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create the folder ``path`` and its missing parents ``0700``; returns ``path``.

    An existing folder is left as it is; ``FileExistsError`` when a file is in the way.
    """
    missing: list[Path] = []
    folder = path
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(PRIVATE_DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and ``0600`` unless something is there; returns ``path``.

    Its folder must exist. An existing file (or anything else) is left untouched.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return path
    os.close(descriptor)
    return path


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """``open(..., opener=private_opener)``: a file created by the call is ``0600``."""
    return os.open(path, flags, PRIVATE_FILE_MODE)


def write_private(path: Path, data: bytes | str, *, fsync: bool = False) -> Path:
    """Write ``data`` (``str``: UTF-8) to ``path`` atomically, as a new ``0600`` file.

    The folder is created (``private_dir``). ``fsync``: flush to the disk before the
    rename (survives a power cut, not only a crash of the process).
    """
    private_dir(path.parent)
    content = data.encode("utf-8") if isinstance(data, str) else data
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:  # mkstemp creates it 0600
            handle.write(content)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def restrict_tree(folder: Path) -> None:
    """Make ``folder`` and everything in it owner-only (folders ``0700``, files ``0600``).

    For a folder a library fills on its own; symbolic links are not followed.
    """
    for path in (folder, *folder.rglob("*")):
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            path.chmod(PRIVATE_DIR_MODE)
        elif stat.S_ISREG(mode):
            path.chmod(PRIVATE_FILE_MODE)
