"""Reading an analysis request without an LLM: columns, values, periods and clauses.

``parse_request`` works on NFKC-normalised, lower-cased text. It finds the
columns of the dataset the text names (exact names or synonyms, Japanese and
English, the longest match winning; a name without its unit, 重量 ~ 重量kg, or the
tail of one name, 区分 ~ 配送区分), category values taken from a column's
``values`` (every distinct value, when the summary lists them) or else its
``examples``, matched after NFKC ("ABC" ~ "ＡＢＣ"), which become filters,
periods ("2025年1月以降", "since 2025-03", "令和6年度") and numeric conditions
("売上が10000以上", "10万円以上"), then splits the text into clauses, one per thing
asked for ("売上の分布と地域別の合計" → two clauses; 「あと」「それと」「と、」 always
start a new one). What each clause asks for is decided in ``planner``.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from keiri_agent.agents.analysis.reasoning.offline.column_words import (
    MEASURE_SHORT_FORMS,
    UNIT_WORDS,
    WORD_SYNONYMS,
)
from keiri_agent.agents.analysis.reasoning.offline.countries import (
    country_aliases,
    country_column_forms,
)
from keiri_agent.agents.analysis.reasoning.offline.en_column_words_ja import (
    TOKEN_JA,
    japanese_readings,
)
from keiri_agent.agents.analysis.reasoning.offline.ja_column_words import (
    GROUP_ONLY as JA_GROUP_ONLY,
)
from keiri_agent.agents.analysis.reasoning.offline.ja_column_words import (
    WORD_SYNONYMS as JA_WORD_SYNONYMS,
)
from keiri_agent.agents.analysis.reasoning.offline.ja_english_words import (
    english_readings,
    japanese_words_for,
)
from keiri_agent.agents.analysis.reasoning.offline.katakana import katakana_words, skeleton
from keiri_agent.agents.analysis.reasoning.offline.mentions import Mention
from keiri_agent.agents.analysis.reasoning.offline.request_filters import (
    LACKING_BEFORE,
    RELATIVE_PERIOD,
    PeriodFilter,
    bare_thresholds,
    common_prefix,
    condition_at,
    contains_filters,
    date_filters,
    money_column,
    money_named,
    null_filters,
    numeric_filters,
    okurigana,
    value_filters,
)
from keiri_agent.agents.analysis.reasoning.offline.similarity import similar_mentions, stem

# A one-kanji value (雨 of 天候, 高 of 優先度) said alone, as the kind of day, time or rows:
# after the start of a clause or a particle, before 「の日」「の時」「だった」「の行」….
_ALONE_BEFORE = r"(?<![^\s、。,.!?！？「『(（がはもで])"
_ALONE_AFTER = (
    r"(?=の(?:日|時|とき|場合|週|行|件|記録|明細|案件|もの|分|データ)|だった|でした|だと|なら)"
)
# Columns of money out and money in, and a category value that is an expense.
_OUTFLOW = re.compile(r"出金|支出|払出|withdrawals?|payouts?|paid_out|outflows?|debits?", re.I)
_INFLOW = re.compile(r"入金|収入|受入|deposits?|receipts?|inflows?|credits?", re.I)
_EXPENSE_VALUE = re.compile(r"費$|(?<![a-z])(?:expenses?|costs?|fees?)$", re.I)
# A total of something other than money: 合計時間, 総距離, total_hours.
_MEASURE_NAME = re.compile(
    r"時間|日数|数量|件数|人数|回数|距離|重量|面積|km|kg|(?<![a-z])(?:hours?|days|qty|count)"
)
TOTAL_NAME = re.compile(r"(?<![a-z])total|合計|総額|総計|grand")
"""Words of a column's name that say it holds the whole of a row's money."""
_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_HIRAGANA = "\u3040-\u309f"

_PER_UNIT = re.compile(r"当たり|あたり|単価|平均|率|\bper\b|/人|毎", re.IGNORECASE)
"""Words of a per-unit figure (一人当たり金額, amount per head): never the amount itself."""
# Concept → terms ("|"-separated). A column takes the terms of the concept its name belongs to.
_SYNONYM_TEXT = {
    "sales": "売上|売上高|売上金額|売上額|売り上げ|売上げ|金額|購入額|購入金額|仕入額|仕入金額"
    "|発注額|発注金額|支払額|支払金額|支出額|支出金額|sales|revenue|revenues|amount"
    "|amounts|sales amount|turnover",
    "region": "地域|エリア|地方|地区|region|regions|area|areas",
    "date": "日付|日時|年月日|注文日|売上日|date|dates|order date",
    "quantity": "数量|個数|販売数|販売数量|qty|quantity|quantities|units|volume",
    "unit_price": "単価|価格|販売単価|unit price|unit prices|price|prices",
    "category": "カテゴリ|カテゴリー|商品カテゴリ|商品カテゴリー|分類|商品分類|category|categories"
    "|product category|product categories|genre",
    "product": "商品|商品名|製品|品目|アイテム|product|products|product name|product names|item"
    "|items",
    "customer": "顧客|顧客区分|顧客種別|客層|customer|customers|customer type|customer types"
    "|customer segment|customer segments|segment",
    "staff": "担当|担当者|営業担当|営業担当者|staff|staff member|staff members|salesperson"
    "|salespeople|sales rep|sales reps|rep|reps|employee|employees|person in charge"
    "|氏名|社員名|従業員名",
    "store": "店舗|店|ショップ|支店|store|stores|shop|shops|branch|branches",
    "discount": "値引|値引き|値引額|値引き額|値引金額|割引|割引額|割引金額|discount|discounts"
    "|discount amount|discount amounts",
    "order_id": "注文id|注文番号|order id|order ids|order number|order numbers|order no",
    # accounting and HR: the words a back-office user says for a ledger's or a roster's columns
    "department": "部門|部署|所属|所属部署|部課|department|departments|dept|division|divisions",
    "account": "勘定科目|科目|勘定|account|accounts|account name|gl account",
    "vendor": "取引先|支払先|仕入先|発注先|購入先|得意先|取引相手|業者|vendor|vendors|supplier"
    "|suppliers|payee"
    "|payees|counterparty",
    "overtime": "残業時間|残業|時間外労働|時間外勤務|時間外|overtime|overtime hours",
    "salary": "月給|給与|給料|基本給|賃金|salary|salaries|wage|wages",
    "gross_pay": "総支給額|支給総額|額面|gross pay|gross amount|gross bonus|gross salary",
    "net_pay": "差引支給額|手取り|手取|手取り額|net pay|net amount|net bonus|net salary"
    "|take-home|take home|take-home pay",
    "stamp_duty": "印紙税額|印紙税|印紙代|stamp duty|stamp duties|stamp tax|revenue stamp",
    # bank, tax and site words, so an English request reaches a Japanese ledger's columns
    "withholding": "源泉徴収税額|源泉徴収税|源泉税|源泉所得税|源泉徴収額|withholding"
    "|withholding tax|withholding taxes|tax withheld|withheld tax",
    "bank_fee": "手数料|振込手数料|bank fee|bank fees|transfer fee|transfer fees|commission"
    "|commissions",
    "balance": "残高|残額|balance|balances",
    "deposit": "入金額|deposit|deposits|deposit amount|deposit amounts|money in",
    "withdrawal": "出金額|withdrawal|withdrawals|withdrawal amount|withdrawal amounts|money out",
    "usage": "使用量|usage|consumption",
    "site": "拠点|事業所|site|sites|location|locations|facility|facilities",
    "project": "プロジェクト|案件|project|projects",
    "journalized": "仕訳済|仕訳済み|記帳済|記帳済み|journalized|journalised|posted to the ledger",
    "reconciled": "照合日|消込日|reconciliation date|reconciled date|date reconciled",
    "consumption_tax": "消費税額|消費税|consumption tax|sales tax|vat",
    "payment_method": "支払方法|支払い方法|payment method|payment methods",
}
SYNONYMS: dict[str, tuple[str, ...]] = {k: tuple(v.split("|")) for k, v in _SYNONYM_TEXT.items()}

_JOINERS = {"と", "・", "、", ",", "や", "および", "及び", "×", "x", "/", "&", "and", ",and"}
_JA_GROUP_MARK = re.compile(
    r"^\s*(?:別|ごと|毎|単位|の別|で(?:の)?(?:集計|グループ|分け|色分け|比較|区切)|を軸|をキー|間で"
    r"|の組み?合わせ(?:で|ごと|別|ごと))"
)
_EN_GROUP_MARK = re.compile(
    r"(?:(?<![a-z])(?:by|per|each|every|across|among|between|grouped by|group by|"
    r"broken down by|split by|colou?red by|colou?r by|hue|each of|for each of|for every)\s+"
    r"(?:the\s+|each\s+|different\s+)?(?:number of\s+|count of\s+)?)$"
)
# One plain word between the group word and a category column qualifies the column
# ("per booking channel", "by sales region"); never a word the request reads otherwise.
_EN_GROUP_MARK_QUALIFIED = re.compile(
    r"(?<![a-z])(?:by|per|each|across|for each|for each of|grouped by|group by)\s+"
    r"(?:the\s+)?(?!all\s)([a-z]{3,})\s+$"
)
_JA_GROUP_BEFORE = re.compile(r"各\s*$")
# A plural English word with no word for a date in it: the rows ("invoices"), not a date.
_ROWS_NOT_DATES = re.compile(
    r"(?![a-z_ -]*(?:date|day|month|year|week|time|period))[a-z_ -]*[a-z]s", re.IGNORECASE
)
# The words that group by a numeric column ("by tier", "in each grade"); "between" or
# "coloured by" before a number pair it with another ("correlation between a and b").
_EN_NUMERIC_GROUP_MARK = re.compile(
    r"(?<![a-z])(?<!colored )(?<!coloured )(?<!color )(?<!colour )"
    r"(?:by|per|each|every|each of|for each of)\s+"
    r"(?:the\s+|all\s+|each\s+)?(?:number of\s+|count of\s+)?$"
)
# A word after an indefinite article is a common noun ("an item a shop sells"), not the
# column or the category value of the same spelling; a value "also included" restricts nothing.
_COMMON_NOUN_BEFORE = re.compile(r"(?<![a-z])(?:a|an)\s+$")
_INCLUDING_AFTER = re.compile(
    r"^\s*(?:も含め|も含む|を含め|を含む|も入れ|(?:か|か\s*どうか)?\s*(?:に関係なく|に関わらず"
    r"|にかかわらず|を問わず))"
)
# "regardless of whether it was Used", "whether or not Cancelled": the value is not a
# condition, every row counts.
_INCLUDING_BEFORE = re.compile(
    r"(?<![a-z])(?:regardless of|irrespective of|whether or not|no matter)\s+(?:whether\s+)?"
    r"(?:(?:it|they|the \w+)\s+(?:is|are|was|were)\s+)?$"
)
# English words a short value in capitals (US, IT, NO, OR) is spelled like: written in
# lower case ("show us", "is it"), they are the word, not the value.
_FUNCTION_SPELLINGS = frozenset(
    [
        "us",
        "it",
        "no",
        "or",
        "in",
        "on",
        "at",
        "me",
        "we",
        "be",
        "do",
        "go",
        "so",
        "up",
        "an",
        "as",
        "is",
        "to",
        "of",
        "by",
        "he",
        "my",
        "am",
        "if",
    ]
)
_NEG_AFTER = re.compile(
    r"^\s*(?:以外|を除く|を除いた|を除いて|除く"
    r"|(?:(?:した|している|済み?)(?:もの|分|行|データ)"
    r"|の(?:もの|分|行|明細|データ|[\u3400-\u9fff\u30a0-\u30ff]{1,6}))?"
    r"\s*(?:は|を|も)\s*(?:除外|除いて|除き|対象外|入れないで|入れず"
    r"|含めないで|含めず|抜いて|外して|省いて)|抜きで)"
)
# "YouTube excluded", "usage fees aside", "Osaka left out": the value set aside after it.
_EN_NEG_AFTER = re.compile(
    r"^\s*(?:is\s+|are\s+|being\s+)?(?:excluded|removed|aside|left\s+out|taken\s+out"
    r"|set\s+aside|not\s+included|omitted|dropped)(?![a-z])"
)
# "leave YouTube out", "take the Osaka rows out": the verb before, "out" after.
_LEAVE_BEFORE = re.compile(
    r"(?<![a-z])(?:leave|leaving|take|taking|keep|keeping|cut|cutting)\s+(?:the\s+)?$"
)
_OUT_AFTER = re.compile(r"^\s*(?:(?:rows?|ones?|posts?|lines?|entries|records)\s+)?out(?![a-z])")
_NEG_BEFORE = re.compile(
    r"(?<![a-z])(?:except(?: for)?|excluding|exclude|other than|not|without|but not|apart from"
    r"|aside from|leave out|leaving out|omit|omitting|skip|skipping|ignore|ignoring|drop|dropping"
    r"|minus)\s+(?:the\s+|all\s+|any\s+)?(?:[a-z-]+\s+){0,2}?(?:[(（]\s*)?$"
)


def normalize(text: str) -> str:
    """NFKC (full-width → half-width), lower case, single spaces."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).lower()).strip()


def is_japanese(text: str) -> bool:
    """True when the text contains kana or kanji."""
    return bool(_JA_CHAR.search(text))


def term_pattern(term: str) -> str:
    """Regex for a term: spaces/underscores interchangeable, ASCII words kept whole."""
    words = re.split(r"[\s_]+", term.strip())
    body = r"[\s_-]*".join(re.escape(word) for word in words)
    if re.match(r"[a-z0-9]", term):
        body = r"(?<![a-z0-9])" + body
    if re.search(r"[a-z0-9]$", term):
        body += r"(?![a-z0-9])"
    return body


def _english_words_pattern(reading: str) -> str:
    """``term_pattern`` of an English reading whose every word may be said in the
    singular or the plural ("material costs" ~ "materials cost" of 資材費, "fees amount"
    ~ "fee amount")."""
    words = []
    for word in re.split(r"[\s_]+", reading.strip()):
        if not re.fullmatch(r"[a-z]{3,}", word):
            words.append(re.escape(word))
            continue
        if word.endswith("ies"):
            words.append(re.escape(word[:-3]) + "(?:y|ies)")
        elif word.endswith("y") and not word.endswith(("ay", "ey", "oy", "uy")):
            words.append(re.escape(word[:-1]) + "(?:y|ies)")
        elif word.endswith(("ss", "us", "is")):
            words.append(re.escape(word) + "(?:es)?")
        elif word.endswith("s"):
            words.append(re.escape(word[:-1]) + "(?:e?s)?")
        elif word.endswith(("x", "ch", "sh")):
            words.append(re.escape(word) + "(?:es)?")
        else:
            words.append(re.escape(word) + "s?")
    return r"(?<![a-z0-9])" + r"[\s_-]*".join(words) + r"(?![a-z0-9])"


def value_pattern(value: str) -> str:
    """Regex for a category value: ``term_pattern``, and an English value ending in a
    letter in the plural too ("foundations" ~ Foundation, "individuals" ~ Individual,
    "agencies" ~ Agency): a request counts or totals the rows of a kind in the plural."""
    pattern = term_pattern(value)
    if not value.isascii():
        return _okurigana_free(value) or pattern
    if not (value[-1:].isalpha() and pattern.endswith("(?![a-z0-9])")):
        return pattern
    body = pattern[: -len("(?![a-z0-9])")]
    plural = "(?:e?s|e?d)?"  # "rejected" ~ Reject: a state said as what was done
    if value.endswith("al"):  # "billed annually" ~ annual
        plural = "(?:e?s|ly)?"
    if value.endswith("y") and len(value) >= 3:
        plural = "(?:e?s)?|" + body[:-1] + "ies"  # "agency" ~ "agencies"
        return f"(?:{body}{plural})(?![a-z0-9])"
    return f"{body}{plural}(?![a-z0-9])"


_KANJI = re.compile(r"[\u3400-\u9fff]")
# Okurigana a compound may be written with or without (差し戻し / 差戻し, 振り込み / 振込).
_OKURIGANA = "[しりいみえけちきつれじびぎ]"


def _okurigana_free(value: str) -> str | None:
    """Regex for a Japanese value of two kanji or more written with or without its
    okurigana: each kana between two kanji, or after the last, is optional, and a kana
    may stand between two kanji written together. None for a value with another script
    in it (a value with letters or katakana is matched as written)."""
    if len(_KANJI.findall(value)) < 2 or not re.fullmatch(r"[\u3400-\u9fff\u3041-\u3093]+", value):
        return None
    parts: list[str] = []
    for i, char in enumerate(value):
        after_kanji = i > 0 and _KANJI.match(value[i - 1]) is not None
        if _KANJI.match(char):
            if after_kanji:
                parts.append(f"{_OKURIGANA}?")
            parts.append(re.escape(char))
        elif (
            after_kanji
            and re.fullmatch(_OKURIGANA, char)
            and (i + 1 == len(value) or _KANJI.match(value[i + 1]))
        ):
            parts.append(f"{re.escape(char)}?")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
# Words of a column name that say nothing about which column it is ("account_name" is
# named by "account", never by "name"); a column is never named by these alone.
_GENERIC_TOKENS = frozenset(
    [
        "id",
        "no",
        "nr",
        "name",
        "code",
        "type",
        "kind",
        "date",
        "time",
        "count",
        "cnt",
        "amount",
        "amt",
        "value",
        "val",
        "total",
        "sum",
        "avg",
        "average",
        "mean",
        "num",
        "number",
        "qty",
        "hours",
        "hour",
        "rate",
        "index",
        "per",
        "of",
        "by",
        "in",
        "the",
        "flag",
        "monthly",
        "daily",
        "weekly",
        "yearly",
        "annual",
        "max",
        "min",
    ]
)
_COUNT_TOKENS = ("count", "cnt")  # "invoice_number" is an identifier, not a count
_ID_TOKENS = ("id", "no", "nr", "key", "number")
_TOKEN_JOIN = r"(?:[\s_-]*|\s+(?:in|of|for|the)\s+)"


def name_tokens(name: str) -> list[str]:
    """The words of an ASCII column name: camelCase, snake_case and digits split
    ("gdpPercap_2007" → gdp, percap, 2007; "review_count" → review, count)."""
    spaced = _CAMEL.sub(" ", unicodedata.normalize("NFKC", name))
    return [t for t in re.split(r"[^0-9a-z]+", spaced.lower()) if t]


# Four letters that are a word of their own, so never a column word cut short.
_FOUR_LETTER_WORDS = frozenset(
    [
        *("with", "from", "over", "into", "than", "then", "that", "this", "what", "when"),
        *("have", "were", "been", "each", "some", "only", "just", "also", "more", "most"),
        *("many", "much", "your", "they", "them", "here", "such", "does", "made", "make"),
        *("take", "give", "show", "long", "high", "last", "next", "same", "very", "well"),
        *("back", "down", "even", "ever", "part", "work", "time", "year", "week", "days"),
        *("cost", "paid", "sent", "open", "hold"),
    ]
)


def _token_pattern(token: str, abbreviated: bool, others: tuple[str, ...] = ()) -> str:
    """One word of a column name as the request may write it: plural, spaced inside
    ("windspeed" ~ "wind speed"), cut short by the user ("temp" ~ "temperature"),
    when the name abbreviates (``abbreviated``), spelled out ("exp" ~ "expectancy",
    "percap" ~ "per capita"), or as one of ``others`` (``column_words``: "avg" ~
    "average", "score" ~ "rating", "l" ~ "litres")."""
    alternatives = [_word_pattern(word, False) for word in others]
    if token.isdigit():
        return "|".join([re.escape(token), *alternatives])
    gap = r"[\s-]?" if len(token) >= 6 else ""
    chars = [re.escape(c) for c in token]
    body = gap.join(chars)
    cut = ""
    if len(token) >= 6:  # the user may stop after four letters: "temp" ~ "temperature"
        # (five when the four are a word of their own: "with" is never withholding)
        start = 5 if token[:4] in _FOUR_LETTER_WORDS else 4
        tail = ""
        for char in reversed(chars[start:-1]):
            tail = f"(?:{gap}{char}{tail})?"
        cut = "|" + gap.join(chars[:start]) + tail + "(?![a-z])"
    if abbreviated and len(token) >= 3:
        plural = "|" + gap.join(chars[:-1]) + "ies" if token.endswith("y") else ""
        own = body + "[a-z]*" + plural + cut  # injury ~ injuries
    elif token.endswith("y"):  # salary ~ salaries
        own = body + "|" + gap.join(chars[:-1]) + "ies" + cut
    else:
        own = body + "(?:e?s)?" + cut
    return "|".join([own, *alternatives])


def _word_pattern(word: str, abbreviated: bool) -> str:
    """An ordinary word (``column_words``), possibly of several words, in the plural too."""
    return r"\s+".join(f"(?:{_token_pattern(part, abbreviated)})" for part in word.split())


def _alias_pattern(
    tokens: list[str], abbreviated: bool, others: dict[str, tuple[str, ...]] | None = None
) -> str:
    body = _TOKEN_JOIN.join(
        f"(?:{_token_pattern(t, abbreviated, (others or {}).get(t, ()))})" for t in tokens
    )
    return rf"(?<![a-z0-9])(?:{body})(?![a-z0-9])"


def _other_words(
    tokens: dict[str, list[str]], whole: bool = False
) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per column, the ordinary words its name's words may be said with: the synonyms of
    ``WORD_SYNONYMS`` that are no word of another column's name, and for the unit at the
    end of a name ("fuel_l", "distance_km") the words of ``UNIT_WORDS``. Said of the
    whole name (``whole``), a synonym in another name is no clash: "invoice number" is
    ``invoice_no`` although ``po_number`` holds "number"."""
    used = set() if whole else {w for words in tokens.values() for w in words}
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for name, words in tokens.items():
        mine: dict[str, tuple[str, ...]] = {}
        for i, word in enumerate(words):
            said = tuple(w for w in WORD_SYNONYMS.get(word, ()) if w not in used)
            if i == len(words) - 1 and i > 0 and word in UNIT_WORDS:
                said += UNIT_WORDS[word]
            if said:
                mine[word] = said
        found[name] = mine
    return found


def _unit_aliases(
    tokens: dict[str, list[str]], others: dict[str, dict[str, tuple[str, ...]]]
) -> list[tuple[str, str, int]]:
    """A measure named with its unit: "fuel litres", "litres of fuel", "yen amount"
    (``fuel_l``, ``amount_jpy``) and the unit word alone when one column has that unit
    ("dollars" ~ ``fuel_cost_usd``)."""
    units: dict[str, set[str]] = {}
    for name, words in tokens.items():
        if len(words) > 1 and words[-1] in UNIT_WORDS:
            units.setdefault(words[-1], set()).add(name)
    found: list[tuple[str, str, int]] = []
    for name, words in tokens.items():
        if len(words) < 2 or words[-1] not in UNIT_WORDS:
            continue
        unit = "|".join(_word_pattern(w, False) for w in UNIT_WORDS[words[-1]])
        base = _TOKEN_JOIN.join(
            f"(?:{_token_pattern(t, True, others[name].get(t, ()))})" for t in words[:-1]
        )
        size = len(" ".join(words)) + 4
        found.append(
            (rf"(?<![a-z0-9])(?:{unit})\s+of\s+(?:the\s+)?(?:{base})(?![a-z0-9])", name, size)
        )
        found.append((rf"(?<![a-z0-9])(?:{base})\s+(?:in\s+)?(?:{unit})(?![a-z0-9])", name, size))
        # "yen amount", "JPY amount", "dollar cost": the unit said first
        found.append((rf"(?<![a-z0-9])(?:{unit})\s+(?:{base})(?![a-z0-9])", name, size))
        if units[words[-1]] == {name}:
            found.append((rf"(?<![a-z0-9])(?:{unit})(?![a-z0-9])", name, 3))
    return found


def name_aliases(names: list[str]) -> list[tuple[str, str, int]]:
    """(regex, column, phrase length) for the ordinary words that name a column.

    The whole name in words ("debitAmount" ~ "debit amount", "uvIndex" ~ "UV index"),
    "number of reviews" for a count column ``review_count``, and any run of its words
    that names no other column and is not generic ("salary" ~ ``monthly_salary``,
    "life expectancy" ~ ``lifeExp_2007``; not for identifiers: "orders" are rows,
    not ``order_id``).
    """
    tokens = {
        name: name_tokens(name) for name in names if name.isascii() and re.search("[A-Za-z]", name)
    }
    runs: dict[tuple[str, ...], set[str]] = {}
    for name, words in tokens.items():
        for i in range(len(words)):
            for j in range(i + 1, len(words) + 1):
                runs.setdefault(tuple(words[i:j]), set()).add(name)
    others = _other_words(tokens)
    whole = _other_words(tokens, whole=True)
    found = _unit_aliases(tokens, others)
    for name, words in tokens.items():
        several = len(words) > 1
        said = whole[name] if several else others[name]
        found.append((_alias_pattern(words, several, said), name, len(" ".join(words))))
        if several and words[-1] in _COUNT_TOKENS:
            rest = _alias_pattern(words[:-1], True)
            found.append((rf"(?<![a-z])number of (?:the )?{rest}", name, len(name) + 10))
        if words[-1] in _ID_TOKENS:
            continue  # "orders" are the rows, not the column order_id
        for size in range(len(words) - 1, 0, -1):
            for i in range(len(words) - size + 1):
                run = words[i : i + size]
                if runs[tuple(run)] != {name} or (
                    all(w in _GENERIC_TOKENS or w.isdigit() or len(w) < 3 for w in run)
                    and not _qualified_generic(run)
                    and not (len(run) == 1 and run[0] in MEASURE_SHORT_FORMS)
                ):
                    continue
                pattern = _alias_pattern(run, True, others[name])
                found.append(
                    (_not_a_word_of_another(pattern, words, tokens), name, len(" ".join(run)))
                )
    return found


def _not_a_word_of_another(pattern: str, words: list[str], tokens: dict[str, list[str]]) -> str:
    """``pattern`` (a run of a name's words, possibly cut short: "orde" ~ "ordered") never
    matching a whole word of another column's name that is no word of this one: "order"
    is the word of ``order_id`` (the rows), not ``ordered_at`` cut short."""
    own = set(words)
    theirs = sorted(
        {w for ws in tokens.values() for w in ws if w not in own and len(w) >= 3 and w.isalpha()}
    )
    if not theirs:
        return pattern
    blocked = "|".join(re.escape(w) for w in theirs)
    return rf"(?!(?:{blocked})(?:e?s)?(?![a-z0-9])){pattern}"


# Generic words that say how a value is aggregated: a run of generic words naming a
# column needs one word that is none of these ("daily rate" ~ avgDailyRate; never
# "total count").
_AGGREGATE_TOKENS = frozenset(
    (
        "total",
        "sum",
        "avg",
        "average",
        "mean",
        "count",
        "cnt",
        "num",
        "number",
        "max",
        "min",
        "per",
        "of",
        "by",
        "in",
        "the",
        "id",
        "no",
        "nr",
        "name",
        "code",
        "index",
        "flag",
    )
)


def _qualified_generic(run: list[str]) -> bool:
    """Two or more generic words that together name one column ("daily rate")."""
    return len(run) >= 2 and any(w not in _AGGREGATE_TOKENS and not w.isdigit() for w in run)


# A unit or qualifier glued onto a column name: 待ち時間秒, 重量kg, 金額_円, amount_usd.
# A one-character unit only after a separator (区分, 部分 are words; 時間_分 is a unit).
_UNIT_TAIL = re.compile(
    r"[\s_-]*(?:[(\[（].*?[)\]）]|千円|万円|百万円|円|ドル|秒|kg|km|cm|mm|ml|kwh|%"
    r"|(?<![a-z])(?:usd|jpy|yen|eur|sec|secs|min|mins|ms|hrs|pct))$|[\s_-]+(?:分|g|m|s|h|l)$"
)
_KANJI = re.compile(r"[\u3400-\u9fff]")
_KATAKANA = re.compile(r"[\u30a0-\u30ff]")


def _base_name(name: str) -> str:
    """The column name without its unit or qualifier ("待ち時間秒" → "待ち時間")."""
    base = normalize(name)
    while (cut := _UNIT_TAIL.sub("", base).strip(" _-")) and cut != base:
        base = cut
    return base


_GROUP_AFTER = r"(?=\s*(?:ごと|毎|別|単位))"


_DATE_TAIL = re.compile(r"(?:年月日|日付|日時|日)$")


_GENERIC_MONEY = frozenset({"金額", "額", "代金"})


def without_brackets(name: str) -> str:
    """The name without what it says in brackets (売上（千円） → 売上, 金額(税込) → 金額)."""
    return _BRACKETED.sub("", name).strip()


_BRACKETED = re.compile(r"[(\[（].*?[)\]）]")


def everyday_terms(names: list[str]) -> list[tuple[str, str, int]]:
    """(regex, column, length) for the everyday words of a Japanese column name
    (``ja_column_words``): the name with one of its words said otherwise (請求額 →
    請求金額) and, when that word ends or starts the name, the everyday word alone
    (当期償却額 → 減価償却費; 所属 → 課 before 「ごと」/「別」). A term that would name two
    columns, or that is in another column's name, names none."""
    owners: dict[str, set[str]] = {}
    taken = {normalize(n) for n in names} | {_base_name(n) for n in names}
    spelled = {n: normalize(n) for n in names}
    for name in names:
        base = without_brackets(_base_name(name))
        if not base or not is_japanese(base):
            continue
        for word, others in JA_WORD_SYNONYMS.items():
            if word not in base:
                continue
            stem = _DATE_TAIL.sub("", base) or base  # 契約終了日: 終了 ends what it dates
            whole = stem.startswith(word) or stem.endswith(word)
            rivals = any(money_named(n) for n in names if n != name)
            for other in others:
                owners.setdefault(base.replace(word, other, 1), set()).add(name)
                if whole and not (other in _GENERIC_MONEY and rivals):
                    # 「金額」 alone names 影響額 only when no other column holds money
                    # (是正費用): else which one is meant is asked
                    owners.setdefault(other, set()).add(name)
    found = []
    for term, cols in owners.items():
        if (
            len(cols) != 1
            or term in taken
            or any(term in said for n, said in spelled.items() if n not in cols)
        ):
            continue  # 種別 for 配送区分 while 顧客種別 is a column: the user means that one
        if len(term) == 1:
            if term not in JA_GROUP_ONLY:
                continue
            pattern = re.escape(term) + _GROUP_AFTER
        else:
            pattern = term_pattern(term)
        found.append((pattern, next(iter(cols)), len(term)))
    return found


def short_terms(names: list[str]) -> list[tuple[str, str]]:
    """(term, column) for the shortened words that name exactly one column.

    The name without its unit ("待ち時間" ~ 待ち時間秒, "重量" ~ 重量kg, "amount" ~
    amount_usd) and, for a Japanese name, its tail after a word of two or more
    characters ("区分" ~ 入出庫区分, "種別" ~ 問い合わせ種別). A word shared by two
    columns names neither: the user is asked which one.
    """
    bases = {name: _base_name(name) for name in names}
    owners: dict[str, set[str]] = {}
    for name, base in bases.items():
        if base != normalize(name) and len(base) >= 2:
            owners.setdefault(base, set()).add(name)
        if is_japanese(base):
            for i in range(2, len(base) - 1):
                if _KANJI.match(base[i]) or (
                    _KATAKANA.match(base[i]) and not _KATAKANA.match(base[i - 1])
                ):  # never inside a katakana word (カテゴリ is no "ゴリ")
                    owners.setdefault(base[i:], set()).add(name)
    words = {name: name_tokens(name) for name in names if name.isascii()}
    for term, cols in owners.items():
        said = name_tokens(term) if term.isascii() else []
        # "fuel" (fuel_l) also starts fuel_type and fuel_cost_usd: it names none of them
        cols.update(n for n, w in words.items() if said and w[: len(said)] == said)
    taken = {normalize(name) for name in names}
    return [
        (term, next(iter(cols)))
        for term, cols in owners.items()
        if len(cols) == 1 and term not in taken
    ]


_YES_NO = (("yes", "no"), ("true", "false"), ("y", "n"), ("1", "0"), ("あり", "なし"), ("有", "無"))
"""The pairs of values of a yes/no column, the "yes" first."""


@dataclass(frozen=True)
class ColumnInfo:
    """One column of the dataset summary."""

    name: str
    kind: str
    examples: tuple[str, ...] = ()
    concept: str | None = None
    unique: int = 0
    missing: int = 0


class ColumnIndex:
    """The dataset's columns and every term (name, synonym, example value) that names them."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self.columns = [
            ColumnInfo(
                name=str(item["name"]),
                kind=str(item.get("kind") or "text"),
                # every distinct value when the summary lists them (≤ 50), else examples
                examples=tuple(str(e) for e in item.get("values") or item.get("examples") or ()),
                unique=int(item.get("unique") or 0),
                missing=int(item.get("missing") or 0),
            )
            for item in summary.get("columns") or []
        ]
        self.by_name = {c.name: c for c in self.columns}
        self._assign_concepts()
        self.stem_terms: set[str] = set()  # terms naming a column by what its name is of
        self.terms = self._terms()

    def _assign_concepts(self) -> None:
        """Give each concept (``SYNONYMS``) the column that holds it: the one named by a
        term of it, else the one whose name holds the longest term; of two alike, the one
        with fewer blank cells (入金額 and 出金額 both hold 金額: the amount a ledger is
        about is the one filled in on most rows)."""
        chosen: dict[str, tuple[int, int, int, str]] = {}
        tied: set[str] = set()
        for info in self.columns:
            key = normalize(info.name).replace("_", " ")
            key = without_brackets(key)
            for concept, terms in SYNONYMS.items():
                if concept == "sales" and _PER_UNIT.search(key):
                    continue  # 「一人当たり金額」: an amount per head, not what the ledger totals
                if key in terms:
                    rank = (0, len(key), info.missing)
                else:
                    inside = [t for t in terms if len(t) >= 2 and t in key]
                    if not inside:
                        continue
                    rank = (1, len(key) - max(len(t) for t in inside), info.missing)
                best = chosen.get(concept)
                if best is None or rank < best[:3]:
                    chosen[concept] = (*rank, info.name)
                    tied.discard(concept)
                elif rank == best[:3]:
                    tied.add(concept)
        for concept in tied:  # 異動元拠点 and 異動先拠点 hold 拠点 alike: it names neither
            del chosen[concept]
        owner: dict[str, str] = {}  # a column's first concept (出金額: sales before withdrawal)
        self.concepts: dict[str, list[str]] = {}  # every concept a column holds, for its words
        for concept, value in chosen.items():
            owner.setdefault(value[3], concept)
            self.concepts.setdefault(value[3], []).append(concept)
        self.contained = {value[3] for value in chosen.values() if value[0] == 1}
        self.columns = [
            ColumnInfo(c.name, c.kind, c.examples, owner.get(c.name), c.unique, c.missing)
            for c in self.columns
        ]
        self.by_name = {c.name: c for c in self.columns}

    def synonyms_name(self, info: ColumnInfo) -> bool:
        """True when the words of a column's concept name it. A numeric column that holds
        its concept only by a word inside its name (総支払額 holds 支払額) is not what a
        general word of the concept (「金額」, "amount") means when another numeric column
        is named like money too (月額リース料, 残債額): which one is meant is asked."""
        if info.name not in self.contained or info.kind != "numeric":
            return True
        return not any(
            c.name != info.name and c.kind == "numeric" and money_named(c.name)
            for c in self.columns
        )

    def _terms(self) -> list[tuple[str, str, str | None]]:
        """(regex, column, example value or None), longest phrase first.

        A column is named by its own name, the synonyms of its concept, the words of
        its name (``name_aliases``) and, for category columns, its values.
        """
        found: dict[str, tuple[str, str | None, int]] = {}
        for info in self.columns:
            own = normalize(info.name)
            bracketed = re.sub(r"(?:金額|額)(?=\s*[(\[（])", "", own)  # 報酬(税抜) of 報酬額(税抜)
            for term in (own, without_brackets(own), bracketed):
                if term:
                    found.setdefault(term_pattern(term), (info.name, None, len(term)))
        loose: set[str] = set()  # a synonym of a column holding its concept only inside
        for info in self.columns:
            if not self.synonyms_name(info):
                continue
            for concept in self.concepts.get(info.name, []):
                for term in SYNONYMS[concept]:
                    pattern = term_pattern(term)
                    if pattern not in found and info.name in self.contained:
                        loose.add(pattern)
                    found.setdefault(pattern, (info.name, None, len(term)))
        # a whole name or a synonym: a value never takes it, unless the synonym only
        # reaches a column by a word inside its name (取引先 ~ 配送業者, 宛先区分 取引先)
        named = set(found) - loose
        for pattern, column, size in name_aliases([c.name for c in self.columns]):
            found.setdefault(pattern, (column, None, size))
        for term, column in short_terms([c.name for c in self.columns]):
            found.setdefault(term_pattern(term), (column, None, len(term)))
        for pattern, column, size in everyday_terms([c.name for c in self.columns]):
            # not inside a count word: 「何種類」「種類数」 ask how many, of another column
            found.setdefault(rf"(?<!何){pattern}(?!数)", (column, None, size))
        self._identifier_stems(found)
        self._latin_parts(found)
        self._flag_stems(found)
        self._japanese_name_terms(found)
        self._verb_compound_terms(found)
        self._row_amount_terms(found)
        self._value_terms(found, named)
        self._english_value_terms(found)
        self._country_terms(found)
        self._japanese_value_terms(found)
        self._withhold_generic_money(found)
        # longest first; at one length a value before a word of a longer column name
        # ("overdue" is a status, not days_overdue), a whole name before a value
        ordered = sorted(
            found.items(),
            key=lambda item: (
                -item[1][2],
                0 if item[0] in named else 2 if item[1][1] is None else 1,
            ),
        )
        return [(pattern, col, value) for pattern, (col, value, _) in ordered]

    def _identifier_stems(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """「車両」 for 車両番号, 「社員」 for 社員コード: the thing an identifier column names,
        unless it is the data's word for its rows (明細 of 明細番号) or is in another name."""
        rows = set(self.row_nouns())
        names = [normalize(c.name) for c in self.columns]
        rows_said = max((c.unique for c in self.columns), default=0)
        for info in self.columns:  # "vehicles" for vehicle_id (not an id of every row)
            words = name_tokens(info.name) if info.name.isascii() else []
            if (
                info.kind != "numeric"
                and info.unique < 0.5 * rows_said
                and len(words) == 2
                and words[-1] in _ID_TOKENS
                and len(words[0]) >= 3
                and words[0] not in rows
                and sum(words[0] in name_tokens(c.name) for c in self.columns if c.name.isascii())
                == 1
            ):
                for said in (words[0], words[0] + "s"):
                    found.setdefault(term_pattern(said), (info.name, None, len(said)))
        for info in self.columns:
            stem = _JA_ID_NAME.sub("", normalize(info.name))
            if (
                info.kind == "numeric"
                or stem == normalize(info.name)
                or len(stem) < 2
                or not is_japanese(stem)
                or stem in rows
                or sum(stem in name for name in names) > 1
            ):
                continue
            found.setdefault(term_pattern(stem), (info.name, None, len(stem)))

    def _latin_parts(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """「SV」 for 担当SV, 「PC」 for PC台数: the Latin letters of a Japanese name name it
        when no other column has them (not ID / No, which every identifier has)."""
        parts: dict[str, set[str]] = {}
        for info in self.columns:
            name = normalize(info.name)
            if is_japanese(name):
                for part in re.findall(r"[a-z]{2,}", name):
                    parts.setdefault(part, set()).add(info.name)
        for part, owners in parts.items():
            if len(owners) == 1 and part not in ("id", "no", "cd"):
                found.setdefault(term_pattern(part), (next(iter(owners)), None, len(part)))

    def _flag_stems(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """「返金」 for 返金有無, 「至急」 for 至急フラグ: the thing a yes/no column says is there,
        unless another column's name holds it too."""
        # a numeric column whose name begins with the stem is named by its whole name
        # (「キャンセル料」 beside キャンセル有無): the stem alone is still the flag's
        names = [
            normalize(c.name)
            for c in self.columns
            if c.kind != "numeric" or self.yes_value(c.name) is not None
        ]
        numeric = [normalize(c.name) for c in self.columns if c.name not in names]
        for info in self.columns:
            if self.yes_value(info.name) is None:
                continue
            stem = _flag_stem(info.name)
            if stem == normalize(info.name) or len(stem) < 2:
                continue
            # 「終結フラグ」 beside 終結日: the stem said with a mark of a flag is the flag's
            marked = rf"{re.escape(stem)}\s*(?:フラグ|の?有無|flag)"
            found.setdefault(marked, (info.name, None, len(stem) + 2))
            if sum(stem in name for name in names) > 1 or any(
                stem in name and not name.startswith(stem) for name in numeric
            ):
                continue
            found.setdefault(term_pattern(stem), (info.name, None, len(stem)))

    def _japanese_name_terms(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """Japanese for English column names (``en_column_words_ja``): 「承認限度額」 for
        approved_limit, 「担保」 for collateral_held; a reading two columns share names
        neither, and a word the data already uses is left to it."""
        readings: dict[str, set[str]] = {}
        stems: set[str] = set()
        for info in self.columns:
            if info.name.isascii():
                words = name_tokens(info.name)
                currency = _CURRENCY_JA.get(words[-1]) if len(words) > 1 else None
                for reading in japanese_readings(words):
                    readings.setdefault(reading, set()).add(info.name)
                    stem = _MONEY_TAIL.sub("", reading)  # 「額面」 for face_value (額面金額)
                    if stem != reading and len(stem) >= 2:
                        readings.setdefault(stem, set()).add(info.name)
                        stems.add(stem)  # weak: 「申請」 is also the rows of requested_amount
                    if currency is not None:  # 「運賃（円換算）」「円建て運賃」 for freight_jpy
                        unit = rf"(?:{currency})(?:建て|建|換算|ベース)?"
                        said = re.escape(reading)
                        pattern = rf"{unit}の?\s*{said}|{said}\s*[(（]?\s*{unit}\s*[)）]?"
                        found.setdefault(f"(?:{pattern})", (info.name, None, len(reading) + 2))
        for reading, owners in readings.items():
            if len(owners) == 1 and len(reading) >= 2:
                pattern = term_pattern(reading)
                if pattern not in found and reading in stems:
                    self.stem_terms.add(pattern)
                found.setdefault(pattern, (next(iter(owners)), None, len(reading)))
                owner = next(iter(owners))
                if self.kind(owner) == "numeric" and reading not in stems:
                    # 「返金額」 of Refunded (返金): not the 金額 of SaleAmount inside it
                    said = rf"{re.escape(reading)}の?(?:金額|額)"
                    found.setdefault(said, (owner, None, len(reading) + 1))
            elif len(owners) == 1 and len(reading) == 1 and is_japanese(reading):
                # 「国別」 of Country (国): a one-character reading names it as a grouping
                pattern = rf"(?<![\u3400-\u9fff]){re.escape(reading)}(?=\s*(?:別|ごと|毎))"
                found.setdefault(pattern, (next(iter(owners)), None, 1))

    def _verb_compound_terms(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """「紛失した枚数」 for 紛失枚数, 「払い出した数量」 for 払出数量: a Japanese name of an
        action and what it measures, said with the action as a verb between them (the
        whole said is longer than the flag 紛失あり or the 枚数 beside it, so it wins)."""
        for info in self.columns:
            name = without_brackets(normalize(info.name))
            if info.kind != "numeric" or not re.fullmatch(r"[\u3400-\u9fff]{4,8}", name):
                continue
            for cut in range(2, len(name) - 1):
                head, tail = name[:cut], name[cut:]
                said = (
                    rf"{okurigana(head)}(?:し|され|さ|っ|い)?(?:た|ている|てる|てない)?"
                    rf"\s*(?:分の|もの|の)?\s*{re.escape(tail)}"
                )
                found.setdefault(said, (info.name, None, len(name) + 1))

    def _row_amount_terms(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """「請求額」 on a table of invoices (``invoice_no``) whose amount is ``amount_jpy``:
        the amount of the data's rows, said by their Japanese word, is the table's amount."""
        amount = self.amount_column()
        if amount is None or not amount.isascii():
            return
        words = [
            reading
            for noun in self.row_nouns()
            if noun.isascii()
            for reading in japanese_readings([noun])
            if len(reading) >= 2
        ]
        measured = {  # 「償却額」 beside WrittenOff (償却): that column's, not the table's amount
            reading
            for name in self.names("numeric")
            if name.isascii()
            for reading in japanese_readings(name_tokens(name))
        }
        for word in dict.fromkeys(words):
            if word in measured:
                continue
            pattern = rf"{re.escape(word)}の?(?:金額|額)(?=合計|平均|総|[^\u3400-\u9fff]|$)"
            found.setdefault(pattern, (amount, None, len(word) + 1))

    def _withhold_generic_money(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """「金額」 alone names no column that only holds it inside its name (差引入金額) while
        another column holds money too (売却額, 運搬費): which one is meant is asked."""
        money = [c.name for c in self.columns if c.kind == "numeric" and money_named(c.name)]
        for pattern, owner in list(found.items()):
            said = next((w for w in _GENERIC_MONEY if re.fullmatch(pattern, w)), None)
            if (
                said is not None
                and owner[1] is None
                and without_brackets(normalize(owner[0])) != said
                and not _whole_reading(owner[0], said)
                and any(m != owner[0] for m in money)
            ):  # 金額(税込) is named 金額 itself: kept (and its twin 金額(税抜) asked)
                del found[pattern]

    def _value_terms(self, found: dict[str, tuple[str, str | None, int]], named: set[str]) -> None:
        """The values of category columns, each naming its column and itself."""
        for info in self.columns:
            if info.kind not in ("categorical", "boolean", "text"):
                continue
            for example in info.examples:
                value = normalize(example)
                if len(value) == 1 and not value.isdigit():  # 「高」: only in brackets
                    quoted = rf"(?<=[「『\"']){re.escape(value)}(?=[」』\"'])"
                    found.setdefault(quoted, (info.name, example, 1))
                    if re.fullmatch(r"[\u3400-\u9fff]", value):  # 「雨の日に作業した記録」
                        alone = rf"{_ALONE_BEFORE}{re.escape(value)}{_ALONE_AFTER}"
                        found.setdefault(alone, (info.name, example, 1))
                if len(value) >= 2 and not re.fullmatch(r"[\d.,:/ -]+", value):
                    pattern = value_pattern(value)
                    existing = found.get(pattern)
                    if existing is None or (existing[1] is None and pattern not in named):
                        # "overdue" is a status, not the word of days_overdue
                        found[pattern] = (info.name, example, len(value))
                if re.fullmatch(r"[\u3400-\u9fff]{2,4}", value):
                    # 「払い出した商品券」 of 払出, 「受け入れた分」 of 受入: said as a verb
                    verb = rf"(?:{okurigana(value)})(?=[ぁ-ん])"
                    found.setdefault(verb, (info.name, example, len(value)))

    def _english_value_terms(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """English for Japanese column names and category values (``ja_english_words``):
        "estimated amount" for 見積金額, "nagoya branch" for 名古屋支店, "gas" for ガス; a
        reading two names or values share, or one that is already a word of the data,
        names neither."""
        readings: dict[str, set[tuple[str, str | None]]] = {}
        stems: set[str] = set()
        for info in self.columns:
            name = without_brackets(normalize(info.name))
            for reading in english_readings(name) if is_japanese(name) else []:
                readings.setdefault(reading, set()).add((info.name, None))
            stem = _JA_STEM_TAIL.sub("", info.name).strip()
            if self.yes_value(info.name) is not None:
                # "withholding" for 源泉対象, "investigation" for 要調査: what a yes / no
                # column says is there or needed, read without the marks of the state
                stem = _flag_stem(info.name)
            if stem != info.name and is_japanese(stem) and info.kind != "numeric":
                # "employees" for 社員番号, "parking lot" for 駐車場名, "returned" for 返却有無:
                # what the number, name or yes / no is of (weaker than the name: it groups
                # only when a grouping is said, ``stem_terms``)
                for reading in english_readings(normalize(stem)):
                    readings.setdefault(reading, set()).add((info.name, None))
                    stems.add(reading)
            if info.kind != "categorical":
                continue
            for example in info.examples:
                for reading in english_readings(normalize(example)):
                    readings.setdefault(reading, set()).add((info.name, example))
        for reading, owners in readings.items():
            if reading in ("field", "fields", "column", "columns"):
                continue  # "which fields have gaps": the table's columns, not 圃場 or 欄
            pattern = _english_words_pattern(reading)
            if len(owners) == 1 and pattern not in found:
                owner, value = next(iter(owners))
                found[pattern] = (owner, value, len(reading))
                if reading in stems:
                    self.stem_terms.add(pattern)

    def _japanese_value_terms(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """Japanese for English category values (``ja_english_words``): 「東京」 for Tokyo,
        「航空」 for Air; a word two values share, or one already a word of the data, names
        neither."""
        words: dict[str, set[tuple[str, str]]] = {}
        for info in self.columns:
            if info.kind != "categorical":
                continue
            for example in info.examples:
                if example.isascii():
                    for word in japanese_words_for(example):
                        words.setdefault(word, set()).add((info.name, example))
        for word, owners in words.items():
            pattern = term_pattern(word)
            if len(owners) == 1 and pattern not in found:
                column, value = next(iter(owners))
                found[pattern] = (column, value, len(word))

    def _country_terms(self, found: dict[str, tuple[str, str | None, int]]) -> None:
        """A country said in another form than the data holds it (``countries``):
        "Thailand" or 「タイ」 for TH, 「メキシコ」 for Mexico; a form two values share, or one
        already a word of the data, names neither."""
        shown: dict[str, set[tuple[str, str]]] = {}
        unshown: dict[str, set[tuple[str, str]]] = {}  # countries the examples do not show
        for info in self.columns:
            if info.kind != "categorical":
                continue
            for example in info.examples:
                for form in country_aliases(example):
                    shown.setdefault(normalize(form), set()).add((info.name, example))
            for form, value in country_column_forms(info.examples).items():
                if value not in info.examples:
                    unshown.setdefault(normalize(form), set()).add((info.name, value))
        for forms in (shown, unshown):
            for form, owners in forms.items():
                pattern = value_pattern(form)
                if len(owners) == 1 and pattern not in found:
                    column, value = next(iter(owners))
                    found[pattern] = (column, value, len(form))

    def names(self, *kinds: str) -> list[str]:
        """Column names of the given kinds, in dataset order."""
        return [c.name for c in self.columns if c.kind in kinds]

    def kind(self, column: str) -> str:
        """The kind of a column ('text' when unknown)."""
        info = self.by_name.get(column)
        return info.kind if info else "text"

    def yes_value(self, column: str) -> str | None:
        """The "yes" of a column holding a yes/no pair (Yes/No, true/false, あり/なし), or
        None for any other column."""
        info = self.by_name.get(column)
        if info is None or info.kind not in ("categorical", "boolean") or len(info.examples) != 2:
            return None
        said = {normalize(e): e for e in info.examples}
        for yes, no in _YES_NO:
            if set(said) == {yes, no}:
                return said[yes]
        return None

    def no_value(self, column: str) -> str | None:
        """The "no" of a column holding a yes/no pair (No, false, なし, 無), or None."""
        yes = self.yes_value(column)
        info = self.by_name.get(column)
        if yes is None or info is None:
            return None
        return next(e for e in info.examples if e != yes)

    def row_nouns(self) -> list[str]:
        """The data's words for its rows, read from its identifier columns: "transfer" of
        ``transfer_id``, 「請求書」 of 請求書番号 (a name ending like an identifier whose
        values are all, or nearly all, distinct)."""
        most = max((c.unique for c in self.columns), default=0)
        found = []
        for info in self.columns:
            if info.kind == "numeric" or not most or info.unique < 0.9 * most:
                continue
            if info.name.isascii():
                words = name_tokens(info.name)
                if len(words) >= 2 and words[-1] in _ID_TOKENS and len(words[0]) >= 3:
                    found.append(words[0])
            elif (cut := _JA_ID_NAME.sub("", info.name)) != info.name and len(cut) >= 2:
                found.append(normalize(cut))
        return found

    def concept_column(self, concept: str) -> str | None:
        """The column holding a concept (e.g. 'sales'), if any."""
        return next((c.name for c in self.columns if c.concept == concept), None)

    def amount_column(self, values: Sequence[Mention] = ()) -> str | None:
        """The column of the table's amounts (the money an amount said alone is about):
        the money-out column when ``values`` name an expense on a ledger of money in and
        out (``_expense_outflow``); else the sales concept's, unless it holds "amount" only
        inside its name (``subsidy_amount_jpy``) beside one money column named as a total
        (``total_fee_jpy``), which is then the amount; with no sales column, the one column
        named as a total that is no total of hours, distance or counts (精算合計)."""
        outflow = self._expense_outflow(values)
        if outflow is not None:
            return outflow
        sales = self.concept_column("sales")
        totals = [
            name
            for name in self.names("numeric")
            if name != sales and money_named(name) and TOTAL_NAME.search(normalize(name))
        ]
        if sales is None:  # no sales column: the one total of money (精算合計 beside 燃料代)
            totals = [
                name
                for name in self.names("numeric")
                if TOTAL_NAME.search(normalize(name)) and not _MEASURE_NAME.search(name.lower())
            ]
            return totals[0] if len(totals) == 1 else None
        return totals[0] if sales in self.contained and len(totals) == 1 else sales

    def _expense_outflow(self, values: Sequence[Mention]) -> str | None:
        """The money-out column of a ledger that keeps money in and money out apart (入金 /
        出金, deposit / withdrawal) when the request names an expense (旅費交通費, 通信費,
        "postage expense"): an expense is paid out, so its amount is the outflow."""
        if not any(
            v.value is not None and not v.negated and _EXPENSE_VALUE.search(str(v.value).strip())
            for v in values
        ):
            return None
        numeric = self.names("numeric")
        out = [n for n in numeric if _OUTFLOW.search(n)]
        into = [n for n in numeric if _INFLOW.search(n)]
        return out[0] if len(out) == 1 and into else None


@dataclass
class Clause:
    """One part of the request that asks for one thing.

    ``text`` has the column names and values it mentions blanked out ("_"), so the
    words of a column called 予測売上 or "total" are not read as what is asked for.
    """

    start: int
    end: int
    text: str
    mentions: list[Mention] = field(default_factory=list)
    group_cols: list[str] = field(default_factory=list)


@dataclass
class ParsedRequest:
    """Everything read from the request text."""

    text: str
    lang: str
    rows: int
    index: ColumnIndex
    clauses: list[Clause]
    mentions: list[Mention]
    value_mentions: list[Mention]
    filters: list[dict[str, Any]]
    problems: list[str]
    assumptions: list[str]
    periods: list[PeriodFilter] = field(default_factory=list)

    def filters_for(self, clause: Clause) -> tuple[list[dict[str, Any]], str | None]:
        """The filters of one clause and, when it borrows another clause's period, that
        period's text.

        Value and numeric conditions apply to every clause. A period applies to the
        clause that states it; a clause stating none takes the period of the nearest
        earlier clause that states one, else of the nearest later one
        (「2024年の地域別売上と、月別の推移」: both 2024; 「2024年の地域別売上と、
        2025年の月別推移」: each its own year).
        """
        owner: dict[int, list[PeriodFilter]] = {}
        for item in self.periods:
            number = max((i for i, c in enumerate(self.clauses) if c.start <= item[0]), default=0)
            owner.setdefault(number, []).append(item)
        here = next(i for i, c in enumerate(self.clauses) if c is clause)
        borrowed = None
        if here not in owner and owner:
            earlier = [i for i in owner if i < here]
            source = max(earlier) if earlier else min(owner)
            borrowed = "・".join(dict.fromkeys(self.text[a:b].strip() for a, b, _ in owner[source]))
        else:
            source = here
        periods = [f for _, _, f in owner.get(source, [])]
        return periods + self.filters, borrowed


_AGGREGATION_WORD = re.compile(
    r"合計|総額|小計|平均|件数|最大|最小|中央値|総計|sum|total|average|mean|count|max|min|median",
    re.IGNORECASE,
)
_AUTO_NAMED = re.compile(r"(?:column|unnamed:?|列|項目|col)[\s_:]*\d+", re.IGNORECASE)
"""A column a program named (column_3, Unnamed: 4, 列1): only its whole name names it."""


def _scan(text: str, index: ColumnIndex, claimed: bytearray) -> list[Mention]:
    """Column and value mentions, longest term first, never overlapping."""
    found: list[Mention] = []
    for pattern, column, value in index.terms:
        for m in re.finditer(pattern, text):
            if any(claimed[m.start() : m.end()]):
                continue
            if value is None and text[max(0, m.start() - 1) : m.start()] == "何":
                continue  # 「何店舗」「何件」: a counter, not 店舗売上
            if (
                value is None
                and m.group(0).strip().lower() != column.lower()
                and (
                    _AGGREGATION_WORD.fullmatch(m.group(0).strip()) or _AUTO_NAMED.fullmatch(column)
                )
            ):
                continue  # 「合計」 is no mention of 控除合計; "columns" none of column_3
            claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
            common = (
                _COMMON_NOUN_BEFORE.search(text[: m.start()])
                and not LACKING_BEFORE.search(text[: m.start()])  # "don't have a city"
                # "invoices that had an overage", "with a subsidy applied": its yes
                and not (value is None and index.yes_value(column) is not None)
                and (value is not None or condition_at(text[m.end() :]) is None)
                and not (value is not None and _names_its_column(text[m.end() :], column))
                and not (value is not None and not value.isascii())  # "the 会社負担 rows"
                and not (value is not None and re.match(r"\s*(?:[?.!,]|$)", text[m.end() :]))
            )  # "a grade of 2", "a student ticket", "on a truck?": conditions
            including = value is not None and bool(
                _INCLUDING_AFTER.match(text[m.end() :])
                or _INCLUDING_BEFORE.search(text[: m.start()])
            )
            if common or including:
                continue  # "the price a shop charges", 「札幌も含めて」: not a condition
            negated = bool(
                _NEG_AFTER.match(text[m.end() :])
                or _NEG_BEFORE.search(text[: m.start()])
                or _EN_NEG_AFTER.match(text[m.end() :])
                or (_LEAVE_BEFORE.search(text[: m.start()]) and _OUT_AFTER.match(text[m.end() :]))
            )
            if negated and value is None and index.kind(column) == "numeric":
                continue  # "not counting usage fees", 「手数料は除いて」: that measure is not asked
            if value is not None and _AGGREGATED_BEFORE.search(text[: m.start()]):
                measure = _measure_named_like(value, index)
                if measure is not None:  # "total settled" with status Settled and settled_jpy
                    column, value, negated = measure, None, False
            found.append(
                Mention(
                    m.start(),
                    m.end(),
                    column,
                    value,
                    negated and value is not None,
                    guessed=value is None and pattern in index.stem_terms,
                )
            )
    return sorted(found, key=lambda mention: mention.start)


_AGGREGATED_BEFORE = re.compile(
    r"(?<![a-z])(?:total|sum of|average|avg|mean|median|max|maximum|min|minimum)\s+(?:the\s+)?$"
)


def _measure_named_like(value: str, index: ColumnIndex) -> str | None:
    """The one numeric column whose name begins with the word of a category value
    (``settled_jpy`` for the status Settled): "total settled" asks that amount."""
    said = value.strip().lower()
    owners = [
        name
        for name in index.names("numeric")
        if name.isascii() and (words := name_tokens(name)) and words[0] == said
    ]
    return owners[0] if len(owners) == 1 else None


def _names_its_column(after: str, column: str) -> bool:
    """True when the word after a value is a word of its column's name ("a student
    ticket" with ``ticket_type``): the value says which kind of the column's thing."""
    word = re.match(r"\s+([a-z]+)", after)
    if word is None or not column.isascii():
        return False
    said = word.group(1)
    return any(said in (token, token + "s", token + "es") for token in name_tokens(column))


def _qualified_group_mark(
    before: str,
    mention: Mention,
    index: ColumnIndex,
    mentions: list[Mention],
    masked: str | None = None,
    start: int = 0,
) -> re.Match[str] | None:
    """ "per booking channel": a group word, one plain word that names nothing (neither a
    column nor a category value: ``masked``, the clause's text from ``start`` with both
    blanked out), then a category column."""
    if index.kind(mention.column) == "numeric":
        return None
    found = _EN_GROUP_MARK_QUALIFIED.search(before)
    if found is None or found.group(1) in _FUNCTION_WORDS:
        return None
    word = mention.start - len(before) + found.start(1)
    if masked is not None and masked[word - start : word - start + 1] == "_":
        return None  # "billed by EMEA vendors": a value between, "by" says who billed
    return None if any(m.start <= word < m.end for m in mentions) else found


_COUNTED_GROUP = re.compile(
    r"(?<![a-z])(?:by|per|each|each of|for each of)\s+(?:the\s+)?((?:number|count) of)\s+(?=_)"
)


def _blank_counted_group(clause: Clause) -> None:
    """ "by number of adults": the words "number of" name the group, not a count."""
    text = clause.text
    for m in _COUNTED_GROUP.finditer(text):
        at = clause.start + m.end()
        if any(x.start == at and x.column in clause.group_cols for x in clause.mentions):
            text = text[: m.start(1)] + "_" * (m.end(1) - m.start(1)) + text[m.end(1) :]
    clause.text = text


_GROUP_TAIL = re.compile(
    r"([\u4e00-\u9fff\u30a1-\u30fa\u30fc]{1,4})(?=\s*(?:ごと|毎に|毎の|別に|別の|別で))"
)


def _group_tails(text: str, index: ColumnIndex, claimed: bytearray) -> list[Mention]:
    """「班ごとの」 with a column 担当班: a short word before a group mark that ends the name of
    exactly one category column names it."""
    found = []
    for match in _GROUP_TAIL.finditer(text):
        if any(claimed[match.start(1) : match.end(1)]):
            continue
        word = match.group(1)
        owners = [
            c.name
            for c in index.columns
            if c.kind in ("categorical", "text") and c.name != word and c.name.endswith(word)
        ]
        if len(owners) == 1:
            claimed[match.start(1) : match.end(1)] = b"\x01" * len(word)
            found.append(Mention(match.start(1), match.end(1), owners[0], None, False))
    return found


def _group_cols(text: str, clause: Clause, index: ColumnIndex) -> list[str]:
    """Columns the clause groups by: 「地域別」「地域と店舗ごと」, "by region and store"."""
    mentions = clause.mentions
    groups: list[str] = []
    for position, mention in enumerate(mentions):
        before = text[max(clause.start, mention.start - 40) : mention.start]
        after = re.sub(
            r"^\s*\([^()]{0,30}\)|^\s*[)\]」』】]", "", text[mention.end :]
        )  # 「支店（未入力は除く）ごと」, 「メニュー（benefit_type）別」
        ja_mark = _JA_GROUP_MARK.match(after) or _JA_GROUP_BEFORE.search(before)
        en_mark = _EN_GROUP_MARK.search(before) or _qualified_group_mark(
            before, mention, index, mentions, clause.text, clause.start
        )
        if not ja_mark and not en_mark:
            continue
        said = text[mention.start : mention.end]
        if index.kind(mention.column) == "datetime" and _ROWS_NOT_DATES.fullmatch(said):
            continue  # "across all invoices" (invoice_month): the rows, not their months
        if (
            en_mark
            and not ja_mark
            and index.kind(mention.column) == "numeric"
            and not (
                _EN_NUMERIC_GROUP_MARK.search(before)
                and any(
                    index.kind(m.column) == "numeric" and m.column != mention.column
                    for m in mentions
                )
            )
        ):
            continue  # "top products by revenue": the only numeric column is the metric
            # ("average price by tier": with another numeric column, it is grouped by)
        chain = [mention]
        step = -1 if ja_mark else 1
        other = position + step
        while 0 <= other < len(mentions):
            left, right = sorted((mentions[other], chain[-1]), key=lambda m: m.start)
            gap = re.sub(r"\s+|the|by", "", text[left.end : right.start])
            if gap not in _JOINERS or index.kind(mentions[other].column) == "numeric":
                break
            chain.append(mentions[other])
            other += step
        if ja_mark and _measure_to_aggregate(text, mention, index, mentions):
            continue
        for item in sorted(chain, key=lambda m: m.start):
            if item.column not in groups:
                groups.append(item.column)
    return groups


_BY_GROUP_WORD = re.compile(r"^\s*(?:別|ごと|毎|単位)")


def _measure_to_aggregate(
    text: str, mention: Mention, index: ColumnIndex, mentions: list[Mention]
) -> bool:
    """「資産区分別に期末帳簿価額で集計して」: a numeric column marked only by 「で集計」 is what
    is aggregated, not a grouping, when another column of the clause is grouped by 別/ごと."""
    if index.kind(mention.column) != "numeric" or _BY_GROUP_WORD.match(text[mention.end :]):
        return False
    return any(
        other is not mention and _BY_GROUP_WORD.match(text[other.end :]) for other in mentions
    )


_SEPARATOR = re.compile(
    rf"[。．!?？！;；\n、,，]|\.(?:\s|$)|(?<=[^{_HIRAGANA}\s])と(?!して|は|も|か)|"
    r"それから|あと、|および|及び|ならびに"
    r"|(?<![a-z])(?:and|also|then|plus|as well as|along with)(?![a-z])"
)


_BETWEEN = re.compile(r"(?<![a-z])between(?![a-z])(?!.*(?<![a-z])and(?![a-z]))")
_GROUP_WORD = re.compile(r"別|ごと|毎|(?<![a-z])(?:by|per|each|across)(?![a-z])")


# Words that start a new request ("、あと担当者別の件数も", "売上と、月別の推移"): the
# parts on either side are never glued together, whatever each asks for.
_HARD_SEPARATOR = re.compile(
    rf"(?<![{_HIRAGANA}])(?:あと(?:は)?|それと|それから|さらに|加えて|あわせて|併せて|また(?!は))"
    rf"(?![{_HIRAGANA}])|(?<=[^\s{_HIRAGANA}])と\s*[、,，]|(?<=[^\s])も\s*[、,，]"
)  # 「関東と、」 starts another request; 「規模別だと、」「比べると、」 (と after kana) do not


def split_clauses(
    text: str, family: Callable[[str], str | None], lang: str
) -> list[tuple[int, int]]:
    """Split at separators, then glue pieces that ask for nothing to a neighbour.

    Japanese puts the thing asked for last ("地域と店舗別の売上合計"), so an empty
    piece joins the next one; English puts it first ("correlation of a, b and c"),
    so it joins the previous one. Neighbouring aggregation pieces become one
    ("店舗毎の売上の中央値と最大値") unless each has its own grouping. Pieces are
    never glued across a word that starts a new request (``_HARD_SEPARATOR``:
    「あと」「それと」「と、」「も、」): each side is its own clause.

    Args:
        text: Normalised request text.
        family: What a piece asks for ("agg" for aggregation words), None for nothing.
        lang: "ja" or "en".
    """
    bounds = [0]
    for m in _HARD_SEPARATOR.finditer(text):
        bounds += [m.start(), m.end()]
    bounds.append(len(text))
    parts: list[list[int]] = []
    carry: int | None = None
    for i in range(0, len(bounds), 2):
        a, b = bounds[i], bounds[i + 1]
        piece = text[a:b]
        if not re.search(r"\w", piece):
            continue
        if carry is not None:
            a, carry = carry, None
        if family(piece) or _GROUP_WORD.search(piece):
            parts.append([a, b])
        elif lang == "ja" or not parts:
            carry = a  # 「関東と、関西の売上」: a part asking for nothing joins the next
        else:
            parts[-1][1] = b
    if carry is not None:
        if parts:
            parts[-1][1] = len(text)
        else:
            parts.append([carry, len(text)])
    found: list[tuple[int, int]] = []
    for a, b in parts:
        found += [(a + x, a + y) for x, y in _split_part(text[a:b], family, lang)]
    return found


# a share word with no grouping of its own after it (「割合」「割合を見たい」「構成比も出して」)
_SHARE_ALONE = re.compile(r"\s*(?:割合|構成比|比率|シェア)[^ごと別毎]{0,8}")


_CHART_FAMILIES = ("box", "hist", "line", "bar", "scatter")


def _chart_form_only(piece: str, family: Callable[[str], str | None]) -> bool:
    """Whether a piece only says how to draw what its neighbour asked: a chart kind with
    no column (masked ``_``) and no grouping of its own (「箱ひげで見たい」「棒グラフで」)."""
    return "_" not in piece and not _GROUP_WORD.search(piece) and family(piece) in _CHART_FAMILIES


def _split_part(text: str, family: Callable[[str], str | None], lang: str) -> list[tuple[int, int]]:
    """``split_clauses`` within one part (no hard separator inside)."""
    cuts = [0]
    for m in _SEPARATOR.finditer(text):
        if m.group() == "and" and _BETWEEN.search(text[cuts[-1] : m.start()]):
            continue  # "correlation between a and b" is one thing asked for
        cuts += [m.start(), m.end()]
    cuts.append(len(text))
    pieces = [
        (cuts[i], cuts[i + 1])
        for i in range(0, len(cuts), 2)
        if re.search(r"\w", text[cuts[i] : cuts[i + 1]])
    ]
    if not pieces:
        return []
    merged: list[list[int]] = []
    carry: int | None = None
    for a, b in pieces:
        start = a if carry is None else carry
        carry = None
        if family(text[a:b]):
            merged.append([start, b])
        elif lang == "ja" or not merged:
            carry = start
        else:
            merged[-1][1] = b
    if carry is not None:
        if merged:
            merged[-1][1] = pieces[-1][1]
        else:
            merged.append([carry, pieces[-1][1]])
    result: list[list[int]] = []
    for a, b in merged:
        if result:
            prev = text[result[-1][0] : result[-1][1]]
            both_grouped = _GROUP_WORD.search(prev) and _GROUP_WORD.search(text[a:b])
            if family(prev) == family(text[a:b]) == "agg" and not both_grouped:
                result[-1][1] = b
                continue
            if family(prev) == "agg" and _SHARE_ALONE.fullmatch(text[a:b]):
                result[-1][1] = b  # 「区分ごとの件数と割合」: the counts with their shares
                continue
            if family(prev) == "agg" and _chart_form_only(text[a:b], family):
                result[-1][1] = b  # 「区分ごとの費用のばらつき、箱ひげで見たい」: drawn so
                continue
        result.append([a, b])
    return [(a, b) for a, b in result]


def parse_request(
    text: str,
    summary: dict[str, Any],
    family: Callable[[str], str | None],
    phrases: Callable[[str], list[tuple[int, int]]],
    year_hint: int | None = None,
) -> ParsedRequest:
    """Read the request: columns, values, filters and clauses.

    Args:
        text: The request as the user wrote it.
        summary: The dataset summary (``columns`` with name/kind/examples).
        family: What a piece of text asks for (see ``split_clauses``).
        phrases: (start, end) of the words that say what is asked for ("standard
            deviation", 「標準偏差」): a category value inside one is no condition.
    """
    index = ColumnIndex(summary)
    norm = normalize(text)
    lang = "ja" if is_japanese(text) else "en"
    # A year inside a column's name ("GDP per capita in 2007" ~ gdpPercap_2007) picks
    # that column; it is no period.
    named_years = bytearray(len(norm))
    # A condition on a numeric column (「耐用年数が5年の」) is no period either.
    conditions = bytearray(len(norm))
    first_read = _scan(norm, index, bytearray(len(norm)))
    for m in first_read:  # a year or a relative period in a column's name is no period
        if m.value is not None and re.search(r"\d", m.value) and m.end - m.start >= 4:
            # 「2024年度分」 with a 年度 column holding 「2024年度」: the value, not dates
            named_years[m.start : m.end] = b"\x01" * (m.end - m.start)
        elif m.value is None and (
            re.search(r"\d{4}", norm[m.start : m.end])
            or RELATIVE_PERIOD.search(norm[m.start : m.end])
        ):
            named_years[m.start : m.end] = b"\x01" * (m.end - m.start)
        elif m.value is None and index.kind(m.column) == "numeric":
            found = condition_at(norm[m.end :])
            if found is not None:
                conditions[m.end : m.end + found[2]] = b"\x01" * found[2]
    taken = bytearray(n | c for n, c in zip(named_years, conditions, strict=True))
    # "invoices" (invoice_month) names the rows, not the date a period is on
    dating = [m for m in first_read if not _ROWS_NOT_DATES.fullmatch(norm[m.start : m.end])]
    dated = _dates_named_first(dating, index)
    by_event = _dates_said_by_their_event(
        norm, index.names("datetime"), frozenset(normalize(c.name) for c in index.columns)
    )
    if len(by_event) == 1 and not any(
        m.value is None and m.column in index.names("datetime") for m in dating
    ):
        dated = list(dict.fromkeys(by_event + dated))
    periods, problems, assumptions = date_filters(
        norm,
        dated,
        [e for c in index.columns if c.kind == "datetime" for e in c.examples],
        taken,
        lang,
        year_hint,
    )
    claimed = bytearray(int(t and not n) for t, n in zip(taken, named_years, strict=True))
    for verb in _PHRASAL_VERB.finditer(norm):  # "leave out": no unused_leave_days
        claimed[verb.start(1) : verb.end(1)] = b"\x01" * (verb.end(1) - verb.start(1))
    asked = phrases(norm)
    scanned = _condition_values(_scan(norm, index, claimed), norm, asked, index, claimed)
    scanned = [m for m in scanned if not _lowercase_acronym(m, text, norm)]
    scanned = _without_spend_verbs(norm, index, scanned)
    scanned = _negated_flags(norm, index, scanned, claimed)
    scanned = sorted(scanned + _loanwords(norm, index, claimed), key=_start)
    scanned = sorted(scanned + _yen_said(norm, index, scanned, claimed), key=_start)
    prefixed, unsure, read_as = _value_prefixes(norm, index, claimed, lang)
    problems += unsure
    assumptions += read_as
    scanned = sorted(scanned + prefixed, key=_start)
    scanned = sorted(scanned + _similar(norm, index, claimed, asked, family), key=_start)
    scanned = sorted(scanned + _group_tails(norm, index, claimed), key=_start)
    scanned = sorted(scanned + _one_letter_values(norm, index, scanned, claimed), key=_start)
    scanned = _negated_mentions(norm, index, scanned)  # those read since (「保険に入ってない」)
    scanned = [_directed(m, norm, index, scanned) for m in scanned]
    scanned = _values_before_their_column(norm, index, scanned)
    scanned = _one_measure_per_phrase(norm, index, scanned)
    problems += _direction_unsaid(scanned, norm, index, lang)
    values = [m for m in scanned if m.value is not None]
    numeric, used, spans = numeric_filters(norm, scanned, index.kind)
    blanks, blank_used, blank_spans = null_filters(norm, [m for m in scanned if m not in used])
    blanks = [_yes_when_filled(f, index) for f in blanks]
    numeric, used, spans = numeric + blanks, used | blank_used, spans + blank_spans
    held, held_used, held_spans = contains_filters(
        norm, [m for m in scanned if m not in used], index.kind
    )
    numeric, used, spans = numeric + held, used | held_used, spans + held_spans
    # 「備考に「往復」と書いてある」: the quoted word is held in the column, not its value
    values = [v for v in values if not any(a <= v.start < b for a, b in held_spans)]
    for a, b in spans:
        claimed[a:b] = b"\x01" * (b - a)
    is_numeric = lambda name: index.kind(name) == "numeric"  # noqa: E731
    named = next((m.column for m in scanned if m not in used and is_numeric(m.column)), None)
    money = money_column(index.names("numeric"), is_numeric, named, index.amount_column(values))
    bare, left, guessed = bare_thresholds(norm, claimed, money, lang, index.names("numeric"))
    numeric += bare
    numeric += _events_done(norm, index, periods, numeric)
    problems += left
    assumptions += guessed
    # "licences purchased in 2024": the verb of a date column's event, said with its period,
    # is no measure (seats_purchased)
    used |= {
        m
        for m in scanned
        if m.value is None
        and index.kind(m.column) == "numeric"
        and re.fullmatch(r"[a-z]+ed", norm[m.start : m.end])
        and any(p[0] >= m.end and p[0] - m.end <= 12 for p in periods)
        and any(
            common_prefix(token, norm[m.start : m.end]) >= 4
            for date in index.names("datetime")
            for token in name_tokens(date)
        )
    }
    # "where more than 10,000 yen was claimed": the verb named the condition's column only
    used |= {
        m
        for m in scanned
        if m.value is None
        and any(f["col"] == m.column for f in bare)
        and re.search(r"[a-z]ed$", norm[m.start : m.end])
    }
    filtered_cols = {m.column for m in values}
    rows = int(summary.get("rows") or 0)
    mentions = [
        m
        for m in scanned
        if m.value is None
        and m not in used
        and not _names_the_rows(m, norm, index, rows)
        and not (m.column in filtered_cols and _adjacent_value(m, values, norm))
        and not _money_word(m, norm, index)
    ]
    masked = _masked(norm, [(m.start, m.end) for m in scanned] + blank_spans)
    clauses = []
    for a, b in split_clauses(masked, family, lang):
        clause = Clause(a, b, masked[a:b], [m for m in mentions if a <= m.start < b])
        clause.group_cols = _group_cols(norm, clause, index)
        _blank_counted_group(clause)
        clauses.append(clause)
    asides = _aside_spans(masked, family) + [
        (c.start, c.end) for c in clauses if family(c.text) == "oos"
    ]
    values = [v for v in values if not any(a <= v.start < b for a, b in asides)]
    return ParsedRequest(
        text=norm,
        lang=lang,
        rows=int(summary.get("rows") or 0),
        index=index,
        clauses=clauses,
        mentions=mentions,
        value_mentions=values,
        filters=value_filters(values) + numeric,
        problems=problems,
        assumptions=assumptions,
        periods=periods,
    )


# Where a part of the request ends: a sentence ("質問です。", "…; I need it tomorrow",
# "… - median by stage") or a reason or purpose said before the request (「…に報告するので、」
# 「…に出す資料として、」).
_SENTENCE_END = re.compile(r"[。．!?？！;；]|\.(?:\s|$)|\s[-–—]\s")
_REASON_END = re.compile(r"(?:ので|ため(?:に)?|として)\s*[、,，]")
# Words that restrict the rows: a part saying one of them is a condition, wherever it stands.
_RESTRICTS = re.compile(
    r"だけ|のみ|限定|絞|以外|除|抜き|対象|について|に関し"
    r"|(?<![a-z])(?:only|just|exclud\w*|except|limit\w*|restrict\w*|where|whose|with|without)"
    r"(?![a-z])"
)
_QUESTION = re.compile(
    r"[?？]|何|いくら|どれ|どの|どこ|いつ|(?<![a-z])(?:how|what|which|who|when|where)(?![a-z])"
)


def _aside_spans(masked: str, family: Callable[[str], str | None]) -> list[tuple[int, int]]:
    """The parts of the request that only say why or when the user needs it: a reason or
    purpose before the request (「本社経理に報告するので、」「本社の役員会に出す資料として、」)
    or a sentence of its own that asks for nothing ("質問です。", "I need it before lunch
    tomorrow"), when another part asks for something. A category value said there (本社,
    "lunch") is who the result is for, not a condition; a part with a word that
    restricts (だけ, 以外, "only") or a question (「正社員は何人いる？」) stays a condition."""
    cuts = sorted(
        {0, len(masked)}
        | {m.end() for m in _SENTENCE_END.finditer(masked)}
        | {m.end() for m in _REASON_END.finditer(masked)}
    )
    parts = [(a, b) for a, b in itertools.pairwise(cuts) if masked[a:b].strip()]
    if len(parts) < 2:
        return []
    quiet = [
        (a, b)
        for a, b in parts
        if family(masked[a:b]) is None
        and not _GROUP_WORD.search(masked[a:b])
        and not _RESTRICTS.search(masked[a:b])
        and not _QUESTION.search(masked[a:b])
    ]
    return quiet if len(quiet) < len(parts) else []


# A yes/no column said with a negation: 「領収書なし」「休日出勤がない」「未承認」「源泉徴収対象
# じゃない／ではない／外／になっていない」「課税対象に該当しない」, "unapproved", "not approved",
# "non-billable".
_JA_LACKS_AFTER = re.compile(
    r"^[」』】\]）)\"'`]?\s*(?:が|の)?\s*(?:の?対象|に該当)?\s*"
    r"(?:(?:じゃ|では|で|に(?:なって(?:い)?|は)?|(?:が|の)?付いて(?:い)?|がついて(?:い)?)?"
    r"(?:なし|無し|無い|ない|ありません)"
    r"|無(?![\u3400-\u9fff])|外(?![\u3400-\u9fff])|以外|しない|しません"
    r"|まだ(?=\s*(?:の|な|で|です|だ|[、,。?]|$))"  # 「上長承認がまだのもの」: not yet
    # a verb of it negated: 「保険に入ってない」「社宅を使っていない」「保険加入していない」
    # 「請求書とマッチしてない」
    r"|(?:に|を|が|は|と)?\s*(?:まだ|未だ)?\s*[\u3400-\u9fff\u30a1-\u30fc]{0,4}[ぁ-ん]{0,3}?"
    r"(?:(?:て|で)(?:い|は)?(?:ない|ません|なかった)|(?:[わらかさたなまばが]|し|され)(?:ない|ず|なかった)))"
)
_JA_NOT_YET_BEFORE = re.compile(r"未\s*$")
_EN_NOT_BEFORE = re.compile(
    r"(?<![a-z])(?:un|non-?|not\s+(?:yet\s+)?(?:been\s+)?|never\s+(?:been\s+)?|without\s+(?:a\s+|any\s+)?"
    r"|(?:with\s+|have\s+|has\s+)?no\s+"
    r"|(?:is|are|was|were|has|have|had|do|does|did)(?:n't|\s+not)\s+(?:yet\s+)?(?:been\s+)?(?:yet\s+)?"
    r"|(?:is|are|was|were)n't\s+"
    # "excluding renewals", "leave out the renewals": the rows where it is yes left out
    r"|(?:excluding|except(?:\s+for)?|other\s+than|apart\s+from|aside\s+from|minus"
    r"|exclude|ignore|ignoring|skip|skipping|leave\s+out|leaving\s+out|drop|dropping|omit"
    r"|omitting|not\s+counting|not\s+including)\s+(?:the\s+|any\s+|all\s+)?)$"
)
# 「除却したものは除いて」「精算済のは外して」: the rows where it is yes left out.
_JA_LEFT_OUT_AFTER = re.compile(
    r"^\s*(?:し|され|さ)?(?:た|ている|てる)?\s*(?:もの|分|行|の)?\s*(?:は|を)\s*"
    r"(?:除|外|抜|省|消|含めない|入れない)"
)
# "auto-renew switched off", "approval is false": the yes/no column said to be off.
_EN_OFF_AFTER = re.compile(
    r"^[\"'`\])]?\s*(?:is\s+|are\s+|was\s+|were\s+|set\s+)?(?:(?:switched|turned|set)\s+off|off|disabled"
    r"|false|not\s+set|excluded|left\s+out|aside|removed|not\s+included|not\s+counted)(?![a-z])"
)


def _negated_mentions(text: str, index: ColumnIndex, mentions: list[Mention]) -> list[Mention]:
    """The mentions of yes/no columns said with a negation before or after them, read as
    the column's "no" value (the others as they are)."""
    found = list(mentions)
    for i, mention in enumerate(mentions):
        no = index.no_value(mention.column)
        if mention.value is not None or no is None:
            continue
        rest = text[mention.end :]
        after = (
            _JA_LACKS_AFTER.match(rest)
            or _EN_OFF_AFTER.match(rest)
            or _JA_LEFT_OUT_AFTER.match(rest)
        )
        before = _JA_NOT_YET_BEFORE.search(text[: mention.start]) or _EN_NOT_BEFORE.search(
            text[: mention.start]
        )
        if after:
            found[i] = dataclasses.replace(mention, end=mention.end + after.end(), value=no)
        elif before:
            found[i] = dataclasses.replace(
                mention, start=mention.start - len(before.group(0)), value=no
            )
    return found


def _yes_when_filled(condition: dict[str, Any], index: ColumnIndex) -> dict[str, Any]:
    """「保険に入っている」 of a yes/no column with no blank cell: its yes, not "filled in"
    (which every row is)."""
    column = str(condition["col"])
    yes, info = index.yes_value(column), index.by_name.get(column)
    if condition["op"] == "not_null" and yes is not None and info is not None and not info.missing:
        return {"col": column, "op": "==", "value": yes}
    return condition


def _negated_flags(
    text: str, index: ColumnIndex, scanned: list[Mention], claimed: bytearray
) -> list[Mention]:
    """A yes/no column named with a negation holds the rows where it is "no": 「領収書なしの
    支出」 (領収書 有/無) → 領収書 == 無, "unapproved invoices" (approved Y/N) → approved == N.
    Named with no negation it is "yes" (``StepBuilder._yes_no_predicates``)."""
    found = _negated_mentions(text, index, scanned)
    for info in index.columns:  # 「未払い」「支払いが済んでない」 of 支払済; 「未入金」 of 入金済
        no, yes = index.no_value(info.name), index.yes_value(info.name)
        stem = re.sub(r"済み?$", "", normalize(info.name))
        if no is None or yes is None or stem == normalize(info.name) or len(stem) < 2:
            continue
        shorter = "|".join(re.escape(stem[i:]) for i in range(len(stem)))  # 支払 → 払
        patterns = (
            rf"未(?:{shorter})い?",
            rf"{re.escape(stem)}(?:して(?:い)?ない|されて(?:い)?ない|してません|って(?:い)?ない|っていません)",
            rf"{re.escape(stem)}い?\s*(?:が|は)?\s*(?:済んで(?:い)?ない|済んでません|終わって(?:い)?ない"
            r"|まだ|未了|未済)",
        )
        for m in (m for rx in patterns for m in re.finditer(rx, text)):
            if not any(claimed[m.start() : m.end()]):
                claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
                found = [
                    f
                    for f in found
                    if not (f.column == info.name and f.start < m.end() and m.start() < f.end)
                ]
                found.append(Mention(m.start(), m.end(), info.name, no))
    for info in index.columns:  # "unapproved": the prefix hides the word from the scan
        no = index.no_value(info.name)
        words = name_tokens(info.name) if info.name.isascii() else []
        if no is None:
            continue
        if not info.name.isascii():  # "unpaid" for 支払済 (its English "paid")
            words = [r for r in english_readings(normalize(info.name)) if " " not in r][:1]
        if len(words) != 1:
            continue
        for m in re.finditer(rf"(?<![a-z])(?:un|non-?)({re.escape(words[0])})(?![a-z])", text):
            if not any(claimed[m.start() : m.end()]):
                claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
                found.append(Mention(m.start(), m.end(), info.name, no))
    return sorted(found, key=_start)


_ONE_LETTER_AFTER = re.compile(
    r"\s*(?:が|は|=|:|is\s+|was\s+|of\s+)?\s*([a-z0-9\u30a0-\u30ff\u3400-\u9fff])"
    r"(?![a-z0-9\u30a0-\u30ff\u3400-\u9fff])"
)


def _one_letter_values(
    text: str, index: ColumnIndex, scanned: list[Mention], claimed: bytearray
) -> list[Mention]:
    """A one-letter value said right after its column (「判定がＤの人」, "rated D",
    "rank = A"): too short to be read anywhere else, it is read there."""
    found = []
    for mention in scanned:
        info = index.by_name.get(mention.column)
        if mention.value is not None or info is None or info.kind != "categorical":
            continue
        said = _ONE_LETTER_AFTER.match(text, mention.end)
        if said is None or any(claimed[said.start(1) : said.end(1)]):
            continue
        value = next((e for e in info.examples if normalize(e) == said.group(1)), None)
        if value is not None:
            claimed[said.start(1) : said.end(1)] = b"\x01"
            found.append(Mention(said.start(1), said.end(1), mention.column, value))
    return found


# English words a request asks with ("the page count", "the total"): never a loanword of
# the data ("count" shares the consonants of カウンター).
_REQUEST_WORDS = frozenset(
    {
        "count",
        "counts",
        "total",
        "totals",
        "average",
        "averages",
        "number",
        "numbers",
        "amount",
        "amounts",
        "share",
        "shares",
        "ratio",
        "ranking",
        "value",
        "values",
        "trend",
        "chart",
        "graph",
        "group",
        "median",
        "maximum",
        "minimum",
        "largest",
        "highest",
        "lowest",
        "smallest",
    }
)


_KIND_OF_UNIT = re.compile(
    r"部|課|室|係|班|店|支店|本店|本部|事業部|センター|チーム|グループ|費|料|代|便|プラン|コース"
)


def _loanwords(text: str, index: ColumnIndex, claimed: bytearray) -> list[Mention]:
    """English words said for katakana words of the data (``katakana``): "royalty" for
    ロイヤリティ額, "operator" for オペレーター, "referrals" for the value リファラル; taken
    only when one column or value shares the word's consonants."""
    targets: dict[str, set[tuple[str, str | None]]] = {}
    for info in index.columns:
        for word in katakana_words(info.name):
            targets.setdefault(skeleton(word), set()).add((info.name, None))
        if info.kind == "categorical":
            for value in info.examples:
                words = katakana_words(value)
                for word in words:
                    rest = normalize(value).replace(normalize(word), "", 1).strip()
                    # マーケティング部 is "marketing", 大和プリント no "print": the rest of the
                    # value may only say what kind of unit it is
                    if len(words) == 1 and (not rest or _KIND_OF_UNIT.fullmatch(rest)):
                        targets.setdefault(skeleton(word), set()).add((info.name, value))
    found = []
    for m in re.finditer(r"(?<![a-z])[a-z]{5,}(?![a-z])", text):
        if any(claimed[m.start() : m.end()]) or m.group(0) in _REQUEST_WORDS:
            continue
        word = m.group(0)
        key = skeleton(word[:-1] if word.endswith("s") and not word.endswith("ss") else word)
        owners = targets.get(key, set())
        if len(owners) == 1 and (len(key) >= 3 or len(word) >= 6):
            owner, said = next(iter(owners))
            claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
            found.append(Mention(m.start(), m.end(), owner, said))
    return found


_JA_WORD = re.compile(r"[\u3400-\u9fff\u30a0-\u30ffー々]{2,}")
# What may follow the word a value is said by: the kind of place or body it is (名古屋 of
# 名古屋支店, 札幌 of 札幌市水道局) or one character, not more of what it is about (修繕
# of 修繕費予算 is the subject of every row of a repair ledger, not the budget 修繕費予算).
_VALUE_REST = re.compile(
    r"\s*(?:[市区町村県府都]|市役所|区役所)?\s*(?:本社|本店|支店|支社|営業所|出張所|事業所|事務所"
    r"|店|センター|工場|倉庫|物流センター|dc|拠点|本部|事業部|部|課|室|局|水道局|ガス|電力|病院"
    r"|クリニック|医院|校|学校|大学|園|駅|ビル|会館|ホール|ホテル|店舗|寮|社宅|研究所|営業部"
    # the kind of company (佐川 of 佐川急便, 三光 of 三光印刷)
    r"|急便|運輸|物流|運送|商事|産業|工業|印刷|電機|建設|銀行|信金|証券|生命|損保"
    r"|[a-z0-9]+|.)?"  # or one more character: 首都高 of 首都高速
)


def _one_measure_per_phrase(text: str, index: ColumnIndex, scanned: list[Mention]) -> list[Mention]:
    """Two numeric columns named by the words of one phrase ("amount written off",
    "received amount") are one measure: the column written whole ("amount" of ``amount``)
    over a word of another's name (received of ``qty_received``), else the column named
    by a word of its own (written off of ``WrittenOff``) over one named by a generic word
    ("amount" of ``InvoiceAmount``)."""
    measures = [m for m in scanned if m.value is None and index.kind(m.column) == "numeric"]
    dropped: set[int] = set()
    for left, right in itertools.pairwise(measures):
        if left.column == right.column or text[left.end : right.start].strip():
            continue
        said = {id(m): normalize(text[m.start : m.end]) for m in (left, right)}
        whole = [m for m in (left, right) if said[id(m)] == normalize(m.column)]
        generic = [m for m in (left, right) if said[id(m)] in _GENERIC_TOKENS and m not in whole]
        if len(whole) == 1:
            dropped.add(id(right if whole[0] is left else left))
        elif len(generic) == 1:
            dropped.add(id(generic[0]))
    return [m for m in scanned if id(m) not in dropped]


# 「円でいくら」「円貨で」「円ベース」 "in yen": the amount in yen, not a number of yen
_YEN_SAID = re.compile(
    r"(?<![\d万千百億])円(?:で|貨|ベース|建て?|換算)|(?<![a-z])in (?:yen|jpy)(?![a-z])"
)
_YEN_NAME = re.compile(r"円|(?<![a-z])(?:jpy|yen)(?![a-z])")


def _yen_said(
    text: str, index: ColumnIndex, scanned: list[Mention], claimed: bytearray
) -> list[Mention]:
    """The amount asked "in yen" of a table with one numeric column in yen among amounts in
    other currencies (外貨金額 and 円換算額): that column, when no numeric column is named."""
    if any(m.value is None and index.kind(m.column) == "numeric" for m in scanned):
        return []
    yen = [name for name in index.names("numeric") if _YEN_NAME.search(name.lower())]
    if len(yen) != 1:
        return []
    for m in _YEN_SAID.finditer(text):
        if not any(claimed[m.start() : m.end()]):
            claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
            return [Mention(m.start(), m.end(), yen[0])]
    return []


def _value_prefixes(
    text: str, index: ColumnIndex, claimed: bytearray, lang: str
) -> tuple[list[Mention], list[str], list[str]]:
    """Category values said by their first word (「名古屋のガス代」 with 拠点 名古屋支店): a
    word no term claimed that begins exactly one value of the columns whose every value
    the summary lists is that value; one that begins values of several columns is asked
    (「札幌」: 拠点 札幌営業所 or 供給会社 札幌市水道局?), never dropped. Returns the
    values read, the questions and how each word was read (an assumption shown)."""
    found: list[Mention] = []
    problems: list[str] = []
    read_as: list[str] = []
    listed = [
        c for c in index.columns if c.kind == "categorical" and 0 < c.unique <= len(c.examples)
    ]
    names = [normalize(c.name) for c in index.columns]
    for m in _JA_WORD.finditer(text):
        word = m.group(0)
        if any(claimed[m.start() : m.end()]) or any(word in name for name in names):
            continue
        if len(word) >= 3 and word.endswith("分"):  # 「佐川分だけで」: 佐川's share of the rows
            word = word[:-1]
        begun = [
            (c.name, value)
            for c in listed
            for value in c.examples
            if normalize(value).startswith(word)
            and _VALUE_REST.fullmatch(normalize(value)[len(word) :])
        ]
        if len(begun) == 1:
            claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
            found.append(Mention(m.start(), m.end(), begun[0][0], begun[0][1]))
            column, value = begun[0]
            read_as.append(
                f"「{word}」は{column}「{value}」と解釈"
                if lang == "ja"
                else f"'{word}' read as {column} '{value}'"
            )
        elif len(begun) > 1:
            choices = "、".join(f"{column}「{value}」" for column, value in begun[:4])
            problems.append(
                f"「{word}」はどれのことですか？（候補: {choices}）"
                if lang == "ja"
                else f"Which one is '{word}'? (candidates: {choices})"
            )
    return found, problems, read_as


# A verb of leaving rows out whose first word may be a word of a column name
# (unused_leave_days, set_code): "leave out the blanks", "setting aside the refunds".
_PHRASAL_VERB = re.compile(
    r"(?<![a-z])(leave|leaving|left|set|setting|take|taking)\s+(?:out|aside)(?![a-z])"
)


def _dates_named_first(mentions: list[Mention], index: ColumnIndex) -> list[str]:
    """The date columns, those the request names first, in the order it names them: a
    period applies to the date it is said of (「3月末までに満了する契約」 with 契約開始日 and
    契約終了日: 満了 is the end date's word; "paid in 2025": ``paid_date``), else to the
    first date column of the table."""
    dates = index.names("datetime")
    named = [m.column for m in mentions if m.value is None and m.column in dates]
    return list(dict.fromkeys(named + dates))


def _dates_said_by_their_event(
    text: str, dates: list[str], names: frozenset[str] = frozenset()
) -> list[str]:
    """Date columns whose event the request says (「1月に入金があった分」 names 入金日,
    「納付があった」 納付日, 「2024年中に支払った分」 支払日): the name without its date word,
    said as a word or verb of its own; in English a verb in the past said of a word of
    the name ("decided in 2025": ``decision_date``, "approved": ``approval_date``)."""
    said = []
    verbs = {_EN_IRREGULAR.get(w, w[:-2]) for w in re.findall(r"[a-z]{4,}ed\b|paid\b", text)}
    # "write-offs": writeoff; not a word that is a column's whole name ("decision")
    nouns = set(re.findall(r"[a-z]{5,}", text.replace("-", ""))) - names
    by_noun: list[str] = []  # the event said as a noun only: when no verb says one
    for name in dates:
        if name.isascii():
            events = [t for t in name_tokens(name) if t not in _EN_DATE_WORDS]
            if any(common_prefix(t, v) >= min(4, len(t), len(v)) for t in events for v in verbs):
                said.append(name)
            elif any(w.startswith(t) for t in events if len(t) >= 5 for w in nouns):
                by_noun.append(name)  # "how many write-offs in March": WriteoffDate
            continue
        event = re.sub(r"(?:年月日|日付|日時|年月|日|月)$", "", name)
        if (
            len(event) >= 2
            and event != name
            and re.search(
                rf"{okurigana(event)}[いけ]?"
                rf"(?:が|の|を|が?あっ|され|した|し済|済|日|った|われ|って|た|だけ|のみ|分)",
                text,
            )
        ):
            said.append(name)
    return said or by_noun


_EN_DATE_WORDS = frozenset({"date", "on", "at", "day", "dt", "time", "timestamp"})
_EN_IRREGULAR = {"paid": "pay"}


_DATE_TAIL = re.compile(r"(?:年月日|日付|日時|年月|日)$")
_JA_DONE = r"(?:済み?|され(?:た|ている|てる|ました)|した(?:もの|分|の)|しました|してある)"
_JA_NOT_DONE = (
    r"(?:され(?:て(?:い)?ない|ていません|ず)|して(?:い)?ない|していません|が?まだ(?:の|です)?"
    r"|前の|未了)"
)


def _events_done(
    text: str, index: ColumnIndex, periods: list[Any], filters: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """「返却済みの貸与」「返却された分」, "rentals that have been returned": the rows whose
    date of that event is filled in; 「未返却」「返却されていない」, "not returned yet": the
    rows where it is blank. Only when no period is said (which is a condition on the date
    itself) and no other column (a 返却有無 flag) holds the event."""
    if periods:
        return []
    found: list[dict[str, Any]] = []
    for name in index.names("datetime"):
        if name.isascii():
            found += _english_event_done(text, index, name, filters)
            continue
        event = _DATE_TAIL.sub("", normalize(name))
        if len(event) < 2 or event == normalize(name):
            continue
        if any(f["col"] == name for f in filters) or any(
            event in normalize(c.name) for c in index.columns if c.name != name
        ):
            continue
        said = re.escape(event)
        past = [r for r in english_readings(event) if re.fullmatch(r"[a-z]+ed", r)]
        no = [rf"未\s*{said}", rf"{said}\s*(?:が|は)?\s*{_JA_NOT_DONE}"]
        yes = [rf"{said}\s*{_JA_DONE}"]
        for word in past:
            no.append(
                rf"(?<![a-z])(?:not|n't|never)\s+(?:yet\s+)?(?:been\s+)?{word}(?![a-z])"
                rf"|(?<![a-z]){word}\s+yet(?![a-z])|(?<![a-z])un{word}(?![a-z])"
            )
            yes.append(rf"(?<![a-z])(?:been|already)\s+{word}(?![a-z])")
        said_no = re.search("|".join(no), text)
        hit = said_no or re.search("|".join(yes), text)
        if hit is None:
            continue
        # 「解約済みのを除いて」「未返却のものは除いて」: the rows said are left out
        left_out = _JA_LEFT_OUT_AFTER.match(text[hit.end() :]) is not None
        found.append(
            {"col": name, "op": "is_null" if bool(said_no) == (not left_out) else "not_null"}
        )
    return found


_EN_NOT_DONE_BEFORE = re.compile(
    r"(?:(?:not|n't|never)\s+(?:yet\s+)?(?:been\s+)?|(?:waiting|wait)\s+(?:for|on)\s+"
    r"(?:an?\s+|the\s+|their\s+|its\s+)?|awaiting\s+(?:an?\s+|the\s+|their\s+)?"
    r"|pending\s+|without\s+(?:an?\s+|the\s+)?|no\s+)$"
)
_EN_NOT_DONE_AFTER = re.compile(r"^\s+(?:yet|(?:is|are|still)\s+(?:pending|outstanding))\b")
_EN_DONE_BEFORE = re.compile(r"(?:been|already)\s+$")


def _english_event_done(
    text: str, index: ColumnIndex, name: str, filters: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """ "still waiting for approval", "not yet approved", "no approval yet" with an
    ``Approval Date`` column: the rows whose date of that event is blank; "already
    approved" those where it is filled in. The event is the name's one word besides its
    date word, said in any form of it (approval ~ approved); never when another column
    holds the same word (an ``approved`` flag) or the date already has a condition."""
    events = [t for t in name_tokens(name) if t not in _EN_DATE_WORDS]
    if len(events) != 1 or len(events[0]) < 4 or any(f["col"] == name for f in filters):
        return []
    event = stem(events[0])
    if any(
        c.name != name and event in {stem(t) for t in name_tokens(c.name)}
        for c in index.columns
        if c.name.isascii()
    ):
        return []
    for m in re.finditer(r"[a-z]{4,}", text):
        if stem(m.group()) != event:
            continue
        before, after = text[max(0, m.start() - 30) : m.start()], text[m.end() :]
        if _EN_NOT_DONE_BEFORE.search(before) or _EN_NOT_DONE_AFTER.match(after):
            return [{"col": name, "op": "is_null"}]
        if _EN_DONE_BEFORE.search(before):
            return [{"col": name, "op": "not_null"}]
    return []


_SPEND_VERB = re.compile(r"spend|spent|spending|cost")
_SPEND_SUBJECT = re.compile(
    r"(?<![a-z])(?:we|i|they|you|did|do|does|have|has|had|to|those|these|it|that)\s+$"
)


def _without_spend_verbs(text: str, index: ColumnIndex, mentions: list[Mention]) -> list[Mention]:
    """ "What did we spend on registration fees", "what did we spend on shipping", "what
    did those cost": "spend" or "cost" (a word of cost columns) is the verb there, not
    ``travel_cost``, when the thing spent on is another measure named, or when the table
    holds other money columns (the amount asked is then the table's,
    ``StepBuilder.money_asked``)."""
    numeric = [m for m in mentions if m.value is None and index.kind(m.column) == "numeric"]

    def verb(m: Mention) -> bool:
        if m not in numeric or not _SPEND_VERB.fullmatch(text[m.start : m.end]):
            return False
        on = re.match(r"\s+(?:on|for)\s", text[m.end :])
        if on and any(o.start > m.end and o.column != m.column for o in numeric):
            return True
        rivals = [n for n in index.names("numeric") if n != m.column and money_named(n)]
        return bool((on or _SPEND_SUBJECT.search(text[: m.start])) and rivals)

    def spent_on(m: Mention) -> bool:
        """ "spend on backup and storage" (storage_gb): what the money went to, not a
        measure, when it holds no money and the table holds some."""
        before = text[max(0, m.start - 40) : m.start]
        return (
            m in numeric
            and not money_named(m.column)
            and re.search(r"(?<![a-z])(?:spend|spent|spending|paid|pay)\s+(?:on|for)\s", before)
            is not None
            and any(money_named(n) for n in index.names("numeric"))
        )

    return [m for m in mentions if not verb(m) and not spent_on(m)]


def _lowercase_acronym(mention: Mention, text: str, norm: str) -> bool:
    """A value the data writes in capitals ("US", "IT") that the request writes in lower
    case as an English word ("show us the number", "is it"): the word, not the value."""
    value = str(mention.value or "")
    if not (value.isascii() and value.isupper() and value.lower() in _FUNCTION_SPELLINGS):
        return False
    cased = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()
    if len(cased) != len(norm):
        return False
    return cased[mention.start : mention.end].islower()


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the columns and values it names, and the blank conditions it states
    (「設置場所が未入力の」, "where region is blank"), blanked out ("_"): what is left says
    what is asked for. A blank read as a condition on a column restricts the rows; it no
    longer asks for the missing-values check (「…が未入力の資産の取得価額合計」 is a total)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = "_" * (end - start)
    return "".join(chars)


_MONEY_TAIL = re.compile(r"(?:金額|価額)$")
# The Japanese a request says an English name's currency in (freight_jpy: 「円換算」).
_CURRENCY_JA = {
    "jpy": "円|日本円",
    "yen": "円|日本円",
    "usd": "ドル|米ドル|usドル",
    "eur": "ユーロ",
    "gbp": "ポンド|英ポンド",
    "cny": "人民元|元",
}
_ID_TAILS = r"ID|ＩＤ|id|番号|コード|No\.?|NO\.?"
_JA_ID_NAME = re.compile(rf"(?:{_ID_TAILS})$")
# The marks of a yes / no column's name around what it says applies (要調査, 源泉対象).
_FLAG_MARKS = re.compile(
    r"^要(?=..)|(?:の?有無|フラグ|flag|有り無し|あり/なし|あり|有り|対象|該当)$"
)


def _flag_stem(name: str) -> str:
    """What a yes / no column's name says is there, needed or applies: 返金 of 返金有無,
    至急 of 至急フラグ, 調査 of 要調査, 源泉 of 源泉対象 (the name itself when no mark)."""
    return _FLAG_MARKS.sub("", normalize(name))


# The tail of a Japanese name that says what kind of column it is, not what it is about.
_JA_STEM_TAIL = re.compile(rf"(?:{_ID_TAILS}|名|名称|の?有無|フラグ)$")


def _start(mention: Mention) -> int:
    return mention.start


def _similar(
    text: str,
    index: ColumnIndex,
    claimed: bytearray,
    asked: list[tuple[int, int]],
    family: Callable[[str], str | None],
) -> list[Mention]:
    """Columns named in words the exact terms miss (``similarity``); the words that say
    what is asked for ("合計", "average") and identifier columns never count."""
    free = bytearray(claimed)
    for a, b in asked:
        free[a:b] = b"\x01" * (b - a)
    columns = [
        (c.name, name_tokens(c.name) if c.name.isascii() else [])
        for c in index.columns
        if not _AUTO_NAMED.fullmatch(c.name)  # only its whole name names column_3
    ]
    # an identifier is a name ending like one whose values are (nearly) all distinct: a
    # numeric "shelf_no" with four values is a measure or a group, "shelf 3" a condition
    rows = max(len(index.columns) and max(c.unique for c in index.columns), 1)
    identifiers = frozenset(
        name
        for name, words in columns
        if ((words and words[-1] in _ID_TOKENS) or _JA_ID_NAME.search(name))
        and (index.kind(name) != "numeric" or index.by_name[name].unique * 2 >= rows)
    )
    stop = _GENERIC_TOKENS | _AGGREGATE_TOKENS
    found = [
        dataclasses.replace(m, guessed=True)
        for m in similar_mentions(
            text,
            columns,
            free,
            stop,
            identifiers,
            frozenset(index.names("numeric")),
            [
                (c.name, english_readings(without_brackets(normalize(c.name))))
                for c in index.columns
                if is_japanese(c.name)
            ],
            [
                (name, [ja for word in words for ja in TOKEN_JA.get(word, ())])
                for name, words in columns
                if words and index.kind(name) != "datetime"  # 「二重申請」 is no application_date
            ],
        )
        if family(text[m.start : m.end]) is None
        and "何" not in text[max(0, m.start - 1) : m.end]
        and text[m.start : m.end] not in _GENERIC_MONEY  # 「金額」 alone is asked, not guessed
    ]
    for m in found:
        claimed[m.start : m.end] = b"\x01" * (m.end - m.start)
    return found


# "the partner meeting": a value word before a noun that is no column is a common noun.
_BARE_THE = re.compile(r"(?<![a-z])the\s+$")
_NEXT_WORD = re.compile(r"\s+([a-z]+)")
_FUNCTION_WORDS = frozenset(
    [
        "and",
        "or",
        "but",
        "by",
        "per",
        "vs",
        "versus",
        "only",
        "with",
        "in",
        "of",
        "for",
        "on",
        "at",
        "to",
        "from",
        "than",
        "as",
        "is",
        "are",
        "was",
        "were",
    ]
)

# Words for the rows themselves: "the completed ones", "the returned entries" keep the value.
_ROW_WORDS = frozenset(
    [
        *("one", "ones", "row", "rows", "record", "records", "entry", "entries"),
        *("item", "items", "line", "lines", "case", "cases", "transaction", "transactions"),
        *("shipment", "shipments", "order", "orders", "invoice", "invoices", "payment"),
        *("payments", "claim", "claims", "booking", "bookings", "contract", "contracts"),
        *("request", "requests", "application", "applications", "purchase", "purchases"),
    ]
)


def _row_word(word: str, index: ColumnIndex | None) -> bool:
    """True when ``word`` names the rows: a generic word for them ("ones", "entries") or
    the data's own word ("remittances" of remittance_id)."""
    if word in _ROW_WORDS:
        return True
    nouns = index.row_nouns() if index is not None else []
    return any(word in (noun, noun + "s", noun + "es") for noun in nouns)


# "we may have paid some twice", "they approved": a status value said as what someone did is
# the verb of the sentence, not a condition ("invoices that were paid" stays one).
_SUBJECT_BEFORE = re.compile(r"(?<![a-z])(?:we|i|they|you|he|she)\s+(?:[a-z']+\s+){0,2}$")
_PAST_VERB = re.compile(r"[a-z]+ed|paid|sent|made|done|spent|sold|bought|won|lost")


# "Group the bookings by …", "Sort all rows", "Check for missing values": a value word
# that starts a sentence and is followed by a determiner, or by a word that opens what
# the verb asks about (for, if, whether, how, which), is the verb of the request, not a
# condition.
_VERB_START = re.compile(r"(?:^|[.!?;:]\s*|(?<![a-z])(?:please|then|and|also)\s+)$")
_DETERMINER_AFTER = re.compile(
    r"\s+(?:the|a|an|all|each|every|my|our|these|those|this|that|for|if|whether|how|which"
    r"|what)\s"
)


# Two columns of one movement, told apart by its direction: 異動元拠点 / 異動先拠点,
# origin_port / destination_port, from_account / to_account.
_DIRECTION_PAIRS = (
    ("元", "先"),
    ("origin", "destination"),
    ("from", "to"),
    ("出荷元", "出荷先"),
    ("発", "着"),  # 発地区 / 着地区, 発駅 / 着駅
    ("出発", "到着"),
    ("departure", "arrival"),
)
_TOWARDS = re.compile(r"\s*(?:へ|に|向け|行き|宛|あて)")
_AWAY = re.compile(r"\s*(?:から|発|より)")
_EN_TOWARDS = re.compile(r"(?<![a-z])(?:to|into|towards|bound for)\s+(?:the\s+)?$")
_EN_AWAY = re.compile(r"(?<![a-z])(?:from|out of)\s+(?:the\s+)?$")


def _paired_column(name: str, value: str, index: ColumnIndex) -> tuple[str, bool] | None:
    """The other column of a movement that also holds ``value`` (異動先拠点 for 異動元拠点),
    and whether that other column is the destination."""
    for source, target in _DIRECTION_PAIRS:
        for mine, other in ((source, target), (target, source)):
            if mine in name:
                sibling = name.replace(mine, other, 1)
                info = index.by_name.get(sibling)
                if info is not None and value in info.examples:
                    return sibling, other == target
    return None


def _said_direction(mention: Mention, text: str) -> bool | None:
    """True when the value is said as where something goes (「福岡支店へ」, "to Osaka"),
    False as where it comes from (「福岡支店から」, "from Osaka"), None when neither."""
    after, before = text[mention.end :], text[: mention.start]
    towards = bool(_TOWARDS.match(after) or _EN_TOWARDS.search(before))
    away = bool(_AWAY.match(after) or _EN_AWAY.search(before))
    return None if towards == away else towards


def _direction_unsaid(
    scanned: list[Mention], text: str, index: ColumnIndex, lang: str
) -> list[str]:
    """「福岡支店の支給合計」 with 異動元拠点 and 異動先拠点 both holding 福岡支店 and neither
    named beside it: which of the two is meant is asked, never taken as the first."""
    problems = []
    for mention in scanned:
        if mention.value is None or _said_direction(mention, text) is not None:
            continue
        paired = _paired_column(mention.column, mention.value, index)
        if paired is None:
            continue
        columns = (mention.column, paired[0])
        if _named_beside(mention, columns, scanned) is not None:
            continue  # 「異動先拠点が福岡支店」: the column is named with it
        problems.append(
            f"「{mention.value}」は{columns[0]}と{columns[1]}のどちらの条件ですか？"
            if lang == "ja"
            else f"Is '{mention.value}' a condition on {columns[0]} or on {columns[1]}?"
        )
    return problems


def _named_beside(mention: Mention, columns: tuple[str, ...], scanned: list[Mention]) -> str | None:
    """The column of ``columns`` named right before the value (「異動先拠点が福岡支店」)."""
    return next(
        (
            m.column
            for m in scanned
            if m.value is None and m.column in columns and 0 <= mention.start - m.end <= 3
        ),
        None,
    )


def _directed(mention: Mention, text: str, index: ColumnIndex, scanned: list[Mention]) -> Mention:
    """A value two columns of one movement both hold (福岡支店 in 異動元拠点 and 異動先拠点)
    belongs to the column named beside it (「異動先拠点が福岡支店」), else to the one its
    particle points at: 「福岡支店へ異動」 the destination, 「福岡支店から」 the origin;
    "shipped to Osaka" / "from Osaka" alike."""
    if mention.value is None:
        return mention
    paired = _paired_column(mention.column, mention.value, index)
    if paired is None:
        return mention
    sibling, sibling_is_destination = paired
    beside = _named_beside(mention, (mention.column, sibling), scanned)
    towards = _said_direction(mention, text)
    if beside == sibling or (
        beside is None and towards is not None and sibling_is_destination == towards
    ):
        return dataclasses.replace(mention, column=sibling)
    return mention


def _values_before_their_column(
    text: str, index: ColumnIndex, scanned: list[Mention]
) -> list[Mention]:
    """ "for Dependent visas" (Visa Type holds Dependent, another column is Dependents):
    a word read as a column but said right before the word of a category column that
    holds it as a value is that value."""
    found = list(scanned)
    for i, (word, nxt) in enumerate(itertools.pairwise(scanned)):
        info = index.by_name.get(nxt.column)
        if (
            word.value is not None
            or nxt.value is not None
            or info is None
            or info.kind != "categorical"
            or text[word.end : nxt.start].strip()
        ):
            continue
        said = text[word.start : word.end].strip().lower()
        value = next((v for v in info.examples if str(v).lower() == said), None)
        if value is not None:
            found[i] = dataclasses.replace(word, column=nxt.column, value=value)
    return found


def _whole_reading(name: str, said: str) -> bool:
    """True when ``said`` is the Japanese of a whole English name, its unit aside
    (「金額」 for amount_jpy): the name itself, not a word inside it."""
    return name.isascii() and said in japanese_readings(name_tokens(name))[:1]


def _entity_value(mention: Mention, index: ColumnIndex) -> bool:
    """A value that also starts other columns' names (請求 of 請求日, 請求額（円）; "order"
    of orderDate, orderTotal) is the dataset's word for its rows. One other column
    starting with it says nothing of the rows (振込 of 入金方法 and 振込手数料: 「振込だけ」
    keeps the transfers) unless that column identifies the rows (請求 of 請求番号)."""
    said = normalize(str(mention.value))
    if len(said) < 2:
        return False

    def first_word(name: str) -> str:
        if name.isascii():
            words = name_tokens(name)
            return words[0] if words else ""
        return normalize(name)[: len(said)]

    starting = [
        c.name for c in index.columns if c.name != mention.column and first_word(c.name) == said
    ]
    rows = index.row_nouns()
    return len(starting) >= 2 or any(said == noun[: len(said)] for noun in rows if starting)


def _condition_values(
    scanned: list[Mention],
    text: str,
    phrases: list[tuple[int, int]],
    index: ColumnIndex | None = None,
    claimed: bytearray | None = None,
) -> list[Mention]:
    """The mentions minus category values the request does not use as a condition.

    A value inside a longer phrase of what is asked for ("standard" in "standard
    deviation", 「標準」 in 「標準偏差」) and an English value after "the" followed by a
    word that names nothing of the data ("for the partner meeting") are ordinary words.
    "for the partner tier", "for partner bookings", "partner plan", 「partnerの」 stay
    conditions. A value that is the dataset's word for its rows (``_entity_value``:
    「督促回数が3の請求」 with columns 請求日, 請求額) is a condition only when the request
    names its column with it (「伝票種別が請求」); its characters are left unread in
    ``claimed`` so that the word it starts can still name a column (「請求金額」 ~ 請求額).
    """
    starts = {m.start for m in scanned}
    kept = []
    for mention in scanned:
        if mention.value is not None:
            inside = any(
                a <= mention.start and mention.end <= b and b - a > mention.end - mention.start
                for a, b in phrases
            )
            before = text[: mention.start]
            after = _NEXT_WORD.match(text[mention.end :])
            common = bool(
                _BARE_THE.search(before)
                and mention.value.isascii()  # "the 会社負担 rows" names the value
                and after
                and after.start(1) + mention.end not in starts
                and after.group(1) not in _FUNCTION_WORDS
                and not _row_word(after.group(1), index)
            )
            verb = (
                _VERB_START.search(before) and _DETERMINER_AFTER.match(text[mention.end :])
            ) or (
                _PAST_VERB.fullmatch(text[mention.start : mention.end].strip())
                and _SUBJECT_BEFORE.search(before)
            )
            rows = (
                index is not None
                and _entity_value(mention, index)
                and not any(
                    m.value is None
                    and m.column == mention.column
                    and _adjacent_value(m, [mention], text)
                    for m in scanned
                )
            )
            if rows and claimed is not None:
                claimed[mention.start : mention.end] = bytes(mention.end - mention.start)
            flag = (
                index is not None
                and index.yes_value(mention.column) is not None
                and not any(
                    m.value is None
                    and m.column == mention.column
                    and _adjacent_value(m, [mention], text)
                    for m in scanned
                )
            )  # "no country recorded": "no" of a yes/no column is a word, not a condition
            if inside or common or verb or rows or flag:
                continue
        kept.append(mention)
    return kept


_MONEY_SUFFIX = re.compile(r"(?:費|代(?!表|理|替)|料(?!理))")


def _money_word(mention: Mention, text: str, index: ColumnIndex) -> bool:
    """「会場費」「交通費」: a column's word with 費/代/料 glued after it is a word for money
    (an expense), never the category column it starts (開催会場, 交通機関)."""
    return index.kind(mention.column) != "numeric" and bool(
        _MONEY_SUFFIX.match(text[mention.end :])
    )


def _names_the_rows(mention: Mention, text: str, index: ColumnIndex, rows: int) -> bool:
    """ "products", "employees": a plural naming an identifier-like text column (a distinct
    value per row) means the rows themselves, not that column."""
    info = index.by_name.get(mention.column)
    said = text[mention.start : mention.end]
    return bool(
        info is not None
        and info.kind == "text"
        and rows
        and info.unique >= 0.9 * rows
        and said.isascii()
        and said.endswith("s")
        and normalize(info.name) != said
        and re.split(r"[\s_-]+", said)[-1].rstrip("s") not in _ID_TOKENS  # "booking ids"
        and not _DISTINCT_BEFORE.search(text[: mention.start])  # "how many distinct employees"
    )


_DISTINCT_BEFORE = re.compile(r"(?<![a-z])(?:distinct|different|unique|individual)\s+$")


# "fuel type is Diesel", "status = Cancelled", 「区分が在宅」: the column names its value.
_COPULA = re.compile(
    r"\s*(?:is|are|was|equals|equal to|of|(?:is\s+|are\s+)?set to|marked(?: as)?|==?|:|が|は)?\s*"
)


def _adjacent_value(mention: Mention, values: list[Mention], text: str = "") -> bool:
    """「法人顧客」「corporate customers」「fuel type is Diesel」: the column word only
    qualifies its value."""
    return any(
        v.column == mention.column
        and (
            0 <= mention.start - v.end <= 1
            or 0 <= v.start - mention.end <= 3
            or (v.start > mention.end and _COPULA.fullmatch(text[mention.end : v.start]))
        )
        for v in values
    )
