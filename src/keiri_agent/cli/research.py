"""``keiri-agent research``: a research question → a cited Markdown report; the session's notes.

    keiri-agent research "インボイス制度で当社の請求書フォーマットに必要な変更点を調べて"
    keiri-agent research --sample "…"                        # the bundled sample corpus only
    keiri-agent research "…" --kb manuals --session <id>     # named bases; continue a session
    keiri-agent research notes list                          # sessions with their note counts
    keiri-agent research notes show <session>
    keiri-agent research notes delete <session>

A question searches the workspace's knowledge bases (every one but the sample, or the
``--kb`` ones) and Azure AI Search and the web when configured. ``--sample`` indexes the
bundled research corpus (a fictional company's 経理規程, 経理部通知 and 請求書様式ガイド;
knowledge base ``research``, changed files only) and searches it alone, nothing else;
without it the sample is never searched. With nothing to search, the error says how to
index documents or to try ``--sample``. Progress goes to stderr, the report to stdout.
Exit codes: 0 success, 1 a reported failure, 2 a usage error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from keiri_agent.cli.common import console, err_console, needs, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.usage import JapaneseGroup, KeiriTyper
from keiri_agent.errors import KeiriAgentError, UserInputError

if TYPE_CHECKING:  # imported when a command runs: keeps other commands' start-up lean
    from keiri_agent.events import Event
    from keiri_agent.services.research import ResearchService


class _AskByDefault(JapaneseGroup):
    """``research "QUESTION"`` is ``research ask "QUESTION"``; ``research notes …`` stays a
    subcommand (a question that is exactly ``notes`` or ``ask`` needs ``research ask``)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["ask", *args]
        return super().parse_args(ctx, args)


research_app = KeiriTyper(
    name="research",
    cls=_AskByDefault,
    help="詳細調査: 質問 → 検索 → メモ → 出典付きの Markdown レポート"
    '（keiri-agent research "質問"、メモは research notes list|show|delete）。',
    no_args_is_help=True,
)
notes_app = KeiriTyper(name="notes", help="調査セッションが残したメモ。", no_args_is_help=True)
research_app.add_typer(notes_app, name="notes")

NO_SOURCE_HINT = (
    "keiri-agent helpdesk index 文書のファイルかフォルダー --name ナレッジベース名 で"
    "調べたい文書を登録してから、もう一度調査してください。試すだけなら、"
    'keiri-agent research --sample "質問" で同梱のサンプル資料（架空の会社の資料）を使えます。'
)
"""What to do when there is nothing to search (the core's hint names no command)."""
JsonOption = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]
SessionArgument = Annotated[
    str, typer.Argument(help="調査セッションの ID（research notes list の表示どおり）")
]


def _service() -> ResearchService:
    from keiri_agent.services.research import ResearchService

    return ResearchService(settings())


@research_app.command("ask")
@needs("run")
def research(
    question: Annotated[str, typer.Argument(help="調査したい質問（日本語または英語）")],
    kb: Annotated[
        list[str] | None,
        typer.Option(
            "--kb",
            help="検索するナレッジベース（複数指定可。既定: サンプル資料を除く登録済みのすべて）。",
        ),
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="このセッション（のメモ）から続けます。")
    ] = None,
    sample: Annotated[
        bool,
        typer.Option(
            "--sample/--no-sample",
            help="同梱のサンプル資料（架空の会社の経理規程・通知・請求書様式ガイド）を"
            "読み込み、それだけを検索します（ほかの資料・Azure AI Search・Web は使いません）。"
            "既定: 使わない。",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """ナレッジベース（設定があれば Azure AI Search・Web も）で QUESTION を調べます。
    --sample を付けると、同梱のサンプル資料だけで調べます。"""
    if not question.strip():
        err_console.print('調べたい内容を引数で指定してください（例: keiri-agent research "…"）')
        raise typer.Exit(code=2)
    try:
        service = _service()
        if sample:
            from keiri_agent.services.research import SAMPLE_KB, SAMPLE_NOTICE

            report = service.index_sample()
            err_console.print(f"サンプル資料を読み込みました: {report.summary()}")
            err_console.print(SAMPLE_NOTICE)
            kb = [SAMPLE_KB, *(kb or [])]
        result = service.research(
            question, kb_names=kb, session_id=session, on_event=_progress(as_json)
        )
    except KeiriAgentError as error:
        if error.code == "NO_RESEARCH_SOURCE":
            error.hint = NO_SOURCE_HINT
        if as_json:
            from keiri_agent.services.jsonforms import error_json

            print_json(error_json(error))
        raise _fail(error) from None
    if as_json:
        from keiri_agent.services.jsonforms import research_result_json

        print_json(research_result_json(result))
        return
    from rich.markdown import Markdown

    console.print(Markdown(result.report_md))
    err_console.print(f"セッション: {result.session_id}（ノート {len(result.notes)} 件）")


def _progress(quiet: bool) -> Callable[[Event], None]:
    from keiri_agent.agents.research.agent import progress_line

    def show(event: Event) -> None:
        if quiet:
            return
        line = progress_line(event)
        if line:
            err_console.print(f"· {escape(line)}")

    return show


@notes_app.command("list")
def list_sessions(as_json: JsonOption = False) -> None:
    """調査セッションの一覧（新しい順、メモの件数付き）。"""
    try:
        sessions = _service().sessions()
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json(
            [
                {"session_id": sid, "notes": count, "last": when.isoformat()}
                for sid, count, when in sessions
            ]
        )
        return
    if not sessions:
        console.print("ノートはまだありません。")
        return
    table = Table(title="調査セッション")
    for column in ("セッション", "ノート", "最終更新"):
        table.add_column(column)
    for sid, count, when in sessions:
        table.add_row(sid, str(count), f"{when:%Y-%m-%d %H:%M}")
    console.print(table)


@notes_app.command("show")
def show_session(session_id: SessionArgument, as_json: JsonOption = False) -> None:
    """SESSION_ID のメモを手順の順に表示します。"""
    try:
        notes = _service().notes(session_id)
        if not notes:
            raise UserInputError(
                f"セッション {session_id!r} のノートはありません",
                hint="keiri-agent research notes list でセッションを確認してください",
                code="RESEARCH_SESSION_NOT_FOUND",
            )
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        from keiri_agent.services.jsonforms import research_note_json

        print_json([research_note_json(note) for note in notes])
        return
    from rich.markdown import Markdown

    for note in notes:
        console.rule(f"[{note.step_no}] {escape(note.query)}")
        console.print(Markdown(note.summary_md or "（見つかりませんでした）"))
        for number, source in enumerate(note.sources, start=1):
            console.print(f"  {number}. {escape(source.label())}")


@notes_app.command("delete")
@needs("run")
def delete_session(session_id: SessionArgument, as_json: JsonOption = False) -> None:
    """SESSION_ID のメモをすべて削除します。"""
    try:
        deleted = _service().delete_session(session_id)
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json({"session_id": session_id, "deleted": deleted})
        return
    console.print(f"セッション {session_id} のノート {deleted} 件を削除しました。")
