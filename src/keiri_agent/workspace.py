"""The workspace: where designs/, runs/, logs/ and the embedded database live.

``KEIRI_AGENT_HOME`` (``Settings.storage.home``) is the root; the current directory by
default. Folders are created on first use, never at import time, owner-only
(``0700``, ``keiri_agent.private``): what they hold is business data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from keiri_agent.config import Settings
from keiri_agent.private import private_dir


@dataclass(frozen=True)
class Workspace:
    """Paths under one workspace root."""

    root: Path

    @classmethod
    def from_settings(cls, settings: Settings) -> Workspace:
        return cls(settings.storage.home.expanduser().resolve())

    @property
    def designs(self) -> Path:
        return self.root / "designs"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def state(self) -> Path:
        """Private state: the embedded database, indexes."""
        return self.root / ".keiri"

    @property
    def database_file(self) -> Path:
        return self.state / "keiri.db"

    @property
    def checkpoint_file(self) -> Path:
        return self.state / "checkpoints.db"

    def ensure(self, path: Path) -> Path:
        """Create ``path`` (a folder under the workspace) owner-only and return it."""
        return private_dir(path)
