"""What every command shares: the consoles, the settings, printing JSON and failures."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer._click.globals import get_current_context

from keiri_agent.errors import KeiriAgentError
from keiri_agent.services.jsonforms import dumps

if TYPE_CHECKING:  # settings (pydantic-settings) load in the commands that read them
    from keiri_agent.config import Settings

_Command = TypeVar("_Command", bound=Callable[..., Any])

log = logging.getLogger("keiri_agent.cli")
console = Console()
err_console = Console(stderr=True, soft_wrap=True)
_SETTINGS = "keiri_agent.settings"


def settings() -> Settings:
    """The settings of this command invocation: built once (``load_settings``), then shared.

    Kept on the root Click context, so every invocation (and every ``CliRunner`` call
    in tests) reads the environment once; a ``ConfigurationError`` is raised to the
    command, which reports it.
    """
    from keiri_agent.config import load_settings

    context = get_current_context(silent=True)
    if context is None:
        return load_settings()
    meta = context.find_root().meta
    if _SETTINGS not in meta:
        meta[_SETTINGS] = load_settings()
    built: Settings = meta[_SETTINGS]
    return built


def print_json(data: object) -> None:
    """Print a result's JSON form (``services.jsonforms.dumps``) to stdout."""
    print(dumps(data))


def fail(error: KeiriAgentError) -> typer.Exit:
    """Print the error (code, message, hint) to stderr; the Exit to raise (code 1)."""
    err_console.print(f"[bold red]エラー[/bold red] \\[{error.code}] {escape(error.message)}")
    if error.hint:
        err_console.print(f"[yellow]ヒント:[/yellow] {escape(error.hint)}")
    return typer.Exit(code=1)


def fail_json(error: KeiriAgentError, as_json: bool) -> typer.Exit:
    """``fail``, after printing the error's JSON form to stdout when ``--json`` was given."""
    if as_json:
        from keiri_agent.services.jsonforms import error_json

        print_json(error_json(error))
    return fail(error)


def last_resort(error: Exception) -> typer.Exit:
    """An error no command caught: a core error is printed as usual (``fail``); anything
    else is one Japanese line naming its kind, its traceback logged (shown with ``-v``)."""
    if isinstance(error, KeiriAgentError):
        return fail(error)
    log.info("unexpected error", exc_info=error)
    err_console.print(
        f"[bold red]エラー[/bold red] \\[UNEXPECTED_ERROR] 予期しないエラーで処理を中断しました"
        f"（{type(error).__name__}）"
    )
    err_console.print(
        "[yellow]ヒント:[/yellow] 入力ファイルや設定を確かめてもう一度実行してください。"
        "繰り返す場合は keiri-agent -v に続けて同じコマンドを実行し、表示された内容を"
        "管理者に伝えてください"
    )
    return typer.Exit(code=1)


def needs(action: str) -> Callable[[_Command], _Command]:
    """A command decorator (under ``@app.command()``): once people are registered, the
    operating-system user's account must hold a role that may ``action``
    (``people.roles``), else ``PERMISSION_DENIED`` naming the role (with ``--json``, also
    as JSON on stdout). One person's install checks nothing."""

    def decorate(command: _Command) -> _Command:
        @functools.wraps(command)
        def checked(*args: Any, **kwargs: Any) -> Any:
            from keiri_agent.people.operator import require_at_command_line

            try:
                require_at_command_line(settings(), action)
            except KeiriAgentError as error:
                raise fail_json(error, bool(kwargs.get("as_json"))) from None
            return command(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate
