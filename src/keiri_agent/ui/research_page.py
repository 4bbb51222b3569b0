"""リサーチ page: a research question → live progress per query → a cited report and its notes.

The page calls the process's ``ResearchService`` and ``ResearchRuns``
(``session.process_services()``). What it keeps in ``st.session_state`` (every key
under ``research.``):

- ``research.index``: the outcome of loading the sample corpus (counts or an error);
  loading it also chooses it (the sample is searched only when chosen, and then alone);
- ``research.running``: the question being researched and the id of its run;
- ``research.last``: the last run: ``question``, ``run_id``, ``events``
  (``keiri_agent.events.Event``) and ``result`` (the run's result,
  ``jsonforms.research_result_json``) or ``error`` (the error dict: ``code``,
  ``message``, ``hint``, ``details``);
- ``research.question``, ``research.kbs``, ``research.session``: the question box, the
  knowledge bases and the session selector, kept across page switches by
  ``components.persistent``; ``research.select`` is a session to select on the next run
  (the one a run just used, or "new" after a deletion): a widget's value cannot be
  changed once it is drawn in a run;
- ``research.confirm_delete``: the checkbox that enables 削除 for the shown session;
- ``research.flash``: a message shown once on the next run (e.g. after a deletion).

Running: a question becomes a research run (``ResearchRuns.start``: a run of kind
``research``), executed by the run service's workers (this process's threads, or the
job queue's). The script thread follows the run's stored events (``ui.run_follow``) and
writes one progress line per event into an ``st.status``, so Streamlit elements are
created only from the script thread. Only the run id lives in ``research.running``: a
rerun during the run replays the events stored so far and keeps following the same
run. The report is rendered from the run's result; a failed run shows its stored error.

The report is the model's Markdown: it is rendered by ``st.markdown`` with HTML off.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from keiri_agent.agents.research.agent import progress_line
from keiri_agent.agents.research.models import DocSnippet, ResearchNote
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.services.container import Services
from keiri_agent.services.research import (
    EXAMPLE_QUESTION,
    SAMPLE_KB,
    SAMPLE_NOTICE,
    ResearchService,
)
from keiri_agent.ui.components import persistent, provider_banner
from keiri_agent.ui.people import starter_login
from keiri_agent.ui.run_follow import RUN_EVENT_LABELS, follow_run, run_problem
from keiri_agent.ui.session import process_services

logger = logging.getLogger(__name__)

INDEX = "research.index"
RUNNING = "research.running"
LAST = "research.last"
QUESTION = "research.question"
KBS = "research.kbs"
SESSION = "research.session"
SELECT = "research.select"
FLASH = "research.flash"
CONFIRM = "research.confirm_delete"
NEW_SESSION = "（新しいセッション）"
EMPTY_QUESTION = "質問が空です。調べたい内容を文章で入力してください。"


def _show_error(error: Mapping[str, Any], *, where: Any = st) -> None:
    where.error(f"[{error.get('code', '')}] {error.get('message', '')}")
    if error.get("hint"):
        where.caption(f"ヒント: {error['hint']}")


# --------------------------------------------------------------------------- sources of a run


def _register_sample(service: ResearchService) -> None:
    with st.spinner("サンプル資料を読み込み中…"):
        try:
            report = service.index_sample()
        except KeiriAgentError as error:
            st.session_state[INDEX] = {"error": error.to_dict()}
            return
    data = report.to_dict()
    st.session_state[INDEX] = {
        "text": (
            "サンプル資料を読み込み、検索するナレッジベースに選びました: "
            f"追加 {len(data['added'])}、更新 {len(data['updated'])}、"
            f"変更なし {len(data['unchanged'])}、失敗 {len(data['failed'])}"
        ),
        "failed": data["failed"],
    }
    st.session_state[KBS] = [SAMPLE_KB]  # asked for: chosen (the multiselect comes next)


def _knowledge_bases(service: ResearchService) -> list[str]:
    """The knowledge-base multiselect, and the button that loads the sample corpus."""
    slot = st.empty()
    if not service.knowledge_bases():
        slot.info(
            "ナレッジベースがまだありません。ヘルプデスクのページで資料を登録するか、"
            "「サンプル資料を読み込む」で、架空の会社の経理規程・経理部通知・請求書様式ガイドを"
            "試せます。"
        )
    if st.button("サンプル資料を読み込む", key="research.sample"):
        _register_sample(service)
        slot.empty()
    outcome = st.session_state.get(INDEX)
    if outcome:
        if outcome.get("error"):
            _show_error(outcome["error"])
        else:
            st.success(outcome["text"])
            for failure in outcome["failed"]:
                _show_error(failure)
    choices = {choice.name: choice.label for choice in service.knowledge_bases()}
    if not choices:
        return []
    chosen = persistent(
        st.multiselect,
        "検索するナレッジベース（未選択なら、サンプル資料を除くすべて）",
        list(choices),
        key=KBS,
        default=[],
        format_func=lambda name: choices.get(name, name),
        valid=lambda kept: all(name in choices for name in kept),
    )
    if SAMPLE_KB in chosen:
        st.info(SAMPLE_NOTICE)
    return list(chosen)


def _session_selector(service: ResearchService) -> str | None:
    """The session to continue (None: a new one)."""
    options = [NEW_SESSION] + [session_id for session_id, _, _ in service.sessions()]
    pending = st.session_state.pop(SELECT, None)
    if pending is not None:
        st.session_state[SESSION] = pending if pending in options else NEW_SESSION
    chosen = persistent(
        st.selectbox,
        "セッション（既存のセッションを選ぶと、そのノートを引き継いで調査します）",
        options,
        key=SESSION,
        default=NEW_SESSION,
        valid=lambda kept: kept in options,
    )
    return None if chosen == NEW_SESSION else str(chosen)


# --------------------------------------------------------------------------- running


def _start(
    services: Services, question: str, kb_names: Sequence[str], session_id: str | None
) -> None:
    """Start the research as a run; its id is kept in ``RUNNING``. A question that
    cannot be researched (too long, an unknown knowledge base) is said at once."""
    st.session_state.pop(LAST, None)
    try:
        record = services.research_runs.start(
            question,
            session_id=session_id,
            kb_names=kb_names,
            owner=starter_login(services, "run"),
        )
    except KeiriAgentError as error:
        st.session_state[LAST] = {
            "question": question,
            "run_id": None,
            "events": [],
            "result": None,
            "error": error.to_dict(),
        }
        return
    st.session_state[RUNNING] = {"question": record.question, "run_id": record.run_id}


def _write_progress(status: Any, event: Event) -> None:
    line = progress_line(event) or RUN_EVENT_LABELS.get(event.kind)
    if line is None:
        return
    if event.kind == "error":
        status.warning(line)
    else:
        status.markdown(f"- {line}")


def _drain(services: Services, running: Mapping[str, Any]) -> None:
    """Follow the run's events into a status box until it has ended; keep the outcome
    in ``LAST``."""
    events: list[Event] = []
    label = "調査中…"
    with st.status(label, expanded=True) as status:

        def show(event: Event) -> None:
            events.append(event)
            _write_progress(status, event)

        def waited(seconds: float) -> None:
            status.update(label=f"{label}（{int(seconds)} 秒）")

        run = follow_run(services.runs, running["run_id"], show=show, tick=waited)
        problem = run_problem(run)
        status.update(
            label="エラー" if problem else "完了",
            state="error" if problem else "complete",
            expanded=False,
        )
    st.session_state.pop(RUNNING, None)
    result = None if problem else dict(run.result or {})
    st.session_state[LAST] = {
        "question": running["question"],
        "run_id": run.run_id,
        "events": events,
        "result": result,
        "error": problem,
    }
    if result is not None:
        st.session_state[SELECT] = result.get("session_id")


def _replay(events: Sequence[Event], failed: bool) -> None:
    with st.status("調査の過程", state="error" if failed else "complete", expanded=False) as status:
        for event in events:
            _write_progress(status, event)


# --------------------------------------------------------------------------- the report


def _location(snippet: DocSnippet) -> str:
    parts = []
    if snippet.document:
        parts.append(f"文書: {snippet.document}")
    if snippet.page is not None:
        parts.append(f"ページ: {snippet.page}")
    if snippet.heading:
        parts.append(f"見出し: {snippet.heading}")
    if snippet.origin:
        parts.append(f"検索元: {snippet.origin}")
    return " / ".join(parts) or snippet.title


def _show_source(number: int, snippet: DocSnippet) -> None:
    with st.expander(f"[{number}] {snippet.label()}"):
        st.caption(_location(snippet))
        if snippet.url and snippet.url.startswith(("https://", "http://")):
            st.markdown(f"URL: [{snippet.url}]({snippet.url})")
        st.text(snippet.text)


def _show_result(result: Mapping[str, Any]) -> None:
    """The report of a run's result (``jsonforms.research_result_json``)."""
    st.subheader("レポート")
    if result.get("offline"):
        st.caption("オフライン: 検索した資料の文を抜き出して組み立てたレポートです。")
    st.markdown(str(result.get("report_md") or ""))
    sources = list(result.get("sources") or [])
    if sources:
        st.markdown("**出典**（クリックすると引用した箇所を表示します）")
        for number, source in enumerate(sources, start=1):
            _show_source(int(source.get("number") or number), DocSnippet.from_dict(source))
    limitations = list(result.get("limitations") or [])
    if limitations:
        st.warning("この調査の制約:\n\n" + "\n".join(f"- {item}" for item in limitations))


# --------------------------------------------------------------------------- notes


def _show_note(note: ResearchNote) -> None:
    with st.expander(f"ステップ {note.step_no}: {note.query}"):
        st.markdown(note.summary_md)
        if note.sources:
            st.caption("出典: " + " / ".join(snippet.label() for snippet in note.sources))


def _notes_panel(service: ResearchService, session_id: str) -> None:
    st.subheader("セッションのノート")
    notes = service.notes(session_id)
    st.caption(f"セッション {session_id}: ノート {len(notes)} 件")
    for note in notes:
        _show_note(note)
    if not notes:
        return
    confirmed = st.checkbox("このセッションのノートをすべて削除します", key=CONFIRM)
    if st.button("削除", key="research.delete", disabled=not confirmed):
        deleted = service.delete_session(session_id)
        st.session_state[FLASH] = f"セッション {session_id} のノート {deleted} 件を削除しました。"
        st.session_state[SELECT] = NEW_SESSION
        st.session_state.pop(CONFIRM, None)
        last = st.session_state.get(LAST)
        result = (last or {}).get("result")
        if result is not None and result.get("session_id") == session_id:
            st.session_state.pop(LAST, None)
        st.rerun()


# --------------------------------------------------------------------------- the page


def _body(services: Services) -> None:
    service = services.research
    settings = service.settings
    provider_banner(settings)
    st.caption(
        "質問を最大 3 つの検索クエリに分け、社内のナレッジベースなどを並行して検索・要約し、"
        "出典つきのレポートにまとめます。各ステップはノートとして保存されます。"
    )
    if settings.llm.is_offline:
        st.info(
            "オフラインモード: LLM を使わず、質問のキーワードで検索し、資料の文を抜き出して"
            "レポートを組み立てます（抽出型）。LLM を設定すると（設定のしかたはサイドバーの"
            "案内を参照）LLM が"
            "計画・要約・執筆します。",
            icon="⚠️",
        )
    flash = st.session_state.pop(FLASH, None)
    if flash:
        st.success(flash)

    kb_names = _knowledge_bases(service)
    session_id = _session_selector(service)
    question = persistent(
        st.text_area, "質問", key=QUESTION, default=EXAMPLE_QUESTION, placeholder=EXAMPLE_QUESTION
    )
    running = st.session_state.get(RUNNING)
    asked = st.button("調査する", type="primary", key="research.ask", disabled=bool(running))
    if asked and not running:
        text = str(question or "").strip()
        if not text:
            st.error(EMPTY_QUESTION)
        else:
            _start(services, text, kb_names, session_id)
            running = st.session_state.get(RUNNING)
    live = bool(running)
    if running:
        st.markdown(f"**質問**: {running['question']}")
        try:
            _drain(services, running)
        except KeiriAgentError:  # the run is gone (deleted meanwhile): said below
            st.session_state.pop(RUNNING, None)
            raise
    last = st.session_state.get(LAST)
    if last:
        if not live:
            st.markdown(f"**質問**: {last['question']}")
            if last["events"]:
                _replay(last["events"], failed=last.get("error") is not None)
        if last.get("error"):
            _show_error(last["error"])
        elif last.get("result") is not None:
            _show_result(last["result"])
    shown = session_id
    if last and last.get("result") is not None and (live or shown is None):
        shown = last["result"].get("session_id") or shown
    if shown:
        _notes_panel(service, shown)


def render_research_page() -> None:
    """The page body (called by ``st.navigation``)."""
    st.title("リサーチ")
    try:
        _body(process_services())
    except KeiriAgentError as error:  # e.g. an unreadable database or a missing key
        _show_error(error.to_dict())


if __name__ == "__main__":  # run as the リサーチ page script by st.navigation
    render_research_page()
