"""データ分析 page: upload a file, ask in a chat, see artifacts inline, download the report.

The page only calls ``AnalysisAgent``; what it keeps in ``st.session_state``:
``analysis.agent`` (one agent per browser session, with its dataset registry),
``analysis.dataset_id``, ``analysis.thread_id``, ``analysis.turns`` (the chat).

A conversation belongs to one file: loading a different file (another name, other
content or another sheet) starts a new thread and the page says so.

After a visit to another page the dataset and the chat are still there (plain Session
State); the uploader is empty (Streamlit cannot restore an upload) and the sheet
selector keeps its sheet, so uploading the same workbook again continues the thread.

A file that cannot be loaded clears the page's dataset: its error (with the fix) stays
in the sidebar and a question gets that error as its answer, never an answer about
the file loaded before. The sidebar shows what loading did (``summary["notes"]``, e.g.
excluded total rows); 「合計行を残す」 reloads the file keeping them.

Work survives a reload: every loaded file is also saved in the workspace
(``services.saved_datasets``, key ``analysis.data_ref``) and linked to the thread when
a question is asked (copies no conversation is linked to are pruned after a week); the
URL carries ``?thread=<thread id>&data=<file reference>``.
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
from typing import Any

import streamlit as st

from keiri_agent.agents.analysis import AnalysisAgent, Artifact, TurnResult
from keiri_agent.agents.analysis.datasets import excel_sheet_names
from keiri_agent.agents.analysis.formatting import column_kind_label
from keiri_agent.demo import sample_data_path
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.services.exports import report_zip
from keiri_agent.services.saved_datasets import SavedDatasets
from keiri_agent.ui.components import (
    accepted_types_caption,
    download_button,
    persistent,
    provider_banner,
    render_artifact,
)
from keiri_agent.ui.session import session_settings
from keiri_agent.workspace import Workspace

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
log = logging.getLogger(__name__)


def analysis_agent() -> AnalysisAgent:
    """This session's agent (created on first use, with a new conversation; then the
    saved files no conversation uses are pruned, see ``services.saved_datasets``)."""
    if "analysis.agent" not in st.session_state:
        agent = AnalysisAgent(session_settings())
        st.session_state["analysis.agent"] = agent
        st.session_state["analysis.turns"] = []
        st.session_state["analysis.thread_id"] = uuid.uuid4().hex
        try:
            pruned = _saved(agent).prune()
        except OSError as error:
            log.warning("cannot prune the saved analysis files: %s", error)
        else:
            if pruned:
                log.info("pruned %d saved analysis files no conversation uses", len(pruned))
    kept: AnalysisAgent = st.session_state["analysis.agent"]
    return kept


def _saved(agent: AnalysisAgent) -> SavedDatasets:
    return SavedDatasets(Workspace.from_settings(agent.settings))


def _save(agent: AnalysisAgent, data: bytes, name: str, sheet: str | None, keep: bool) -> None:
    """Keep the loaded file in the workspace (``analysis.data_ref``) for a reload."""
    try:
        ref: str | None = _saved(agent).save(data, name, sheet=sheet, keep_total_rows=keep)
    except OSError as error:  # the page works on; only a reload cannot bring the file back
        log.warning("cannot save the analysis file %s: %s", name, error)
        ref = None
    st.session_state["analysis.data_ref"] = ref


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
        found = saved.load(ref)
        dataset_id = agent.load_bytes(
            found.data, found.name, sheet=found.sheet, keep_total_rows=found.keep_total_rows
        )
    except KeiriAgentError as error:
        st.session_state["analysis.notice_error"] = error.to_dict()
        return
    digest = hashlib.sha256(found.data).hexdigest()
    st.session_state["analysis.dataset_id"] = dataset_id
    st.session_state["analysis.identity"] = (found.name, digest, found.sheet, found.keep_total_rows)
    st.session_state["analysis.data_ref"] = ref


def _follow_url(agent: AnalysisAgent) -> None:
    """A ``thread`` in the URL that is not this session's conversation: open it."""
    wanted = st.query_params.get(THREAD_PARAM)
    if wanted and wanted != st.session_state["analysis.thread_id"]:
        open_conversation(agent, wanted, st.query_params.get(DATA_PARAM))


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


def _use_dataset(agent: AnalysisAgent, dataset_id: str, identity: tuple[Any, ...]) -> None:
    """Make ``dataset_id`` the page's data; a different file than before starts a new thread."""
    previous: str | None = st.session_state.get("analysis.dataset_id")
    before: tuple[Any, ...] = st.session_state.get("analysis.identity") or ()
    failed_from: tuple[str, tuple[Any, ...]] | None = st.session_state.pop(
        "analysis.failed_from", None
    )
    st.session_state.pop("analysis.load_error", None)
    if previous is None and failed_from is not None and failed_from[1][:2] != identity[:2]:
        previous = failed_from[0]  # the file before a failed upload: a new file, a new thread
    st.session_state["analysis.dataset_id"] = dataset_id
    st.session_state["analysis.identity"] = identity
    if previous is None:
        return
    old = agent.registry.summary(previous)["name"] if previous in agent.registry else "前のファイル"
    new = agent.registry.summary(dataset_id)["name"]
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


def _load_failed(error: KeiriAgentError) -> None:
    """A failed upload: the page has no dataset any more (no answer about the file before)."""
    previous: str | None = st.session_state.pop("analysis.dataset_id", None)
    identity = st.session_state.pop("analysis.identity", None)
    st.session_state["analysis.data_ref"] = None
    if previous is not None:
        st.session_state["analysis.failed_from"] = (previous, identity)
    st.session_state["analysis.load_error"] = error.to_dict()


def _dataset_section(agent: AnalysisAgent) -> None:
    st.sidebar.header("データ")
    _upload_section(agent)
    if st.sidebar.button("サンプルデータを使う", key="analysis.sample"):
        sample = sample_data_path()
        chosen = ("sample", str(sample))
        if chosen != st.session_state.get("analysis.identity"):
            _use_dataset(agent, agent.load_file(sample), chosen)
            _save(agent, sample.read_bytes(), sample.name, None, False)
    _dataset_status(agent)
    if st.sidebar.button("会話をリセット", key="analysis.reset"):
        st.session_state["analysis.turns"] = []
        st.session_state["analysis.thread_id"] = uuid.uuid4().hex
        st.session_state.pop("analysis.notice", None)
        st.session_state.pop("analysis.notice_error", None)


def _upload_section(agent: AnalysisAgent) -> None:
    """The uploader, the sheet and 「合計行を残す」; loads a new upload (or records its error)."""
    upload = st.sidebar.file_uploader(
        "CSV / TSV / Excel ファイル", type=FILE_TYPES, key="analysis.upload"
    )
    accepted_types_caption(FILE_TYPES, sidebar=True)
    sheet: str | None = None
    sheets: list[str] = []
    if upload is not None and upload.name.lower().endswith((".xlsx", ".xlsm")):
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
                try:
                    dataset_id = agent.load_bytes(
                        data, upload.name, sheet=sheet, keep_total_rows=keep_totals
                    )
                except KeiriAgentError as error:
                    _load_failed(error)
                else:
                    _use_dataset(agent, dataset_id, identity)
                    _save(agent, data, upload.name, sheet, keep_totals)
            st.session_state["analysis.loaded"] = marker


def _dataset_status(agent: AnalysisAgent) -> None:
    """The loaded dataset (size, what loading did, its columns), or the last load's error."""
    current: str | None = st.session_state.get("analysis.dataset_id")
    load_error: dict[str, Any] | None = st.session_state.get("analysis.load_error")
    if load_error is not None and not current:
        st.sidebar.error(load_error["message"])
        if load_error.get("hint"):
            st.sidebar.caption(f"ヒント: {load_error['hint']}")
    if current:
        summary = agent.registry.summary(current)
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


def _report(index: int, report_md: str, cited: list[Artifact]) -> None:
    """A report with its downloads (Markdown; ZIP with the figures it cites)."""
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
        lambda: report_zip(report_md, cited),
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
    for kind, text in item["replies"]:
        if kind == "report":
            _report(index, text, item.get("report_artifacts", []))
        elif kind == "note":
            st.info(text)
        else:
            st.markdown(text)


def _render_turn(index: int, item: dict[str, Any]) -> None:
    question: str = item["question"]
    turn: TurnResult | None = item.get("turn")
    error: dict[str, Any] | None = item.get("error")
    with st.chat_message("user"):
        st.markdown(question)
    with st.chat_message("assistant"):
        if "replies" in item:
            _render_restored(index, item)
            return
        if error is not None:
            st.error(f"[{error['code']}] {error['message']}")
            if error.get("hint"):
                st.caption(f"ヒント: {error['hint']}")
            return
        assert turn is not None
        if turn.notice and turn.report_md is not None:  # otherwise the reply carries it
            st.info(turn.notice)
        for artifact in turn.artifacts:
            render_artifact(artifact)
        if turn.report_md is not None:
            _report(index, turn.report_md, turn.report_artifacts)
        else:
            st.markdown(turn.reply)


def render_analysis_page() -> None:
    """The page body (called by ``st.navigation``)."""
    provider_banner(session_settings())
    try:
        agent = analysis_agent()
    except KeiriAgentError as error:  # e.g. a provider configured without its key
        st.error(f"[{error.code}] {error.message}")
        if error.hint:
            st.caption(f"ヒント: {error.hint}")
        return
    st.title("データ分析")
    st.caption(
        "CSV / Excel をアップロードして、日本語または英語で質問してください。"
        "例: 「地域別の売上の合計と平均を見せて」"
    )
    _follow_url(agent)
    _dataset_section(agent)
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
    question = st.chat_input("質問を入力", key="analysis.chat")
    if not question:
        return
    st.session_state.pop("analysis.notice", None)
    st.session_state.pop("analysis.notice_error", None)
    item: dict[str, Any] = {"question": question}
    load_error: dict[str, Any] | None = st.session_state.get("analysis.load_error")
    if load_error is not None and not st.session_state.get("analysis.dataset_id"):
        item["error"] = {
            **load_error,
            "message": "ファイルを読み込めなかったため、質問に答えられません: "
            + load_error["message"],
        }
        turns.append(item)
        _render_turn(len(turns) - 1, item)
        return
    ref: str | None = st.session_state.get("analysis.data_ref")
    if ref and st.session_state.get("analysis.dataset_id"):
        try:
            _saved(agent).link(st.session_state["analysis.thread_id"], ref)
        except OSError as error:
            log.warning("cannot link the conversation to its file: %s", error)
    with st.status("分析中…", expanded=False) as status:

        def on_event(event: Event) -> None:
            label = NODE_LABELS.get(event.kind, event.kind)
            status.write(f"{label}: {event.payload.get('rationale') or ''}")

        try:
            item["turn"] = agent.ask(
                question,
                dataset_id=st.session_state.get("analysis.dataset_id"),
                thread_id=st.session_state["analysis.thread_id"],
                on_event=on_event,
            )
            status.update(label="完了", state="complete")
        except KeiriAgentError as error:
            item["error"] = error.to_dict()
            status.update(label="エラー", state="error")
    turns.append(item)
    _render_turn(len(turns) - 1, item)
