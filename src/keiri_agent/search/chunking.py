"""Documents → searchable chunks, with the source (page, heading path, row) of each.

``chunk_document`` reads PDF, DOCX, XLSX, TXT, CSV and Markdown through the project's
extractor (``keiri_agent.documents``) and cuts the text into pieces of about ``size``
characters, ``overlap`` characters repeated between neighbours, cutting preferably after a
sentence end (。！？ or a line break). Chunks never cross a heading, so every chunk has one
``Source.heading``. A PDF page's opening text goes on with the previous page's section when
it continues it (a word or sentence split over the break, joined as ``page_joint`` says, or
a few words running over); otherwise a page starts a new section. Every character keeps its
own page: ``Source.page`` is the page of the chunk's first character, and a chunk that runs
onto later pages records where each starts (``Chunk.page_starts``, stored in the metadata
under ``PAGE_STARTS``) with a line break between the pages' texts unless a word or sentence
was split. Sections:

* Markdown: ATX headings (``#`` … ``######``) give the heading path
  ("2. ログイン > 2.1 パスワード"); ``#`` lines inside fenced code blocks are not headings and a
  fenced block is kept whole in one chunk unless it alone is longer than ``size``.
* DOCX: paragraphs with a "Heading n" / "見出し n" style (read with python-docx, since the
  extractor returns plain text); without styled headings, numbered lines as for PDFs.
* PDF / TXT: numbered heading lines at line start — "2.1 パスワードの条件", "3. 申請",
  "第2章 経費精算", "第1節 …" — and short lines marked ■ □ ◆ ◇ ("■ 交通費") over body text,
  best effort (short, no sentence end, no table tabs). A table of contents (``_toc_lines``:
  entries under a 目次/Contents title, a run of three or more entries with repeated levels,
  or entries ending in page numbers) is left out: it sets no heading and no chapter, and
  is neither searched nor quoted (a list of titles is no evidence of what a section says);
  so are a back-of-book index (``_index_lines``: terms with their pages after an 索引
  title) and a PDF's cover (``_is_cover``: the first page of a document of three or more
  pages, with no heading and little text besides its table of contents).
* XLSX: one section per sheet, the sheet name as heading.

Text is NFKC-normalised. Chunk ids are ``"{name}#{ordinal}"`` (0-based, in document order),
so the same file always gives the same ids.

``chunk_faq`` turns a question/answer CSV into one chunk per row ("Q: …\\nA: …").
"""

from __future__ import annotations

import csv
import io
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from keiri_agent.documents.extract import SUPPORTED_SUFFIXES, decode_text, extract_text
from keiri_agent.documents.normalize import (
    PAGE_BREAK,
    join_broken_lines,
    map_radical_supplement,
    normalize_pages,
    page_joint,
    unify_newlines,
)
from keiri_agent.documents.office import read_xlsx_rows
from keiri_agent.errors import UserInputError
from keiri_agent.files.bounds import InputBoundsError, check_csv_text
from keiri_agent.files.header import HEADER_SCAN_ROWS
from keiri_agent.limits import current_input_limits
from keiri_agent.search.models import PAGE_STARTS, Chunk, Source, format_page_starts, page_at

DOCUMENT_SUFFIXES: tuple[str, ...] = (*SUPPORTED_SUFFIXES, ".markdown")
"""Suffixes ``chunk_document`` accepts."""
FAQ_SUFFIXES: tuple[str, ...] = (".csv", ".xlsx")
"""Suffixes ``chunk_faq`` accepts."""

CHUNKING_VERSION = 3
"""What the chunks of a file look like. Bump it whenever a change to extraction
(``documents/``) or to this module changes the chunks an unchanged file yields: knowledge
bases record it per document and re-index documents chunked by another version."""

MAX_PAGES = 1000
MAX_CHARS = 5_000_000

QUESTION_NAMES = ("question", "q", "質問", "質問内容", "問い", "問", "設問", "faq")
ANSWER_NAMES = ("answer", "a", "回答", "回答内容", "答え", "答", "解答")
CATEGORY_NAMES = ("category", "カテゴリ", "カテゴリー", "分類", "区分")
ID_NAMES = ("id", "no", "no.", "番号", "faq_id", "faqid")

_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\n)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_KANJI_NUMBER = "0-9〇一二三四五六七八九十百"
_CHAPTER = re.compile(rf"^第\s*([{_KANJI_NUMBER}]+)\s*([部編章節項])\s*(.*)$")
_CHAPTER_LEVEL = {"部": 0, "編": 0, "章": 1, "節": 2, "項": 3}
_NUMBERED = re.compile(
    r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})(?P<dot>\.?)"
    r"(?:\s+|(?=[^\d\s.,:/\-年月日時分秒円%件個回人名歳ヶか万千億倍割台枚通]))"
    r"(?P<title>\S.*)$"
)
_MAX_HEADING_CHARS = 50
_MARKED = re.compile(r"^[■□◆◇]\s*(?P<title>[^■□◆◇\s].*)$")
_MARKED_LEVEL = 9  # below any numbered level: the next numbered heading closes it
_MAX_MARKED_CHARS = 30
_TOC_TITLE = re.compile(r"^(?:目\s*次|もくじ|(?:table\s+of\s+)?contents)$", re.IGNORECASE)
_TOC_PAGE = re.compile(r"(?:\s|\.{2,}|…+|‥+|・{2,}|･{2,})\s*\d{1,4}$")
_TOC_LEADER = re.compile(
    r"\S.*?(?:(?:\.{3,}|(?:\. ){3,}|…+|‥+|・{3,}|･{3,})\s*\d{1,4}|\.{8,}|(?:\. ){8,}|…{4,})$"
)
"""An entry with dot leaders and its page number, or with long leaders whose page number the
extraction put elsewhere."""
_TOC_LEADER_ONLY = re.compile(r"(?:\.\s?){3,}\s*\d{1,4}|(?:…+|‥+|・{3,}|･{3,})\s*\d{1,4}")
"""A line of dot leaders and a page number alone: the extraction put an entry's page on a
line of its own (「1.1 本書の目的」 / 「. . . . . 4」)."""
_PAGE_NUMBER_ONLY = re.compile(r"\d{1,4}")
"""A bare page number on its own line: part of a table of contents only under a 目次 title
(elsewhere a number alone between numbered lines may be a table's value)."""
_MIN_TOC_RUN = 3
_INDEX_TITLE = re.compile(r"^(?:索\s*引|さくいん|index)\s*\S{0,3}$", re.IGNORECASE)
"""An index title, with the first letter group the extraction may put on its line."""
_INDEX_ENTRY = re.compile(
    r"^\S.{0,40}?(?<![\d,，.])(?:\s*|\.{2,}|…+|‥+)\d{1,4}(?P<more>(?:\s*[、，]\s*|,\s+)\d{1,4})*$"
)
"""A back-of-book index entry: a term and its pages (「承認 12, 15」「差戻し……8、9」)."""
_INDEX_GROUP = re.compile(r"^(?:[ぁ-んァ-ンA-Za-z]|[ぁ-ん]行)$")
"""A letter heading a group of index entries (「あ」「か行」「A」)."""
_MIN_INDEX_RUN = 5
_COVER_MAX_CHARS = 300
"""A first page with no heading and at most this many characters (its table of contents
aside) is a cover: title, version, date, publisher."""
_COVER_MARK = re.compile(
    r"第\s*[\d.]+\s*版|改訂|バージョン|version|ver\.|発行|文書番号|\d{4}\s*年\s*\d{1,2}\s*月",
    re.IGNORECASE,
)
"""What a cover states: an edition, a version, a publisher or an issue date."""
_SHORT_CONTINUATION = 120  # characters of a page's run-over kept with the page before


def _fail(name: str, problem: str, *, hint: str, code: str, **details: object) -> UserInputError:
    return UserInputError(
        f"{name}: {problem}", hint=hint, code=code, details={"file": name, **details}
    )


def _nfkc(text: str) -> str:
    return map_radical_supplement(unicodedata.normalize("NFKC", text))


# --- splitting ----------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [piece for piece in _SENTENCE_END.split(text) if piece]


Span = tuple[int, int]
"""(start, end) offsets in the text of a run of units."""


def _tail(spans: Sequence[Span], overlap: int) -> list[Span]:
    """The last whole units of a chunk totalling at most ``overlap`` characters (or the
    last ``overlap`` characters when even the last unit is longer)."""
    if overlap <= 0 or not spans:
        return []
    out: list[Span] = []
    total = 0
    for start, end in reversed(spans):
        if total + end - start > overlap:
            break
        out.insert(0, (start, end))
        total += end - start
    if not out:
        end = spans[-1][1]
        return [(end - overlap, end)]
    return out


def _pack(units: Sequence[str], size: int, overlap: int) -> list[tuple[int, str]]:
    """``split_units`` with where each piece starts in ``"".join(units)``."""
    text = "".join(units)
    step = size - overlap
    pieces: list[Span] = []
    current: list[Span] = []
    fresh = False  # current holds something beyond the overlap carried from the last piece
    position = 0
    for unit in units:
        start, end = position, position + len(unit)
        position = end
        if len(unit) > size:
            if fresh:
                pieces.append((current[0][0], current[-1][1]))
            for offset in range(0, len(unit), step):
                pieces.append((start + offset, min(start + offset + size, end)))
                if offset + size >= len(unit):
                    break
            current = _tail([pieces[-1]], overlap)
            fresh = False
            continue
        length = current[-1][1] - current[0][0] if current else 0
        if length + len(unit) > size and fresh:
            pieces.append((current[0][0], current[-1][1]))
            current = _tail(current, overlap)
            while current and current[-1][1] - current[0][0] + len(unit) > size:
                current.pop(0)
        current.append((start, end))
        fresh = True
    if fresh:
        pieces.append((current[0][0], current[-1][1]))
    out = []
    for start, end in pieces:
        piece = text[start:end]
        if piece.strip():
            out.append((start + len(piece) - len(piece.lstrip()), piece.strip()))
    return out


def split_units(units: Iterable[str], size: int, overlap: int) -> list[str]:
    """Pack text units (sentences, code blocks) into pieces of at most ``size`` characters.

    Neighbouring pieces share up to ``overlap`` characters (whole units when possible). A
    unit longer than ``size`` is cut into ``size``-character pieces.
    """
    return [piece for _, piece in _pack(list(units), size, overlap)]


def split_text(text: str, size: int = 500, overlap: int = 100) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters at sentence ends."""
    _check_sizes(size, overlap)
    return split_units(_sentences(text), size, overlap)


def _check_sizes(size: int, overlap: int) -> None:
    if size < 1:
        raise ValueError(f"size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be between 0 and size - 1, got {overlap} (size {size})")


# --- sections -----------------------------------------------------------------------------


@dataclass
class _Section:
    heading: str | None
    units: list[str]
    page: int | None = None
    heading_line: str = ""
    page_starts: list[tuple[int, int]] = field(default_factory=list)
    """(offset in ``"".join(units)``, page) of each later page the section runs onto."""

    def empty(self) -> bool:
        """Only blank text or only its own heading line (its children carry the path)."""
        return "".join(self.units).strip() == self.heading_line.strip()

    def continue_on(self, page: int, units: Sequence[str], drop: int, joint: str) -> None:
        """Append the opening ``units`` of ``page``, joined by ``page_joint``'s (drop,
        joint): a word or sentence split over the break becomes one unit again, otherwise
        a line break separates the pages' texts. Records where ``page`` starts."""
        if not self.units:
            self.units = list(units)
            self.page_starts.append((0, page))
            return
        last = self.units[-1]
        last = last[: len(last) - drop] if drop else last
        if joint == PAGE_BREAK:
            self.units[-1] = last if last.endswith("\n") else last + "\n"
            self.page_starts.append((len("".join(self.units)), page))
            self.units += units
            return
        self.units[-1] = last + joint
        self.page_starts.append((len("".join(self.units)), page))
        self.units[-1] += units[0]
        self.units += units[1:]


class _HeadingPath:
    """A stack of (level, title); ``push`` pops headings at the same or a deeper level.

    ``chapter`` is the last top-level number seen ("2" of "2. ログイン"), used to tell
    numbered headings from numbered list items (see ``_plausible``).
    """

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []
        self.chapter: int | None = None

    def push(self, level: int, title: str) -> None:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))

    @property
    def path(self) -> str | None:
        return " > ".join(title for _, title in self.stack) or None


def detect_heading(line: str) -> tuple[int, str] | None:
    """(level, title) when ``line`` looks like a numbered heading, else None.

    "2.1 パスワードの条件" → (2, "2.1 パスワードの条件"); "3.申請" → (1, "3. 申請");
    "第2章 経費精算" → (1, "第2章 経費精算"). Sentences (ending in 。 or containing one),
    long lines, table rows (tabs) and amounts/dates ("90日以内", "2024年") are not headings.
    """
    line = line.strip()
    if not line or len(line) > _MAX_HEADING_CHARS or "\t" in line:
        return None
    if "。" in line or line[-1] in "、,:：":
        return None
    chapter = _CHAPTER.match(line)
    if chapter:
        number, kind, title = chapter.groups()
        label = f"第{number}{kind}"
        return _CHAPTER_LEVEL[kind], f"{label} {title}".strip()
    numbered = _NUMBERED.match(line)
    if numbered:
        num, dot, title = numbered.group("num", "dot", "title")
        if title[0].isdigit():
            return None
        if "." not in num and not dot and not line[len(num)].isspace() and len(line) > 30:
            return None  # a bare number glued to a long text is a sentence, not a heading
        return num.count(".") + 1, f"{num}{dot} {title.strip()}"
    return None


def _marked_heading(line: str) -> str | None:
    """The title of a short marked heading line ("■ 交通費" → "交通費"), else None."""
    line = line.strip()
    match = _MARKED.match(line)
    if match is None or len(line) > _MAX_MARKED_CHARS or "\t" in line:
        return None
    title = match.group("title").strip()
    if any(mark in title for mark in "。！？!?") or title[-1] in "、,:：":
        return None
    return title


def _toc_entry(line: str) -> int | None:
    """The level of ``line`` as a table-of-contents entry (a numbered heading, or a title
    with dot leaders and a page number, level 0), else None."""
    heading = detect_heading(line)
    if heading is not None:
        return heading[0]
    return 0 if _TOC_LEADER.fullmatch(line.strip()) else None


def _toc_lines(lines: Sequence[str]) -> set[int]:
    """Indexes of the lines that form a table of contents.

    A run of entries (``_toc_entry``; blank lines inside are skipped) is a table of
    contents when it follows a 目次 / Contents title, when its entries end in page
    numbers, or when it has three or more entries and two of them in a row are at the
    same or a rising level — a heading over its first sub-heading falls, a list of
    chapter titles does not.
    """
    found: set[int] = set()
    index = 0
    while index < len(lines):
        if _toc_entry(lines[index]) is None:
            index += 1
            continue
        run: list[tuple[int, int]] = []  # (line index, level)
        pages: list[int] = []  # lines holding only an entry's leaders and page number
        numbers: list[int] = []  # bare page numbers, kept only under a 目次 title
        titled = _toc_titled(lines, index)
        end = index
        while end < len(lines):
            line = lines[end].strip()
            if not line:
                end += 1
                continue
            if run and _TOC_LEADER_ONLY.fullmatch(line):
                pages.append(end)
                end += 1
                continue
            if run and titled and _PAGE_NUMBER_ONLY.fullmatch(line):
                numbers.append(end)
                end += 1
                continue
            level = _toc_entry(lines[end])
            if level is None:
                break
            run.append((end, level))
            end += 1
        paged = len(pages) + sum(1 for i, _ in run if _TOC_PAGE.search(lines[i].strip())) >= 2
        levels = [level for _, level in run]
        flat = any(b <= a for a, b in itertools.pairwise(levels))
        if titled or paged or (len(run) >= _MIN_TOC_RUN and flat):
            found.update([*(i for i, _ in run), *pages, *numbers])
        index = end
    return found


def _index_lines(lines: Sequence[str]) -> set[int]:
    """Indexes of the lines of a back-of-book index (索引): the entries (and letter group
    lines) after an 索引 / Index title, or a run of ``_MIN_INDEX_RUN`` entries of which
    three list several pages (an index continued from the page before)."""
    found: set[int] = set()
    index = 0
    while index < len(lines):
        titled = bool(_INDEX_TITLE.match(lines[index].strip()))
        start = index + 1 if titled else index
        end, listed = start, 0
        run: list[int] = []
        while end < len(lines):
            line = lines[end].strip()
            entry = _INDEX_ENTRY.match(line) if line else None
            if line and entry is None and not ((run or titled) and _INDEX_GROUP.match(line)):
                break
            if entry is not None:
                run.append(end)
                listed += bool(entry.group("more"))
            end += 1
        if run and (titled or (len(run) >= _MIN_INDEX_RUN and listed >= 3)):
            found.update(range(index, end))
        index = max(index + 1, end)  # a shorter run inside this one is no index either
    return found


def _is_cover(page_text: str) -> bool:
    """A document's first page that is a cover: no heading, at most ``_COVER_MAX_CHARS``
    characters besides its table of contents, and an edition, version, publisher or
    issue date (``_COVER_MARK``) — a short first page of text is no cover."""
    lines = page_text.split("\n")
    toc = _toc_lines(lines)
    rest = [line for i, line in enumerate(lines) if i not in toc]
    if any(detect_heading(line) is not None for line in rest):
        return False
    text = "".join("".join(rest).split())
    return len(text) <= _COVER_MAX_CHARS and _COVER_MARK.search(text) is not None


def _toc_titled(lines: Sequence[str], index: int) -> bool:
    """Whether the last non-blank line before ``index`` is a 目次 / Contents title."""
    for previous in reversed(lines[:index]):
        if previous.strip():
            return bool(_TOC_TITLE.match(previous.strip()))
    return False


_NUMBER_PREFIX = re.compile(r"^(\d+)(\.\d+)*")


def _plausible(title: str, path: _HeadingPath) -> bool:
    """Numbered headings follow the document's numbering; list items ("1. …") do not.

    A top-level "n." must be short (≤ 30 characters) and continue the chapters (the first
    one seen, or the last chapter + 1); "a.b" must belong to the current chapter ``a``.
    Updates ``path.chapter`` when a top-level heading is accepted.
    """
    match = _NUMBER_PREFIX.match(title)
    if match is None:  # 第n章 …
        return True
    top = int(match.group(1))
    if match.group(2):  # 2.1, 2.1.3
        return path.chapter is None or top == path.chapter
    if len(title) > 30 or (path.chapter is not None and top != path.chapter + 1):
        return False
    path.chapter = top
    return True


def _line_heading(lines: Sequence[str], index: int, path: _HeadingPath) -> tuple[int, str] | None:
    """(level, title) when ``lines[index]`` is a heading of the document, else None.

    A marked line ("■ 交通費") is a heading only over body text: the next non-blank line is
    neither another marked line (a list) nor a heading.
    """
    line = lines[index]
    heading = detect_heading(line)
    if heading is not None:
        return heading if _plausible(heading[1], path) else None
    title = _marked_heading(line)
    if title is None:
        return None
    following = next((later for later in lines[index + 1 :] if later.strip()), "")
    if not following or _MARKED.match(following.strip()) or detect_heading(following):
        return None
    return _MARKED_LEVEL, title


def _numbered_sections(
    lines: Sequence[str], path: _HeadingPath, page: int | None, *, join: bool
) -> list[_Section]:
    sections = [_Section(path.path, [], page)]
    body: list[str] = []

    def close() -> None:
        text = "\n".join(body)
        if join:
            text = join_broken_lines(text)
        heading_line = sections[-1].heading_line
        sections[-1].units = ([heading_line + "\n"] if heading_line else []) + _sentences(text)
        body.clear()

    lines = list(lines)
    toc = _toc_lines(lines) | _index_lines(lines)
    for index, line in enumerate(lines):
        if index in toc:
            continue  # navigation, not content: never searched, never quoted as evidence
        heading = _line_heading(lines, index, path)
        if heading is None:
            body.append(line)
            continue
        close()
        path.push(*heading)
        sections.append(_Section(path.path, [], page, heading_line=line.strip()))
    close()
    return sections


def _markdown_sections(text: str) -> list[_Section]:
    path = _HeadingPath()
    sections = [_Section(None, [])]
    fence: str | None = None
    block: list[str] = []
    for line in text.split("\n"):
        raw = line + "\n"
        if fence is not None:
            block.append(raw)
            if line.strip().startswith(fence):
                sections[-1].units.append("".join(block))
                block = []
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)[0] * 3
            block = [raw]
            continue
        atx = _ATX.match(line)
        if atx:
            path.push(len(atx.group(1)), atx.group(2))
            sections.append(_Section(path.path, [], heading_line=line))
            sections[-1].units.append(raw)
            continue
        sections[-1].units.extend(_sentences(raw))
    if block:  # an unclosed fence runs to the end
        sections[-1].units.append("".join(block))
    return sections


@dataclass(frozen=True)
class _StyledHeading:
    level: int
    title: str
    earlier: int
    """How many plain paragraphs before it have the same text (entries of a typed 目次)."""


def _docx_headings(data: bytes) -> list[_StyledHeading]:
    """The paragraphs styled "Title" / "Heading n" / "見出し n", in order."""
    from docx import Document

    try:
        document = Document(io.BytesIO(data))
    except Exception:
        return []
    out: list[_StyledHeading] = []
    plain: Counter[str] = Counter()
    for paragraph in document.paragraphs:
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        text = _nfkc(paragraph.text).strip()
        if not text:
            continue
        match = re.match(r"^(?:heading|見出し)\s*(\d)$", style.strip(), re.IGNORECASE)
        if match:
            out.append(_StyledHeading(int(match.group(1)), text, plain[_line_key(text)]))
        elif style.strip().lower() == "title":
            out.append(_StyledHeading(0, text, plain[_line_key(text)]))
        else:
            plain[_line_key(text)] += 1
    return out


def _line_key(text: str) -> str:
    """Whitespace-free NFKC form: the extractor's normalisation drops some spaces."""
    return re.sub(r"\s+", "", _nfkc(text))


_HEADING_LOOKAHEAD = 5  # styled headings skipped at most when one is not found in the text


def _styled_sections(text: str, headings: list[_StyledHeading]) -> list[_Section]:
    """Sections at the styled headings' lines. A line with a heading's text is that heading
    only once the plain paragraphs with its text before it have passed (a 目次 typed as
    plain paragraphs repeats every heading first); the lines of a table of contents
    (``_toc_lines``) are dropped: they are no evidence of what a section says."""
    path = _HeadingPath()
    sections = [_Section(None, [])]
    pending = [(heading, _line_key(heading.title)) for heading in headings]
    plain: Counter[str] = Counter()
    lines = text.split("\n")
    toc = _toc_lines(lines)
    for index, line in enumerate(lines):
        key = _line_key(line)
        found = next(
            (i for i, (_, k) in enumerate(pending[:_HEADING_LOOKAHEAD]) if key and k == key),
            None,
        )
        if found is not None and pending[found][0].earlier > plain[key]:
            found = None
        if found is None:
            plain[key] += 1
            if index in toc:
                continue
        else:
            heading, _ = pending[found]
            del pending[: found + 1]
            path.push(heading.level, heading.title)
            sections.append(_Section(path.path, [], heading_line=line))
        sections[-1].units.extend(_sentences(line + "\n"))
    return sections


# --- public API ---------------------------------------------------------------------------


def _check_suffix(name: str, supported: Sequence[str], what: str) -> str:
    suffix = PurePath(name).suffix.lower()
    if suffix not in supported:
        raise _fail(
            name,
            (f"{suffix} のファイル" if suffix else "拡張子のないファイル")
            + f"は{what}として登録できません",
            hint="次の形式のファイルを指定してください: " + "、".join(supported),
            code="UNSUPPORTED_DOCUMENT",
            suffix=suffix,
            supported=list(supported),
        )
    return suffix


def document_sections(name: str, data: bytes) -> list[_Section]:
    suffix = _check_suffix(name, DOCUMENT_SUFFIXES, "文書")
    extract_name = name if suffix != ".markdown" else str(PurePath(name).with_suffix(".md"))
    if suffix == ".pdf":
        extracted = extract_text(
            data, extract_name, max_pages=MAX_PAGES, max_chars=MAX_CHARS, normalize=False
        )
        numbers = [number for number, _ in extracted.pages]
        texts = normalize_pages([text for _, text in extracted.pages], join_lines=False)
        path = _HeadingPath()
        sections: list[_Section] = []
        previous = ""  # the last page with text
        for number, page_text in zip(numbers, texts, strict=True):
            if not page_text.strip():
                continue
            if not sections and not previous and len(numbers) >= 3 and _is_cover(page_text):
                continue  # title, version, publisher: no evidence of what a section says
            drop, joint = page_joint(previous, page_text) if previous else (0, PAGE_BREAK)
            previous = page_text
            page_sections = _numbered_sections(page_text.split("\n"), path, number, join=True)
            for section in page_sections:
                section.page_starts = [(0, number)]
            first = page_sections[0]
            opening = "".join(first.units)
            if (
                sections
                and opening.strip()
                and not first.heading_line
                and sections[-1].heading == first.heading
                and (joint != PAGE_BREAK or len(opening) < _SHORT_CONTINUATION)
            ):  # the page goes on with the previous page's text (a split word or sentence,
                # or a few words running over): one section, each page's text on its page
                sections[-1].continue_on(number, first.units, drop, joint)
                page_sections = page_sections[1:]
            sections += page_sections
        return sections
    extracted = extract_text(data, extract_name, max_chars=MAX_CHARS)
    if suffix == ".xlsx":
        out = []
        for _, sheet in extracted.pages:
            title, _, body = _nfkc(sheet).partition("\n")
            units = [line + "\n" for line in body.split("\n") if line.strip()]
            out.append(_Section(title.removeprefix("## ").strip() or None, [title + "\n", *units]))
        return out
    text = _nfkc(extracted.text)
    if suffix in (".md", ".markdown"):
        return _markdown_sections(text)
    if suffix == ".docx":
        headings = _docx_headings(data)
        if headings:
            sections = _styled_sections(text, headings)
            cover = sections[0]
            if len(sections) > 1 and _is_cover("".join(cover.units)):
                return sections[1:]  # title, version, publisher: no evidence
            return sections
    if suffix == ".csv":
        return [_Section(None, [line + "\n" for line in text.split("\n")])]
    return _numbered_sections(text.split("\n"), _HeadingPath(), None, join=False)


def _piece_page_starts(
    section_starts: Sequence[tuple[int, int]], start: int, length: int
) -> list[tuple[int, int]]:
    """The (offset in the piece, page) starts of the piece at ``start`` of a section."""
    if not section_starts:
        return []
    first = page_at(section_starts, start)
    if first is None:
        return []
    later = [(offset - start, page) for offset, page in section_starts if start < offset]
    return [(0, first), *((offset, page) for offset, page in later if offset < length)]


def chunk_document(name: str, data: bytes, *, size: int = 500, overlap: int = 100) -> list[Chunk]:
    """Cut one file into chunks (see the module docstring).

    Raises ``UserInputError`` for an unsupported suffix and ``DocumentError`` (a
    ``UserInputError``) when the file cannot be read (empty, encrypted, damaged, no text).
    """
    _check_sizes(size, overlap)
    chunks: list[Chunk] = []
    for section in document_sections(name, data):
        if section.empty():
            continue
        for start, piece in _pack(section.units, size, overlap):
            starts = _piece_page_starts(section.page_starts, start, len(piece))
            page = starts[0][1] if starts else section.page
            chunks.append(
                Chunk(
                    id=f"{name}#{len(chunks)}",
                    text=piece,
                    source=Source(document=name, page=page, heading=section.heading),
                    metadata={PAGE_STARTS: format_page_starts(starts)} if len(starts) > 1 else {},
                )
            )
    if not chunks:
        raise _fail(
            name,
            "登録できる文字がファイルに含まれていません",
            hint="正しいファイルを選んだか、中身が空でないか（画像だけの PDF でないか）を"
            "確認してください",
            code="DOCUMENT_NO_TEXT",
        )
    return chunks


def _header_key(value: str) -> str:
    return re.sub(r"\s+", "", _nfkc(value)).lower()


def _find_column(
    header: list[str], wanted: str | None, accepted: Sequence[str], name: str, role: str
) -> int | None:
    keys = [_header_key(cell) for cell in header]
    if wanted is not None:
        key = _header_key(wanted)
        if key in keys:
            return keys.index(key)
        raise _fail(
            name,
            f"{role}の列「{wanted}」が見出し行にありません",
            hint="見出し行にある列: " + "、".join(f"「{cell}」" for cell in header),
            code="FAQ_COLUMN_NOT_FOUND",
            column=wanted,
            headers=header,
        )
    for candidate in accepted:
        if candidate in keys:
            return keys.index(candidate)
    return None


def _faq_tables(name: str, data: bytes, suffix: str) -> list[list[list[str]]]:
    """The tables of an FAQ file: a CSV's rows, or each sheet's filled rows of a workbook."""
    if suffix == ".xlsx":
        return [rows for _, rows in read_xlsx_rows(data, name)]
    text, _ = decode_text(data, name)
    try:
        check_csv_text(text, ",", current_input_limits(), lines=HEADER_SCAN_ROWS + 1)
    except InputBoundsError as exc:
        raise _fail(name, exc.message, hint=exc.hint or "", code=exc.code, **exc.details) from None
    return [list(csv.reader(io.StringIO(unify_newlines(text))))]


_NO_ROWS_HINT = "見出し行（質問,回答）と、1 行に 1 つの質問と回答を書いてください"


def _faq_columns(
    name: str,
    tables: Sequence[list[list[str]]],
    question_column: str | None,
    answer_column: str | None,
) -> tuple[list[list[str]], list[str], dict[str, int | None]]:
    """The first table whose header (its first filled row) names a question and an answer
    column: its data rows, its header, and the column of each role."""
    first: tuple[list[str], int | None, int | None] | None = None
    for rows in tables:
        header_index = next((i for i, row in enumerate(rows) if any(c.strip() for c in row)), None)
        if header_index is None:
            continue
        header = [cell.strip() for cell in rows[header_index]]
        question = _find_column(header, question_column, QUESTION_NAMES, name, "質問")
        answer = _find_column(header, answer_column, ANSWER_NAMES, name, "回答")
        if question is not None and answer is not None and question != answer:
            columns = {
                "question": question,
                "answer": answer,
                "category": _find_column(header, None, CATEGORY_NAMES, name, "分類"),
                "id": _find_column(header, None, ID_NAMES, name, "番号"),
            }
            return rows[header_index + 1 :], header, columns
        first = first or (header, question, answer)
    if first is None:
        raise _fail(name, "FAQ のファイルに行がありません", hint=_NO_ROWS_HINT, code="FAQ_EMPTY")
    header, question, _ = first
    role, accepted = ("質問", QUESTION_NAMES) if question is None else ("回答", ANSWER_NAMES)
    raise _fail(
        name,
        f"見出し行（{'、'.join(f'「{cell}」' for cell in header)}）に{role}の列が見つかりません",
        hint=f"{role}の列の見出しを次のいずれかにしてください: {'、'.join(accepted)}",
        code="FAQ_COLUMN_NOT_FOUND",
        headers=header,
        accepted=list(accepted),
    )


def chunk_faq(
    name: str,
    data: bytes,
    *,
    question_column: str | None = None,
    answer_column: str | None = None,
) -> list[Chunk]:
    """One chunk per question/answer row of a CSV file (UTF-8, UTF-8 with BOM or CP932) or
    of an Excel workbook (the first sheet whose header names both columns).

    The header row names the columns: question (question / 質問 / Q …), answer (answer /
    回答 / A …), and optionally category (category / カテゴリ / 分類) and id (id / No / 番号);
    ``question_column``/``answer_column`` name them explicitly. Rows without a question or an
    answer are skipped. ``Source.row`` is the 1-based data row (the row after the header is 1).
    """
    suffix = _check_suffix(name, FAQ_SUFFIXES, "FAQ")
    if not data.strip():
        raise _fail(name, "FAQ のファイルが空です", hint=_NO_ROWS_HINT, code="FAQ_EMPTY")
    tables = _faq_tables(name, data, suffix)
    rows, header, columns = _faq_columns(name, tables, question_column, answer_column)

    def cell(row: list[str], role: str) -> str:
        index = columns[role]
        if index is None or index >= len(row):
            return ""
        return _nfkc(row[index]).strip()

    chunks: list[Chunk] = []
    for number, row in enumerate(rows, start=1):
        q, a = cell(row, "question"), cell(row, "answer")
        if not q or not a:
            continue
        metadata = {"question": q, "answer": a, "category": cell(row, "category")}
        if columns["id"] is not None:
            metadata["id"] = cell(row, "id")
        chunks.append(
            Chunk(
                id=f"{name}#{len(chunks)}",
                text=f"Q: {q}\nA: {a}",
                source=Source(document=name, row=number, heading=metadata["category"] or None),
                metadata=metadata,
            )
        )
    if not chunks:
        raise _fail(
            name,
            "FAQ のファイルに、質問と回答の両方が入った行がありません",
            hint="質問の列と回答の列を埋めてください",
            code="FAQ_EMPTY",
            headers=header,
        )
    return chunks


__all__ = [
    "DOCUMENT_SUFFIXES",
    "FAQ_SUFFIXES",
    "chunk_document",
    "chunk_faq",
    "detect_heading",
    "split_text",
]
