"""Numbered sources and verified citations of research reports (hand-computed expectations)."""

from __future__ import annotations

from keiri_agent.agents.research.citations import (
    number_sources,
    numbered_summaries,
    sources_section,
    verify_citations,
)
from keiri_agent.agents.research.models import DocSnippet, ResearchNote

A = DocSnippet(ref="a#1", text="A", title="A", document="a.pdf", page=1)
B = DocSnippet(ref="b#1", text="B", title="B", document="b.pdf", page=2)
W = DocSnippet(
    ref="https://x.example/p", text="W", title="告示", url="https://x.example/p", source="web"
)


def notes() -> list[ResearchNote]:
    return [
        ResearchNote("s", 1, "q1", "A です [1]。B です [2]。", (A, B)),
        ResearchNote("s", 2, "q2", "W です [1]。B も [2]。幻 [5]。", (W, B)),
    ]


def test_sources_are_numbered_once_each_in_note_order() -> None:
    assert number_sources(notes()) == [A, B, W]


def test_summaries_are_renumbered_over_the_run_and_unknown_local_markers_dropped() -> None:
    steps = numbered_summaries(notes(), [A, B, W])
    assert [s.summary_md for s in steps] == [
        "A です [1]。B です [2]。",
        "W です [3]。B も [2]。幻 。",
    ]


def test_unknown_citations_are_removed_and_reported() -> None:
    text, unknown = verify_citations("X [1]。Y [4]。Z [0][3]。[2](https://l) [9]", 3)
    assert text == "X [1]。Y 。Z [3]。[2](https://l) "
    assert unknown == [0, 4, 9]


def test_sources_section_links_web_sources() -> None:
    section = sources_section([A, W])
    assert section == "## 出典\n\n- [1] a.pdf p.1\n- [2] [告示](https://x.example/p)"
