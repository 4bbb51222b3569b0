"""Rendering agent results for the terminal (Rich) and for machines (JSON)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table

from keiri_agent.agents.analysis.artifacts import Artifact
from keiri_agent.agents.analysis.formatting import format_value
from keiri_agent.agents.analysis.report import figure_path

TERMINAL_TABLE_ROWS = 20


def write_figures(artifacts: list[Artifact], out_dir: Path) -> dict[str, Path]:
    """Write figure artifacts as PNG files under ``out_dir/figures``; returns id → path."""
    written: dict[str, Path] = {}
    for artifact in artifacts:
        if artifact["kind"] == "figure" and isinstance(artifact["payload"], bytes):
            path = out_dir / figure_path(artifact)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(artifact["payload"])
            written[artifact["artifact_id"]] = path
    return written


def artifact_json(artifact: Artifact, files: dict[str, Path]) -> dict[str, Any]:
    """JSON form: tables as records, figures as a file path or base64 PNG, text as is."""
    item: dict[str, Any] = {
        key: artifact[key] for key in ("artifact_id", "kind", "title", "description")
    }
    payload = artifact["payload"]
    if artifact["kind"] == "table" and isinstance(payload, dict):
        item.update(
            columns=payload.get("columns"),
            records=payload.get("records"),
            total_rows=payload.get("total_rows"),
        )
    elif artifact["kind"] == "figure" and isinstance(payload, bytes):
        if artifact["artifact_id"] in files:
            item["file"] = str(files[artifact["artifact_id"]])
        else:
            item["png_base64"] = base64.b64encode(payload).decode("ascii")
    else:
        item["text"] = payload
    return item


def print_json(data: Any) -> None:
    """Print JSON to stdout (UTF-8, Japanese kept readable)."""
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def render_artifact(console: Console, artifact: Artifact, files: dict[str, Path]) -> None:
    """Show one artifact: a Rich table, a text panel, or where a figure was written."""
    payload = artifact["payload"]
    if artifact["kind"] == "table" and isinstance(payload, dict):
        table = Table(title=artifact["title"], caption=artifact["description"] or None)
        columns = list(payload.get("columns", []))
        for column in columns:
            table.add_column(str(column))
        for record in list(payload.get("records", []))[:TERMINAL_TABLE_ROWS]:
            table.add_row(*(format_value(record.get(column)) for column in columns))
        console.print(table)
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
