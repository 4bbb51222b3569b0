"""What the routes of one server process share: the process's ``Services``."""

from __future__ import annotations

from fastapi import Request

from keiri_agent.services.container import Services

ApiContext = Services
"""The API's name for the process's services (``app.state.context``)."""


def get_context(request: Request) -> ApiContext:
    """FastAPI dependency: the app's context."""
    context: ApiContext = request.app.state.context
    return context
