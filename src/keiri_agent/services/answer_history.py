"""The ヘルプデスク answers of a workspace, kept so they can be read again later.

Each answer is one JSON line in ``<workspace>/.keiri/helpdesk_answers.jsonl``:
``{"question", "answer", "asked_at"}`` (``asked_at`` ISO 8601 in UTC); the file is
created owner-only (0600). ``recent`` returns the newest first; a line that does not
read (a torn write) is skipped.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from keiri_agent.private import private_dir, private_opener
from keiri_agent.workspace import Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SavedAnswer:
    """One question and the answer given."""

    question: str
    answer: str
    asked_at: str


class AnswerHistory:
    """The answers kept in one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.file = workspace.state / "helpdesk_answers.jsonl"

    def append(self, question: str, answer: str) -> SavedAnswer:
        """Keep an answer (now); returns what was kept."""
        saved = SavedAnswer(question, answer, datetime.now(UTC).isoformat(timespec="seconds"))
        private_dir(self.file.parent)
        with open(self.file, "a", encoding="utf-8", opener=private_opener) as handle:
            handle.write(json.dumps(asdict(saved), ensure_ascii=False) + "\n")
        return saved

    def recent(self, limit: int = 20) -> list[SavedAnswer]:
        """The last ``limit`` answers, newest first."""
        try:
            lines = self.file.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found: list[SavedAnswer] = []
        for line in reversed(lines):
            if len(found) >= limit:
                break
            try:
                data = json.loads(line)
                found.append(SavedAnswer(data["question"], data["answer"], data["asked_at"]))
            except (ValueError, KeyError, TypeError):
                log.warning("helpdesk answers: skipping an unreadable line in %s", self.file)
        return found
