"""Quotes of a passage for the offline answers: the sentences about a part, cut for a reader.

* :func:`logical_lines` — the passage's lines, a line that wraps a long line joined
  back to it (text extraction joins most wraps; this catches the rest); a list item
  (``1.`` ``（1）`` ``①`` ``1)`` ``・`` ``-``), a label/value line (``項目：値``) and a
  short line (heading, label) stay on their own lines.
* :func:`trim` — the sentences with key terms, at most ``MAX_QUOTE_CHARS``; a sentence
  keeps its list marker, lines stay lines; a long sentence is cut to a window that starts
  at a clause or word boundary (never 「き、…」 in the middle of a word).
* :func:`section_start` — the start of a section, its lines kept.
* :func:`lead_sentence` — the most relevant quoted sentence, shortened: an answer's lead.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from keiri_agent.agents.helpdesk.offline.asks import AskedValue
from keiri_agent.agents.helpdesk.offline.specificity import weight
from keiri_agent.agents.helpdesk.offline.terms import DEFAULT_VOCABULARY, PreparedText, Vocabulary
from keiri_agent.search.tokenize import normalize_for_search

MAX_QUOTE_CHARS = 200
MAX_SECTION_CHARS = 320
"""A passage whose heading names the part's key terms is quoted from its start, up to this."""
MAX_LEAD_CHARS = 80
FACT_BONUS = 0.5
"""Added to a quoted sentence's weight when it states a fact (:func:`has_fact`): less than
a specific term's weight, so it only decides between sentences about the same terms."""
_FACT = re.compile(
    r"[0-9０-９]|「[^」]{1,40}」|『[^』]{1,40}』"
    r"|[一二三四五六七八九十百千万]+(?:円|日|時|分|件|回|名|人|年|か月|ヶ月|週|割|倍|営業日)"
)
"""A number, a 「quoted」 name of a screen or button, a number written in kanji with a unit."""

_ITEM = re.compile(
    r"^(?:[0-9０-９]{1,3}[.．)）](?![0-9０-９])|[（(][0-9０-９]{1,3}[)）]|[①-⑳]"
    r"|[・•●○■□◆◇▪※]|[-‐－*]\s|[a-zA-Z][.)]\s)"
)
"""A list item's marker at the start of a line: ``1.`` ``1)`` ``（1）`` ``①`` ``・`` ``- ``."""
_LABEL_VALUE = re.compile(r"^[^。！？!?：:\s][^。！？!?：:]{0,24}[：:]\s*\S")
"""``項目：値`` / ``Label: value`` — a label of up to 25 characters, then its value."""
_LINE_END = re.compile(r"[。！？!?：:」』）)]$")
_SENTENCE = re.compile(r"(?<=[。！？!?])|(?<=[^\s0-9][.])\s+")
"""Sentence ends inside a line; ``1.`` after a digit is a list marker, not an end."""
_ENDED = re.compile(r"[。！!]$|[^\s0-9][.]$")
"""A sentence that ends as a statement does (a heading or a label line does not)."""
_BOUNDARY = re.compile(r"[、，,;；：:　 ]\s*")
"""Where a clause or word starts inside a sentence (after it)."""
_QUESTION = re.compile(r"[？?]$|[かの][。.]?$")
"""A sentence that asks (「…ですか。」, 「…の？」)."""
_Q_PREFIX = re.compile(r"^\s*(?:Q|質問)\s*[:：.]", re.IGNORECASE)
"""The question of an FAQ row."""
_QA_PREFIX = re.compile(r"^\s*(?:Q|A|質問|回答)\s*[:：.]\s*", re.IGNORECASE)
_WRAP_SHARE = 0.75
"""A line at least this share of the passage's longest line, without a sentence end, wraps."""
_MIN_WRAP_CHARS = 20


def _word_class(char: str) -> str:
    if re.match(r"[\u3400-\u9fff々〆ヶ]", char):
        return "kanji"
    if re.match(r"[\u30a0-\u30ffー]", char):
        return "katakana"
    if re.match(r"[0-9A-Za-z０-９Ａ-Ｚａ-ｚ]", char):
        return "latin"
    return ""


def _continues(previous: str, line: str, longest: int) -> bool:
    """``line`` wraps ``previous``: a long line without an end, neither line an item or label.

    A list item or a label/value line is never joined to the line below: a body line after
    the last item must not be glued to it (an item that wraps stays on two lines instead).
    """
    return (
        len(previous) >= max(_MIN_WRAP_CHARS, _WRAP_SHARE * longest)
        and not _LINE_END.search(previous)
        and not any(p.match(text) for p in (_ITEM, _LABEL_VALUE) for text in (previous, line))
    )


def logical_lines(content: str) -> list[str]:
    """The non-blank lines of ``content``, spaces collapsed, wrapped lines joined back."""
    lines = [re.sub(r"[ \t\u3000]+", " ", line).strip() for line in content.split("\n")]
    lines = [line for line in lines if line]
    longest = max((len(line) for line in lines), default=0)
    out: list[str] = []
    for line in lines:
        if out and _continues(out[-1], line, longest):
            glue = " " if out[-1][-1:].isascii() and line[:1].isascii() else ""
            out[-1] += glue + line
        else:
            out.append(line)
    return out


def _sentences(content: str) -> list[tuple[int, str]]:
    """(line number, sentence) of every sentence of ``content``'s logical lines."""
    out: list[tuple[int, str]] = []
    for number, line in enumerate(logical_lines(content)):
        out.extend((number, s.strip()) for s in _SENTENCE.split(line) if s and s.strip())
    return out


def _score(sentence: str, terms: Sequence[str], vocabulary: Vocabulary) -> float:
    prepared = PreparedText.of(sentence, vocabulary)
    return sum(weight(t) for t in terms if prepared.has(t))


def has_fact(sentence: str) -> bool:
    """True when ``sentence`` states a fact a user asks for: a number or a 「name」 (a list
    item's marker 「1.」 is not one)."""
    return bool(_FACT.search(_ITEM.sub("", sentence.lstrip(), count=1)))


def _first_term(sentence: str, terms: Sequence[str]) -> tuple[int, int]:
    """(start, end) of the earliest key term in ``sentence``; (0, 0) when none is there."""
    norm = normalize_for_search(sentence)
    found = [(p, p + len(t)) for t in terms if t and (p := norm.find(t)) >= 0]
    return min(found, default=(0, 0))


def window(sentence: str, terms: Sequence[str]) -> str:
    """A window of at most ``MAX_QUOTE_CHARS`` of a long sentence around its first key term.

    It starts at the clause boundary (after 、 , ： or a space) before the term when that
    is near, else at the start of the word that contains the term; it ends at a sentence
    end, clause or word boundary when it has to be cut (:func:`_cut`). 「…」 marks each cut.
    """
    first, term_end = _first_term(sentence, terms)
    starts = [0, *(m.end() for m in _BOUNDARY.finditer(sentence) if m.end() <= first)]
    start = max(starts)
    if first - start > MAX_QUOTE_CHARS // 2:
        start = first
        while start > 0 and _word_class(sentence[start - 1]) == _word_class(sentence[start]) != "":
            start -= 1
    lead = "…" if start else ""
    if len(sentence) - start <= MAX_QUOTE_CHARS - len(lead):
        return lead + sentence[start:]
    limit = start + MAX_QUOTE_CHARS - len(lead) - 1
    return lead + _cut(sentence[start:], limit - start, term_end - start).rstrip() + "…"


def _cut(text: str, limit: int, keep: int = 0) -> str:
    """``text`` cut to at most ``limit`` characters at its last sentence end, else clause
    boundary, else word boundary (never inside a word: 「…振り」 of 「振り込み」), keeping
    at least its first ``keep`` characters (the key term of a window)."""
    if len(text) <= limit:
        return text
    floor = max(keep, 1)
    ends = [m.end() for m in re.finditer(r"[。！？!?]", text) if floor <= m.end() <= limit]
    if ends:
        return text[: ends[-1]]
    clauses = [m.start() for m in _BOUNDARY.finditer(text, floor, limit + 1)]
    if clauses:
        return text[: clauses[-1]].rstrip()
    end = limit
    while end > floor and _word_class(text[end - 1]) == _word_class(text[end]) != "":
        end -= 1
    return text[: end if end > floor else limit]


def section_start(content: str, limit: int = MAX_SECTION_CHARS) -> str:
    """The start of a section, its lines kept, up to ``limit`` characters (「…」 when cut).

    A line that does not fit is cut at its last sentence end that fits, or left out; a
    first line that does not fit is cut at a clause or word boundary (:func:`_cut`).
    """
    kept: list[str] = []
    size = 0
    for line in logical_lines(content):
        if size + len(line) <= limit:
            kept.append(line)
            size += len(line)
            continue
        room = limit - size
        ends = [m.end() for m in re.finditer(r"[。！？!?]", line) if m.end() <= room]
        if ends:
            kept.append(line[: ends[-1]])
        elif not kept:
            kept.append(_cut(line, limit - 1))
        kept[-1] += "…"
        break
    return "\n".join(kept)


_NEXT_HEADING = re.compile(
    r"(?:第\s*[0-9一二三四五六七八九十]+\s*[章節条]|[0-9]+(?:[.．][0-9]+)+)[ 　]*[^。\n]{1,38}"
)
"""A numbered heading line (「3.5 宿泊費の申請」「第12条 交際費」): a new section starts."""


def own_section(content: str) -> str:
    """``content`` up to the next numbered heading after its first line: a passage that
    runs into the next section is quoted as a section only up to it."""
    lines = content.split("\n")
    for index, line in enumerate(lines[1:], start=1):
        if _NEXT_HEADING.fullmatch(unicodedata.normalize("NFKC", line).strip()):
            return "\n".join(lines[:index]).rstrip()
    return content


def _section_quote(content: str, terms: Sequence[str], vocabulary: Vocabulary) -> str:
    """A section's start; when the section is longer, a shorter start and then its
    sentences with the key terms (:func:`trim`) that the start does not hold. Only the
    passage's own section (:func:`own_section`)."""
    content = own_section(content)
    head = section_start(content)
    if not head.endswith("…"):
        return head  # the whole section fits
    best = trim(content, terms, vocabulary)
    fragments = [f.strip() for f in re.split(r"[…\n]", best) if f.strip()]
    if not best or all(f in head for f in fragments):
        return head
    head = section_start(content, max(MAX_SECTION_CHARS - len(best), MAX_QUOTE_CHARS // 2))
    return head + "\n" + best.removeprefix("…")


def trim(
    content: str,
    terms: Sequence[str],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    *,
    section: bool = False,
) -> str:
    """The sentences of ``content`` that contain key terms, at most ``MAX_QUOTE_CHARS``.

    Sentences with the most (weighted) key terms are kept first while they fit — a
    sentence stating a fact (:func:`has_fact`) before one with the same terms that does
    not — then the best sentence's neighbours that state facts; kept
    sentences stay in text order, each line on its own line, with 「…」 where sentences
    were left out between them. A single sentence longer than the limit is cut to a
    :func:`window`. With ``section`` (the passage's heading names the key terms, so its
    body is the answer, e.g. the list under 「パスワードの条件」) the passage is quoted
    from its start instead, up to ``MAX_SECTION_CHARS``; when the section is longer and
    its sentences with the key terms come later, they follow a shorter start (「…」).
    """
    if section:
        return _section_quote(content, terms, vocabulary)
    units = _sentences(content)
    if not units:
        return ""
    scores = [_score(sentence, terms, vocabulary) for _, sentence in units]
    # among sentences on the topic, one that states a fact (a number, a 「name」) first
    scores = [s + FACT_BONUS if s and has_fact(units[i][1]) else s for i, s in enumerate(scores)]
    ranked = sorted((i for i, s in enumerate(scores) if s), key=lambda i: (-scores[i], i)) or [0]
    if len(units[ranked[0]][1]) > MAX_QUOTE_CHARS:
        return window(units[ranked[0]][1], terms)
    # the best sentence's neighbours, when they state facts, complete it (「…上限は次の
    # とおりです。」 then 「1回につき5万円までです。」): after the sentences with terms
    best = ranked[0]
    ranked += [
        i
        for i in (best + 1, best - 1)
        if 0 <= i < len(units) and i not in ranked and has_fact(units[i][1])
    ]
    keep: list[int] = []
    size = 0
    for i in ranked:
        if size + len(units[i][1]) <= MAX_QUOTE_CHARS:
            keep.append(i)
            size += len(units[i][1])
    keep.sort()
    pieces: list[str] = []
    for n, i in enumerate(keep):
        line, sentence = units[i]
        if n:
            if i != keep[n - 1] + 1:
                pieces.append("…")
            if line != units[keep[n - 1]][0]:
                pieces.append("\n")
            elif pieces[-1][-1:].isascii() and sentence[:1].isascii():
                pieces.append(" ")
        pieces.append(sentence)
    return "".join(pieces)


def _shorten(sentence: str) -> str:
    """``sentence`` cut at its last clause boundary within ``MAX_LEAD_CHARS`` (「…」)."""
    if len(sentence) <= MAX_LEAD_CHARS:
        return sentence
    ends = [m.start() for m in _BOUNDARY.finditer(sentence, 0, MAX_LEAD_CHARS) if m.start() > 10]
    return sentence[: ends[-1] if ends else MAX_LEAD_CHARS - 1].rstrip() + "…"


def lead_sentence(
    quotes: Sequence[str],
    terms: Sequence[str],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    wanted: AskedValue | None = None,
) -> str:
    """The quoted sentence with the most (weighted) key terms, without its list marker or
    「Q:」「A:」, shortened to ``MAX_LEAD_CHARS``; a statement (ending in 「。」) is preferred
    to a heading or label line, and both to a question (「…ですか。」, an FAQ row's 「Q:」).
    When the part asks for a value (``wanted``: 「何文字以上」), a sentence stating one
    (「10文字以上」) comes before one that only shares more words.

    Returns "" when no quoted sentence has a key term.
    """
    best: tuple[float, int, str] | None = None
    for quote in quotes:
        for _, sentence in _sentences(quote.replace("…", "\n")):
            text = _QA_PREFIX.sub("", _ITEM.sub("", sentence, count=1)).strip()
            score = _score(text, terms, vocabulary)
            if not text or not score:
                continue
            # a full statement first; a heading or label line (no sentence end) next;
            # a question last
            asked = _QUESTION.search(text) or _Q_PREFIX.match(_ITEM.sub("", sentence, count=1))
            statement = 0 if asked else 2 if _ENDED.search(text) else 1
            if wanted is not None and statement and wanted.stated_in(text):
                statement += 2
            if best is None or (statement, score) > (best[1], best[0]):
                best = (score, statement, text)
    return _shorten(best[2]) if best else ""


def table_cells(line: str) -> list[str]:
    """The cells of a table line (tab-separated, or between 「|」), [] for any other line."""
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")]
    text = line.strip()
    if len(text) > 1 and text.startswith("|") and text.endswith("|"):
        return [cell.strip() for cell in text[1:-1].split("|")]
    return []


def is_rule_line(cells: Sequence[str]) -> bool:
    """The line under a Markdown table's header (「|---|:--:|」): it holds no cell."""
    return set("".join(cells)) <= set("-: ")


def table_lead(content: str, terms: Sequence[str], vocabulary: Vocabulary) -> str:
    """The table cell a part asks for, as a sentence: the row its words name, in the one
    column whose header it names (「スタンダードプランの月額料金」 over 「項目 / スタンダード /
    プロ」 and 「月額料金(税抜) / 33,000円 / 88,000円」 → 「月額料金(税抜)（スタンダード）:
    33,000円」); "" when no row and single column are named.
    """
    best: tuple[float, str] | None = None
    header: list[str] = []
    for line in content.splitlines():
        cells = table_cells(line)
        if not cells:
            header = []
            continue
        if not header:
            header = cells
            continue
        if len(cells) != len(header) or is_rule_line(cells):
            continue  # a row that does not fit the header
        named = [
            j
            for j in range(1, len(header))
            if header[j] and any(PreparedText.of(header[j], vocabulary).has(t) for t in terms)
        ]
        score = _score(cells[0], terms, vocabulary)
        if len(named) == 1 and score and cells[named[0]] and (best is None or score > best[0]):
            column = named[0]
            best = (score, f"{cells[0]}（{header[column]}）: {cells[column]}")
    return _shorten(best[1]) if best else ""


_A_PREFIX = re.compile(r"^\s*(?:A|回答)\s*[:：.]\s*", re.IGNORECASE)


def answer_lead(quote: str) -> str:
    """The first sentence of a quoted FAQ row's answer (its 「A:」), shortened to
    ``MAX_LEAD_CHARS``; "" when the quote has no answer line."""
    answering = False
    for _, sentence in _sentences(quote.replace("…", "\n")):
        if _A_PREFIX.match(sentence):
            answering = True
            sentence = _A_PREFIX.sub("", sentence)
        text = sentence.strip()
        if answering and text:
            return _shorten(text)
    return ""
