"""An async HTTP client for the model SDKs that works from any event loop.

langchain-openai shares one cached ``httpx.AsyncClient`` between all models of a
process, and an httpx connection pool belongs to the event loop that opened it. Each
synchronous research run (the API's worker threads, a Streamlit rerun) runs its own
loop (``asyncio.run``), so from the second run on every model call failed with
"Event loop is closed". ``PerLoopAsyncClient`` keeps one inner client per running
loop and sends each request through the one of the caller's loop.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import httpx


class PerLoopAsyncClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` whose requests go through a client of the running loop."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._options = options
        self._lock = threading.Lock()
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = httpx.AsyncClient(**self._options)
            return client

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        return await self._client().send(request, **kwargs)

    async def aclose(self) -> None:
        """Close the running loop's client (the others close with their loops)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.pop(loop, None)
        if client is not None:
            await client.aclose()
        await super().aclose()


def async_client(timeout_s: float) -> PerLoopAsyncClient:
    """The client the chat and embeddings models get (the openai SDK's defaults)."""
    return PerLoopAsyncClient(
        timeout=timeout_s,
        follow_redirects=True,
        limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
    )
