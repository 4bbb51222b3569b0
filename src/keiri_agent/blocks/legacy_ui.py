"""Legacy UI blocks kept for the migration period (seed 002 §13).

``ui.file_uploader`` (answers ``{file: ...}``, or ``{files: [...]}`` with
``multiple``) and ``ui.confirmation`` (answers ``{approved: bool}``) check their
answers like ``ui.interactive_input`` (same file shapes, same InputRequired on
missing or invalid answers). ``keiri-agent plan migrate`` rewrites them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, UIBlock
from keiri_agent.blocks.interactive_input import collect_answers, describe


class FileUploaderBlock(UIBlock):
    """Upload one file (``file``) or several (``files``, with ``multiple``)."""

    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        multiple = bool(inputs.get("multiple"))
        field: dict[str, Any] = {
            "id": "files" if multiple else "file",
            "type": "files" if multiple else "file",
            "label": inputs.get("label") or "ファイル",
            "required": True,
        }
        if inputs.get("accept"):
            field["accept"] = inputs["accept"]
        return describe("collect", None, [field])

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        values, _ = collect_answers(self.request(inputs, ctx), ctx.answers)
        files = values["files"] if "files" in values else [values["file"]]
        return {"files": list(files), "file": files[0] if files else None}


class ConfirmationBlock(UIBlock):
    """Ask for approval: ``approved`` true or false."""

    def request(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        field = {"id": "approved", "type": "boolean", "label": "承認", "required": True}
        return describe("confirm", inputs.get("message"), [field])

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        values, _ = collect_answers(self.request(inputs, ctx), ctx.answers)
        return {"approved": values["approved"]}
