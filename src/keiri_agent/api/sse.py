"""Server-sent events (``text/event-stream``) from core ``Event`` values.

Each event is sent as::

    id: 7
    event: partial_summary
    data: {"source": "research", "kind": "partial_summary", "run_id": "run_…", "seq": 7, …}

— ``id`` is the core event's sequence number, so a client that reconnects sends it
back as ``Last-Event-ID`` (the header browsers' ``EventSource`` sets, or the
``lastEventId`` query parameter) and receives only what came after. A comment line
(``: keep-alive``) goes out when nothing was sent for ``api_heartbeat_s`` seconds,
so proxies keep the connection open and a dead client is noticed.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import StreamingResponse

from keiri_agent.api.errors import ApiError
from keiri_agent.events import Event

MEDIA_TYPE = "text/event-stream"
HEARTBEAT = b": keep-alive\n\n"

RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"content": {MEDIA_TYPE: {}}, "description": "Server-sent events"}
}
"""The OpenAPI description of an SSE route's success response."""

LastEventIdQuery = Annotated[
    str | None, Query(alias="lastEventId", description="Resume after this event id")
]
"""The ``?lastEventId=`` parameter of an SSE route (``last_event_id`` reads it)."""


def encode(event: Event) -> bytes:
    """One event in the wire format (``data`` is one line of JSON)."""
    data = json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.kind}\ndata: {data}\n\n".encode()


def last_event_id(request: Request, query_value: str | None) -> int:
    """The sequence number to resume after: ``Last-Event-ID`` header, else the
    ``lastEventId`` query parameter, else 0 (from the start)."""
    raw = request.headers.get("last-event-id") or query_value or ""
    raw = raw.strip()
    if not raw:
        return 0
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:
        raise ApiError(
            400,
            "LAST_EVENT_ID_INVALID",
            f"Last-Event-ID「{raw[:40]}」は数字ではありません",
            f"Last-Event-ID '{raw[:40]}' is not a number",
            "最後に受け取ったイベントの id（数字）を送るか、空にして最初から受け取ってください",
            "Send the id (a number) of the last event received, or none to start over",
        )
    return int(raw)


def stream(events: AsyncIterator[Event | None], heartbeat_s: float) -> StreamingResponse:
    """The SSE response over ``events`` (``None`` items mean "nothing new yet")."""

    async def body() -> AsyncIterator[bytes]:
        last_sent = time.monotonic()
        yield b"retry: 2000\n\n"
        try:
            async for event in events:
                if event is not None:
                    yield encode(event)
                    last_sent = time.monotonic()
                elif time.monotonic() - last_sent >= heartbeat_s:
                    yield HEARTBEAT
                    last_sent = time.monotonic()
        finally:  # the client went away (Starlette cancels us) or the run ended
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    return StreamingResponse(
        body(),
        media_type=MEDIA_TYPE,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
