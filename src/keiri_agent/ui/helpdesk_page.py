"""ヘルプデスク page: index manuals and FAQs, ask a question, watch the agent work, read the answer.

The page only calls ``HelpDesk``. What it keeps in ``st.session_state``:

- ``helpdesk.desk``: one ``HelpDesk`` per browser session (tests may set it before the
  first run, e.g. one built with a scripted chat model);
- ``helpdesk.index``: the last indexing's reports (``IndexReport.to_dict()`` per collection);
- ``helpdesk.running``: the question being answered and its ``services.jobs.Job``
  (which keeps the events received so far and the outcome);
- ``helpdesk.last``: the last answered question: ``question``, ``events``
  (``keiri_agent.events.Event``), and ``result`` (``AgentResult``) or ``error``
  (``KeiriAgentError.to_dict()``);
- ``helpdesk.question``: the question box, kept across page switches by
  ``components.persistent`` (uploads cannot be restored: Streamlit does not allow
  setting a file uploader's value).

Threads: ``HelpDesk.ask`` runs as a ``services.jobs.Job`` (a worker thread); its events
(emitted from the agent's worker threads, several at once) are kept by the job. The
script thread follows them and renders each into the per-subtask containers of an
``st.status``, so Streamlit elements are created only from the script thread. The job
lives in ``helpdesk.running``: when a rerun interrupts the drain (the user clicks
something), the next run replays the events received so far and keeps following the
same job, so no answer is lost. Indexing (samples, uploads) goes through
``services.knowledge``; an error shown from before indexing (e.g. an empty
knowledge base) is dropped once indexing succeeds.

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
from keiri_agent.search.chunking import FAQ_SUFFIXES
from keiri_agent.search.knowledge_base import IndexReport
from keiri_agent.services.answer_history import AnswerHistory
from keiri_agent.services.jobs import Job
from keiri_agent.services.knowledge import index_knowledge
from keiri_agent.ui.components import accepted_types_caption, persistent, provider_banner
from keiri_agent.ui.local_time import local_time
from keiri_agent.ui.session import session_settings
from keiri_agent.workspace import Workspace

DESK = "helpdesk.desk"
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


def _desk() -> HelpDesk:
    if DESK not in st.session_state:
        st.session_state[DESK] = HelpDesk(session_settings())
    desk: HelpDesk = st.session_state[DESK]
    return desk


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

    def __init__(self, status: Any) -> None:
        self.status = status
        self.plan: list[str] = []
        self.subtasks: dict[str, DeltaGenerator] = {}
        self.done = 0

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
            self.status.update(label=f"計画: {len(self.plan)} 件のサブタスクを検索中…")
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
            self.status.update(label="最終回答を作成しました")

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
        self.status.update(label=f"サブタスク {self.done}/{total} 件完了")


# --------------------------------------------------------------------------- asking


def _start(desk: HelpDesk, question: str) -> None:
    """Start ``desk.ask`` as a background job; its events are kept by the job."""
    job: Job[AgentResult] = Job(
        lambda emit: desk.ask(question, on_event=emit),
        name="helpdesk-ask",
    )
    st.session_state[RUNNING] = {"question": question, "job": job, "desk": desk}
    st.session_state.pop(LAST, None)
    job.start()


def _drain(running: dict[str, Any]) -> None:
    """Render the job's events (those received before a rerun first) until it ends,
    then keep the outcome in ``LAST``; an unexpected exception is re-raised here."""
    job: Job[AgentResult] = running["job"]
    with st.status("回答を作成中…", expanded=True) as status:
        view = ProgressView(status)
        for event in job.follow():
            view.add(event)
        error = job.error
        status.update(
            label="エラー" if error else "完了",
            state="error" if error else "complete",
            expanded=False,
        )
    st.session_state.pop(RUNNING, None)
    if error is not None and not isinstance(error, KeiriAgentError):
        raise error
    st.session_state[LAST] = {
        "question": running["question"],
        "events": job.events(),
        "result": None if error else job.result(),
        "error": error.to_dict() if isinstance(error, KeiriAgentError) else None,
    }
    if error is None:
        try:
            _history(running["desk"]).append(running["question"], job.result().answer)
        except OSError as problem:  # the answer is shown; only the history misses it
            log.warning("cannot keep the helpdesk answer: %s", problem)


def _replay(events: Sequence[Event], failed: bool) -> None:
    with st.status(
        "検索と評価の過程", state="error" if failed else "complete", expanded=False
    ) as status:
        view = ProgressView(status)
        for event in events:
            view.add(event)
        status.update(label="検索と評価の過程")


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
        desk = _desk()
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
    running = st.session_state.get(RUNNING)
    asked = st.button("質問する", type="primary", key="helpdesk.ask", disabled=bool(running))
    if asked and not running:
        _start(desk, str(question or ""))
        running = st.session_state[RUNNING]
    if running:
        st.markdown(f"**質問**: {running['question']}")
        _drain(running)
        live = True
    else:
        live = False
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
