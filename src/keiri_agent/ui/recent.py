"""The side panel on every page: recent conversations and runs, reopened by a click.

Conversations come from the analysis checkpointer (``AnalysisAgent.recent_threads``:
title = the first request, the file name), runs from the workspace's runs folder
(``services.plan_runs.recent_runs``: the Plan, its state). Times are local time. A
click opens the データ分析 page with ``?thread=…`` or the 実行 page with
``?plan=…&run=…``; those pages restore what the URL names (a reload does the same).
A part that cannot be read (e.g. a provider configured without its key) is left out
of the panel: the page itself shows that error. The panel is drawn after the page, so
the modules that read the runs (the Plan engine's) are imported when it draws them,
not when the app script imports this module before its first screen.
"""

from __future__ import annotations

import logging

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from keiri_agent.errors import KeiriAgentError
from keiri_agent.ui.analysis_page import THREAD_PARAM, analysis_agent
from keiri_agent.ui.local_time import local_time

log = logging.getLogger(__name__)

RECENT_LIMIT = 8
TITLE_CHARS = 28


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def _conversations(analysis: StreamlitPage) -> None:
    try:
        threads = analysis_agent().recent_threads(RECENT_LIMIT)
    except KeiriAgentError as error:
        log.warning("recent conversations: %s", error)
        return
    st.markdown("**最近の会話**")
    if not threads:
        st.caption("まだ会話はありません。")
    current = st.session_state.get("analysis.thread_id")
    for thread in threads:
        label = f"{_short(thread.title)}（{local_time(thread.updated_at)}）"
        help_text = f"ファイル: {thread.dataset_name}" if thread.dataset_name else None
        if st.button(
            label,
            key=f"recent.thread.{thread.thread_id}",
            help=help_text,
            disabled=thread.thread_id == current,
        ):
            st.switch_page(analysis, query_params={THREAD_PARAM: thread.thread_id})


def _runs(run: StreamlitPage) -> None:
    from keiri_agent.services.plan_runs import recent_runs
    from keiri_agent.ui.run_page import (
        PLAN_PARAM,
        RUN_PARAM,
        STATUS_LABELS,
        plan_files,
        run_engine,
    )

    try:
        engine = run_engine()
        files = plan_files(engine)
        runs = recent_runs(engine.runner.runs_dir, set(files), RECENT_LIMIT)
    except KeiriAgentError as error:
        log.warning("recent runs: %s", error)
        return
    st.markdown("**最近の実行**")
    if not runs:
        st.caption("まだ実行はありません。")
    for summary in runs:
        status = STATUS_LABELS.get(summary.status, summary.status)
        label = f"{summary.plan_id}: {status}（{local_time(summary.updated_at)}）"
        if st.button(label, key=f"recent.run.{summary.run_id}", help=summary.run_id):
            st.switch_page(
                run,
                query_params={PLAN_PARAM: files[summary.plan_id], RUN_PARAM: summary.run_id},
            )


def recent_panel(analysis: StreamlitPage, run: StreamlitPage) -> None:
    """The side panel (``analysis`` and ``run``: the pages it opens)."""
    with st.sidebar:
        st.divider()
        _conversations(analysis)
        _runs(run)
