"""データ分析 page: upload a file, ask in a chat, see artifacts inline, download the report.

The page uses the process's services (``session.process_services()``): its analysis
agent (shared by the sessions, with one dataset registry) and its run service. What it
keeps in ``st.session_state``: ``analysis.dataset_id`` and ``analysis.data_ref`` (the
loaded file's saved reference, ``services.saved_datasets``), ``analysis.thread_id``,
``analysis.turns`` (the chat: each turn's question and the run's result JSON, or an
error) and ``analysis.running`` (the question being answered and its run id).

Asking: a question becomes a run of kind ``analysis`` (``runs.analysis_kind``),
executed by the run service's workers (this process's threads, or the job queue's),
which load the file by its reference wherever they run. The script thread follows the
run's stored events (``ui.run_follow``) in an ``st.status``; a rerun meanwhile (the
user clicked something) follows the same run again, so no answer is lost. The turn is
drawn from the run's result (``analysis_turns.turn_result_json``: tables as people
read them, the reply, the report) and the turn's figures and report figures kept in
the workspace (``services.analysis_turns``; a figure that is gone: a Japanese note).

A conversation belongs to one file: loading a different file (another name, other
content or another sheet) starts a new thread and the page says so.

After a visit to another page the dataset and the chat are still there (plain Session
State); the uploader is empty (Streamlit cannot restore an upload) and the sheet
selector keeps its sheet, so uploading the same workbook again continues the thread.

A file that cannot be loaded clears the page's dataset: its error (with the fix) stays
in the sidebar and a question gets that error as its answer, never an answer about
the file loaded before. The sidebar shows what loading did (``summary["notes"]``, e.g.
excluded total rows); 「合計行を残す」 reloads the file keeping them.

Work survives a reload: every loaded file is saved in the workspace (its reference is
``analysis.data_ref``) and the run links the thread to it (copies no conversation is
linked to are pruned after a week, once per browser session); the URL carries
``?thread=<thread id>&data=<file reference>``.
A session opened with a ``thread`` that is not its own (F5, a shared link, 「最近の会話」
in the side panel) opens that conversation: its messages and the tables and charts
each turn made from the checkpointer (one that is gone: a Japanese note in its turn), and
its file loaded again (a file that is gone: a Japanese message, the conversation is
still shown). Loading another file starts a new conversation; the previous one stays
in 「最近の会話」 and the notice says so.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st

from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.services.analysis_turns import AnalysisTurns, StoredTurn
from keiri_agent.services.exports import report_zip
from keiri_agent.services.saved_datasets import LoadedDatasets, SavedDatasets
from keiri_agent.ui.components import (
    accepted_types_caption,
    download_button,
    persistent,
    provider_banner,
    render_artifact,
)
from keiri_agent.ui.people import starter_login
from keiri_agent.ui.run_follow import OUTCOME_KINDS, RUN_EVENT_LABELS, follow_run, run_problem
from keiri_agent.ui.session import process_services, session_settings, shared_services
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import AnalysisAgent, Artifact
    from keiri_agent.services.container import Services

FIGURE_LINK = re.compile(r"!\[([^\]]*)\]\(figures/[^)]+\)")
FILE_TYPES = ["csv", "tsv", "txt", "xlsx", "xlsm"]
NODE_LABELS = {
    "reason": "判断",
    "act": "分析の実行",
    "out_of_scope": "範囲外の応答",
    "report": "レポート作成",
}


THREAD_PARAM = "thread"
DATA_PARAM = "data"
RUNNING = "analysis.running"
NO_DATASET = "分析したいCSVまたはExcelファイルをアップロードしてください。"
FIGURE_GONE = (
    "図「{title}」は、保存された記録から読み込めないため表示できません"
    "（保存期間を過ぎて削除されたか、壊れています）。"
)
log = logging.getLogger(__name__)


def start_conversation() -> None:
    """On a session's first use: start its conversation and prune the saved files no
    conversation uses (see ``services.saved_datasets``)."""
    if "analysis.turns" in st.session_state:
        return
    st.session_state["analysis.turns"] = []
    st.session_state["analysis.thread_id"] = uuid.uuid4().hex
    try:
        pruned = SavedDatasets(Workspace.from_settings(shared_services().settings)).prune()
    except OSError as error:
        log.warning("cannot prune the saved analysis files: %s", error)
    else:
        if pruned:
            log.info("pruned %d saved analysis files no conversation uses", len(pruned))


def analysis_agent() -> AnalysisAgent:
    """The process's analysis agent (``session.shared_services().analysis``), the
    session's conversation started (``start_conversation``).

    Built on first use: importing it loads pandas, LangChain and LangGraph, so the page
    draws its widgets first and asks for the agent when something needs it.
    """
    start_conversation()
    return shared_services().analysis


def _loaded(agent: AnalysisAgent) -> LoadedDatasets:
    return LoadedDatasets.of(agent)


def _saved(agent: AnalysisAgent) -> SavedDatasets:
    return _loaded(agent).saved


def _summary(agent: AnalysisAgent, ref: str) -> dict[str, Any] | None:
    """The summary of the saved file ``ref``; None when it is gone or unreadable."""
    try:
        return _loaded(agent).summary(ref)
    except KeiriAgentError:
        return None


def _restored_turns(agent: AnalysisAgent, thread_id: str) -> list[dict[str, Any]]:
    """The chat of a thread from the checkpointer: each request, the replies to it and
    the tables and charts it made."""
    return [
        {
            "question": turn.question,
            "replies": turn.replies,
            "artifacts": turn.artifacts,
            "missing": turn.missing,
            "report_artifacts": turn.report_artifacts,
        }
        for turn in agent.past_turns(thread_id)
    ]


def open_conversation(agent: AnalysisAgent, thread_id: str, ref: str | None) -> None:
    """Make ``thread_id`` the page's conversation, with its file loaded again."""
    st.session_state["analysis.thread_id"] = thread_id
    st.session_state["analysis.turns"] = _restored_turns(agent, thread_id)
    for key in ("analysis.notice", "analysis.load_error", "analysis.failed_from"):
        st.session_state.pop(key, None)
    st.session_state.pop("analysis.dataset_id", None)
    st.session_state.pop("analysis.identity", None)
    st.session_state["analysis.data_ref"] = None
    saved = _saved(agent)
    ref = ref or saved.ref_of(thread_id)
    if ref is None:
        return
    try:
        if not saved.exists(ref):
            raise saved.missing(ref)
        found = saved.load(ref)
        _loaded(agent).dataset_id(ref)
    except KeiriAgentError as error:
        st.session_state["analysis.notice_error"] = error.to_dict()
        return
    digest = hashlib.sha256(found.data).hexdigest()
    st.session_state["analysis.dataset_id"] = ref
    st.session_state["analysis.identity"] = (found.name, digest, found.sheet, found.keep_total_rows)
    st.session_state["analysis.data_ref"] = ref


def _follow_url() -> None:
    """A ``thread`` in the URL that is not this session's conversation: open it."""
    wanted = st.query_params.get(THREAD_PARAM)
    if wanted and wanted != st.session_state["analysis.thread_id"]:
        open_conversation(analysis_agent(), wanted, st.query_params.get(DATA_PARAM))


def _write_url() -> None:
    """The conversation and its file in the URL (restored after a reload)."""
    params = {THREAD_PARAM: st.session_state["analysis.thread_id"]}
    ref: str | None = st.session_state.get("analysis.data_ref")
    if ref and st.session_state.get("analysis.dataset_id"):
        params[DATA_PARAM] = ref
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)


def _inline_figures_note(report_md: str) -> str:
    """The report for on-screen reading: figure links point at files only the ZIP has."""
    return FIGURE_LINK.sub(r"*（図「\1」は会話の中に表示しています）*", report_md)


def _use_dataset(agent: AnalysisAgent, ref: str, identity: tuple[Any, ...]) -> None:
    """Make the saved file ``ref`` the page's data; a different file than before starts a
    new thread."""
    previous: str | None = st.session_state.get("analysis.dataset_id")
    before: tuple[Any, ...] = st.session_state.get("analysis.identity") or ()
    failed_from: tuple[str, tuple[Any, ...]] | None = st.session_state.pop(
        "analysis.failed_from", None
    )
    st.session_state.pop("analysis.load_error", None)
    if previous is None and failed_from is not None and failed_from[1][:2] != identity[:2]:
        previous = failed_from[0]  # the file before a failed upload: a new file, a new thread
    st.session_state["analysis.dataset_id"] = ref
    st.session_state["analysis.data_ref"] = ref
    st.session_state["analysis.identity"] = identity
    if previous is None or previous == ref:
        return
    old = (_summary(agent, previous) or {}).get("name") or "前のファイル"
    new = (_summary(agent, ref) or {}).get("name") or "新しいファイル"
    st.session_state["analysis.turns"] = []
    st.session_state["analysis.thread_id"] = uuid.uuid4().hex
    if before[:3] == identity[:3]:  # the same file and sheet, 「合計行を残す」 changed
        st.session_state["analysis.notice"] = (
            f"合計行の扱いを変えて {new} を読み込み直したため、新しい会話を始めました。"
        )
        return
    st.session_state["analysis.notice"] = (
        f"別のファイル（{new}）が読み込まれたため、新しい会話を始めました。"
        f"{old} での会話は、サイドバーの「最近の会話」からいつでも開けます。"
    )


def _load(
    agent: AnalysisAgent,
    data: bytes,
    name: str,
    identity: tuple[Any, ...],
    *,
    sheet: str | None = None,
    keep_totals: bool = False,
) -> None:
    """Load and save a file and make it the page's data (or record why it failed)."""
    try:
        ref = _loaded(agent).upload(data, name, sheet=sheet, keep_total_rows=keep_totals)
    except KeiriAgentError as error:
        _load_failed(error)
    else:
        _use_dataset(agent, ref, identity)


def _load_failed(error: KeiriAgentError) -> None:
    """A failed upload: the page has no dataset any more (no answer about the file before)."""
    previous: str | None = st.session_state.pop("analysis.dataset_id", None)
    identity = st.session_state.pop("analysis.identity", None)
    st.session_state["analysis.data_ref"] = None
    if previous is not None:
        st.session_state["analysis.failed_from"] = (previous, identity)
    st.session_state["analysis.load_error"] = error.to_dict()


def _dataset_section() -> None:
    st.sidebar.header("データ")
    _upload_section()
    if st.sidebar.button("サンプルデータを使う", key="analysis.sample"):
        from keiri_agent.demo import sample_data_path

        sample = sample_data_path()
        chosen = ("sample", str(sample))
        if chosen != st.session_state.get("analysis.identity"):
            _load(analysis_agent(), sample.read_bytes(), sample.name, chosen)
    _dataset_status()
    if st.sidebar.button("会話をリセット", key="analysis.reset"):
        st.session_state["analysis.turns"] = []
        st.session_state["analysis.thread_id"] = uuid.uuid4().hex
        st.session_state.pop("analysis.notice", None)
        st.session_state.pop("analysis.notice_error", None)


def _upload_section() -> None:
    """The uploader, the sheet and 「合計行を残す」; loads a new upload (or records its error)."""
    upload = st.sidebar.file_uploader(
        "CSV / TSV / Excel ファイル", type=FILE_TYPES, key="analysis.upload"
    )
    accepted_types_caption(FILE_TYPES, sidebar=True)
    sheet: str | None = None
    sheets: list[str] = []
    if upload is not None and upload.name.lower().endswith((".xlsx", ".xlsm")):
        from keiri_agent.agents.analysis.datasets import excel_sheet_names

        try:
            sheets = excel_sheet_names(upload.getvalue())
        except KeiriAgentError as error:
            unreadable = (upload.file_id, None, None)
            if st.session_state.get("analysis.loaded") != unreadable:  # once per upload
                _load_failed(error)
                st.session_state["analysis.loaded"] = unreadable
            upload = None
    if sheets:
        # kept across page switches: the same workbook uploaded again keeps its sheet
        sheet = persistent(
            st.sidebar.selectbox,
            "シート",
            sheets,
            key="analysis.sheet",
            valid=lambda kept: kept in sheets,
        )
    keep_totals = persistent(
        st.sidebar.checkbox,
        "合計行を残す",
        key="analysis.keep_totals",
        default=False,
        help="合計・小計の行は二重に数えないよう除外します。データとして残すときに選びます。",
    )
    if upload is not None:
        marker = (upload.file_id, sheet, keep_totals)
        if st.session_state.get("analysis.loaded") != marker:
            data = upload.getvalue()
            identity = (upload.name, hashlib.sha256(data).hexdigest(), sheet, keep_totals)
            if identity != st.session_state.get("analysis.identity"):
                agent = analysis_agent()
                _load(agent, data, upload.name, identity, sheet=sheet, keep_totals=keep_totals)
            st.session_state["analysis.loaded"] = marker


def _dataset_status() -> None:
    """The loaded dataset (size, what loading did, its columns), or the last load's error."""
    current: str | None = st.session_state.get("analysis.dataset_id")
    load_error: dict[str, Any] | None = st.session_state.get("analysis.load_error")
    if load_error is not None and not current:
        st.sidebar.error(load_error["message"])
        if load_error.get("hint"):
            st.sidebar.caption(f"ヒント: {load_error['hint']}")
    if current:
        summary = _summary(analysis_agent(), current)
        if summary is None:  # its saved copy is gone (pruned, deleted) since it was loaded
            st.session_state.pop("analysis.dataset_id", None)
            st.session_state["analysis.data_ref"] = None
            st.sidebar.error("読み込んだファイルの保存されたコピーが見つかりません。")
            st.sidebar.caption("ヒント: 同じファイルをもう一度アップロードしてください。")
            return
        from keiri_agent.agents.analysis.formatting import column_kind_label

        st.sidebar.success(
            f"{summary['name']}: {summary['rows']:,} 行 × {len(summary['columns'])} 列"
        )
        for note in summary.get("notes", []):
            st.sidebar.info(note)
        with st.sidebar.expander("列の一覧"):
            st.dataframe(
                [
                    {"列": c["name"], "種類": column_kind_label(c["kind"]), "欠損": c["missing"]}
                    for c in summary["columns"]
                ],
                hide_index=True,
            )


MISSING_ARTIFACTS = (
    "この回の表・グラフのうち {count} 件は、保存された記録から読み込めないため表示できません"
    "（記録が削除されたか壊れています）。"
)
MISSING_HINT = "同じ質問をもう一度入力すると、表・グラフを作り直せます。"


def _report(index: int, report_md: str, cited: Callable[[], list[Artifact]]) -> None:
    """A report with its downloads (Markdown; ZIP with the figures it cites, read when
    the ZIP is asked for)."""
    with st.expander("レポート", expanded=True):
        st.markdown(_inline_figures_note(report_md))
    download_button(
        "レポート（Markdown）をダウンロード",
        lambda: report_md.encode("utf-8"),
        file_name="report.md",
        mime="text/markdown",
        key=f"analysis.download_md.{index}",
    )
    download_button(
        "レポートと図（ZIP）をダウンロード",
        lambda: report_zip(report_md, cited()),
        file_name="report.zip",
        mime="application/zip",
        key=f"analysis.download_zip.{index}",
    )


def _render_restored(index: int, item: dict[str, Any]) -> None:
    """A turn restored from the checkpointer: its tables and charts, then its messages."""
    for artifact in item.get("artifacts", []):
        render_artifact(artifact)
    if item.get("missing"):
        st.warning(MISSING_ARTIFACTS.format(count=item["missing"]))
        st.caption(f"ヒント: {MISSING_HINT}")
    cited: list[Artifact] = item.get("report_artifacts", [])
    for kind, text in item["replies"]:
        if kind == "report":
            _report(index, text, lambda: cited)
        elif kind == "note":
            st.info(text)
        else:
            st.markdown(text)


def _unique(labels: list[str]) -> list[str]:
    """Column labels made unique (equal labels get a numbered suffix)."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return unique


def _render_result_artifact(artifact: Mapping[str, Any], stored: StoredTurn | None) -> None:
    """An artifact of a turn's JSON: a table as people read it (``display``), a figure
    from the workspace, or a text."""
    st.markdown(f"**{artifact.get('title', '')}**")
    if artifact.get("description"):
        st.caption(str(artifact["description"]))
    kind = artifact.get("kind")
    if kind == "table":
        import pandas as pd

        display = artifact.get("display") or {}
        columns = _unique([str(label) for label in display.get("columns") or []])
        frame = pd.DataFrame(display.get("rows") or [], columns=columns)
        st.dataframe(frame, hide_index=True, width="stretch")
        total = artifact.get("total_rows") or len(frame)
        if total > len(frame):
            st.caption(f"全 {total} 行中 {len(frame)} 行を表示")
    elif kind == "figure":
        png = stored.figure(str(artifact.get("artifact_id"))) if stored is not None else None
        if png is None:
            st.warning(FIGURE_GONE.format(title=artifact.get("title", "")))
            st.caption(f"ヒント: {MISSING_HINT}")
        else:
            st.image(png)
    else:
        st.info(str(artifact.get("text", "")))


def _render_result(index: int, result: Mapping[str, Any]) -> None:
    """A turn answered by a run: its artifacts, then its report or its reply."""
    stored = AnalysisTurns.from_settings(session_settings()).load(str(result.get("turn_id")))
    report_md: str | None = result.get("report_md")
    if result.get("notice") and report_md is not None:  # otherwise the reply carries it
        st.info(str(result["notice"]))
    for artifact in result.get("artifacts") or []:
        _render_result_artifact(artifact, stored)
    if report_md is None:
        st.markdown(str(result.get("reply") or ""))
        return

    def cited() -> list[Artifact]:
        return (stored.report_artifacts() if stored is not None else None) or []

    _report(index, report_md, cited)


def _render_turn(index: int, item: dict[str, Any]) -> None:
    question: str = item["question"]
    error: dict[str, Any] | None = item.get("error")
    with st.chat_message("user"):
        st.markdown(question)
    with st.chat_message("assistant"):
        if "replies" in item:
            _render_restored(index, item)
        elif error is not None:
            st.error(f"[{error.get('code', '')}] {error.get('message', '')}")
            if error.get("hint"):
                st.caption(f"ヒント: {error['hint']}")
        elif "result" in item:
            _render_result(index, item["result"])
        else:
            st.markdown(str(item.get("reply") or ""))


def _start(services: Services, question: str) -> dict[str, Any] | None:
    """Start the turn as a run (its id kept in ``RUNNING``); the chat item instead when
    there is nothing to ask about or the question cannot be asked."""
    item: dict[str, Any] = {"question": question}
    load_error: dict[str, Any] | None = st.session_state.get("analysis.load_error")
    ref: str | None = st.session_state.get("analysis.dataset_id")
    if load_error is not None and not ref:
        item["error"] = {
            **load_error,
            "message": "ファイルを読み込めなかったため、質問に答えられません: "
            + load_error["message"],
        }
        return item
    if not ref:
        item["reply"] = NO_DATASET
        return item
    from keiri_agent.runs import analysis_kind

    try:
        inputs = analysis_kind.turn_inputs(
            services.settings, ref, question, st.session_state["analysis.thread_id"]
        )
        run = services.runs.start(
            analysis_kind.KIND,
            subject=inputs["thread_id"],
            title=inputs["question"],
            inputs=inputs,
            owner=starter_login(services, "run"),
        )
    except KeiriAgentError as error:
        item["error"] = error.to_dict()
        return item
    st.session_state[RUNNING] = {"question": question, "run_id": run.run_id}
    return None


def _progress_line(event: Event) -> str | None:
    """The status line of one of the run's events (None: not shown as progress)."""
    if event.kind in NODE_LABELS:
        return f"{NODE_LABELS[event.kind]}: {event.payload.get('rationale') or ''}"
    if event.kind in RUN_EVENT_LABELS:
        return RUN_EVENT_LABELS[event.kind]
    if event.kind == "result" or event.kind in OUTCOME_KINDS:
        return None
    return event.kind


def _drain(services: Services, running: Mapping[str, Any]) -> dict[str, Any]:
    """Follow the run (its events stored before a rerun first) until it has ended; the
    chat item of the turn (its result, or its error)."""
    label = "分析中…"
    item: dict[str, Any] = {"question": running["question"], "run_id": running["run_id"]}
    with st.status(label, expanded=False) as status:

        def show(event: Event) -> None:
            line = _progress_line(event)
            if line is not None:
                status.write(line)

        def waited(seconds: float) -> None:
            status.update(label=f"{label}（{int(seconds)} 秒）")

        try:
            run = follow_run(services.runs, running["run_id"], show=show, tick=waited)
        except KeiriAgentError as error:  # the run is gone (deleted meanwhile)
            problem: dict[str, Any] | None = error.to_dict()
        else:
            problem = run_problem(run)
            if problem is None:
                item["result"] = dict(run.result or {})
        status.update(
            label="エラー" if problem else "完了", state="error" if problem else "complete"
        )
    if problem is not None:
        item["error"] = problem
    st.session_state.pop(RUNNING, None)
    return item


def render_analysis_page() -> None:
    """The page body (called by ``st.navigation``).

    The title, the uploader and the chat are drawn before anything is built: they need
    neither the analysis agent nor the run service, whose first build in a process
    takes seconds (pandas, LangGraph, the Plan catalog, the database). A step asks for
    them where it needs them (a conversation in the URL, a file loaded, a question);
    then the end of the page does, so that the next step finds them ready and the
    process's run executor starts on the first visit. An error building them (e.g. a
    provider configured without its key) is shown on the page where it occurs.
    """
    provider_banner(session_settings())
    start_conversation()
    st.title("データ分析")
    st.caption(
        "CSV / Excel をアップロードして、日本語または英語で質問してください。"
        "例: 「地域別の売上の合計と平均を見せて」"
    )
    try:
        _body()
        analysis_agent()
        process_services()
    except KeiriAgentError as error:  # e.g. a provider configured without its key
        st.error(f"[{error.code}] {error.message}")
        if error.hint:
            st.caption(f"ヒント: {error.hint}")


def _body() -> None:
    """The conversation: its file in the sidebar, its turns, the chat."""
    _follow_url()
    _dataset_section()
    _write_url()
    notice: str | None = st.session_state.get("analysis.notice")
    if notice:
        st.info(notice)
    missing: dict[str, Any] | None = st.session_state.get("analysis.notice_error")
    if missing:
        st.warning(missing["message"])
        if missing.get("hint"):
            st.caption(f"ヒント: {missing['hint']}")
    turns: list[dict[str, Any]] = st.session_state["analysis.turns"]
    for index, earlier in enumerate(turns):
        _render_turn(index, earlier)
    running: dict[str, Any] | None = st.session_state.get(RUNNING)
    if running is not None:  # a rerun while a turn is answered: follow it again
        turns.append(_drain(process_services(), running))
        _render_turn(len(turns) - 1, turns[-1])
    question = st.chat_input("質問を入力", key="analysis.chat")
    if not question:
        return
    st.session_state.pop("analysis.notice", None)
    st.session_state.pop("analysis.notice_error", None)
    services = process_services()
    item = _start(services, question)
    if item is None:
        item = _drain(services, st.session_state[RUNNING])
    turns.append(item)
    _render_turn(len(turns) - 1, item)
