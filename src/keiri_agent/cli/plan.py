"""``keiri-agent plan``: validate, dry-run, run, resume and re-run YAML Plans.

PLAN is a YAML file or a plan id under ``designs/``. Exit codes: 0 success (and a
run paused for input), 1 a reported failure (invalid plan, failed or cancelled
run, a run another process is running: ``RUN_IN_PROGRESS``, a damaged run state:
``RUN_STATE_CORRUPT``), 2 a usage error, 130 stopped by Ctrl-C (SIGINT) and 143
stopped by SIGTERM. With ``--json``, ``validate``, ``run``, ``resume`` and ``rerun``
also print a reported error on stdout as
``{"ok": false, "error": {"code", "message", "hint", "details"}}``.

Ctrl-C or SIGTERM during ``run`` / ``resume`` / ``rerun`` cancels the run: no new
node starts, the node in flight finishes (or, cooperative, stops), the run is
saved as ``cancelled`` and the command prints (in Japanese, on stderr) where it
stopped and the exact ``plan resume`` command. A second Ctrl-C stops at once; the
progress saved so far is kept (a run left ``running`` that way, or by a killed
process, is resumed the same way).

``run --file NAME=PATH`` (repeatable) hands a file to the Plan: to the var ``NAME`` that
feeds a file input, or as the answer of the ``file``/``files`` requirement ``NAME`` of a
``ui.interactive_input`` node (``services.plan_inputs.read_plan_files``: read within
the upload limit as ``{name, data}``; an unknown name lists the Plan's file inputs).

``run`` / ``resume`` use the ``--inputs`` answers first. When the run still pauses
and prompting is on (``--prompt``; by default when stdin and stdout are terminals
and ``--json`` is not given), the waiting nodes' fields are asked on the terminal
(``cli.prompts``) and the run is resumed with them until it is no longer paused.
EOF or Ctrl-C at a prompt leaves the run paused (exit 0, with the resume hint).

Binary outputs (a workbook, an uploaded file) are never printed as Python text
(the bytes convention of ``services.jsonforms``): ``--json`` shows bytes as
``{"bytes": n, "base64": "..."}`` and a file value ``{name, data}`` as
``{"name", "bytes", "base64"}``. With ``--out DIR`` they are written to DIR instead
(the file's own name, else ``<node>.<alias>`` with the extension its bytes show —
``.xlsx``, ``.docx``, ``.pdf``, ``.zip``, else ``.bin``) and the JSON / the summary show
``{"path", "bytes"}`` (plus ``"name"``).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer
from rich.markup import escape
from rich.table import Table

from keiri_agent.cli.common import console, err_console, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.design import design_app
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.services.exports import OutputWriter, check_out_folder, write_failed
from keiri_agent.services.jsonforms import (
    dry_run_json,
    error_json,
    run_result_json,
    validation_json,
)

if TYPE_CHECKING:  # imported when a command runs: keeps other commands' start-up lean
    from keiri_agent.events import Event
    from keiri_agent.people.roles import Person
    from keiri_agent.plans.dsl.models import Plan
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.plans.run.runner import RunResult

plan_app = KeiriTyper(
    name="plan",
    help="業務手順（YAML Plan）: 生成、登録、検査、試行、実行、再開、再実行。",
    no_args_is_help=True,
)

PlanArgument = Annotated[
    str, typer.Argument(help="Plan の YAML ファイル、または designs/ の Plan ID")
]
VarsOption = Annotated[
    list[str] | None,
    typer.Option("--var", help="Plan の変数を上書きします: NAME=VALUE（値は YAML）。"),
]
FilesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--file",
        metavar="NAME=PATH",
        help="Plan にファイルを渡します（繰り返し可）: ファイルを受け取る変数 NAME、または"
        "入力ノード（ui.interactive_input）のファイル項目 NAME へ。"
        "上限は KEIRI_AGENT_MAX_UPLOAD_MB。",
    ),
]
InputsOption = Annotated[
    Path | None,
    typer.Option("--inputs", help="入力ノードへの回答: YAML {node_id: {field: value}}。"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]
RunJsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="結果を JSON で出力します。バイナリ出力は "
        '{"bytes": n, "base64": "..."}（ファイルは {"name", "bytes", "base64"}）、'
        "--out 指定時はそのパスで示します。",
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="バイナリ出力（ブック・ファイル）の保存先フォルダー（なければ作成）。"
        "ファイル名はファイル自身の名前、なければ <node>.<alias> に中身に合った拡張子"
        "（.xlsx・.docx・.pdf・.zip、それ以外は .bin）。"
        "JSON と要約にはデータの代わりにパスを示します。",
    ),
]
PromptOption = Annotated[
    bool | None,
    typer.Option(
        "--prompt/--no-prompt",
        help="--inputs の後も回答待ちの入力ノードを端末で尋ねて実行を続けます。"
        "既定: 標準入出力が端末で --json がないときに有効。",
        show_default=False,
    ),
]


def _engine() -> PlanEngine:
    from keiri_agent.plans.engine import PlanEngine

    return PlanEngine(settings())


def _vars(items: list[str] | None) -> dict[str, Any]:
    """The --var values (YAML); a bad one is a usage error naming the variable (exit 2)."""
    from keiri_agent.services.plan_inputs import parse_var_assignments

    try:
        return parse_var_assignments(items)
    except UserInputError as error:
        message = f"{error.message}\nヒント: {error.hint}"
        raise typer.BadParameter(message, param_hint="--var") from None


def _files(items: list[str] | None, run_vars: Mapping[str, Any]) -> list[tuple[str, Path]]:
    """The --file assignments; without ``=``, or a name also given by --var, a usage
    error (exit 2)."""
    from keiri_agent.services.plan_inputs import parse_file_assignments

    try:
        assignments = parse_file_assignments(items)
    except UserInputError as error:
        message = f"{error.message}\nヒント: {error.hint}"
        raise typer.BadParameter(message, param_hint="--file") from None
    both = sorted({name for name, _ in assignments} & set(run_vars))
    if both:
        raise typer.BadParameter(
            f"{', '.join(both)} は --var と --file の両方で指定されています。"
            "どちらか一方にしてください",
            param_hint="--file",
        )
    return assignments


@plan_app.command()
def validate(plan: PlanArgument, as_json: JsonOption = False) -> None:
    """Plan を厳密に検査します: すべてのエラーと警告（YAML・スキーマ・Plan の規則）を、
    場所と直し方とともに 1 つのレポートで示します。"""
    from keiri_agent.services.plan_inputs import locate_plan

    try:
        engine = _engine()
        report = engine.check(locate_plan(engine.store, plan))
    except KeiriAgentError as error:
        if as_json:
            print_json(error_json(error))
        raise _fail(error) from None
    if as_json:
        print_json(validation_json(report))
    else:
        table = Table(
            title=f"{escape(plan)}: エラー {len(report.errors)} 件、警告 {len(report.warnings)} 件"
        )
        for column in ("", "コード", "ノード", "場所", "内容 / 直し方"):
            table.add_column(column)
        for issue in report.issues:
            mark = "[red]✗[/red]" if issue.severity == "error" else "[yellow]![/yellow]"
            text = escape(issue.message) + (
                f"\n[dim]{escape(issue.hint)}[/dim]" if issue.hint else ""
            )
            where = " ".join(
                part
                for part in (issue.path or "", f"（{issue.line} 行目）" if issue.line else "")
                if part
            )
            table.add_row(mark, issue.code, issue.node_id or "", where, text)
        if report.issues:
            console.print(table)
        console.print(
            "[green]OK[/green]: 問題はありません" if report.ok else "[red]エラーがあります[/red]"
        )
    if not report.ok:
        raise typer.Exit(code=1)


@plan_app.command("dry-run")
def dry_run_command(
    plan: PlanArgument, var: VarsOption = None, as_json: JsonOption = False
) -> None:
    """宣言されたサンプル値だけで Plan をたどります（ブロックは実行せず、副作用なし）。"""
    from keiri_agent.services.plan_inputs import load_plan

    run_vars = _vars(var)
    try:
        engine = _engine()
        report = engine.dry_run(load_plan(engine, plan), vars=run_vars)
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json(dry_run_json(report))
    else:
        table = Table(title=f"試行（dry run）: {escape(plan)}")
        for column in ("ノード", "ブロック", "状態", "問題"):
            table.add_column(column)
        for node in report.nodes:
            problems = "\n".join(f"{p.code}: {escape(p.message)}" for p in node.problems)
            style = {"ok": "green", "failed": "red"}.get(node.status, "dim")
            status = NODE_STATUS_WORDS.get(node.status, node.status)
            table.add_row(node.node_id, node.block or "", f"[{style}]{status}[/]", problems)
        console.print(table)
        for problem in report.problems:
            console.print(f"[red]{problem.code}[/red] {escape(problem.message)}")
        for warning in report.warnings:
            hint = f"\n  [dim]{escape(warning.hint)}[/dim]" if warning.hint else ""
            console.print(f"[yellow]! {warning.code}[/yellow] {escape(warning.message)}{hint}")
        console.print(
            "[green]試行 OK[/green]: 問題はありません"
            if report.ok
            else "[red]試行で問題が見つかりました[/red]"
        )
    if not report.ok:
        raise typer.Exit(code=1)


EVENT_WORDS = {
    "plan_start": "開始",
    "plan_resumed": "再開",
    "node_start": "実行中",
    "node_complete": "完了",
    "node_skipped": "スキップ",
    "loop_iteration": "繰り返し",
    "node_error": "エラー",
    "node_waiting": "入力待ち",
    "plan_paused": "一時停止（入力待ち）",
    "plan_complete": "終了",
}
"""A run-log event in words for the terminal (the log itself keeps the event names)."""


def _event_line(event: Event) -> str:
    payload = event.payload
    node_id = payload.get("node_id")
    title = payload.get("title")
    words = [EVENT_WORDS.get(event.kind, event.kind)]
    if node_id:
        words.append(f"{node_id}（{title}）" if title else str(node_id))
    if event.kind == "node_error":
        error = payload.get("error") or {}
        again = "、再試行します" if payload.get("will_retry") else ""
        words.append(f"[{error.get('code')}] {error.get('message')}{again}")
    elif event.kind == "node_skipped":
        words.append("（条件が成り立たないため）")
    elif event.kind == "loop_iteration" and payload.get("iteration") is not None:
        words.append(f"{payload['iteration']} 回目")
    elif event.kind == "plan_complete":
        status = str(payload.get("status") or "")
        words.append(RUN_STATUS_WORDS.get(status, status))
    return " ".join(words)


def _progress(quiet: bool) -> Any:
    def on_event(event: Event) -> None:
        if not quiet:
            err_console.print(f"· {_event_line(event)}", style="dim", markup=False)

    return on_event


RUN_STATUS_WORDS = {
    "success": "成功",
    "paused": "入力待ち",
    "failed": "失敗",
    "cancelled": "中止",
    "running": "実行中",
}
NODE_STATUS_WORDS = {"ok": "OK", "failed": "失敗", "skipped": "スキップ"}


def _show_waiting(waiting: Mapping[str, Any]) -> None:
    """A paused node's request in words: its message, then each field it asks."""
    from keiri_agent.cli.prompts import field_notes, request_fields

    request = waiting.get("request")
    request = request if isinstance(request, Mapping) else {}
    message = str(request.get("message") or request.get("question") or "")
    console.print(
        f"[yellow]入力待ち[/yellow] {escape(str(waiting['node_id']))} "
        f"({escape(str(waiting.get('block') or ''))}): {escape(message)}"
    )
    for field in request_fields(request):
        label = str(field.get("label") or field["id"])
        console.print(
            f"  - {escape(str(field['id']))}: {escape(label)}（{escape(field_notes(field))}）"
        )


def _report_run(result: RunResult, as_json: bool, out: Path | None = None) -> None:
    writer = OutputWriter(out) if out is not None else None
    write_error: UserInputError | None = None
    try:
        form = run_result_json(result, writer=writer)
    except OSError as os_error:
        assert out is not None
        write_error = write_failed(
            out, os_error, what="出力", kept=f"実行 {result.run_id} は保存されています"
        )
        writer = None
        form = run_result_json(result)
    if as_json:
        print_json(form)
    else:
        style = {"success": "green", "paused": "yellow"}.get(result.status, "red")
        status = RUN_STATUS_WORDS.get(result.status, result.status)
        console.print(  # one line: the log's path stays whole to copy
            f"[{style}]{status}[/] 実行 {result.run_id}（記録: {escape(str(result.log_path))}）",
            soft_wrap=True,
        )
        for where, path in writer.written if writer is not None else []:
            console.print(f"[green]保存しました[/green] {escape(where)} → {escape(str(path))}")
        for error in result.errors:
            node = (error.get("details") or {}).get("node_id")
            console.print(f"[red]✗ {node}[/red] [{error['code']}] {escape(error['message'])}")
            if error.get("hint"):
                console.print(f"  [yellow]ヒント:[/yellow] {escape(error['hint'])}")
        for waiting in result.waiting:
            _show_waiting(waiting)
        if result.waiting:
            console.print(
                f"続けるには: keiri-agent plan resume {result.run_id} --inputs answers.yaml"
            )
        if result.status == "failed" and result.errors:
            node = (result.errors[0].get("details") or {}).get("node_id") or "ノードID"
            console.print(
                f"入力を直してやり直すには: keiri-agent plan rerun {result.run_id} --from {node}"
            )
    if write_error is not None:
        raise _fail(write_error)
    if result.status in ("failed", "cancelled"):
        raise typer.Exit(code=1)


class _Interrupt:
    """SIGINT/SIGTERM during a run: the first cancels it (cooperatively), a second
    stops at once. ``run_id`` is the run seen in the events (for the message)."""

    EXIT_CODES: ClassVar[dict[int, int]] = {signal.SIGINT: 130, signal.SIGTERM: 143}

    def __init__(self) -> None:
        self.cancel = threading.Event()
        self.signum: int | None = None
        self.run_id: str | None = None

    def handle(self, signum: int, frame: Any) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum
        self.cancel.set()
        err_console.print(
            "\n[yellow]中断しています…[/yellow] 実行中のノードが終わるのを待ってから、"
            "進み具合を保存して止めます（すぐに止めるには、もう一度 Ctrl-C）。"
        )

    def watch(self, on_event: Any) -> Any:
        def watched(event: Event) -> None:
            self.run_id = self.run_id or event.run_id
            on_event(event)

        return watched

    def exit_code(self) -> int:
        return self.EXIT_CODES.get(self.signum or signal.SIGINT, 130)


@contextmanager
def _interruptible() -> Iterator[_Interrupt]:
    """SIGINT/SIGTERM handled by an ``_Interrupt`` while the block runs (main thread)."""
    interrupt = _Interrupt()
    if threading.current_thread() is not threading.main_thread():
        yield interrupt
        return
    previous = {sig: signal.signal(sig, interrupt.handle) for sig in interrupt.EXIT_CODES}
    try:
        yield interrupt
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stopped_by_signal(result: RunResult | None, interrupt: _Interrupt) -> typer.Exit:
    """Where the run stopped and how to go on (stderr), then the signal's exit code."""
    run_id = result.run_id if result is not None else interrupt.run_id
    if result is not None:
        err_console.print(f"[yellow]実行 {run_id} を中断し、「中断」として保存しました。[/yellow]")
        places = [
            item["node_id"]
            + (
                f"（繰り返し {item['iterations_done']} 件完了）"
                if item.get("iterations_done") is not None
                else ""
            )
            for item in result.unfinished
        ]
        if places:
            err_console.print(f"止まった位置: {escape('、'.join(places))}")
    else:
        err_console.print(
            f"[yellow]実行 {run_id or ''} をすぐに止めました。[/yellow]"
            "終わったノード・繰り返しまでは保存されています。"
        )
    if run_id:
        err_console.print(
            f"続きから再開するには: keiri-agent plan resume {run_id}"
            "（終わったノードはもう一度実行されません）"
        )
    return typer.Exit(code=interrupt.exit_code())


def _run_failed(error: KeiriAgentError, as_json: bool) -> typer.Exit:
    """A run/resume that could not go on (e.g. RUN_IN_PROGRESS: another process is
    running it): the error on stderr and, with --json, its JSON form on stdout."""
    if as_json:
        print_json(error_json(error))
    return _fail(error)


def _prompting(prompt: bool | None, as_json: bool) -> bool:
    """--prompt/--no-prompt as given; by default on for a terminal without --json."""
    if prompt is not None:
        return prompt
    return not as_json and sys.stdin.isatty() and sys.stdout.isatty()


Answerer = tuple["Person", str] | None
"""Who answers at the command line and who started the run, when people are registered;
None on one person's install (nothing is checked there)."""


def _answerer(engine: PlanEngine, run_id: str | None) -> Answerer:
    """The OS user's person and the login of who started ``run_id`` (as the run service
    or the run's state recorded it); for a run about to start (``run_id`` None), the OS
    user."""
    from keiri_agent.people.operator import team_at_command_line
    from keiri_agent.runs.store import RunStore

    found = team_at_command_line(settings())
    if found is None:
        return None
    person, accounts = found
    if run_id is None:
        return person, person.login
    known = RunStore(accounts.engine).get(run_id)
    if known is not None and known.owner:
        return person, known.owner
    return person, engine.saved_state(run_id).started_by


def _check_answers(
    engine: PlanEngine, plan: Plan | None, run_id: str, answers: dict[str, Any], answerer: Answerer
) -> None:
    """Refuse answers the person at the command line may not give (an approval step
    under its rule, another person's run): the same check as the API's. ``plan``: the
    run's (None: read from its saved state, only when there is something to check)."""
    if answerer is None or not answers:
        return
    from keiri_agent.services.plan_runs import check_answerer, refuse_early_approvals

    checked = plan if plan is not None else engine.saved_plan(run_id)
    check_answerer(checked, run_id, answers, *answerer)
    waiting = {str(w["node_id"]) for w in engine.runner.result(run_id).waiting} if run_id else set()
    refuse_early_approvals(checked, answers, waiting)


def _answer_by_prompts(
    engine: PlanEngine,
    result: RunResult,
    given: dict[str, Any],
    on_event: Any,
    answerer: Answerer,
) -> RunResult:
    """Ask the waiting nodes on the terminal and resume until the run is not paused."""
    from keiri_agent.cli.prompts import PromptAborted, ask_waiting

    known = {str(key): dict(value) for key, value in given.items() if isinstance(value, dict)}
    while result.status == "paused" and result.waiting:
        try:
            answers = ask_waiting(result.waiting, known)
        except PromptAborted:
            err_console.print(
                "\n[yellow]入力を中断しました[/yellow]（実行は一時停止のまま保存されています）"
            )
            return result
        if not answers:
            return result
        known.update(answers)
        _check_answers(engine, None, result.run_id, answers, answerer)
        result = engine.resume(result.run_id, answers=answers, on_event=on_event)
    return result


@plan_app.command()
def run(
    plan: PlanArgument,
    var: VarsOption = None,
    file: FilesOption = None,
    inputs: InputsOption = None,
    as_json: RunJsonOption = False,
    prompt: PromptOption = None,
    out: OutOption = None,
) -> None:
    """Plan を検査して実行します。入力ノードに回答がなければ一時停止します（または尋ねます）。

    尋ねる設定のときは未回答の入力ノードを端末で尋ねて実行を続け、そうでなければ
    一時停止して再開方法を表示します。バイナリ出力（ブック・ファイル）は --out DIR
    があればそこへ、なければ --json の base64 に含めます。ファイルの入力には
    --file NAME=PATH で渡せます（例: --file sales_csv=売上.csv）。
    """
    from keiri_agent.services.plan_inputs import load_plan, read_answers, read_plan_files

    run_vars = _vars(var)
    assignments = _files(file, run_vars)

    def call(engine: PlanEngine, interrupt: _Interrupt) -> RunResult:
        loaded = load_plan(engine, plan)
        files = read_plan_files(engine, loaded, assignments)
        answers = files.answers_with(read_answers(inputs))
        from keiri_agent.people.operator import os_login

        answerer = _answerer(engine, None)
        _check_answers(engine, loaded, "", answers, answerer)
        on_event = interrupt.watch(_progress(as_json))
        result = engine.run(
            loaded,
            vars={**run_vars, **files.vars},
            answers=answers,
            on_event=on_event,
            cancel_event=interrupt.cancel,
            started_by=answerer[1] if answerer is not None else os_login(),
        )
        if _prompting(prompt, as_json) and interrupt.signum is None:
            result = _answer_by_prompts(engine, result, answers, on_event, answerer)
        return result

    _interruptible_run(call, run_id=None, as_json=as_json, out=out)


def _interruptible_run(
    call: Callable[[PlanEngine, _Interrupt], RunResult],
    *,
    run_id: str | None,
    as_json: bool,
    out: Path | None,
) -> None:
    """``call(engine, interrupt)`` under SIGINT/SIGTERM handling, then the report: what
    ``plan run``, ``resume`` and ``rerun`` share."""
    from keiri_agent.people.operator import require_at_command_line

    with _interruptible() as interrupt:
        interrupt.run_id = run_id
        try:
            require_at_command_line(settings(), "run")
            check_out_folder(out)
            result = call(_engine(), interrupt)
        except KeiriAgentError as error:
            raise _run_failed(error, as_json) from None
        except KeyboardInterrupt:
            raise _stopped_by_signal(None, interrupt) from None
    _finish(result, as_json, out, interrupt)


def _finish(result: RunResult, as_json: bool, out: Path | None, interrupt: _Interrupt) -> None:
    """Report the run; after a signal, say where it stopped and exit with its code."""
    if interrupt.signum is None:
        _report_run(result, as_json, out)
        return
    with suppress(typer.Exit):  # a cancelled run exits 1: the signal's code wins
        _report_run(result, as_json, out)
    raise _stopped_by_signal(result, interrupt)


@plan_app.command()
def resume(
    run_id: Annotated[str, typer.Argument(help="plan run が表示した実行 ID")],
    inputs: InputsOption = None,
    as_json: RunJsonOption = False,
    prompt: PromptOption = None,
    out: OutOption = None,
) -> None:
    """一時停止した実行を、回答待ちノードへの回答で再開します（または尋ねます）。

    尋ねる設定のときは --inputs の後も回答待ちのノードを端末で尋ねて実行を続けます。
    バイナリ出力は --out DIR があればそこへ、なければ --json の base64 に含めます。
    """
    from keiri_agent.services.plan_inputs import read_answers

    def call(engine: PlanEngine, interrupt: _Interrupt) -> RunResult:
        answers = read_answers(inputs)
        answerer = _answerer(engine, run_id)
        _check_answers(engine, None, run_id, answers, answerer)
        on_event = _progress(as_json)
        result = engine.resume(
            run_id, answers=answers, on_event=on_event, cancel_event=interrupt.cancel
        )
        if _prompting(prompt, as_json) and interrupt.signum is None:
            result = _answer_by_prompts(engine, result, answers, on_event, answerer)
        return result

    _interruptible_run(call, run_id=run_id, as_json=as_json, out=out)


@plan_app.command()
def rerun(
    run_id: Annotated[str, typer.Argument(help="plan run が表示した実行 ID")],
    from_node: Annotated[
        str,
        typer.Option(
            "--from",
            help="再実行する最上位のノード。その下流のノードもすべて再実行します。",
        ),
    ],
    var: VarsOption = None,
    inputs: InputsOption = None,
    as_json: RunJsonOption = False,
    out: OutOption = None,
) -> None:
    """以前の実行のノードを（入力を直した後などに）下流ごと再実行します。
    ほかの完了済みノードは出力を保ちます。"""
    from keiri_agent.services.plan_inputs import read_answers

    run_vars = _vars(var)

    def call(engine: PlanEngine, interrupt: _Interrupt) -> RunResult:
        answers = read_answers(inputs)
        _check_answers(engine, None, run_id, answers, _answerer(engine, run_id))
        return engine.runner.rerun_from_node(
            run_id,
            from_node,
            answers=answers,
            vars=run_vars,
            on_event=_progress(as_json),
            cancel_event=interrupt.cancel,
        )

    _interruptible_run(call, run_id=run_id, as_json=as_json, out=out)


@plan_app.command()
def migrate(
    plan: PlanArgument,
    write: Annotated[
        bool,
        typer.Option(
            "--write", help="ファイルを書き換えます（元のファイルは .bak として残します）。"
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """旧 UI ブロック（ui.file_uploader・ui.confirmation）を ui.interactive_input に書き換えます。

    変更点と差分を表示します。ファイルは --write のときだけ変わります。MANUAL で
    始まる行は手作業が必要です（残りは検査で指摘されます）。
    """
    import difflib

    from keiri_agent.plans.dsl.migrate import migrate_plan_text
    from keiri_agent.services.plan_inputs import read_plan_text

    try:
        path, text = read_plan_text(_engine().store, plan)
        new_text, changes = migrate_plan_text(text)
        backup = path.with_name(path.name + ".bak")
        written = bool(write and changes)
        if written:
            backup.write_text(text, encoding="utf-8")
            path.write_text(new_text, encoding="utf-8")
    except KeiriAgentError as error:
        raise _fail(error) from None
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path),
            tofile=f"{path} (migrated)",
        )
    )
    if as_json:
        print_json(
            {
                "path": str(path),
                "changed": bool(changes),
                "changes": changes,
                "diff": diff,
                "written": written,
                "backup": str(backup) if written else None,
            }
        )
        return
    if not changes:
        console.print(f"[green]nothing to migrate[/green] in {path}")
        return
    for change in changes:
        style = "yellow" if change.startswith("MANUAL") else "green"
        console.print(f"[{style}]·[/] {escape(change)}")
    console.print(escape(diff), highlight=False, soft_wrap=True)
    if written:
        console.print(f"[green]書き込みました[/green] {path}（元の版: {backup}）")
    else:
        console.print("確認のみ: 書き込んでいません（書き込むには --write を付けてください）")


plan_app.add_typer(design_app)  # plan generate / register / templates (cli.design)
