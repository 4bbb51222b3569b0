"""Liveness and what the server offers (no token needed: nothing private)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from keiri_agent.api.context import ApiContext, get_context
from keiri_agent.config import OFFLINE_NOTICE
from keiri_agent.errors import KeiriAgentError

router = APIRouter(prefix="/api", tags=["system"])


class Health(BaseModel):
    status: Literal["ok"]
    offline: bool
    """True when no language model is configured (rule-based answers)."""
    offline_notice: str | None
    """What every page says from the start when ``offline`` (the Streamlit sidebar's
    text: how to configure a model); None otherwise. Never a key or an address."""
    token_required: bool
    """True when a request must say who it is: a shared token is set, people are
    registered, or a company sign-in is configured."""
    password_sign_in: bool
    """People are registered: a page offers their login and password."""
    oidc_sign_in: bool
    """A company sign-in (OpenID Connect) is configured: a page offers it."""
    time_zone: str
    """The one time zone every page shows times in (``KEIRI_AGENT_TIME_ZONE``)."""
    streamlit_url: str | None
    """Where the Streamlit app is (``KEIRI_AGENT_STREAMLIT_URL``); None: no link."""


@router.get("/health", response_model=Health)
def health(context: Annotated[ApiContext, Depends(get_context)]) -> Health:
    """The server is up; whether it answers offline (and the notice to show then), and
    how a person says who they are."""
    settings = context.settings
    try:
        people = context.accounts.any()
    except KeiriAgentError:  # the store is down: liveness still answers; requests say why
        people = False
    oidc = bool(settings.api.oidc_issuer)
    return Health(
        status="ok",
        offline=settings.llm.is_offline,
        offline_notice=OFFLINE_NOTICE if settings.llm.is_offline else None,
        token_required=settings.api.api_token is not None or people or oidc,
        password_sign_in=people,
        oidc_sign_in=oidc,
        time_zone=settings.plans.time_zone,
        streamlit_url=settings.api.streamlit_url,
    )
