"""Files uploaded for a run, kept in the workspace until the run has used them.

A run may execute in another process or on another machine than the request that
received its files (``keiri-agent worker``), and again after its worker died. So the
bytes are written to the workspace every worker reads, and the run's inputs only
name them:

    <workspace>/.keiri/uploads/<run_id>/000, 001, ...   the files, owner-only (0600)

``stage`` returns the manifest for the run's inputs (``[{"name", "file"}]``: the
name the user gave, the file it is kept in — never a path taken from the user);
``load`` reads them back; ``discard`` deletes them once the run has ended.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.private import write_private
from keiri_agent.workspace import Workspace

_RUN_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
_FILE = re.compile(r"^[0-9]{3,6}$")

Upload = tuple[str, bytes]
"""(the file's name as uploaded, its bytes)."""


class StagedUploads:
    """The staged uploads of one workspace (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self.folder = workspace.state / "uploads"

    def _run_folder(self, run_id: str) -> Path:
        if not _RUN_ID.match(run_id):
            raise ValueError(f"not a run id: {run_id!r}")
        return self.folder / run_id

    def stage(self, run_id: str, uploads: Sequence[Upload]) -> list[dict[str, Any]]:
        """Keep ``uploads`` for the run ``run_id``; the manifest that names them."""
        folder = self._run_folder(run_id)
        manifest = []
        for number, (name, data) in enumerate(uploads):
            file = f"{number:03d}"
            write_private(folder / file, data)
            manifest.append({"name": name, "file": file})
        return manifest

    def load(self, run_id: str, manifest: Sequence[dict[str, Any]]) -> list[Upload]:
        """The files of ``manifest``; ``UserInputError`` when one is gone (deleted from
        the workspace by hand, or a workspace other workers do not share)."""
        folder = self._run_folder(run_id)
        uploads: list[Upload] = []
        for item in manifest:
            name, file = str(item.get("name") or ""), str(item.get("file") or "")
            try:
                if not _FILE.match(file):
                    raise OSError(file)
                uploads.append((name, (folder / file).read_bytes()))
            except OSError:
                raise UserInputError(
                    f"アップロードされたファイル「{name}」が作業フォルダに見つかりません",
                    code="UPLOAD_MISSING",
                    hint="ファイルをもう一度アップロードしてください。複数のサーバーで動かしている"
                    "場合は、すべてのサーバーが同じ作業フォルダ（KEIRI_AGENT_HOME）を"
                    "共有しているかを管理者に確かめてもらってください",
                    details={"run_id": run_id, "name": name},
                ) from None
        return uploads

    def discard(self, run_id: str) -> None:
        """Delete the run's files (nothing happens when there are none)."""
        with contextlib.suppress(OSError, ValueError):
            shutil.rmtree(self._run_folder(run_id))
