"""What a run shows a person: node titles, final outputs first, download file names.

- ``node_titles(plan)``: node id → its ``title`` (else the id), loop bodies included.
- ``shown_outputs(plan, outputs)``: a run's outputs (node id → {alias: value}) in the
  order a person reads them: the final outputs first (the Plan's ``exports`` in their
  order, titled by the export's ``title``; without exports, the outputs of the nodes
  nobody else reads), then the intermediate ones in ``ui.layout`` / graph order.
- ``download_name(title, value)``: a file name with the extension its bytes show
  (``.xlsx``, ``.docx``, ``.pdf``, ...), so a download is never a bare ``workbook``.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from keiri_agent.plans.dsl.dependencies import dependencies
from keiri_agent.plans.dsl.models import LoopNode, Node, Plan

__all__ = ["ShownOutput", "download_name", "node_titles", "shown_outputs"]

_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')
_ZIP_KINDS = (
    ("xl/", ".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("word/", ".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("ppt/", ".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
)


@dataclass(frozen=True)
class ShownOutput:
    """One output as shown: where it comes from, its title, its value, final or not."""

    node_id: str
    alias: str
    title: str
    description: str | None
    value: Any
    final: bool


def _walk(graph: Sequence[Node]) -> Iterator[Node]:
    for node in graph:
        yield node
        if isinstance(node, LoopNode):
            yield from _walk(node.body.plan.graph)


def node_titles(plan: Plan) -> dict[str, str]:
    """Node id → the node's ``title``, else its id (every node, loop bodies included)."""
    return {node.id: node.title or node.id for node in _walk(plan.graph)}


def node_title(titles: Mapping[str, str], path: str) -> str:
    """What people call the node at ``path`` (``loop[0]/node`` inside a loop body)."""
    node_id = path.rpartition("/")[2].partition("[")[0]
    return titles.get(node_id, path)


def _order(plan: Plan, outputs: Mapping[str, Any]) -> list[str]:
    layout = [node_id for node_id in plan.ui.layout if node_id in outputs]
    graph = [node.id for node in plan.graph if node.id in outputs and node.id not in layout]
    return layout + graph + [node_id for node_id in outputs if node_id not in layout + graph]


def _finals(plan: Plan, outputs: Mapping[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """(node id, alias, title, description) of the final outputs."""
    titles = node_titles(plan)
    if plan.exports:
        found = []
        for export in plan.exports:
            node_id, _, alias = export.source.partition(".")
            found.append(
                (node_id, alias.split(".")[0], export.title or export.name, export.description)
            )
        return found
    read = set().union(*dependencies(plan.graph).values())
    finals: list[tuple[str, str, str, str | None]] = []
    for node_id in _order(plan, outputs):
        values = outputs.get(node_id) or {}
        if node_id in read or not isinstance(values, Mapping):
            continue
        for alias in values:
            title = titles.get(node_id, node_id)
            finals.append(
                (node_id, str(alias), title if len(values) == 1 else f"{title}（{alias}）", None)
            )
    return finals


def shown_outputs(plan: Plan, outputs: Mapping[str, Any]) -> list[ShownOutput]:
    """The run's outputs, final first (see the module docstring); a final output whose
    node was skipped or gave nothing is left out."""
    titles = node_titles(plan)
    shown: list[ShownOutput] = []
    seen: set[tuple[str, str]] = set()
    for node_id, alias, title, description in _finals(plan, outputs):
        values = outputs.get(node_id)
        if not isinstance(values, Mapping) or values.get(alias) is None:
            continue
        seen.add((node_id, alias))
        shown.append(ShownOutput(node_id, alias, title, description, values[alias], True))
    for node_id in _order(plan, outputs):
        values = outputs.get(node_id)
        if not isinstance(values, Mapping):
            continue
        for alias, value in values.items():
            if (node_id, str(alias)) in seen:
                continue
            title = f"{titles.get(node_id, node_id)}（{alias}）"
            shown.append(ShownOutput(node_id, str(alias), title, None, value, False))
    return shown


def file_kind(data: bytes) -> tuple[str, str]:
    """(extension, MIME type) of file bytes, from their content."""
    if data.startswith(b"%PDF"):
        return ".pdf", "application/pdf"
    if data.startswith(b"PK"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = archive.namelist()
        except zipfile.BadZipFile:
            return ".bin", "application/octet-stream"
        for prefix, extension, mime in _ZIP_KINDS:
            if any(name.startswith(prefix) for name in names):
                return extension, mime
        return ".zip", "application/zip"
    text = _text(data)
    if text is None:
        return ".bin", "application/octet-stream"
    if _is_csv(text):
        return ".csv", "text/csv"
    return ".txt", "text/plain"


def _text(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 or Shift_JIS (CP932: what Japanese banks and
    accounting packages read) without control characters, else None."""
    for encoding in ("utf-8", "cp932"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if not any(ord(char) < 32 and char not in "\r\n\t" for char in text[:10_000]):
            return text
    return None


def _is_csv(text: str) -> bool:
    """Two or more lines that read as CSV rows of one width (at least two columns)."""
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if len(lines) < 2:
        return False
    try:
        widths = {len(row) for row in csv.reader(lines)}
    except csv.Error:
        return False
    return len(widths) == 1 and widths.pop() >= 2


def download_name(title: str, data: bytes) -> tuple[str, str]:
    """(file name, MIME type) for downloading ``data`` under ``title``: the title made
    safe for a file name, with the extension the bytes show (kept when it has it)."""
    extension, mime = file_kind(data)
    stem = _UNSAFE.sub("_", title).strip(" ._") or "download"
    if stem.lower().endswith(extension):
        return stem, mime
    return stem + extension, mime
