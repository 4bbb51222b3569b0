"""What the routes of one server process share: the settings and the services.

One ``ApiContext`` per app (``app.state.context``), built from one ``Settings``
(the surfaces contract: settings built once per surface, passed down). Services are
built on first use, so a server that only answers HelpDesk questions never opens the
research tables. ``model_factory`` replaces the configured chat model (tests pass a
scripted one; ``None`` uses the settings' provider, offline without a key).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from fastapi import Request

from keiri_agent.config import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from keiri_agent.services.research import ResearchService
    from keiri_agent.services.research_runs import ResearchRuns

ModelFactory = Callable[[Settings], "BaseChatModel"]


class ApiContext:
    """The settings and lazily built services of one server process."""

    def __init__(self, settings: Settings, *, model_factory: ModelFactory | None = None) -> None:
        self.settings = settings
        self.model_factory = model_factory
        self._lock = threading.Lock()
        self._research: ResearchService | None = None
        self._research_runs: ResearchRuns | None = None

    @property
    def research(self) -> ResearchService:
        with self._lock:
            if self._research is None:
                from keiri_agent.services.research import ResearchService

                self._research = ResearchService(self.settings, model_factory=self.model_factory)
            return self._research

    @property
    def research_runs(self) -> ResearchRuns:
        research = self.research
        with self._lock:
            if self._research_runs is None:
                from keiri_agent.services.research_runs import ResearchRuns

                self._research_runs = ResearchRuns(research)
                self._research_runs.recover_orphans()
            return self._research_runs

    def close(self) -> None:
        """Stop background work (server shutdown)."""
        with self._lock:
            runs = self._research_runs
        if runs is not None:
            runs.close()


def get_context(request: Request) -> ApiContext:
    """FastAPI dependency: the app's context."""
    context: ApiContext = request.app.state.context
    return context
