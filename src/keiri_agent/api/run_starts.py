"""How often one client may start runs (research runs, Plan runs and their resumes).

``RunStartLimiter(per_minute)`` keeps, per client, the times of its starts in the last
minute (in this server process; each worker counts its own). A client is its bearer
token (by its SHA-256, never the token itself) or, without one, its address.
``take(request)`` records a start or raises 429 ``RATE_LIMITED`` with ``Retry-After``
(the seconds until the oldest start leaves the window). Reading, streaming and
cancelling are never limited.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import deque

from starlette.requests import HTTPConnection, Request

from keiri_agent.api.errors import ApiError

WINDOW_S = 60.0


class RunStartLimiter:
    """The sliding one-minute window of run starts per client (see the module docstring)."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._starts: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, connection: HTTPConnection) -> None:
        """Record one start by ``connection``'s client, or raise 429 ``RATE_LIMITED``."""
        client = _client(connection)
        now = time.monotonic()
        with self._lock:
            starts = self._starts.setdefault(client, deque())
            while starts and now - starts[0] >= WINDOW_S:
                starts.popleft()
            if len(starts) >= self.per_minute:
                wait = max(1, math.ceil(WINDOW_S - (now - starts[0])))
                raise rate_limited(self.per_minute, wait)
            starts.append(now)
            for key in [k for k, v in self._starts.items() if not v]:  # forget idle clients
                del self._starts[key]


def rate_limited(per_minute: int, wait_s: int) -> ApiError:
    """429: a client started more runs in a minute than ``per_minute``."""
    return ApiError(
        429,
        "RATE_LIMITED",
        f"実行の開始が多すぎます（1 分あたり {per_minute} 件まで）",
        f"Too many runs started (at most {per_minute} per minute)",
        f"{wait_s} 秒ほど待ってから、もう一度実行してください。上限は管理者が "
        "KEIRI_AGENT_API_RUN_STARTS_PER_MINUTE で変えられます",
        f"Wait about {wait_s} s and try again; the administrator can raise the limit",
        {"per_minute": per_minute, "retry_after_s": wait_s},
        headers={"Retry-After": str(wait_s)},
    )


def _client(connection: HTTPConnection) -> str:
    authorization = connection.headers.get("authorization", "")
    if authorization:
        return "token:" + hashlib.sha256(authorization.encode("utf-8")).hexdigest()
    host = connection.client.host if connection.client else "unknown"
    return f"address:{host}"


def count_run_start(request: Request) -> None:
    """FastAPI dependency of the routes that start a run: ``take`` on the app's limiter."""
    limiter: RunStartLimiter = request.app.state.run_starts
    limiter.take(request)
