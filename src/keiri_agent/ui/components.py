"""Widgets shared by the pages: the provider banner and artifact rendering."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from keiri_agent.agents.analysis.artifacts import Artifact
from keiri_agent.config import Settings


def provider_banner(settings: Settings) -> None:
    """Say plainly in the sidebar whether an LLM is used or the offline rules decide."""
    if settings.is_offline:
        st.sidebar.warning(
            "オフラインモード: LLM が設定されていないため、ルールベースで判断します。"
            "OPENAI_API_KEY などを設定すると LLM を使います。",
            icon="⚠️",
        )
    else:
        st.sidebar.success(f"LLM: {settings.describe()}")


def render_artifact(artifact: Artifact) -> None:
    """Show a table, figure or text artifact inline."""
    payload = artifact["payload"]
    st.markdown(f"**{artifact['title']}**")
    if artifact["description"]:
        st.caption(artifact["description"])
    if artifact["kind"] == "table" and isinstance(payload, dict):
        frame = pd.DataFrame.from_records(
            payload.get("records", []), columns=payload.get("columns")
        )
        st.dataframe(frame, hide_index=True, width="stretch")
        total = payload.get("total_rows", len(frame))
        if total > len(frame):
            st.caption(f"全 {total} 行中 {len(frame)} 行を表示")
    elif artifact["kind"] == "figure" and isinstance(payload, bytes):
        st.image(payload)
    else:
        st.info(str(payload))
