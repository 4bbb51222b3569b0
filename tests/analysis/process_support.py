"""What the isolation tests share: this process's live children."""

from __future__ import annotations

import time

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


def children_ended(before: set[int], within_s: float = 5.0) -> bool:
    """True once no child beyond ``before`` is alive, waiting up to ``within_s``.

    A child that reported its own failure (a MemoryError it caught) is reaped
    later by the parent; its exit (freeing hundreds of MiB) may take a moment.
    """
    deadline = time.monotonic() + within_s
    while live_children() - before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
