"""One JSON shape for every error the API returns, in the request's language.

    {"error": {"code": "PLAN_NOT_FOUND", "message": "…", "hint": "…", "details": {…}}}

- ``code`` is stable and machine-readable (the core error's ``code``, or one of the
  API's own below);
- ``message`` and ``hint`` are Japanese, or English when the request prefers English
  (``Accept-Language``) and the error is one of the API's own; the core's errors
  (``KeiriAgentError``) carry Japanese text only, so they stay Japanese;
- ``details`` holds JSON values (never a secret: everything is masked; never a
  traceback: unexpected exceptions are logged on the server and answered with
  ``INTERNAL_ERROR``).

``install(app)`` registers the handlers; ``ERROR_RESPONSES`` documents the shape in
the OpenAPI spec of every route.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keiri_agent.errors import KeiriAgentError, error_category
from keiri_agent.masking import mask_secrets, mask_text
from keiri_agent.runs.records import Run

log = logging.getLogger(__name__)

Language = Literal["ja", "en"]


class ErrorDetail(BaseModel):
    code: str
    message: str
    hint: str | None = None
    details: dict[str, Any] = {}


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in {
        400: "The request cannot be processed as given (see error.hint)",
        401: "A bearer token is required or the one given is wrong",
        403: "The request's origin is not allowed",
        404: "Not found",
        409: "Conflict with the current state (e.g. a run in progress)",
        413: "The body or the upload is larger than the server's limit",
        422: "The request does not match the schema",
        429: "Too many runs started by this client in a minute (RATE_LIMITED; see Retry-After)",
        500: "An unexpected server error (logged on the server)",
        503: "A store of the server is damaged, locked or out of reach (STORE_CORRUPT, "
        "STORE_LOCKED, STORE_UNREACHABLE)",
        502: "The language model service failed",
    }.items()
}
"""Documented on every route so that clients (and schemathesis) know the shape."""


@dataclass
class ApiError(Exception):
    """An error of the API itself (not of the core), with both languages."""

    status: int
    code: str
    message_ja: str
    message_en: str
    hint_ja: str | None = None
    hint_en: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] | None = None

    def body(self, language: Language) -> dict[str, Any]:
        english = language == "en"
        return _body(
            self.code,
            self.message_en if english else self.message_ja,
            (self.hint_en if english else self.hint_ja),
            self.details,
        )


def not_found(what_ja: str, what_en: str, name: str) -> ApiError:
    """404 for a named thing (a run, a session, a dataset) that does not exist."""
    return ApiError(
        404,
        "NOT_FOUND",
        f"{what_ja}「{name}」が見つかりません",
        f"{what_en} '{name}' was not found",
        "一覧から選び直してください",
        "Pick one from the list",
        {"name": name},
    )


def request_language(request: Request) -> Language:
    """``en`` when the request's Accept-Language ranks English above Japanese."""
    header = request.headers.get("accept-language", "")
    ranked: list[tuple[float, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality + position * 1e-6, tag.strip().lower()))
    for _, tag in sorted(ranked):
        if tag.startswith("ja"):
            return "ja"
        if tag.startswith("en"):
            return "en"
    return "ja"


def _body(code: str, message: str, hint: str | None, details: dict[str, Any]) -> dict[str, Any]:
    return {
        "error": {
            "code": code,
            "message": mask_text(message),
            "hint": mask_text(hint) if hint else None,
            "details": mask_secrets(details),
        }
    }


STATUS_OF_CATEGORY: dict[str, int] = {
    "not_found": 404,
    "conflict": 409,
    "unavailable": 503,  # the server's own store, not the request, is at fault
    "input": 400,
    "forbidden": 403,
    "model": 502,
    "internal": 500,
}
"""The HTTP status of each ``errors.error_category``."""


def status_of(error: KeiriAgentError) -> int:
    """The HTTP status of a core error."""
    return STATUS_OF_CATEGORY[error_category(error)]


def run_error_response(run: Run) -> JSONResponse:
    """The answer to a request whose run did not succeed: its stored error with the
    status of its category, or ``RUN_CANCELLED`` (409) for a cancelled run."""
    error = run.error or {}
    if run.status == "cancelled" or not error:
        return JSONResponse(
            _body(
                "RUN_CANCELLED",
                "処理は途中で中止されました",
                "必要ならもう一度実行してください",
                {"run_id": run.run_id},
            ),
            status_code=409,
        )
    return JSONResponse(
        _body(
            str(error.get("code") or "RUN_FAILED"),
            str(error.get("message") or ""),
            error.get("hint"),
            dict(error.get("details") or {}),
        ),
        status_code=STATUS_OF_CATEGORY.get(str(error.get("category")), 500),
    )


def core_error_response(error: KeiriAgentError) -> JSONResponse:
    return JSONResponse(
        _body(error.code, error.message, error.hint, dict(error.details)),
        status_code=status_of(error),
    )


_HTTP_ERRORS: dict[int, tuple[str, str, str, str, str]] = {
    404: ("NOT_FOUND", "そのアドレスはありません", "No such endpoint",
          "API の一覧は /docs で確認できます", "See /docs for the endpoints"),
    405: ("METHOD_NOT_ALLOWED", "この操作はこのアドレスでは使えません",
          "Method not allowed here", "API の一覧は /docs で確認できます",
          "See /docs for the endpoints"),
}  # fmt: skip


def install(app: FastAPI) -> None:
    """Register the handlers that give every error the one shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, error: ApiError) -> JSONResponse:
        return error_response(error, request)

    @app.exception_handler(KeiriAgentError)
    async def _core_error(request: Request, error: KeiriAgentError) -> JSONResponse:
        return core_error_response(error)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            {"location": [str(part) for part in item.get("loc", ())], "problem": item.get("msg")}
            for item in error.errors()
        ]
        english = request_language(request) == "en"
        where = ", ".join(".".join(p["location"]) for p in problems[:5])
        message = (
            f"The request does not match the schema: {where}"
            if english
            else f"リクエストの内容が正しくありません: {where}"
        )
        hint = (
            "See /docs for the expected fields" if english else "/docs で項目と型を確認してください"
        )
        return JSONResponse(
            _body("REQUEST_INVALID", message, hint, {"problems": problems}), status_code=422
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, error: StarletteHTTPException) -> JSONResponse:
        if isinstance(error, ApiHTTPException):
            return error_response(error.error, request)
        code, ja, en, hint_ja, hint_en = _HTTP_ERRORS.get(
            error.status_code,
            ("HTTP_ERROR", "リクエストを処理できませんでした", "The request failed", "", ""),
        )
        english = request_language(request) == "en"
        return JSONResponse(
            _body(code, en if english else ja, (hint_en if english else hint_ja) or None, {}),
            status_code=error.status_code,
            headers=error.headers,
        )

    app.add_middleware(UnexpectedErrors)


class UnexpectedErrors:
    """ASGI middleware: an unexpected exception is logged once here and answered with
    ``INTERNAL_ERROR`` (an ``exception_handler(Exception)`` would also let Starlette
    re-raise it, so uvicorn logged it a second time and dropped the kept-alive
    connection). A stream that already started cannot be answered: it is cut."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked_send)
        except Exception:
            request = Request(scope)
            log.exception("unexpected error on %s %s", request.method, request.url.path)
            if started:
                raise
            english = request_language(request) == "en"
            response = JSONResponse(
                _body(
                    "INTERNAL_ERROR",
                    "An unexpected server error occurred"
                    if english
                    else "サーバーで予期しないエラーが発生しました",
                    "Try again; if it persists, send the server log to your administrator"
                    if english
                    else "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください",
                    {},
                ),
                status_code=500,
            )
            await response(scope, receive, send)


def error_response(error: ApiError, request: Request) -> JSONResponse:
    """``error`` as the response to ``request`` (in its language); middlewares use it
    for the errors they answer before routing."""
    return JSONResponse(
        error.body(request_language(request)), status_code=error.status, headers=error.headers
    )


class ApiHTTPException(StarletteHTTPException):
    """An ``ApiError`` raised where only an HTTP exception passes through unchanged (a
    request body's ``receive``: FastAPI turns any other error there into a 400)."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.status, error.message_en, error.headers)
        self.error = error
