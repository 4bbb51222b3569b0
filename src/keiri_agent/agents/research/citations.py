"""Numbered sources and verified ``[n]`` citations of a research report.

The sources of a run are the snippets its notes kept, numbered once each in note order
(``number_sources``). A note's summary cites its own snippets ``[k]``; the writer sees the
summaries renumbered over the run (``numbered_summaries``). After writing, every ``[n]``
is checked against the numbered sources: an unknown one is removed and reported
(``verify_citations``); the 出典 section lists the sources the report cites, renumbered in
citation order (``keep_cited``, ``sources_section``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from keiri_agent.agents.research.models import DocSnippet, ResearchNote
from keiri_agent.agents.research.reasoner import StepSummary

CITATION = re.compile(r"\[(\d{1,4})\]")
"""A citation marker ``[n]`` (a Markdown link ``[text](url)`` has no digits-only text)."""


def number_sources(notes: Sequence[ResearchNote]) -> list[DocSnippet]:
    """Every snippet the notes kept, once each (by ``ref``), in note order: ``[n]`` = item n-1."""
    seen: dict[str, DocSnippet] = {}
    for note in notes:
        for snippet in note.sources:
            seen.setdefault(snippet.ref, snippet)
    return list(seen.values())


def numbered_summaries(
    notes: Sequence[ResearchNote], sources: Sequence[DocSnippet]
) -> list[StepSummary]:
    """The notes' summaries with their local ``[k]`` renumbered to the run's ``[n]``.

    A local marker that names no snippet of its note is dropped.
    """
    index = {snippet.ref: number for number, snippet in enumerate(sources, start=1)}
    steps = []
    for note in notes:
        local = {
            number: index[snippet.ref]
            for number, snippet in enumerate(note.sources, start=1)
            if snippet.ref in index
        }

        def renumber(match: re.Match[str], local: dict[int, int] = local) -> str:
            number = local.get(int(match.group(1)))
            return f"[{number}]" if number is not None else ""

        steps.append(StepSummary(note.query, CITATION.sub(renumber, note.summary_md)))
    return steps


def verify_citations(text: str, source_count: int) -> tuple[str, list[int]]:
    """``text`` without the ``[n]`` markers that name no source, and those numbers (sorted)."""
    unknown: set[int] = set()

    def check(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if 1 <= number <= source_count:
            return match.group(0)
        unknown.add(number)
        return ""

    # a marker directly followed by "(" is a Markdown link's text, not a citation
    cleaned = re.sub(r"\[(\d{1,4})\](?!\()", check, text)
    return cleaned, sorted(unknown)


def keep_cited(text: str, sources: Sequence[DocSnippet]) -> tuple[str, list[DocSnippet]]:
    """Only the sources ``text`` cites, renumbered ``[1]``… in order of first citation.

    A report lists under 出典 what it cites, once: a passage that was found but backs no
    sentence is no source of the report. ``text``'s markers must all name a source
    (:func:`verify_citations` first).
    """
    order = [n for n in cited_numbers(text) if 1 <= n <= len(sources)]
    renumber = {old: new for new, old in enumerate(order, start=1)}

    def replace(match: re.Match[str]) -> str:
        return f"[{renumber[int(match.group(1))]}]"

    cleaned = re.sub(r"\[(\d{1,4})\](?!\()", replace, text)
    return cleaned, [sources[n - 1] for n in order]


def cited_numbers(text: str) -> list[int]:
    """The source numbers ``text`` cites, each once, in order of first appearance."""
    return list(dict.fromkeys(int(number) for number in CITATION.findall(text)))


def source_line(number: int, snippet: DocSnippet) -> str:
    """``[n] label`` with a link when the source has a URL."""
    label = snippet.label()
    if snippet.url:
        title = snippet.title or snippet.document or snippet.url
        return f"[{number}] [{title}]({snippet.url})" + (f" {label}" if snippet.document else "")
    return f"[{number}] {label}"


def sources_listing(sources: Sequence[DocSnippet]) -> str:
    """The numbered sources for a prompt: ``[n] label`` lines ("" when there are none)."""
    return "\n".join(source_line(number, s) for number, s in enumerate(sources, start=1))


def sources_section(sources: Sequence[DocSnippet]) -> str:
    """The report's ``## 出典`` section."""
    lines = [f"- {source_line(number, s)}" for number, s in enumerate(sources, start=1)]
    return "## 出典\n\n" + ("\n".join(lines) if lines else "（なし）")


def limitations_section(limitations: Sequence[str]) -> str:
    """The report's ``## 調査の限界`` section ("" when there is nothing to say)."""
    if not limitations:
        return ""
    return "## 調査の限界\n\n" + "\n".join(f"- {item}" for item in limitations)
