"""What the pages share: a browser session's ``Settings``, and the process's ``Services``.

``app.py`` builds the session's settings on its first run (and stops the app with the
message and hint when they are invalid); every page and component reads them from here
instead of building its own ``Settings()``.

``process_services()`` is this Streamlit process's one ``Services`` (``st.cache_resource``):
the HelpDesks, research, design and Plan engine the pages use, and the run service
that executes what they start (HelpDesk asks, research, 自動生成, Plan runs). Its run
executor is started with it (``ProcessRuns``): with SQLite this process's threads
execute the runs and its recovery loop continues the runs a dead process left; with
PostgreSQL the job queue's workers do. A page keeps only the id of its run in
``st.session_state`` and follows the run's stored events (``ui.run_follow``), so a
rerun, a reload or a visit to another page loses nothing. ``shared_services()`` is
the same ``Services`` without starting the executor (the side panel needs no runs).

The ``Services`` are built from the first session's settings; sessions have equal
settings (the same environment and ``.env``), so one is built per process. Settings
that differ (another workspace) build new ones and close the old; a changed API key
needs a restart of ``keiri-agent ui``. A test may put its own ``Services`` (e.g. one
with a scripted chat model) into ``st.session_state[SERVICES]`` before the first run;
the session then uses it instead, and the test closes it.
"""

from __future__ import annotations

import threading
import weakref

import streamlit as st

from keiri_agent.config import Settings, load_settings
from keiri_agent.services.container import Services

SETTINGS = "session.settings"
SERVICES = "session.services"

_started: weakref.WeakSet[Services] = weakref.WeakSet()
_starting = threading.Lock()


def session_settings() -> Settings:
    """This session's settings; built by ``load_settings`` on first use, then kept.

    Raises ``ConfigurationError`` (not kept) when the environment or ``.env`` is invalid.
    """
    if SETTINGS not in st.session_state:
        st.session_state[SETTINGS] = load_settings()
    settings: Settings = st.session_state[SETTINGS]
    return settings


def _close(services: Services) -> None:
    services.close()


@st.cache_resource(show_spinner=False, max_entries=1, on_release=_close)
def _services(settings: Settings) -> Services:
    return Services(settings)


def shared_services() -> Services:
    """The process's ``Services`` (or the one a test gave the session), its run
    executor not necessarily started. Raises ``ConfigurationError`` like
    ``session_settings``."""
    given = st.session_state.get(SERVICES)
    if given is not None:
        services: Services = given
        return services
    return _services(session_settings())


def process_services() -> Services:
    """The process's ``Services`` with its run executor started (once): what a page
    that starts or follows runs uses.

    Raises ``KeiriAgentError`` when the run service cannot be built (e.g. the database
    is out of reach): nothing is kept, the next call tries again.
    """
    services = shared_services()
    with _starting:
        if services not in _started:
            services.process_runs.start()
            _started.add(services)
    return services
