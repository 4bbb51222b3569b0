"""Running the API with uvicorn (``keiri-agent serve``).

``serve(settings, host, port, workers)`` checks the start-up (``check_startup``: the
bind address against the token, several workers only on a shared database) before
anything listens, then runs uvicorn. With more than
one worker uvicorn starts each process from ``app_from_environment`` (an import
string is the only way to hand it an app per process); every worker then builds its
own ``Settings`` from the same environment and ``.env``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from keiri_agent.api.security import check_bind
from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import ConfigurationError


def check_startup(settings: Settings, *, host: str, workers: int) -> None:
    """``ConfigurationError`` before anything listens: an unsafe bind or token
    (``check_bind``), or several workers on SQLite (one file, one process: the workers
    would contend for its write lock)."""
    check_bind(host, settings)
    url = settings.storage.database_url or "sqlite:"
    if workers > 1 and url.startswith("sqlite"):
        raise ConfigurationError(
            f"SQLite のデータベースでは複数のプロセス（--workers {workers}）で起動できません",
            hint="--workers 1 で起動するか、複数プロセスで使う場合は .env の "
            "KEIRI_AGENT_DATABASE_URL に PostgreSQL の接続先を設定してください",
            details={"workers": workers},
        )


def app_from_environment() -> FastAPI:
    """uvicorn's factory for worker processes: the app over ``load_settings()``."""
    from keiri_agent.api.app import create_app

    return create_app(load_settings())


def serve(settings: Settings, *, host: str, port: int, workers: int = 1) -> None:
    """Listen on ``host:port`` until interrupted (``ConfigurationError`` on an unsafe bind)."""
    import uvicorn

    check_startup(settings, host=host, workers=workers)
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": settings.logs.log_level.lower(),
        "timeout_graceful_shutdown": 10,
    }
    if workers > 1:
        uvicorn.run(
            "keiri_agent.api.server:app_from_environment", factory=True, workers=workers, **options
        )
        return
    from keiri_agent.api.app import create_app

    uvicorn.run(create_app(settings), **options)
