"""Column resolution by scored lexical similarity: the fallback after the exact terms.

The exact scan (``parser.ColumnIndex.terms``) knows a column by its name, its words,
their plurals, short forms and synonyms. What it leaves unread is scored here against
every column name:

- Japanese: a run of kanji/katakana the scan did not claim ("資産の種類" → 資産; "計上部署"
  → 計上部署) is compared with each column name (brackets and units dropped) by the
  characters they share; a column is taken when the run's characters are mostly in the
  name, at least two of them are shared, and no other column scores as well. A word
  for money (its head, the last character, 費/代/料/額/金: 「交通費」) names only a
  numeric column, never the category 交通機関.
- English: a content word the scan did not claim is stemmed (plural, -ing, -ed, -er
  endings: "booking" ~ "booked" ~ "book") and compared with the stemmed words of each
  name (camelCase/snake_case split), never with a generic word ("total", "count") or
  an identifier column; a word found in exactly one column's name names that column.

Nothing is taken when two columns score alike: the exact scan, the planner's ask-back
and its candidates list then decide, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from keiri_agent.agents.analysis.reasoning.offline.mentions import Mention

_JA_RUN = re.compile(r"[\u3400-\u9fff\u30a0-\u30ffー々]{2,}")
# The comparison word of a condition that a run of kanji starts with (「以上移動」).
_COMPARISON_LEAD = re.compile(r"以上|以下|未満")
_EN_WORD = re.compile(r"(?<![a-z0-9])[a-z]{4,}(?![a-z0-9])")
_BRACKETS = re.compile(r"[(\[（【].*?[)\]）】]")
_MONEY_HEAD = re.compile(r"(?:費|代|料|額|金)$")
# The share of a run's characters that must be in the column name.
JA_THRESHOLD = 0.6


_ENDINGS = (
    ("ations", ""),
    ("ation", ""),
    ("ies", "y"),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("er", ""),
    ("s", ""),
)


def _without_ending(word: str) -> str:
    """The word without its first ending of ``_ENDINGS`` that leaves three letters."""
    for suffix, repl in _ENDINGS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


def stem(word: str) -> str:
    """A crude English stem: plural, -ation and -al ("cancellations" ~ "cancelled",
    "reversal" ~ "reversed"), -ing, -ed and -er endings dropped."""
    w = word.lower()
    # "reversals" ~ "reversed", "approval" ~ "approved"
    w = w.rstrip("s")[:-2] if re.fullmatch(r"[a-z]{5,}als?", w) else _without_ending(w)
    if len(w) >= 4 and w[-1] == w[-2]:  # "shipped" → "shipp" → "ship"
        w = w[:-1]
    return w.rstrip("e") if len(w) > 4 else w


def _ja_key(name: str) -> str:
    return _BRACKETS.sub("", name).strip()


_AMOUNT_CHARS = frozenset("万千億円以上下未満超")
"""Characters of amounts and comparisons (「5万円以上」): they name no column by themselves,
so 「万円以上」 never names 「一人1万円以下」."""


def _ja_score(run: str, name: str) -> tuple[float, int]:
    """(share of the run's content characters found in the name, characters shared)."""
    key = _ja_key(name)
    content = set(run) - _AMOUNT_CHARS
    if not content:
        return 0.0, 0
    shared = sum(1 for c in content if c in key)
    return shared / len(content), shared


def _spans(text: str, claimed: bytearray, pattern: re.Pattern[str]) -> Iterable[tuple[int, int]]:
    """Maximal unclaimed pieces of each match of ``pattern``."""
    for m in pattern.finditer(text):
        start = None
        for i in range(m.start(), m.end() + 1):
            free = i < m.end() and not claimed[i]
            if free and start is None:
                start = i
            elif not free and start is not None:
                yield start, i
                start = None


def similar_mentions(
    text: str,
    columns: list[tuple[str, list[str]]],
    claimed: bytearray,
    stop_words: frozenset[str],
    identifiers: frozenset[str] = frozenset(),
    numeric: frozenset[str] = frozenset(),
    readings: list[tuple[str, list[str]]] | None = None,
    japanese_words: list[tuple[str, list[str]]] | None = None,
) -> list[Mention]:
    """Mentions of columns the exact scan missed, scored by lexical similarity.

    Args:
        text: The normalised request.
        columns: (column name, its ASCII name words or [] for a Japanese name).
        claimed: Characters already read (columns, values, periods); updated here.
        stop_words: Words that never name a column (generic and aggregation words).
        identifiers: Identifier columns: never named by similarity ("社員" are the rows,
            not 社員ID), but a word they share with another column leaves it unnamed.
        numeric: The numeric columns: the only ones a word for money may name.
        readings: (Japanese column name, its English readings), for ``_english_phrases``.
        japanese_words: (English column name, the Japanese words of its words), for
            ``_japanese_words_of_english_names``.
    """
    readings = readings or []
    found: list[Mention] = []
    ja_names = [name for name, _ in columns if not name.isascii()]
    for a, b in _spans(text, claimed, _JA_RUN):
        if lead := _COMPARISON_LEAD.match(text, a):  # 「200km以上移動した」: 移動, not 以上移動
            a = lead.end()
        run = text[a:b]
        if len(run) < 2 or run in stop_words:
            continue
        scored = sorted(((_ja_score(run, n), n) for n in ja_names), reverse=True)
        if not scored:
            continue
        (best, shared), name = scored[0]
        runner_up = scored[1][0] if len(scored) > 1 else (0.0, 0)
        if (
            best >= JA_THRESHOLD
            and shared >= 2
            and not (_MONEY_HEAD.search(run) and name not in numeric)
            and (best, shared) > runner_up
            and name not in identifiers
        ):
            found.append(Mention(a, b, name))
            claimed[a:b] = b"\x01" * (b - a)
    owners: dict[str, set[str]] = {}
    for name, words in columns:
        for word in words:
            if len(word) >= 4 and word not in stop_words:
                # "order" (order_id) stems to "ord" but "orders" to "order": a name's word
                # owns the stem of its plural too, so "orders" stays shared with ordered_at
                for form in (word, word + "s"):
                    owners.setdefault(stem(form), set()).add(name)
    for m in _EN_WORD.finditer(text):
        a, b, word = m.start(), m.end(), m.group()
        if any(claimed[a:b]) or word in stop_words:
            continue
        names = owners.get(stem(word), set())
        if _MEASURE_AFTER.match(text[b:]):
            # "claim amount" beside claim_no and claimed_jpy: an amount is the measure's
            measures = names - identifiers
            if len(measures) == 1 and measures <= numeric:
                names = measures
        if len(names) == 1 and not names & identifiers:
            found.append(Mention(a, b, next(iter(names))))
            claimed[a:b] = b"\x01" * (b - a)
    found += _english_phrases(text, readings, claimed, stop_words, identifiers, numeric)
    found += _japanese_words_of_english_names(
        text, japanese_words or [], claimed, stop_words, identifiers, numeric
    )
    return found


def _japanese_words_of_english_names(
    text: str,
    japanese_words: list[tuple[str, list[str]]],
    claimed: bytearray,
    stop_words: frozenset[str],
    identifiers: frozenset[str],
    numeric: frozenset[str],
) -> list[Mention]:
    """English names said in Japanese words other than their readings: 「日額単価」 for
    daily_rate_jpy (日額 is daily's), 「写真が添付されていない」 for photo_attached. A run the
    scan left unread names a column when it holds a Japanese word (two characters or more)
    of one of the name's words that no other column's words have, and no other column
    is named so in the run; a word for money at the run's end names only a numeric
    column."""
    owners: dict[str, set[str]] = {}
    for name, words in japanese_words:
        for word in words:
            if len(word) >= 2 and word not in stop_words:
                owners.setdefault(word, set()).add(name)
    unique = {word: next(iter(names)) for word, names in owners.items() if len(names) == 1}
    found: list[Mention] = []
    for a, b in _spans(text, claimed, _JA_RUN):
        run = text[a:b]
        named = {name for word, name in unique.items() if word in run}
        if len(named) != 1:
            continue
        name = next(iter(named))
        if name in identifiers or (_MONEY_HEAD.search(run) and name not in numeric):
            continue
        found.append(Mention(a, b, name))
        claimed[a:b] = b"\x01" * (b - a)
    return found


# Words for the table itself ("which fields have gaps"): never the reading of a column (圃場).
_TABLE_WORDS = frozenset(
    {"field", "fields", "column", "columns", "row", "rows", "record", "records"}
)


@dataclass(frozen=True)
class _Said:
    """What the columns' English readings say: their words, whole readings, heads (a
    reading's last word: what the column is) and how many columns have each word."""

    words_of: dict[str, set[str]]
    whole_of: dict[str, set[str]]
    heads_of: dict[str, set[str]]
    owners: dict[str, int]
    numeric: frozenset[str]

    def best(
        self, text: str, words: list[tuple[int, int, str]]
    ) -> tuple[str, list[tuple[int, int, str]]] | None:
        """The one column the words name best, with the words that name it; None when
        none does or two do as well by the same words (two named as well by words of
        their own are both named: the first here, the other next)."""
        scores: list[tuple[int, str, list[tuple[int, int, str]]]] = []
        for name, stems in self.words_of.items():
            hits = [w for w in words if w[2] in stems]
            whole = any(w[2] in self.whole_of.get(name, ()) for w in hits)
            # "the median disposal cost": cost is a word of one column's readings only
            own = (
                len(hits) == 1
                and (name in self.numeric or _CHOICE_BEFORE.search(text[: hits[0][0]]))
                and hits[0][2] in self.heads_of.get(name, ())
                and self.owners[hits[0][2]] == 1
                and hits[0][2] not in _LOOSE
            )
            if len({w[2] for w in hits}) >= 2 or whole or own:
                scores.append((len(hits) + (1 if whole else 0), name, hits))
        scores.sort(key=lambda item: -item[0])
        if not scores:
            return None
        tied = [hits for score, _, hits in scores if score == scores[0][0]]
        said = [{w[0] for w in hits} for hits in tied]
        if any(a & b for i, a in enumerate(said) for b in said[i + 1 :]):
            return None  # two columns named as well by the same words: neither
        return scores[0][1], scores[0][2]


# A category said as the grouping or the one chosen: "by location", "which location".
_CHOICE_BEFORE = re.compile(r"(?<![a-z])(?:by|per|each|every|which|what)\s+$")
# Words too loose to name a column alone even when only one column's readings have them.
_LOOSE = frozenset(
    stem(w) for w in ("money", "amount", "value", "total", "number", "name", "fee", "charge")
)
_MEASURE_AFTER = re.compile(r"\s+(?:amounts?|values?|sums?|totals?|figures?)(?![a-z])")
_EN_RUN = re.compile(r"[a-z]+(?:[\s-]+(?:(?:and|of|&)[\s-]+)?[a-z]+)*")


def _english_phrases(
    text: str,
    readings: list[tuple[str, list[str]]],
    claimed: bytearray,
    stop_words: frozenset[str],
    identifiers: frozenset[str],
    numeric: frozenset[str] = frozenset(),
) -> list[Mention]:
    """Japanese names said in English words other than their readings' own: "food and
    drink spend" for 飲食費 (its reading is "food and drink cost"). A run of
    the request's unread English words names a column when two of its words are words of
    the column's readings, or one word is a whole reading ("urgency" for 緊急度), and no
    other column does as well; one word of a longer reading ("money" of "joining money",
    入会金) is too loose to name it, unless it is the last word (what the column is) of a
    numeric column's reading and a word of no other column's ("the median disposal cost"
    of 処理費用, "treatment cost"), or of a category said as the grouping or the one
    chosen ("by location" of 勤務地, "work location")."""
    words_of: dict[str, set[str]] = {}
    whole_of: dict[str, set[str]] = {}
    heads_of: dict[str, set[str]] = {}
    for name, said in readings:
        for reading in said:
            said_words = [w for w in re.split(r"[\s-]+", reading) if w]
            parts = [stem(w) for w in said_words if w not in stop_words | _TABLE_WORDS]
            words_of.setdefault(name, set()).update(p for p in parts if len(p) >= 3)
            if parts:  # what the column is: a reading's last word ("cost" of "treatment cost")
                heads_of.setdefault(name, set()).add(parts[-1])
            if len(said_words) == 1 and parts:  # not "reminder" of "reminder count"
                whole_of.setdefault(name, set()).add(parts[0])
    owners: dict[str, int] = {}  # a word of the readings → how many columns have it
    for stems in words_of.values():
        for word in stems:
            owners[word] = owners.get(word, 0) + 1
    found: list[Mention] = []
    said_of = _Said(words_of, whole_of, heads_of, owners, numeric)
    for a, b in _spans(text, claimed, _EN_RUN):
        words = [
            (m.start() + a, m.end() + a, stem(m.group()))
            for m in _EN_WORD.finditer(text[a:b])
            if m.group() not in stop_words
        ]
        while words:  # "total stock value by location": 在庫金額, then 保管場所
            best = said_of.best(text, words)
            if best is None or best[0] in identifiers:
                break
            name, hits = best
            start, end = hits[0][0], hits[-1][1]
            found.append(Mention(start, end, name))
            claimed[start:end] = b"\x01" * (end - start)
            words = [w for w in words if not start <= w[0] < end]
    return found
