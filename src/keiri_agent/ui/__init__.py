"""The Streamlit app (``keiri-agent ui``): ``app.py`` is the script Streamlit runs.

Nothing is imported here: ``keiri-agent ui`` reads ``TOOLBAR_MODE`` before it starts
Streamlit, without loading Streamlit or pandas."""

TOOLBAR_MODE = "minimal"
"""Streamlit's ``client.toolbarMode`` (``keiri-agent ui``): no developer toolbar (Deploy, ⋮)."""
