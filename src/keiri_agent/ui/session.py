"""What one browser session shares across the pages: its ``Settings``, built once.

``app.py`` builds them on the session's first run (and stops the app with the message
and hint when they are invalid); every page and component reads them from here
instead of building its own ``Settings()``.
"""

from __future__ import annotations

import streamlit as st

from keiri_agent.config import Settings, load_settings

SETTINGS = "session.settings"


def session_settings() -> Settings:
    """This session's settings; built by ``load_settings`` on first use, then kept.

    Raises ``ConfigurationError`` (not kept) when the environment or ``.env`` is invalid.
    """
    if SETTINGS not in st.session_state:
        st.session_state[SETTINGS] = load_settings()
    settings: Settings = st.session_state[SETTINGS]
    return settings
