"""Handing freed heap memory back to the operating system between loading stages.

Parsing a large CSV frees hundreds of megabytes of small blocks (the parser's buffers,
the Python strings of text cells) that glibc's allocator keeps for reuse: the process
stays that large, and the next stage (cleaning, the summary's distinct counts) grows
on top of it, raising the peak. ``malloc_trim`` returns those free pages. Elsewhere
(macOS, musl, Windows) there is nothing to call and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    trim: Callable[[int], int] | None = getattr(libc, "malloc_trim", None)
    return trim


def release_free_memory() -> None:
    """Return the allocator's free pages to the operating system (glibc only; cheap)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
