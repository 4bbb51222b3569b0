"""What one process shares: the settings, the services built from them, and the run
service that executes their long tasks.

One ``Services`` per process of a surface (the API app's ``app.state.context``, the
Streamlit process, a ``keiri-agent worker``), built from one ``Settings`` (the surfaces
contract: settings built once per surface, passed down). Services are built on first
use, so a server that only answers HelpDesk questions never opens the research tables.
``model_factory`` replaces the configured chat model (tests pass a scripted one;
``None`` uses the settings' provider, offline without a key).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError
from keiri_agent.masking import mask_text

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from keiri_agent.agents.analysis import AnalysisAgent
    from keiri_agent.agents.helpdesk.desk import HelpDesk
    from keiri_agent.people.accounts import Accounts
    from keiri_agent.people.audit import AuditTrail
    from keiri_agent.people.ownership import Ownership
    from keiri_agent.people.sessions import SignInSessions
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.runs.schedules import Schedules
    from keiri_agent.runs.service import RunService
    from keiri_agent.runs.setup import ProcessRuns
    from keiri_agent.services.design import DesignService
    from keiri_agent.services.plan_runs import PlanRuns
    from keiri_agent.services.research import ResearchService
    from keiri_agent.services.research_runs import ResearchRuns
    from keiri_agent.services.retention import PurgeSchedule

log = logging.getLogger(__name__)

ModelFactory = Callable[[Settings], "BaseChatModel"]


class Services:
    """The settings and lazily built services of one process."""

    def __init__(self, settings: Settings, *, model_factory: ModelFactory | None = None) -> None:
        self.settings = settings
        self.model_factory = model_factory
        self._lock = threading.RLock()  # a service may build the ones it needs
        self._research: ResearchService | None = None
        self._research_runs: ResearchRuns | None = None
        self._runs: ProcessRuns | None = None
        self._started = False
        self._desks: dict[str, HelpDesk] = {}
        self._analysis: AnalysisAgent | None = None
        self._plans: PlanEngine | None = None
        self._design: DesignService | None = None
        self._plan_runs: PlanRuns | None = None
        self._purge: PurgeSchedule | None = None

    @property
    def research(self) -> ResearchService:
        with self._lock:
            if self._research is None:
                from keiri_agent.services.research import ResearchService

                self._research = ResearchService(self.settings, model_factory=self.model_factory)
            return self._research

    @property
    def runs(self) -> RunService:
        """The run service of this process: every long task (research, Plan runs,
        HelpDesk asks, indexing), executed by this process's threads or the job
        queue's workers (``runs.setup``)."""
        return self.process_runs.service

    @property
    def process_runs(self) -> ProcessRuns:
        """Built on first use; once the server has started, also started then (a
        database that was down at start-up does not leave runs without executor)."""
        with self._lock:
            if self._runs is None:
                from keiri_agent.runs.setup import ProcessRuns

                runs = ProcessRuns(self)
                if self._started:
                    runs.start()
                self._runs = runs
            return self._runs

    @property
    def schedules(self) -> Schedules:
        """The schedules of Plans (in the application database)."""
        from keiri_agent.runs.schedules import Schedules, ScheduleStore

        return Schedules(ScheduleStore(self.research.store.engine), self.settings)

    @property
    def accounts(self) -> Accounts:
        """The team's accounts (in the application database)."""
        from keiri_agent.people.accounts import Accounts

        return Accounts(self.research.store.engine)

    @property
    def sign_in_sessions(self) -> SignInSessions:
        """Browser sign-ins (in the application database)."""
        from keiri_agent.people.sessions import SignInSessions

        return SignInSessions(self.research.store.engine)

    @property
    def ownership(self) -> Ownership:
        """Who sees and acts on what someone made (``people.ownership``)."""
        from keiri_agent.people.ownership import Ownership

        return Ownership(team_sharing=self.settings.api.team_sharing)

    @property
    def audit(self) -> AuditTrail:
        """The audit trail (in the application database)."""
        from keiri_agent.people.audit import AuditTrail

        return AuditTrail(self.research.store.engine)

    @property
    def research_runs(self) -> ResearchRuns:
        research, runs = self.research, self.runs
        with self._lock:
            if self._research_runs is None:
                from keiri_agent.services.research_runs import ResearchRuns

                self._research_runs = ResearchRuns(research, runs)
            return self._research_runs

    def helpdesk(self, name: str = "helpdesk") -> HelpDesk:
        """The HelpDesk over knowledge base ``name`` (one per name, shared by requests)."""
        with self._lock:
            desk = self._desks.get(name)
            if desk is None:
                from keiri_agent.agents.helpdesk.desk import HelpDesk

                model = self.model_factory(self.settings) if self.model_factory else None
                desk = self._desks[name] = HelpDesk(self.settings, name=name, chat_model=model)
            return desk

    @property
    def analysis(self) -> AnalysisAgent:
        """The analysis agent of this process (its datasets live in this process)."""
        with self._lock:
            if self._analysis is None:
                from keiri_agent.agents.analysis import AnalysisAgent

                model = self.model_factory(self.settings) if self.model_factory else None
                self._analysis = AnalysisAgent(self.settings, chat_model=model)
            return self._analysis

    @property
    def plans(self) -> PlanEngine:
        with self._lock:
            if self._plans is None:
                from keiri_agent.plans.engine import PlanEngine

                self._plans = PlanEngine(self.settings)
            return self._plans

    @property
    def design(self) -> DesignService:
        engine = self.plans
        with self._lock:
            if self._design is None:
                from keiri_agent.services.design import DesignService

                self._design = DesignService(
                    self.settings, engine, model_factory=self.model_factory
                )
            return self._design

    @property
    def plan_runs(self) -> PlanRuns:
        """Plan runs through the run service."""
        engine, runs = self.plans, self.runs
        with self._lock:
            if self._plan_runs is None:
                from keiri_agent.services.plan_runs import PlanRuns

                self._plan_runs = PlanRuns(engine, runs)
            return self._plan_runs

    def start(self) -> None:
        """Server start-up: migrate the database, load the search sources — so the
        first request is not the one that waits for it; continue the runs a dead
        process left (and keep looking for them: ``runs.executors``); then start the
        daily purge (``services.retention``)."""
        self._started = True
        try:
            research = self.research_runs  # builds and starts the run service
        except Exception as error:  # e.g. the database is down: built on the next request
            log.warning("runs not ready at start-up: %s", mask_text(str(error)))
        else:
            with contextlib.suppress(KeiriAgentError):  # no knowledge base yet: said on use
                research.check_sources([])
            self._record_settings()
        from keiri_agent.services.retention import PurgeSchedule

        self._purge = PurgeSchedule(self.settings)
        self._purge.start()

    def _record_settings(self) -> None:
        """A ``settings_changed`` audit entry when the settings changed since the last
        start (``people.settings_record``)."""
        from keiri_agent.people.operator import os_login
        from keiri_agent.people.settings_record import record_settings

        try:
            record_settings(self.settings, self.audit, os_login())
        except Exception as error:  # the server still starts; the next start records it
            log.warning("settings not recorded in the audit trail: %s", type(error).__name__)

    def close(self) -> None:
        """Stop background work (server shutdown)."""
        if self._purge is not None:
            self._purge.stop()
        with self._lock:
            runs, analysis = self._runs, self._analysis
        if runs is not None:
            runs.close()
        if analysis is not None:
            analysis.close()
