"""Filters read from request text: periods, category values and numeric conditions.

Periods become filters on the date column ("2024年" → ``== "2024"``, "2025年1月以降"
/ "since 2025-03" → ``>=`` the first day, "まで"/"until" → ``<`` the next period,
"2024年度" → April to March; era years 令和6/R6/平成30/H30 too). Relative periods
("直近3ヶ月", "last year") and a month without a year that the data cannot settle
are returned as questions: a period is never dropped silently. A period filter
keeps the span of text stating it, so a multi-part request can scope it to its
clause (``ParsedRequest.filters_for``).

Conditions: on a named numeric column ("売上が10万円以上"); an amount without a
column ("10万円以上の取引") goes to the amount column with a stated assumption.
Whatever is left unread — a count condition ("5件以上"), an amount with no amount
column, a year no rule reads ("24年度") — becomes a question, never a silently
unfiltered result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keiri_agent.agents.analysis.reasoning.offline.mentions import Mention


def _t(lang: str, ja: str, en: str) -> str:
    return ja if lang == "ja" else en


_PERIOD_START = r"以降|から|以後|より後"
_PERIOD_END = r"まで|以前|迄"
_PERIOD_BEFORE = r"より前|未満"
_EN_START = {"since", "from", "after", "starting", "on or after"}
_EN_END = {"until", "till", "through", "to", "up to", "by", "on or before"}
_EN_BEFORE = {"before", "prior to"}
_MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep|sept", "oct", "nov"]
_MONTH_NAMES.append("dec")
_MONTH_LONG = (
    "january february march april may june july august september october november december"
)
_MONTHS = {n: i + 1 for i, names in enumerate(_MONTH_NAMES) for n in names.split("|")} | {
    n: i + 1 for i, n in enumerate(_MONTH_LONG.split())
}
_EN_QUAL = (
    r"(on or before|on or after|since|from|after|starting|until|till|through|to|up to|by|before"
    r"|prior to|in|during|for|of)?"
    r"\s*"
)
RELATIVE_PERIOD = re.compile(
    r"直近|過去\s*\d+\s*(?:ヶ月|か月|カ月|ヵ月|年|週|日)|先月|今月|今年|昨年|去年|前年(?!比)|先週|"
    r"(?<![a-z])(?:last|past|previous|this)\s+(?:\d+\s+)?(?:months?|years?|weeks?|days?|quarters?)"
)
# A number as said, with its sign: 「マイナス10万円」「▲5,000」「△500」, "-2,000", "minus 500".
_NUMBER = r"((?:[-−▲△]\s*|マイナス\s*|(?<![a-z])(?:minus|negative)\s+)?\d[\d,]*(?:\.\d+)?)"
_NEGATIVE_SIGN = re.compile(r"^(?:[-−▲△]|マイナス|minus|negative)\s*")


def _said_number(said: str) -> float:
    """The value of a number as ``_NUMBER`` reads it (「マイナス10」 → -10.0, "1,234" → 1234.0)."""
    sign = -1 if _NEGATIVE_SIGN.match(said) else 1
    return sign * float(_NEGATIVE_SIGN.sub("", said).replace(",", ""))


# 「耐用年数が5年の」「訪問回数が3回の」: a counter unit after the number is the
# column's own unit, so the condition is an equality (not a period of five years).
_JA_COUNTER = (
    r"(?:年|回|件|個|人|日|台|枚|本|歳|点|円|時間|か月|ヶ月|カ月|ヵ月|%|口|株|鉢|箱|冊|袋|棟|杯)"
)
# Units of measure a number may be said in (「1kg以上」「30分を超える」), read against the
# unit in the column's name (``in_column_unit``).
_MEASURE = r"(?:kg|g|t|km|m|l|キロ(?:グラム|メートル)?|グラム|メートル|トン|リットル|分)"
_JA_SCALES = {"千": 1_000, "万": 10_000, "百万": 1_000_000, "千万": 10_000_000, "億": 100_000_000}
_JA_COMPARE = re.compile(
    r"^\s*[」』\"]?\s*(?:が|は|の値が)?\s*"
    + _NUMBER
    + r"\s*(千万|百万|万|億)?\s*(?:"
    + _JA_COUNTER
    + "|"
    + _MEASURE
    + r")?\s*"
    r"(以上|以下|未満|超|を超え(?:る|た|ている|てる|ています|ました)?|より大きい|より多い|より小さい|より少ない|を下回(?:る|った|っている)|を上回(?:る|った|っている))"
)
_EN_GREATER = "greater|more|longer|larger|bigger|higher|heavier"
_EN_SMALLER = "less|fewer|shorter|smaller|lower|lighter|cheaper"
_EN_COMPARE_WORD = (
    rf"(?:>=|<=|>|<|over|above|(?:no\s+)?(?:{_EN_GREATER}|{_EN_SMALLER})\s+than|at least"
    r"|at most|below|under|exceeding)"
)
_EN_COMPARE = re.compile(
    rf"^\s*(?:is\s+|are\s+|of\s+)?({_EN_COMPARE_WORD})\s*[$¥]?\s*"
    + _NUMBER
    + r"\s*(k|thousand|million|mn|billion|bn)?(?![a-z])(?:\s*(?:yen|jpy))?"
)
# "$10,000 or more", "5 nights or fewer": the comparison said after the number.
_EN_OR_MORE = (
    r"(or more|or above|or higher|or over|or greater|and up|and above|and over|or less"
    r"|or below|or lower|or under|or fewer|and under|and below)(?![a-z])"
)
_EN_COMPARE_AFTER = re.compile(
    r"^\s*(?:is\s+|are\s+|of\s+)?[$¥]?\s*"
    + _NUMBER
    + r"\s*(k|thousand|million|mn|billion|bn)?(?:\s*(?:yen|jpy))?\s+"
    + _EN_OR_MORE
)
_COMPARE_OPS = {
    word: op
    for op, words in {
        # "more than", "no fewer than": any English comparative, read by ``compare_op``
        ">=": "以上|>=|at least|or more|or above|or higher|or over|or greater|and up"
        "|and above|and over",
        "<=": "以下|<=|at most|or less|or below|or lower|or under|or fewer|and under|and below",
        "<": "未満|より小さい|より少ない|を下回る|<|below|under",
        ">": "超|を超える|より大きい|より多い|を上回る|>|over|above|exceeding",
    }.items()
    for word in words.split("|")
}


def compare_op(word: str) -> str:
    """The operator of a comparison word, its verb in any form (を超えている → >, "longer
    than" → >, "no fewer than" → >=)."""
    verb = re.match(r"を(超え|下回|上回)", word)
    if verb:
        word = {"超え": "を超える", "下回": "を下回る", "上回": "を上回る"}[verb[1]]
    than = re.fullmatch(rf"(no\s+)?({_EN_GREATER}|{_EN_SMALLER})\s+than", word)
    if than:
        greater = re.fullmatch(_EN_GREATER, than[2]) is not None
        if than[1]:
            return "<=" if greater else ">="
        return ">" if greater else "<"
    return _COMPARE_OPS[word]


def _next_start(year: int, month: int | None) -> str:
    if month is None:
        return f"{year + 1}-01-01"
    return f"{year + 1}-01-01" if month == 12 else f"{year}-{month + 1:02d}-01"


def _period_filters(
    column: str, year: int, month: int | None, day: int | None, qualifier: str
) -> list[dict[str, Any]]:
    start = f"{year}-{month or 1:02d}-{day or 1:02d}"
    exact = f"{year}" if month is None else f"{year}-{month:02d}"
    if day is not None and month is not None:
        exact = start
    if qualifier == "start":
        return [{"col": column, "op": ">=", "value": start}]
    if qualifier == "end":
        value = exact if day is not None else _next_start(year, month)
        return [{"col": column, "op": "<=" if day is not None else "<", "value": value}]
    if qualifier == "before":
        return [{"col": column, "op": "<", "value": start}]
    return [{"col": column, "op": "==", "value": exact}]


def _qualifier(word: str | None) -> str:
    word = (word or "").strip()
    if word in _EN_START or re.fullmatch(_PERIOD_START, word or "-"):
        return "start"
    if word in _EN_END or re.fullmatch(_PERIOD_END, word or "-"):
        return "end"
    if word in _EN_BEFORE or re.fullmatch(_PERIOD_BEFORE, word or "-"):
        return "before"
    return "within"


# 「12月分まで」: the bill or pay of a month (分) keeps the qualifier after it.
_QUAL_JA = rf"(?:分\s*)?({_PERIOD_START}|{_PERIOD_END}|{_PERIOD_BEFORE})?"
# A year: 4 digits, a Japanese era year (令和6, 平成30, 令和元, R6, H30; NFKC + lower case) or
# 2 digits before 年 (「24年4月」: 2024 only when the data has dates in 2024, ``date_filters``).
_YEAR = (
    r"(\d{4}|(?<![\d.,])\d{2}(?=\s*年(?!度))|(?:令和|平成|(?<![a-z])[rh])\s*(?:\d{1,2}|元)(?!\d))"
)
_ERA_START = {"令和": 2018, "r": 2018, "平成": 1988, "h": 1988}
# 「2024年度」, and a part of it: 「2024年度下期」「2024年度第3四半期」「2025年度の上半期」.
_FISCAL_RX = re.compile(
    _YEAR + r"\s*年度(?:\s*の?\s*(上期|上半期|下期|下半期|第\s*[1-4]\s*四半期|[1-4]\s*q(?![a-z])))?"
)
# 「2024年度（4月〜翌3月）」: the months of the fiscal period restated right after it.
_FISCAL_RESTATED = re.compile(
    r"\s*[（(]\s*(\d{1,2})\s*月?\s*(?:[〜~～\-－]|から)\s*(翌年?)?\s*(\d{1,2})\s*月(?:\s*まで)?\s*[）)]"
)
# "FY2024", "fy 2024", "FY2024 H2", "FY2024 Q3": the fiscal year said in English (April to
# March, as 年度).
_EN_FISCAL_RX = re.compile(
    r"(?<![a-z])(?:fy\s*'?|fiscal\s+(?:year\s+)?)(\d{4})(?!\d)(?:\s*(h[12]|q[1-4])(?![a-z0-9]))?"
)
_JA_YEAR_MONTHS_RX = re.compile(
    _YEAR + r"\s*年\s*(\d{1,2})\s*[〜~～\-－]\s*(\d{1,2})\s*月(?!別|ごと|毎)(?:\s*分)?(?:\s*まで)?"
)
_JA_DATE_RX = re.compile(
    _YEAR + r"\s*年(?:\s*(?:の\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日|\s*末)?)?\s*" + _QUAL_JA
)
_ISO_RX = re.compile(
    _EN_QUAL + r"(?<!\d)(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?(?!\d)\s*" + _QUAL_JA
)
_ANY_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# "Oct–Dec 2024", "between April and September 2025", "from May through July 2025".
_EN_MONTH_SPAN_RX = re.compile(
    r"(?<![a-z])(?:(?:between|from)\s+)?("
    + _ANY_MONTH
    + r")\.?(?:\s*[–—\-~〜]\s*|\s+(?:and|to|through|thru|till|until)\s+)("
    + _ANY_MONTH
    + r")\.?,?\s+(\d{4})(?!\d)"
)
# "Q1 2025 (Jan–Mar)": a quarter whose months are said with it (else it is asked).
_EN_QUARTER_MONTHS_RX = re.compile(
    r"(?<![a-z])q[1-4]\s*(?:of\s+)?(\d{4})\s*[(（]\s*("
    + _ANY_MONTH
    + r")\.?\s*(?:[–—\-~〜]|to|through)\s*("
    + _ANY_MONTH
    + r")\.?\s*[)）]"
)
_EN_MONTH_RX = re.compile(
    _EN_QUAL + r"(?<![a-z])(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?\s+(\d{4})"
)
# A month said without its year ("in November", "during March"): the year is read from
# the period the data spans; a short name ("nov") only after a word that says a period.
_EN_MONTH_ONLY = (
    r"(?<![a-z])(?:(since|from|after|starting|until|till|through|up to|before|prior to|in"
    r"|during|for|of)\s+)?(?<![a-z])(" + _MONTH_LONG.replace(" ", "|") + r")(?![a-z])",
    r"(?<![a-z])(since|from|after|until|till|through|before|in|during|for|of)\s+("
    + "|".join(n for n in _MONTHS if len(n) <= 4 and n != "may")
    + r")\.?(?![a-z])",
)
_FUTURE = re.compile(r"(?<![a-z])(?:forecast|predict|projection|next)", re.IGNORECASE)
_EN_MONTH_ONLY_RX = [re.compile(rx + r"(?!\.?\s*,?\s*\d)") for rx in _EN_MONTH_ONLY]
_YEAR_WORDS = sorted(_EN_START | _EN_END | _EN_BEFORE | {"in", "during", "for", "of"}, key=len)
# "in 2024", "for calendar year 2024", "during the year 2024", "calendar 2024", "CY2024".
_EN_YEAR_RX = re.compile(
    r"(?<![a-z])(?:(" + "|".join(reversed(_YEAR_WORDS)) + r")\s+(?:the\s+)?"
    r"(?:(?:calendar\s+)?year\s+|calendar\s+|cy\s*)?|(?:calendar\s+year|calendar|cy)\s*)"
    r"(\d{4})(?![\d-])"
)
_QUARTER = re.compile(r"第\s*[1-4]\s*四半期|\bq[1-4]\b", re.IGNORECASE)
_MONTH_RANGE_RX = re.compile(
    r"(?<![\d年/])(\d{1,2})\s*月?\s*[〜~～\-－]\s*(\d{1,2})\s*月(?!別|ごと|毎)"
)
_MONTH_ONLY_RX = re.compile(
    rf"(?<![\d年])(\d{{1,2}})\s*月(?!別|ごと|毎|次|間)(?:\s*(\d{{1,2}})\s*日|\s*末)?"
    rf"\s*(?:分\s*)?({_PERIOD_START}|{_PERIOD_END})?"
)
# "since 1/1/2025", "through 3/31/2025": a date written month first, as in English.
_US_DATE_RX = re.compile(_EN_QUAL + r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
# Two dates joined as a range: 「2024/4/1〜2025/3/31」, "2025-01-01 to 2025-03-31",
# "between March 2025 and June 2025".
_RANGE_JOIN = re.compile(r"\s*(?:[〜~～\-–—]|to|through|until|till|and)\s*")


def _year(text: str) -> str:
    """The Western year of "2024", "令和6", "r6", "平成元", "h30"."""
    if text.isdigit():
        return text
    era = re.match(r"令和|平成|[rh]", text)
    assert era is not None
    number = text[era.end() :].strip()
    return str(_ERA_START[era.group()] + (1 if number == "元" else int(number)))


# (start, end, filter): a period filter and the span of the text that states it.
PeriodFilter = tuple[int, int, dict[str, Any]]
# The months of a fiscal year a request names: (months after April it starts, how many).
FiscalPart = tuple[int, int]
_WHOLE_YEAR: FiscalPart = (0, 12)
# (start, end, year, month, day, qualifier, part of a fiscal year or None): a period as
# read, before filters.
_Found = tuple[int, int, int, int | None, int | None, str, FiscalPart | None]


def date_filters(
    text: str,
    dates: list[str],
    date_examples: list[str],
    claimed: bytearray,
    lang: str,
    year_hint: int | None = None,
) -> tuple[list[PeriodFilter], list[str], list[str]]:
    """Period filters on the date column (with the span stating each), questions for
    periods that cannot be pinned down, and assumptions made (a fiscal year, an era
    year, a month's year read from the data).

    Args:
        text: Normalised request text.
        dates: Names of the datetime columns.
        date_examples: Example values of those columns.
        claimed: Per-character flags; the spans read as periods are set.
        lang: "ja" or "en" (for the questions and assumptions).
        year_hint: The year of the period a follow-up edits: a month said alone there
            ("and September?") is of that year.
    """
    problems: list[str] = []
    assumptions: list[str] = []
    found: list[_Found] = []

    def add(
        m: re.Match[str],
        y: str,
        mo: str | None,
        d: str | None,
        q: str,
        fy: FiscalPart | None = None,
    ) -> None:
        short = y.isdigit() and len(y) == 2
        if short and not any(e.startswith(f"20{y}") for e in date_examples):
            return  # 「24年」 with no date in 2024: left unread, so it is asked
        year = _year(f"20{y}" if short else y)
        if any(claimed[m.start() : m.end()]) or not 1900 <= int(year) <= 2100:
            return
        claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        if year != y:
            said = y.replace(" ", "")
            assumptions.append(_t(lang, f"{said}年は{year}年", f"{said} is {year}"))
        found.append(
            (m.start(), m.end(), int(year), int(mo) if mo else None, int(d) if d else None, q, fy)
        )

    for m in [*_FISCAL_RX.finditer(text), *_EN_FISCAL_RX.finditer(text)]:
        add(m, m.group(1), None, None, "within", fy=_fiscal_part(m.group(2)))
        _claim_restated_months(text, m, claimed)
    for m in _JA_YEAR_MONTHS_RX.finditer(text):  # 「2025年1〜6月」: both months in that year
        first, last = int(m.group(2)), int(m.group(3))
        if not (1 <= first <= 12 and 1 <= last <= 12) or any(claimed[m.start() : m.end()]):
            continue
        add(m, m.group(1), str(first), None, "start")
        end_year = int(_year(m.group(1))) + (last < first)
        found.append((m.end(), m.end(), end_year, last, None, "end", None))
    for m in _JA_DATE_RX.finditer(text):
        add(m, m.group(1), m.group(2), m.group(3), _qualifier(m.group(4)))
    for m in _ISO_RX.finditer(text):
        add(m, m.group(2), m.group(3), m.group(4), _qualifier(m.group(5) or m.group(1)))
    found += _english_month_spans(text, claimed, add)
    for m in _EN_MONTH_RX.finditer(text):
        add(m, m.group(3), str(_MONTHS[m.group(2)]), None, _qualifier(m.group(1)))
    for m in _EN_YEAR_RX.finditer(text):
        add(m, m.group(2), None, None, _qualifier(m.group(1)))
    for m in _US_DATE_RX.finditer(text):
        month, day = (m.group(2), m.group(3)) if int(m.group(2)) <= 12 else (m[3], m[2])
        add(m, m.group(4), month, day, _qualifier(m.group(1)))
    months = _month_ranges(text, dates, date_examples, claimed)
    alone_problems, alone_assumed = _months_said_alone(
        text, found, date_examples, claimed, lang, add, year_hint
    )
    problems += alone_problems
    assumptions += alone_assumed
    for m, year in _english_months(text, date_examples, claimed, problems, lang, found, year_hint):
        said = m.group(2).capitalize()
        add(m, year, str(_MONTHS[m.group(2)]), None, _qualifier(m.group(1)))
        assumptions.append(
            _t(lang, f"{_MONTHS[m.group(2)]}月は{year}年と仮定", f"{said} taken as {year}")
        )
    found = _as_ranges(text, sorted(found))
    problems += _vague_periods(text, bool(months), lang, claimed)
    if found and not dates:
        problems.append(
            _t(
                lang,
                "期間で絞り込むための日付列が見つかりません。どの列で絞り込みますか？",
                "There is no date column to filter the period on. Which column holds the date?",
            )
        )
        return [], problems, assumptions
    mentioned = [c for c in dates if c.lower() in text]
    column = (mentioned or dates)[0] if dates else ""
    filters = [
        (start, end, condition)
        for start, end, year, month_no, day, qualifier, fiscal in sorted(found)
        for condition in (
            _fiscal_year_filters(column, year, fiscal)
            if fiscal
            else _period_filters(column, year, month_no, day, qualifier)
        )
    ]
    assumptions += [
        _fiscal_assumption(year, fiscal, text[start:end], lang)
        for start, end, year, _, _, _, fiscal in sorted(found)
        if fiscal
    ]
    return _said_once(filters + months), problems, assumptions


def _said_once(filters: list[PeriodFilter]) -> list[PeriodFilter]:
    """Each period condition once: "FY2024 (Apr 2024 - Mar 2025)" states the same span
    twice."""
    seen: list[dict[str, Any]] = []
    kept = []
    for start, end, condition in filters:
        if condition not in seen:
            seen.append(condition)
            kept.append((start, end, condition))
    return kept


def _as_ranges(text: str, found: list[_Found]) -> list[_Found]:
    """Two periods joined by 〜 / "to" / "and" (``_RANGE_JOIN``), neither said with a
    qualifier of its own, are one range: from the first (``>=``) to the end of the
    second (「2024/4/1〜2025/3/31」 → on or after April 1 and on or before March 31)."""
    ranged = list(found)
    for i in range(len(ranged) - 1):
        first, last = ranged[i], ranged[i + 1]
        if (
            first[5] == last[5] == "within"
            and not (first[6] or last[6])
            and _RANGE_JOIN.fullmatch(text[first[1] : last[0]])
        ):
            ranged[i] = (*first[:5], "start", None)
            ranged[i + 1] = (*last[:5], "end", None)
        elif (
            first[5] == "start"
            and last[5] == "within"
            and not (first[6] or last[6])
            and not text[first[1] : last[0]].strip()
        ):
            # 「2025年1月から3月の件数」: the period right after 「から」 ends the range,
            # it is not a second condition (which kept March alone)
            ranged[i + 1] = (*last[:5], "end", None)
        elif (
            first[5] == "within"
            and last[5] == "end"
            and not (first[6] or last[6])
            and not text[first[1] : last[0]].strip()
        ):
            # "April 2024 through March 2025": "through" made March the end, so the
            # period right before it starts the range (it kept April alone)
            ranged[i] = (*first[:5], "start", None)
    return ranged


def _vague_periods(text: str, months_read: bool, lang: str, claimed: bytearray) -> list[str]:
    """Questions for periods no date pins down: a quarter (fiscal or calendar?) when no
    months were read, and a relative period (「直近3ヶ月」, "last year") that is not part of
    a column's name (「前年同月請求額」: ``claimed``)."""
    problems: list[str] = []
    unread = (q for q in _QUARTER.finditer(text) if not any(claimed[q.start() : q.end()]))
    if not months_read and (quarter := next(unread, None)):
        # 「第1四半期」: fiscal or calendar? the months are asked, never guessed
        problems.append(
            _t(
                lang,
                f"「{quarter.group(0)}」はどの月からどの月までですか？（例: 4〜6月）",
                f"Which months is {quarter.group(0).upper()}? (e.g. April to June)",
            )
        )
    if any(not any(claimed[m.start() : m.end()]) for m in RELATIVE_PERIOD.finditer(text)):
        problems.append(
            _t(
                lang,
                "期間を具体的な日付で指定してください（例: 2025年1月以降、2024年）",
                "Please give the period as dates (e.g. since 2025-01, in 2024).",
            )
        )
    return problems


def _english_month_spans(text: str, claimed: bytearray, add: Any) -> list[_Found]:
    """ "Oct–Dec 2024", "Nov-Feb 2025": from the first month (``add``) to the end of the last,
    the year said after the last one; returns the end of each span."""
    ends: list[_Found] = []
    for m in _EN_QUARTER_MONTHS_RX.finditer(text):  # "Q1 2025 (Jan–Mar)": the year first
        first, last = _MONTHS[m.group(2)], _MONTHS[m.group(3)]
        if any(claimed[m.start() : m.end()]):
            continue
        add(m, m.group(1), str(first), None, "start")
        ends.append((m.end(), m.end(), int(m.group(1)) + (first > last), last, None, "end", None))
    for m in _EN_MONTH_SPAN_RX.finditer(text):
        first, last = _MONTHS[m.group(1)], _MONTHS[m.group(2)]
        if any(claimed[m.start() : m.end()]):
            continue
        add(m, str(int(m.group(3)) - (first > last)), str(first), None, "start")
        ends.append((m.end(), m.end(), int(m.group(3)), last, None, "end", None))
    return ends


def _months_said_alone(
    text: str,
    found: list[_Found],
    date_examples: list[str],
    claimed: bytearray,
    lang: str,
    add: Any,
    year_hint: int | None,
) -> tuple[list[str], list[str]]:
    """Months said without a year (「3月分」): each read with the year of its range or of
    the data (``add``), else asked. Returns (questions, assumptions)."""
    problems: list[str] = []
    assumptions: list[str] = []
    for m in _MONTH_ONLY_RX.finditer(text):
        month = m.group(1)
        if any(claimed[m.start() : m.end()]) or not 1 <= int(month) <= 12:
            continue
        year, assumed = _year_of_month(text, found, date_examples, m, int(month), year_hint)
        if year is None:
            problems.append(
                _t(
                    lang,
                    f"{month}月は何年の{month}月ですか？（例: 2025年{month}月）",
                    f"Which year is month {month}? (e.g. 2025-{int(month):02d})",
                )
            )
            continue
        add(m, year, month, m.group(2), _qualifier(m.group(3)))
        if assumed:
            assumptions.append(_t(lang, f"{month}月は{year}年と仮定", f"month {month} is {year}"))
    return problems, assumptions


def _year_of_month(
    text: str,
    found: list[_Found],
    date_examples: list[str],
    m: re.Match[str],
    month: int,
    year_hint: int | None,
) -> tuple[str | None, bool]:
    """The year of a month said alone, and whether it was assumed: the range's year
    (「2025年1月から3月まで」) first, else the one year the data gives it, else the year
    of the period a follow-up edits."""
    joined = _year_of_range(text, found, m.start(), m.end(), month)
    if joined is not None:
        return str(joined), False
    only = _month_year(date_examples, month) or (str(year_hint) if year_hint else None)
    return only, only is not None


_RANGE_SAID = re.compile(r"\s*(?:から|より|[〜~～\-–—]|to|through|until|till|and)?\s*")


def _year_of_range(text: str, found: list[_Found], start: int, end: int, month: int) -> int | None:
    """The year of a month said without one at an end of a range whose other end has it:
    「2025年1月から3月まで」 (2025), "January to March 2025" (2025), 「2024年11月〜2月」 (2025)."""
    for other in found:
        other_start, other_end, year, other_month = other[0], other[1], other[2], other[3]
        if other_month is None:
            continue
        if other_end <= start and _RANGE_SAID.fullmatch(text, other_end, start):
            return year + 1 if month < other_month else year
        if end <= other_start and _RANGE_SAID.fullmatch(text, end, other_start):
            return year - 1 if month > other_month else year
    return None


def _english_months(
    text: str,
    date_examples: list[str],
    claimed: bytearray,
    problems: list[str],
    lang: str,
    found_so_far: list[_Found],
    year_hint: int | None,
) -> list[tuple[re.Match[str], str]]:
    """English months said without a year ("in November") with the one year the data's
    dates give each; a month the data cannot place is asked (``problems``), unless the
    request asks a forecast ("forecast October": the refusal answers it)."""
    found = []
    for m in (m for rx in _EN_MONTH_ONLY_RX for m in rx.finditer(text)):
        if any(claimed[m.start() : m.end()]) or (m.group(2) == "may" and not m.group(1)):
            continue  # "may" without "in"/"during" is the verb
        month = _MONTHS[m.group(2)]
        only = _month_year(date_examples, month)
        joined = _year_of_range(text, found_so_far, m.start(), m.end(), month)
        if joined is not None:  # "from January to March 2025"
            found.append((m, str(joined)))
        elif only is not None:
            found.append((m, only))
        elif year_hint is not None:  # "and September?" after August 2024
            found.append((m, str(year_hint)))
        elif not _FUTURE.search(text):
            problems.append(
                _t(
                    lang,
                    f"{month}月は何年の{month}月ですか？（例: 2025年{month}月）",
                    f"Which year is {m.group(2).capitalize()}? (e.g. {m.group(2)} 2025)",
                )
            )
    return found


def _month_ranges(
    text: str, dates: list[str], date_examples: list[str], claimed: bytearray
) -> list[PeriodFilter]:
    """「10〜12月」: from the first month to the end of the last, each month's year read
    from the period the data spans; unread when a year is not one (then asked as months)."""
    found: list[PeriodFilter] = []
    for m in _MONTH_RANGE_RX.finditer(text):
        first, last = int(m.group(1)), int(m.group(2))
        if any(claimed[m.start() : m.end()]) or not (1 <= first <= 12 and 1 <= last <= 12):
            continue
        year_first, year_last = _month_year(date_examples, first), _month_year(date_examples, last)
        if year_first is None or year_last is None or not dates:
            continue
        claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        end_year, end_month = (int(year_last) + 1, 1) if last == 12 else (int(year_last), last + 1)
        start = {"col": dates[0], "op": ">=", "value": f"{year_first}-{first:02d}-01"}
        end = {"col": dates[0], "op": "<", "value": f"{end_year}-{end_month:02d}-01"}
        found += [(m.start(), m.end(), start), (m.start(), m.end(), end)]
    return found


def _month_year(date_examples: list[str], month: int) -> str | None:
    """The one year in which ``month`` falls within the period the date examples span
    (「6月」 in data of 2025-04〜2026-03 is June 2025), or None (no year, or several)."""
    dated = sorted(e[:7] for e in date_examples if re.fullmatch(r"\d{4}-\d{2}", e[:7]))
    if not dated:
        return None
    first, last = dated[0], dated[-1]
    years = {
        str(year)
        for year in range(int(first[:4]), int(last[:4]) + 1)
        if first <= f"{year}-{month:02d}" <= last
    }
    return years.pop() if len(years) == 1 else None


def _fiscal_part(said: str | None) -> FiscalPart:
    """The months of the fiscal year a part names: 上期 / H1 the first six, 下期 / H2 the
    last six, 第3四半期 / 3Q / Q3 the third three; none said, the whole year."""
    if not said:
        return _WHOLE_YEAR
    said = said.replace(" ", "")
    if said in ("上期", "上半期", "h1"):
        return (0, 6)
    if said in ("下期", "下半期", "h2"):
        return (6, 6)
    quarter = int(re.sub(r"\D", "", said))
    return ((quarter - 1) * 3, 3)


def _claim_restated_months(text: str, fiscal: re.Match[str], claimed: bytearray) -> None:
    """「2024年度（4月〜翌3月）」: months in brackets right after a fiscal period that name
    exactly its months are read with it (claimed); other months are a period of their own."""
    restated = _FISCAL_RESTATED.match(text, fiscal.end())
    if restated and _restates(_fiscal_part(fiscal.group(2)), restated):
        claimed[restated.start() : restated.end()] = b"\x01" * (restated.end() - restated.start())


def _restates(part: FiscalPart, said: re.Match[str]) -> bool:
    """True when 「（4月〜翌3月）」 names exactly the months of the fiscal part before it."""
    first = (3 + part[0]) % 12 + 1
    last = (3 + part[0] + part[1] - 1) % 12 + 1
    next_year = bool(said.group(2))
    crosses = 3 + part[0] + part[1] > 12
    return (int(said.group(1)), int(said.group(3))) == (first, last) and next_year == crosses


def _fiscal_months(year: int, part: FiscalPart) -> tuple[tuple[int, int], tuple[int, int]]:
    """(year, month) of the first month of the part and of the month after it."""
    first = 4 + part[0]
    after = first + part[1]
    return (year + (first - 1) // 12, (first - 1) % 12 + 1), (
        year + (after - 1) // 12,
        (after - 1) % 12 + 1,
    )


def _fiscal_year_filters(column: str, year: int, part: FiscalPart) -> list[dict[str, Any]]:
    """A Japanese fiscal year (April of ``year`` to March of the next), or the part of it
    said (2024年度下期: October 2024 to March 2025)."""
    (y1, m1), (y2, m2) = _fiscal_months(year, part)
    return [
        {"col": column, "op": ">=", "value": f"{y1}-{m1:02d}-01"},
        {"col": column, "op": "<", "value": f"{y2}-{m2:02d}-01"},
    ]


def _fiscal_assumption(year: int, part: FiscalPart, said: str, lang: str) -> str:
    """「2024年度下期は2024年10月〜2025年3月と仮定」: the months a fiscal period was read as."""
    (y1, m1), (y2, m2) = _fiscal_months(year, part)
    last_year, last_month = (y2, m2 - 1) if m2 > 1 else (y2 - 1, 12)
    names = "January February March April May June July August September October November December"
    month = names.split()
    return _t(
        lang,
        f"{said.strip()}は{y1}年{m1}月〜{last_year}年{last_month}月と仮定",
        f"{said.strip()} taken as {month[m1 - 1]} {y1} to {month[last_month - 1]} {last_year}",
    )


def value_filters(values: list[Mention]) -> list[dict[str, Any]]:
    by_column: dict[str, list[Mention]] = {}
    for mention in values:
        by_column.setdefault(mention.column, []).append(mention)
    filters: list[dict[str, Any]] = []
    for column, items in by_column.items():
        keep = list(dict.fromkeys(m.value for m in items if not m.negated))
        drop = list(dict.fromkeys(m.value for m in items if m.negated))
        if len(keep) == 1:
            filters.append({"col": column, "op": "==", "value": keep[0]})
        elif keep:
            filters.append({"col": column, "op": "in", "value": keep})
        filters += [{"col": column, "op": "!=", "value": value} for value in drop]
    return filters


# Equality on a named numeric column: "grade = 2", "grade is 2", "a grade of 2", 「等級が2の行」.
_EN_EQUAL = re.compile(
    r"^\s*(?:==?|is equal to|equal to|equals|is|of)\s*(-?\d+(?:\.\d+)?)"
    r"(?![\d.%])(?!\s*(?:percent|k(?![a-z])|bins?|times|or (?:more|less|above|below)))"
)
# "for room 3, …": a bare number right after the column's name, ending the phrase.
_EN_BARE_EQUAL = re.compile(r"^\s+(-?\d+(?:\.\d+)?)(?=\s*(?:[,;:?!]|\.(?!\d)|$|only\b))")
_JA_EQUAL = re.compile(
    # 「点検回数が年12回の」: a rate per year, month or week said before the number
    r"^\s*[」』\"]?\s*(?:が|は|=|:)\s*(?:年|月|週)?\s*(-?\d+(?:\.\d+)?)(?![\d.])\s*"
    + _JA_COUNTER
    + r"?\s*"
    r"(?=の|で|と|です|である|に等しい|[、,。?]|$)"
)


def condition_at(rest: str) -> tuple[int | float, str, int] | None:
    """(value, op, length) of a comparison or an equality at the start of ``rest``."""
    if found := _compare(rest):
        return found
    # before the equality: 「過不足額が0でない」 is not 「…が0で」
    if m := _JA_NOT_EQUAL.match(rest):  # 「過不足額が０じゃない」「数量が1以外の」「ゼロじゃない」
        value = 0.0 if m.group(1) == "ゼロ" else float(m.group(1))
        return (int(value) if value.is_integer() else value), "!=", m.end()
    if m := _JA_EQUAL.match(rest) or _EN_EQUAL.match(rest) or _EN_BARE_EQUAL.match(rest):
        value = float(m.group(1))
        return (int(value) if value.is_integer() else value), "==", m.end()
    if m := _JA_SIGN.match(rest):  # 「粗利がマイナスになってる」「在庫数ゼロの」
        op = {"マイナス": "<", "負": "<", "赤字": "<", "プラス": ">", "黒字": ">"}.get(m[1], "==")
        return 0, op, m.end()
    if m := _EN_SIGN.match(rest):  # "where the difference quantity is negative"
        return 0, _EN_SIGN_OPS[m[1]], m.end()
    return None


_EN_SIGN_OPS = {
    "negative": "<",
    "below zero": "<",
    "less than zero": "<",
    "under zero": "<",
    "in the red": "<",
    "positive": ">",
    "above zero": ">",
    "greater than zero": ">",
    "over zero": ">",
    "in the black": ">",
}
_EN_SIGN = re.compile(
    r"^\s*(?:is|are|was|were|came out|comes out|turned|went)\s+(?:still\s+)?("
    + "|".join(_EN_SIGN_OPS)
    + r")(?![a-z])"
)
# "a negative difference amount", "positive variances": the sign said before the column.
_EN_SIGN_BEFORE = re.compile(r"(?<![a-z])(negative|positive)\s+$")


_JA_NOT_EQUAL = re.compile(
    r"^\s*[」』\"]?\s*(?:が|は)\s*(-?\d+(?:\.\d+)?(?![\d.])|ゼロ)\s*" + _JA_COUNTER + r"?\s*"
    r"(?:じゃない|ではない|でない|じゃありません|ではありません|以外)"
)
_JA_SIGN = re.compile(
    r"^\s*[」』】\]）)\"'`]?\s*(?:が|は)?\s*(マイナス|負|赤字|プラス|黒字|ゼロ|0|無料|タダ)(?:\s*[(（][^)）]{0,8}[)）])?"
    r"(?=\s*(?:の|に|な|で|だ|に?なって|件|個))"
)


def _compare(rest: str) -> tuple[int | float, str, int] | None:
    """(value, op, length) of a comparison at the start of ``rest`` ("が10万円以上")."""
    if m := _JA_COMPARE.match(rest):
        number, scale, op = (
            _said_number(m.group(1)),
            _JA_SCALES.get(m.group(2) or "", 1),
            m.group(3),
        )
    elif m := _EN_COMPARE.match(rest):
        number, scale, op = (
            _said_number(m.group(2)),
            _EN_SCALES.get(m.group(3) or "", 1),
            m.group(1),
        )
    elif m := _EN_COMPARE_AFTER.match(rest):
        number, scale, op = (
            _said_number(m.group(1)),
            _EN_SCALES.get(m.group(2) or "", 1),
            m.group(3),
        )
    else:
        return None
    value = number * scale
    return (int(value) if value.is_integer() else value), compare_op(op), m.end()


_EN_COMPARE_BEFORE = re.compile(
    rf"(?<![a-z])({_EN_COMPARE_WORD})\s*(\d[\d,]*(?:\.\d+)?)\s*(k)?\s+$"
)
# A count said before the numeric column it fixes: "bookings with 2 adults", "for 3 nights".
_EN_COUNT_BEFORE = re.compile(
    r"(?<![a-z])(?:with|having|for|of)\s+(?:an?\s+)?(\d+(?:\.\d+)?)(?:-[a-z]+)?\s+$"
)


# The unit a column's name declares: 売上（千円）, 重量(g), distance_km, 所要時間_分.
_NAME_UNITS = (
    (re.compile(r"(?:単位[:：]?)?百万円"), "money", 1_000_000),
    (re.compile(r"(?:単位[:：]?)?千円"), "money", 1_000),
    (re.compile(r"(?:単位[:：]?)?万円"), "money", 10_000),
    (re.compile(r"kg|キログラム|キロ"), "weight", 1_000),
    (re.compile(r"g|グラム"), "weight", 1),
    (re.compile(r"t|トン"), "weight", 1_000_000),
    (re.compile(r"km|キロメートル"), "length", 1_000),
    (re.compile(r"m|メートル"), "length", 1),
    (re.compile(r"l|リットル"), "volume", 1),
    (re.compile(r"h|hours?|hrs?|時間"), "time", 60),
    (re.compile(r"min|mins|minutes?|分"), "time", 1),
)
# The unit a number is said in; キロ is a kilogram or a kilometre, as the column measures.
_SAID_UNITS = (
    (re.compile(r"円|yen|¥|万"), "money", 1),
    (re.compile(r"kg|キログラム"), "weight", 1_000),
    (re.compile(r"km|キロメートル"), "length", 1_000),
    (re.compile(r"キロ"), "kilo", 1_000),
    (re.compile(r"(?<![a-z])g(?![a-z])|グラム"), "weight", 1),
    (re.compile(r"トン|(?<![a-z])t(?![a-z])"), "weight", 1_000_000),
    (re.compile(r"(?<![a-z])m(?![a-z])|メートル"), "length", 1),
    (re.compile(r"(?<![a-z])l(?![a-z])|リットル"), "volume", 1),
    (re.compile(r"時間"), "time", 60),
    (re.compile(r"分"), "time", 1),
)


_EN_VERB_SYNONYMS = {"asked": "request", "paid": "pay", "spent": "spend", "sent": "send"}


def _column_of_verb(window: str, columns: Sequence[str]) -> str | None:
    """The one numeric column whose verb is said around an amount: "was claimed" →
    ``claimed_amount``, "asked for" → ``requested_limit``, 「申請した」 → 申請額."""
    verbs = [
        _EN_VERB_SYNONYMS.get(w, w[:-2] if w.endswith("ed") else w)
        for w in re.findall(r"(?<![a-z])(?:[a-z]{3,}ed|asked|paid|spent|sent)(?![a-z])", window)
    ]
    found = set()
    for column in columns:
        if column.isascii():
            words = re.split(r"[_\s]+", column.lower())
            if any(common_prefix(w, v) >= 4 for w in words for v in verbs):
                found.add(column)
        elif (stem := _money_stem(column)) and re.search(
            rf"{okurigana(stem)}(?:し|され|済|って|った|われ|た)", window
        ):
            found.add(column)
    return found.pop() if len(found) == 1 else None


def okurigana(stem: str) -> str:
    """A pattern of a kanji word said as a verb with its kana endings between the kanji:
    貸付 ~ 貸し付け, 振込 ~ 振り込み, 支払 ~ 支払い; a stem ending in kana ends in any
    kana (包み ~ 包んだ)."""
    core = re.sub(r"[ぁ-ん]+$", "", stem) or stem
    tail = "[ぁ-ん]{0,2}" if core != stem else ""
    return "[ぁ-ん]{0,2}".join(re.escape(ch) for ch in core) + tail


def verb_column(text: str, columns: Sequence[str]) -> str | None:
    """The one money column whose word is said as a verb done (「2024年に貸し付けた総額」 →
    貸付額, 「振り込んだ金額」 → 振込額), or None."""
    asked = _MONEY_QUESTION.search(text)
    found = [
        c
        for c in columns
        if (stem := _money_stem(c))
        and (
            re.search(
                rf"(?:{okurigana(stem)}[ぁ-ん]{{0,2}}|{_JA_VERBS.get(stem, '(?!)')})(?:た|だ)"
                r"(?:総額|金額|額|分|の)",
                text,
            )
            # 「営業部の仮払いって平均いくら」「仮払金、合計で」: the thing said, money asked
            or (asked and re.search(rf"{okurigana(stem)}(?:い|金)?(?:って|は|の|を|が|、|,)", text))
        )
    ]
    return found[0] if len(found) == 1 else None


_MONEY_QUESTION = re.compile(r"いくら|合計|総額|平均|金額")


def _money_stem(column: str) -> str | None:
    """The thing a money column is the amount of: 貸付 of 貸付額, 支払 of 支払金額, 入金 of
    入金額 (金 kept when taking it would leave one character)."""
    for tail in (r"(?:金額|額|金|代|費)$", r"(?:額|代|費)$"):
        stem = re.sub(tail, "", column)
        if stem != column and len(stem) >= 2:
            return stem
    return None


# Everyday verbs for the money words of column names: 「入ってきた金額」 is 入金額.
_JA_VERBS = {
    "入金": r"入って(?:き|来)|入金され|振り込まれ|振込まれ",
    "支払": r"払っ|支払われ|払い込ん",
    "出金": r"出て(?:い|行)っ|引き出し|引き落とされ",
    "売上": r"売れ|売り上げ",
}


def common_prefix(a: str, b: str) -> int:
    """How many leading letters two words share."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def in_column_unit(value: int | float, said: str, column: str) -> int | float:
    """A number said in a unit (「500万円以上」「1kg以上」「2時間を超える」) in the unit the
    column's name declares (売上（千円） → 5000, 重量(g) → 1000, 所要時間_分 → 120); a number
    said bare is in the column's unit already, and units of another kind are left alone."""
    name = column.lower()
    bracket = re.search(r"[(\[（]([^()\[\]（）]+)[)\]）]\s*$", name)
    tail = bracket.group(1) if bracket else re.split(r"[_\s]", name)[-1]
    declared = next(
        ((kind, size) for rx, kind, size in _NAME_UNITS if rx.fullmatch(tail)),
        None,
    )
    spoken = next(((kind, size) for rx, kind, size in _SAID_UNITS if rx.search(said)), None)
    if declared is None or spoken is None:
        return value
    kind, size = spoken
    if kind == "kilo" and declared[0] in ("weight", "length"):
        kind = declared[0]
    if kind != declared[0]:
        return value
    converted = value * size / declared[1]
    return int(converted) if float(converted).is_integer() else converted


# 「過怠税がかかった」「手数料が発生した」「割引が付いた」: an amount there is, above zero.
_INCURRED_AFTER = re.compile(
    r"^\s*(?:が|の)\s*(?:かかった|かかって(?:い)?る|発生した|発生して(?:い)?る|付いた|ついた"
    r"|付いて(?:い)?る|ついて(?:い)?る|あった|ある(?!か))"
)


# A count of days said as the state of the rows: "came in late", "were paid overdue".
_DONE_BEFORE = re.compile(
    r"(?<![a-z])(?:came in|come in|were|was|are|is|got|paid|delivered|arrived|shipped"
    r"|returned|submitted|filed)\s+$"
)
_DAYS_NAME = re.compile(r"(?<![a-z])days?(?![a-z])|日数")


def numeric_filters(
    text: str, mentions: list[Mention], kind: Callable[[str], str]
) -> tuple[list[dict[str, Any]], set[Mention], list[tuple[int, int]]]:
    """Conditions on a named numeric column ("売上が10000以上", "sales over 100k",
    "grade = 2", "a grade of 2", 「等級が2の行」, "with 2 adults"): the filters, the mentions
    they used and the spans of text they read."""
    filters: list[dict[str, Any]] = []
    used: set[Mention] = set()
    spans: list[tuple[int, int]] = []
    for mention in mentions:
        if mention.value is not None or kind(mention.column) != "numeric":
            continue
        found = condition_at(text[mention.end :])
        compared = None if found else _EN_COMPARE_BEFORE.search(text[: mention.start])
        if compared:  # "invoices with more than 50 seats": the number before its column
            number = float(compared.group(2).replace(",", "")) * (1_000 if compared.group(3) else 1)
            condition = {
                "col": mention.column,
                "op": compare_op(compared.group(1)),
                "value": int(number) if number.is_integer() else number,
            }
            if condition not in filters:  # "a rate above 30,000 yen": read once
                filters.append(condition)
            used.add(mention)
            spans.append((mention.start - len(compared.group(0)), mention.end))
            continue
        if found is None and (before := _EN_COUNT_BEFORE.search(text[: mention.start])):
            number = float(before.group(1))
            filters.append(
                {
                    "col": mention.column,
                    "op": "==",
                    "value": int(number) if number.is_integer() else number,
                }
            )
            used.add(mention)
            start = before.start(1)
            # "a 60-month term": the unit said with the number is the same column's word
            used |= {m for m in mentions if m.column == mention.column and start <= m.start}
            spans.append((start, mention.end))
            continue
        if found is None and (sign := _EN_SIGN_BEFORE.search(text[: mention.start])):
            filters.append({"col": mention.column, "op": _EN_SIGN_OPS[sign[1]], "value": 0})
            used.add(mention)
            spans.append((sign.start(), mention.end))
            continue
        if found is None and (incurred := _INCURRED_AFTER.match(text[mention.end :])):
            found = (0, ">", incurred.end())  # 「過怠税がかかった文書」: a charge above zero
        if (
            found is None
            and _DONE_BEFORE.search(text[: mention.start])
            and _DAYS_NAME.search(mention.column.lower())
        ):
            found = (0, ">", 0)  # "receipts that came in late" of days_late: above zero
        if found is None:
            continue
        value, op, length = found
        value = in_column_unit(value, text[mention.end : mention.end + length], mention.column)
        if _EXCLUDED.match(text[mention.end + length :]):  # 「金額が1万円超のものは除いて」
            op = _OPPOSITE[op]
        filters.append({"col": mention.column, "op": op, "value": value})
        used.add(mention)
        spans.append((mention.start, mention.end + length))
    return filters, used, spans


_CLOSE = r"[」』】\]）)\"'`]?"
"""A column name may be written in brackets or quotes (「[摘要] が」「『精算メモ』に」)."""
_NULL_AFTER = re.compile(
    r"^\s*" + _CLOSE + r"\s*(?:欄|列)?\s*(?:\(\s*)?(?:が|は|の)?\s*(?:まだ\s*)?"
    r"(?P<null>空欄|空白|未入力|未記入|未記載|未登録|未設定|未選択|未指定|未回答|未定|ブランク"
    r"|決まって(?:い)?ない|決まってない|割り当てられて(?:い)?ない|割り振られて(?:い)?ない"
    r"|未割(?:り)?当(?:て)?|未割り振り|未アサイン"
    r"|空(?=の)|空いて(?:いる|る)|空いた(?=\s*(?:まま|もの|行|明細|分|申告|件))"
    r"|入って(?:い)?ない|書かれて(?:い)?ない|書いて(?:い)?ない|"
    r"(?:無い|ない)(?=\s*(?:もの|行|明細|分|データ))|"
    r"(?:入力|記入|記録|登録|設定|指定|記載)されて(?:い)?ない|付いて(?:い)?ない"
    r"|(?:に|と)?紐(?:づ|付)(?:い|け(?:られ|され)?)て(?:い)?ない)"
    r"|^\s*" + _CLOSE + r"\s*(?:欄|列)?\s*(?:が|は|に)\s*(?:何か|なにか|値が)?\s*"
    r"(?P<set>入って(?:いる|る)|入力されて(?:いる|る)|入力済み?|記入済み?|記入されて(?:いる|る)"
    r"|書いて(?:ある|いる|る)|書かれて(?:いる|る)|記載(?:されて(?:いる|る)|が?ある|あり))"
    r"|^\s*" + _CLOSE + r"\s*(?:is|was|are|were)\s+(?:(?P<null_en>empty|blank"
    r"|not (?:recorded|given|set|entered|assigned|specified|filled(?: in)?))"
    r"|(?P<set_en>filled(?: in)?|populated|not (?:empty|blank)))"
    r"|^\s*"
    + _CLOSE
    + r"\s*(?:field\s+)?(?:has|have) been (?P<set_en2>filled(?: in)?|populated|entered)",
    re.IGNORECASE,
)
"""Blank cells said of a column (not 「欠損」 / "missing": those ask for the missing-values
check of the column)."""
_NULL_BEFORE = re.compile(r"\bno\s+$", re.IGNORECASE)
# "orders that don't have a city", "rows without any region": the column left blank.
LACKING_BEFORE = re.compile(
    r"(?<![a-z])(?:(?:do|does|did)(?: not|n't) have|(?:has|have|had)(?:n't| not)(?: got)?"
    r"|(?:has|have|with) no) (?:a |an |any )?$|(?<![a-z])(?:without|lacking) (?:a |an |any )$"
    r"|(?<![a-z])(?:is|are|was|were) missing (?:a |an |any |the |their |its )?$"
    r"|(?<![a-z])(?:with|having|has|have|had) (?:a |an )?(?:blank|empty|missing) $"
    r"|(?<![a-z])(?:(?:is|are|was|were)(?:n't| not)|not) (?:tied|linked|assigned|attached"
    r"|allocated|charged) to (?:a |an |any )?$",
    re.IGNORECASE,
)
# "rows that have a value in [grant_officer]", "entries with something under notes".
_HAVING_BEFORE = re.compile(
    r"(?<![a-z])(?:has|have|had|having|with|contains?|containing) (?:a |an |any |some )?"
    r"(?:value|entry|entries|values|something|anything|data|text) (?:in|for|under|as) "
    r"(?:the )?[\[\"'(]?$",
    re.IGNORECASE,
)
_EXCLUDED = re.compile(
    r"\s*(?:に)?(?:なって(?:いる|る))?\s*(?:の)?\s*(?:もの|行|明細|分|データ)?\s*(?:は|を)?\s*"
    r"(?:除いて|除く|除き|除外|外して|省いて|抜いて|対象外|入れないで|含めないで|含めず|抜きで)"
)
# The rows left when those meeting a condition are left out.
_OPPOSITE = {">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=", "!=": "=="}
_SKIP_WHERE = re.compile(
    r"\b(?:skip|ignore|exclude|leave out|drop|without)\b[^.;?]{0,30}"
    r"\b(?:where|whose)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
LEFT_OUT_BEFORE = re.compile(
    r"\b(?:leave out|leaving out|exclude|excluding|ignore|ignoring|skip|skipping|drop|dropping"
    r"|omit|omitting|remove|removing|without)\b[^.;?,]{0,30}$",
    re.IGNORECASE,
)
"""A leave-out verb before a blank condition in its clause: the blank rows go."""
_IGNORE_NONE = re.compile(
    r"\b(?:ignore|exclude|leave out|skip|drop)\b[^.;?]{0,20}\bwith no\s+$", re.IGNORECASE
)
# 「空欄のぶんも含めて」「未設定の分も一緒に」「ブランクも含めて」「空欄のものも１行で」: kept.
_INCLUDED = re.compile(
    r"\s*(?:に)?(?:なって(?:いる|る))?\s*(?:の)?\s*(?:もの|行|明細|分|ぶん|データ|案件)?\s*も\s*"
    r"(?:含め|含む|含んで|一緒|いっしょ|入れ|出し|表示|見せ|見た|[1１一]\s*行)"
)
_INCLUDED_EN = re.compile(r"\s*(?:included|too|as well|kept)(?![a-z])", re.IGNORECASE)
_SHARE_WORD = re.compile(
    r"\s*(?:に)?(?:なって(?:いる|る))?\s*(?:の)?\s*(?:割合|率|比率|パーセント|%)"
)
_NULL_RECORDED = re.compile(
    r"^\s*(?:(?:is|are|was|were|has been|have been)\s+)?"
    r"(?:recorded|given|set|entered|listed|assigned|specified|filled(?:\s+(?:in|out))?|populated"
    r"|provided)\b"
    r"|^\s+(?:date|value|entry)\s*(?:[?.!,;)]|$)",  # "no paid_on date?"
    re.IGNORECASE,
)


def null_filters(
    text: str, mentions: list[Mention]
) -> tuple[list[dict[str, Any]], set[Mention], list[tuple[int, int]]]:
    """Conditions on blank cells of a named column: 「精算日が入っていない」「部署が空欄の」
    「入金日が入っている」, "no country recorded", "country is empty"."""
    filters: list[dict[str, Any]] = []
    used: set[Mention] = set()
    spans: list[tuple[int, int]] = []
    for mention in mentions:
        if mention.value is not None:
            continue
        excluded: re.Match[str] | None = None
        ignored: re.Match[str] | None = None
        after = _NULL_AFTER.match(text[mention.end :])
        if after and _SHARE_WORD.match(text[mention.end + after.end() :]):
            continue  # 「承認者が空欄になっている割合」: the missing-values check of the column
        if after and _INCLUDED.match(text[mention.end + after.end() :]):
            continue  # 「担当が空欄のぶんも含めて」: the blanks kept beside the others
        if _INCLUDED_EN.match(text[mention.end :]) and LACKING_BEFORE.search(text[: mention.start]):
            continue  # "with blank departments included"
        before = _NULL_BEFORE.search(text[: mention.start])
        if after:
            op = (
                "not_null"
                if after.group("set") or after.group("set_en") or after.group("set_en2")
                else "is_null"
            )
            excluded = _EXCLUDED.match(text[mention.end + after.end() :]) or _SKIP_WHERE.search(
                text[: mention.start]
            )  # "skip the rows where city is blank"
            if excluded:  # 「取引先が空欄のものは除いて」: the blanks dropped
                op = "not_null" if op == "is_null" else "is_null"
            aside = re.match(r"\s*[(（][^)）]{0,12}[)）]", text[mention.end + after.end() :])
            spans.append(
                (
                    mention.start,
                    mention.end
                    + after.end()
                    + (excluded.end() if excluded else aside.end() if aside else 0),
                )
            )
        elif before and _NULL_RECORDED.match(text[mention.end :]):
            op = "is_null"
            spans.append((mention.start - len(before.group(0)), mention.end))
        elif ignored := _IGNORE_NONE.search(text[: mention.start]):
            op = "not_null"  # "ignore rows with no rep": the rows that have one
            spans.append((ignored.start(), mention.end))
        elif lacking := LACKING_BEFORE.search(text[: mention.start]):
            op = "is_null"  # "orders that don't have a city"
            spans.append((lacking.start(), mention.end))
        elif having := _HAVING_BEFORE.search(text[: mention.start]):
            op = "not_null"  # "rows that have a value in [grant_officer]"
            closed = re.match(r"[\]\"')]?", text[mention.end :])
            spans.append((having.start(), mention.end + (closed.end() if closed else 0)))
        else:
            continue
        left_out = LEFT_OUT_BEFORE.search(text[: mention.start])
        if (
            left_out
            and LACKING_BEFORE.search(text[: mention.start])
            and not re.search(
                r"\b(?:leave|leaving|exclude|excluding|ignore|ignoring|skip|skipping|drop|dropping"
                r"|omit|omitting|remove|removing)\b",
                left_out.group(0),
            )
        ):
            left_out = None  # "lines without an owner": the blank rows themselves
        if op == "is_null" and not excluded and left_out:
            op = "not_null"  # "Leaving out rows with a blank department": the others kept
            excluded = left_out
        filters.append({"col": mention.column, "op": op})
        if op == "is_null" or not (excluded or ignored):
            # the column is only the condition's; blanks said to be left out (「取引先
            # （空欄は除く）ごと」, "ignore rows with no rep") leave it free to group
            used.add(mention)
    return filters, used, spans


_HOLDS = (
    r"(?:という(?:文字|言葉|文言|単語))?"
    r"\s*(?:と|を|が|って)?\s*(?:含む|含まれ(?!てい?ない|ない)|含んで|含んだ|入っている|入ってる|入った"
    r"|書かれ(?:ている|てる|た)|書いて(?:ある|いる|る)|記載(?:されている|されてる|がある|のある))"
)
_CONTAINS_JA = re.compile(
    r"^\s*[」』\"]?\s*(?:欄|列)?\s*(?:に|が|で)\s*[「『\"“‘](?P<value>[^」』\"”’]{1,40})[」』\"”’]\s*"
    + _HOLDS
)
_CONTAINS_EN = re.compile(
    r"^\s*(?:contains?|containing|includes?|including|with)\s+(?:the\s+(?:word|text)\s+)?"
    r"[\"“'‘](?P<value>[^\"”'’]{1,40})[\"”'’]",
    re.IGNORECASE,
)


def contains_filters(
    text: str, mentions: list[Mention], kind: Callable[[str], str | None]
) -> tuple[list[dict[str, Any]], set[Mention], list[tuple[int, int]]]:
    """Conditions on a text column holding a word: 「利用先に「タクシー」を含む」,
    'vendor contains "Taxi"'. A word said not to be held (「含まない」) is left unread."""
    filters: list[dict[str, Any]] = []
    used: set[Mention] = set()
    spans: list[tuple[int, int]] = []
    for mention in mentions:
        if mention.value is not None or kind(mention.column) not in ("text", "categorical"):
            continue
        said = _CONTAINS_JA.match(text[mention.end :]) or _CONTAINS_EN.match(text[mention.end :])
        if said is None:
            continue
        filters.append({"col": mention.column, "op": "contains", "value": said.group("value")})
        used.add(mention)
        spans.append((mention.start, mention.end + said.end()))
    return filters, used, spans


_BOOLEAN_WORDS = {"true": True, "false": False}


def typed_boolean(condition: dict[str, Any], kind: Callable[[str], str | None]) -> dict[str, Any]:
    """A condition on a true/false column compares with a boolean (``True``), not the
    text the data summary shows it as ("True")."""
    value = condition.get("value")
    if (
        isinstance(value, str)
        and value.lower() in _BOOLEAN_WORDS
        and kind(str(condition.get("col"))) == "boolean"
    ):
        return {**condition, "value": _BOOLEAN_WORDS[value.lower()]}
    return condition


_EN_SCALE = r"\s*(k|thousand|million|mn|m|billion|bn)?(?![a-z])"
_EN_SCALES = {
    "k": 1_000,
    "thousand": 1_000,
    "million": 1_000_000,
    "mn": 1_000_000,
    "m": 1_000_000,
    "billion": 1_000_000_000,
    "bn": 1_000_000_000,
}
# A condition with no column: "10万円以上の取引", "orders over $1,000", "5個以上".
_BARE_JA = re.compile(
    _NUMBER + r"\s*(千万|百万|万|億|千)?\s*(円|個|件|点|人|%|歳|km|kg|時間|日|回|台|枚)?\s*"
    r"(以上|以下|未満|超|を超え(?:る|た|ている|てる|ています|ました)?|より大きい|より多い|より小さい|より少ない|を下回(?:る|った|っている)|を上回(?:る|った|っている))"
)
_BARE_EN = re.compile(
    rf"(?<![a-z])({_EN_COMPARE_WORD})\s*([$¥])?\s*"
    + _NUMBER
    + _EN_SCALE
    + r"(?P<yen>\s*(?:yen|jpy)(?![a-z]))?"
    + r"(?!\s*(?:%|percent|rows|columns|products|stores|items|times|days|months|years))"
)
_BARE_EN_AFTER = re.compile(
    r"(?<![\w$¥])([$¥])?\s*"
    + _NUMBER
    + _EN_SCALE
    + r"(?P<yen>\s*(?:yen|jpy)(?![a-z]))?\s+"
    + _EN_OR_MORE
    + r"(?!\s*(?:%|percent))"
)
_MONEY_NAME = re.compile(
    r"金額|売上|額|円|料|費|代金|価格|給|手当|amount|amt|sales|revenue|price|cost|costs|total"
    r"|fee|fees|fare|jpy|yen|usd|eur|gbp",
    re.IGNORECASE,
)
# Left after reading: a year or a number compared ("24年度", "10以上") no rule turned into a filter.
_LEFT_YEAR = re.compile(r"(?:令和|平成|昭和)?\s*\d+\s*年度?|(?:令和|平成|昭和)")
# "calendar year 2024" once read no rule: a year alone (never an amount: no unit, comma or
# scale after it) is asked, never dropped.
_LEFT_BARE_YEAR = re.compile(
    r"(?<![\d,.$¥])(?:19[5-9]\d|20\d\d)(?![\d,.]|\s*(?:円|yen|jpy|usd|件|個|人|kg|%|年|千|万|k\b|m\b))"
)


def bare_thresholds(
    text: str,
    taken: bytearray,
    money_column: str | None,
    lang: str,
    numeric_columns: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Amount conditions without a column and questions for conditions left unread.

    A condition on an amount ("10万円以上", "over $1,000", "10万以上") goes to
    ``money_column`` (the amount the request or the data is about) with the choice
    stated as an assumption; with no such column, or for counts ("5個以上"), it is
    asked. A year that no period rule read ("24年度") is asked too: a condition is
    never dropped silently.

    Args:
        text: Normalised request text.
        taken: Per-character flags of what was already read (columns, values, periods,
            conditions on named columns); updated with the conditions read here.
        money_column: The column an amount condition applies to, or None.
        lang: "ja" or "en".
        numeric_columns: The numeric columns: an amount said with the verb of one of
            them ("where more than 10,000 yen was claimed", 「10万円以上申請した」) is a
            condition on that one (``claimed_amount``, 申請額).
    """
    filters: list[dict[str, Any]] = []
    problems: list[str] = []
    assumptions: list[str] = []
    # (match, number, scale, unit, comparison word) of each condition said without a column
    hits = [
        (m, m.group(1), m.group(2) or "", m.group(3) or "", m.group(4))
        for m in _BARE_JA.finditer(text)
    ]
    hits += [
        (m, m.group(3), (m.group(4) or "").lower(), m.group(2) or ("円" if m["yen"] else ""), m[1])
        for m in _BARE_EN.finditer(text)
    ]
    hits += [
        (m, m.group(2), (m.group(3) or "").lower(), m.group(1) or ("円" if m["yen"] else ""), m[5])
        for m in _BARE_EN_AFTER.finditer(text)
    ]
    for m, said_number, scale, unit, word in sorted(hits, key=lambda hit: hit[0].start()):
        if any(taken[m.start() : m.end()]):
            continue
        taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        said = m.group(0).strip()
        ja = m.re is _BARE_JA
        number = _said_number(said_number)
        value = number * {**_JA_SCALES, **_EN_SCALES}.get(scale, 1)
        op = compare_op(word)
        if _EXCLUDED.match(text[m.end() :]):  # 「1万円超のは除いて」: the rest are kept
            op = _OPPOSITE[op]
        money = (
            unit in ("円", "$", "¥")
            or (ja and scale in ("万", "百万", "千万", "億") and not unit)
            or (not ja and scale in _EN_SCALES and scale != "m")  # "worth 5 million or more"
        )
        column = (  # the verb after the amount first: "…10,000 yen was claimed"
            _column_of_verb(text[m.end() : m.end() + 30], numeric_columns)
            or _column_of_verb(text[max(0, m.start() - 30) : m.start()], numeric_columns)
            or money_column
        )
        if (
            money
            and _AGGREGATE_BEFORE.search(text[: m.start()])
            and _ASKED_AFTER.match(text[m.end() :])
        ):
            # 「予算額トータル、3千万超えてる？」: asked of the total, not a condition on rows
            assumptions.append(
                _t(
                    lang,
                    f"「{said}」は合計と比べる問いと解釈し、行の条件にはしていません",
                    f"'{said}' read as a question about the total, not as a row condition",
                )
            )
            continue
        if not money and (measured := _column_in_unit(unit, numeric_columns)):
            # 「50歳以上の加入者」: 年齢; 「100km以上走った」: 走行距離
            # 「2時間以上」 of 作業時間(分): in the column's unit (120)
            filters.append(
                {"col": measured, "op": op, "value": in_column_unit(_whole(value), said, measured)}
            )
            assumptions.append(
                _t(
                    lang,
                    f"「{said}」は「{measured}」の条件と仮定",
                    f"'{said}' taken as a condition on {measured}",
                )
            )
            continue
        if money and column:
            yen = int(value) if value.is_integer() else value
            # 売上（千円）: 500万円 → 5000
            filters.append({"col": column, "op": op, "value": in_column_unit(yen, "円", column)})
            assumptions.append(
                _t(
                    lang,
                    f"「{said}」は「{column}」の条件と仮定",
                    f"'{said}' taken as a condition on {column}",
                )
            )
        else:
            problems.append(
                _t(
                    lang,
                    f"「{said}」はどの列の条件ですか？",
                    f"Which column does '{said}' apply to?",
                )
            )
    for m in _LEFT_YEAR.finditer(text):
        if any(taken[m.start() : m.end()]) or RELATIVE_PERIOD.search(
            text[max(0, m.start() - 3) : m.end()]
        ):
            continue
        problems.append(
            _t(
                lang,
                f"期間「{m.group(0).strip()}」を読み取れませんでした。"
                "西暦で指定してください（例: 2024年、2024年度、2024年4月以降）",
                f"Could not read the period '{m.group(0).strip()}'; please give it as a date.",
            )
        )
    for m in _LEFT_BARE_YEAR.finditer(text):
        quarter = re.search(r"(?:q[1-4]|四半期)\s*(?:of\s+)?$", text[: m.start()])
        if not any(taken[m.start() : m.end()]) and not quarter:  # "Q1 2025": asked once
            year = m.group(0)
            problems.append(
                _t(
                    lang,
                    f"「{year}」を期間として読み取れませんでした。"
                    f"「{year}年」「{year}年度」「{year}年4月以降」のように指定してください。",
                    f"Could not read '{year}' as a period; please say 'in {year}', "
                    f"'FY{year}' or 'since April {year}'.",
                )
            )
    return filters, problems, assumptions


# An amount said right after the word for a total is compared with that total.
_AGGREGATE_BEFORE = re.compile(
    r"(?:合計|トータル|総額|総計|(?<![a-z])(?:total|sum))\s*(?:は|が|で|って|額)?\s*[、,]?\s*$",
    re.IGNORECASE,
)
# … and asked as a yes/no question: 「…3千万超えてる？」, "… over 1 million?"
_ASKED_AFTER = re.compile(r"[ぁ-ん]{0,6}\s*[?]")


# A unit a count or a measure is said in → the words of the names of columns measured in it.
_UNIT_NAMES = {
    "歳": r"年齢|歳|(?<![a-z])age(?![a-z])",
    "km": r"km|距離|(?<![a-z])(?:distance|mileage)(?![a-z])",
    "kg": r"kg|重量|重さ|(?<![a-z])weight(?![a-z])",
    "時間": r"時間|(?<![a-z])(?:hours?|hrs?)(?![a-z])|\(h\)",
    "日": r"日数|(?<![a-z])days(?![a-z])",
    "回": r"回数|(?<![a-z])times(?![a-z])",
    "台": r"台数",
    "枚": r"枚数",
    "人": r"人数|(?<![a-z])headcount(?![a-z])",
}


def _column_in_unit(unit: str, numeric_columns: Sequence[str]) -> str | None:
    """The one numeric column measured in ``unit`` (歳 → 年齢, km → 走行距離), else None."""
    pattern = _UNIT_NAMES.get(unit)
    if pattern is None:
        return None
    found = [  # not a price per that unit (km単価, rate_per_km)
        c
        for c in numeric_columns
        if re.search(pattern, c.lower()) and not _PER_UNIT.search(c.lower())
    ]
    return found[0] if len(found) == 1 else None


_PER_UNIT = re.compile(r"単価|当たり|あたり|(?<![a-z])(?:per|rate)(?![a-z])")


def _whole(value: float) -> int | float:
    return int(value) if value.is_integer() else value


def money_column(
    names: list[str], numeric: Callable[[str], bool], metric: str | None, sales: str | None
) -> str | None:
    """The column an amount without a column refers to: the metric named in the request,
    else the sales/amount column, else the only numeric column named like money."""
    for candidate in (metric, sales):
        if candidate and numeric(candidate):
            return candidate
    money = [n for n in names if numeric(n) and money_named(n)]
    return money[0] if len(money) == 1 else None


_ASCII_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def money_named(name: str) -> bool:
    """True when a column's name says it holds money: a word of it (「金額」「交通費」;
    ``amount_usd``, ``fare_eur``), not a few letters inside another word (the "fee" of
    ``feedbackScore``)."""
    if not name.isascii():
        return bool(_MONEY_NAME.search(name))
    return any(_MONEY_NAME.fullmatch(w.lower()) for w in _ASCII_WORDS.findall(name))
