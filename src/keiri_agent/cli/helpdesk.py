"""``keiri-agent helpdesk``: index manuals and an FAQ, then ask questions about the system.

    keiri-agent helpdesk index --sample                      # the bundled XYZ manual + FAQ
    keiri-agent helpdesk index manuals/ --qa faq.csv         # your own (changed files only)
    keiri-agent helpdesk ask "パスワードの条件と、ロックされた時の解除方法を教えて"
    keiri-agent helpdesk status
    keiri-agent helpdesk remove xyz_release_notes.docx       # (--collection qa for FAQ files)

Exit codes: 0 success, 1 a reported failure (nothing indexed yet, a file that could
not be indexed, an LLM error), 2 a usage error.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from keiri_agent.cli.common import console, err_console, needs, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.services.jsonforms import helpdesk_answer_json, index_reports_json

if TYPE_CHECKING:  # imported when a command runs: keeps other commands' start-up lean
    from keiri_agent.agents.helpdesk.desk import HelpDesk

helpdesk_app = KeiriTyper(
    name="helpdesk",
    help="システムのヘルプデスク: マニュアルと FAQ を登録し、出典付きで質問に答えます。",
    no_args_is_help=True,
)

NameOption = Annotated[
    str, typer.Option("--name", help="ナレッジベース名（システムごとに 1 つ）。")
]
JsonOption = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]


def _desk(name: str) -> HelpDesk:
    from keiri_agent.agents.helpdesk.desk import HelpDesk

    return HelpDesk(settings(), name=name)


@helpdesk_app.command()
@needs("design")
def index(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="マニュアルのファイルまたはフォルダー（PDF・Markdown・DOCX・TXT・XLSX）"
        ),
    ] = None,
    qa: Annotated[
        list[Path] | None, typer.Option("--qa", help="FAQ の CSV か Excel（質問・回答の列）。")
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="同梱の XYZ システムのマニュアルと FAQ を登録します。")
    ] = False,
    name: NameOption = "helpdesk",
    as_json: JsonOption = False,
) -> None:
    """マニュアル（と FAQ）を登録します。前回から変わったファイルだけを読み直します。"""
    from keiri_agent.services.knowledge import index_knowledge

    def progress(done: int, total: int, document: str) -> None:
        if not as_json:
            err_console.print(f"[dim]· {done}/{total} {escape(document)}[/dim]")

    try:
        reports = index_knowledge(
            _desk(name), documents=paths or [], qa=qa or [], sample=sample, on_progress=progress
        )
    except KeiriAgentError as error:
        raise _fail(error) from None
    failed = any(not report.ok for report in reports.values())
    if as_json:
        print_json(index_reports_json(reports))
    else:
        for report in reports.values():
            style = "green" if report.ok else "yellow"
            console.print(f"[{style}]{escape(report.summary())}[/] （{report.chunks} チャンク）")
            for failure in report.failed:
                console.print(
                    f"  [red]✗ {escape(failure.document)}[/red] [{failure.code}] "
                    f"{escape(failure.message)}"
                )
                if failure.hint:
                    console.print(f"    [yellow]ヒント:[/yellow] {escape(failure.hint)}")
            for skip in report.skipped:
                console.print(
                    f"  [yellow]- {escape(skip.path)}[/yellow] スキップ: {escape(skip.reason)}"
                )
    if failed:
        raise typer.Exit(code=1)


@helpdesk_app.command()
@needs("design")
def remove(
    documents: Annotated[list[str], typer.Argument(help="削除する文書名（status の表示どおり）")],
    collection: Annotated[
        str, typer.Option("--collection", help="manual（マニュアル）または qa（FAQ）。")
    ] = "manual",
    name: NameOption = "helpdesk",
    as_json: JsonOption = False,
) -> None:
    """ナレッジベースから文書を削除します（すべての索引から外れます）。"""
    try:
        report = _desk(name).remove(documents, collection)
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(escape(report.summary()))
        for failure in report.failed:
            console.print(f"  [red]✗ {escape(failure.document)}[/red] {escape(failure.message)}")
    if not report.ok:
        raise typer.Exit(code=1)


@helpdesk_app.command()
def status(name: NameOption = "helpdesk", as_json: JsonOption = False) -> None:
    """登録内容: 種類ごとの文書数・断片数と検索方法。"""
    from keiri_agent.agents.helpdesk.desk import RETRIEVER_LABELS
    from keiri_agent.services.knowledge import knowledge_status

    try:
        desk = _desk(name)
        state = knowledge_status(desk)
    except KeiriAgentError as error:
        raise _fail(error) from None
    synonyms_file = desk.synonyms_file
    if as_json:
        print_json({**state, "synonyms_file": str(synonyms_file)})
        return
    found = "あり" if synonyms_file.is_file() else "なし（作成すると同義語を追加できます）"
    console.print(f"同義語ファイル: {escape(str(synonyms_file))}（{found}）")
    stats, documents = state["stats"], state["documents"]
    if not stats:
        console.print(
            f"ナレッジベース '{name}' にはまだ文書が登録されていません。"
            "keiri-agent helpdesk index でマニュアルを登録してください"
            "（同梱のサンプルを試すには keiri-agent helpdesk index --sample）。"
        )
        return
    table = Table(title=f"ナレッジベース: {name}")
    for column in ("コレクション", "文書", "チャンク数", "登録日時"):
        table.add_column(column)
    for collection, entries in documents.items():
        for document, entry in sorted(entries.items()):
            table.add_row(collection, document, str(entry["chunks"]), _when(entry["indexed_at"]))
    console.print(table)
    console.print(f"埋め込み: {escape(state['embeddings'])}")
    for collection, retriever in state["retrievers"].items():
        line = f"検索方式 {collection}: {RETRIEVER_LABELS[retriever['retriever']]}"
        if retriever["reason"]:
            line += f"（{escape(retriever['reason'])}）"
        console.print(line)
    for collection, numbers in stats.items():
        if numbers["interrupted"]:
            console.print(
                f"[yellow]{collection}: 前回の登録が途中で止まったため未登録の文書:[/yellow] "
                + escape(", ".join(numbers["interrupted"]))
                + "（もう一度 keiri-agent helpdesk index を実行すると登録されます）"
            )


def _when(stamp: Any) -> str:
    """An ISO 8601 time as ``2026/11/27 13:00`` in the configured time zone."""
    from keiri_agent.shown_time import shown_time

    return shown_time(str(stamp), settings().plans.time_zone)


def _progress_printer(quiet: bool) -> Any:
    """Prints the agent's events as they arrive (they come from worker threads)."""
    lock = threading.Lock()

    def on_event(agent_event: Event) -> None:
        if quiet:
            return
        kind, event = agent_event.kind, agent_event.payload
        subtask = escape(str(event.get("subtask", "")))
        if kind == "plan":
            line = "計画: " + " / ".join(escape(str(s)) for s in event.get("subtasks", []))
        elif kind == "tool_results":
            found = sum(len(result.get("results", [])) for result in event.get("results", []))
            line = f"検索 #{event.get('attempt')} {subtask}: {found} 件"
        elif kind == "reflection":
            verdict = "OK" if event.get("is_completed") else "再検索"
            line = f"内省 #{event.get('attempt')} {subtask}: {verdict}"
            if event.get("advice") and not event.get("is_completed"):
                line += f" ({escape(str(event['advice']))[:80]})"
        elif kind == "subtask_done":
            line = "完了: " + escape(str(event["subtask"].get("task_name", "")))
        else:
            return
        with lock:
            err_console.print(f"[dim]· {line}[/dim]")

    return on_event


@helpdesk_app.command()
@needs("run")
def ask(
    question: Annotated[str, typer.Argument(help="質問（日本語または英語）")],
    name: NameOption = "helpdesk",
    as_json: JsonOption = False,
) -> None:
    """質問に答えます: 調べ方を決め、並行して検索し、確認して出典を示します。"""
    try:
        desk = _desk(name)
        if desk.settings.llm.is_offline and not as_json:
            err_console.print(
                "[bold yellow]オフラインモード[/bold yellow]"
                "（LLM 未設定: 質問を分割し、検索結果を引用して回答します）"
            )
        result = desk.ask(question, on_event=_progress_printer(as_json))
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json(helpdesk_answer_json(result))
        return
    from rich.markdown import Markdown

    console.print(Markdown(result.answer))
    for warning in result.warnings:
        err_console.print(f"[bold yellow]注意[/bold yellow]: {warning}")
