"""Commands: ``demo``, ``analyze``, ``ui``, ``serve``, ``purge``, and the groups ``helpdesk``,
``plan``, ``research``, ``schedule`` and ``blocks``.

Exit codes: 0 success, 1 a reported failure (bad file, bad spec, LLM error),
2 a usage error (in Japanese: cli/usage.py).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from keiri_agent.cli.blocks import blocks_app
from keiri_agent.cli.child import run_child
from keiri_agent.cli.collector import collect_as_usual
from keiri_agent.cli.common import console, err_console, needs, print_json
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.common import settings as common_settings
from keiri_agent.cli.helpdesk import helpdesk_app
from keiri_agent.cli.plan import plan_app
from keiri_agent.cli.research import research_app
from keiri_agent.cli.schedule import schedule_app
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.cli.users import audit_app, users_app
from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.services.exports import (
    check_out_folder,
    write_failed,
    write_figures,
    write_report,
)
from keiri_agent.services.jsonforms import spec_results_json, turn_json
from keiri_agent.services.user_files import read_specs

if TYPE_CHECKING:  # imported when a command runs: keeps other commands' start-up lean
    from keiri_agent.agents.analysis import AnalysisAgent, TurnResult
    from keiri_agent.config import Settings
    from keiri_agent.services.retention import PurgeReport

app = KeiriTyper(
    name="keiri-agent",
    help="経理・バックオフィス向けの LLM エージェント: "
    "データ分析、ヘルプデスク、業務手順（YAML Plan）。",
    no_args_is_help=True,
)


@app.callback()
def _options(
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="ログを標準エラーに表示します: -v は各ステップ（INFO）、-vv は詳細（DEBUG）。",
        ),
    ] = 0,
) -> None:
    """全コマンド共通のオプション。"""
    from keiri_agent.logs import configure_logging

    try:
        settings = common_settings()
    except (KeiriAgentError, ValueError):  # bad settings: the command itself reports them
        configure_logging("INFO" if verbose == 1 else "DEBUG" if verbose else "WARNING")
        return
    level = ("INFO" if verbose == 1 else "DEBUG") if verbose else settings.logs.log_level
    configure_logging(level, pii_kinds=settings.logs.pii_filter)


def _banner(settings: Settings, *, quiet: bool) -> None:
    if quiet:
        return
    if settings.llm.is_offline:
        err_console.print(
            "[bold yellow]オフラインモード[/bold yellow]（LLM 未設定: ルールベースで判断します）"
        )
    else:
        err_console.print(f"[dim]LLM: {settings.describe()}[/dim]")


STEP_LABELS = {"reason": "判断", "act": "実行", "out_of_scope": "範囲外応答", "report": "レポート"}
NEXT_ACTION_LABELS = {"act": "実行", "finalize": "まとめ", "ask": "確認", "out_of_scope": "範囲外"}


def _act_detail(payload: Mapping[str, Any]) -> str:
    """What an ``act`` step did, in words: the tables/figures made or the error met."""
    parts = []
    for action in payload.get("actions") or []:
        if action.get("ok"):
            made = "".join(f"「{title}」" for title in action.get("titles") or [])
            parts.append(f"{made}を作成しました" if made else "実行しました（結果なし）")
        else:
            parts.append(f"エラー: {(action.get('error') or {}).get('message', '')}")
    return " / ".join(parts) or "実行するものがありませんでした"


def _progress_printer(quiet: bool) -> Any:
    def on_event(event: Event) -> None:
        if quiet:
            return
        node, update = event.kind, event.payload
        label, detail = STEP_LABELS.get(node, node), ""
        if node == "reason":
            step = str(update.get("next_action"))
            label += f"（{NEXT_ACTION_LABELS.get(step, step)}）"
            detail = update.get("rationale") or ""
        elif node == "act":
            detail = _act_detail(update)
        err_console.print(f"· {label} {detail}".rstrip(), style="dim", markup=False)

    return on_event


@app.command(epilog='例: keiri-agent analyze sales.csv "地域別の売上合計"')
@needs("run")
def analyze(
    file: Annotated[Path, typer.Argument(help="分析するファイル（CSV・TSV・XLSX）")],
    question: Annotated[str | None, typer.Argument(help="依頼内容（日本語または英語）")] = None,
    spec: Annotated[
        Path | None,
        typer.Option(help="分析仕様（または仕様の JSON リスト）を判断なしで直接実行します。"),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(help="会話 ID。同じ ID で続けます（質問への回答など）。"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="report.md と figures/*.png の保存先フォルダー（なければ作成）。"),
    ] = None,
    sheet: Annotated[
        str | None, typer.Option(help="Excel のシート名、または 0 から数えたシート番号。")
    ] = None,
    keep_total_rows: Annotated[
        bool,
        typer.Option(help="表の合計行（合計・小計 …）を残します。既定では除外します。"),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")] = False,
) -> None:
    """データファイルについて質問します。レポートの再現要約の仕様を実行することもできます。"""
    from keiri_agent.agents.analysis import AnalysisAgent

    if (question is None) == (spec is None):
        raise typer.BadParameter(
            "質問（QUESTION）か --spec SPECS.json のどちらか一方を指定してください"
        )
    try:
        settings = common_settings()
        check_out_folder(out)
        specs = read_specs(spec) if spec is not None else []
    except KeiriAgentError as error:
        raise _fail(error) from None
    _banner(settings, quiet=as_json)
    sheet_choice: str | int | None = (
        int(sheet) if sheet and sheet.isascii() and sheet.isdigit() else sheet
    )
    try:
        with AnalysisAgent(settings) as agent:
            dataset_id = agent.load_file(file, sheet=sheet_choice, keep_total_rows=keep_total_rows)
            if not as_json:
                for note in agent.registry.summary(dataset_id).get("notes", []):
                    err_console.print(f"[dim]· {escape(note)}[/dim]")
            if spec is not None:
                _run_specs(agent, specs, dataset_id, out, as_json)
                return
            assert question is not None
            turn = agent.ask(
                question,
                dataset_id=dataset_id,
                thread_id=thread,
                on_event=_progress_printer(as_json),
            )
    except KeiriAgentError as error:
        raise _fail(error) from None
    _show_turn(turn, file, out, as_json)


def _run_specs(
    agent: AnalysisAgent,
    specs: list[dict[str, Any]],
    dataset_id: str,
    out: Path | None,
    as_json: bool,
) -> None:
    """``analyze --spec``: run the specs, write their figures to ``out``, show the results."""
    from keiri_agent.cli.render import render_artifact

    results = agent.run_specs(specs, dataset_id)
    artifacts = [a for result in results for a in result.artifacts]
    files: dict[str, Path] = {}
    write_error: KeiriAgentError | None = None
    if out:
        try:
            files = write_figures(artifacts, out)
        except OSError as error:
            write_error = write_failed(out, error, what="結果", kept="結果は上に表示しています")
    if as_json:
        print_json(spec_results_json(dataset_id, results, files))
    else:
        for artifact in artifacts:
            render_artifact(console, artifact, files)
    if write_error is not None:
        raise _fail(write_error)


def _show_turn(turn: TurnResult, file: Path, out: Path | None, as_json: bool) -> None:
    """Write the turn's report and figures to ``out``, then show the turn."""
    files: dict[str, Path] = {}
    report_path: Path | None = None
    write_error: KeiriAgentError | None = None
    if out:
        try:
            report_path, files = write_report(
                out, turn.report_md, turn.artifacts + turn.report_artifacts
            )
        except OSError as error:
            write_error = write_failed(out, error, what="結果", kept="結果は上に表示しています")
    if as_json:
        print_json(turn_json(turn, files))
    else:
        from keiri_agent.cli.render import render_artifact, render_markdown

        for artifact in turn.artifacts:
            render_artifact(console, artifact, files)
        render_markdown(console, turn.reply)
        if turn.next_action == "ask" or turn.report_md is None:
            again = f'keiri-agent analyze {shlex.quote(str(file))} "回答" --thread {turn.thread_id}'
            # one unwrapped line, as written: a command to copy
            console.print(f"\n続けるには: {again}", style="dim", markup=False, soft_wrap=True)
        if report_path is not None:
            console.print(f"\n[green]レポートを保存しました:[/green] {report_path}")
    if write_error is not None:
        raise _fail(write_error)


@app.command()
def demo(
    out: Annotated[
        Path,
        typer.Option(
            help="report.md・figures/・evidence_summary.xlsx・helpdesk_answer.md の"
            "保存先フォルダー。"
        ),
    ] = Path("out/demo"),
    data: Annotated[
        Path | None, typer.Option(help="データファイル（既定: 同梱の売上サンプル）。")
    ] = None,
) -> None:
    """同梱データでのデモ: 分析レポート、サンプル Plan、ヘルプデスク
    （API キーなしはオフライン）。"""
    from keiri_agent.demo import run_demo

    try:
        settings = common_settings()
        report_path = run_demo(out_dir=out, data_path=data, console=console, settings=settings)
    except KeiriAgentError as error:
        raise _fail(error) from None
    console.print(f"\n[bold green]レポート:[/bold green] {report_path}")


@app.command()
def serve(
    host: Annotated[
        str,
        typer.Option(
            help="待ち受けるアドレス。127.0.0.1 以外は KEIRI_AGENT_API_TOKEN が必要です。"
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="待ち受けるポート番号。")] = 8000,
    workers: Annotated[
        int,
        typer.Option(min=1, max=32, help="サーバーのプロセス数（実行状態は PostgreSQL で共有）。"),
    ] = 1,
) -> None:
    """HTTP API と Web 画面（/）を起動します（画面は make web で作成、API の説明は /docs）。"""
    from keiri_agent.api.server import check_startup
    from keiri_agent.api.server import serve as run_server

    collect_as_usual()  # a server lives long: the usual collection rhythm
    try:
        settings = common_settings()
        check_startup(settings, host=host, workers=workers)
        err_console.print(
            f"API: http://{host}:{port}  （説明: http://{host}:{port}/docs ・ 終了: Ctrl+C）"
        )
        run_server(settings, host=host, port=port, workers=workers)
    except KeiriAgentError as error:
        raise _fail(error) from None


@app.command()
def worker(
    concurrency: Annotated[
        int | None,
        typer.Option(
            min=1, max=64, help="同時に実行する数（既定: KEIRI_AGENT_RUN_CONCURRENCY の値）。"
        ),
    ] = None,
) -> None:
    """実行キュー（PostgreSQL）の調査・Plan の実行を受け取って実行します（複数台で起動可）。"""
    from keiri_agent.runs.queue import queue_conninfo
    from keiri_agent.runs.worker import run_worker

    collect_as_usual()
    try:
        settings = common_settings()
        queue_conninfo(settings)  # no queue without PostgreSQL: said before anything starts
        if concurrency is not None:
            settings = settings.with_values(run_concurrency=concurrency)
        err_console.print(
            f"実行ワーカー: 同時に {settings.runs.run_concurrency} 件まで実行します（終了: Ctrl+C）"
        )
        run_worker(settings)
    except KeiriAgentError as error:
        raise _fail(error) from None


@app.command()
def ui(
    port: Annotated[int, typer.Option(help="待ち受けるポート番号。")] = 8501,
    host: Annotated[str, typer.Option(help="待ち受けるアドレス。")] = "127.0.0.1",
) -> None:
    """Streamlit アプリ（データ分析・ヘルプデスク・実行）を起動します。"""
    from keiri_agent.ui import TOOLBAR_MODE

    try:
        upload_mb = common_settings().inputs.max_upload_mb
    except KeiriAgentError as error:
        raise _fail(error) from None
    script = Path(__file__).resolve().parent.parent / "ui" / "app.py"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.port",
        str(port),
        "--server.address",
        host,
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        TOOLBAR_MODE,
        "--server.maxUploadSize",  # Streamlit's own limit (200 MB) matches ours
        str(upload_mb),
    ]
    # One BLAS thread per process: analysis actions run in forked children (see isolation.py).
    env = {
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        **os.environ,
    }
    raise typer.Exit(run_child(command, env))


@app.command(epilog="例: keiri-agent purge（対象の確認だけ）、keiri-agent purge --yes（削除）")
@needs("change_settings")
def purge(
    days: Annotated[
        int | None,
        typer.Option(
            help="保存期間（日数）。これより古いものが対象です。"
            "既定: KEIRI_AGENT_RETENTION_DAYS（30 日）。"
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="削除します。付けなければ、削除の対象を表示するだけです。")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")] = False,
) -> None:
    """保存期間を過ぎた実行記録・保存ファイル・会話・調査メモ・回答履歴を削除します。

    --yes がなければ何も削除せず、種類ごとに削除の対象（件数・容量・最も古い日時）を
    表示します。実行中の Plan の実行は削除しません。
    """
    from keiri_agent.services.retention import purge as purge_workspace

    try:
        report = purge_workspace(common_settings(), days=days, dry_run=not yes)
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json(report.to_dict())
    else:
        _show_purge(report)
    errors = report.errors
    if errors:
        for problem in errors[:-1]:
            _fail(problem)
        raise _fail(errors[-1])


def _show_purge(report: PurgeReport) -> None:
    """The purge report in Japanese: per kind, how many, how large, the oldest."""
    from keiri_agent.shown_time import shown_day, shown_time

    zone = common_settings().plans.time_zone
    cutoff = shown_time(report.cutoff, zone)
    console.print(f"保存期間 {report.days} 日: {cutoff} より前のものが対象です。", markup=False)
    if report.total:
        console.print(
            "削除の対象（まだ削除していません）:" if report.dry_run else "削除しました:",
            markup=False,
        )
    else:
        console.print("保存期間を過ぎたものはありません。", markup=False)
    for kind in report.kinds.values():
        if not kind.count:
            continue
        size = "" if kind.bytes is None else f"、{_size_text(kind.bytes)}"
        oldest = f"、最も古いもの {shown_day(kind.oldest, zone)}" if kind.oldest else ""
        console.print(f"  {kind.label}: {kind.count} 件{size}{oldest}", markup=False)
    if report.kept:
        console.print("残したもの（保存期間を過ぎています）:", markup=False)
        for item in report.kept:
            label = report.kinds[item.kind].label
            console.print(f"  {label} {item.item}: {item.message}", markup=False, soft_wrap=True)
    if report.dry_run and report.total:
        console.print("削除するには keiri-agent purge --yes を実行してください。", markup=False)


def _size_text(size: int) -> str:
    if size < 1024:
        return f"{size} バイト"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


app.add_typer(blocks_app, name="blocks")
app.add_typer(plan_app, name="plan")
app.add_typer(helpdesk_app, name="helpdesk")
app.add_typer(research_app, name="research")
app.add_typer(schedule_app, name="schedule")
app.add_typer(users_app, name="users")
app.add_typer(audit_app, name="audit")
