"""The widgets of a ``ui.interactive_input`` request: one form of fields (seed 002 §3).

Used by the 実行 page (a waiting node's form) and the 設計 page (the Design chat).
``input_form(key, request)`` renders the request's message, its problems and its
fields; the values live in ``st.session_state[key]`` (a dict: field id → value),
initialised from the fields and merged when the fields change, so nothing typed is
lost on a rerun; the widgets' own keys are ``{key}::{field id}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from keiri_agent.blocks.requirements import initial_values, merge_values
from keiri_agent.ui.components import accepted_types_caption


def _field(key: str, values: dict[str, Any], field: Mapping[str, Any]) -> None:
    """One widget; its current value is written back into ``values``."""
    field_id = str(field["id"])
    kind = field.get("type")
    label = str(field.get("label") or field_id) + (" *" if field.get("required") else "")
    widget = f"{key}::{field_id}"
    help_text = field.get("description")
    if kind in ("file", "files"):
        accept = [ext.strip().lstrip(".") for ext in str(field.get("accept") or "").split(",")]
        types = [ext for ext in accept if ext]
        if types:  # the drop zone does not list them (components.app_chrome)
            formats = "受け付ける形式: " + "、".join(f".{ext}" for ext in types)
            help_text = f"{help_text}\n\n{formats}" if help_text else formats
        uploaded = st.file_uploader(
            label,
            type=types or None,
            accept_multiple_files=kind == "files",
            key=widget,
            help=help_text,
        )
        accepted_types_caption([ext for ext in accept if ext])
        if isinstance(uploaded, list) and uploaded:
            values[field_id] = [{"name": f.name, "data": f.getvalue()} for f in uploaded]
        elif uploaded is not None and not isinstance(uploaded, list):
            values[field_id] = {"name": uploaded.name, "data": uploaded.getvalue()}
        current = values.get(field_id)
        if current:
            files = current if isinstance(current, list) else [current]
            names = [str(f.get("name")) for f in files if isinstance(f, Mapping)]
            st.caption("保持中のファイル: " + ", ".join(names))
        return
    if widget not in st.session_state:
        st.session_state[widget] = values.get(field_id)
    if kind == "boolean":
        values[field_id] = st.checkbox(label, key=widget, help=help_text)
    elif kind == "number":
        # An integer value (a yen amount, a count) gets an integer widget: without step=1
        # Streamlit makes every number a float shown as "30000.00".
        current = st.session_state[widget]
        whole = isinstance(current, int) and not isinstance(current, bool)
        number = st.number_input(label, key=widget, help=help_text, step=1 if whole else None)
        # Streamlit gives floats; 120000.0 would print as "120000.0" in documents.
        values[field_id] = (
            int(number) if isinstance(number, float) and number.is_integer() else number
        )
    elif kind == "select":
        options = list(field.get("options") or [])
        values[field_id] = st.selectbox(label, options, key=widget, help=help_text)
    elif kind == "chat":
        values[field_id] = st.text_area(label, key=widget, help=help_text)
    else:  # text, folder (a path)
        values[field_id] = st.text_input(label, key=widget, help=help_text)


def _shape(fields: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    return [(str(field["id"]), field.get("type")) for field in fields]


def _sync_fields(key: str, fields: list[Mapping[str, Any]]) -> None:
    """Initialise the form's values, or merge them when the fields changed (seed §3).

    The fields last rendered are kept under ``{key}::fields``. When the request's fields
    differ (the Plan was edited), values of fields still declared with the same type
    are kept, the others dropped with their widgets, and the differences are shown
    (``{key}::warnings``) until the form is sent or reset.
    """
    known = st.session_state.get(f"{key}::fields")
    if key not in st.session_state:
        st.session_state[key] = initial_values(fields)
    elif known is not None and _shape(known) != _shape(fields):
        values, warnings = merge_values(st.session_state[key], known, fields)
        declared = dict(_shape(fields))
        for field_id, kind in _shape(known):  # removed, or its type changed: a new widget
            if field_id not in declared or declared[field_id] != kind:
                st.session_state.pop(f"{key}::{field_id}", None)
        st.session_state[key] = values
        st.session_state[f"{key}::warnings"] = [w["message"] for w in warnings]
    st.session_state[f"{key}::fields"] = [dict(field) for field in fields]


def _problems(request: Mapping[str, Any], fields: Sequence[Mapping[str, Any]]) -> None:
    """Why the last answers were refused: each field's error, then what is missing."""
    labels = {str(f["id"]): str(f.get("label") or f["id"]) for f in fields}
    errors = request.get("errors") or {}
    items = errors.items() if isinstance(errors, Mapping) else [(None, e) for e in errors]
    for field_id, problem in items:
        text = str(problem.get("message", problem)) if isinstance(problem, Mapping) else problem
        st.warning(f"{labels.get(str(field_id), field_id)}: {text}" if field_id else str(text))
    if request.get("missing"):
        missing = [labels.get(str(m), str(m)) for m in request["missing"]]
        st.warning("未入力の項目があります: " + ", ".join(missing))


def input_form(key: str, request: Mapping[str, Any]) -> None:
    fields = [field for field in request.get("fields") or [] if isinstance(field, Mapping)]
    _sync_fields(key, fields)
    values: dict[str, Any] = st.session_state[key]
    if request.get("message"):
        st.markdown(str(request["message"]))
    for warning in st.session_state.get(f"{key}::warnings") or []:
        st.warning(f"入力項目が変わりました: {warning}")
    _problems(request, fields)
    for field in fields:
        _field(key, values, field)
    if st.button("リセット", key=f"{key}::reset"):
        for field in fields:
            st.session_state.pop(f"{key}::{field['id']}", None)
        st.session_state[key] = initial_values(fields)
        st.session_state.pop(f"{key}::warnings", None)
        st.rerun()
