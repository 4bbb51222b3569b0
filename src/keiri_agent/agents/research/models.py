"""The deep-research agent (seed 004): the types its parts share.

The agent (planner, search, summariser, writer, the gap check), its search sources
(internal knowledge bases, Azure AI Search, a web plug-in) and its note store
(``research_notes``) exchange these values; surfaces render them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from keiri_agent.pii import PiiKind

SourceKind = Literal["internal", "web"]


@dataclass(frozen=True)
class DocSnippet:
    """One passage a search returned (seed §2 ``SearchTool.search``).

    ``ref`` is stable for the same passage (``document#chunk`` or the URL with an
    anchor), so a citation can be checked against the sources a note kept.
    """

    ref: str
    text: str
    title: str
    source: SourceKind = "internal"
    document: str | None = None
    page: int | None = None
    heading: str | None = None
    url: str | None = None
    score: float = 0.0
    origin: str = ""
    """Which search source found it: ``kb:<name>``, ``azure:<index>``, ``web:<provider>``."""
    row: int | None = None
    """1-based row of a table or FAQ file (CSV/XLSX), cited as ``行N``."""

    def label(self) -> str:
        """A short citation: ``manual.pdf p.3 「2.1 パスワード」``, ``faq.csv 行12`` or the URL."""
        if self.url and not self.document:
            return f"{self.title} <{self.url}>" if self.title else self.url
        parts = [self.document or self.title]
        if self.page is not None:
            parts.append(f"p.{self.page}")
        if self.row is not None:
            parts.append(f"行{self.row}")
        if self.heading:
            parts.append(f"「{self.heading}」")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "text": self.text,
            "title": self.title,
            "source": self.source,
            "document": self.document,
            "page": self.page,
            "heading": self.heading,
            "row": self.row,
            "url": self.url,
            "score": self.score,
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocSnippet:
        return cls(
            ref=str(data["ref"]),
            text=str(data.get("text") or ""),
            title=str(data.get("title") or ""),
            source="web" if data.get("source") == "web" else "internal",
            document=data.get("document"),
            page=data.get("page"),
            heading=data.get("heading"),
            row=data.get("row") if isinstance(data.get("row"), int) else None,
            url=data.get("url"),
            score=float(data.get("score") or 0.0),
            origin=str(data.get("origin") or ""),
        )


@runtime_checkable
class SearchTool(Protocol):
    """A search source (seed §2): ``search(query) -> list[DocSnippet]``.

    Raises ``KeiriAgentError`` (a Japanese message and hint) when the source fails;
    the agent reports that in the report's limitations and goes on with the others.
    A source may also offer ``retrieval_warnings() -> list[str]`` (Japanese): how it
    searched less well than configured (``InternalSearch``: keywords alone where vectors
    are missing); the report adds them to its limitations.
    """

    name: str
    """Shown in progress and limitations: ``社内ナレッジ（xyz）``, ``Azure AI Search（docs）``."""
    sources: SourceKind

    def search(self, query: str, *, top: int = 5) -> list[DocSnippet]: ...


@dataclass(frozen=True)
class ResearchNote:
    """One step of a session kept in ``research_notes`` (seed §7)."""

    session_id: str
    step_no: int
    query: str
    summary_md: str
    sources: Sequence[DocSnippet] = ()
    created_at: datetime | None = None
    id: int | None = None
    pii_redacted: Mapping[PiiKind, int] = field(default_factory=dict, compare=False)
    """What the store's PII filter replaced when it added this note (kind → count;
    ``pii.redact``); not kept in the database, so empty on notes read back."""


class NoteStore(Protocol):
    """Where notes live: ``research_notes`` in the application database."""

    def add(self, note: ResearchNote) -> ResearchNote:
        """Keep ``note``; the note as stored (personal data replaced, ``pii_redacted``)."""
        ...

    def notes(self, session_id: str) -> list[ResearchNote]:
        """The session's notes in step order."""
        ...

    def sessions(self) -> list[tuple[str, int, datetime]]:
        """(session id, note count, last note time), newest first."""
        ...

    def delete_session(self, session_id: str) -> int:
        """Delete a session's notes; how many were deleted."""
        ...


@dataclass
class ResearchResult:
    """What one research run hands back (besides its events)."""

    session_id: str
    run_id: str
    question: str
    report_md: str
    queries: list[str] = field(default_factory=list)
    notes: list[ResearchNote] = field(default_factory=list)
    sources: list[DocSnippet] = field(default_factory=list)
    """The numbered sources of the report: ``[n]`` is ``sources[n - 1]``."""
    limitations: list[str] = field(default_factory=list)
    """Japanese: sources that failed, steps that timed out or found nothing, citations removed."""
    offline: bool = False
    needs_research: bool = True
