"""Results written as files: an analysis report with its figures, a Plan's binary outputs.

- ``write_report`` / ``write_figures``: ``report.md`` and ``figures/<artifact_id>.png``
  in a folder (``analyze --out``, the demo);
- ``report_zip``: the same layout as one ZIP in memory (the データ分析 page's download,
  later the API);
- ``OutputWriter``: a Plan's binary outputs (workbooks, uploaded files) into a folder
  under unique, safe file names that never overwrite an existing file
  (``plan run --out``); it is the ``writer`` that
  ``jsonforms.json_value`` takes, so the JSON shows the paths instead of the data.

Folders are created when missing; an ``OSError`` is the caller's to report (the
results have been shown by then).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from keiri_agent.agents.analysis.artifacts import figure_path
from keiri_agent.errors import UserInputError

if TYPE_CHECKING:
    from keiri_agent.agents.analysis.artifacts import Artifact

REPORT_FILE = "report.md"


def _figures(artifacts: Iterable[Artifact]) -> list[tuple[str, str, bytes]]:
    """(artifact id, relative path, PNG bytes) of the figure artifacts."""
    return [
        (artifact["artifact_id"], figure_path(artifact), artifact["payload"])
        for artifact in artifacts
        if artifact["kind"] == "figure" and isinstance(artifact["payload"], bytes)
    ]


def write_figures(artifacts: Iterable[Artifact], out_dir: Path) -> dict[str, Path]:
    """Write the figure artifacts as ``out_dir/figures/<id>.png``; returns id → path."""
    written: dict[str, Path] = {}
    for artifact_id, relative, data in _figures(artifacts):
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written[artifact_id] = path
    return written


def write_report(
    out_dir: Path, report_md: str | None, artifacts: Iterable[Artifact]
) -> tuple[Path | None, dict[str, Path]]:
    """The figures, then ``report.md`` when there is a report; (report path, id → figure path)."""
    files = write_figures(artifacts, out_dir)
    if not report_md:
        return None, files
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / REPORT_FILE
    path.write_text(report_md, encoding="utf-8")
    return path, files


def report_zip(report_md: str | None, artifacts: Iterable[Artifact]) -> bytes:
    """``report.md`` with its figures under ``figures/``, zipped in memory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(REPORT_FILE, report_md or "")
        for _, relative, data in _figures(artifacts):
            archive.writestr(relative, data)
    return buffer.getvalue()


def check_out_folder(out: Path | None) -> None:
    """An output folder must be a folder or not exist yet (checked before the work runs)."""
    if out is not None and out.exists() and not out.is_dir():
        raise UserInputError(
            f"--out {out} はフォルダではありません（同じ名前のファイルがあります）",
            hint="存在しないパスか、既存のフォルダを指定してください",
        )


def write_failed(out: Path, error: OSError, *, what: str, kept: str) -> UserInputError:
    """The error for an output folder that could not be written: ``what`` (結果, 出力)
    was not written, ``kept`` says what is safe anyway."""
    return UserInputError(
        f"{out} に{what}を書き込めません: {error.strerror or error}",
        hint=f"--out に書き込み可能なフォルダを指定してください（{kept}）",
    )


NAME_MAX_BYTES = 200
"""The longest file name kept (UTF-8 bytes): file systems stop at 255, and a ``-2``
suffix or a temporary prefix must still fit."""


def safe_name(name: str | None) -> str:
    """The last component of ``name`` (no folders, never '.' or '..', no reserved
    characters, at most ``NAME_MAX_BYTES``: a longer stem is cut, the extension
    kept), or ''."""
    if not name:
        return ""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    base = "".join("_" if ch in '<>:"|?*' or ord(ch) < 32 else ch for ch in base)
    if base in ("", ".", ".."):
        return ""
    return _shortened(base)


def _shortened(name: str) -> str:
    """``name`` cut to ``NAME_MAX_BYTES`` UTF-8 bytes at a character boundary, its
    extension (a short ASCII suffix) kept."""
    if len(name.encode("utf-8")) <= NAME_MAX_BYTES:
        return name
    stem, dot, extension = name.rpartition(".")
    suffix = (
        f".{extension}" if dot and stem and extension.isascii() and len(extension) <= 10 else ""
    )
    stem = name[: len(name) - len(suffix)]
    room = NAME_MAX_BYTES - len(suffix)
    return stem.encode("utf-8")[:room].decode("utf-8", errors="ignore").rstrip() + suffix


class OutputWriter:
    """Writes binary outputs into ``out_dir`` under unique, safe file names.

    The file's own name when it has one, else ``<where>`` with the extension its bytes
    show (``write_excel.workbook.xlsx``, ``.docx``, ``.pdf``, ``.zip``; else ``.bin``);
    a name used twice, or taken by a file already in the folder (an earlier run's
    output), gets ``-2``, ``-3``...: nothing is ever overwritten, and ``written``
    lists (where, path) with the name each output really got.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.written: list[tuple[str, Path]] = []

    def __call__(self, where: str, data: bytes, name: str | None) -> Path:
        from keiri_agent.services.plan_outputs import file_kind  # not at CLI start-up (yaml)

        extension, _ = file_kind(data)
        if extension in (".txt",):  # text of unknown kind (CSV, JSON …) keeps .bin
            extension = ".bin"
        filename = safe_name(name) or safe_name(f"{where}{extension}") or f"output{extension}"
        stem, dot, suffix = filename.rpartition(".")
        if not dot:
            stem, suffix = filename, ""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        candidate, counter = filename, 2
        while True:
            path = self.out_dir / candidate
            try:  # created only if absent, atomically: no race with another writer
                handle = path.open("xb")
            except FileExistsError:
                candidate = f"{stem}-{counter}{dot}{suffix}"
                counter += 1
                continue
            with handle:
                handle.write(data)
            break
        self.written.append((where, path))
        return path
