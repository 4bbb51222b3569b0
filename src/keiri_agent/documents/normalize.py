"""Normalisation of text extracted from Japanese documents (PDFs printed from browsers/Office).

``normalize_text`` runs small named steps in order (each is public and tested):

1. ``unify_newlines``          CRLF/CR → LF; drop other control characters (keeps tab, LF, FF).
2. ``nfkc``                    NFKC: full-width ASCII → half-width, half-width kana → full-width,
                               Kangxi radicals U+2F00–U+2FD5 → the standard kanji (⼯ → 工).
3. ``map_radical_supplement``  CJK Radicals Supplement code points that NFKC leaves alone
                               (⻑ U+2ED1 → 長, ⺠ U+2EA0 → 民, ...) via ``RADICAL_SUPPLEMENT``.
4. ``collapse_whitespace``     runs of spaces → one space (tabs kept as column separators),
                               trailing spaces dropped, 3+ newlines → one blank line.
5. ``remove_cjk_latin_spaces`` "XYZ システム" → "XYZシステム", "3 回" → "3回"
                               (Latin-Latin spaces such as "Excel VBA" and the space
                               after a leading section number "2.1 パスワード" stay).
6. ``join_broken_lines``       a wrapped line is joined to the next (CJK|CJK, and CJK|Latin
                               at full width), never after a sentence end, a label, a
                               heading, a short line over a longer one, around a table
                               row (tabs), or before a list item; blank lines stay.
7. ``remove_page_furniture``   per page (pages are separated by form feeds ``\\f``): page-number
                               lines ("- 3 -", "3 / 10", "Page 3", "3ページ") at the top or bottom
                               of a page, and header/footer lines repeated on most pages.

``normalize_pages`` does the same for a list of pages (the page step needs them all);
``page_joint`` decides what goes between two pages' texts once their furniture is gone
(nothing when a word or a CJK sentence wraps over the break, a space when a Latin
sentence continues, a blank line otherwise) and ``join_pages`` joins pages with it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

# Source of every entry: Unicode Character Database, EquivalentUnifiedIdeograph.txt
# (https://www.unicode.org/Public/UCD/latest/ucd/EquivalentUnifiedIdeograph.txt, by Ken Lunde),
# which maps each CJK Radicals Supplement code point to its equivalent unified ideograph.
# Only the entries whose target is a kanji used on its own in Japanese text are kept; radical
# *components* (⺅ 亻, ⺡ 氵, ⻖ 阝, ...) and simplified-Chinese forms (⻓ 长, ⻔ 门, ...) are left
# alone, and so is ⻏ U+2ECF (the file maps it to 邑 U+9091, which is rarely what a Japanese
# document means by it).
RADICAL_SUPPLEMENT: dict[str, str] = {
    "\u2e8c": "小",  # ⺌ CJK RADICAL SMALL ONE          → U+5C0F
    "\u2e92": "巳",  # ⺒ CJK RADICAL SNAKE              → U+5DF3
    "\u2e93": "幺",  # ⺓ CJK RADICAL THREAD             → U+5E7A
    "\u2e97": "心",  # ⺗ CJK RADICAL HEART TWO          → U+5FC3
    "\u2e9c": "日",  # ⺜ CJK RADICAL SUN                → U+65E5
    "\u2e9d": "月",  # ⺝ CJK RADICAL MOON               → U+6708
    "\u2e9f": "母",  # ⺟ CJK RADICAL MOTHER             → U+6BCD
    "\u2ea0": "民",  # ⺠ CJK RADICAL CIVILIAN           → U+6C11
    "\u2ea9": "王",  # ⺩ CJK RADICAL JADE               → U+738B
    "\u2eab": "目",  # ⺫ CJK RADICAL EYE                → U+76EE
    "\u2eac": "示",  # ⺬ CJK RADICAL SPIRIT ONE         → U+793A
    "\u2eb6": "羊",  # ⺶ CJK RADICAL SHEEP              → U+7F8A
    "\u2ebc": "肉",  # ⺼ CJK RADICAL MEAT               → U+8089
    "\u2ec1": "虎",  # ⻁ CJK RADICAL TIGER              → U+864E
    "\u2ec4": "西",  # ⻄ CJK RADICAL WEST TWO           → U+897F
    "\u2ec6": "角",  # ⻆ CJK RADICAL HORN               → U+89D2
    "\u2ed1": "長",  # ⻑ CJK RADICAL LONG ONE           → U+9577
    "\u2ed7": "雨",  # ⻗ CJK RADICAL RAIN               → U+96E8
    "\u2ed8": "青",  # ⻘ CJK RADICAL BLUE               → U+9752
    "\u2edd": "食",  # ⻝ CJK RADICAL EAT THREE          → U+98DF
    "\u2ee4": "鬼",  # ⻤ CJK RADICAL GHOST              → U+9B3C
    "\u2ee8": "麦",  # ⻨ CJK RADICAL SIMPLIFIED WHEAT   → U+9EA6
    "\u2ee9": "黄",  # ⻩ CJK RADICAL SIMPLIFIED YELLOW  → U+9EC4
    "\u2eeb": "斉",  # ⻫ CJK RADICAL J-SIMPLIFIED EVEN  → U+6589
    "\u2eed": "歯",  # ⻭ CJK RADICAL J-SIMPLIFIED TOOTH → U+6B6F
    "\u2eef": "竜",  # ⻯ CJK RADICAL J-SIMPLIFIED DRAGON → U+7ADC
    "\u2ef2": "亀",  # ⻲ CJK RADICAL J-SIMPLIFIED TURTLE → U+4E80
}
_RADICAL_TABLE = str.maketrans(RADICAL_SUPPLEMENT)

# Hiragana, katakana, CJK punctuation, CJK ideographs (incl. extension A and compatibility).
_CJK = r"\u3001-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_BEFORE_LATIN = re.compile(f"(?<=[{_CJK}]) (?=[A-Za-z0-9])")
_LATIN_BEFORE_CJK = re.compile(f"(?<=[A-Za-z0-9]) (?=[{_CJK}])")
_SECTION_NUMBER = re.compile(f"^(\\d+(?:\\.\\d+)+) (?=[{_CJK}])", re.MULTILINE)
_SECTION_MARK = "\x00"
_HEADING_LINE = re.compile(
    r"^(?:\d+(?:\.\d+)*\.? |第\s*\d+\s*[章節部編]\s*)[^\s、。，．「」]{1,30}$"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[^\S\t\n\f]+")
_SENTENCE_END = "。！？!?"

_PAGE_NUMBER = re.compile(
    r"^(?:[-‐−–—]\s*\d+\s*[-‐−–—]"  # - 3 -
    r"|\d+\s*/\s*\d+"  # 3 / 10
    r"|(?:page|p\.)\s*\d+(?:\s*(?:of|/)\s*\d+)?"  # Page 3, p. 3, Page 3 of 10
    r"|\d+\s*ページ(?:目)?"  # 3ページ
    r"|第\s*\d+\s*頁"  # 第3頁
    r")$",
    re.IGNORECASE,
)
_EDGE_LINES = 2  # lines looked at at the top and the bottom of each page


def unify_newlines(text: str) -> str:
    """CRLF and CR become LF; control characters other than tab, LF and FF are dropped."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def nfkc(text: str) -> str:
    """Unicode NFKC (also fixes the Kangxi Radicals block U+2F00–U+2FD5)."""
    return unicodedata.normalize("NFKC", text)


def map_radical_supplement(text: str) -> str:
    """Replace CJK Radicals Supplement look-alikes with standard kanji (``RADICAL_SUPPLEMENT``)."""
    return text.translate(_RADICAL_TABLE)


def collapse_whitespace(text: str) -> str:
    """Runs of spaces → one space, no trailing spaces, at most one blank line in a row."""
    lines = [_SPACES.sub(" ", line).strip(" ") for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


def remove_cjk_latin_spaces(text: str) -> str:
    """Drop a single space between a CJK character and an ASCII letter or digit.

    The space after a section number that starts a line ("2.1 パスワード") stays:
    it separates the number from the heading, it is not a typesetting artefact.
    """
    protected = _SECTION_NUMBER.sub(lambda m: m.group(1) + _SECTION_MARK, text)
    spaced = _LATIN_BEFORE_CJK.sub("", _CJK_BEFORE_LATIN.sub("", protected))
    return spaced.replace(_SECTION_MARK, " ")


def join_broken_lines(text: str) -> str:
    """Join a line to the next when the break between them is a wrap, not the author's.

    A break is a wrap when the line ends in CJK and the next starts with CJK, or one
    side is CJK and the other an ASCII letter or digit (``API`` | ``リクエスト``) and
    the line is as long as the page's lines run (a wrap happens at full width). A
    break stays when the line ends a sentence (。！？), is a label (ends with ：) or a
    short numbered heading ("2.1 パスワードの条件", "第3章 申請"), when either line is a
    table row (cells separated by tabs), when the next line starts a list item (・, ①,
    1., (1) ...), and when a short line is followed by a longer one — a heading or
    label over its paragraph ("パスワードの変更" over "設定画面の「変更」ボタンから…").
    "Short" is measured against the page's typical line (``_typical_width``), so it
    adapts to the page's layout.
    """
    lines = text.split("\n")
    typical = _typical_width(lines)
    out: list[str] = []
    for line in lines:
        if out and line and out[-1] and _is_wrap(out[-1], line, typical):
            out[-1] += line
        else:
            out.append(line)
    return "\n".join(out)


_LIST_MARKER = re.compile(
    r"^(?:[・●○■□◆◇▶▷※\-–—*]|[\u2460-\u2473\u2776-\u277f]|\d+[.)．）]|[(（]\d+[)）])"
)
_LATIN_EDGE = re.compile(r"[A-Za-z0-9]")
_SHORT_SHARE = 0.6
"""A line shorter than this share of the page's typical line ended on purpose (when
the next line is longer)."""
_MIN_FULL_WIDTH = 12
"""A line of fewer characters is never taken for a full-width line."""


def _typical_width(lines: Sequence[str]) -> int:
    """The length the page's lines run to: the 80th percentile of non-empty lines."""
    widths = sorted(len(line) for line in lines if line.strip())
    if not widths:
        return 0
    return widths[min(len(widths) - 1, int(len(widths) * 0.8))]


def _is_wrap(line: str, following: str, typical: int) -> bool:
    if "\t" in line or "\t" in following:
        return False  # a table row (cells separated by tabs) is a line of its own
    last, first = line[-1], following[0]
    cjk_last, cjk_first = bool(_CJK_CHAR.match(last)), bool(_CJK_CHAR.match(first))
    if last in _SENTENCE_END or last in "：:" or _HEADING_LINE.match(line):
        return False
    if _LIST_MARKER.match(following):
        return False
    full = len(line) >= max(_SHORT_SHARE * typical, _MIN_FULL_WIDTH)
    if cjk_last and cjk_first:
        return full or len(following) <= len(line)
    latin_last, latin_first = bool(_LATIN_EDGE.match(last)), bool(_LATIN_EDGE.match(first))
    mixed = (cjk_last and latin_first) or (latin_last and cjk_first)
    return mixed and full


_HYPHENATED = re.compile(r"[A-Za-z]-$")
_LOWER_START = re.compile(r"[a-z]")
PAGE_BREAK = "\n\n"
"""What separates two pages' texts when the second does not continue the first."""


def page_joint(before: str, after: str) -> tuple[int, str]:
    """How the text of one page joins the next: (characters to drop at the end of
    ``before``, the text placed between them).

    ``before`` and ``after`` are two consecutive pages' texts with their page numbers,
    running headers and footers already removed (``remove_page_furniture``). A page that
    ends mid-word or mid-sentence continues on the next:

    * ``"…交通費の精"`` | ``"算は月末までに…"`` → ``(0, "")``: a CJK wrap — CJK on both sides
      and the page's last line runs to its full width (``join_broken_lines``' rule for a
      wrap within a page; a Latin/CJK break is not joined over a page: "…12,345円" |
      "2ページ目…" is too often a table's last row and the next page's text);
    * ``"… reim-"`` | ``"bursement …"`` → ``(1, "")``: the hyphen of a split word goes;
    * ``"… sent to the"`` | ``"travel desk."`` → ``(0, " ")``: a Latin sentence goes on (the
      last line runs to the page's full width and the next starts in lower case).

    Otherwise (a sentence end, a label, a heading, a list item, a short last line, an
    empty page) the pages are separate: ``(0, PAGE_BREAK)``.
    """
    lines = [line for line in before.rstrip("\n").split("\n") if line.strip()]
    following = after.lstrip("\n").split("\n", 1)[0]
    if not lines or not following.strip():
        return 0, PAGE_BREAK
    last = lines[-1]
    typical = _typical_width(lines)
    both_cjk = bool(_CJK_CHAR.match(last[-1])) and bool(_CJK_CHAR.match(following[0]))
    full = len(last) >= max(_SHORT_SHARE * typical, _MIN_FULL_WIDTH)
    if both_cjk and full and _is_wrap(last, following, typical):
        return 0, ""
    if _LOWER_START.match(following) and not _LIST_MARKER.match(following):
        if _HYPHENATED.search(last):
            return 1, ""
        if full and (_LATIN_EDGE.match(last[-1]) or last[-1] in ",;"):
            return 0, " "
    return 0, PAGE_BREAK


def join_pages(pages: Sequence[str]) -> str:
    """Non-empty pages joined by ``page_joint`` (a split word or sentence is whole again)."""
    text = ""
    for page in pages:
        if not page:
            continue
        if text:
            drop, joint = page_joint(text, page)
            text = text[: len(text) - drop] + joint
        text += page
    return text


def _edge_indexes(lines: list[str], width: int = _EDGE_LINES) -> list[int]:
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(filled[:width] + filled[-width:]))


def _footer_key(line: str, number: int) -> str:
    """The line without a trailing page number ('社外秘 3' on page 3 → '社外秘')."""
    stripped = line.strip()
    match = re.search(r"[\s\-‐−–—(（]*(\d+)[\s\-‐−–—)）]*(?:/\s*\d+)?$", stripped)
    if match and int(match.group(1)) == number and match.start() > 0:
        return stripped[: match.start()]
    return stripped


def _is_page_number(line: str, number: int) -> bool:
    return bool(_PAGE_NUMBER.match(line)) or line == str(number)


def remove_page_furniture(pages: Sequence[str]) -> list[str]:
    """Drop page numbers and repeated headers/footers at the top or bottom of each page.

    A page-number line ("- 3 -", "3 / 10", "Page 3", a bare "3" equal to the page's number)
    is dropped wherever it sits among a page's first or last two lines. With three or more
    pages, a first or last line found on more than half of the pages (a trailing page
    number ignored) is a header/footer and dropped from every page; then the new first and
    last lines are judged the same way (a header of two lines), up to ``_EDGE_LINES`` times.
    """
    result: list[list[str]] = []
    for number, page in enumerate(pages, start=1):
        lines = page.split("\n")
        drop = {i for i in _edge_indexes(lines) if _is_page_number(lines[i].strip(), number)}
        result.append([line for i, line in enumerate(lines) if i not in drop])
    for _ in range(_EDGE_LINES if len(pages) >= 3 else 0):  # a header of two lines, then its
        counts: Counter[str] = Counter()  # second line is the edge: peeled one at a time
        for number, lines in enumerate(result, start=1):
            counts.update({_footer_key(lines[i], number) for i in _edge_indexes(lines, 1)})
        repeated = {key for key, n in counts.items() if n * 2 > len(pages) and key}
        if not repeated:
            break
        result = [
            [line for i, line in enumerate(lines) if i not in drop]
            for number, lines in enumerate(result, start=1)
            for drop in [
                {i for i in _edge_indexes(lines, 1) if _footer_key(lines[i], number) in repeated}
            ]
        ]
    return ["\n".join(lines).strip("\n") for lines in result]


TEXT_STEPS: tuple[Callable[[str], str], ...] = (
    unify_newlines,
    nfkc,
    map_radical_supplement,
    collapse_whitespace,
    remove_cjk_latin_spaces,
    join_broken_lines,
)


def _clean(text: str, steps: Sequence[Callable[[str], str]] = TEXT_STEPS) -> str:
    for step in steps:
        text = step(text)
    return text.strip()


_LINE_STEPS = tuple(step for step in TEXT_STEPS if step is not join_broken_lines)


def normalize_pages(pages: Sequence[str], *, join_lines: bool = True) -> list[str]:
    """Normalise each page and remove page numbers and repeated headers/footers."""
    furnished = remove_page_furniture([_clean(page, _LINE_STEPS) for page in pages])
    return [_clean(page, TEXT_STEPS if join_lines else _LINE_STEPS) for page in furnished]


def normalize_text(text: str, *, join_lines: bool = True) -> str:
    """Normalise extracted text; form feeds (``\\f``) separate pages and are removed.

    ``join_lines=False`` keeps line breaks (for sources whose lines are real paragraphs).
    """
    pages = unify_newlines(text).split("\f")
    return join_pages(normalize_pages(pages, join_lines=join_lines))
