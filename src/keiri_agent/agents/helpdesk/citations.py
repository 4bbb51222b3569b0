"""Citations of the HelpDesk agent's answers: numbering passages, reading and renumbering ``[n]``.

A subtask's passages are numbered by citation (document, page, heading, row) in order
of appearance (:func:`number_sources`); a passage that runs onto the next page is cited
with both pages (``p.3–4``: the model quotes any part of it, so the source names every
page the passage is on — the offline answers, which know the quote, name its page); the
model cites them as ``[1]``, ``[1, 2]``, ``[1-3]`` or the full-width ``［１］``. :func:`cite`
keeps the numbers that match a passage and renumbers them so ``[i]`` in a subtask answer
is ``Subtask.sources[i-1]``; the final answer renumbers them over all subtasks and ends
with the sections :func:`ensure_answer_sections` adds (見つからなかった点, 出典).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keiri_agent.agents.helpdesk.models import SearchOutput, Subtask, ToolResult
from keiri_agent.agents.helpdesk.wording import ENGLISH, wording_for

_NUMBER = r"[0-9０-９]+"
CITATION_MARKER = re.compile(rf"[\[［]({_NUMBER}(?:\s*(?:[,、，]|[-‐–~〜～])\s*{_NUMBER})*)[\]］]")
"""``[1]``, ``[1, 2]``, ``[1-3]``, and the full-width ``［１］`` models write in Japanese."""
_MAX_RANGE = 20
_SOURCES_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?[【\[]?(?:出典|sources?|references?)[】\]]?\s*[:：]?\s*$",
    re.MULTILINE | re.IGNORECASE,
)
_NOT_FOUND_HEADING = "見つからなかった点"
_NOT_FOUND_SECTION = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*|\*\*|[【■])[^\n]{0,16}"
    r"(?:見つから|みつから|分から|わから)なかった[^\n]{0,16}$"
    r"|^[ \t]*(?:#{1,6}[ \t]*|\*\*)[^\n]{0,24}"
    r"(?:not found|could not find|couldn't find|unanswered)",
    re.MULTILINE | re.IGNORECASE,
)
"""A heading of a section on what was not found, as models write it (``## 見つからなかった事項``,
``**分からなかった点**``, ``## Not found``): the answer has one, none is added."""


@dataclass(frozen=True)
class NumberedSource:
    """One citation of an attempt's search results and the passages that share it."""

    number: int
    citation: str
    passages: tuple[SearchOutput, ...]


def number_sources(results: Sequence[ToolResult]) -> list[NumberedSource]:
    """Number the distinct citations of one attempt's results, in order of appearance."""
    order: list[str] = []
    passages: dict[str, list[SearchOutput]] = {}
    for result in results:
        for output in result.results:
            citation = output.citation()
            if citation not in passages:
                order.append(citation)
                passages[citation] = []
            if all(output.content != known.content for known in passages[citation]):
                passages[citation].append(output)
    return [
        NumberedSource(index, citation, tuple(passages[citation]))
        for index, citation in enumerate(order, start=1)
    ]


def _marker_numbers(inside: str) -> list[int]:
    """The numbers of one marker's inside: ``"1, 3"`` → [1, 3]; ``"２〜４"`` → [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"[,、，]", unicodedata.normalize("NFKC", inside)):
        ends = [int(end) for end in re.split(r"[-‐–~〜～]", part.strip()) if end.strip()]
        if len(ends) == 2 and 0 <= ends[1] - ends[0] < _MAX_RANGE:
            numbers.extend(range(ends[0], ends[1] + 1))
        else:
            numbers.extend(ends)
    return numbers


def cited_numbers(text: str) -> list[int]:
    """The numbers of the markers ``[1]``, ``[2, 3]``, ``[4-5]``, ``［６］`` in ``text``."""
    numbers: list[int] = []
    for match in CITATION_MARKER.finditer(text):
        for number in _marker_numbers(match.group(1)):
            if number not in numbers:
                numbers.append(number)
    return numbers


def renumber_citations(text: str, mapping: Mapping[int, int]) -> str:
    """Rewrite ``[n]`` markers (any form above) through ``mapping`` as ``[m]``; markers not
    in it are removed."""

    def replace(match: re.Match[str]) -> str:
        parts = _marker_numbers(match.group(1))
        kept = [mapping[part] for part in parts if part in mapping]
        return "".join(f"[{number}]" for number in dict.fromkeys(kept))

    return CITATION_MARKER.sub(replace, text)


def cite(reply: str, numbered: Sequence[NumberedSource]) -> tuple[str, list[str]]:
    """The answer renumbered so ``[i]`` is ``sources[i-1]``, and those sources.

    Cited numbers that match no passage are removed. An answer that cites nothing has
    no sources: a passage the answer does not cite is not listed as its source.
    """
    by_number = {item.number: item.citation for item in numbered}
    cited = [number for number in cited_numbers(reply) if number in by_number]
    mapping = {number: index for index, number in enumerate(cited, start=1)}
    return renumber_citations(reply, mapping), [by_number[number] for number in cited]


def collect_sources(subtasks: Sequence[Subtask]) -> list[str]:
    """Every subtask's sources, distinct, in plan order then first use."""
    return list(dict.fromkeys(source for subtask in subtasks for source in subtask.sources))


def ensure_answer_sections(text: str, sources: Sequence[str], unanswered: Sequence[str]) -> str:
    """Append 「見つからなかった点」 (when needed and the answer has no such section, however
    the model titled it) and a 出典 section."""
    text = text.rstrip()
    english = wording_for(text) is ENGLISH
    if unanswered and not _NOT_FOUND_SECTION.search(text):
        lines = [
            f'- "{name}": the documents do not give a full answer.'
            if english
            else f"- 「{name}」について、資料から十分な回答が見つかりませんでした。"
            for name in dict.fromkeys(unanswered)
        ]
        heading = "Not found" if english else _NOT_FOUND_HEADING
        text += f"\n\n## {heading}\n" + "\n".join(lines)
    if not _SOURCES_HEADING.search(text):
        if sources:
            listed = "\n".join(f"[{index}] {source}" for index, source in enumerate(sources, 1))
        elif english:
            listed = "(no source in the search results could be cited)"
        else:
            listed = "（検索結果から引用できる出典はありませんでした）"
        text += "\n\n## " + ("Sources" if english else "出典") + "\n" + listed
    return text


def format_numbered_passages(
    result: ToolResult, numbers: Mapping[str, int], note: str | None
) -> str:
    """One tool call's passages as the model reads them: ``[n] citation`` then the text."""
    lines = []
    if note:
        lines.append(f"注意: {note}")
    if not result.results:
        lines.append("該当する資料は見つかりませんでした。")
    seen: set[tuple[str, str]] = set()
    for output in result.results:
        citation = output.citation()
        if (citation, output.content) in seen:
            continue
        seen.add((citation, output.content))
        lines.append(f"[{numbers[citation]}] {citation}\n{output.content.strip()}")
    return "\n\n".join(lines)


def subtask_summary(subtasks: Sequence[Subtask], sources: Sequence[str]) -> str:
    """Each subtask's answer with its citations renumbered over all subtasks."""
    global_number = {source: index for index, source in enumerate(sources, start=1)}
    blocks = []
    for index, subtask in enumerate(subtasks, start=1):
        mapping = {
            local: global_number[source] for local, source in enumerate(subtask.sources, start=1)
        }
        status = "完了" if subtask.is_completed else "未完了: 十分な回答が見つかりませんでした"
        answer = renumber_citations(subtask.subtask_answer, mapping)
        cited = "、".join(f"[{global_number[source]}] {source}" for source in subtask.sources)
        blocks.append(
            f"### サブタスク{index}: {subtask.task_name}（{status}）\n{answer}\n"
            f"出典: {cited or 'なし'}"
        )
    return "\n\n".join(blocks)


def unanswered_subtasks(subtasks: Sequence[Subtask]) -> list[str]:
    """The subtasks that ended without a complete answer (the 見つからなかった点)."""
    return [subtask.task_name for subtask in subtasks if not subtask.is_completed]
