"""The search layer's shared contract: what a chunk is, what a hit is, what a searcher does.

Every agent that looks things up (HelpDesk, deep research, plan generation) talks
to a :class:`Searcher`; the keyword index, the vector index and the hybrid all
implement it. A :class:`Hit` always carries the :class:`Source` of its text so
answers can cite document, page and heading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Retriever = Literal["keyword", "vector", "hybrid"]

BatchProgress = Callable[[int, int], None]
"""``on_batch(done, total)``: ``done`` of a document's ``total`` chunks are indexed."""

PAGE_STARTS = "page_starts"
"""``Chunk.metadata`` key of a chunk that spans pages: ``"0:3,118:4"`` — the offset in the
chunk's text where each page's text starts, and the page (``format_page_starts``). Kept in
metadata so the keyword and vector indexes store it as they are; a chunk without it (one
page, or an index stored before it existed) is all on ``Source.page``."""


def format_page_starts(starts: Sequence[tuple[int, int]]) -> str:
    """``[(0, 3), (118, 4)]`` → ``"0:3,118:4"`` (the ``PAGE_STARTS`` metadata value)."""
    return ",".join(f"{offset}:{page}" for offset, page in starts)


def parse_page_starts(value: str) -> tuple[tuple[int, int], ...]:
    """``"0:3,118:4"`` → ``((0, 3), (118, 4))``; a malformed value gives ``()``."""
    starts: list[tuple[int, int]] = []
    for item in value.split(","):
        offset, _, page = item.partition(":")
        if not all(p.strip().isascii() and p.strip().isdigit() for p in (offset, page)):
            return ()
        starts.append((int(offset), int(page)))
    return tuple(sorted(starts))


def page_at(starts: Sequence[tuple[int, int]], offset: int) -> int | None:
    """The page of the character at ``offset``, given (offset, page) page starts."""
    page = starts[0][1] if starts else None
    for start, number in starts:
        if start > offset:
            break
        page = number
    return page


def page_span_label(first: int | None, last: int | None) -> str | None:
    """``p.3`` for one page, ``p.3–4`` for a passage that runs over to the next page."""
    if first is None:
        return None
    if last is None or last == first:
        return f"p.{first}"
    return f"p.{first}–{last}"


@dataclass(frozen=True)
class Source:
    """Where a piece of text came from.

    ``document`` is the file's name relative to what was indexed (e.g.
    ``"xyz_manual.pdf"``); ``page`` is 1-based for PDFs (None otherwise);
    ``heading`` is the nearest heading path (``"2. ログイン > 2.1 パスワード"``) when
    the format has headings; ``row`` is the 1-based data row for CSV sources.
    """

    document: str
    page: int | None = None
    heading: str | None = None
    row: int | None = None

    def label(self, last_page: int | None = None) -> str:
        """A short citation: ``xyz_manual.pdf p.3 「2.1 パスワード」`` (``p.3–4`` with a
        ``last_page`` after ``page``: the passage runs over to the next page)."""
        parts = [self.document]
        pages = page_span_label(self.page, last_page)
        if pages is not None:
            parts.append(pages)
        if self.row is not None:
            parts.append(f"行{self.row}")
        if self.heading:
            parts.append(f"「{self.heading}」")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.document,
            "page": self.page,
            "heading": self.heading,
            "row": self.row,
        }


@dataclass(frozen=True)
class Chunk:
    """A searchable piece of a document.

    ``id`` is stable for the same document and position (``"{document}#{ordinal}"``),
    so re-indexing an unchanged file produces the same ids. ``metadata`` holds
    format-specific extras (e.g. the FAQ's ``question`` and ``answer`` columns).
    """

    id: str
    text: str
    source: Source
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def page_starts(self) -> tuple[tuple[int, int], ...]:
        """(offset in ``text``, page) where each page of the chunk starts; the first is
        (0, ``source.page``). Empty when the source has no pages."""
        stored = parse_page_starts(self.metadata.get(PAGE_STARTS, ""))
        if stored:
            return stored
        return ((0, self.source.page),) if self.source.page is not None else ()

    def page_of(self, offset: int) -> int | None:
        """The page the character at ``offset`` of ``text`` is on."""
        return page_at(self.page_starts, offset)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "source": self.source.to_dict(),
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class Hit:
    """One search result: the chunk, its score (higher is better) and who found it."""

    chunk: Chunk
    score: float
    retriever: Retriever

    @property
    def text(self) -> str:
        return self.chunk.text

    @property
    def source(self) -> Source:
        return self.chunk.source

    def to_dict(self) -> dict[str, Any]:
        return {**self.chunk.to_dict(), "score": self.score, "retriever": self.retriever}


@runtime_checkable
class Searcher(Protocol):
    """Anything that answers a query with ranked hits (best first, at most ``k``)."""

    @property
    def retriever(self) -> Retriever: ...

    def search(self, query: str, k: int = 5) -> list[Hit]: ...


class ChunkIndex(Protocol):
    """A searcher whose content can be changed document by document.

    ``upsert`` replaces every chunk of the documents it is given (so a changed file
    loses its old chunks) and calls ``on_batch`` after each batch it indexed (a vector
    index embeds a long document in many requests); ``delete_documents`` removes
    documents by name. Implementations persist their state themselves (or are in memory
    by choice).
    """

    @property
    def retriever(self) -> Retriever: ...

    def search(self, query: str, k: int = 5) -> list[Hit]: ...

    def upsert(
        self, document: str, chunks: Sequence[Chunk], *, on_batch: BatchProgress | None = None
    ) -> None: ...

    def delete_documents(self, documents: Sequence[str]) -> None: ...

    def documents(self) -> set[str]: ...
