"""Every error message and hint a user reads is Japanese (issue 16 item 5).

The scan walks the source of the packages whose errors reach users (uploads,
ZIP and Excel files, documents, the knowledge base, blocks, Plan checks, the CLI,
the analysis specs and runtime, the agents, services, storage, LLM calls, the demo)
and reads every call that builds a user-facing error: a ``KeiriAgentError``
subclass (found from the class definitions of the whole package), a Plan
``make_issue`` or ``ValidationIssue``. Every string literal given as its message
or hint that holds words must contain Japanese. Machine codes (``"API_ERROR"``,
``"SPEC_ERROR"``) are not words and pass.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import keiri_agent

SRC = Path(keiri_agent.__file__).parent
SCOPE = (
    "errors.py",
    "files",
    "documents",
    "search",
    "blocks",
    "plans",
    "cli",
    "agents/helpdesk/desk.py",
    "agents/helpdesk/agent.py",
    "agents/helpdesk/prompts.py",
    "agents/helpdesk/tools.py",
    "agents/helpdesk/llm_reasoner.py",
    "agents/research",
    "services",
    "storage",
    "llm",
    "demo.py",
    "agents/analysis/ops",
    "agents/analysis/runtime",
)
ISSUE_BUILDERS = {"make_issue", "ValidationIssue"}
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff01-\uff60]")
WORDS = re.compile(r"[a-z]{3,}")  # lower-case words: codes are upper-case
MESSAGE_KEYWORDS = {"message", "hint", "problem"}


def _error_classes(root: Path) -> set[str]:
    """Names of every class that derives (in this package) from ``KeiriAgentError``."""
    bases: dict[str, set[str]] = {}
    for file in root.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                }
                bases.setdefault(node.name, set()).update(names)
    found = {"KeiriAgentError"}
    grew = True
    while grew:
        grew = False
        for name, parents in bases.items():
            if name not in found and parents & found:
                found.add(name)
                grew = True
    return found


def _literal_text(node: ast.AST) -> str | None:
    """The constant text of a string literal, f-string or ``+`` of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_text(node.left), _literal_text(node.right)
        if left is None and right is None:
            return None
        return (left or "") + (right or "")
    return None


def english_messages(root: Path, scope: tuple[str, ...] = SCOPE) -> list[str]:
    """``path:line: text`` of every user message in ``scope`` that has no Japanese."""
    builders = _error_classes(root) | ISSUE_BUILDERS
    found: list[str] = []
    files = [
        file
        for part in scope
        for file in ((root / part).rglob("*.py") if (root / part).is_dir() else [root / part])
    ]
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in builders:
                continue
            values = [*node.args, *(k.value for k in node.keywords if k.arg in MESSAGE_KEYWORDS)]
            for value in values:
                text = _literal_text(value)
                if text and WORDS.search(text) and not JAPANESE.search(text):
                    found.append(f"{file.relative_to(root)}:{node.lineno}: {text[:80]!r}")
    return found


def test_the_scan_finds_english_messages(tmp_path: Path) -> None:
    (tmp_path / "errors.py").write_text(
        "class KeiriAgentError(Exception): ...\n"
        "class UserInputError(KeiriAgentError): ...\n"
        "class ZipError(UserInputError): ...\n"
        "raise ZipError('the ZIP file is empty', code='EMPTY_FILE')\n"
        "raise ZipError('ZIP ファイルが空です', hint='upload it again')\n"
        "raise ZipError('ZIP が空です', hint='アップロードし直してください', code='EMPTY')\n"
        "make_issue('SCHEMA', f'unknown block {name}')\n",
        encoding="utf-8",
    )
    found = english_messages(tmp_path, ("errors.py",))
    assert [line.split(":")[1] for line in found] == ["4", "5", "7"]


def test_every_user_message_and_hint_is_japanese() -> None:
    found = english_messages(SRC)
    assert not found, "user messages without Japanese:\n" + "\n".join(found)
