"""The Streamlit app (``keiri-agent ui``): one page per part of the product."""

from __future__ import annotations

import streamlit as st

from keiri_agent.errors import ConfigurationError
from keiri_agent.logs import configure_logging
from keiri_agent.ui.analysis_page import render_analysis_page
from keiri_agent.ui.components import app_chrome
from keiri_agent.ui.recent import recent_panel
from keiri_agent.ui.session import session_settings


def main() -> None:
    """Set up the page and the navigation; later parts add their pages here.

    The session's ``Settings`` are built here once (``session.session_settings``) and
    shared by every page; invalid settings (environment or ``.env``) stop the app here
    with the message and its hint. Below each page's own sidebar: the side panel of
    recent conversations and runs (``ui.recent``).
    """
    st.set_page_config(page_title="keiri-agent", page_icon="📊", layout="wide")
    app_chrome()
    try:
        settings = session_settings()
    except ConfigurationError as error:
        hint = f"\n\nヒント: {error.hint}" if error.hint else ""
        st.error(f"設定エラー: {error.message}{hint}")
        st.stop()
    configure_logging(settings.logs.log_level, pii_kinds=settings.logs.pii_filter)
    analysis = st.Page(render_analysis_page, title="データ分析", icon="📊", url_path="analysis")
    run = st.Page("run_page.py", title="実行", icon="▶️", url_path="run")
    pages = [
        analysis,
        st.Page("helpdesk_page.py", title="ヘルプデスク", icon="💬", url_path="helpdesk"),
        st.Page("research_page.py", title="リサーチ", icon="🔎", url_path="research"),
        st.Page("design_page.py", title="設計", icon="🛠️", url_path="design"),
        run,
    ]
    st.navigation(pages).run()
    recent_panel(analysis, run)


main()
