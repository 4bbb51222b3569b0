"""ヘルプデスク page: index manuals and FAQs, ask a question, watch the agent work, read the answer.

The page calls the process's ``HelpDesk`` (``session.process_services().helpdesk()``,
shared by the sessions and the runs that answer) and its run service. What it keeps in
``st.session_state``:

- ``helpdesk.index``: the last indexing's reports (``IndexReport.to_dict()`` per collection);
- ``helpdesk.running``: the question being answered and the id of its run;
- ``helpdesk.last``: the last answered question: ``question``, ``run_id``, ``events``
  (``keiri_agent.events.Event``), and ``result`` (``AgentResult``) or ``error`` (the
  error dict: ``code``, ``message``, ``hint``, ``details``);
- ``helpdesk.question``: the question box, kept across page switches by
  ``components.persistent`` (uploads cannot be restored: Streamlit does not allow
  setting a file uploader's value).

Asking: the question is checked (empty, too long, nothing indexed yet: said at once)
and becomes a run of kind ``helpdesk`` (``runs.helpdesk_kind``), executed by the run
service's workers (this process's threads, or the job queue's). The script thread
follows the run's stored events (``ui.run_follow``) and renders each into the
per-subtask containers of an ``st.status``, so Streamlit elements are created only from
the script thread. Only the run id lives in ``helpdesk.running``: when a rerun
interrupts the drain (the user clicks something), the next run replays the events
stored so far and keeps following the same run, so no answer is lost. The run id is
also in the URL (``?ask=<run id>``): a reload (a new session) follows the same run,
or shows its answer when it has ended (kept in the history once). The answer is
the run's result (``jsonforms.helpdesk_answer_json``, read back as an ``AgentResult``);
a failed run shows its stored error. Indexing (samples, uploads) runs in the script
thread through ``services.knowledge``; an error shown from before indexing (e.g. an
empty knowledge base) is dropped once indexing succeeds.

Every answer is kept in the workspace (``services.answer_history``) and listed under
「これまでの回答」, newest first, each reopened in its expander. Times are local time.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from keiri_agent.agents.helpdesk.desk import (
    EXAMPLE_QUESTION,
    MANUAL,
    QA,
    RETRIEVER_LABELS,
    HelpDesk,
)
from keiri_agent.agents.helpdesk.models import AgentResult
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.runs import helpdesk_kind
from keiri_agent.runs.records import run_not_found
from keiri_agent.search.chunking import FAQ_SUFFIXES
from keiri_agent.search.knowledge_base import IndexReport
from keiri_agent.services.answer_history import AnswerHistory
from keiri_agent.services.container import Services
from keiri_agent.services.knowledge import index_knowledge
from keiri_agent.ui.components import accepted_types_caption, persistent, provider_banner
from keiri_agent.ui.local_time import local_time
from keiri_agent.ui.people import starter_login
from keiri_agent.ui.run_follow import RUN_EVENT_LABELS, follow_run, run_problem
from keiri_agent.ui.session import process_services
from keiri_agent.workspace import Workspace

KB = "helpdesk"  # the knowledge base the page indexes and asks (the HelpDesk's default)
ASK_PARAM = "ask"  # the URL's run id of the last ask (restored after a reload)
INDEX = "helpdesk.index"
RUNNING = "helpdesk.running"
LAST = "helpdesk.last"
QUESTION = "helpdesk.question"
MANUAL_TYPES = ["pdf", "md", "markdown", "docx", "txt", "xlsx"]
FAQ_TYPES = [suffix.lstrip(".") for suffix in FAQ_SUFFIXES]
COLLECTION_LABELS = {MANUAL: "マニュアル", QA: "FAQ"}
TOP_PASSAGES = 3
HISTORY_LIMIT = 20
log = logging.getLogger(__name__)
EMPTY_HINT = (
    "このページの「ナレッジベース」で「サンプル（XYZシステム）を索引」を押すか、"
    "マニュアルや FAQ をアップロードして索引してください。"
)


def _show_error(error: Mapping[str, Any], *, where: Any = st) -> None:
    where.error(f"[{error.get('code', '')}] {error.get('message', '')}")
    if error.get("hint"):
        where.caption(f"ヒント: {error['hint']}")
    if error.get("code") == "EMPTY_KNOWLEDGE_BASE":
        where.info(EMPTY_HINT)


# --------------------------------------------------------------------------- knowledge base


def _report_text(report: Mapping[str, Any]) -> str:
    label = COLLECTION_LABELS.get(str(report["collection"]), str(report["collection"]))
    return (
        f"{label}（{report['collection']}）: 追加 {len(report['added'])}、"
        f"更新 {len(report['updated'])}、変更なし {len(report['unchanged'])}、"
        f"失敗 {len(report['failed'])}（書き込んだチャンク {report['chunks']}）"
    )


def _run_index(desk: HelpDesk, action: str, call: Any) -> None:
    """Index with a progress bar; keep the reports (or the error) for the panel."""
    bar = st.progress(0.0, text=f"{action}…")

    def on_progress(done: int, total: int, document: str) -> None:
        bar.progress(min(done / max(total, 1), 1.0), text=f"{action}: {done}/{total} {document}")

    try:
        reports: dict[str, IndexReport] = call(on_progress)
    except KeiriAgentError as error:
        st.session_state[INDEX] = {"error": error.to_dict()}
    else:
        st.session_state[INDEX] = {"reports": [report.to_dict() for report in reports.values()]}
        last = st.session_state.get(LAST)
        if last and last.get("error"):  # said before indexing: no longer true
            st.session_state.pop(LAST, None)
    bar.empty()


def _index_uploads(desk: HelpDesk, manuals: Sequence[Any], faqs: Sequence[Any]) -> None:
    """Index the uploaded files (their names and bytes) with ``services.knowledge``."""
    uploads = [(str(upload.name), upload.getvalue()) for upload in manuals]
    qa_uploads = [(str(upload.name), upload.getvalue()) for upload in faqs]
    _run_index(
        desk,
        "アップロードを索引",
        lambda on_progress: index_knowledge(
            desk, uploads=uploads, qa_uploads=qa_uploads, on_progress=on_progress
        ),
    )


def _index_outcome() -> None:
    outcome = st.session_state.get(INDEX)
    if not outcome:
        return
    if outcome.get("error"):
        _show_error(outcome["error"])
        return
    for report in outcome["reports"]:
        if report["failed"]:
            st.warning(_report_text(report))
        else:
            st.success(_report_text(report))
        for failure in report["failed"]:
            st.error(f"{failure['document']}: [{failure['code']}] {failure['message']}")
            if failure.get("hint"):
                st.caption(f"ヒント: {failure['hint']}")


def _knowledge_table(desk: HelpDesk) -> bool:
    """The indexed documents; False when the knowledge base is empty."""
    kb = desk.knowledge_base
    rows = [
        {
            "コレクション": collection,
            "文書": document,
            "チャンク": int(entry.get("chunks", 0)),
            "索引日時": local_time(entry.get("indexed_at")),
        }
        for collection in kb.collections()
        for document, entry in sorted(kb.documents(collection).items())
    ]
    if not rows:
        st.info("ナレッジベースは空です。" + EMPTY_HINT)
        return False
    stats = kb.stats()
    st.caption(
        " / ".join(
            f"{COLLECTION_LABELS.get(name, name)}: {item['documents']} 文書・"
            f"{item['chunks']} チャンク（最終索引 {local_time(item['indexed_at'])}）"
            for name, item in stats.items()
        )
    )
    for name, status in desk.retrievers().items():
        label = COLLECTION_LABELS.get(name, name)
        line = f"{label}の検索方式: {RETRIEVER_LABELS[status.retriever]}"
        st.caption(line + (f"（{status.reason}）" if status.reason else ""))
    st.dataframe(rows, hide_index=True)
    return True


def _knowledge_base_panel(desk: HelpDesk) -> None:
    empty = not desk.knowledge_base.collections()
    with st.expander("ナレッジベース", expanded=empty or INDEX in st.session_state):
        table = st.container()
        if st.button("サンプル（XYZシステム）を索引", key="helpdesk.sample"):
            _run_index(
                desk,
                "サンプルを索引",
                lambda on_progress: index_knowledge(desk, sample=True, on_progress=on_progress),
            )
        manuals = st.file_uploader(
            "マニュアル（PDF / Markdown / DOCX / TXT）",
            type=MANUAL_TYPES,
            accept_multiple_files=True,
            key="helpdesk.manuals",
        )
        accepted_types_caption(MANUAL_TYPES)
        faqs = st.file_uploader(
            "FAQ（CSV・Excel）", type=FAQ_TYPES, accept_multiple_files=True, key="helpdesk.faqs"
        )
        accepted_types_caption(FAQ_TYPES)
        if st.button(
            "アップロードしたファイルを索引",
            key="helpdesk.upload",
            disabled=not (manuals or faqs),
        ):
            _index_uploads(desk, list(manuals or []), list(faqs or []))
        _index_outcome()
        with table:
            _knowledge_table(desk)


# --------------------------------------------------------------------------- progress


def _query(args: str) -> str:
    try:
        parsed = json.loads(args)
    except ValueError:
        return args
    if isinstance(parsed, dict) and isinstance(parsed.get("query"), str):
        return str(parsed["query"])
    return args


def _passage(result: Mapping[str, Any]) -> str:
    parts = [str(result.get("file_name", ""))]
    if result.get("page") is not None:
        parts.append(f"p.{result['page']}")
    if result.get("row") is not None:
        parts.append(f"行{result['row']}")
    if result.get("heading"):
        parts.append(f"「{result['heading']}」")
    text = " ".join(str(result.get("content", "")).split())
    if len(text) > 120:
        text = text[:120] + "…"
    return f"- {' '.join(parts)}: {text}"


class ProgressView:
    """Renders agent events into a status box: the plan, then one container per subtask.

    Call ``add`` from the script thread only (it creates Streamlit elements).
    """

    def __init__(self, status: Any, label: str) -> None:
        self.status = status
        self.label = label
        self.plan: list[str] = []
        self.subtasks: dict[str, DeltaGenerator] = {}
        self.done = 0

    def _label(self, label: str) -> None:
        self.label = label
        self.status.update(label=label)

    def waited(self, seconds: float) -> None:
        """Say how long the answer has taken so far (while no event arrives)."""
        self.status.update(label=f"{self.label}（{int(seconds)} 秒）")

    def _box(self, name: str) -> DeltaGenerator:
        if name not in self.subtasks:
            box = self.status.container(border=True)
            box.markdown(f"**{len(self.subtasks) + 1}. {name}**")
            self.subtasks[name] = box
        return self.subtasks[name]

    def add(self, event: Event) -> None:
        """Render one event (from the script thread)."""
        kind, data = event.kind, event.payload
        if kind == "plan":
            self.plan = [str(item) for item in data.get("subtasks") or []]
            listed = "\n".join(f"{i}. {item}" for i, item in enumerate(self.plan, start=1))
            self.status.markdown(f"**計画**: 質問を {len(self.plan)} つに分けました\n\n{listed}")
            self._label(f"計画: {len(self.plan)} 件のサブタスクを検索中…")
            for item in self.plan:
                self._box(item)
        elif kind == "tool_results":
            self._tool_results(data)
        elif kind == "subtask_answer":
            box = self._box(str(data.get("subtask")))
            grounded = "" if data.get("grounded", True) else "（検索結果に基づかない）"
            box.caption(
                f"試行 {data.get('attempt')}: 回答を作成{grounded}"
                f"（出典 {len(data.get('sources') or [])} 件）"
            )
        elif kind == "reflection":
            box = self._box(str(data.get("subtask")))
            if data.get("is_completed"):
                box.markdown(f"試行 {data.get('attempt')} の評価: ✅ OK")
            else:
                box.markdown(
                    f"試行 {data.get('attempt')} の評価: 🔁 再検索 — "
                    f"{data.get('advice') or '（アドバイスなし）'}"
                )
        elif kind == "subtask_done":
            self._subtask_done(data.get("subtask") or {})
        elif kind == "answer":
            self._label("最終回答を作成しました")
        elif kind in RUN_EVENT_LABELS:  # e.g. asked again after its worker stopped
            self.status.caption(RUN_EVENT_LABELS[kind])

    def _tool_results(self, event: Mapping[str, Any]) -> None:
        box = self._box(str(event.get("subtask")))
        attempt = event.get("attempt")
        if event.get("error") == "no_tool_call":
            box.warning(f"試行 {attempt}: 検索ツールが呼び出されませんでした")
            return
        lines = [f"試行 {attempt}: 検索"]
        for result in event.get("results") or []:
            hits = list(result.get("results") or [])
            lines.append(
                f"- `{result.get('tool_name')}`「{_query(str(result.get('args', '')))}」"
                f" → {len(hits)} 件"
            )
            lines += ["  " + _passage(hit) for hit in hits[:TOP_PASSAGES]]
            if result.get("note"):
                lines.append(f"  - ※ {result['note']}")
        box.markdown("\n".join(lines))

    def _subtask_done(self, subtask: Mapping[str, Any]) -> None:
        name = str(subtask.get("task_name"))
        box = self._box(name)
        self.done += 1
        mark = "✅ 完了" if subtask.get("is_completed") else "⚠️ 未完了"
        box.markdown(
            f"**回答（{mark}・試行 {subtask.get('challenge_count')} 回）**\n\n"
            f"{subtask.get('subtask_answer', '')}"
        )
        if subtask.get("sources"):
            box.caption("出典: " + " / ".join(str(s) for s in subtask["sources"]))
        total = len(self.plan) or self.done
        self._label(f"サブタスク {self.done}/{total} 件完了")


# --------------------------------------------------------------------------- asking


def _start(services: Services, question: str) -> None:
    """Start the ask as a run; its id is kept in ``RUNNING``. A question that cannot be
    asked (empty, too long, nothing indexed yet) is said at once, without a run."""
    st.session_state.pop(LAST, None)
    try:
        inputs = helpdesk_kind.ask_inputs(question, KB)
        services.helpdesk(inputs["kb"]).check_ready()
        run = services.runs.start(
            helpdesk_kind.KIND,
            subject=inputs["kb"],
            title=inputs["question"],
            inputs=inputs,
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
        st.query_params.pop(ASK_PARAM, None)
        return
    st.session_state[RUNNING] = {"question": inputs["question"], "run_id": run.run_id}
    st.query_params[ASK_PARAM] = run.run_id


def _follow_url(services: Services) -> None:
    """An ask in the URL that this session does not know (a reload, a shared link):
    follow it (an ended one is shown at once)."""
    run_id = st.query_params.get(ASK_PARAM)
    known = (st.session_state.get(RUNNING) or st.session_state.get(LAST) or {}).get("run_id")
    if not run_id or run_id == known:
        return
    run = services.runs.get(run_id)
    if run is None or run.kind != helpdesk_kind.KIND:
        st.query_params.pop(ASK_PARAM, None)
        _show_error(run_not_found(run_id).to_dict())
        return
    st.session_state.pop(LAST, None)
    st.session_state[RUNNING] = {"question": run.title, "run_id": run_id, "restored": True}


def _drain(services: Services, running: Mapping[str, Any]) -> None:
    """Render the run's events (those stored before a rerun first) until it has ended,
    then keep the outcome in ``LAST`` and the answer in the history."""
    events: list[Event] = []
    label = "回答を作成中…"
    with st.status(label, expanded=True) as status:
        view = ProgressView(status, label)

        def show(event: Event) -> None:
            events.append(event)
            view.add(event)

        run = follow_run(services.runs, running["run_id"], show=show, tick=view.waited)
        problem = run_problem(run)
        status.update(
            label="エラー" if problem else "完了",
            state="error" if problem else "complete",
            expanded=False,
        )
    st.session_state.pop(RUNNING, None)
    result = None if problem else AgentResult.model_validate(run.result or {})
    st.session_state[LAST] = {
        "question": running["question"],
        "run_id": run.run_id,
        "events": events,
        "result": result,
        "error": problem,
    }
    if result is not None:
        _keep(services, running, result)


def _keep(services: Services, running: Mapping[str, Any], result: AgentResult) -> None:
    """Keep the answer in the history, once: an ask restored from the URL may have been
    kept by the session that started it."""
    try:
        history = _history(services.helpdesk(KB))
        question = str(running["question"])
        if running.get("restored") and any(
            saved.question == question and saved.answer == result.answer
            for saved in history.recent(HISTORY_LIMIT)
        ):
            return
        history.append(question, result.answer)
    except OSError as error:  # the answer is shown; only the history misses it
        log.warning("cannot keep the helpdesk answer: %s", error)


def _replay(events: Sequence[Event], failed: bool) -> None:
    label = "検索と評価の過程"
    with st.status(label, state="error" if failed else "complete", expanded=False) as status:
        view = ProgressView(status, label)
        for event in events:
            view.add(event)
        status.update(label=label)


def _history(desk: HelpDesk) -> AnswerHistory:
    return AnswerHistory(Workspace.from_settings(desk.settings))


def _past_answers(desk: HelpDesk, shown: AgentResult | None) -> None:
    """「これまでの回答」: the answers kept in this workspace, newest first (without the
    one shown above)."""
    answers = _history(desk).recent(HISTORY_LIMIT + 1)
    if shown is not None and answers and answers[0].answer == shown.answer:
        answers = answers[1:]
    answers = answers[:HISTORY_LIMIT]
    if not answers:
        return
    st.subheader("これまでの回答")
    for saved in answers:
        with st.expander(f"{local_time(saved.asked_at)}　{saved.question}"):
            st.markdown(saved.answer)


def _show_result(result: AgentResult) -> None:
    st.subheader("回答")
    for warning in result.warnings:  # searched by keywords although embeddings are set up
        st.warning(warning)
    st.markdown(result.answer)  # ends with 見つからなかった点 when something was not found


def render_helpdesk_page() -> None:
    """The page body (called by ``st.navigation``)."""
    st.title("ヘルプデスク")
    try:
        services = process_services()
        desk = services.helpdesk(KB)
    except KeiriAgentError as error:  # e.g. a provider configured without its key
        _show_error(error.to_dict())
        return
    st.caption(
        "社内システムのマニュアルと FAQ を検索して、出典つきで回答します。"
        "質問は内容ごとに分けて、並行して検索します。"
    )
    offline = desk.settings.llm.is_offline and desk.chat_model is None
    provider_banner(desk.settings, offline=offline)
    if offline:
        st.info(
            "オフラインモード: LLM を使わず、質問を分割し検索結果を引用して回答します。"
            "LLM を設定すると（設定のしかたはサイドバーの案内を参照）LLM が回答を作成します。",
            icon="⚠️",
        )
    else:
        st.caption(f"LLM: {desk.settings.describe()}")
    if desk.settings.active_embedding_provider is not None:
        st.caption(f"埋め込み: {desk.settings.describe_embeddings()}")
    try:
        _knowledge_base_panel(desk)
    except KeiriAgentError as error:  # e.g. an unreadable manifest: asking may still work
        _show_error(error.to_dict())

    question = persistent(
        st.text_area, "質問", key=QUESTION, default=EXAMPLE_QUESTION, placeholder=EXAMPLE_QUESTION
    )
    _follow_url(services)
    running = st.session_state.get(RUNNING)
    asked = st.button("質問する", type="primary", key="helpdesk.ask", disabled=bool(running))
    if asked and not running:
        _start(services, str(question or ""))
        running = st.session_state.get(RUNNING)
    live = bool(running)
    if running:
        st.markdown(f"**質問**: {running['question']}")
        try:
            _drain(services, running)
        except KeiriAgentError as error:  # the run is gone (deleted meanwhile)
            st.session_state.pop(RUNNING, None)
            _show_error(error.to_dict())
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
    _past_answers(desk, (last or {}).get("result"))


if __name__ == "__main__":  # run as the ヘルプデスク page script by st.navigation
    render_helpdesk_page()
