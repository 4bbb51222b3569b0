"""Liveness and what the server offers (no token needed: nothing private)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from keiri_agent.api.context import ApiContext, get_context

router = APIRouter(prefix="/api", tags=["system"])


class Health(BaseModel):
    status: Literal["ok"]
    offline: bool
    """True when no language model is configured (rule-based answers)."""
    token_required: bool


@router.get("/health", response_model=Health)
def health(context: Annotated[ApiContext, Depends(get_context)]) -> Health:
    """The server is up; whether it answers offline and whether a token is required."""
    settings = context.settings
    return Health(
        status="ok", offline=settings.is_offline, token_required=settings.api_token is not None
    )
