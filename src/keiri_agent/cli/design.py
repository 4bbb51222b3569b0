"""``keiri-agent plan generate | design | register | templates``: Plan design from the terminal.

The commands are registered on the ``plan`` app (``cli.plan``) and call
``services.design.DesignService`` (imported when a command runs, so that the CLI starts
lean). ``generate`` prints, in Japanese, how the Plan was made, the warnings, each
attempt's per-node changes, the candidate blocks, the items still to settle and where the
YAML went (``--out``; without it the YAML follows the summary on stdout, or sits in the
JSON under ``"yaml"``). Exit codes follow ``GeneratedPlan.verdict``: 0 every requirement
covered and the Plan validates and dry-runs, 3 it needs answers (the questions are listed),
4 a named part cannot be built (no Plan), 1 incomplete / invalid or a reported error,
2 a usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from keiri_agent.cli.common import console, err_console, needs, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError
from keiri_agent.services.jsonforms import error_json, generated_plan_json

if TYPE_CHECKING:
    from keiri_agent.plans.design.models import GeneratedPlan, TemplateSpec
    from keiri_agent.services.design import DesignService

design_app = KeiriTyper()

APPLY_MODES = ("hint", "compose", "llm-only")  # plans.design.models.APPLY_MODES
CHANGE_WORDS = {"added": "追加", "removed": "削除", "changed": "変更"}
VERDICT_EXIT_CODES = {"ok": 0, "needs_answers": 3, "cannot_build": 4, "incomplete": 1, "invalid": 1}
"""``GeneratedPlan.verdict`` → exit code (2 stays the usage error)."""
VERDICT_COLORS = {
    "ok": "green",
    "needs_answers": "yellow",
    "cannot_build": "red",
    "incomplete": "red",
    "invalid": "red",
}

JsonOption = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]
InstructionOption = Annotated[
    str, typer.Option("--instruction", help="設計する業務手順の説明（文章で）。")
]


def _out_file(value: Path | None) -> Path | None:
    """--out must name a file: a folder is refused before anything is generated."""
    if value is not None and value.is_dir():
        raise typer.BadParameter(
            f"{value} はフォルダです。書き出す YAML のファイル名を指定してください"
            f"（例: {value / 'plan.yaml'}）",
            param_hint="--out",
        )
    return value


OutOption = Annotated[
    Path | None,
    typer.Option("--out", help="Plan の YAML をこのファイルに書き出します。", callback=_out_file),
]
DocsOption = Annotated[
    str | None,
    typer.Option("--docs", help="参考資料（.txt .md .pdf .docx .xlsx）。カンマ区切り: a,b"),
]


def _service() -> DesignService:
    from keiri_agent.services.design import DesignService

    return DesignService(settings())


def _names(value: str | None) -> tuple[str, ...]:
    """A comma-separated option as names (blanks dropped)."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _documents(value: str | None) -> list[tuple[str, bytes]]:
    """The --docs files as (name, bytes); a missing one is a usage error naming it."""
    files = []
    for name in _names(value):
        path = Path(name)
        if not path.is_file():
            raise typer.BadParameter(
                f"参考ドキュメント {name} が見つかりません。"
                "ファイル名（パス）を確かめるか、--docs から外してください",
                param_hint="--docs",
            )
        files.append((path.name, path.read_bytes()))
    return files


def _fallback(value: str | None) -> bool | None:
    if value is None:
        return None
    if value not in ("0", "1"):
        raise typer.BadParameter(
            f"{value!r} は指定できません。1（代替の Plan を返す）か 0（エラーをそのまま表示）"
            "を指定してください",
            param_hint="--fallback",
        )
    return value == "1"


@design_app.command()
@needs("design")
def generate(
    instruction: InstructionOption,
    docs: DocsOption = None,
    templates: Annotated[
        str | None, typer.Option("--templates", help="使うテンプレートの ID。カンマ区切り: a,b")
    ] = None,
    apply_mode: Annotated[
        str,
        typer.Option(
            "--apply-mode",
            help="hint（テンプレートを LLM の手がかりに）、compose（LLM なしで機械的に合成）、"
            "llm-only（テンプレートなし）。",
        ),
    ] = "hint",
    fallback: Annotated[
        str | None,
        typer.Option(
            "--fallback",
            help="1: LLM が失敗したら安全な代替の Plan、0: エラーを表示。"
            "既定は KEIRI_AGENT_LLM_FALLBACK の設定。",
        ),
    ] = None,
    pin: Annotated[
        str | None, typer.Option("--pin", help="常にモデルへ提示するブロック。カンマ区切り: a,b")
    ] = None,
    out: OutOption = None,
    as_json: JsonOption = False,
) -> None:
    """指示（と資料・テンプレート）から Plan を生成し、検査と試行を行います。

    終了コード: 0 完成、3 回答が必要（質問を表示）、4 作れない部分がある、1 エラー。"""
    if apply_mode not in APPLY_MODES:
        raise typer.BadParameter(
            f"{apply_mode!r} は使えません。{' / '.join(APPLY_MODES)} のいずれかを指定してください",
            param_hint="--apply-mode",
        )
    from keiri_agent.services.design import DesignRequest

    request = DesignRequest(
        instruction=instruction,
        documents=_documents(docs),
        templates=_names(templates),
        apply_mode=apply_mode,
        pinned=_names(pin),
        fallback=_fallback(fallback),
    )
    try:
        generation = _service().generate(request)
    except KeiriAgentError as error:
        if as_json:
            print_json(error_json(error))
        raise _fail(error) from None
    _finish(generation.result, out, as_json)


def _print_generation(result: GeneratedPlan, written: Path | None) -> None:
    how = {
        "structured": "LLM が生成",
        "compose": "テンプレートを機械的に合成",
        "offline-compose": "テンプレートを機械的に合成（オフライン）",
        "offline": "オフライン",
        "fallback": "LLM が失敗したため安全な代替の Plan",
    }
    mode = result.reasoning.split(":", 1)[0]
    console.print(f"[bold]作り方:[/bold] {escape(how.get(mode, mode))}")
    console.print(f"[dim]{escape(result.reasoning)}[/dim]")
    if result.templates:
        console.print(f"[bold]テンプレート:[/bold] {escape(', '.join(result.templates))}")
    for warning in result.warnings:
        console.print(f"[yellow]注意:[/yellow] {escape(warning)}")
    _print_procedure(result)
    _print_attempts(result)
    _print_candidates(result)
    _print_requirements(result)
    if result.report is not None:
        errors, warnings = len(result.report.errors), len(result.report.warnings)
        console.print(f"[bold]検証:[/bold] エラー {errors} 件、警告 {warnings} 件")
        for issue in result.report.errors:
            console.print(f"  [red]✗[/red] [{issue.code}] {escape(issue.message)}")
    if result.dry_run is not None:
        state = "[green]OK[/green]" if result.dry_run.ok else "[red]問題あり[/red]"
        console.print(f"[bold]ドライラン:[/bold] {state}")
    from keiri_agent.plans.design.models import VERDICT_MESSAGES

    color = VERDICT_COLORS[result.verdict]
    console.print(f"[{color}]{escape(VERDICT_MESSAGES[result.verdict])}[/{color}]")
    if written is not None:
        console.print(f"[bold]YAML:[/bold] {escape(str(written))} に書き出しました")
    elif result.yaml_text:
        console.print("[bold]YAML:[/bold]（以下）")


def _print_procedure(result: GeneratedPlan) -> None:
    """The instruction's requirements, what covers each, and what cannot be built."""
    if result.coverage is not None:
        console.print("[bold]指示の項目:[/bold]")
        for line in result.coverage.lines():
            console.print(f"  {escape(line)}")
    elif result.procedure is not None and result.procedure.requirement_ids():
        from keiri_agent.plans.design.procedure import checklist

        console.print("[bold]指示の項目:[/bold]")
        for line in checklist(result.procedure):
            console.print(f"  - {escape(line)}")
    if result.gaps:
        console.print("[bold]作れない部分:[/bold]")
        for gap in result.gaps:
            console.print(f"  [red]✗[/red] {escape(gap.message)}")


def _print_attempts(result: GeneratedPlan) -> None:
    for attempt in result.attempts:
        codes = ", ".join(f"{code} ×{n}" for code, n in attempt.error_codes.items()) or "エラーなし"
        console.print(f"[bold]試行 {attempt.number}:[/bold] {escape(codes)}")
        for change in attempt.changes:
            fields = f"（{', '.join(change.fields)}）" if change.fields else ""
            word = CHANGE_WORDS.get(change.change, change.change)
            console.print(f"  - {word}: {escape(change.node_id)}{escape(fields)}")


def _print_candidates(result: GeneratedPlan) -> None:
    if not result.candidates:
        return
    table = Table(title="候補ブロック")
    for column in ("ブロック", "分類", "スコア", "固定"):
        table.add_column(column)
    for candidate in result.candidates:
        table.add_row(
            candidate.block_id,
            candidate.category,
            f"{candidate.score:.3f}",
            "✓" if candidate.pinned else "",
        )
    console.print(table)


def _print_requirements(result: GeneratedPlan) -> None:
    if not result.requirements:
        return
    console.print("[bold]決める必要がある項目:[/bold]")
    for requirement in result.requirements:
        mark = "" if requirement.required else "（任意）"
        console.print(
            f"  - {escape(requirement.label or requirement.id)}{mark} "
            f"[dim]{escape(requirement.id)}: {requirement.type}[/dim]"
        )


@design_app.command()
@needs("design")
def design(
    instruction: InstructionOption,
    docs: DocsOption = None,
    sample: Annotated[
        list[Path] | None,
        typer.Option(
            "--sample",
            help="見本のデータ（CSV / Excel）。列を選ぶ質問の選択肢になります。"
            "繰り返し指定できます。",
        ),
    ] = None,
    answers: Annotated[
        Path | None,
        typer.Option(
            "--answers",
            help="質問への回答（YAML / JSON: 項目ID: 値）。指定しないと端末で順に質問します。",
        ),
    ] = None,
    prompt: Annotated[
        bool | None,
        typer.Option(
            "--prompt/--no-prompt",
            help="端末で質問するか（既定: 端末で --json でなければ質問する）。",
        ),
    ] = None,
    out: OutOption = None,
    as_json: JsonOption = False,
) -> None:
    """指示から Plan を生成し、決める必要がある項目を質問して（--answers でも可）完成させます。

    終了コード: 0 完成、3 回答が必要（質問を表示）、4 作れない部分がある、1 エラー。"""
    from keiri_agent.services.design import DesignRequest
    from keiri_agent.services.plan_inputs import read_answers, read_input_file

    service = _service()
    limit = service.settings.inputs.max_upload_mb * 1024 * 1024
    try:
        samples = [
            (path.name, read_input_file(path, max_bytes=limit, what="見本のファイル")["data"])
            for path in sample or ()
        ]
        request = DesignRequest(
            instruction=instruction, documents=_documents(docs), samples=samples
        )
        result = service.generate(request).result
        if result.verdict == "needs_answers":
            given = read_answers(answers) if answers is not None else None
            if given is None and _prompting(prompt, as_json):
                given = _ask(result)
            if given:
                result = service.settle(request, result, given)
    except KeiriAgentError as error:
        if as_json:
            print_json(error_json(error))
        raise _fail(error) from None
    _finish(result, out, as_json)


def _prompting(prompt: bool | None, as_json: bool) -> bool:
    if prompt is not None:
        return prompt
    return not as_json and sys.stdin.isatty() and sys.stdout.isatty()


def _ask(result: GeneratedPlan) -> dict[str, Any]:
    """Each open question on the terminal: a choice by its number or its text."""
    console.print("[bold]決める必要がある項目に答えてください[/bold]（空欄で飛ばす）")
    values: dict[str, Any] = {}
    for item in result.requirements:
        if item.type in ("file", "table"):
            continue  # a file is given when the Plan runs (--file)
        label = item.label or item.id
        if item.options:
            for number, option in enumerate(item.options, start=1):
                console.print(f"  {number}. {escape(option)}")
        answer = typer.prompt(label, default="", show_default=False).strip()
        if (
            item.options
            and answer.isascii()
            and answer.isdigit()
            and 1 <= int(answer) <= len(item.options)
        ):
            answer = item.options[int(answer) - 1]
        if answer:
            values[item.id] = answer
    return values


def _finish(result: GeneratedPlan, out: Path | None, as_json: bool) -> None:
    """Print the result, write the YAML, exit by the verdict."""
    written: Path | None = None
    unwritten: OSError | None = None
    if out is not None and result.yaml_text:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(result.yaml_text, encoding="utf-8")
            written = out
        except OSError as error:  # the YAML is printed below instead: nothing is lost
            unwritten = error
    if as_json:
        form = generated_plan_json(result)
        form["path"] = str(written) if written is not None else None
        print_json(form)
    else:
        _print_generation(result, written)
        if written is None and result.yaml_text:
            print(result.yaml_text, end="" if result.yaml_text.endswith("\n") else "\n")
    if unwritten is not None:
        err_console.print(
            f"[bold red]エラー[/bold red] Plan を {escape(str(out))} に書き出せませんでした"
            f"（{escape(unwritten.strerror or type(unwritten).__name__)}）。"
            "YAML は上に表示しました"
        )
        raise typer.Exit(code=1)
    code = VERDICT_EXIT_CODES[result.verdict]
    if code:
        raise typer.Exit(code=code)


@design_app.command()
def register(
    path: Annotated[Path, typer.Argument(help="登録する Plan の YAML ファイル")],
    accept_major: Annotated[
        bool,
        typer.Option(
            "--accept-major",
            help="登録済みの版と互換性のない変更（メジャーバージョンの更新、vars・exports の"
            "削除）があっても登録します。",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Plan ファイルを designs/<plan_id>_<yyyymmddHHMM>.yaml として登録します
    （不正なら登録しません。登録済みの版と互換性のない変更は --accept-major が必要です）。"""
    if not path.is_file():
        raise typer.BadParameter(
            f"ファイル {path} が見つかりません。パスを確かめてください", param_hint="PATH"
        )
    from keiri_agent.people.operator import at_command_line
    from keiri_agent.people.roles import require
    from keiri_agent.plans.dsl.loader import load_plan_file

    try:
        found = at_command_line(settings())
        if found is not None:
            require(found[0], "design")
        text = path.read_text(encoding="utf-8")
        service = _service()
        registered = service.register(text, accept_major=accept_major)
        written = registered.path
        file_id = service.file_id(written)
        if found is not None:
            person, trail = found
            plan = load_plan_file(written)
            trail.append(
                person.login,
                "plan_registered",
                plan.id,
                registered.audit_details(file_id, plan.version),
            )
    except KeiriAgentError as error:
        if as_json:
            print_json(error_json(error))
        if error.details and not as_json:
            for issue in error.details.get("errors") or []:
                console.print(f"  [red]✗[/red] [{issue['code']}] {escape(str(issue['message']))}")
            for change in error.details.get("changes") or []:
                mark = "[red]✗[/red]" if change["breaking"] else "[yellow]![/yellow]"
                console.print(f"  {mark} {escape(str(change['message']))}")
        raise _fail(error) from None
    command = f"keiri-agent plan run {file_id}"
    if as_json:
        print_json(
            {
                "ok": True,
                "path": str(written),
                "file_id": file_id,
                "run_command": command,
                "warnings": registered.warnings,
            }
        )
        return
    for warning in registered.warnings:
        console.print(f"[yellow]注意:[/yellow] {escape(warning)}")
    console.print(f"[green]登録しました:[/green] {escape(str(written))}")
    console.print(f"ID: {escape(file_id)}")
    console.print(f"実行するには: {escape(command)}")


@design_app.command("templates")
def templates_command(as_json: JsonOption = False) -> None:
    """テンプレート一覧（同梱分と designs/templates/）と、読み込めなかったものを表示します。"""
    try:
        library = _service().library
    except KeiriAgentError as error:
        if as_json:
            print_json(error_json(error))
        raise _fail(error) from None
    templates = library.all()
    problems = [str(problem) for problem in library.problems]
    if as_json:
        items = [
            {
                "id": template.id,
                "title": template.title,
                "category": template.category,
                "tags": list(template.tags),
                "blocks": _template_blocks(template),
            }
            for template in templates
        ]
        print_json({"templates": items, "problems": problems})
        return
    table = Table(title=f"テンプレート {len(templates)} 件")
    for column in ("ID", "名前", "分類", "タグ", "ブロック"):
        table.add_column(column)
    for template in templates:
        table.add_row(
            template.id,
            escape(template.title),
            template.category,
            escape(", ".join(template.tags)),
            ", ".join(_template_blocks(template)),
        )
    console.print(table)
    for problem in problems:
        console.print(f"[yellow]読み込めなかったテンプレート:[/yellow] {escape(problem)}")


def _template_blocks(template: TemplateSpec) -> list[str]:
    """The blocks of a template's snippet, each once, in order."""
    return list(dict.fromkeys(str(node.get("block")) for node in template.graph_snippet))
