"""What every command shares: the consoles and how a reported failure is printed."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

from keiri_agent.errors import KeiriAgentError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)


def fail(error: KeiriAgentError) -> typer.Exit:
    """Print the error (code, message, hint) to stderr; the Exit to raise (code 1)."""
    err_console.print(f"[bold red]エラー[/bold red] \\[{error.code}] {escape(error.message)}")
    if error.hint:
        err_console.print(f"[yellow]ヒント:[/yellow] {escape(error.hint)}")
    return typer.Exit(code=1)
