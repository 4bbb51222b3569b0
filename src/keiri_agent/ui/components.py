"""Widgets shared by the pages: the provider banner, errors, artifact rendering, kept widget
values.

pandas, and the analysis formatting built on it, are imported by the functions that
draw tables: the first screen draws none, and loads neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import streamlit as st

from keiri_agent.config import OFFLINE_NOTICE, Settings
from keiri_agent.services.jsonforms import json_value

if TYPE_CHECKING:
    import pandas as pd

    from keiri_agent.agents.analysis.artifacts import Artifact

T = TypeVar("T")
KEEP_PREFIX = "_keep."
_UNSET: Any = object()
UPLOAD_BUTTON = "ファイルを選択"


def app_chrome() -> None:
    """Once per run (``app.py``): the file uploaders' drop zones in Japanese.

    Streamlit has no option for the uploader's own texts ("Upload", "200MB per file •
    CSV"), so a style sheet hides them and puts Japanese ones in their place; the
    accepted formats are in each uploader's label or help. The English texts are
    not displayed (so screen readers skip them too) and the Japanese ones are generated
    content of their containers (so screen readers read them). (The developer toolbar is
    hidden by ``keiri-agent ui``'s ``--client.toolbarMode``: set while the app runs,
    Streamlit ignores it.)
    """
    limit = st.get_option("server.maxUploadSize")
    dropzone = '[data-testid="stFileUploaderDropzone"]'
    instructions = '[data-testid="stFileUploaderDropzoneInstructions"]'
    st.html(
        f"""<style>
{dropzone} button [data-testid="stMarkdownContainer"] {{ display: none; }}
{dropzone} button::after {{ content: "{UPLOAD_BUTTON}"; font-size: 0.875rem; }}
{instructions} span {{ display: none; }}
{instructions}::after {{
  content: "ここへのドロップも可（{limit}MB まで）"; font-size: 0.75rem; white-space: normal; }}
</style>"""
    )


def accepted_types_caption(types: list[str] | None, *, sidebar: bool = False) -> None:
    """Say under an uploader, as page text, which file types it takes (Streamlit shows
    its own rejection only as an English tooltip)."""
    if not types:
        return
    shown = "、".join(f".{ext}" for ext in types)
    target = st.sidebar if sidebar else st
    target.caption(f"対応形式: {shown}（これ以外の形式のファイルは選べません）")


OFFLINE_BANNER = OFFLINE_NOTICE


def provider_banner(settings: Settings, *, offline: bool | None = None) -> None:
    """Say plainly in the sidebar whether an LLM is used or the offline rules decide,
    and how to configure an LLM when none is (``offline`` overrides the settings' own
    answer, e.g. for a page given a chat model directly)."""
    if settings.llm.is_offline if offline is None else offline:
        st.sidebar.warning(OFFLINE_BANNER, icon="⚠️")
    else:
        st.sidebar.success(f"LLM: {settings.describe()}")


def show_error(error: Mapping[str, Any]) -> None:
    """A reported error (``KeiriAgentError.to_dict()``): its message, the details in an
    expander when there are any, and the hint (what the user can do)."""
    st.error(f"❌ {error.get('message', '')}")
    details = error.get("details") or {}
    if details:
        with st.expander("エラー詳細"):
            st.json(json_value(details, preview=True))
    if error.get("hint"):
        st.info(f"💡 {error['hint']}")


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """A table of ``records`` that Streamlit can show as it is: a column whose values are
    of several kinds (``1200`` and ``"不明"``, or lists) is shown as text, so Streamlit's
    Arrow conversion does not fail and log a traceback before fixing it itself."""
    import pandas as pd

    frame = pd.DataFrame.from_records(records)
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object:
            continue
        kinds = {type(value) for value in values if value is not None and value == value}
        if len(kinds) > 1 or kinds & {dict, list, tuple}:
            frame[column] = values.map(lambda v: v if v is None or v != v else str(v))
    return frame


def render_artifact(artifact: Artifact) -> None:
    """Show a table, figure or text artifact inline."""
    payload = artifact["payload"]
    st.markdown(f"**{artifact['title']}**")
    if artifact["description"]:
        st.caption(artifact["description"])
    if artifact["kind"] == "table" and isinstance(payload, dict):
        from keiri_agent.agents.analysis.formatting import display_frame

        frame = display_frame(payload)  # as people read it: 売上（合計）, 1,234, 37.7 %
        st.dataframe(frame, hide_index=True, width="stretch")
        total = payload.get("total_rows", len(frame))
        if total > len(frame):
            st.caption(f"全 {total} 行中 {len(frame)} 行を表示")
    elif artifact["kind"] == "figure" and isinstance(payload, bytes):
        st.image(payload)
    else:
        st.info(str(payload))


def download_button(
    label: str, produce: Callable[[], bytes], *, file_name: str, mime: str, key: str
) -> None:
    """A download button whose file is produced when it is clicked (``produce()``).

    Given bytes, Streamlit stores them as a media file on every run and the browser
    fetches each new media URL once to check it, without reading the body: a large
    file (a report ZIP, a workbook) then keeps one of the browser's six connections to
    the app busy, and after a few answers every further request (page scripts, other
    downloads, a reload) waits forever. A deferred file is not stored or checked until
    the click, and nothing is rebuilt on reruns.
    """
    st.download_button(label, produce, file_name=file_name, mime=mime, key=key)


def persistent(
    widget: Callable[..., T],
    *args: Any,
    key: str,
    default: Any = _UNSET,
    valid: Callable[[Any], bool] | None = None,
    **kwargs: Any,
) -> T:
    """``widget(*args, key=key, **kwargs)`` whose value survives a visit to another page.

    Streamlit deletes a widget's state when a run does not render it, so a page switch
    loses what the user typed or picked ("Working with widgets in multipage apps").
    The value is therefore copied after each run into the plain Session State key
    ``_keep.{key}``, which Streamlit never deletes, and written back into ``key``
    before the widget is created when Streamlit dropped it. ``default`` is the value
    the first time (pass it here, not as ``value=``: a widget given both a default and
    a Session State value is reported by Streamlit); ``valid`` refuses a kept value
    that no longer fits (e.g. an option that went away), ``default`` is used then.
    A value already in ``st.session_state[key]`` (set by the page) wins over both.
    """
    copy = KEEP_PREFIX + key
    if key not in st.session_state:
        kept = st.session_state.get(copy, _UNSET)
        if kept is not _UNSET and (valid is None or valid(kept)):
            st.session_state[key] = kept
        elif default is not _UNSET:
            st.session_state[key] = default
    value = widget(*args, key=key, **kwargs)
    st.session_state[copy] = st.session_state[key]
    return value
