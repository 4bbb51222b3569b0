"""``keiri-agent plan``: validate, dry-run, run and resume YAML Plans.

PLAN is a YAML file or a plan id under ``designs/``. Exit codes: 0 success (and a
run paused for input), 1 a reported failure (invalid plan, failed or cancelled
run), 2 a usage error.

``run`` / ``resume`` use the ``--inputs`` answers first. When the run still pauses
and prompting is on (``--prompt``; by default when stdin and stdout are terminals
and ``--json`` is not given), the waiting nodes' fields are asked on the terminal
(``cli.prompts``) and the run is resumed with them until it is no longer paused.
EOF or Ctrl-C at a prompt leaves the run paused (exit 0, with the resume hint).

Binary outputs (a workbook, an uploaded file) are never printed as Python text:
``--json`` shows bytes as ``{"bytes": n, "base64": "..."}`` and a file value
``{name, data}`` as ``{"name", "bytes", "base64"}``. With ``--out DIR`` they are
written to DIR instead (the file's own name, else ``<node>.<alias>.bin``) and the
JSON / the summary show ``{"path", "bytes"}`` (plus ``"name"``).
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from rich.markup import escape
from rich.table import Table

from keiri_agent.cli.common import console, err_console
from keiri_agent.cli.common import fail as _fail
from keiri_agent.errors import KeiriAgentError, UserInputError

if TYPE_CHECKING:  # imported when a command runs: keeps other commands' start-up lean
    from keiri_agent.events import Event
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.plans.run.runner import RunResult

plan_app = typer.Typer(
    name="plan",
    help="Business procedures as YAML Plans: validate, dry-run, run, resume.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

PlanArgument = Annotated[str, typer.Argument(help="Plan YAML file, or a plan id in designs/.")]
VarsOption = Annotated[
    list[str] | None, typer.Option("--var", help="Override a plan var: NAME=VALUE (YAML value).")
]
InputsOption = Annotated[
    Path | None,
    typer.Option("--inputs", help="Answers for input nodes: YAML {node_id: {field: value}}."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
RunJsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the result as JSON. Binary outputs appear as "
        '{"bytes": n, "base64": "..."} ({"name", "bytes", "base64"} for a file), '
        "or as their paths with --out.",
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Folder to write binary outputs to (workbooks, files; created if missing). "
        "File names: the file's own name, else <node>.<alias>.bin; the JSON and the "
        "summary show the paths instead of the data.",
    ),
]
PromptOption = Annotated[
    bool | None,
    typer.Option(
        "--prompt/--no-prompt",
        help="Ask input nodes still waiting after --inputs on the terminal and continue "
        "the run. Default: on when stdin and stdout are terminals and --json is not given.",
        show_default=False,
    ),
]


def parse_vars(items: list[str] | None) -> dict[str, Any]:
    """``["a=1", "b=x y"]`` → ``{"a": 1, "b": "x y"}`` (values read as YAML scalars)."""
    values: dict[str, Any] = {}
    for item in items or []:
        name, separator, raw = item.partition("=")
        if not separator or not name.strip():
            raise typer.BadParameter(f"--var {item!r} must look like NAME=VALUE")
        try:
            values[name.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            values[name.strip()] = raw
    return values


def read_text_file(
    path: Path, what: str, *, error_class: type[UserInputError] = UserInputError
) -> str:
    """The text of a file the user named: UTF-8 (with or without BOM), else CP932.

    A missing file, a folder or an unreadable file, and bytes that are neither
    UTF-8 nor CP932, raise ``error_class`` naming the path (never a traceback).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise error_class(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error_class(
            f"{what} {path} はフォルダです", hint="ファイルのパスを指定してください"
        ) from None
    except OSError as error:
        raise error_class(f"cannot read the {what} {path}: {error.strerror or error}") from None
    for encoding in ("utf-8-sig", "cp932"):  # as the CSV loader: Shift_JIS files from Excel
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise error_class(
        f"{what} {path} の文字コードを読み取れません（UTF-8 でも CP932 でもありません）",
        hint="UTF-8 で保存してください",
    )


def read_answers(path: Path | None) -> dict[str, Any]:
    """The answers file: a YAML/JSON mapping of node id → answers."""
    if path is None:
        return {}
    try:
        data = yaml.safe_load(read_text_file(path, "answers file"))
    except yaml.YAMLError as error:
        raise UserInputError(
            f"{path} is not valid YAML: {error}",
            hint="write {node_id: {field: value}}, e.g. collect_inputs: {proceed: true}",
        ) from None
    if not isinstance(data, dict):
        raise UserInputError(
            f"{path} must map node ids to answers",
            hint="write {node_id: {field: value}}, e.g. collect_inputs: {proceed: true}",
        )
    return data


def _engine() -> PlanEngine:
    from keiri_agent.config import load_settings
    from keiri_agent.plans.engine import PlanEngine

    return PlanEngine(load_settings())


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return _bytes_json(bytes(value))
    return str(value)


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=_json_default))


def _bytes_json(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "base64": base64.b64encode(data).decode("ascii")}


def _is_file_value(value: Any) -> bool:
    """``{"name": str, "data": bytes}`` (what file inputs and uploads produce)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("data"), bytes | bytearray)
        and isinstance(value.get("name"), str)
    )


class _OutputWriter:
    """Writes binary outputs into ``out_dir`` under unique, safe file names."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.written: list[tuple[str, Path]] = []  # (where in the outputs, path)
        self._used: set[str] = set()

    def write(self, where: str, data: bytes, name: str | None) -> Path:
        filename = _safe_name(name) or _safe_name(f"{where}.bin") or "output.bin"
        stem, dot, suffix = filename.rpartition(".")
        if not dot:
            stem, suffix = filename, ""
        candidate, counter = filename, 2
        while candidate in self._used:
            candidate = f"{stem}-{counter}{dot}{suffix}"
            counter += 1
        self._used.add(candidate)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / candidate
        path.write_bytes(data)
        self.written.append((where, path))
        return path


def _safe_name(name: str | None) -> str:
    """The last component of ``name`` (no folders, never '.' or '..'), or ''."""
    if not name:
        return ""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    base = "".join("_" if ch in '<>:"|?*' or ord(ch) < 32 else ch for ch in base)
    return "" if base in ("", ".", "..") else base


def _outputs_json(value: Any, where: str, writer: _OutputWriter | None) -> Any:
    """``value`` with bytes made JSON-safe: base64, or written by ``writer`` as paths."""
    if _is_file_value(value):
        data = bytes(value["data"])
        rest = {
            k: _outputs_json(v, _join(where, k), writer) for k, v in value.items() if k != "data"
        }
        if writer is not None:
            path = writer.write(where, data, value["name"])
            return {**rest, "path": str(path), "bytes": len(data)}
        return {**rest, **_bytes_json(data)}
    if isinstance(value, bytes | bytearray):
        if writer is not None:
            path = writer.write(where, bytes(value), None)
            return {"path": str(path), "bytes": len(value)}
        return _bytes_json(bytes(value))
    if isinstance(value, dict):
        return {k: _outputs_json(v, _join(where, k), writer) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_outputs_json(v, _join(where, i), writer) for i, v in enumerate(value)]
    return value


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _check_out_folder(out: Path | None) -> None:
    if out is not None and out.exists() and not out.is_dir():
        raise UserInputError(
            f"--out {out} はフォルダではありません（同じ名前のファイルがあります）",
            hint="存在しないパスか、既存のフォルダを指定してください",
        )


@plan_app.command()
def validate(plan: PlanArgument, as_json: JsonOption = False) -> None:
    """Check a plan strictly: every error and warning, with where and how to fix it."""
    try:
        engine = _engine()
        report = engine.validate(engine.load(plan))
    except KeiriAgentError as error:
        if as_json:
            _print_json({"ok": False, "error": error.to_dict()})
        raise _fail(error) from None
    if as_json:
        _print_json(report.to_dict())
    else:
        table = Table(title=f"{plan}: {len(report.errors)} errors, {len(report.warnings)} warnings")
        for column in ("", "code", "node", "path", "message / hint"):
            table.add_column(column)
        for issue in report.issues:
            mark = "[red]✗[/red]" if issue.severity == "error" else "[yellow]![/yellow]"
            text = escape(issue.message) + (
                f"\n[dim]{escape(issue.hint)}[/dim]" if issue.hint else ""
            )
            table.add_row(mark, issue.code, issue.node_id or "", issue.path or "", text)
        if report.issues:
            console.print(table)
        console.print("[green]OK[/green]" if report.ok else "[red]invalid[/red]")
    if not report.ok:
        raise typer.Exit(code=1)


@plan_app.command("dry-run")
def dry_run_command(
    plan: PlanArgument, var: VarsOption = None, as_json: JsonOption = False
) -> None:
    """Walk the plan with declared samples only (no block runs, no side effects)."""
    try:
        engine = _engine()
        report = engine.dry_run(engine.load(plan), vars=parse_vars(var))
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        _print_json(report.to_dict())
    else:
        table = Table(title=f"dry run: {plan}")
        for column in ("node", "block", "status", "problems"):
            table.add_column(column)
        for node in report.nodes:
            problems = "\n".join(f"{p.code}: {escape(p.message)}" for p in node.problems)
            style = {"ok": "green", "failed": "red"}.get(node.status, "dim")
            table.add_row(node.node_id, node.block or "", f"[{style}]{node.status}[/]", problems)
        console.print(table)
        for problem in report.problems:
            console.print(f"[red]{problem.code}[/red] {escape(problem.message)}")
        console.print("[green]dry run OK[/green]" if report.ok else "[red]dry run failed[/red]")
    if not report.ok:
        raise typer.Exit(code=1)


def _progress(quiet: bool) -> Any:
    def on_event(event: Event) -> None:
        if quiet:
            return
        node_id = event.payload.get("node_id")
        node = f" {node_id}" if node_id else ""
        detail = ""
        if event.kind == "node_error":
            error = event.payload.get("error") or {}
            detail = f" {error.get('code')}: {error.get('message')}"
        elif event.kind == "node_skipped":
            detail = f" ({event.payload.get('reason')})"
        err_console.print(f"[dim]· {event.kind}{node}{escape(detail)}[/dim]")

    return on_event


def _report_run(result: RunResult, as_json: bool, out: Path | None = None) -> None:
    writer = _OutputWriter(out) if out is not None else None
    write_error: UserInputError | None = None
    try:
        outputs = _outputs_json(result.outputs, "", writer)
    except OSError as os_error:
        write_error = UserInputError(
            f"{out} に出力を書き込めません: {os_error.strerror or os_error}",
            hint=f"--out に書き込み可能なフォルダを指定してください（実行 {result.run_id} は"
            "保存されています）",
        )
        writer = None
        outputs = _outputs_json(result.outputs, "", None)
    if as_json:
        _print_json(
            {
                "run_id": result.run_id,
                "plan_id": result.plan_id,
                "status": result.status,
                "outputs": outputs,
                "errors": result.errors,
                "waiting": result.waiting,
                "log_path": str(result.log_path),
            }
        )
    else:
        style = {"success": "green", "paused": "yellow"}.get(result.status, "red")
        console.print(f"[{style}]{result.status}[/] run {result.run_id} (log: {result.log_path})")
        for where, path in writer.written if writer is not None else []:
            console.print(f"[green]保存しました[/green] {escape(where)} → {escape(str(path))}")
        for error in result.errors:
            node = (error.get("details") or {}).get("node_id")
            console.print(f"[red]✗ {node}[/red] [{error['code']}] {escape(error['message'])}")
            if error.get("hint"):
                console.print(f"  [yellow]ヒント:[/yellow] {escape(error['hint'])}")
        for waiting in result.waiting:
            console.print(
                f"[yellow]入力待ち[/yellow] {waiting['node_id']} ({waiting['block']}): "
                f"{escape(json.dumps(waiting.get('request'), ensure_ascii=False, default=str))}"
            )
        if result.waiting:
            console.print(
                f"続けるには: keiri-agent plan resume {result.run_id} --inputs answers.yaml"
            )
    if write_error is not None:
        raise _fail(write_error)
    if result.status in ("failed", "cancelled"):
        raise typer.Exit(code=1)


def _prompting(prompt: bool | None, as_json: bool) -> bool:
    """--prompt/--no-prompt as given; by default on for a terminal without --json."""
    if prompt is not None:
        return prompt
    return not as_json and sys.stdin.isatty() and sys.stdout.isatty()


def _answer_by_prompts(
    engine: PlanEngine, result: RunResult, given: dict[str, Any], on_event: Any
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
        result = engine.resume(result.run_id, answers=answers, on_event=on_event)
    return result


@plan_app.command()
def run(
    plan: PlanArgument,
    var: VarsOption = None,
    inputs: InputsOption = None,
    as_json: RunJsonOption = False,
    prompt: PromptOption = None,
    out: OutOption = None,
) -> None:
    """Validate and run a plan; pauses when an input node has no answer (or asks it).

    With prompting on, unanswered input nodes are asked on the terminal and the
    run continues; otherwise it pauses and prints how to resume it. Binary outputs
    (workbooks, files) go to --out DIR when given, else into --json as base64.
    """
    try:
        _check_out_folder(out)
        engine = _engine()
        loaded = engine.load(plan)
        answers = read_answers(inputs)
        on_event = _progress(as_json)
        result = engine.run(loaded, vars=parse_vars(var), answers=answers, on_event=on_event)
        if _prompting(prompt, as_json):
            result = _answer_by_prompts(engine, result, answers, on_event)
    except KeiriAgentError as error:
        raise _fail(error) from None
    _report_run(result, as_json, out)


@plan_app.command()
def resume(
    run_id: Annotated[str, typer.Argument(help="The run id printed by `plan run`.")],
    inputs: InputsOption = None,
    as_json: RunJsonOption = False,
    prompt: PromptOption = None,
    out: OutOption = None,
) -> None:
    """Continue a paused run with the answers for its waiting nodes (or ask them).

    With prompting on, nodes still waiting after the --inputs answers are asked
    on the terminal and the run continues. Binary outputs go to --out DIR when
    given, else into --json as base64.
    """
    try:
        _check_out_folder(out)
        engine = _engine()
        answers = read_answers(inputs)
        on_event = _progress(as_json)
        result = engine.resume(run_id, answers=answers, on_event=on_event)
        if _prompting(prompt, as_json):
            result = _answer_by_prompts(engine, result, answers, on_event)
    except KeiriAgentError as error:
        raise _fail(error) from None
    _report_run(result, as_json, out)


@plan_app.command()
def migrate(
    plan: PlanArgument,
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite the file (the old one is kept as .bak).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Rewrite legacy UI blocks (ui.file_uploader, ui.confirmation) to ui.interactive_input.

    Prints the changes and the diff; the file changes only with --write. Lines
    starting with MANUAL need a human (the validator flags what is left).
    """
    import difflib

    from keiri_agent.plans.dsl.migrate import migrate_plan_text
    from keiri_agent.plans.engine import PLAN_SUFFIXES

    try:
        path = Path(plan)
        if path.suffix not in PLAN_SUFFIXES and not path.is_file():
            path = _engine().store.path_for(plan)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as error:
            raise UserInputError(
                f"cannot read the plan {path}: {error.strerror or error}"
            ) from None
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
        _print_json(
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
        console.print(f"[green]written[/green] {path} (old version: {backup})")
    else:
        console.print("dry run: nothing written (use --write)")
