"""Building one step of a plan: the column roles of a clause and the analysis ops.

``StepBuilder`` gives each clause its columns (grouped by, named numeric and
category columns, numeric columns named elsewhere in the request), its
aggregation words, period, top-N and order, and builds the analysis specs
(overview, missing values, summary, duplicates, correlation, share, group-by).
Plots are built by the subclass in ``planner``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import keiri_agent.agents.analysis.reasoning.offline.vocab as vocab
from keiri_agent.agents.analysis.ops.specs import (
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
)
from keiri_agent.agents.analysis.reasoning.offline.column_words import UNIT_WORDS
from keiri_agent.agents.analysis.reasoning.offline.en_column_words_ja import japanese_readings
from keiri_agent.agents.analysis.reasoning.offline.ja_english_words import (
    english_readings,
    head_readings,
)
from keiri_agent.agents.analysis.reasoning.offline.parser import (
    SYNONYMS,
    TOTAL_NAME,
    Clause,
    ColumnIndex,
    ParsedRequest,
    name_tokens,
    normalize,
    without_brackets,
)
from keiri_agent.agents.analysis.reasoning.offline.request_filters import (
    LEFT_OUT_BEFORE,
    common_prefix,
    money_column,
    money_named,
    typed_boolean,
    verb_column,
)
from keiri_agent.errors import SpecError

_DATE_WORDS = frozenset({"date", "dt", "day", "on", "at", "time"})
_JA_DATE_TAIL = re.compile(r"(?:年月日|日付|日時|年月|日)$")


def date_named_like(dates: Sequence[str], measure: str | None) -> str | None:
    """The one date column named like the measure, the date of its event: WriteoffDate of
    WrittenOff, 支払日 of 支払額 (beside InvoiceDate, 請求日); None when none or several."""
    if not measure:
        return None
    liked = []
    for date in dates:
        if date.isascii() and measure.isascii():
            events = [t for t in name_tokens(date) if t not in _DATE_WORDS]
            words = name_tokens(measure)
            if any(common_prefix(e, w) >= 4 for e in events for w in words):
                liked.append(date)
        elif not date.isascii() and not measure.isascii():
            event = _JA_DATE_TAIL.sub("", date)
            if len(event) >= 2 and event != date and event in measure:
                liked.append(date)
    return liked[0] if len(liked) == 1 else None


_AGG_JA = {
    "sum": "合計",
    "mean": "平均",
    "median": "中央値",
    "min": "最小値",
    "max": "最大値",
    "count": "件数",
    "nunique": "ユニーク数",
    "std": "標準偏差",
}
_AGG_EN = {
    "sum": "total",
    "mean": "average",
    "median": "median",
    "min": "minimum",
    "max": "maximum",
    "count": "count of",
    "nunique": "distinct count of",
    "std": "std. dev. of",
}
FREQ_JA = {"D": "日別", "W": "週別", "M": "月別", "Q": "四半期別", "Y": "年別"}
FREQ_EN = {"D": "Daily", "W": "Weekly", "M": "Monthly", "Q": "Quarterly", "Y": "Yearly"}
CATEGORY_KINDS = ("categorical", "text", "boolean")
_CONDITION_SAID = re.compile(
    r"超|以上|以下|未満|より(?:多|少|大|小|高|低|前|後)|を(?:超え|下回|上回)|入って(?:い)?ない"
    r"|空欄|空白|未入力|未記入|未設定|未登録|未割り?当|未アサイン|決まって(?:い)?ない"
    r"|\b(?:(?:more|less|fewer|greater) than|over|above|under|below|at (?:least|most))\s+[$¥]?\d"
    r"|\bno \w+ (?:recorded|given|entered|set)\b"
    # a state said of the rows (「まだ返ってきてない」「許可日が空いてる」, "still waiting
    # for approval", "not yet paid"): the rows it keeps are a condition too
    r"|まだ|空いて|(?:て|で)(?:い)?ない(?![ぁ-ん])|(?:て|で)いません"
    # 「納品が遅れた発注」: the rows described by what happened to them
    r"|が\s*(?!一番|いちばん|最も|最)[^\s、。,がをの]{1,8}?(?<!かっ)(?:た|ている|てる|ていた)"
    r"(?=\s*(?:もの|分|件|行|明細|発注|案件"
    r"|取引|伝票|注文|契約|申請|請求|の(?:は|を|が|件数|合計|数)))"
    r"|\b(?:ended up with|ended with|flagged (?:for|as)|marked (?:as|for)|came back with"
    r"|resulted in|turned out to be)\b"
    r"|\b(?:still|not yet|yet to be|waiting for|awaiting|haven't|hasn't|weren't|wasn't"
    r"|aren't|isn't|have not|has not|were not|was not|are not|is not)\b"
    # 「でんさいだけの額面合計」, "only the Osaka ones": some rows only, of a word not read
    # (not a column read, 「___だけの」, nor the answer's form, 「件数だけ教えて」)
    r"|(?<![_数計字果均額])(?:だけ|のみ)(?=の|で|を|に)"
    r"|\bonly (?!(?:the )?(?:total|count|number|sum|average|mean|figure)s?\b)(?:the |our )?[a-z]",
    re.IGNORECASE,
)
"""A condition said: a total must read it, else the rows it keeps are asked."""
_DISTINCT = re.compile(
    r"何(?:人|名|社|店|店舗|か所|カ所|種類|台|団体|校|か国|カ国|ヶ国|拠点|部署|施設|銀行|業者)"
    r"|\bhow many (?:different|distinct|unique)\b"
    r"|\bcount(?:ing)? each \w+ (?:only )?once\b"
    r"|\bhow many \w+(?: \w+)? (?:are|is) (?:in here|there|in (?:the|this) (?:data|file|table))",
    re.I,
)
"""How many different values of a named column (not how many rows)."""
_HOW_MANY_OF = re.compile(
    r"何\s*([\u3400-\u9fff\u30a1-\u30fc]{1,6}?)(?=で|に|の|が|を|ある|いる|[?？、。]|$)"
)
_DIFFERENT_BEFORE = re.compile(r"\b(?:different|distinct|unique)\s+$", re.I)
_MONEY_ASKED = re.compile(
    r"いくら|何円|使っ|(?<![a-z])(?:how much|spent|spend|spending|cost us)(?![a-z])", re.I
)
"""An amount of money asked, with no measure named."""
_MONEY_NOUN = re.compile(
    r"[\u4e00-\u9fff_]{1,6}(?:費|代金|料金)(?![\u4e00-\u9fff])|総額|金額|売上|入金|支払"
    # 「名刺代」「電気代」「部品代」: 代 after a thing bought (not 時代, 年代, 世代, 交代)
    r"|[\u4e00-\u9fff]{1,5}(?<![時年世交初歴現近])代(?![\u4e00-\u9fff])"
    r"|(?<![a-z])(?:giving|raised|donations?|donated|contributions?|proceeds|income|takings"
    r"|payments?|paid|billed|invoiced|charged|collected|earned|earnings|brought in|came in"
    r"|money|revenues?|sales"
    r"|turnover|value|amounts?)(?![a-z])",
    re.I,
)
"""A word for money the data holds that names no column (「交通費」 on a commuting-allowance
ledger, "giving" on a donor ledger, 「総額」): the amount column is meant."""
_PER_ROW_AGGS = ("mean", "median", "min", "max")
"""Aggregations that, said of the rows themselves ("the average gift", 「最大の入金」), take
the amount of each row; a total of rows is their count."""
_ALL_BEFORE = re.compile(
    r"(?:(?<![\u3400-\u9fff])全|すべての|全ての|(?<![a-z])(?:across )?all (?:the )?)$"
)
_ONLY = re.compile(r"だけ|のみ|に限|限定|(?<![a-z])(?:only|just)(?![a-z])", re.IGNORECASE)
_COMBINED = re.compile(
    r"あわせ(?:た|て)|合わせ(?:た|て)|合算|全部で|トータルで|合計すると|足すと|足し合わせ"
    r"|\bcombined\b|\btogether\b"
    r"|\baltogether\b|\bin total\b",
    re.IGNORECASE,
)
"""Values said to be taken together: one total over them, not one per value."""
_CROSS_TAB = re.compile(
    r"クロス集計|クロス表|ピボット|[×✕](?=\s*\S)|\b(?:cross[- ]?tab\w*|pivot)\b", re.I
)
"""A table of one category against another (「部門×勘定科目」)."""
_ROWS_ASKED = re.compile(r"何件|何行|(?<![a-z])how many (?:rows|records|entries|lines)(?![a-z])")
"""How many rows: one count."""
_EACH_OR_WHICH = re.compile(
    r"それぞれ|ひとつひとつ|一つ一つ|各|どの|どれ|\b(?:which|each|every)\b", re.IGNORECASE
)
"""「それぞれの…について」, "which regions …": the category is asked about."""
_ASKED_HEAD = re.compile(
    r"\s*(?:は|って)\s*(?:どこ|どれ|誰|だれ|何|なに)?\s*(?:です|でしょう)?か?\s*[?？]?\s*"
)
"""What follows the noun a question ends on (「…取引先は？」): that noun is what is asked for."""
_UNITS_SOLD = re.compile(r"\b(?:sold|sell|sells|selling)\b|売れ|販売(?:数|した|された)", re.I)
"""Units sold: counted by a quantity column, not by rows."""
_SOLD_AFTER = re.compile(r"\s+(?:were\s+|was\s+|we\s+|have\s+been\s+)?sold\b", re.I)
_SELLS_BEFORE = re.compile(
    r"\b(?:sells?|selling|sold)\s+(?:the\s+)?(?:most|more|fewest|fewer|least|many)?\s*$", re.I
)
_HOW_MUCH = re.compile(r"いくら|どれくらい|どのくらい|どれぐらい|\bhow much\b", re.I)
# 「件数と金額」「件数・合計額」 "count and amount": the amount's sum (the count comes with it)
_COUNT_AND_AMOUNT = re.compile(
    r"件数\s*(?:と|・|、|&|＆|及び|および)\s*(?:_+|金額|合計|総額)"
    r"|\bcount(?:s)? (?:and|&) (?:the )?(?:amount|total|sum|value)s?\b",
    re.I,
)
_HOW_MANY = re.compile(
    r"いくつ|何(?:個|本|枚|台|回|通|冊|行|人|名|時間|kg|キロ|トン|リットル)|延べ(?:で)?何日"
    r"|\bhow many\b",
    re.I,
)
QUANTITY_ASKED = re.compile(
    _HOW_MUCH.pattern + "|" + _HOW_MANY.pattern + "|" + _DISTINCT.pattern + r"|何件", re.I
)
"""A question of quantity: 「いくら」「何件」「何社」, "how much", "how many"."""
_PER_GROUP = re.compile(
    r"ごと|毎に|毎の|別に|別の|別で|\b(?:per|by|each|for every)\b"
    r"(?!\s+(?:booking|row|record|order|ticket|transaction|visit|item|person|head|member"
    r"|customer|guest|entry|invoice|line|shipment|claim|payment|application|request|purchase"
    r"|contract|case|trip|job|print job|fill-up|fill up|refill|receipt|deliver(?:y|ie)|loan"
    r"|transfer|remittance|month|year|week|day|quarter)s?\b)",
    re.IGNORECASE,
)
"""A grouping said (「班ごとの」, "by branch"; "per booking" is an average per row, no
grouping): a total of the whole table would drop it."""
_THINGS_COUNTED = re.compile(
    r"(?<=[\u4e00-\u9fff])(?<![点日係倍分少多複半整変関指桁総])数(?![\u4e00-\u9fff])"
)
"""「品目数」「社員数」 per group, no column of that name: how many rows each group has."""
_ROWS_AFTER = re.compile(
    r"\s*(?:records?|rows?|entries|entry|lines?|レコード|データ|明細|行(?![\u3400-\u9fff]))(?![a-z])",
    re.I,
)
"""A row word right after a column word: "refuel records" are rows, not a key."""
_SAME = re.compile(
    r"(?<![a-z])same\s+([^.;:()?!]{1,60})|同じ\s*([^\s、。・,()（）？?がにでのをとはも]{1,12})",
    re.I,
)
"""What is said to be the same: the keys of a duplicate check."""
_ID_WORDS = ("id", "no", "nr", "number", "code")
# The last word of a key column's name: an identifier, or the name of what it is
# ("same employee and course": ``employee_id``, ``course_name``; 「同じ駐車場」: 駐車場名).
_KEY_WORDS = (*_ID_WORDS, "name", "title")
_JA_KEY_TAIL = re.compile(r"(?:id|番号|コード|no\.?|名|名称)$")
_SAME_PERIOD = re.compile(r"(?:^|\s)(?:月|日|日付|年月)|(?<![a-z])(?:month|day|date)(?![a-z])")
_POINTING_BEFORE = re.compile(
    r"(?:(?<![a-z])(?:that|those)\s+|(?:その|あの|例の|さっきの)\s*)$", re.I
)
_HOW_MANY_BEFORE = re.compile(r"(?<![a-z])how many\s+(?:different\s+|distinct\s+)?$", re.I)
# How many people (counted by their identifier, ``StepBuilder.people_counted``).
_PEOPLE_ASKED = re.compile(
    r"何\s*(?:人|名)"
    r"|\bhow many (?:different |distinct |unique )?(?:people|employees|staff|members)\b",
    re.I,
)
_PERSON_ID = re.compile(
    r"(?:社員|従業員|職員|会員|employee|staff|member)[_\s]*(?:番号|id|コード|no)"
)
_PERSON_NAME = re.compile(r"社員|従業員|職員|会員|氏名|担当|employee|staff|member")
# A quantity asked in a unit (「何kg」「何時間」): the total of the column measured in it.
_HOW_MANY_UNIT = re.compile(
    r"何\s*(時間|km|kg|キログラム|キロ|トン|t|リットル|l|㎡|m2|本|枚|台|個|冊|人|名|件)"
)
# A measure's unit said with an average, maximum or total asked ("the average length in
# months", "the longest activity, in hours", 「平均何時間」「一番長いのは何か月」) → the name
# endings that carry that unit (term_months, 活動時間, 期間(月), 日数).
_UNIT_SAID = re.compile(
    r"(?<![a-z])in\s+(hours?|months?|days?|years?|minutes?)(?![a-z])"
    r"|何\s*(時間|か月|ヶ月|カ月|ヵ月|日|年|分)"
)
_UNIT_ENDINGS: dict[str, tuple[tuple[str, ...], str]] = {
    # unit said → (English name words, Japanese name ending pattern)
    "hour": (("hours", "hour", "hrs", "h"), r"時間\)?|\(h\)"),
    "month": (("months", "month"), r"\(月\)|月数|か月|ヶ月|カ月"),
    "day": (("days", "day"), r"日数|\(日\)"),
    "year": (("years", "yrs"), r"年数|\(年\)"),
    "minute": (("minutes", "mins", "min"), r"分数|\(分\)"),
}
_UNIT_OF_WORD = {
    "時間": "hour",
    "か月": "month",
    "ヶ月": "month",
    "カ月": "month",
    "ヵ月": "month",
    "日": "day",
    "年": "year",
    "分": "minute",
}
# 「人件費が最も少なかった」「商談件数が一番多い」: the extreme of the measure just named.
_MOST_OR_LEAST_AFTER = re.compile(
    r"\s*(?:が|の|は)?\s*(?:一番|最も|いちばん|もっとも)\s*(多|少な)(?:い|かった|く)"
)
# "the highest payments", "the biggest spenders": the direction of a top-N ranking, said of
# a measure in the plural; "the largest single payment" is each one's maximum.
_RANKED_BY_THE_MOST = re.compile(
    r"(?<![a-z])(?:highest|largest|biggest)\s+(?!single|individual|one\b)(?:[a-z-]+\s+)?[a-z]+s\b"
)
# A period said as the rate of an amount ("per month", "a month", 「月額」「毎月払う」), never as a
# trend (月別, by month, 推移, over time).
_RATE_PERIOD = re.compile(
    r"(?<![a-z])(?:per|a)\s+(?:month|year)(?![a-z])|(?<![a-z])(?:monthly|annual(?:ly)?|yearly)"
    r"(?![a-z])|毎月|月額|年額",
    re.IGNORECASE,
)
_PERIOD_IN_NAME = re.compile(r"monthly|annual|yearly|per_?month|per_?year|月額|年額|月間|年間")
# The word after a verb opening a request ("Check whether…", "Show the…").
_VERB_OPENING = re.compile(r"\s+(?:whether|if|for|that|the|all|any|each|every|how|which|what)\b")
# Words a reading of a name shares with most others: never what tells two columns apart.
_PLAIN_WORDS = frozenset({"amount", "total", "number", "no", "of", "the", "and", "a", "an", "sum"})


def _word_said(word: str, said: set[str]) -> bool:
    """True when ``word`` is said, in the plural or cut short ("transport" ~ transportation)."""
    if word in said or f"{word}s" in said:
        return True
    return any(
        len(other) >= 5 and (word.startswith(other) or other.startswith(word)) for other in said
    )


# 「一番多かった数量」: the same said before the measure.
_MOST_OR_LEAST_BEFORE = re.compile(
    r"(?:一番|最も|いちばん|もっとも)\s*(多|少な)(?:い|かった)\s*(?:の\s*)?$"
)
# "how many kilograms", "how many units": a quantity asked in a unit, in English.
_EN_HOW_MANY_UNIT = re.compile(
    r"(?<![a-z])how many (units?|kilograms?|kilos?|kgs?|tonnes?|tons?|litres?|liters?"
    r"|hours?|hrs|kilometres?|kilometers?|km|miles?|minutes?|kwh)(?![a-z])"
)
# 「媒体はいくつありますか」「キャンペーンって全部でいくつ」「受診機関の数は？」: how many
# different values of the category just named.
_JA_HOW_MANY_AFTER = re.compile(
    r"\s*(?:は|って|が)?\s*(?:全部で|全体で|合計で|いったい|ぜんぶで)?\s*"
    r"(?:いくつ|何個|何種類|何か所|何カ所|何ヶ所|何社|何人|何名|何台|の\s*数(?!値|量|字))"
)
_JA_ID_TAIL = re.compile(r"(?:id|番号|コード|no\.?)$")
_HOW_WORDS = frozenset(
    {"total", "sum", "average", "avg", "mean", "median", "count", "max", "min", "the", "and"}
)
"""Words that say how a value is aggregated, never which column holds it."""
_BY_BEFORE = re.compile(r"(?<![a-z])by\s+(?:the\s+)?$", re.IGNORECASE)
""""by" right before a category value ("paid by wire"): how, not a grouping."""


def blanks_only(clause: Clause) -> bool:
    """A clause that only says to leave the blanks out ("leave out blanks", 「空欄は除いて」):
    an instruction for the grouping of the other clauses, nothing asked for itself."""
    return not clause.mentions and vocab.BLANKS_OUT.search(clause.text) is not None


def first(*lists: list[str]) -> str | None:
    """The first item of the first non-empty list, or None."""
    return next((items[0] for items in lists if items), None)


@dataclass
class Step:
    """One thing to do: a spec (``type`` analysis or plot) or questions to ask first."""

    title: str
    spec: dict[str, Any] | None = None
    questions: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)


def measure_by_its_words(text: str, index: ColumnIndex) -> str | None:
    """The one Japanese numeric column whose English words are all said in ``text``, apart
    or in another order ("the total depreciation expense for the current period" ~
    当期償却額: current, period, depreciation; "net book value at year end" ~ 期末帳簿価額),
    else the one whose head word is said ("their total balance" ~ 債権残高); None when no
    column, or more than one alike, has them."""
    said = set(re.findall(r"[a-z]+", text))
    if not said:
        return None
    found: dict[str, int] = {}
    for name in index.names("numeric"):
        if name.isascii():
            continue
        for reading in english_readings(without_brackets(normalize(name))):
            words = [w for w in re.split(r"[\s-]+", reading) if w not in _PLAIN_WORDS]
            # two words or more, or one long word ("estimate" of 見積額) said whole
            enough = len(words) >= 2 or (len(words) == 1 and len(words[0]) >= 6)
            if enough and all(_word_said(w, said) for w in words):
                found[name] = max(found.get(name, 0), len(words))
    best = max(found.values(), default=0)
    winners = [name for name, size in found.items() if size == best]
    if not found:
        winners = [
            name
            for name in index.names("numeric")
            if not name.isascii()
            and any(
                # each word of the head said ("number of units" is "units", not "number")
                (words := [w for w in re.split(r"[\s-]+", head) if w not in _PLAIN_WORDS])
                and all(len(w) >= 6 and _word_said(w, said) for w in words)
                for head in head_readings(without_brackets(normalize(name)))
            )
        ]
    return winners[0] if len(winners) == 1 else None


def whole_of_its_parts(money: list[str]) -> str | None:
    """The money column every other one is a kind of: 料金 beside 基本料金 and 割増料金,
    ``fee_jpy`` beside ``base_fee_jpy`` and ``night_fee_jpy`` (their names end in its
    name); None unless there is exactly one and it has parts."""

    def words(name: str) -> list[str]:
        if not name.isascii():
            return list(without_brackets(normalize(name)))
        return [w for w in name_tokens(name) if w not in ("jpy", "yen", "usd", "eur")]

    def part_of(o: str, n: str) -> bool:  # 基本料金 of 料金; not 税込金額 (a version) of 金額
        extra = words(o)[: -len(words(n))]
        return (
            len(words(o)) > len(words(n))
            and words(o)[-len(words(n)) :] == words(n)
            and not _VERSION_OF_AN_AMOUNT.search(
                "".join(extra) if not o.isascii() else " ".join(extra)
            )
        )

    whole = [n for n in money if len(money) >= 2 and all(o == n or part_of(o, n) for o in money)]
    return whole[0] if len(whole) == 1 and words(whole[0]) else None


# Words that make another version of the same amount, not a part of it (税込金額 beside 金額,
# budget_cost beside cost): the amount asked is then not chosen between them.
_VERSION_OF_AN_AMOUNT = re.compile(
    r"税|見積|予算|予定|概算|外貨|換算|請求|支払|実績|前年|前期|当期|計画"
    r"|(?<![a-z])(?:tax|gross|net|estimated?|budget(?:ed)?|planned|forecast|prior|actual)(?![a-z])"
)


class StepBuilder:
    """Builds the step of one clause (analysis ops; plots in the subclass)."""

    def __init__(self, parsed: ParsedRequest, clause: Clause, dataset_id: str | None) -> None:
        self.p, self.c, self.lang, self.dataset_id = parsed, clause, parsed.lang, dataset_id
        self.index = parsed.index
        kind = self.index.kind
        self.dates = [c for c in clause.group_cols if kind(c) == "datetime"]
        self.group = [c for c in clause.group_cols if kind(c) != "datetime"]
        cols = [m.column for m in clause.mentions if m.column not in clause.group_cols]
        self.mentioned = list(dict.fromkeys(cols))
        self.numeric = [c for c in self.mentioned if kind(c) == "numeric"]
        self.categorical = [c for c in self.mentioned if kind(c) in CATEGORY_KINDS]
        self._rows_described()
        request_numeric = [m.column for m in parsed.mentions if kind(m.column) == "numeric"]
        self.inherited = [c for c in dict.fromkeys(request_numeric) if c not in clause.group_cols]
        self.aggs = vocab.aggregations(clause.text) or self._said_in_names(parsed, clause)
        self._rows_not_grouped()
        self._unguessed_measures()
        self._measures_said_not()
        self._most_or_least_of_a_measure()
        said_freq = vocab.frequency(clause.text)
        if said_freq and _RATE_PERIOD.search(clause.text) and self._measured_per_period():
            said_freq = None  # "what we pay per month" for monthly_cost: its unit, no trend
        self.freq = said_freq or ("D" if self.dates else None)
        self.intents = vocab.intents(clause.text)
        self.units_sold = self._units_sold()
        self.filters, self.borrowed = parsed.filters_for(clause)
        self._yes_no_predicates()
        self._unit_values()
        self.assumptions: list[str] = []
        if self.borrowed:
            self.assumptions.append(
                self.t(
                    f"期間「{self.borrowed}」をこの分析にも適用",
                    f"period '{self.borrowed}' applied here too",
                )
            )
        self.notes: list[str] = []  # said before the question of ``ask``
        contrasted = [m.column for m in parsed.value_mentions if not m.negated]
        self.contrast = next((c for c in contrasted if contrasted.count(c) >= 2), None)
        top = vocab.TOP_N.search(clause.text)
        self.top_n = (int(top.group(1)) or None) if top else None
        if self.top_n is None and (word := vocab.TOP_WORDS.search(clause.text)):
            said = word.group(1) or word.group(2)
            self.top_n = vocab.NUMBER_WORDS.get(said) or int(said) or None
        ranks = "ranking" in self.intents or vocab.MOST_COMMON.search(clause.text)
        if self.top_n is None and ranks and (count := vocab.RANKED_COUNT.search(clause.text)):
            said = count.group(1) or count.group(2)
            self.top_n = vocab.NUMBER_WORDS.get(said) or int(said) or None
        self.ascending = bool(vocab.ASCENDING.search(clause.text))
        said = parsed.text[clause.start : clause.end]
        if self.top_n and self.aggs == ["max"] and _RANKED_BY_THE_MOST.search(said):
            # "which users rack up the highest payments? top 5": the ranking's direction,
            # the users' totals ranked, not each one's largest single payment
            self.aggs = []

    def _rows_described(self) -> None:
        """ "the total we spent on visa cases" (Visa Type, rows named by ``Case ID``): a word
        of a category's name said before the data's word for its rows says what the rows
        are, it asks no table per visa type."""
        rows = self.index.row_nouns()
        if not rows or not self.p.text.isascii():
            return
        pattern = re.compile(rf"^\s+(?:{'|'.join(map(re.escape, rows))})s?(?![a-z])")
        described = {
            m.column
            for m in self.c.mentions
            if m.column in self.categorical
            and self.index.kind(m.column) == "categorical"  # "brand campaigns": is_brand's yes
            and m.value is None
            and normalize(m.column) != self.p.text[m.start : m.end].strip()
            and pattern.match(self.p.text[m.end :])
        }
        if described:
            self.categorical = [c for c in self.categorical if c not in described]
            self.mentioned = [c for c in self.mentioned if c not in described]

    def _unguessed_measures(self) -> None:
        """A numeric column only guessed by similarity (「前受金」 ~ 前受残高) is no measure
        beside one named by its terms (「入金された前受金の入金額」) or when rows are counted
        (「保守契約の前受、件数は？」)."""
        guessed = self.only_guessed()
        if not guessed & set(self.numeric):
            return
        named = [c for c in self.numeric if c not in guessed]
        if named or self.aggs == ["count"]:
            dropped = set(self.numeric) - set(named)
            self.numeric = named
            self.mentioned = [c for c in self.mentioned if c not in dropped]

    def _measures_said_not(self) -> None:
        """「[月額賃料]じゃなくて[支払額]の平均」, "freight_usd (not freight_jpy)": a measure
        said to be the one not meant is dropped, when another one is left."""
        said_not = {
            m.column
            for m in self.c.mentions
            if self.index.kind(m.column) == "numeric"
            and (
                vocab.NOT_THIS_AFTER.match(self.p.text[m.end :])
                or vocab.NOT_THIS_BEFORE.search(self.p.text[: m.start])
            )
        }
        kept = [c for c in self.numeric if c not in said_not]
        if said_not and kept:
            self.numeric = kept
            self.mentioned = [c for c in self.mentioned if c not in said_not]

    def _measured_per_period(self) -> bool:
        """True when a numeric column is itself an amount per period (monthly_cost_usd,
        月額賃料, annual_fee): "per month" said of it is its unit, not a monthly trend."""
        return any(_PERIOD_IN_NAME.search(normalize(name)) for name in self.index.names("numeric"))

    def _most_or_least_of_a_measure(self) -> None:
        """「人件費が最も少なかったのは」「商談件数が一番多かった出展だと何件？」: 多い / 少ない
        said right after a numeric column, with no category to rank, is its largest / smallest
        value, not the most common category (「一番多い区分」) nor a count."""
        if {"max", "min"} & set(self.aggs) or self.categorical or self.group:
            return  # 「売上が一番多い店舗は？」: the stores ranked by their total
        for mention in self.c.mentions:
            if self.index.kind(mention.column) != "numeric":
                continue
            said = _MOST_OR_LEAST_AFTER.match(self.p.text[mention.end :]) or (
                _MOST_OR_LEAST_BEFORE.search(self.p.text[: mention.start])
            )
            if said is not None:
                agg = "max" if said.group(1) == "多" else "min"
                self.aggs = [agg, *(a for a in self.aggs if a not in ("count", "sum"))]
                self.numeric = [mention.column, *(c for c in self.numeric if c != mention.column)]
                return

    def only_guessed(self) -> set[str]:
        """The columns the clause reaches only by a similar word, never by their own."""
        said = {m.column for m in self.c.mentions if not m.guessed}
        return {m.column for m in self.c.mentions if m.guessed} - said

    def _yes_no_predicates(self) -> None:
        """A yes/no column named with no value and no grouping ("how many bookings were
        cancelled", "the most cancellations") holds the rows where it is yes: a condition,
        not a category to group by. A share or a missing-values check of it stays as is."""
        self.predicates: list[str] = []  # "cancellations": the rows counted
        if {"share", "missingness", "duplicate", "summary", "overview"} & set(self.intents):
            return
        for column in list(self.categorical):
            yes = self.index.yes_value(column)
            if yes is None or any(f["col"] == column for f in self.filters):
                continue
            if not self.flag_named(column):
                # 「返金」 of 一部返金, "purchase" of is_spot_purchase: the word names the rows,
                # neither a condition nor a category to group by
                self.categorical = [c for c in self.categorical if c != column]
                self.mentioned = [c for c in self.mentioned if c != column]
                continue
            self.filters = [*self.filters, {"col": column, "op": "==", "value": yes}]
            self.predicates.append(column)
            self.categorical = [c for c in self.categorical if c != column]
            self.mentioned = [c for c in self.mentioned if c != column]

    def flag_named(self, column: str) -> bool:
        """True when a yes/no column is named by its own word, not only by a word its
        name shares with the rows (一部返金 by 「一部返金」, not by 「返金」; is_spot_purchase
        by "spot purchases", not by "purchase")."""
        said = [
            normalize(self.p.text[m.start : m.end]) for m in self.c.mentions if m.column == column
        ]
        name, text = normalize(column), self.p.text[self.c.start : self.c.end]
        if name.isascii():  # its first word said somewhere in the clause (or its Japanese)
            words = [w for w in name_tokens(column) if w not in ("is", "has", "flag", "yn")]
            return not words or words[0][:4] in text or any(not p.isascii() for p in said)
        return any(
            part.isascii()  # "reversed" for 戻入済: its reading in English
            or name.startswith(part)
            or part.startswith(name)
            or name[:2] in text
            for part in said
        )

    def _unit_values(self) -> None:
        """A category value that is the unit of a numeric column's name ("JPY" of
        ``currency`` and ``amount_jpy``), said where an amount is asked ("the average
        invoice in JPY", "Total JPY billed", "how much (JPY)"), names the column the
        amount is read in, not a condition; counted ("how many invoices are in USD") it
        stays a condition."""
        if self.numeric or not (
            {"sum", "mean", "median", "min", "max"} & set(self.aggs)
            or _HOW_MUCH.search(self.c.text)
        ):
            return
        for condition in self.filters:
            if condition["op"] != "==" or not isinstance(condition["value"], str):
                continue
            column = self.unit_column(condition["value"])
            if column is not None:
                self.filters = [f for f in self.filters if f is not condition]
                self.numeric, self.mentioned = [column], [*self.mentioned, column]
                return

    def unit_column(self, value: str) -> str | None:
        """The one numeric column whose name ends in the unit ``value`` says ("jpy" ~
        ``amount_jpy``, "usd" ~ ``cost_usd``), or None."""
        said = normalize(value)
        owners = [
            name
            for name in self.index.names("numeric")
            if name.isascii()
            and (words := name_tokens(name))
            and len(words) > 1
            and (said == words[-1] or said in UNIT_WORDS.get(words[-1], ()))
        ]
        return owners[0] if len(owners) == 1 else None

    def _units_sold(self) -> str | None:
        """The quantity column when the clause counts units sold and names no measure
        ("tickets sold per venue", "which channel sells the most tickets"): the units are
        the quantity column's sum, not the rows. The category word said as the thing sold
        ("tickets" of ``ticket_type``) is what is counted, so it groups nothing."""
        quantity = self.index.concept_column("quantity")
        said = self.p.text[self.c.start : self.c.end]  # "sold" may name a column sold_at
        if quantity is None or self.numeric or not _UNITS_SOLD.search(said):
            return None
        sold = {
            m.column
            for m in self.c.mentions
            if _SOLD_AFTER.match(self.p.text[m.end :])
            or _SELLS_BEFORE.search(self.p.text[: m.start])
            or _UNITS_SOLD.fullmatch(self.p.text[m.start : m.end])
        }
        if sold and (set(self.mentioned) | set(self.group)) - sold:
            self.group = [c for c in self.group if c not in sold]
            self.categorical = [c for c in self.categorical if c not in sold]
            self.mentioned = [c for c in self.mentioned if c not in sold]
        self.numeric = [quantity]
        self.aggs = [a for a in self.aggs if a != "count"]
        return quantity

    @staticmethod
    def _said_in_names(parsed: ParsedRequest, clause: Clause) -> list[str]:
        """The aggregation the user said as a word of a numeric column's name, when the
        clause says none besides ("the average daily rate by room type" with a column
        ``avgDailyRate``: the mean of it per room type)."""
        said = [
            agg
            for m in clause.mentions
            if parsed.index.kind(m.column) == "numeric"
            for agg in vocab.aggregations(parsed.text[m.start : m.end])
            if agg in (*vocab.VALUE_AGGS, "sum")
        ]
        return list(dict.fromkeys(said))

    def t(self, ja: str, en: str) -> str:
        """The text in the request's language."""
        return ja if self.lang == "ja" else en

    def name_agg(self, agg: str) -> str:
        """An aggregation's name in the request's language."""
        return (_AGG_JA if self.lang == "ja" else _AGG_EN)[agg]

    def candidates(self, kinds: tuple[str, ...]) -> str:
        """Columns of these kinds to offer in a question (ID-like text columns left out)."""
        rows = int(self.p.rows or 0)
        names = [
            c.name
            for c in self.index.columns
            if c.kind in kinds and not (c.kind == "text" and rows and c.unique >= 0.9 * rows)
        ]
        return ", ".join(names[:12])

    def ask(self, title: str, ja: str, en: str, kinds: tuple[str, ...] = ("numeric",)) -> Step:
        """A step that asks a question, listing candidate columns."""
        listed = self.candidates(kinds)
        suffix = self.t(f"（候補: {listed}）", f" (candidates: {listed})") if listed else ""
        return Step(title, questions=["".join(self.notes) + self.t(ja, en) + suffix])

    def vague_reference(self) -> Step | None:
        """A question when the request points at one value of a category without naming it
        ("show me that vendor's numbers", 「その取引先の合計」): which one is asked, with
        examples of its values, never all of them summarised."""
        held = {f["col"] for f in self.filters}
        for mention in self.c.mentions:
            info = self.index.by_name.get(mention.column)
            if (
                info is None
                or info.kind not in CATEGORY_KINDS
                or info.name in held
                or not _POINTING_BEFORE.search(self.p.text[: mention.start])
            ):
                continue
            examples = ", ".join(info.examples[:5])
            return Step(
                self.t("対象の確認", "Which one"),
                questions=[
                    self.t(
                        f"どの{info.name}ですか？（例: {examples}）",
                        f"Which {info.name}? (e.g. {examples})",
                    )
                ],
            )
        return None

    def scoped_filters(self, spec: dict[str, Any]) -> list[dict[str, Any]]:
        """The request's filters minus ``==`` on a column this step groups by when the
        value was named in another clause ("top products in Kanto, and sales by region")."""
        grouped = set(spec.get("group_cols") or [])
        grouped |= {spec.get(key) for key in ("group_col", "hue", "by")} - {None}
        if spec.get("kind") in ("bar", "box"):
            grouped.add(spec.get("x"))
        here = {m.column for m in self.p.value_mentions if self.c.start <= m.start < self.c.end}
        return [
            f
            for f in self.filters
            if not (f["op"] == "==" and f["col"] in grouped and f["col"] not in here)
        ]

    def step(self, title: str, spec: dict[str, Any]) -> Step:
        """A step for the spec (with filters, dataset_id and a plot title), validated."""
        kind = "plot" if "kind" in spec else "analysis"
        filters = [typed_boolean(f, self.index.kind) for f in self.scoped_filters(spec)]
        full: dict[str, Any] = {"type": kind, **spec, "filters": filters}
        if self.dataset_id:
            full["dataset_id"] = self.dataset_id
        if kind == "plot":
            full["title"] = title
        try:
            model = (parse_plot_spec if kind == "plot" else parse_analysis_spec)(full)
            check_columns(model, self.index.by_name)
        except SpecError as error:  # a rule bug must not reach act: ask instead
            return Step(
                title,
                questions=[self.t("指示を確認させてください: ", "Please check: ") + error.message],
            )
        return Step(title, spec=full, assumptions=list(self.assumptions))

    def metric(self, purpose_ja: str, purpose_en: str) -> str | None:
        """The numeric column asked about: named here, named elsewhere, or the only one.

        When the request names a measure whose column is not numeric (「金額」 for a
        text column 金額(税込)), None: another numeric column is never swapped in.
        """
        if self.numeric or self.inherited:
            return (self.numeric or self.inherited)[0]
        if money := self.money_asked():
            return money[0]
        if named := self.named_measure():
            self.notes.append(
                self.t(
                    f"「{named}」は数値として読み取れない列です。",
                    f"{named} is not a numeric column. ",
                )
            )
            return None
        only = self.index.names("numeric")
        if len(only) == 1:
            self.assumptions.append(
                self.t(
                    f"{purpose_ja}は唯一の数値列「{only[0]}」と仮定",
                    f"{purpose_en}: assumed the only numeric column {only[0]}",
                )
            )
            return only[0]
        return None

    def named_measure(self) -> str | None:
        """A non-numeric column named in the request as a measure (an amount, sales,
        quantity or price: by concept or by a name with 金額/売上/額/円/...), not grouped by."""
        grouped = set(self.c.group_cols)
        for mention in self.p.mentions:
            info = self.index.by_name.get(mention.column)
            if info is None or info.kind == "numeric" or info.name in grouped:
                continue
            if info.concept in vocab.MEASURE_CONCEPTS or vocab.MEASURE_NAME.search(info.name):
                return info.name
        return None

    def category(self) -> str | None:
        """The category asked about: grouped by, named, or contrasted ("法人と個人で比較")."""
        return first(self.group, self.categorical, [self.contrast] if self.contrast else [])

    def paired_aggs(self, numeric: list[str], aggs: list[str]) -> dict[str, list[str]]:
        """Each aggregation word with its nearest column ("total sales and average quantity").

        Only when several columns and several aggregations are named; otherwise every
        aggregation applies to every column.
        """
        if len(numeric) < 2 or len(aggs) < 2:
            return {}
        spans = [s for s in vocab.aggregation_spans(self.c.text) if s[2] in aggs]
        places = [
            (m.start - self.c.start, m.end - self.c.start, m.column)
            for m in self.c.mentions
            if m.column in numeric
        ]
        paired: dict[str, list[str]] = {}
        for start, end, agg in spans:
            # gap to the column; Japanese names the column first (売上の合計), English after
            column = min(
                (
                    a - end + (0.5 * (self.lang == "ja"))
                    if a >= end
                    else start - b + (0.5 * (self.lang != "ja")),
                    col,
                )
                for a, b, col in places
            )[1]
            if agg not in paired.setdefault(column, []):
                paired[column].append(agg)
        return paired

    # --- analysis ops -------------------------------------------------------------------
    def overview(self) -> Step:
        """The dataset overview; the columns named by name (「列1 の中身」) summarised; the
        count of the rows (kept by a condition, if one is said) when how many rows is asked
        (「…以上の明細って何行ある？」「支給データって全部で何行？」)."""
        if _ROWS_ASKED.search(self.c.text) and (
            self.filters or not re.search(r"列|カラム|項目|\bcolumns?\b", self.c.text, re.I)
        ):  # 「支給データって全部で何行ある？」: one count (with the columns: the overview)
            return self.total()
        named = [
            m.column
            for m in self.c.mentions
            if self.p.text[m.start : m.end].strip("「」\"'` ").lower() == m.column.lower()
        ]
        if named:  # 「列1 の中身を確認したい」: the columns named by name, not the whole table
            return self.step(
                self.t("列の要約統計", "Column summary"),
                {"op": "column_summary", "columns": list(dict.fromkeys(named))},
            )
        return self.step(self.t("データの概要", "Dataset overview"), {"op": "dataset_overview"})

    def missingness(self) -> Step | None:
        # "skip rows where the branch is blank", 「空欄は除外で」: blanks said only to be left
        # out are a condition of another question, never a request for this check
        text = self.c.text
        out = [(m.start(), m.end()) for m in vocab.BLANKS_OUT.finditer(text)]
        words = list(vocab.INTENT_RX["missingness"].finditer(text))
        if words and all(
            LEFT_OUT_BEFORE.search(text[: w.start()]) or any(a <= w.start() < b for a, b in out)
            for w in words
        ):
            return None
        if any(f["op"] == "not_null" for f in self.filters) or (
            self.group and any(f["op"] == "is_null" for f in self.filters)
        ):
            return None  # 「取引先ごとの件数（空欄は除いて）」: blanks are a condition here
        blanks = [f["col"] for f in self.filters if f["op"] == "is_null"]
        cols = self.checked_columns() or blanks or None
        # 「滞納日数が空欄になっている件数」: the column checked, not a filter on it
        self.filters = [
            f for f in self.filters if not (f["op"] == "is_null" and f["col"] in blanks)
        ]
        return self.step(
            self.t("欠損値の確認", "Missing values"), {"op": "missingness", "columns": cols}
        )

    def same_identifiers(self) -> list[str]:
        """The identifier columns whose row word is said after "same"/「同じ」 ("the same
        meter and date" with ``meter_id``: readings of one meter)."""
        # the whole request: 「同じ駐車場の同じ区画で、同じ月に二重に」 spans its clauses
        said = " ".join(m.group(1) or m.group(2) for m in _SAME.finditer(self.p.text))
        rows = set(self.index.row_nouns())  # 「同じ明細が二重に」: the whole row, no key
        found = []
        for info in self.index.columns:
            if info.name.isascii():
                words = name_tokens(info.name)
                word = words[0] if len(words) >= 2 and words[-1] in _KEY_WORDS else ""
                # 「同じ社員」 for employee_id: the word or its Japanese
                said_as = [
                    re.escape(word),
                    *map(re.escape, japanese_readings([word]) if word else []),
                ]
                pattern = rf"(?<![a-z])(?:{'|'.join(said_as)})s?(?![a-z])"
            else:
                word = _JA_KEY_TAIL.sub("", normalize(info.name))
                word = word if word != normalize(info.name) else ""
                pattern = rf"(?<![\u3400-\u9fff]){re.escape(word)}(?![\u3400-\u9fff\u30a0-\u30ff])"
            if len(word) >= 2 and word not in rows and re.search(pattern, said):
                found.append(info.name)
        # "same contractor_id and invoice_month": the names said whole, not others sharing
        # their first word (contractor_name)
        whole = [name for name in found if normalize(name) in said]
        return whole or found

    def same_period(self) -> list[str]:
        """The one date column, when the same month or day is said (「同じ月に二重に」)."""
        said = " ".join(m.group(1) or m.group(2) for m in _SAME.finditer(self.p.text))
        dates = self.index.names("datetime")
        if not _SAME_PERIOD.search(said):
            return []
        if len(dates) > 1 and re.search(r"(?:^|\s)月|(?<![a-z])month", said):
            # 「同じ月に」 beside 拠出月 and 入会日: the one date column that is a month
            dates = [d for d in dates if re.search(r"月$|(?<![a-z])month(?![a-z])", d.lower())]
        return dates if len(dates) == 1 else []

    def checked_columns(self) -> list[str]:
        """The columns a missing-values check names: not one named only by the word for
        the form of the answer (「割合」 of 保留割合, "percentage" of ``discountPct``:
        「満足度の欠損はどれくらいの割合？」 asks the share of 満足度's blanks)."""
        share = vocab.INTENT_RX["share"]
        kept = [
            m.column
            for m in self.c.mentions
            if m.column in self.mentioned
            and not share.fullmatch(self.p.text[m.start : m.end].strip())
        ]
        return list(dict.fromkeys(kept))

    def duplicate(self) -> Step:
        """The duplicate check on the key columns named: the columns said (「請求番号の
        重複」), the things said the same ("same meter and date": ``meter_id``, the data's
        word for its rows, names its identifier), never a column word that only qualifies
        the rows ("refuel records", 「入金データ」)."""
        keys = [
            m
            for m in self.c.mentions
            if (
                m.column in self.mentioned or m.column in self.c.group_cols
            )  # 「AとBの組み合わせで」
            and not _ROWS_AFTER.match(self.p.text[m.end :])
        ]
        if any(not m.guessed for m in keys):  # 「文書番号がダブってないか確認」: 確認 is a verb
            keys = [m for m in keys if not m.guessed]
        keys = [  # "Check whether any stay_id …": check of check_in is the verb
            m for m in keys if not (m.start == 0 and _VERB_OPENING.match(self.p.text[m.end :]))
        ]
        said = self.same_identifiers() + [m.column for m in keys] + self.same_period()
        cols = list(dict.fromkeys(said)) or None
        return self.step(
            self.t("重複の確認", "Duplicate check"), {"op": "duplicate_check", "subset": cols}
        )

    def summary(self) -> Step:
        if self.group and self.numeric:
            stats = ["count", "mean", "std", "min", "max"]
            return self.step(
                self.t(
                    f"{self.group[0]}別の{self.numeric[0]}の統計量",
                    f"Statistics of {self.numeric[0]} by {self.group[0]}",
                ),
                {
                    "op": "groupby_agg",
                    "group_cols": self.group,
                    "metrics": {c: stats for c in self.numeric},
                },
            )
        cols = self.mentioned or None
        return self.step(
            self.t("列の要約統計", "Column summary"), {"op": "column_summary", "columns": cols}
        )

    def correlation(self) -> Step:
        if len(self.index.names("numeric")) < 2:
            return Step(
                self.t("相関", "Correlation"),
                questions=[
                    self.t(
                        "相関には数値列が2つ以上必要ですが、このデータには足りません。別の分析を指定してください。",
                        "Correlation needs two or more numeric columns; this data has fewer.",
                    )
                ],
            )
        method = "spearman" if vocab.SPEARMAN.search(self.c.text) else "pearson"
        cols = self.numeric or None
        return self.step(
            self.t("相関行列", "Correlation matrix"),
            {"op": "correlation_matrix", "columns": cols, "method": method},
        )

    def share(self) -> Step | None:
        """The share of each value of a category (of row counts or of an amount); the share
        of blank cells of a column when the clause states only a blank condition and no
        category (「入金日が入っていない行はどのくらいの割合？」: its missing-values check)."""
        group = self.category()
        if group is None and any(f["op"] == "is_null" for f in self.filters):
            return self.missingness()
        if group is None and self.p.value_mentions:
            group = self.p.value_mentions[0].column  # "share of corporate customers"
            self.filters = [f for f in self.filters if f["col"] != group]
        if group is None:
            return self.ask(
                self.t("構成比", "Share"),
                "どの区分の構成比を見ますか？",
                "Share of which category?",
                CATEGORY_KINDS,
            )
        value = first(self.numeric, self.inherited)
        pareto = any(w in self.c.text for w in ("パレート", "abc", "pareto"))
        if value is None and pareto and (sales := self.index.concept_column("sales")):
            value = sales
            self.assumptions.append(
                self.t(
                    f"パレート分析の指標は「{sales}」と仮定", f"Pareto analysis assumed on {sales}"
                )
            )
        elif value is None and (money := self.money_asked()):
            value = money[0]  # "what share of total giving": the amount's shares
        elif value is None:
            self.assumptions.append(
                self.t("行数（件数）ベースの構成比と仮定", "share of row counts assumed")
            )
        title = self.t(
            f"{group}別の{value or '件数'}構成比", f"Share of {value or 'rows'} by {group}"
        )
        return self.step(
            title,
            {"op": "share_ratio", "group_col": group, "value_col": value, "top_k": self.top_n},
        )

    def most_common(self, group: str) -> Step:
        """The values of ``group`` ranked by how many rows hold each: the share of row
        counts, the k most common ("the three most common") or the one ("the most
        common", 「最も多い」) when no number is said."""
        top = self.top_n
        if top is None and vocab.MOST_COMMON_ONE.search(self.c.text):
            top = 1
        title = self.t(f"{group}別の件数（多い順）", f"Most common {group} values")
        return self.step(
            title, {"op": "share_ratio", "group_col": group, "value_col": None, "top_k": top}
        )

    def compared_measure(self) -> list[str]:
        """The one numeric column the conditions compare, when nothing else is named to
        total: 「金額が5万円以上のものを部署別に合計」 totals 金額 (filter and value both)."""
        compared = {
            f["col"]
            for f in self.filters
            if f["op"] in (">", ">=", "<", "<=") and self.index.kind(f["col"]) == "numeric"
        }
        return list(compared) if len(compared) == 1 else []

    def modifies_a_measure(self, column: str) -> bool:
        """True when the category word is glued to a numeric word after it ("ticket price",
        「品目単価」): it names the measure, not a grouping."""
        starts = {m.start for m in self.c.mentions if self.index.kind(m.column) == "numeric"}
        return any(
            m.column == column
            and (m.end in starts or (m.end + 1 in starts and self.p.text[m.end] == " "))
            for m in self.c.mentions
        )

    def identifier(self, column: str) -> bool:
        """A column naming each row (請求番号, customer_code: a text column of nearly as
        many values as the data has rows, or one named like an identifier): no grouping
        unless one is said ("customers rated D" are rows, not a table per customer)."""
        info = self.index.by_name[column]
        most = max((c.unique for c in self.index.columns), default=0)
        named_so = bool(_JA_ID_TAIL.search(normalize(column))) or (
            column.isascii() and name_tokens(column)[-1:] in (["id"], ["code"], ["no"], ["number"])
        )
        return info.kind == "text" and (named_so or (most > 0 and info.unique >= 0.5 * most))

    def counted_in_its_unit(self) -> str | None:
        """「稼働時間って全部で何時間？」「鉄くずは何kg売った？」: a quantity asked in the unit a
        numeric column is measured in is that column's total, not a count of rows (the
        column named, else the one numeric column whose name has the unit)."""
        text = self.p.text[self.c.start : self.c.end]
        said = _HOW_MANY_UNIT.search(text)
        if said is None:
            return self._counted_in_english_unit(text)
        unit = {"キロ": "kg", "キログラム": "kg", "トン": "t", "リットル": "l"}.get(
            said.group(1), said.group(1)
        )
        holds = [  # measured in it: 重量(kg), 稼働時間 (not 単価(円/kg))
            c
            for c in self.index.names("numeric")
            # 重量(kg), 稼働時間, 紛失枚数 (a count of that unit: 枚数 of 何枚)
            if re.search(rf"(?:[(_]{re.escape(unit)}\)?|{re.escape(unit)}数?)$", normalize(c))
        ]
        named = [c for c in self.numeric if c in holds]
        if named:
            return named[0]
        return holds[0] if len(holds) == 1 and unit not in ("人", "名", "件") else None

    def _counted_in_english_unit(self, text: str) -> str | None:
        """ "how many kilograms of PP pellets", "how many hours in total": the one numeric
        column whose name ends in that unit (``weight_kg``, ``hours``); "how many units"
        is the quantity column."""
        said = _EN_HOW_MANY_UNIT.search(text)
        if said is None:
            return None
        word = said.group(1)
        if word in ("unit", "units"):
            quantity = self.index.concept_column("quantity")
            return quantity if quantity in self.index.names("numeric") else None
        units = {
            unit
            for unit, words in UNIT_WORDS.items()
            if word in (unit, *words) or word.rstrip("s") in (unit, *words)
        }
        holds = [
            name
            for name in self.index.names("numeric")
            if name.isascii()
            and (words := name_tokens(name))
            and words[-1] in units
            and words[-2:-1] != ["per"]  # unit_price_per_kg is no weight
        ]
        named = [c for c in self.numeric if c in holds]
        return named[0] if named else (holds[0] if len(holds) == 1 else None)

    def distinct_asked(self) -> list[str]:
        """``["nunique"]`` when the different values of a column are counted: the people of
        「…もらってる人って何人？」 by their identifier, 「申請者は全部で何人？」, 「案件番号ベース
        で何件」."""
        if person := self.people_counted():
            self.categorical = [person, *[c for c in self.categorical if c != person]]
            self.numeric = []  # 「手当をもらってる人」: the allowance only says which people
            return ["nunique"]
        if self.categorical and (self.asks_distinct() or self.key_said()):
            return ["nunique"]
        if named := self.counted_by_its_name():
            self.categorical = [named]  # 「何拠点で作業してる？」: the 拠点 column's values
            return ["nunique"]
        return []

    def counted_by_its_name(self) -> str | None:
        """The category column whose whole name is the counter of 「何〇〇」 (「何拠点」 of a
        column 拠点, 「何部署」 of 部署): how many different values it holds."""
        for m in _HOW_MANY_OF.finditer(self.p.text[self.c.start : self.c.end]):
            for name in self.index.names(*CATEGORY_KINDS):
                if normalize(name) == m.group(1):
                    return name
        return None

    def people_counted(self) -> str | None:
        """「税理士の手当をもらってる人って何人？」 with no column of people named: the people
        are counted by the one column that identifies them (社員番号, 従業員ID), not by rows
        (one person may have several)."""
        if not _PEOPLE_ASKED.search(self.c.text):
            return None
        if self.categorical:  # a column of people named (「申請者は何人」) is counted itself
            named = [c for c in self.categorical if _PERSON_NAME.search(normalize(c))]
            return named[0] if named else None
        people = [
            c.name
            for c in self.index.columns
            if c.kind in ("text", "categorical") and _PERSON_ID.search(normalize(c.name))
        ]
        return people[0] if len(people) == 1 else None

    def key_said(self) -> bool:
        """A column said to be what is counted by (「案件番号ベースで」「社員番号で数えて」)."""
        return any(
            m.column in self.categorical
            and re.match(r"\s*(?:ベースで|ベース|で数え|単位で数え)", self.p.text[m.end :])
            for m in self.c.mentions
        )

    def said_as_all(self, column: str) -> bool:
        """The category is said as all of its values (「全拠点」「すべての部署」, "all
        departments"), not as a grouping."""
        return any(
            m.column == column
            and _ALL_BEFORE.search(self.p.text[: m.start])
            and not _PER_GROUP.match(self.p.text[m.end :])
            for m in self.c.mentions
        )

    def asks_distinct(self) -> bool:
        """True when the clause asks how many different values a category has: said so
        (``_DISTINCT``: 「何社」, "how many different"), or "how many" said right before a
        category column that is not the data's word for its rows ("how many vendors did
        we get invoices from" with ``vendor_name``: vendors, not invoices), or a category
        followed by a count word (「媒体はいくつ」「受診機関の数は？」)."""
        if _DISTINCT.search(self.c.text):
            return True
        nouns = self.index.row_nouns()
        return any(
            m.column in self.categorical
            and (
                (
                    _HOW_MANY_BEFORE.search(self.p.text[: m.start])
                    and not _ROWS_AFTER.match(self.p.text[m.end :])
                )
                or (
                    _JA_HOW_MANY_AFTER.match(self.p.text[m.end :])
                    and normalize(self.p.text[m.start : m.end]) not in nouns
                )
            )
            for m in self.c.mentions
        )

    def qualified_by_value(self, column: str) -> bool:
        """True when the category word comes right after a value of another column
        ("billed by EMEA vendors", 「本社社員」): the value says which
        of them, the rows of one kind, not a grouping by the column."""
        return any(
            m.column == column
            and any(
                v.column != column
                and v.end <= m.start
                and not self.p.text[v.end : m.start].strip()
                and not v.negated
                for v in self.p.value_mentions
            )
            for m in self.c.mentions
        )

    def _row_noun_pattern(self) -> str | None:
        """The data's English words for its rows, as a pattern of whole words (a Japanese
        one, 「契約」 of 契約番号, is inside too many other words: 「契約している」)."""
        words = [w for w in self.index.row_nouns() if w.isascii()]
        if not words:
            return None
        return "|".join(rf"(?<![a-z]){re.escape(w)}(?:e?s)?(?![a-z])" for w in words)

    def per_group_said(self) -> bool:
        """A grouping word said (``_PER_GROUP``), not "per <a row of the data>": "median
        amount per transfer" on a log with ``transfer_id`` is an average over the rows."""
        if self.per_row:  # the grouping said was by a column distinct on every row
            return False
        rows = self._row_noun_pattern()
        text = self.c.text
        if rows:
            text = re.sub(rf"(?<![a-z])(?:per|each|by)\s+(?:{rows})", " ", text)
        for value in self.p.value_mentions:  # "paid by wire": a value says how, not a group
            at = value.start - self.c.start
            if 0 <= at <= len(text) and (by := _BY_BEFORE.search(text[:at])):
                text = text[: by.start()] + " " * (at - by.start()) + text[at:]
        return bool(_PER_GROUP.search(text))

    def counts_rows(self) -> bool:
        """The clause counts the rows: it names them by a word for rows in general
        (``vocab.ROW_NOUNS``: 注文, "orders") or by the data's own word for its rows
        ("the most invoices" on a table with ``invoice_no``), or as the yes of a yes/no
        column read as a condition ("the most cancellations")."""
        if vocab.ROW_NOUNS.search(self.c.text) or self.predicates:
            return True
        rows = self._row_noun_pattern()
        return bool(rows and re.search(rows, self.c.text))

    def extreme_date(self, aggs: list[str]) -> list[str]:
        """The date column named when the clause asks only its latest or earliest value
        (「納期で一番遅いのはいつ？」, "the earliest order date"): max/min of a date."""
        if not aggs or not set(aggs) <= {"max", "min"}:
            return []
        dates = [c for c in self.mentioned if self.index.kind(c) == "datetime"]
        return dates[:1]

    def measure_in_said_unit(self) -> list[str]:
        """The one numeric column measured in the unit the clause asks its figure in ("the
        average assignment length in months" ~ 期間(月), "the longest activity, in hours" ~
        活動時間, "term in months" ~ term_months); none when no column, or more than one,
        carries that unit."""
        said = _UNIT_SAID.search(self.c.text)
        if said is None:
            return []
        word = said.group(1) or said.group(2)
        unit = _UNIT_OF_WORD.get(word) or word.rstrip("s")
        if unit not in _UNIT_ENDINGS:
            return []
        english, japanese = _UNIT_ENDINGS[unit]
        holds = [
            name
            for name in self.index.names("numeric")
            if (name.isascii() and name_tokens(name)[-1:] and name_tokens(name)[-1] in english)
            or (not name.isascii() and re.search(rf"(?:{japanese})$", normalize(name)))
        ]
        if len(holds) != 1:
            return []
        self.assumptions.append(
            self.t(f"集計する列は「{holds[0]}」と仮定", f"measure column assumed: {holds[0]}")
        )
        return holds

    def money_asked(self) -> list[str]:
        """The data's amount column when the clause asks an amount of money and names no
        measure: 「交際費、合計でいくら使ってる？」「…を合わせるといくら？」, "how much did we
        spend", a word for money that names no column (``_MONEY_NOUN``: 「交通費の総額」,
        "total giving") or an average, median, largest or smallest of the rows themselves
        ("the average gift" on a ledger of gifts). The sales/amount column, else the one
        numeric column a word of the request belongs to ("order value" ~ ``orderTotal``,
        "pipeline value" ~ ``dealValue``), else the only numeric column named like money."""
        done = verb_column(self.p.text[self.c.start : self.c.end], self.index.names("numeric"))
        if not self.numeric and done:  # 「2024年に貸し付けた総額」「入ってきた金額」
            return [done]  # the amount of what was done
        if not self.numeric and (spread := self.measure_by_its_words()):
            self.assumptions.append(
                self.t(f"集計する列は「{spread}」と仮定", f"measure column assumed: {spread}")
            )
            return [spread]
        if self.numeric or not (
            _MONEY_ASKED.search(self.c.text)
            or any(
                not self.amount_word_withheld(m.group(0))
                for m in _MONEY_NOUN.finditer(self.values_said())
            )
            or (set(self.aggs) & set(_PER_ROW_AGGS) and self.counts_rows())
        ):
            return []
        if self.filled_rivals() and any(
            self.amount_word_withheld(m.group(0)) for m in _MONEY_NOUN.finditer(self.values_said())
        ):
            return []  # 「金額の合計っていくら？」 beside 利用金額 and 請求金額: which one is asked
        names = self.index.names("numeric")
        sales = self.index.amount_column(self.p.value_mentions)
        sales = sales if sales in names else self.numeric_sharing_a_word()
        found = money_column(names, lambda n: n in names, None, sales)
        if found is None:  # "what did we spend": of several money columns, the one of totals
            totals = [n for n in names if money_named(n) and TOTAL_NAME.search(normalize(n))]
            found = totals[0] if len(totals) == 1 else None
        if found is None:  # 料金 beside 基本料金 and 割増料金: the whole, the others its parts
            found = whole_of_its_parts([n for n in names if money_named(n)])
        if found is None:
            return []
        self.assumptions.append(
            self.t(f"金額の列は「{found}」と仮定", f"amount column assumed: {found}")
        )
        return [found]

    def measure_by_its_words(self) -> str | None:
        """The one Japanese numeric column the clause names by its English words
        (``measure_by_its_words``)."""
        return measure_by_its_words(self.p.text[self.c.start : self.c.end], self.index)

    def filled_rivals(self) -> bool:
        """Another column named like money is as filled in as the data's amount (請求金額
        beside 利用金額), not mostly blank (外貨金額 beside 利用金額)."""
        sales = self.index.concept_column("sales")
        if sales is None:
            return False
        rows = max((c.unique for c in self.index.columns), default=0) or 1
        blanks = self.index.by_name[sales].missing
        return any(
            c.name != sales
            and c.kind == "numeric"
            and money_named(c.name)
            and abs(c.missing - blanks) <= 0.1 * rows
            for c in self.index.columns
        )

    def values_said(self) -> str:
        """The clause with the column names blanked out but its category values as said:
        a value may be a word for money (「会議費の合計」: 会議費 of 勘定科目 is an expense)."""
        chars = list(self.p.text[self.c.start : self.c.end])
        for m in self.c.mentions:
            a, b = m.start - self.c.start, m.end - self.c.start
            chars[max(a, 0) : b] = "_" * (b - max(a, 0))
        return "".join(chars)

    def amount_word_withheld(self, word: str) -> bool:
        """True when ``word`` is a general word for the amount (「金額」, "amount") that names
        no column because several numeric columns are named like money and none is the
        amount by its name (月額リース料, 総支払額, 残債額): which one is meant is asked."""
        sales = self.index.concept_column("sales")
        return (
            normalize(word) in SYNONYMS["sales"]
            and sales is not None
            and sales in self.index.contained
            and not self.index.synonyms_name(self.index.by_name[sales])
        )

    def numeric_sharing_a_word(self) -> str | None:
        """The one numeric column with an English name of which a word of the clause is a
        word ("order value" ~ ``orderTotal``; "value" ~ ``dealValue``), aggregation words
        aside ("total" says how, not what)."""
        said = set(re.findall(r"[a-z]{3,}", self.c.text)) - _HOW_WORDS
        owners = [
            name
            for name in self.index.names("numeric")
            if name.isascii() and said & set(name_tokens(name))
        ]
        return owners[0] if len(owners) == 1 else None

    def asks_one_row_count(self) -> bool:
        """「…は何件？」「何行ある？」: the question is how many rows, one number, unless the
        clause groups, ranks or asks which/each (「部署ごとに何件」「どの部署が何件」)."""
        return bool(
            _ROWS_ASKED.search(self.c.text)
            and not self.per_group_said()
            and not _EACH_OR_WHICH.search(self.c.text)
            and not self.ranks_beyond_extremes()
            and self.top_n is None
        )

    def blanks_left_out(self) -> bool:
        """Blanks said to be left out, in this clause or in one of their own that names no
        column ("Which region has the most invoices? leave out blanks")."""
        return vocab.BLANKS_OUT.search(self.c.text) is not None or any(
            blanks_only(clause) for clause in self.p.clauses if clause is not self.c
        )

    def asks_for_the_category(self, column: str) -> bool:
        """「請求額が最も大きい取引先は？」: the question ends on the category, so the answer is
        which one (a ranking), not the largest amount alone (「…品目の単価は？」 asks the
        amount)."""
        named = [m for m in self.c.mentions if m.value is None]
        if not named:
            return False
        last = max(named, key=lambda m: m.end)
        return last.column == column and bool(
            _ASKED_HEAD.fullmatch(self.c.text[last.end - self.c.start :])
        )

    def ranks_beyond_extremes(self) -> bool:
        """True when the clause ranks with a word that is not its maximum or minimum: in
        「単価がいちばん高い品目の単価は？」 or "lowest ticket price at …" the superlative is the
        aggregation (max, min), one number; 「上位」「ランキング」"rank" rank groups."""
        if "ranking" not in self.intents:
            return False
        text = self.c.text
        for start, end, agg in vocab.aggregation_spans(text):
            if agg in ("max", "min"):
                text = text[:start] + " " * (end - start) + text[end:]
        return bool(vocab.INTENT_RX["ranking"].search(text))

    def grouping(self) -> list[str]:
        """The columns to group by: said, else the category named. Blanks said to be left
        out become a condition on the first ("leave out blanks"); a column held to one
        value with no group word groups nothing (「鈴木さん担当の残高合計」)."""
        # a column only guessed by similarity (「支給分」 ~ 支給区分) is no grouping unless said so
        guessed = self.only_guessed()
        said_per = (
            self.per_group_said()
            or vocab.MOST_COMMON.search(self.c.text)
            or _PER_GROUP.search(self.p.text[self.c.start : self.c.end])  # 「講座別」 read whole
        )
        named = [
            c
            for c in self.categorical
            if (c not in guessed or said_per) and (said_per or not self.identifier(c))
        ]
        group = self.group or named[:1] or ([self.contrast] if self.contrast else [])
        if _CROSS_TAB.search(self.c.text) and len(group) < 2:
            # 「部門×勘定科目でクロス集計」: the categories named are both axes
            group = list(dict.fromkeys(group + self.categorical))[:2]
        if not self.group and group and self.asks_distinct():
            return []  # "how many distinct customers": one number, not a count per customer
        if not self.group and group and self.aggs == ["nunique"] and not self.per_group_said():
            return []  # 「仕入先コードのユニーク数」: how many different values, one number
        if not self.group and group and self.asks_one_row_count():
            return []  # 「差戻しになっている申請は今何件？」: one count, no grouping said
        if not self.group and group and _COMBINED.search(self.c.text) and not self.per_group_said():
            return []  # 「2物件あわせた請求額の合計」, "Sales and Finance combined": one total
        if not self.group and group and self.said_as_all(group[0]):
            return []  # 「全拠点の合計」, "across all sites": one total over every value
        if (
            not self.group
            and group
            and not self.per_group_said()
            and not _EACH_OR_WHICH.search(self.c.text)
            and not self.asks_for_the_category(group[0])
            and not self.ranks_beyond_extremes()
            and self.top_n is None
            and (
                {"max", "min"} & set(self.aggs)
                or self.modifies_a_measure(group[0])
                or self.qualified_by_value(group[0])
                or (_UNITS_SOLD.search(self.c.text) and self.index.concept_column("quantity"))
            )
        ):
            # 「単価がいちばん高い品目の単価は？」, "the average ticket price": one number,
            # no grouping nobody asked for
            return []
        if (
            group
            and self.blanks_left_out()
            and not any(f["op"] == "not_null" for f in self.filters)
        ):
            self.filters = [*self.filters, {"col": group[0], "op": "not_null"}]
        fixed = {f["col"] for f in self.filters if f["op"] == "=="}
        if group and set(group) <= fixed and not self.top_n and not self.per_group_said():
            return []
        return group

    def _blanks_as_a_group(self, group: list[str]) -> None:
        """「紹介経路が未入力のものも分かるように」 said of the grouping column: its blank rows
        are a group of their own, not the only rows kept (unless 「だけ」/"only" is said)."""
        if not _ONLY.search(self.p.text):
            self.filters = [
                f for f in self.filters if not (f["op"] == "is_null" and f["col"] in group)
            ]

    def _grouped_measure(self, value_aggs: list[str]) -> list[str]:
        """The measure of a grouping: named, else the request's, else (an aggregation or a
        word for money said: 「部署別に名刺代まとめて。多い順で」) the amount asked."""
        numeric = self.numeric or ([] if "count" in self.aggs else self.inherited)
        if not numeric and value_aggs:
            numeric = self.compared_measure() or self.money_asked()
        if not numeric and not self.aggs and _MONEY_NOUN.search(self.values_said()):
            numeric = self.money_asked()
        return numeric

    def groupby(self) -> Step:
        group = self.grouping()
        self._blanks_as_a_group(group)
        extra = [c for c in self.categorical if c not in group]
        if not group:
            if self.freq and (self.numeric or self.inherited):
                return self.line()
            return self.total()
        value_aggs = [a for a in self.aggs if a not in ("count", "nunique")]
        metrics: dict[str, list[str]] = {}
        numeric = self._grouped_measure(value_aggs)
        if (
            not numeric
            and not self.aggs
            and (self.counts_rows() or _THINGS_COUNTED.search(self.c.text))
        ):
            self.aggs = [
                "count"
            ]  # "orders over 100k by store", 「カテゴリごとの品目数」: count the rows
        if not numeric and not self.aggs and vocab.MOST_COMMON.search(self.c.text):
            # "the three most common X", 「一番多いX」: X's values ranked by their row count
            if len(group) == 1 and not extra:
                return self.most_common(group[0])
            self.aggs, numeric = ["count"], []
        if not numeric and not {"count", "nunique"} & set(self.aggs):
            col = self.metric("集計する指標", "metric")
            if col is None:
                return self.ask(
                    self.t(f"{group[0]}別の集計", f"Aggregation by {group[0]}"),
                    "どの数値列を、どの方法（合計・平均など）で集計しますか？",
                    "Which numeric column should be aggregated, and how (total, average, ...)?",
                )
            numeric = [col]
        paired = self.paired_aggs(numeric, value_aggs)
        for col in numeric:
            if value_aggs or "count" not in self.aggs:
                metrics[col] = paired.get(col) or value_aggs or ["sum"]
        if metrics and not value_aggs:
            self.assumptions.append(self.t("集計方法は合計と仮定", "aggregation assumed: sum"))
        if "nunique" in self.aggs and extra:
            metrics[extra[0]] = ["nunique"]
        if "count" in self.aggs or not metrics:
            metrics.setdefault((extra or group)[0], []).append("count")
        lead, lead_aggs = next(iter(metrics.items()))
        counted = lead_aggs == ["count"] and lead in group
        ranking = "ranking" in self.intents or self.top_n is not None
        top_k = self.top_n or (10 if ranking else None)
        if ranking and self.top_n is None:
            self.assumptions.append(self.t("上位10件と仮定", "top 10 assumed"))
        what = (
            self.t("件数", "Row count")
            if counted
            else self.t(
                f"{lead}{self.name_agg(lead_aggs[0])}",
                f"{self.name_agg(lead_aggs[0]).capitalize()} {lead}",
            )
        )
        title = self.t(f"{'・'.join(group)}別の{what}", f"{what} by {', '.join(group)}")
        return self.step(
            title,
            {
                "op": "groupby_agg",
                "group_cols": group,
                "metrics": metrics,
                "sort": {"by": f"{lead}_{lead_aggs[0]}", "ascending": self.ascending},
                "top_k": top_k,
            },
        )

    def total(self) -> Step:
        """One number for the whole table or the filtered rows: 「交際費の合計は？」「金額が
        10万円を超える明細は何件？」「残業時間の平均は？」. With no aggregation said and
        nothing to count, the grouping is asked."""
        said = self.aggregations_said()
        value_aggs = [a for a in self.aggs if a != "count"]
        measured = self.counted_in_its_unit()
        if set(value_aggs) <= {"sum"} and measured:
            self.numeric, value_aggs, said = [measured], ["sum"], said - {"count"}
        elif measured and not self.numeric:  # 「1.5万以上のは平均何km？」: the km column's mean
            self.numeric, said = [measured], said - {"count"}
        if not value_aggs:
            value_aggs = self.unworded_aggregation()
        if self.units_sold:
            # "how many tickets did we sell": the units are the quantity column's sum
            value_aggs = [a for a in value_aggs if a != "sum"] + ["sum"]
        elif self.total_is_how_many():
            value_aggs = [a for a in value_aggs if a != "sum"]
        if _HOW_MANY.search(self.c.text):
            said = said | {"count"}
        counting = "count" in said or self.counts_rows()
        if _CONDITION_SAID.search(self.c.text) and not self.filters:
            # 「精算日が入っていない明細は何件？」 with no condition read: never the count of
            # every row
            return Step(
                self.t("集計", "Aggregation"),
                questions=[
                    self.t(
                        "どの行を数える（集計する）か、条件を読み取れませんでした。"
                        "「金額が10万円を超える」「部署が空欄の」のように、列と条件を書いてください。",
                        "I could not read which rows to count or total. Please name the column "
                        "and the condition (e.g. 'amount over 100,000', 'country is empty').",
                    )
                ],
            )
        if self.per_group_said() or (not value_aggs and not counting):
            # 「班ごとの部品代の合計」 with no 班 column found: the grouping is asked, never
            # dropped into a total of the whole table
            return self.ask(
                self.t("集計", "Aggregation"),
                "どの列ごとに集計しますか？",
                "Group by which column?",
                CATEGORY_KINDS,
            )
        metrics: dict[str, list[str]] = {}
        if value_aggs == ["nunique"] and (counted := self.distinct_counted()):
            metrics[counted] = ["nunique"]
        elif value_aggs:
            numeric = (
                self.numeric
                or self.compared_measure()
                or self.extreme_date(value_aggs)
                or self.measure_in_said_unit()
                or [c for c in [self.counted_in_its_unit()] if c]  # 「いちばん軽いのは何kg」
                or self.money_asked()
            )
            if not numeric and value_aggs == ["nunique"]:  # "how many different people"
                return self.ask(
                    self.t("集計", "Aggregation"),
                    "どの列の種類数（異なる値の数）を数えますか？",
                    "Count the different values of which column?",
                    CATEGORY_KINDS,
                )
            if not numeric:  # a total of a column another clause names is never assumed
                return self.ask(
                    self.t("集計", "Aggregation"),
                    f"どの数値列の{self.name_agg(value_aggs[0])}を出しますか？",
                    f"The {self.name_agg(value_aggs[0])} of which numeric column?",
                )
            paired = self.paired_aggs(numeric, value_aggs)
            for column in numeric:
                metrics[column] = paired.get(column) or value_aggs
        if metrics:
            lead, aggs = next(iter(metrics.items()))
            title = self.t(f"{lead}の{self.name_agg(aggs[0])}", f"{self.name_agg(aggs[0])} {lead}")
        else:
            title = self.t("件数", "Row count")
        return self.step(title, {"op": "total", "metrics": metrics})

    def _rows_not_grouped(self) -> None:
        """ "the median cost per request" of a ledger of requests (依頼番号 distinct on every
        row): an average, median, minimum or maximum per row, not one group per row."""
        rows = self.p.rows
        each_row = [
            c
            for c in self.group
            if rows and (info := self.index.by_name.get(c)) and info.unique >= rows
        ]
        self.per_row = bool(
            self.group
            and self.aggs
            and set(self.aggs) <= set(_PER_ROW_AGGS)
            and each_row == self.group
        )
        if self.per_row:
            self.group = []

    def distinct_counted(self) -> str | None:
        """The column whose distinct values a distinct count counts, when it is no numeric
        one: 「取引先は何社？」; 「支払先は何人？支払先コードの重複なしで」 (the key said
        wins: wider than ``key_said``, a distinct count being asked, 「…単位で」 names its key
        here, where alone it would be a grouping); 「車両は何台」 (the thing the count word
        follows); "how many different suppliers did we receive from" (not qty_received)."""
        if self.numeric:
            named = self.distinct_named()
            if named is None:
                return None
            self.numeric, self.categorical = [], [named]
        if not self.categorical:
            return None
        keyed = [
            m.column
            for m in self.c.mentions
            if m.column in self.categorical
            and re.match(
                r"\s*(?:の?\s*重複|で数え|でカウント|単位で|ベースで|ベース)",
                self.p.text[m.end :],
            )
        ]
        counted = [
            m.column
            for m in self.c.mentions
            if m.column in self.categorical and _JA_HOW_MANY_AFTER.match(self.p.text[m.end :])
        ]
        return (keyed or counted or self.categorical)[0]

    def distinct_named(self) -> str | None:
        """The column said right after "how many different" ("suppliers"), when it is not
        numeric: the thing whose distinct values are counted."""
        for m in self.c.mentions:
            before = self.p.text[: m.start]
            if self.index.kind(m.column) != "numeric" and _DIFFERENT_BEFORE.search(before):
                return m.column
        return None

    def unworded_aggregation(self) -> list[str]:
        """The aggregation of a single number asked with no word for one: a distinct count
        (``distinct_asked``), or the sum of the amount asked 「いくら」 (「滞留在庫の金額は
        どれくらい？」) or beside a count (「件数と金額教えて」: its row count comes with it)."""
        if distinct := self.distinct_asked():
            return distinct
        if _HOW_MUCH.search(self.c.text) and (self.numeric or self.money_asked()):
            return ["sum"]
        if _COUNT_AND_AMOUNT.search(self.p.text[self.c.start : self.c.end]):
            amounts = [m.column for m in self.c.mentions if self.index.kind(m.column) == "numeric"]
            if measure := self.numeric or list(dict.fromkeys(amounts)) or self.money_asked():
                self.numeric = measure
                return ["sum"]
        return []

    def total_is_how_many(self) -> bool:
        """True when "total" only says "in all" of a how-many question that names no
        measure ("how many invoices do we have in total", 「合計で何件？」): the rows are
        counted, nothing is summed."""
        return bool(_HOW_MANY.search(self.c.text) or _ROWS_ASKED.search(self.c.text)) and not (
            self.numeric or _MONEY_ASKED.search(self.c.text)
        )

    def aggregations_said(self) -> set[str]:
        """The aggregation words of the clause outside the column names it mentions (the
        人数 of a column 参加人数 asks no row count)."""
        mentions = [m for m in self.c.mentions if self.c.start <= m.start < self.c.end]
        names = [(m.start - self.c.start, m.end - self.c.start) for m in mentions]
        glued = {  # 「参加人数」 read as 参加 (参加者数): the 人数 is the rest of the name
            m.end - self.c.start for m in mentions if self.index.kind(m.column) == "numeric"
        }
        return {
            agg
            for start, end, agg in vocab.aggregation_spans(self.c.text)
            if not any(a <= start and end <= b for a, b in names)
            and not (agg == "count" and start in glued)
        }

    def line(self) -> Step:
        """A line chart step (built by the plot subclass)."""
        raise NotImplementedError
