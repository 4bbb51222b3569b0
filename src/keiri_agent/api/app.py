"""The FastAPI application: ``create_app(settings)`` builds it, ``keiri-agent serve`` runs it.

    /api/health                       liveness (no token needed)
    /api/research …                   deep research (seed 004): start, SSE events, state, notes
    /graphql                          Strawberry: mutation deepResearch(question, sessionId, kb)
    /api/helpdesk …                   HelpDesk: ask (JSON or SSE), knowledge base
    /api/analysis …                   data analysis: datasets, turns, figures, report
    /api/plans …                      Plans: list, show, validate, dry-run, generate, register;
                                      runs: start, state, resume with answers, cancel, SSE events;
                                      drafts: 設計 drafts kept per person
    /api/schedules, /api/runs …       schedules; any run: state, SSE events, cancel
    /api/audit …                      the audit trail: entries, verify, export
    /api/history                      履歴: every run, answer, conversation and research run
                                      the caller may see (filters, cursor)
    /api/auth/sign-in, sign-out, me   browser sign-in (a session cookie and a CSRF token)
    /docs, /openapi.json              OpenAPI documentation
    /                                 the web UI (``web``: the static export of web/)

Every route under ``/api`` and ``/graphql`` carries ``security.authenticate`` (and
``permit("view")``; a route that changes something asks its own role);
``security.OriginGuard`` and ``body_limit.BodyLimit`` wrap the whole app; errors have
one JSON shape (``errors``). Routes parse the request, call a service and return its
JSON form (``services.jsonforms``); they hold no logic a CLI command or a page would
need to copy.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from keiri_agent.api import errors, web
from keiri_agent.api.body_limit import BodyLimit
from keiri_agent.api.context import ApiContext
from keiri_agent.api.errors import ERROR_RESPONSES
from keiri_agent.api.routes import (
    analysis,
    audit,
    auth,
    graphql,
    helpdesk,
    history,
    plan_drafts,
    plan_runs,
    plans,
    research,
    runs,
    schedules,
    system,
)
from keiri_agent.api.run_starts import RunStartLimiter
from keiri_agent.api.security import OriginGuard, authenticate, permit
from keiri_agent.config import Settings
from keiri_agent.services.container import ModelFactory


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("keiri-agent")
    except PackageNotFoundError:  # running from a source tree
        return "0"


def create_app(settings: Settings, *, model_factory: ModelFactory | None = None) -> FastAPI:
    """The app over ``settings`` (``model_factory``: see ``api.context``)."""
    context = ApiContext(settings, model_factory=model_factory)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(context.start)
        yield
        await asyncio.to_thread(context.close)

    app = FastAPI(
        title="keiri-agent API",
        version=_version(),
        description="経理・バックオフィス向けエージェント（データ分析・ヘルプデスク・"
        "ディープリサーチ・業務 Plan）の HTTP API。エラーは常に "
        '{"error": {"code", "message", "hint", "details"}} の形で返ります。',
        lifespan=lifespan,
        responses=ERROR_RESPONSES,
    )
    app.state.settings = settings
    app.state.context = context
    app.state.run_starts = RunStartLimiter(settings.api.api_run_starts_per_minute)
    errors.install(app)

    protected = [Depends(authenticate), Depends(permit("view"))]
    app.include_router(system.router)
    app.include_router(auth.router)
    app.include_router(research.router, dependencies=protected)
    app.include_router(graphql.router(settings), dependencies=protected)
    app.include_router(helpdesk.router, dependencies=protected)
    app.include_router(analysis.router, dependencies=protected)
    app.include_router(schedules.router, dependencies=protected)
    app.include_router(runs.router, dependencies=protected)
    app.include_router(plan_runs.router, dependencies=protected)  # before plans' {plan_id:path}
    app.include_router(plan_drafts.router, dependencies=protected)  # before plans' too
    app.include_router(plans.router, dependencies=protected)
    app.include_router(audit.router, dependencies=protected)
    app.include_router(history.router, dependencies=protected)
    web.mount(app, settings)  # last: every API route keeps priority

    app.add_middleware(BodyLimit, settings=settings)
    if settings.api.api_cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.api.api_cors_origins),
            allow_methods=["GET", "POST", "DELETE", "PUT"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Last-Event-ID",
                "Accept-Language",
                "X-CSRF-Token",
            ],
        )
    app.add_middleware(OriginGuard, settings=settings)
    return app
