"""Request bodies are read up to a limit, never further (ASGI middleware).

JSON and form bodies may be ``api_max_body_mb``; uploads (``multipart/form-data``)
``max_upload_mb``. A declared ``Content-Length`` over the limit is refused before
anything is read; a body that grows past it while streaming (chunked, or a lying
header) stops being read and is refused with the same 413 (``body_too_large``).
Uploads are parsed by Starlette into spooled temporary files, so memory stays
bounded whatever the limit.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keiri_agent.api.errors import ApiError, ApiHTTPException, error_response
from keiri_agent.config import Settings

MIB = 2**20


def body_too_large(limit: int, upload: bool) -> ApiError:
    """413: the request body went over its limit."""
    megabytes = limit // MIB
    what_ja = "アップロードするファイル" if upload else "リクエストの本文"
    what_en = "The uploaded file" if upload else "The request body"
    return ApiError(
        413,
        "BODY_TOO_LARGE",
        f"{what_ja}が上限（{megabytes} MB）を超えています",
        f"{what_en} is larger than the limit ({megabytes} MB)",
        "ファイルを分けるか小さくしてから送ってください。上限は管理者が設定で変えられます",
        "Split or shrink it; the administrator can raise the limit in the settings",
        {"limit_bytes": limit},
    )


class BodyLimit:
    """ASGI middleware enforcing the limits in the module docstring."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.body_limit = settings.api.api_max_body_mb * MIB
        self.upload_limit = settings.inputs.max_upload_mb * MIB

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        upload = headers.get(b"content-type", b"").startswith(b"multipart/")
        # an upload's form fields and boundaries come on top of the file itself
        limit = self.upload_limit + MIB if upload else self.body_limit
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            too_large = body_too_large(limit, upload)
            await error_response(too_large, Request(scope))(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise ApiHTTPException(body_too_large(limit, upload))
            return message

        await self.app(scope, limited_receive, send)
