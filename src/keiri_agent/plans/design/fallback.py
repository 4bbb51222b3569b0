"""The fallback Plan (seed 003 §5.3): what generation returns when the LLM fails and
``KEIRI_AGENT_LLM_FALLBACK`` is on (``Settings.design.llm_fallback``; off: the error is shown).

The fallback never pretends to do the work: it has no side effects, validates and
dry-runs. It asks for the inputs the candidate blocks need (a file per file-taking
block, with its extensions, and an optional note) with ``ui.interactive_input`` and
writes, with ``text.template``, the instruction and that the Plan was generated as a
fallback, so the user starts from a runnable skeleton and edits it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from keiri_agent.errors import UserInputError
from keiri_agent.plans.design.models import BlockCandidate
from keiri_agent.plans.design.requirements import FILE_BLOCKS

FALLBACK_NOTE = "LLM による生成に失敗したため、安全な代替 Plan（フォールバック）を作成しました。"
_BOOL: TypeAdapter[bool] = TypeAdapter(bool)
_FILE_LABELS = {
    "excel.read_data": "Excel ファイル",
    "csv.read": "CSV ファイル",
    "file.parse_zip_2tier": "証跡 ZIP",
    "document.extract_text": "文書ファイル",
}


def fallback_enabled(value: Any) -> bool:
    """``KEIRI_AGENT_LLM_FALLBACK`` / ``--fallback`` as a bool, parsed as ``Settings``
    parses it (pydantic: 1/true/yes/on and 0/false/no/off, any case; None → off).

    ``UserInputError`` (Japanese) for anything else.
    """
    if value is None:
        return False
    try:
        return _BOOL.validate_python(value.strip() if isinstance(value, str) else value)
    except ValidationError:
        raise UserInputError(
            f"フォールバックの指定「{value}」を読めません。",
            hint="1 / true / yes（有効）または 0 / false / no（無効）を指定してください",
            details={"value": str(value)},
        ) from None


def build_fallback_plan(
    instruction: str,
    *,
    plan_id: str | None = None,
    candidates: Iterable[BlockCandidate | str] = (),
) -> dict[str, Any]:
    """The safe fallback Plan (a YAML-ready mapping) for ``instruction``."""
    digest = hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:8]
    fields: list[dict[str, Any]] = []
    seen: set[str] = set()
    for candidate in candidates:
        block = candidate.block_id if isinstance(candidate, BlockCandidate) else str(candidate)
        if block in FILE_BLOCKS and block not in seen:
            seen.add(block)
            fields.append(
                {
                    "id": block.replace(".", "_"),
                    "type": "file",
                    "label": _FILE_LABELS.get(block, "ファイル"),
                    "accept": FILE_BLOCKS[block][1],
                    "required": False,
                }
            )
    fields.append(
        {
            "id": "note",
            "type": "text",
            "label": "補足（手順で使う列名や条件など）",
            "required": False,
        }
    )
    return {
        "apiVersion": "v1",
        "id": plan_id or f"fallback_{digest}",
        "version": "0.1.0",
        "description": f"フォールバック: {_one_line(instruction)[:80]}",
        "vars": {"instruction": _literal(instruction)},
        "ui": {"layout": ["collect_inputs"]},
        "graph": [
            {
                "id": "collect_inputs",
                "block": "ui.interactive_input",
                "in": {
                    "mode": "collect",
                    "message": "この手順に必要なファイルや補足を入力してください"
                    "（フォールバック Plan）",
                    "requirements": fields,
                },
                "out": {"collected_data": "collected"},
            },
            {
                "id": "summary",
                "block": "text.template",
                "in": {
                    "template": "指示: {instruction}\n補足: {note}\n" + FALLBACK_NOTE,
                    "values": {
                        "instruction": "${vars.instruction}",
                        "note": "${collect_inputs.collected.note}",
                    },
                },
                "out": {"text": "summary"},
            },
        ],
        "exports": [{"from": "summary.summary", "as": "summary"}],
    }


def _literal(text: str) -> str:
    """``text`` as a Plan literal: ``${`` written as ``$${`` so it is not a reference."""
    return text.replace("${", "$${")


def _one_line(text: str) -> str:
    return " ".join(text.split())
