"""Key terms of a text for the offline rules: stop terms, synonyms, term matching.

:func:`key_terms` is a text's content words (``search.tokenize.content_words``: the
tokenizer's terms, a negative prefix kept on its word) minus question words and generic
terms (``STOP_TERMS``) and minus the configured system name; :func:`synonyms` are the
other members of its synonym groups; :class:`PreparedText` tells whether a passage
contains a term or one of its synonyms, matching words, not substrings.

What a knowledge base adds is a :class:`Vocabulary`: the system name (setting
``helpdesk_system_name``) and synonym groups — the built-in ``synonyms.txt`` next to this
module (general business and IT words) plus the knowledge base's own ``synonyms.txt``
(:func:`load_synonym_groups`). Every function takes it as a parameter;
``DEFAULT_VOCABULARY`` is the built-in groups without a system name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from keiri_agent.agents.helpdesk.offline.asks import without_interrogatives
from keiri_agent.errors import UserInputError
from keiri_agent.search.tokenize import (
    NEGATIVE_PREFIXES,
    content_words,
    loanword,
    normalize_for_search,
)

# --------------------------------------------------------------------------- vocabulary

# Question words, fillers and generic terms that say nothing about *what* is asked.
# Compared after normalisation: each entry and its tokenizer terms ("教えて" → "教える",
# "について" → "つく", "取れば" → "取る") are stop terms. Terms starting with 何 ("何日",
# "何文字") are question words too.
_STOP_JA = (
    "教える 教えて 知る 知りたい 聞く 聞きたい 伺う 説明 質問 確認したい 方法 やり方 仕方 手順"
    " 場合 時 とき 際 方 件 こと もの ため よう 等 他 中 後 前 上 下"
    " 何 なに 何故 なぜ どう どの どれ どこ いつ 誰 幾つ いくら"
    " どのような このような そのような あのような どんな こんな そんな あんな"
    " どういう こういう そういう ああいう この その あの 此の 其の 彼の これ それ あれ"
    " する ある いる できる 出来る なる ください 下さい 欲しい いい 良い よい 分かる 困る"
    " 考える 思う 取る 行う 可能 必要 大丈夫 駄目 ダメ だめ 無理 平気 まずい 不味い 助かる"
    " について 関して 関する 対して 以下 下記 次 上記 以上 それぞれ"
    " 違い 違う 比較 比べる 差異 相違"
    " 意味 まとめる 纏める まとめて 詳しい 詳しく 具体的 簡単 簡単に ざっくり 一通り 全部 全て"
    " 現在 今 今回 最近 先日 本日 今日 いつも 常に 既に すでに まだ もう すぐ 再度 改めて"
    " また さらに ちょっと 少し 実際 特に 主に 一応 普通"
    " 宜しく お願い 願い 御願い お世話 様 さん 私 我々"
    " システム ヘルプデスク"
)
_STOP_EN = (
    "a an the and or but if of in on at to for from by with about into as is are was were be"
    " been being am do does did done doing have has had can could should would will shall may"
    " might must i me my mine we us our you your it its this that these those there here"
    " what which who whom whose when where why how whether please tell explain describe show"
    " know want need like get got way ways help thanks thank hello hi also any some all"
    " not no yes so then than just more most system difference differences differ"
    " mean means meaning summarize summarise summary detail details brief briefly"
    " different compare comparison between versus vs"
    " think take currently now today recently still already again case cases possible"
    " s t d ll re ve m doesn don isn aren didn won haven hasn wasn weren couldn shouldn wouldn"
    # the frame of a question, not its subject: how long / how many / what time / too early
    " long many much time times early late soon too very really anyone anybody someone somebody"
    " everyone everybody anything something everything stay yet ever ok okay sure exactly"
    " actually maybe perhaps sometimes usually right correct true"
)
STOP_TERMS: frozenset[str] = frozenset(_STOP_JA.split()) | frozenset(_STOP_EN.split())

SYNONYMS_FILE = "synonyms.txt"
"""The synonym groups file: built in next to this module, and per knowledge base."""

_COMMENT = re.compile(r"(?:^|\s)#.*$")
_COMMA = re.compile(r"[,、，]")


def parse_synonym_groups(text: str, source: str) -> tuple[tuple[str, ...], ...]:
    """The synonym groups of a ``synonyms.txt`` text (``source`` names it in errors).

    One group per line; terms separated by commas (「,」「、」「，」), or by spaces when the
    line has no comma (so "log in" needs commas on its line). ``#`` starts a comment
    (at the line start or after a space); blank lines are skipped.

    Raises:
        UserInputError: a line with fewer than two different terms (file and line named).
    """
    groups: list[tuple[str, ...]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        items = _COMMA.split(line) if _COMMA.search(line) else line.split()
        terms = tuple(dict.fromkeys(t for t in (" ".join(i.split()) for i in items) if t))
        if len({normalize_for_search(t) for t in terms}) < 2:
            raise UserInputError(
                f"同義語ファイル {source} の {number} 行目「{raw.strip()}」には"
                "同じ意味の語が 2 つ以上ありません",
                hint="1 行に 1 グループを「ログイン, サインイン, login」のようにカンマで"
                "区切って書いてください（# から行末まではコメントです）",
                code="SYNONYMS_FILE_INVALID",
            )
        groups.append(terms)
    return tuple(groups)


def load_synonym_groups(path: Path) -> tuple[tuple[str, ...], ...]:
    """The synonym groups of the file ``path``; none when it does not exist.

    Raises:
        UserInputError: the file is not UTF-8 text or has an invalid line.
    """
    if not path.is_file():
        return ()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise UserInputError(
            f"同義語ファイル {path} を読み込めません（{type(error).__name__}）",
            hint="UTF-8 のテキストファイルとして保存し直してください",
            code="SYNONYMS_FILE_INVALID",
        ) from error
    return parse_synonym_groups(text, str(path))


GENERAL_SYNONYMS_FILE = "synonyms_general.txt"
"""Built-in groups of everyday ↔ manual words (スマホ / スマートフォン, 捨てる / 廃棄),
written without looking at any sample question."""
ENGLISH_SYNONYMS_FILE = "synonyms_en_ja.txt"
"""Built-in groups of English ↔ Japanese manual words (browser / ブラウザ, approve / 承認),
for a question asked in English of Japanese documents; written without looking at any
question set."""


def _builtin_groups() -> tuple[tuple[str, ...], ...]:
    package = files(__package__ or "keiri_agent.agents.helpdesk.offline")
    return tuple(
        group
        for name in (SYNONYMS_FILE, GENERAL_SYNONYMS_FILE, ENGLISH_SYNONYMS_FILE)
        for group in parse_synonym_groups((package / name).read_text(encoding="utf-8"), name)
    )


SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = _builtin_groups()
"""The built-in synonym groups (``synonyms.txt`` next to this module)."""


def _synonym_index(groups: Iterable[Sequence[str]]) -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for group in groups:
        members = [normalize_for_search(m).strip() for m in group]
        for member in members:
            index.setdefault(member, [])
            index[member].extend(m for m in members if m != member and m not in index[member])
    return {k: tuple(v) for k, v in index.items()}


_SYSTEM_SUFFIX = re.compile(r"\s*(?:システム|system)$")


def _system_names(system_name: str) -> tuple[str, ...]:
    """The forms of a system name to remove from a question (longest first).

    "XYZ" → "xyzシステム", "xyz system", "xyz"; "経費ナビシステム" → itself and "経費ナビ".
    """
    name = " ".join(normalize_for_search(system_name).split())
    if not name:
        return ()
    base = _SYSTEM_SUFFIX.sub("", name) or name
    forms = {name, base, base + "システム", base + " システム", base + " system"}
    return tuple(sorted(forms, key=len, reverse=True))


@dataclass(frozen=True)
class Vocabulary:
    """A knowledge base's words for the offline rules: its system name and synonym groups.

    Build it with :meth:`build`; ``DEFAULT_VOCABULARY`` has the built-in groups only.
    """

    system_names: tuple[str, ...] = ()
    """Normalised forms of the system name, removed from a question before its key terms."""
    synonym_index: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @classmethod
    def build(
        cls, *, system_name: str = "", synonym_groups: Iterable[Sequence[str]] = ()
    ) -> Vocabulary:
        """The built-in synonym groups plus ``synonym_groups``, and ``system_name``."""
        return cls(
            system_names=_system_names(system_name),
            synonym_index=_synonym_index([*SYNONYM_GROUPS, *synonym_groups]),
        )

    def without_system_name(self, text: str) -> str:
        """``text`` normalised, each form of the system name replaced by a space."""
        norm = normalize_for_search(text)
        for name in self.system_names:
            edge_l = r"(?<![0-9a-z])" if name[0].isascii() and name[0].isalnum() else ""
            edge_r = r"(?![0-9a-z])" if name[-1].isascii() and name[-1].isalnum() else ""
            norm = re.sub(edge_l + re.escape(name) + edge_r, " ", norm)
        return norm


DEFAULT_VOCABULARY = Vocabulary.build()
"""The built-in synonym groups, no system name."""

# --------------------------------------------------------------------------- terms


@lru_cache(maxsize=1)
def _stop_terms() -> frozenset[str]:
    """``STOP_TERMS`` plus the tokenizer's terms of each entry (its normalised forms)."""
    out = set(STOP_TERMS)
    for word in STOP_TERMS:
        out.update(content_words(word))
    return frozenset(out)


def _is_stop(term: str) -> bool:
    return term in _stop_terms() or (term.startswith("何") and len(term) <= 3)


def key_terms(text: str, vocabulary: Vocabulary = DEFAULT_VOCABULARY) -> list[str]:
    """The content words of ``text`` without question words, generic terms and system name.

    >>> key_terms("パスワードの条件を教えて")
    ['パスワード', '条件']
    >>> key_terms("ABCシステムが不安定です", Vocabulary.build(system_name="ABC"))
    ['不安定']
    """
    text = without_interrogatives(vocabulary.without_system_name(text))
    terms: list[str] = []
    start = 0
    for date in _DATE.finditer(text):
        terms += [t for t in content_words(text[start : date.start()]) if not _is_stop(t)]
        terms.append(date.group())
        start = date.end()
    terms += [t for t in content_words(text[start:]) if not _is_stop(t)]
    return list(dict.fromkeys(terms))


_DATE = re.compile(r"\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日")
"""A date is one key term (「2025年4月」「4月1日」), never its numbers apart: a passage on
「2024年4月」 has 「4」 and 「月」 but does not say 「2025年4月」."""


def atomic_terms(terms: Sequence[str]) -> list[str]:
    """Terms for coverage: a compound is dropped when ≥ 2 other terms are inside it.

    The tokenizer gives a compound and its parts ("有効期限", "有効", "期限"); counting
    all three would weigh the compound three times, so coverage counts the parts.
    """
    return [t for t in terms if sum(1 for o in terms if o != t and o in t) < 2]


def synonyms(term: str, vocabulary: Vocabulary = DEFAULT_VOCABULARY) -> tuple[str, ...]:
    """The other members of every synonym group of ``vocabulary`` that contains ``term``;
    an English word without a group of its own takes its stem's (browsers → browser,
    submitted → submit, applied → apply)."""
    word = normalize_for_search(term).strip()
    found = vocabulary.synonym_index.get(word)
    if not _ENGLISH_WORD.fullmatch(word):
        return found or ()
    written = loanword(word)  # printer: プリンター, as a Japanese manual writes it
    extra = (written,) if written and written not in (found or ()) else ()
    if found is not None:
        return (*found, *extra)
    for stem in _english_stems(word):
        if stem in vocabulary.synonym_index:
            return (stem, *vocabulary.synonym_index[stem], *extra)
    return extra


_ENGLISH_WORD = re.compile(r"[a-z]{3,}")
_INFLECTIONS = (
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
)


def _english_stems(word: str) -> list[str]:
    """Candidate stems of an inflected English word, most likely first (no dictionary:
    each is tried against the synonym groups)."""
    stems: list[str] = []
    for ending, replacement in _INFLECTIONS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stem = word[: -len(ending)] + replacement
            stems.append(stem)
            if not replacement and len(stem) >= 4 and stem[-1] == stem[-2]:
                stems.append(stem[:-1])  # submitted → submitt → submit
    return stems


_KATAKANA_CHARS = "\u30a1-\u30fa\u30fc"
_KATAKANA = re.compile(f"[{_KATAKANA_CHARS}]+")
"""A katakana word: inside a longer katakana run it is another word (ログ in ログイン)."""
_OUTSIDE_KATAKANA = f"(?<![{_KATAKANA_CHARS}]){{}}(?![{_KATAKANA_CHARS}])"
_COMPOUND_VERB = re.compile(r"[\u4e00-\u9fff][\u3040-\u309f\u4e00-\u9fff]+[うくぐすつぬぶむる]")
"""A verb of ≥ 4 characters (a compound verb, 「取り下げる」): its stem (「取り下げ」) is
also its noun form."""
_ASCII_TERM = re.compile(r"[0-9a-z][0-9a-z ._\-]*")
_NOT_NEGATED = "(?<![" + "".join(sorted(NEGATIVE_PREFIXES)) + "])"


@dataclass(frozen=True)
class PreparedText:
    """A passage (or sentence) prepared for term matching with a vocabulary's synonyms."""

    norm: str
    terms: frozenset[str]
    vocabulary: Vocabulary = field(default=DEFAULT_VOCABULARY, compare=False)

    @classmethod
    def of(cls, text: str, vocabulary: Vocabulary = DEFAULT_VOCABULARY) -> PreparedText:
        return cls(normalize_for_search(text), frozenset(content_words(text)), vocabulary)

    def has(self, term: str) -> bool:
        """True when the text contains the term or one of its synonyms, as a word.

        A term matches a word of the text (the tokenizer's words, a negative prefix kept
        on its word), or else:

        * a number: the whole number (「2」 is not in 「12」 or 「2.1」);
        * ASCII: a word prefix ("rule" matches "rules"; "rules" matches "rule");
        * katakana: a substring not inside a longer katakana run (「ログ」 is in 「操作ログ」
          and 「ログ画面」 but not in 「ログイン」; Sudachi's words give 「カード」 of
          「カードリーダー」);
        * other Japanese of ≥ 2 characters: a substring not right after 不/未/非/無
          (「承認」 is in 「承認者」 but not in 「未承認」);
        * a compound verb (≥ 4 characters, 「取り下げる」): also its stem, the noun form
          (「取り下げ」).

        A one-character Japanese term matches only a whole word: 「法」 is not in
        「方法」 or 「税法」.
        """
        for word in (term, *synonyms(term, self.vocabulary)):
            if word in self.terms:
                return True
            if word.isdigit():
                if re.search(rf"(?<![0-9.,]){word}(?![0-9]|[.,][0-9])", self.norm):
                    return True  # a whole number: 「2」 is not in 「12」 nor in 「2.1」
            elif _ASCII_TERM.fullmatch(word):
                stem = word[:-1] if len(word) > 3 and word.endswith("s") else word
                if re.search(r"(?<![0-9a-z])" + re.escape(stem), self.norm):
                    return True
            elif _KATAKANA.fullmatch(word):
                if re.search(_OUTSIDE_KATAKANA.format(re.escape(word)), self.norm):
                    return True
            elif len(word) >= 2 and re.search(_NOT_NEGATED + re.escape(word), self.norm):
                return True
            elif _COMPOUND_VERB.fullmatch(word) and word[:-1] in self.norm:
                return True  # 「取り下げる」 in 「申請の取り下げ」, 「差し戻す」 in 「差し戻し」
        return False


def require_text(value: str, what: str) -> str:
    """``value`` stripped; a blank ``value`` raises ``ValueError`` naming ``what``."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} is empty: give a non-blank text")
    return value.strip()
