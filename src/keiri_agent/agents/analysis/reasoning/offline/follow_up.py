"""Follow-ups on a finished result: the request edits the spec that answered the previous one.

「それを営業部だけで」 adds a condition, 「交際費以外で」 a negated one, 「部署別に」 groups a
total (or regroups a grouped result), 「それを月別に」 turns it into a monthly line,
「グラフにして」 charts a grouped result; "now by channel", "only for 2025", "as a chart" in
English. ``edit_previous`` returns the edited spec, or ``None`` when the request is a
request of its own (it says what to compute) or changes nothing it can read; a follow-up
that cannot be applied (a chart of one number, a month with no date column) is a question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import keiri_agent.agents.analysis.reasoning.offline.vocab as vocab
from keiri_agent.agents.analysis.ops.specs import (
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
)
from keiri_agent.agents.analysis.reasoning.offline.parser import (
    ParsedRequest,
    normalize,
    parse_request,
)
from keiri_agent.agents.analysis.reasoning.offline.request_filters import money_named, typed_boolean
from keiri_agent.agents.analysis.reasoning.offline.steps import (
    date_named_like,
    measure_by_its_words,
    whole_of_its_parts,
)
from keiri_agent.errors import SpecError

_MONEY_SAID = re.compile(
    r"いくら|何円|(?<![a-z])(?:how much|cost|spent|spend|billed|paid)(?![a-z])"
)
_POINTER = re.compile(
    r"^\s*(?:(?:じゃあ|じゃ|では|それなら|で)\s*[、,]?\s*)?"
    r"(?:それ|これ|さっきの|先ほどの|今の|その|この|同じ)"
    r"|その分|それら|そのうち|その中で|(?:は|なら|では|だと)\s*[？?]\s*$"
    r"|にして\s*$|に変えて|に替えて|に直して|じゃなく|ではなく|でなく|でも同じ|同じように"
    r"|^[^。、]{0,12}(?:だと|なら)"
    r"|^\s*(?:now|then|and|same|also|just|only|what about|how about)\b"
    r"|\b(?:that|it|this|instead|rather than|swap|their|them|those|these|same)\b"
    r"|(?:の\s*)?(?:ほう|方)\s*(?:は|も)|同じ(?:月|条件|期間|範囲|ところ|対象)|のほうも"
    r"|も\s*(?:出|見せ|教え|表示|知りた|お願い|算出|計算)|\b(?:as well|too)\s*[.?!]?\s*$",
    re.IGNORECASE,
)
"""Words that point at the result just shown."""
_SWAP = re.compile(
    r"\b(?:swap|switch|replace|instead|rather than|change)\b|じゃなく|ではなく|でなく|に変え|に替え"
    r"|→|->",
    re.IGNORECASE,
)
"""A value swapped for another: the value already held is the one that goes."""
_SHARE = re.compile(r"構成比|割合|シェア|比率|\bshares?\b|\bpercentages?\b", re.IGNORECASE)
_NOT_THIS = re.compile(r"\s*(?:じゃなく|ではなく|でなく)")
"""「合計じゃなくて平均で」: the aggregation said before it is the one to drop."""
_TOP = re.compile(r"上位\s*(\d+)|トップ\s*(\d+)|\btop\s*(\d+)\b|(\d+)\s*(?:つ|件|社|位)まで", re.I)
_LINE_SAID = re.compile(r"折れ線|推移|\bline\b|\btrend\b", re.IGNORECASE)
_CHART = re.compile(r"グラフ|図に|図で|チャート|\bcharts?\b|\bgraphs?\b|\bplots?\b", re.IGNORECASE)
_EDITABLE = frozenset({"total", "groupby_agg", "share_ratio", "bar", "line"})
_EQUALITIES = frozenset({"==", "!=", "in"})


@dataclass
class FollowUp:
    """An edited spec to run, or a question when the edit cannot be applied."""

    title: str
    spec: dict[str, Any] | None = None
    question: str | None = None
    assumptions: list[str] = field(default_factory=list)


def _t(lang: str, ja: str, en: str) -> str:
    return ja if lang == "ja" else en


def _base(previous: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The result a follow-up edits: the last spec of the previous request that can be."""
    for spec in reversed(previous):
        if (spec.get("op") or spec.get("kind")) in _EDITABLE:
            return dict(spec)
    return None


def _measure(spec: dict[str, Any]) -> tuple[str | None, str]:
    """The column and aggregation a spec shows (``None`` column: rows counted)."""
    kind = spec.get("op") or spec.get("kind")
    if kind in ("total", "groupby_agg"):
        for column, aggs in (spec.get("metrics") or {}).items():
            if aggs and aggs[0] != "count":
                return column, aggs[0]
        return None, "count"
    if kind == "share_ratio":
        return spec.get("value_col"), "sum" if spec.get("value_col") else "count"
    return spec.get("y"), str(spec.get("agg") or "sum")


def _groups(spec: dict[str, Any]) -> list[str]:
    kind = spec.get("op") or spec.get("kind")
    if kind == "groupby_agg":
        return list(spec.get("group_cols") or [])
    if kind == "share_ratio":
        return [spec["group_col"]]
    if kind == "bar":
        return [spec["x"]]
    if kind == "line" and spec.get("hue"):
        return [spec["hue"]]
    return []


_DATE_VALUE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?(?:[ T].*)?)?")


def _merged(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The previous filters with the new ones; a new equality on a column replaces the old
    equality on it (「総務部は？」 after 「営業部だけで」), and a new period on a date column
    replaces the old period on it (「7月分も」 after 「6月分の合計」: never both at once)."""
    replaced = {f["col"] for f in new if f["op"] in _EQUALITIES}
    periods = {
        f["col"]
        for f in new
        if isinstance(f.get("value"), str) and _DATE_VALUE.fullmatch(f["value"])
    }
    kept = [
        f
        for f in old
        if not (f["op"] in _EQUALITIES and f["col"] in replaced) and f["col"] not in periods
    ]
    return kept + [f for f in new if f not in kept]


_ALSO_BY = re.compile(
    r"(?:ごと|別|単位)\s*に?\s*も|でも\s*(?:分け|割|区切)|も\s*(?:加え|追加|入れ)"
    r"|\b(?:as well|too|also by|additionally by)\b",
    re.IGNORECASE,
)
_ALL_OF = re.compile(
    r"全(?:部門|部署|社|店舗?|支店|拠点|員|件|体|部|国|地域|区分|商品|顧客)|すべての|全ての|全部の"
    r"|\ball (?:the )?(?:departments|stores|branches|regions|customers|products|categories)\b"
    r"|\bevery (?:department|store|branch|region|customer|product|category)\b",
    re.IGNORECASE,
)
_NOT_ONLY = re.compile(
    r"だけ\s*(?:じゃ|では|で)\s*なく|のみ\s*(?:じゃ|では|で)\s*なく|\bnot just\b|\bnot only\b", re.I
)


def _with_groups_kept(base: dict[str, Any], groups: list[str], text: str) -> list[str]:
    """「それを組ごとにも分けて」, "by region as well": a grouping added to the one shown,
    not put in its place."""
    if groups and _ALSO_BY.search(text) and base.get("op") == "groupby_agg":
        return list(dict.fromkeys([*(base.get("group_cols") or []), *groups]))
    return groups


def _widened(
    base: dict[str, Any], filters: list[dict[str, Any]], parsed: ParsedRequest, text: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A follow-up widened to all the values of a column (「総務部だけじゃなくて全部門だと」,
    "not just Sales, all departments"): its conditions are dropped, not swapped."""
    if not (_ALL_OF.search(text) and _NOT_ONLY.search(text)):
        return base, filters
    widened = {m.column for m in parsed.value_mentions}
    kept = [f for f in base.get("filters") or [] if f["col"] not in widened]
    return {**base, "filters": kept}, [f for f in filters if f["col"] not in widened]


# 「部署の条件は外して」「年の絞り込みを解除して」"remove the department filter", "drop the
# year condition": a condition of the result said to go (what it is on comes before).
_REMOVED_JA = re.compile(
    r"の?\s*(?:条件|絞り込み|絞込み|絞込|フィルタ|フィルター|指定)\s*(?:は|を|も)?\s*"
    r"(?:外|はず|解除|取り?(?:消|除|っ|払)|除|なく|無く|なし|無し|消|削除|やめ|止め)"
    r"|に?\s*(?:限定しな|限定せず|絞らな|絞らず|絞り込まな|絞り込まず)"
)
# 「全件で同じ集計を」「条件なしで」"for all rows", "with no filters": every condition goes.
_ALL_ROWS = re.compile(
    r"全件で|全データで|すべての行で|全ての行で|(?:条件|絞り込み|フィルタ)\s*(?:なし|無し)で"
    r"|(?<![a-z])(?:for|on|over|across)\s+all\s+(?:the\s+)?rows|with(?:out)?\s+(?:no|any)\s+filters?",
    re.IGNORECASE,
)
_REMOVED_EN = re.compile(
    r"(?<![a-z])(?:remove|drop|clear|take off|take away|get rid of|lose|without|no)\s+"
    r"(?:the\s+|any\s+)?(.{0,40}?)\s*(?:filter|condition|restriction|limit)s?(?![a-z])"
)
# 「全期間で」「期間は問わず」"for all time", "over all years": every period condition goes.
_ALL_PERIODS = re.compile(
    r"全期間|期間(?:は|を)?(?:問わず|関係なく|指定なし|なし)|(?<![a-z])(?:for|over|across)\s+"
    r"(?:all\s+(?:time|periods|years|dates|months)|the\s+whole\s+period)",
    re.IGNORECASE,
)
# A measure said to be shown beside the one already there.
_MEASURE_TOO = re.compile(
    r"も\s*(?:横に|一緒に|並べ|並列|追加|加え|足し|入れ|合わせて表示)"
    r"|(?<![a-z])(?:as well|too|alongside|next to it|side by side|add(?:ing)?\s+(?:the\s+)?\w+)",
    re.IGNORECASE,
)
# Nothing, or only a word pointing at the result, before "filter": all of its conditions.
_THE_CONDITION = re.compile(r"(?:the|that|this|its|those|these)?|(?:その|この|今の|さっきの)")
_INCLUDED_TOO = re.compile(r"\s*(?:の\s*(?:もの|分|行))?\s*も\s*(?:含め|入れ|込み|合わせ)")
# Words for the period itself (「年の条件」「期間の絞り込み」 "the year filter").
_PERIOD_WORDS = re.compile(r"(?:年|年度|月|期間|日付|時期|year|month|period|date)\s*$", re.I)


def _removed_columns(parsed: ParsedRequest, text: str, base: dict[str, Any]) -> set[str]:
    """The columns whose conditions a follow-up takes off the result: 「部署の条件は外して」
    (the column or value named just before), 「年の絞り込みは外して」「全期間で」 (every date
    condition), "remove the department filter"."""
    held = {f["col"] for f in base.get("filters") or []}
    dates = {c for c in held if parsed.index.kind(c) == "datetime"}
    removed: set[str] = set(dates) if _ALL_PERIODS.search(text) else set()
    if _ALL_ROWS.search(text):
        return held
    # (start, end, said before it?): 「部署の条件は外して」 names it before, "remove the
    # department filter" inside
    spans = [(m.start(), m.start(), True) for m in _REMOVED_JA.finditer(parsed.text)]
    spans += [(m.start(1), m.end(1), False) for m in _REMOVED_EN.finditer(parsed.text)]
    for start, end, before in spans:
        said = parsed.text[max(0, start - 20) : start] if before else parsed.text[start:end]
        named = [
            m.column
            for m in [*parsed.mentions, *parsed.value_mentions]
            if (not before and start <= m.start < end)
            or (before and m.end <= start and start - m.end <= 2)
        ]
        # a value of a held condition said as it stands ("the Sales filter")
        named += [
            f["col"]
            for f in base.get("filters") or []
            if isinstance(f.get("value"), str) and f["value"].lower() in said.lower().split()
        ]
        if named:
            removed.update(c for c in named if c in held)
        elif _PERIOD_WORDS.search(said.strip()):
            removed.update(dates)
        elif _THE_CONDITION.fullmatch(said.strip()):
            removed.update(held)  # "drop the filter", 「条件は外して」: the result's conditions
    # 「本社も含めて」「オンラインも含めた全体で」 "including Online too": a value or column said to
    # be included again takes its column's condition off
    for m in [*parsed.mentions, *parsed.value_mentions]:
        if m.column in held and _INCLUDED_TOO.match(parsed.text[m.end :]):
            removed.add(m.column)
    for condition in base.get("filters") or []:  # a value is no condition before 「も含めて」
        value = condition.get("value")
        info = parsed.index.by_name.get(condition["col"])
        values = [
            *(value if isinstance(value, list) else [value]),
            *(info.examples if info else ()),
        ]
        for said_value in (normalize(str(v)) for v in values if isinstance(v, str)):
            at = parsed.text.find(said_value) if said_value else -1
            if at >= 0 and _INCLUDED_TOO.match(parsed.text[at + len(said_value) :]):
                removed.add(condition["col"])
    return removed


_ADDED_TOO = re.compile(
    r"\s*(?:の\s*(?:もの|分|行))?\s*も\s*(?:足し|加え|含め|入れ|追加|合わせ)"
    r"|\s+(?:too|as well|also)(?![a-z])",
    re.IGNORECASE,
)
_WHOLE_SAID = re.compile(r"全体|全部|すべて|全て|(?<![a-z])(?:all|whole|everything)(?![a-z])", re.I)
_ADD_BEFORE = re.compile(r"(?<![a-z])(?:add|plus|include|including|and also)\s+(?:the\s+)?$", re.I)


def _values_added(parsed: ParsedRequest, base: dict[str, Any]) -> list[dict[str, Any]]:
    """「タイも足して」 after "how many in Vietnam?", 「調整後合格も含めると？」 after
    「不合格は何件？」, "add Thailand too": the value joins the one the result is on (``in``),
    it does not replace it, nor does the condition go."""
    held = {f["col"]: f for f in base.get("filters") or [] if f.get("op") in ("==", "in")}
    said: list[tuple[str, Any]] = [  # (column, value) said to be added
        (m.column, m.value)
        for m in parsed.value_mentions
        if m.column in held
        and not m.negated
        and (_ADDED_TOO.match(parsed.text[m.end :]) or _ADD_BEFORE.search(parsed.text[: m.start]))
    ]
    taken = bytearray(len(parsed.text))
    for column in held:  # 「調整後合格も含めると」: a value "also included" is no mention
        info = parsed.index.by_name.get(column)
        values = sorted(info.examples if info else (), key=lambda v: -len(str(v)))
        for value in values:  # the longest first: 調整後合格, not the 合格 inside it
            word = normalize(str(value))
            at = parsed.text.find(word) if word else -1
            if at < 0 or any(taken[at : at + len(word)]):
                continue
            taken[at : at + len(word)] = b"\x01" * len(word)
            if _ADDED_TOO.match(parsed.text[at + len(word) :]):
                said.append((column, value))
    if _WHOLE_SAID.search(parsed.text):
        return []  # 「オンラインも含めた全体で」: every row, the condition goes
    added: dict[str, dict[str, Any]] = {}
    for column, value in said:
        condition = added.get(column) or held[column]
        old = condition["value"] if isinstance(condition["value"], list) else [condition["value"]]
        if value not in old:
            added[column] = {"col": column, "op": "in", "value": [*old, value]}
    return list(added.values())


def _without(filters: list[dict[str, Any]], columns: set[str]) -> list[dict[str, Any]]:
    """The conditions that are on none of ``columns``."""
    return [f for f in filters if f["col"] not in columns]


def _on_the_same_dates(
    old: list[dict[str, Any]], new: list[dict[str, Any]], parsed: ParsedRequest
) -> list[dict[str, Any]]:
    """A period said again (「7月分も」) is on the date column the previous period was on,
    unless the request names another date column (the first of the table is a guess)."""
    before = {
        f["col"]
        for f in old
        if isinstance(f.get("value"), str) and _DATE_VALUE.fullmatch(f["value"])
    }
    named = {m.column for m in parsed.mentions}
    if len(before) != 1:
        return new
    (column,) = before
    return [
        {**f, "col": column}
        if isinstance(f.get("value"), str)
        and _DATE_VALUE.fullmatch(f["value"])
        and f["col"] != column
        and f["col"] not in named
        else f
        for f in new
    ]


_NEXT_MONTH = re.compile(r"翌月|次の月|その次の月|\b(?:the )?(?:next|following) month\b", re.I)
_PREVIOUS_MONTH = re.compile(r"前月|前の月|その前の月|\b(?:the )?(?:previous|prior) month\b", re.I)


def _next_or_previous_month(
    old: list[dict[str, Any]], new: list[dict[str, Any]], text: str
) -> list[dict[str, Any]]:
    """「翌月の分も」「前の月は？」 after one month's result, with no month said: that month
    moved by one (the new period replaces the old one, ``_merged``)."""
    if any(isinstance(f.get("value"), str) and _DATE_VALUE.fullmatch(f["value"]) for f in new):
        return []  # 「前の月（12月）は？」: the month said is the one
    step = 1 if _NEXT_MONTH.search(text) else -1 if _PREVIOUS_MONTH.search(text) else 0
    starts = [
        f
        for f in old
        if f.get("op") in (">=", "==")
        and isinstance(f.get("value"), str)
        and re.fullmatch(r"\d{4}-\d{2}(?:-01)?", f["value"])
    ]
    if not step or len(starts) != 1:
        return []
    year, month = int(starts[0]["value"][:4]), int(starts[0]["value"][5:7]) + step
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    after_year, after = year + month // 12, month % 12 + 1
    column = starts[0]["col"]
    return [
        {"col": column, "op": ">=", "value": f"{year}-{month:02d}-01"},
        {"col": column, "op": "<", "value": f"{after_year}-{after:02d}-01"},
    ]


_SAME_MONTH = re.compile(r"同じ月|同月|\bsame month\b", re.IGNORECASE)


def _same_month_of(
    old: list[dict[str, Any]], new: list[dict[str, Any]], text: str
) -> list[dict[str, Any]]:
    """「2025年の同じ月は？」 after July 2024: the month of the previous period, in the year
    said (a year alone would replace the month with the whole year)."""
    if not _SAME_MONTH.search(text):
        return new
    months = {
        (f["col"], f["value"][5:7])
        for f in old
        if f.get("op") in ("==", ">=")
        and isinstance(f.get("value"), str)
        and re.fullmatch(r"\d{4}-\d{2}(?:-01)?", f["value"])
    }
    out = []
    for condition in new:
        value = condition.get("value")
        said = [m for c, m in months if c == condition["col"]]
        if condition.get("op") == "==" and isinstance(value, str) and len(value) == 4 and said:
            condition = {**condition, "value": f"{value}-{said[0]}"}
        out.append(condition)
    return out


def _date_column(parsed: ParsedRequest, spec: dict[str, Any]) -> tuple[str | None, bool]:
    """The date column of a monthly view — one the request names, the result's own (the
    line's date axis: 「月次に変えて」 after a quarterly line over 執行日) or its filters',
    else the first of the table (a ledger's own date: 計上日, 請求日) — and whether that was
    chosen."""
    dates = parsed.index.names("datetime")
    said = [m.column for m in parsed.mentions if m.column in dates]
    own = [c for c in [spec.get("x"), *(spec.get("group_cols") or [])] if c in dates]
    named = said or own or [f["col"] for f in spec.get("filters") or [] if f["col"] in dates]
    if named:
        return named[0], False
    if liked := date_named_like(
        dates, spec.get("y") or next(iter(spec.get("metrics") or {}), None)
    ):
        return liked, False  # "show it monthly" of WrittenOff: over WriteoffDate
    return (dates[0], len(dates) > 1) if dates else (None, False)


def _grouped(base: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    """``base`` grouped by ``groups`` (a total split, a grouping replaced)."""
    column, agg = _measure(base)
    metrics = {column: [agg]} if column else {groups[0]: ["count"]}
    measured = {c: list(a) for c, a in (base.get("metrics") or {}).items() if "count" not in a}
    if column and len(measured) > 1 and column in measured:
        metrics = measured  # 「商品区分ごとの対象売上とリベート額」 → 「得意先別に」: both
    lead = f"{column or groups[0]}_{agg}"
    return {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": groups,
        "metrics": metrics,
        "sort": {"by": lead, "ascending": False},
        "top_k": base.get("top_k"),
        "filters": base.get("filters") or [],
    }


# A grouping said to go: 「券種は関係なく」「所属は外して」「業者は気にしなくていいので」 after
# the column, "make it monthly instead", 「全体の月別推移」 for the whole.
_GROUPING_DISMISSED = re.compile(
    r"^\s*(?:ごと|別|毎)?\s*(?:は|を|も|の区別は|の違いは)?\s*[、,]?\s*"
    r"(?:関係な|関係無|外し|外す|はずし|はずす|気にしな|気にせ|問わ|無視|抜きで|不要|いらな|なしで|無しで)"
)
_AS_A_WHOLE = re.compile(
    r"全体の|全体で|全社の|全社で|合算|(?<![a-z])(?:instead|overall|altogether|combined|as a whole)"
    r"(?![a-z])",
    re.IGNORECASE,
)


def _grouping_dismissed(parsed: ParsedRequest, text: str, groups: list[str]) -> bool:
    """Whether a follow-up that changes the period says the result's grouping goes: the
    grouped column named with 「関係なく」「外して」, or the whole asked for ("instead",
    「全体の」) while no grouping is said again."""
    said = any(
        m.column in groups and _GROUPING_DISMISSED.match(parsed.text[m.end :])
        for m in parsed.mentions
    )
    return said or _AS_A_WHOLE.search(text) is not None


def _monthly(base: dict[str, Any], x: str, freq: str, keep_groups: bool = True) -> dict[str, Any]:
    column, agg = _measure(base)
    groups = [g for g in _groups(base) if g != x and keep_groups]  # "by month" on a month
    return {
        "type": "plot",
        "kind": "line",
        "x": x,
        "y": column or x,
        "agg": agg,
        "freq": freq,
        "hue": groups[0] if len(groups) == 1 else None,
        "filters": base.get("filters") or [],
    }


def _chart(
    base: dict[str, Any], line: bool = False, kind: Callable[[str], str] | None = None
) -> dict[str, Any] | None:
    """The grouped result as bars; as a line over the months when a line is asked of a
    grouping by a date column (「支給月ごとの合計」 then 「折れ線グラフにして」)."""
    groups = _groups(base)
    if len(groups) != 1 or (base.get("op") or base.get("kind")) not in (
        "groupby_agg",
        "share_ratio",
    ):
        return None
    column, agg = _measure(base)
    if line and kind is not None and kind(groups[0]) == "datetime":
        return {
            "type": "plot",
            "kind": "line",
            "x": groups[0],
            "y": column or groups[0],
            "agg": agg if column else "count",
            "freq": "M",
            "filters": base.get("filters") or [],
        }
    return {
        "type": "plot",
        "kind": "bar",
        "x": groups[0],
        "y": column,
        "agg": agg if column else "sum",
        "top_k": base.get("top_k") or 30,
        "filters": base.get("filters") or [],
    }


_BY_BEFORE = re.compile(
    r"\b(?:by|per|grouping to|grouping by|group by|grouped by|regroup by)\s+(?:the\s+)?$",
    re.IGNORECASE,
)


def _groups_said(parsed: ParsedRequest, text: str) -> list[str]:
    """The columns the request groups by (「部署別に」, "now by channel"); a numeric column
    right after "by" or before 別/ごと too ("split that by star rating")."""
    groups = [
        c
        for clause in parsed.clauses
        for c in clause.group_cols
        if parsed.index.kind(c) != "datetime"
    ]
    if not groups:
        groups = [
            m.column
            for m in parsed.mentions
            if _BY_BEFORE.search(text[: m.start])
            or re.match(r"\s*(?:別|ごと|毎)", text[m.end :])
            or re.search(r"(?:別|ごと|毎)$", parsed.text[m.start : m.end])  # 「事務所別」
            or re.match(r"\s*も\s*(?:加え|追加|入れ)", text[m.end :])  # 「雇用区分も加えて」
            or (  # 「カテゴリでも同じように」: the same, by another category
                re.match(r"\s*でも", text[m.end :]) and parsed.index.kind(m.column) != "numeric"
            )
        ]
    return list(dict.fromkeys(groups))


def _reshaped(
    spec: dict[str, Any], aggs: list[str], top: int | None, groups: list[str]
) -> dict[str, Any]:
    """Another aggregation ("what about the median?"), another top-N (「上位5つにして」) and
    another grouping (「部署別に」: a total split, a grouping replaced, a line's series)."""
    spec = dict(spec)
    if aggs and spec.get("op") in ("total", "groupby_agg"):
        spec["metrics"] = {column: aggs for column in spec.get("metrics") or {}}
        if spec.get("sort") and spec["metrics"]:
            lead = next(iter(spec["metrics"]))
            spec["sort"] = {**spec["sort"], "by": f"{lead}_{aggs[0]}"}
    if top and (spec.get("op") or spec.get("kind")) in ("groupby_agg", "share_ratio", "bar"):
        spec["top_k"] = top
    kind = spec.get("op") or spec.get("kind")
    if groups and kind == "line":
        spec["hue"] = groups[0]
    elif groups and kind == "share_ratio" and len(groups) == 1:
        spec["group_col"] = groups[0]  # 「カテゴリでも同じように」: the same shares, regrouped
    elif groups and kind == "bar" and len(groups) == 1:
        spec["x"] = groups[0]
    elif groups:
        spec = _grouped(spec, groups)
        if top:  # 「それを品目別に。上位３つだけ」: the top-N of the new grouping
            spec["top_k"] = top
    return spec


def _remeasured(spec: dict[str, Any], measures: list[str], aggs: list[str]) -> dict[str, Any]:
    """The same result of another measure: 「件数じゃなくて発注金額の合計で」, "show revenue
    instead" (the aggregation said, else the previous one unless it counted rows, else sum)."""
    spec = dict(spec)
    kind = spec.get("op") or spec.get("kind")
    _, previous = _measure(spec)
    agg = (aggs or [previous if previous not in ("count", "nunique") else "sum"])[0]
    if kind in ("total", "groupby_agg"):
        spec["metrics"] = {column: aggs or [agg] for column in measures}
        if kind == "groupby_agg":
            spec["sort"] = {
                **(spec.get("sort") or {"ascending": False}),
                "by": f"{measures[0]}_{agg}",
            }
    elif kind == "share_ratio":
        spec["value_col"] = measures[0]
    elif kind in ("bar", "line"):
        spec["y"], spec["agg"] = measures[0], agg
    return spec


def _measured_too(spec: dict[str, Any], measures: list[str], aggs: list[str]) -> dict[str, Any]:
    """The result with another measure beside the one shown: 「深夜手当の合計も横に並べて」
    「管理費も一緒に」, "add the fees as well" (the aggregation said, else the shown one's)."""
    spec = dict(spec)
    metrics = dict(spec.get("metrics") or {})
    _, previous = _measure(spec)
    agg = (aggs or [previous if previous not in ("count", "nunique") else "sum"])[0]
    for column in measures:
        metrics.setdefault(column, aggs or [agg])
    spec["metrics"] = metrics
    return spec


def _counted(spec: dict[str, Any]) -> dict[str, Any]:
    """The same result counting rows instead: 「件数だと何件？」, "and how many rows?"."""
    spec = dict(spec)
    kind = spec.get("op") or spec.get("kind")
    groups = _groups(spec)
    if kind == "total":
        spec["metrics"] = {}
    elif kind == "groupby_agg" and groups:
        spec["metrics"] = {groups[0]: ["count"]}
        spec["sort"] = {**(spec.get("sort") or {"ascending": False}), "by": f"{groups[0]}_count"}
    elif kind == "share_ratio":
        spec["value_col"] = None
    elif kind == "bar":
        spec["y"], spec["agg"] = None, "count"
    elif kind == "line":
        spec["agg"] = "count"
    return spec


def _swapped(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """New conditions of a swap ("swap Enterprise for Business", 「AじゃなくてBで」): on a
    column already held to a value, the values said that are not held yet replace it."""
    held: dict[str, set[Any]] = {}
    for f in old:
        if f["op"] == "==":
            held.setdefault(f["col"], set()).add(f["value"])
        elif f["op"] == "in":
            held.setdefault(f["col"], set()).update(f["value"])
    swapped = []
    for f in new:
        values = f["value"] if f["op"] == "in" else [f["value"]] if f["op"] == "==" else None
        if values is None or f["col"] not in held:
            swapped.append(f)
            continue
        fresh = [v for v in values if v not in held[f["col"]]]
        if not fresh or len(fresh) == len(values):
            swapped.append(f)
        else:
            value: Any = fresh[0] if len(fresh) == 1 else fresh
            swapped.append(
                {"col": f["col"], "op": "==" if len(fresh) == 1 else "in", "value": value}
            )
    return swapped


def _shares(spec: dict[str, Any]) -> dict[str, Any]:
    column, _ = _measure(spec)
    return {
        "type": "analysis",
        "op": "share_ratio",
        "group_col": _groups(spec)[0],
        "value_col": column,
        "top_k": spec.get("top_k"),
        "filters": spec.get("filters") or [],
    }


def _own_request(parsed: ParsedRequest, text: str) -> bool:
    """True when the request says what to compute by itself: a numeric column, or an
    aggregation of a column it names (「部署別の件数」), with no word pointing back at the
    result. An aggregation alone (「平均で見たいです」, "as a median") names nothing to
    aggregate: it changes how the result just shown is aggregated."""
    if _POINTER.search(text):
        return False
    if any(parsed.index.kind(m.column) == "numeric" for m in parsed.mentions):
        return True
    return bool(vocab.aggregations(text)) and bool(parsed.mentions or parsed.value_mentions)


def _year_of(filters: list[dict[str, Any]]) -> int | None:
    """The one year the date conditions of a result fall in (August 2024: 2024), so that
    a month said alone in its follow-up ("and September?") is of that year."""
    years = set()
    for condition in filters:
        value = condition.get("value")
        if not isinstance(value, str) or not _DATE_VALUE.fullmatch(value):
            continue
        year, month_day = int(value[:4]), value[5:10]
        if condition.get("op") == "<" and month_day in ("01", "01-01"):
            year -= 1  # 「< 2025-01-01」 ends December 2024
        years.add(year)
    return years.pop() if len(years) == 1 else None


def _without_values(parsed: ParsedRequest) -> str:
    """The request with the category values and the names of other than date columns it
    says blanked out: "only the annual licences" and "their combined daily rate"
    (``daily_rate_jpy``) say no period."""
    chars = list(parsed.text)
    named = [m for m in parsed.mentions if parsed.index.kind(m.column) != "datetime"]
    for mention in [*parsed.value_mentions, *named]:
        chars[mention.start : mention.end] = "_" * (mention.end - mention.start)
    return "".join(chars)


def _measures_said(
    parsed: ParsedRequest, groups: list[str], filters: list[dict[str, Any]], aggregated: bool
) -> list[str]:
    """The numeric columns the follow-up measures: named, neither a grouping nor a
    condition, not said to be replaced (「出展料じゃなくて獲得名刺数で」); with an
    aggregation said and no column named, the one its English words name ("what's their
    total balance?" ~ 債権残高)."""
    measures = list(
        dict.fromkeys(m.column for m in parsed.mentions if parsed.index.kind(m.column) == "numeric")
    )
    measures = [c for c in measures if c not in groups and not any(f["col"] == c for f in filters)]
    said_not = {  # "use yen instead of dollars"
        m.column
        for m in parsed.mentions
        if vocab.NOT_THIS_AFTER.match(parsed.text[m.end :])
        or vocab.NOT_THIS_BEFORE.search(parsed.text[: m.start])
    }
    kept = [c for c in measures if c not in said_not]
    if not kept and measures and "count" in vocab.aggregations(parsed.text):
        return []  # "the number of receipts instead of the amount": rows counted instead
    measures = kept or measures
    if not measures and aggregated and (named := measure_by_its_words(parsed.text, parsed.index)):
        measures = [named]
    amount = parsed.index.amount_column(parsed.value_mentions) or whole_of_its_parts(
        [n for n in parsed.index.names("numeric") if money_named(n)]
    )
    if not measures and aggregated and amount and _MONEY_SAID.search(parsed.text):
        measures = [amount]  # "and what did those cost in total?": the table's amount
    return measures


def _yes_no_conditions(
    parsed: ParsedRequest, groups: list[str], filters: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A yes/no column named with no value and not grouped by ("only restricted gifts",
    「返品ありだけ」 said as the column) keeps the rows where it is yes, as in a request
    of its own (``StepBuilder._yes_no_predicates``)."""
    held = {f["col"] for f in filters}
    found = []
    for mention in parsed.mentions:
        yes = parsed.index.yes_value(mention.column)
        if yes is not None and mention.column not in groups and mention.column not in held:
            found.append({"col": mention.column, "op": "==", "value": yes})
            held.add(mention.column)
    return found


_DATE_BASIS = re.compile(r"ベース|基準|(?<![a-z])(?:based on|by)(?![a-z])", re.IGNORECASE)


def _date_axis_moved(
    parsed: ParsedRequest, base: dict[str, Any], dataset_id: str | None
) -> FollowUp | None:
    """ "switch to paid date", 「支払日ベースに変えて」 after a line over another date: the
    same line over the date said (before: a summary of that date column)."""
    if base.get("kind") != "line":
        return None
    dates = {
        m.column
        for m in parsed.mentions
        if parsed.index.kind(m.column) == "datetime" and m.column != base.get("x")
    }
    others = {m.column for m in parsed.mentions} - dates
    if (
        len(dates) != 1
        or others
        or not (_SWAP.search(parsed.text) or _DATE_BASIS.search(parsed.text))
    ):
        return None
    spec = {**base, "x": next(iter(dates))}
    if dataset_id:
        spec["dataset_id"] = dataset_id
    title = _t(parsed.lang, "前回の結果を変更", "The previous result, changed")
    return FollowUp(title, spec=parse_plot_spec(spec).model_dump(mode="json", exclude_none=True))


def _blank_groups_dropped(parsed: ParsedRequest, base: dict[str, Any]) -> list[dict[str, Any]]:
    """ "now exclude the blank ones", 「空欄は除いて」 with no column named: the blank groups
    of the result go."""
    if parsed.mentions or not vocab.BLANKS_OUT.search(parsed.text):
        return []
    return [{"col": g, "op": "not_null"} for g in _groups(base)]


def _over_periods(
    parsed: ParsedRequest,
    text: str,
    spec: dict[str, Any],
    freq: str,
    grouping_said: bool,
    assumptions: list[str],
) -> dict[str, Any] | str:
    """The result as a line over the periods (``_monthly``), or the question of which date
    column when there is none."""
    lang = parsed.lang
    x, chosen = _date_column(parsed, spec)
    if chosen:
        assumptions.append(_t(lang, f"日付の列は「{x}」と仮定", f"date column assumed: {x}"))
    if x is None:
        dates = ", ".join(parsed.index.names("datetime"))
        return _t(
            lang,
            f"どの日付の列で{vocab_freq_ja(freq)}にしますか？（候補: {dates or 'なし'}）",
            f"Which date column should the periods follow? (candidates: {dates or 'none'})",
        )
    kept = grouping_said or not _grouping_dismissed(parsed, text, _groups(spec))
    return _monthly(spec, x, freq, keep_groups=kept)


def edit_previous(
    text: str,
    previous: Sequence[dict[str, Any]],
    summary: dict[str, Any],
    dataset_id: str | None,
) -> FollowUp | None:
    """The previous result edited as ``text`` asks, or None when ``text`` is not a follow-up."""
    if not text.strip():
        return None
    if _base(previous) is None and previous and previous[-1].get("kind") in _PLOTS_EDITED:
        return _plot_edited(dict(previous[-1]), text, summary, dataset_id)
    return _result_edited(text, previous, summary, dataset_id)


def _result_edited(
    text: str,
    previous: Sequence[dict[str, Any]],
    summary: dict[str, Any],
    dataset_id: str | None,
) -> FollowUp | None:
    """A table, total, share, bar or line chart edited as ``text`` asks (``edit_previous``)."""
    base = _base(previous)
    if base is None:
        return None
    parsed = parse_request(
        text, summary, vocab.family, vocab.phrase_spans, _year_of(base.get("filters") or [])
    )
    lang = parsed.lang
    if (moved := _date_axis_moved(parsed, base, dataset_id)) is not None:
        return moved  # "switch to paid date", 「支払日ベースに変えて」 on a line
    added = _values_added(parsed, base)  # 「タイも足して」: a value joins the condition
    removed = _removed_columns(parsed, text, base) - {f["col"] for f in added}
    if not removed and not _MEASURE_TOO.search(parsed.text) and _own_request(parsed, text):
        return None  # 「部署別の件数」: a request of its own
    dropped = {  # 「部門ごとじゃなくて」: the grouping said to be replaced
        m.column
        for m in parsed.mentions
        if re.match(r"\s*(?:ごと|別|毎)?\s*(?:じゃなく|ではなく|でなく)", parsed.text[m.end :])
    }
    said = [g for g in _groups_said(parsed, text) if g not in dropped]
    groups = _with_groups_kept(base, said, text)
    filters = [f for clause in parsed.clauses for f in parsed.filters_for(clause)[0]]
    filters += _yes_no_conditions(parsed, groups, filters)
    filters = list({repr(sorted(f.items())): f for f in filters}.values())
    filters = _without(filters, removed)  # 「支給済の条件は外して」: not said again either
    base = {**base, "filters": _without(list(base.get("filters") or []), removed)}
    filters += _next_or_previous_month(list(base.get("filters") or []), filters, text)
    filters = filters or _blank_groups_dropped(parsed, base)
    filters = [f for f in filters if f["col"] not in {a["col"] for a in added}] + added
    freq = vocab.frequency(_without_values(parsed))  # "only the annual licences": a value
    chart = bool(_CHART.search(text))
    share = bool(_SHARE.search(text))
    top = _TOP.search(parsed.text)  # normalised: 「上位３つ」
    dropped = {
        agg
        for start, end, agg in vocab.aggregation_spans(text)
        if _NOT_THIS.match(text[end:]) or re.match(r"\s*instead of\s*$", text[:start][-12:])
    }
    aggs = [a for a in vocab.aggregations(text) if a != "count" and a not in dropped]
    measures = _measures_said(parsed, groups, filters, bool(aggs))
    counted = not measures and not aggs and "count" in vocab.aggregations(text)
    counted = counted and "count" not in dropped
    if not (
        filters or groups or freq or chart or share or top or aggs or measures or counted or removed
    ):
        return None
    filters = _on_the_same_dates(list(base.get("filters") or []), filters, parsed)
    filters = _same_month_of(list(base.get("filters") or []), filters, text)
    base, filters = _widened(base, filters, parsed, text)
    if _SWAP.search(text):
        filters = _swapped(list(base.get("filters") or []), filters)
    merged = _merged(list(base.get("filters") or []), filters)
    spec = {**base, "filters": [typed_boolean(f, parsed.index.kind) for f in merged]}
    title = _t(lang, "前回の結果を変更", "The previous result, changed")
    assumptions: list[str] = []
    if measures:  # 「深夜手当の合計も横に並べて」 beside the measure shown, else in its place
        too = _MEASURE_TOO.search(parsed.text) and spec.get("op") in ("total", "groupby_agg")
        spec = (_measured_too if too else _remeasured)(spec, measures, aggs)
        aggs = []
    elif counted:
        spec = _counted(spec)
    spec = _reshaped(spec, aggs, int(next(g for g in top.groups() if g)) if top else None, groups)
    if share and not freq and len(_groups(spec)) == 1:  # 「構成比で見せて」
        spec = _shares(spec)
    if freq:
        periodic = _over_periods(parsed, text, spec, freq, bool(said), assumptions)
        if isinstance(periodic, str):
            return FollowUp(title, question=periodic)
        spec = periodic
    if (
        chart
        and not share
        and not freq
        and (spec.get("op") or spec.get("kind")) not in ("line", "bar")
    ):
        # 「現金以外で同じグラフを」 on a bar chart: the chart is kept, its rows changed
        charted = _chart(spec, _LINE_SAID.search(text) is not None, parsed.index.kind)
        if charted is None:
            return FollowUp(
                title,
                question=_t(
                    lang,
                    "グラフにする区分（何別のグラフか）を教えてください。1つの数値はグラフにできません。",
                    "Which category should the chart show? A single number cannot be charted.",
                ),
            )
        spec = charted
    if dataset_id:
        spec["dataset_id"] = dataset_id
    try:
        model = (parse_plot_spec if spec.get("type") == "plot" else parse_analysis_spec)(spec)
        check_columns(model, parsed.index.by_name)
    except SpecError as error:
        return FollowUp(
            title, question=_t(lang, "指示を確認させてください: ", "Please check: ") + error.message
        )
    dumped = model.model_dump(mode="json", exclude_none=True)
    return FollowUp(title, spec=dumped, assumptions=assumptions)


_PLOTS_EDITED = frozenset({"hist", "scatter", "box"})
# A category the points are coloured by: 「運用商品で色分けして」, "colour it by region".
_COLOURED_AFTER = re.compile(r"\s*(?:で|ごとに|別に)\s*色分け")
_COLOURED_BEFORE = re.compile(r"(?<![a-z])colou?r(?:ed)?(?: it| them| that)? by\s+$", re.I)


def _plot_edited(
    base: dict[str, Any], text: str, summary: dict[str, Any], dataset_id: str | None
) -> FollowUp | None:
    """A histogram, scatter or box chart edited: its rows kept (「承認済みのものだけで」), its
    points coloured by a category (「運用商品で色分けして」), or split by one (a histogram
    becomes boxes per category: 「事業所ごとに箱ひげに」, "split it by customer type"). None
    when the text asks none of these."""
    parsed = parse_request(text, summary, vocab.family, vocab.phrase_spans)
    if _own_request(parsed, text):
        return None  # 「部署別の金額合計」 after a histogram: a request of its own
    kind = parsed.index.kind
    category = next(iter(_groups_said(parsed, text)), None) or next(
        (
            m.column
            for m in parsed.mentions
            if kind(m.column) != "numeric"
            and (
                _COLOURED_AFTER.match(parsed.text[m.end :])
                or _COLOURED_BEFORE.search(parsed.text[: m.start])
            )
        ),
        None,
    )
    groups = [category] if category else []
    filters = [f for clause in parsed.clauses for f in parsed.filters_for(clause)[0]]
    filters += _yes_no_conditions(parsed, groups, filters)
    if category is None and not filters:
        return None
    spec = {k: v for k, v in base.items() if k not in ("title", "dataset_id")}
    if category and spec["kind"] == "scatter":
        spec["hue"] = category
    elif category and spec["kind"] == "hist":
        spec = {"type": "plot", "kind": "box", "x": category, "y": spec["x"]}
    elif category:
        spec["x"] = category
    merged = _merged(list(base.get("filters") or []), filters)
    spec["filters"] = [typed_boolean(f, kind) for f in merged]
    if dataset_id:
        spec["dataset_id"] = dataset_id
    try:
        model = parse_plot_spec(spec)
        check_columns(model, parsed.index.by_name)
    except SpecError:
        return None
    title = _t(parsed.lang, "前回のグラフを変更", "The previous chart, changed")
    return FollowUp(title, spec=model.model_dump(mode="json", exclude_none=True))


def vocab_freq_ja(freq: str) -> str:
    return {"D": "日別", "W": "週別", "M": "月別", "Q": "四半期別", "Y": "年別"}.get(freq, "期間別")
