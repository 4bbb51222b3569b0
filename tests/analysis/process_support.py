"""What the isolation tests share: this process's live children."""

from __future__ import annotations

import psutil


def live_children() -> set[int]:
    """Pids of live (non-zombie) children of this process."""
    live = set()
    for child in psutil.Process().children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                live.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return live
