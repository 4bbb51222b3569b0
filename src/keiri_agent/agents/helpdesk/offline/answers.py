"""The offline answers: quoted passages with citations, the reflection, the final answer.

* :func:`subtask_answer` quotes the best 1–3 passages, each with its citation.
* :func:`reflect` — done when the quoted passages cover the part's key terms;
  otherwise advice ``"不足: A, B。…"`` that ``queries.reformulate`` parses back.
* :func:`final_answer` — Markdown: a label line, one section per part, the sources,
  and the parts that were not found.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from keiri_agent.agents.helpdesk.models import ReflectionResult, SearchOutput, Subtask
from keiri_agent.agents.helpdesk.offline.terms import (
    DEFAULT_VOCABULARY,
    PreparedText,
    Vocabulary,
    atomic_terms,
    key_terms,
    require_text,
)
from keiri_agent.search.tokenize import normalize_for_search

OFFLINE_LABEL = "（オフラインモード：LLMを使わず、検索結果の引用で回答しています）"
MAX_QUOTES = 3
MAX_QUOTE_CHARS = 200
MAX_SECTION_CHARS = 320
"""A passage whose heading names the part's key terms is quoted from its start, up to this."""


@dataclass(frozen=True)
class _Candidate:
    result: SearchOutput
    order: int
    covered: frozenset[str]
    in_heading: frozenset[str]
    """Key terms named by the passage's heading: the section is about them."""

    @property
    def is_section(self) -> bool:
        """The heading names every key term the passage covers (at least one)."""
        return bool(self.in_heading) and self.in_heading >= self.covered


def _best_passages(
    terms: list[str], results: Sequence[SearchOutput], vocabulary: Vocabulary
) -> list[_Candidate]:
    """The passages to quote: up to ``MAX_QUOTES`` covering ≥ 1 term, most terms first.

    Passages are deduplicated by (file, page, heading, row) and by text; ties go to
    the passage whose heading names more key terms (the section about the topic),
    then the higher score, then the earlier result. When no passage contains a key
    term, the single best-scored passage is returned.
    """
    seen: set[tuple[object, ...]] = set()
    candidates: list[_Candidate] = []
    for order, result in enumerate(results):
        key = (result.file_name, result.page, result.heading, result.row)
        text_key = ("text", re.sub(r"\s+", "", result.content))
        if key in seen or text_key in seen:
            continue
        seen.update({key, text_key})
        prepared = PreparedText.of(result.content, vocabulary)
        covered = frozenset(t for t in terms if prepared.has(t))
        heading = PreparedText.of(result.heading or "", vocabulary)
        in_heading = frozenset(t for t in terms if heading.has(t))
        candidates.append(_Candidate(result, order, covered | in_heading, in_heading))
    if not candidates:
        return []
    ranked = sorted(
        candidates,
        key=lambda c: (-len(c.covered), -len(c.in_heading), -c.result.score, c.order),
    )
    chosen = [c for c in ranked if c.covered][:MAX_QUOTES]
    return chosen or ranked[:1]


_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?])|\n+|(?<=[.])\s+")


def _window(sentence: str, terms: list[str]) -> str:
    """A ~200-character window of a long sentence around its first key term."""
    norm = normalize_for_search(sentence)
    first = min((p for t in terms if (p := norm.find(t)) >= 0), default=0)
    start = max(0, min(first - 40, len(sentence) - (MAX_QUOTE_CHARS - 1)))
    lead = "…" if start else ""
    if len(sentence) - start <= MAX_QUOTE_CHARS - len(lead):
        return lead + sentence[start:]
    return lead + sentence[start : start + MAX_QUOTE_CHARS - len(lead) - 1] + "…"


def _section_start(content: str) -> str:
    """The start of a section, its lines kept, up to ``MAX_SECTION_CHARS`` (「…」 when cut).

    A line that does not fit is cut at its last sentence end that fits, or left out.
    """
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in content.split("\n")]
    kept: list[str] = []
    size = 0
    for line in (line for line in lines if line):
        if size + len(line) <= MAX_SECTION_CHARS:
            kept.append(line)
            size += len(line)
            continue
        room = MAX_SECTION_CHARS - size
        ends = [m.end() for m in re.finditer(r"[。！？!?]", line) if m.end() <= room]
        if ends:
            kept.append(line[: ends[-1]])
        elif not kept:
            kept.append(line[: MAX_SECTION_CHARS - 1])
        kept[-1] += "…"
        break
    return "\n".join(kept)


def _trim(content: str, terms: list[str], vocabulary: Vocabulary, *, section: bool = False) -> str:
    """The sentences of ``content`` that contain key terms, at most ~200 characters.

    Sentences with the most key terms are kept first while they fit; kept sentences
    stay in text order, with 「…」 where sentences were left out between them. A
    single sentence longer than the limit is cut to a window around its first key
    term, with 「…」 where it was cut. With ``section`` (the passage's heading names
    the key terms, so its body is the answer, e.g. the list under 「パスワードの条件」)
    the passage is quoted from its start instead, up to ``MAX_SECTION_CHARS``.
    """
    if section:
        return _section_start(content)
    sentences = [
        re.sub(r"\s+", " ", s).strip() for s in _SENTENCE_SPLIT.split(content) if s and s.strip()
    ]
    if not sentences:
        return ""
    hits = [sum(1 for t in terms if PreparedText.of(s, vocabulary).has(t)) for s in sentences]
    ranked = sorted((i for i, n in enumerate(hits) if n), key=lambda i: (-hits[i], i)) or [0]
    if len(sentences[ranked[0]]) > MAX_QUOTE_CHARS:
        return _window(sentences[ranked[0]], terms)
    keep: list[int] = []
    size = 0
    for i in ranked:
        if size + len(sentences[i]) <= MAX_QUOTE_CHARS:
            keep.append(i)
            size += len(sentences[i])
    keep.sort()
    pieces: list[str] = []
    for n, i in enumerate(keep):
        if n and i != keep[n - 1] + 1:
            pieces.append("…")
        elif n and pieces[-1][-1:].isascii() and sentences[i][:1].isascii():
            pieces.append(" ")
        pieces.append(sentences[i])
    return "".join(pieces)


def _label(subtask: str) -> str:
    return re.sub(r"\s+", " ", subtask.strip())


def subtask_answer(
    subtask: str, results: list[SearchOutput], vocabulary: Vocabulary = DEFAULT_VOCABULARY
) -> tuple[str, list[str]]:
    """An answer that quotes the best 1–3 passages, each followed by 【citation】.

    Returns the answer text (Japanese) and the citations used, in order. With no
    results the answer says plainly that nothing was found, and the list is empty.
    """
    text = require_text(subtask, "subtask")
    terms = atomic_terms(key_terms(text, vocabulary))
    chosen = _best_passages(terms, results, vocabulary)
    if not chosen:
        return (
            f"「{_label(text)}」については、マニュアル・FAQに該当する記述が見つかりませんでした。",
            [],
        )
    if any(c.covered for c in chosen):
        lines = [f"「{_label(text)}」について、資料には次の記述があります。"]
    else:
        lines = [
            f"「{_label(text)}」に直接当てはまる記述は見つかりませんでしたが、"
            "関連しそうな記述は次のとおりです。"
        ]
    citations: list[str] = []
    for candidate in chosen:
        # an FAQ row (Q + A) is quoted whole: its answer is the point
        whole = candidate.is_section or candidate.result.row is not None
        quote = _trim(candidate.result.content, terms, vocabulary, section=whole)
        citation = candidate.result.citation(quote)
        # a quote of several lines stays one list item: hard breaks, indented
        lines.append("- " + quote.replace("\n", "  \n  ") + f"【{citation}】")
        if citation not in citations:
            citations.append(citation)
    return "\n".join(lines), citations


def _accepts(n_terms: int, n_covered: int) -> bool:
    """All key terms covered, or ≥ 2/3 of them (rounded up) when there are ≥ 3."""
    if n_terms >= 3:
        return n_covered >= math.ceil(2 * n_terms / 3)
    return n_covered == n_terms


def reflect(
    subtask: str,
    results: list[SearchOutput],
    attempt: int,
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
) -> ReflectionResult:
    """Is the part answered? Judged on the passages :func:`subtask_answer` quotes.

    Rule: the quoted passages (with synonyms) must contain every key term of the
    part, or ≥ 2/3 of them (rounded up: 3 of 4, 2 of 3) when it has 3 or more. A part
    with no key terms is done when anything was found. No results is never done.
    The advice names the missing terms as ``"不足: A, B。"`` (parsed back by
    :func:`reformulate`) and a next step that depends on ``attempt`` (0-based).

    Raises:
        ValueError: blank ``subtask`` or negative ``attempt``.
    """
    text = require_text(subtask, "subtask")
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, got {attempt}")
    terms = atomic_terms(key_terms(text, vocabulary))
    chosen = _best_passages(terms, results, vocabulary)
    covered = {t for c in chosen for t in c.covered}
    if chosen and _accepts(len(terms), len(covered)):
        return ReflectionResult(advice="", is_completed=True)
    missing = [t for t in terms if t not in covered]
    lead = "検索結果がありませんでした。" if not results else ""
    named = f"不足: {', '.join(missing)}。" if missing else ""
    if attempt == 0:
        step = "同義語を加えて、マニュアル検索とFAQ検索の両方で検索し直してください。"
    elif attempt == 1:
        step = "不足している語だけに絞り、もう一方のツールでも検索してください。"
    else:
        step = "資料に記載がない可能性があります。見つからなかった点として回答してください。"
    return ReflectionResult(advice=lead + named + step, is_completed=False)


# --------------------------------------------------------------------------- final answer

_CITED = re.compile(r"【([^】]+)】")


def final_answer(question: str, subtasks: list[Subtask]) -> str:
    """The final answer in Markdown, built from the parts' answers.

    Layout: the offline label line, the question, one ``###`` section per part with
    its answer, a 「出典」 list (distinct citations in first-use order: each part's
    ``sources``, then citations in 【】 of its answer), and — when any part is not
    completed — a 「見つからなかった点」 section naming those parts.

    Raises:
        ValueError: blank ``question``.
    """
    text = require_text(question, "question")
    lines = [OFFLINE_LABEL, "", f"**ご質問**: {_label(text)}", ""]
    if not subtasks:
        lines.append("回答できる内容が見つかりませんでした。")
    sources: list[str] = []
    for number, subtask in enumerate(subtasks, start=1):
        answer = subtask.subtask_answer.strip() or "（回答がありません）"
        lines += [f"### {number}. {_label(subtask.task_name)}", "", answer, ""]
        for citation in [*subtask.sources, *_CITED.findall(subtask.subtask_answer)]:
            if citation not in sources:
                sources.append(citation)
    lines += ["### 出典", ""]
    if sources:
        lines += [f"{n}. {citation}" for n, citation in enumerate(sources, start=1)]
    else:
        lines.append("該当する資料は見つかりませんでした。")
    open_parts = [s for s in subtasks if not s.is_completed]
    if open_parts:
        lines += [
            "",
            "### 見つからなかった点",
            "",
            "次の点は、マニュアル・FAQから十分な記述が見つかりませんでした。"
            "ヘルプデスクにお問い合わせください。",
            "",
        ]
        lines += [f"- {_label(s.task_name)}" for s in open_parts]
    return "\n".join(lines).rstrip() + "\n"
