"""Rendering agent results for the terminal (Rich); their JSON form is ``services.jsonforms``."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table

from keiri_agent.agents.analysis.artifacts import Artifact
from keiri_agent.agents.analysis.formatting import column_labels, display_rows

TERMINAL_TABLE_ROWS = 20


def render_artifact(console: Console, artifact: Artifact, files: dict[str, Path]) -> None:
    """Show one artifact: a Rich table, a text panel, or where a figure was written."""
    payload = artifact["payload"]
    if artifact["kind"] == "table" and isinstance(payload, dict):
        table = Table(title=artifact["title"])
        for label in column_labels(payload):
            table.add_column(label)
        for row in display_rows(payload, TERMINAL_TABLE_ROWS):
            table.add_row(*row)
        console.print(table)
        if artifact["description"]:  # beneath, not as a caption squeezed to the table's width
            console.print(artifact["description"], style="dim", markup=False)
        total = payload.get("total_rows", 0)
        if total > TERMINAL_TABLE_ROWS:
            console.print(f"  … 全 {total} 行（--json で全件）", style="dim")
    elif artifact["kind"] == "figure":
        where = files.get(artifact["artifact_id"])
        note = f"保存先: {where}" if where else "--out DIR を指定すると PNG を保存します"
        console.print(f"[bold]図[/bold] {artifact['title']} — {note}")
    else:
        console.print(Panel(str(payload), title=artifact["title"]))


def render_markdown(console: Console, text: str) -> None:
    """Print Markdown (the report, a question) in the terminal."""
    console.print(Markdown(text))
